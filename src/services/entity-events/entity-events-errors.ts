import {
  ApiError,
  type FieldIssue,
  isPlatformErrorCode,
  type PlatformCodeMap,
  invalidRequest as platformInvalidRequest,
} from '../../platform/errors.ts';

/**
 * Errors and `response_context` of the entity-events service (spec 002 section G: "All responses carry
 * `response_context` (`correlation_id`, `request_status`, `time_taken_in_seconds`)"). The error body is
 * `{response_context: {..., request_status: "failure"}, error: {code, message, details?}}`.
 */
const started = new WeakMap<object, number>();

/** Records when handling of `request` began (called from an `onRequest` hook). */
export function markRequestStart(request: object): void {
  started.set(request, performance.now());
}

/** The `response_context` of one answer. `correlation_id` is the request id (also the `x-request-id` header). */
export interface ResponseContext {
  correlation_id: string;
  request_status: 'success' | 'failure';
  /** Seconds from the start of handling to now, millisecond precision. */
  time_taken_in_seconds: number;
  [extra: string]: unknown;
}

/** Builds the `response_context` for `request` (any object with the request `id`). */
export function responseContext(
  request: { id: string },
  status: 'success' | 'failure',
  extra: Record<string, unknown> = {},
): ResponseContext {
  const t0 = started.get(request);
  const seconds = t0 === undefined ? 0 : Math.round(performance.now() - t0) / 1000;
  return { correlation_id: request.id, request_status: status, time_taken_in_seconds: seconds, ...extra };
}

/** The `error.code` of each platform error (README error table): the platform's own names. */
const PLATFORM_CODES: PlatformCodeMap<string> = {
  validation_failed: 'validation_failed',
  bad_request: 'bad_request',
  invalid_pagination: 'invalid_pagination',
  operator_unauthenticated: 'operator_unauthenticated',
  not_found: 'not_found',
  idempotency_key_reused: 'idempotency_key_reused',
  idempotency_key_in_use: 'idempotency_key_in_use',
  payload_too_large: 'payload_too_large',
  method_not_allowed: 'method_not_allowed',
  request_timeout: 'request_timeout',
  uri_too_long: 'uri_too_long',
  header_fields_too_large: 'header_fields_too_large',
  unsupported_media_type: 'unsupported_media_type',
  rate_limited: 'rate_limited',
  internal: 'internal',
  service_unavailable: 'service_unavailable',
};

/** The service's error formatter (platform ErrorFormatter). Validation issues are listed in `details.issues`. */
export function formatEntityEventsError(error: ApiError, request: { id: string }): { body: unknown } {
  const code = isPlatformErrorCode(error.code) ? PLATFORM_CODES[error.code] : error.code;
  const err: Record<string, unknown> = { code, message: error.message };
  if (error.details) err.details = error.details;
  return { body: { response_context: responseContext(request, 'failure'), error: err } };
}

/** Issue kinds that have an error code of their own (README, error table). */
export type IssueCode = 'unknown_event_type' | 'too_many_ids';

/**
 * One problem of a request: `field` is a pointer into `location` (`events/3/data/amount`, `headers/0`). `code` marks
 * an issue of a kind with its own error code.
 */
export interface Issue extends FieldIssue {
  code?: IssueCode;
}

/**
 * The 400 answer for a request with `issues` (at least one), every issue listed in `details.issues`. The error code
 * is the issues' own `code` when every issue has the same one (`unknown_event_type`, `too_many_ids`); a request with
 * several kinds of problems, or only plain ones, is `validation_failed`.
 * @param message shown to the caller; defaults to the platform's `Invalid request: <issues>.` (the same wording as the
 *   schema validation errors of this service, see describeIssues).
 */
export function invalidRequest(issues: Issue[], message?: string): ApiError {
  const codes = new Set(issues.map((i) => i.code));
  const only = codes.size === 1 ? [...codes][0] : undefined;
  const text = message ?? platformInvalidRequest(issues).message;
  return new ApiError(400, only ?? 'validation_failed', text, { details: { issues } });
}

/** Throws {@link invalidRequest} when `issues` is not empty. @throws ApiError 400. */
export function throwIfIssues(issues: Issue[], message?: string): void {
  if (issues.length > 0) throw invalidRequest(issues, message);
}

/** 401: no `api_key` header, or an unknown or revoked key. */
export function unauthenticated(): ApiError {
  return new ApiError(401, 'unauthenticated', 'A valid api_key header is required.');
}

/** 404 for a resource that does not exist in the caller's tenant. */
export function notFound(what: string, id: string): ApiError {
  return new ApiError(404, `${what}_not_found`, `No ${what.replace(/_/g, ' ')} ${id}.`);
}
