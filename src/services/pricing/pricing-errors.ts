import {
  ApiError,
  type FieldIssue,
  invalidRequest,
  isPlatformErrorCode,
  type PlatformCodeMap,
  type ValidationError,
} from '../../platform/errors.ts';

/**
 * Errors of the pricing-plan service (spec document 001, section B, "Errors"): a flat body `{error, message}`, where
 * `error` is a short stable name and `message` is human text (naming the field for a validation failure).
 *
 * | status | `error`                  | when                                                                        |
 * | ------ | ------------------------ | --------------------------------------------------------------------------- |
 * | 400    | `validation_error`       | a field, path parameter or query value breaks a rule                        |
 * | 400    | `feature_limit_reached`  | creating a 51st feature in a project                                        |
 * | 400    | `bad_request`            | the body is not JSON                                                        |
 * | 401    | `unauthorized`           | missing, unknown or revoked API key (or operator token on `/_ops`)          |
 * | 403    | `forbidden`              | a `read` key on a mutating call                                             |
 * | 404    | `not_found`              | project, plan, feature or route not found                                   |
 * | 409    | `conflict`               | the feature is already on the plan; a project slug already taken            |
 * | 429    | `rate_limited`           | more than the key's requests per minute (with `Retry-After`)                |
 * | 500    | `internal_error`         | anything else; the message never carries internals                         |
 */
export const PricingErrorName = {
  validation: 'validation_error',
  featureLimit: 'feature_limit_reached',
  unauthorized: 'unauthorized',
  forbidden: 'forbidden',
  notFound: 'not_found',
  conflict: 'conflict',
  rateLimited: 'rate_limited',
  internal: 'internal_error',
} as const;

/** Platform codes (validation, operator token, Fastify's own 4xx, 500) mapped to this service's names. */
const PLATFORM_CODES: PlatformCodeMap<string> = {
  validation_failed: PricingErrorName.validation,
  bad_request: 'bad_request',
  invalid_pagination: PricingErrorName.validation,
  operator_unauthenticated: PricingErrorName.unauthorized,
  not_found: PricingErrorName.notFound,
  idempotency_key_reused: 'idempotency_key_reused',
  idempotency_key_in_use: 'idempotency_key_in_use',
  payload_too_large: 'payload_too_large',
  method_not_allowed: 'method_not_allowed',
  request_timeout: 'request_timeout',
  uri_too_long: 'uri_too_long',
  header_fields_too_large: 'header_fields_too_large',
  unsupported_media_type: 'unsupported_media_type',
  rate_limited: PricingErrorName.rateLimited,
  internal: PricingErrorName.internal,
  service_unavailable: 'service_unavailable',
};

/** 401: no `Authorization: Bearer <API_KEY>` header. */
export function keyMissing(): ApiError {
  return new ApiError(
    401,
    PricingErrorName.unauthorized,
    'Missing API key: send it as Authorization: Bearer <API_KEY>.',
  );
}

/** 401: a key we never issued (or not a key at all). */
export function keyInvalid(): ApiError {
  return new ApiError(401, PricingErrorName.unauthorized, 'Invalid API key.');
}

/** 401: a revoked key. */
export function keyRevoked(): ApiError {
  return new ApiError(401, PricingErrorName.unauthorized, 'This API key has been revoked.');
}

/** 403: a `read` key on a call that needs `read_write`. */
export function readOnlyKey(): ApiError {
  return new ApiError(
    403,
    PricingErrorName.forbidden,
    'This API key has read permission; this call needs a key with read_write permission.',
  );
}

/**
 * 404 for a project: the same answer whether the slug does not exist or belongs to a project the key cannot see, so
 * a key never learns about other projects.
 */
export function projectNotFound(slug: string): ApiError {
  return new ApiError(404, PricingErrorName.notFound, `Project '${slug}' not found.`);
}

/** 404: no plan `planId` in the caller's project. */
export function planNotFound(planId: number): ApiError {
  return new ApiError(404, PricingErrorName.notFound, `Plan ${planId} not found.`);
}

/** 404: no feature `featureId` in the caller's project. */
export function featureNotFound(featureId: number): ApiError {
  return new ApiError(404, PricingErrorName.notFound, `Feature ${featureId} not found.`);
}

/** 404: feature `featureId` is not on plan `planId`. */
export function planFeatureNotFound(planId: number, featureId: number): ApiError {
  return new ApiError(404, PricingErrorName.notFound, `Feature ${featureId} is not on plan ${planId}.`);
}

/** 409: feature `featureId` is already on plan `planId` (change its multiplier with PATCH instead). */
export function featureAlreadyOnPlan(planId: number, featureId: number): ApiError {
  return new ApiError(
    409,
    PricingErrorName.conflict,
    `Feature ${featureId} is already on plan ${planId}; change its multiplier with PATCH /plans/${planId}/features/${featureId}.`,
  );
}

/** 400: the project already has `max` features. */
export function featureLimitReached(max: number): ApiError {
  return new ApiError(
    400,
    PricingErrorName.featureLimit,
    `A project can have at most ${max} features; delete one before creating another.`,
  );
}

/** 429 with `Retry-After` (seconds until the key's window ends). */
export function rateLimited(limitPerMinute: number, retryAfterSeconds: number): ApiError {
  return new ApiError(
    429,
    PricingErrorName.rateLimited,
    `Rate limit of ${limitPerMinute} requests per minute exceeded; retry after ${retryAfterSeconds} seconds.`,
    { headers: { 'retry-after': String(retryAfterSeconds) } },
  );
}

/**
 * 400 `validation_error` for rules the request schema cannot express (decimal places, blank names, fields that must
 * agree). Every issue is named in the message (`body.basePrice ...; body.name ...`).
 */
export function invalidFields(issues: FieldIssue[]): ValidationError {
  return invalidRequest(issues);
}

/**
 * Renders any ApiError as `{error, message}`. `error` is the ApiError's code, or for platform errors its name here
 * (`validation_failed` -> `validation_error`, `operator_unauthenticated` -> `unauthorized`, `internal` ->
 * `internal_error`); Fastify's own 4xx keep theirs (`bad_request`, `payload_too_large`, `not_found`, ...).
 */
export function formatPricingError(error: ApiError, _request?: unknown): { body: unknown } {
  return {
    body: {
      error: isPlatformErrorCode(error.code) ? PLATFORM_CODES[error.code] : error.code,
      message: error.message,
    },
  };
}
