import { ApiError, isPlatformErrorCode, type PlatformCodeMap, reasonPhrase } from '../../platform/errors.ts';
import type { ValidationErrors } from './deposit-request.ts';

/**
 * Errors of the deposit-address service, in its NestJS-style body (anchor: a stablecoin "fast deposit"
 * gateway): `{statusCode, message, error?}`, plus `validationErrors` (field -> messages) for validation failures and
 * `details: {errorCode, errorDesc}` for business errors.
 */
export function validationFailed(errors: ValidationErrors): ApiError {
  return new ApiError(400, 'validation_failed', 'Validation failed', {
    details: { validationErrors: errors },
  });
}

/** 400 business error with `details: {errorCode, errorDesc}`. */
export function businessError(errorCode: string, errorDesc: string): ApiError {
  return new ApiError(400, 'business_error', errorDesc, { details: { errorCode, errorDesc } });
}

/** 401 `invalid-api-key`: a supplied key that is unknown, revoked or not enabled for v1. */
export function invalidApiKey(): ApiError {
  return new ApiError(401, 'invalid_api_key', 'invalid-api-key');
}

/**
 * The `error` text of each platform error in the NestJS-style body: the reason phrase of its status. `undefined`:
 * the phrase of the answer's own status (Fastify's 4xx keep theirs: 400, 414, 431).
 */
const PLATFORM_REASONS: PlatformCodeMap<string | undefined> = {
  validation_failed: 'Bad Request',
  bad_request: undefined,
  invalid_pagination: 'Bad Request',
  operator_unauthenticated: 'Unauthorized',
  not_found: 'Not Found',
  idempotency_key_reused: 'Conflict',
  idempotency_key_in_use: 'Conflict',
  payload_too_large: 'Payload Too Large',
  method_not_allowed: 'Method Not Allowed',
  request_timeout: 'Request Timeout',
  uri_too_long: 'URI Too Long',
  header_fields_too_large: 'Request Header Fields Too Large',
  unsupported_media_type: 'Unsupported Media Type',
  rate_limited: 'Too Many Requests',
  internal: 'Internal Server Error',
  service_unavailable: 'Service Unavailable',
};

/**
 * Renders an ApiError: `{statusCode, message, error}`; validation failures add `validationErrors` (every failing
 * field at once), business errors add `details`. A platform validation error (a bad path or query value) is
 * turned into the same `validationErrors` map.
 */
export function formatDepositError(error: ApiError, _request?: unknown): { body: unknown } {
  const body: Record<string, unknown> = {
    statusCode: error.status,
    message: error.message,
    error:
      (isPlatformErrorCode(error.code) ? PLATFORM_REASONS[error.code] : undefined) ??
      reasonPhrase(error.status),
  };
  const details = error.details ?? {};
  if (details.validationErrors) {
    body.message = 'Validation failed';
    body.validationErrors = details.validationErrors;
  } else if (Array.isArray(details.issues)) {
    const map: ValidationErrors = {};
    for (const issue of details.issues as { field: string; location: string; message: string }[]) {
      const field = issue.field || issue.location;
      const list = map[field] ?? [];
      list.push(`${field} ${issue.message}`);
      map[field] = list;
    }
    body.message = 'Validation failed';
    body.validationErrors = map;
  } else if (details.errorCode) {
    body.details = { errorCode: details.errorCode, errorDesc: details.errorDesc };
  }
  return { body };
}
