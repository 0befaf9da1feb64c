import {
  ApiError,
  describeIssues,
  type FieldIssue,
  isPlatformErrorCode,
  type PlatformCodeMap,
  reasonPhrase,
  ValidationError,
} from '../../platform/errors.ts';

/**
 * Errors of the agent-orchestration gateway (spec 002 section E, "Errors"): one body everywhere,
 * `{error, code, message, details?}`: `error` is the HTTP reason phrase ("Conflict"), `code` a stable snake_case
 * name a client branches on, `message` text for people (never internals), `details` structured extras
 * (`currentVersion` of a version conflict, `issues` of a validation failure).
 *
 * | status | codes                                                                                                  |
 * | ------ | ------------------------------------------------------------------------------------------------------ |
 * | 400    | `validation_failed`, `bad_request`, `scope_required`, `scope_mismatch`, `invalid_graph`, `invalid_definition`, `agent_not_conversational`, `invalid_cron`, `endpoint_schema_unsupported` (`details.issues`) |
 * | 401    | `unauthenticated`, `invalid_credentials`, `token_expired`, `token_revoked`, `wrong_credential_type`     |
 * | 403    | `scope_forbidden`, `insufficient_role`                                                                 |
 * | 404    | `not_found` (never tells another user's or scope's resource from a missing one)                        |
 * | 409    | `version_conflict` (`details.currentVersion`), `invalid_state`, `not_published`, `session_superseded`, `idempotency_key_reused` |
 * | 429    | `rate_limited` (with `Retry-After`)                                                                     |
 * | 500    | `internal` (the message says to quote the request id)                                                  |
 */
const PLATFORM_CODES: PlatformCodeMap<string> = {
  validation_failed: 'validation_failed',
  bad_request: 'bad_request',
  invalid_pagination: 'validation_failed',
  operator_unauthenticated: 'unauthenticated',
  not_found: 'not_found',
  method_not_allowed: 'method_not_allowed',
  idempotency_key_reused: 'idempotency_key_reused',
  idempotency_key_in_use: 'idempotency_key_in_use',
  payload_too_large: 'payload_too_large',
  request_timeout: 'request_timeout',
  uri_too_long: 'uri_too_long',
  header_fields_too_large: 'header_fields_too_large',
  unsupported_media_type: 'unsupported_media_type',
  rate_limited: 'rate_limited',
  internal: 'internal',
  service_unavailable: 'service_unavailable',
};

/**
 * Renders any ApiError as `{error, code, message, details?}` (the gateway's error body). A validation failure lists
 * its issues in `details.issues` as `{field, message}`.
 */
export function formatAgentGatewayError(error: ApiError): { body: unknown } {
  const code = isPlatformErrorCode(error.code) ? PLATFORM_CODES[error.code] : error.code;
  let details: Record<string, unknown> | undefined;
  if (error instanceof ValidationError) {
    details = {
      issues: error.issues.map((i) => ({
        field: [i.location, i.field.replace(/\//g, '.')].filter(Boolean).join('.'),
        message: i.message,
      })),
    };
  } else if (error.details && error.status < 500) {
    details = error.details;
  }
  return {
    body: {
      error: reasonPhrase(error.status),
      code,
      message: error.message,
      ...(details ? { details } : {}),
    },
  };
}

/** 400 `validation_failed` for rules a schema cannot express; every issue is named. */
export function invalidFields(issues: FieldIssue[]): ValidationError {
  return new ValidationError(issues, `Invalid request: ${describeIssues(issues)}.`);
}

/** 401 `unauthenticated`: no credential of the kind the route takes, or one never issued. */
export function unauthenticated(what: string): ApiError {
  return new ApiError(401, 'unauthenticated', `Missing or unknown credential: this route needs ${what}.`);
}

/** 401 `token_expired`. */
export function tokenExpired(): ApiError {
  return new ApiError(401, 'token_expired', 'The credential has expired; sign in (or issue one) again.');
}

/** 401 `token_revoked` (signed out, or revoked by the operator). */
export function tokenRevoked(): ApiError {
  return new ApiError(401, 'token_revoked', 'The credential has been revoked.');
}

/** 401 `wrong_credential_type`: a valid credential of another kind (credential types are not interchangeable). */
export function wrongCredentialType(needed: string, presented: string): ApiError {
  return new ApiError(
    401,
    'wrong_credential_type',
    `This route needs ${needed}; the credential presented is ${presented}. Credential types are not interchangeable.`,
  );
}

/** 401 `invalid_credentials`: login with an unknown user or a wrong password (the same answer for both). */
export function invalidCredentials(): ApiError {
  return new ApiError(401, 'invalid_credentials', 'Unknown username or wrong password.');
}

/** 400 `scope_required`: a multi-scope install needs the tenant and namespace of the request. */
export function scopeRequired(): ApiError {
  return new ApiError(
    400,
    'scope_required',
    'This install serves several scopes: send X-Platform-Tenant and X-Platform-Namespace (or tenant and namespace fields).',
  );
}

/** 400 `scope_mismatch`: the headers and the body or query name different scopes (or not the install's own). */
export function scopeMismatch(message: string): ApiError {
  return new ApiError(400, 'scope_mismatch', message);
}

/** 403 `scope_forbidden`: the caller has no role in the scope (or it does not exist: the same answer). */
export function scopeForbidden(tenant: string, namespace: string): ApiError {
  return new ApiError(
    403,
    'scope_forbidden',
    `You have no role in tenant '${tenant}', namespace '${namespace}'.`,
  );
}

/** 403 `insufficient_role`: the caller's role in the scope does not allow this operation. */
export function insufficientRole(needed: string, has: string): ApiError {
  return new ApiError(403, 'insufficient_role', `This operation needs the ${needed} role; you have ${has}.`);
}

/**
 * 404 `not_found` for a resource: the same answer whether it does not exist, lives in another scope, or belongs to
 * another user (spec E "Errors": existence of another user's resource is not revealed).
 */
export function notFound(resource: string, id: string): ApiError {
  return new ApiError(404, 'not_found', `No ${resource} '${id}' in this scope.`);
}

/** 409 `version_conflict` with the current version in `details.currentVersion` (reread and review). */
export function versionConflict(resource: string, expected: number, current: number): ApiError {
  return new ApiError(
    409,
    'version_conflict',
    `The ${resource} is at version ${current}, not ${expected}: reread it and review your change.`,
    { details: { currentVersion: current } },
  );
}

/** 409 `invalid_state`: the resource is not in a state that allows the operation. */
export function invalidState(message: string, details?: Record<string, unknown>): ApiError {
  return new ApiError(409, 'invalid_state', message, details ? { details } : {});
}

/** 400 with a gateway code (`invalid_graph`, `invalid_definition`, `agent_not_conversational`, `invalid_cron`). */
export function badRequest(code: string, message: string, details?: Record<string, unknown>): ApiError {
  return new ApiError(400, code, message, details ? { details } : {});
}

/** 429 `rate_limited` with `Retry-After`. */
export function rateLimited(what: string, retryAfterSeconds: number): ApiError {
  return new ApiError(429, 'rate_limited', `Too many ${what}; retry after ${retryAfterSeconds} s.`, {
    headers: { 'retry-after': String(retryAfterSeconds) },
  });
}

/**
 * 400 `endpoint_schema_unsupported`: an endpoint schema this service cannot compile (a `pattern` RE2 does not
 * support, named in `details.issues`), found in a draft being published, a release being rolled back to, or the
 * live release an invocation is checked against (one saved before the rule existed).
 */
export function schemaUnsupported(message: string, issues: { field: string; message: string }[]): ApiError {
  return new ApiError(400, 'endpoint_schema_unsupported', message, {
    details: { issues: issues.map(({ field, message }) => ({ field, message })) },
  });
}
