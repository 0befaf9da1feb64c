import { STATUS_CODES } from 'node:http';

/**
 * The one error type of the platform. Domain code throws {@link ApiError}; each service's error formatter turns it
 * into that service's own body (`{status:{error_code,...}}`, JSON:API `errors[]`, `{error, message}`, ...).
 *
 * `code` is a stable machine-readable string the formatter may map (for example `validation_failed`,
 * `unauthenticated`, `not_found`, `rate_limited`, `internal`). `message` is safe to show to the caller: never put an
 * internal detail in it. `details` carries structured extras (field errors, upstream codes) for the formatter.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(
    status: number,
    code: string,
    message: string,
    options: { details?: Record<string, unknown>; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.details = options.details;
    this.headers = options.headers;
  }
}

/**
 * Every error code the platform itself raises, with its HTTP status. The list is closed: each service's formatter
 * maps every one of them through a `Record<PlatformErrorCode, ...>` ({@link PlatformCodeMap}), so adding a code here
 * fails the compilation of every formatter that does not say how it shows it. Services raise their own codes for
 * their own errors besides these.
 *
 * - `validation_failed`: a request broke its schema ({@link ValidationError}, every issue listed);
 * - `bad_request`: Fastify refused the request before it reached a route (malformed or empty JSON, a bad URL, a
 *   `__proto__` key; the status is Fastify's, usually 400);
 * - `invalid_pagination`: `limit` / `offset` out of range (`pagination.ts`);
 * - `operator_unauthenticated`: an `/_ops` route without the operator token;
 * - `not_found`: no such route, or no such credential on the operator key routes;
 * - `method_not_allowed`: the path exists, with other methods (the answer lists them in `Allow`, RFC 9110 15.5.6);
 * - `idempotency_key_reused` / `idempotency_key_in_use`: an `Idempotency-Key` sent with another request, or while its
 *   first request is still running (`idempotency.ts`);
 * - `payload_too_large`, `unsupported_media_type`: body over the limit, or of a type no parser takes;
 * - `uri_too_long`: a path parameter over the router's limit (100 characters);
 * - `request_timeout`, `header_fields_too_large`: refused by Node's HTTP parser before Fastify saw a request (headers
 *   not received in time; headers over Node's `maxHeaderSize`, 16 KiB);
 * - `rate_limited`: a rate limit without the service's own answer;
 * - `internal`: anything unexpected (the message never carries internals);
 * - `service_unavailable`: the instance is stopping.
 */
export const PLATFORM_ERRORS = {
  validation_failed: 400,
  bad_request: 400,
  invalid_pagination: 400,
  operator_unauthenticated: 401,
  not_found: 404,
  method_not_allowed: 405,
  idempotency_key_reused: 409,
  idempotency_key_in_use: 409,
  payload_too_large: 413,
  request_timeout: 408,
  uri_too_long: 414,
  unsupported_media_type: 415,
  header_fields_too_large: 431,
  rate_limited: 429,
  internal: 500,
  service_unavailable: 503,
} as const satisfies Record<string, number>;

/** A code of {@link PLATFORM_ERRORS}. */
export type PlatformErrorCode = keyof typeof PLATFORM_ERRORS;

/** Every {@link PlatformErrorCode}, for tests and docs. */
export const PLATFORM_ERROR_CODES = Object.keys(PLATFORM_ERRORS) as PlatformErrorCode[];

/** How a service shows each platform code (its own name, number or text): exhaustive by its type. */
export type PlatformCodeMap<T> = Record<PlatformErrorCode, T>;

/** True when `code` is one the platform raises. */
export function isPlatformErrorCode(code: string): code is PlatformErrorCode {
  return Object.hasOwn(PLATFORM_ERRORS, code);
}

/** An {@link ApiError} of a platform code, with the code's status unless `options.status` overrides it. */
export function platformError(
  code: PlatformErrorCode,
  message: string,
  options: {
    status?: number;
    details?: Record<string, unknown>;
    headers?: Record<string, string>;
    cause?: unknown;
  } = {},
): ApiError {
  return new ApiError(options.status ?? PLATFORM_ERRORS[code], code, message, options);
}

/** The reason phrase of an HTTP status (RFC 9110 section 15) from `node:http`'s `STATUS_CODES`; `Error` if unknown. */
export function reasonPhrase(status: number): string {
  return STATUS_CODES[status] ?? 'Error';
}

/** One failed rule of a request: `field` is a dotted/pointer path into the request (`body.amount`, `query.limit`). */
export interface FieldIssue {
  /** Where the value came from: `body`, `query`, `params` or `headers`. */
  location: string;
  /** The field name inside that location (`amount`, `lineItems/0/quantity`); empty for the whole location. */
  field: string;
  message: string;
}

/**
 * A request that failed validation. All issues are reported at once. `code` is `validation_failed`, status 400.
 */
export class ValidationError extends ApiError {
  readonly issues: FieldIssue[];

  constructor(issues: FieldIssue[], message = 'The request is invalid.') {
    super(PLATFORM_ERRORS.validation_failed, 'validation_failed' satisfies PlatformErrorCode, message, {
      details: { issues },
    });
    this.name = 'ValidationError';
    this.issues = issues;
  }
}

/** Most issues {@link describeIssues} names in one message. */
export const MAX_DESCRIBED_ISSUES = 10;

/**
 * One line naming the issues, for error bodies that carry a message only (`{error, message}`):
 * `body.amount must be ...; query.limit must be ... (and 3 more)`. Names at most `max` issues, in order.
 * @param options.withLocation prefix each field with its location (`body.`, `query.`); default true.
 */
export function describeIssues(
  issues: readonly FieldIssue[],
  options: { max?: number; withLocation?: boolean } = {},
): string {
  const max = options.max ?? MAX_DESCRIBED_ISSUES;
  const name = (i: FieldIssue) => {
    const field = i.field.replace(/\//g, '.');
    const where = options.withLocation === false ? field : [i.location, field].filter(Boolean).join('.');
    return where ? `${where} ${i.message}` : i.message;
  };
  const shown = issues.slice(0, max).map(name).join('; ');
  return issues.length > max ? `${shown} (and ${issues.length - max} more)` : shown;
}

/** 400 {@link ValidationError} whose message is `Invalid request: <every issue, see describeIssues>.` */
export function invalidRequest(issues: FieldIssue[]): ValidationError {
  return new ValidationError(
    issues,
    `Invalid request: ${issues.length > 0 ? describeIssues(issues) : 'invalid request'}.`,
  );
}

/** The generic 500 answer: the message never echoes the underlying error. */
export function internalError(cause?: unknown): ApiError {
  return platformError('internal', 'An internal error occurred. Quote the request id when reporting it.', {
    cause,
  });
}

/** Thrown by the config loader; its message is one line meant for the operator's terminal. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
