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
    super(400, 'validation_failed', message, { details: { issues } });
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
  return new ApiError(
    500,
    'internal',
    'An internal error occurred. Quote the request id when reporting it.',
    {
      cause,
    },
  );
}

/** Thrown by the config loader; its message is one line meant for the operator's terminal. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
