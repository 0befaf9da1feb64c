import {
  ApiError,
  type FieldIssue,
  invalidRequest,
  isPlatformErrorCode,
  type PlatformCodeMap,
  type ValidationError,
} from '../../platform/errors.ts';

/**
 * Errors of the sports-odds service (spec F; anchor TheRundown: `{"error": "...", "message": "..."}`). `error` is a
 * short stable name, `message` human text.
 *
 * | status | `error`              | when                                                                          |
 * | ------ | -------------------- | ----------------------------------------------------------------------------- |
 * | 400    | `validation_error`   | a parameter or body field breaks a rule (more than 12 `market_ids`, ...)       |
 * | 400    | `stale_cursor`       | delta `last_id` older than the 30-minute window: re-bootstrap from events      |
 * | 400    | `unknown_cursor`     | delta `last_id` never issued: re-bootstrap from events                         |
 * | 401    | `unauthorized`       | missing, unknown or revoked `X-Odds-Key` (or operator token on `/_ops`)        |
 * | 403    | `plan_lookback`      | the data asked for is older than the key's plan allows                         |
 * | 404    | `not_found`          | event, team, player, line, sport or route not found                            |
 * | 426    | `upgrade_required`   | a plain GET of the WebSocket endpoint                                          |
 * | 429    | `rate_limited`       | more than the plan's requests per minute (with `Retry-After`)                  |
 * | 500    | `internal_error`     | anything else; the message never carries internals                             |
 */
export const OddsErrorName = {
  validation: 'validation_error',
  staleCursor: 'stale_cursor',
  unknownCursor: 'unknown_cursor',
  unauthorized: 'unauthorized',
  planLookback: 'plan_lookback',
  notFound: 'not_found',
  rateLimited: 'rate_limited',
  internal: 'internal_error',
} as const;

const PLATFORM_CODES: PlatformCodeMap<string> = {
  validation_failed: OddsErrorName.validation,
  bad_request: 'bad_request',
  invalid_pagination: OddsErrorName.validation,
  operator_unauthenticated: OddsErrorName.unauthorized,
  not_found: OddsErrorName.notFound,
  idempotency_key_reused: 'idempotency_key_reused',
  idempotency_key_in_use: 'idempotency_key_in_use',
  payload_too_large: 'payload_too_large',
  method_not_allowed: 'method_not_allowed',
  request_timeout: 'request_timeout',
  uri_too_long: 'uri_too_long',
  header_fields_too_large: 'header_fields_too_large',
  unsupported_media_type: 'unsupported_media_type',
  rate_limited: OddsErrorName.rateLimited,
  internal: OddsErrorName.internal,
  service_unavailable: 'service_unavailable',
};

/** 401: no `X-Odds-Key` header. */
export function keyMissing(): ApiError {
  return new ApiError(401, OddsErrorName.unauthorized, 'Missing API key: send it in the X-Odds-Key header.');
}

/** 401: a key we never issued, or a revoked one. */
export function keyInvalid(): ApiError {
  return new ApiError(401, OddsErrorName.unauthorized, 'Invalid or revoked API key.');
}

/** 404 with `message`. */
export function notFound(message: string): ApiError {
  return new ApiError(404, OddsErrorName.notFound, message);
}

/** 429 with `Retry-After` (seconds until the key's window ends). */
export function rateLimited(limitPerMinute: number, retryAfterSeconds: number): ApiError {
  return new ApiError(
    429,
    OddsErrorName.rateLimited,
    `Rate limit of ${limitPerMinute} requests per minute for this plan exceeded; retry after ${retryAfterSeconds} seconds.`,
    { headers: { 'retry-after': String(retryAfterSeconds) } },
  );
}

/** 403: data before `earliest` (YYYY-MM-DD) is outside the key's plan. */
export function lookbackExceeded(plan: string, days: number, earliest: string): ApiError {
  return new ApiError(
    403,
    OddsErrorName.planLookback,
    `The ${plan} plan reaches back ${days} days; data before ${earliest} needs a plan with a longer lookback.`,
  );
}

/** 400 `validation_error` for one field of `location` (`query`, `body`, `params`). */
export function invalid(location: string, field: string, message: string): ValidationError {
  return invalidFields([{ location, field, message }]);
}

/** 400 `validation_error` naming every issue in its message (platform `invalidRequest`). */
export function invalidFields(issues: FieldIssue[]): ValidationError {
  return invalidRequest(issues);
}

/** Renders any ApiError as `{error, message}` (platform codes mapped to this service's names). */
export function formatOddsError(error: ApiError, _request?: unknown): { body: unknown } {
  return {
    body: {
      error: isPlatformErrorCode(error.code) ? PLATFORM_CODES[error.code] : error.code,
      message: error.message,
    },
  };
}
