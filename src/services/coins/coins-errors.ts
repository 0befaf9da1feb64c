import {
  ApiError,
  isPlatformErrorCode,
  PLATFORM_ERRORS,
  type PlatformCodeMap,
} from '../../platform/errors.ts';

/**
 * Errors of the coin-listing service, in CoinGecko's body: `{"status":{"error_code":<n>,"error_message":"..."}}`
 * (anchor: CoinGecko API v3). `error_code` is CoinGecko's numeric code where it has one (10002 key
 * missing, 10010/10011 key rejected, 10005 paid plan needed, 429 rate limited), otherwise the HTTP status.
 */
export const CoinErrorCode = {
  keyMissing: 10002,
  keyInvalid: 10010,
  keyRevoked: 10011,
  wrongKeyHeader: 10012,
  planRestricted: 10005,
  rateLimited: 429,
} as const;

/** 401: no key in `x-coin-demo-api-key` / `x-coin-pro-api-key` (or their query forms). */
export function keyMissing(): ApiError {
  return new ApiError(
    401,
    'key_missing',
    "API Key Missing. Please make sure you're using the right API Key and API Base URL: send a demo key in the x-coin-demo-api-key header (or a paid key in x-coin-pro-api-key).",
    { details: { errorCode: CoinErrorCode.keyMissing } },
  );
}

/** 401: the key is not one we issued. */
export function keyInvalid(): ApiError {
  return new ApiError(
    401,
    'key_invalid',
    'Invalid API Key. Please check that the key is complete and correct.',
    {
      details: { errorCode: CoinErrorCode.keyInvalid },
    },
  );
}

/** 401: the key was revoked. */
export function keyRevoked(): ApiError {
  return new ApiError(401, 'key_revoked', 'This API Key has been revoked. Please use an active API Key.', {
    details: { errorCode: CoinErrorCode.keyRevoked },
  });
}

/** 401: a demo key in the paid header or a paid key in the demo header. */
export function wrongKeyHeader(tier: 'demo' | 'pro'): ApiError {
  return new ApiError(
    401,
    'key_wrong_header',
    tier === 'demo'
      ? 'This is a Demo API Key: send it in the x-coin-demo-api-key header.'
      : 'This is a paid-plan API Key: send it in the x-coin-pro-api-key header.',
    { details: { errorCode: CoinErrorCode.wrongKeyHeader } },
  );
}

/** 401: the request needs a paid plan (inactive coins on the public tier). */
export function planRestricted(what: string): ApiError {
  return new ApiError(
    401,
    'plan_restricted',
    `${what} is limited to paid-plan API Key holders (x-coin-pro-api-key).`,
    {
      details: { errorCode: CoinErrorCode.planRestricted },
    },
  );
}

/** 429 with `retry-after` (seconds). */
export function rateLimited(retryAfterSeconds: number): ApiError {
  return new ApiError(
    429,
    'rate_limited',
    "You've exceeded the Rate Limit. Please wait for the time given in retry-after, or use a paid-plan key for higher rate limits.",
    {
      details: { errorCode: CoinErrorCode.rateLimited },
      headers: { 'retry-after': String(retryAfterSeconds) },
    },
  );
}

/**
 * The `error_code` of each platform error: CoinGecko answers errors without a numeric code of their own with the
 * HTTP status, and 429 for its rate limit.
 */
const PLATFORM_CODES: PlatformCodeMap<number> = {
  ...PLATFORM_ERRORS,
  rate_limited: CoinErrorCode.rateLimited,
};

/**
 * Renders any ApiError as CoinGecko's `{status:{error_code,error_message}}`: the service's own numeric code
 * (`details.errorCode`), else the platform code's ({@link PLATFORM_CODES}; a Fastify 4xx keeps its own status), else
 * the HTTP status.
 */
export function formatCoinError(error: ApiError, _request?: unknown): { body: unknown } {
  const code =
    typeof error.details?.errorCode === 'number'
      ? error.details.errorCode
      : isPlatformErrorCode(error.code) && error.code !== 'bad_request'
        ? PLATFORM_CODES[error.code]
        : error.status;
  return { body: { status: { error_code: code, error_message: error.message } } };
}
