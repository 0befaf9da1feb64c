/**
 * Errors of the token endpoint in OAuth's own body (RFC 6749 section 5.2), not JSON:API: what OAuth clients read.
 * `{"error": "invalid_client", "error_description": "..."}`, always with `Cache-Control: no-store` and
 * `Pragma: no-cache` (section 5.1); a 401 `invalid_client` also carries `WWW-Authenticate: Basic` (section 5.2).
 */
import {
  ApiError,
  describeIssues,
  type FieldIssue,
  isPlatformErrorCode,
  type PlatformCodeMap,
} from '../../platform/errors.ts';

/** The error codes of RFC 6749 section 5.2 this service answers, and `server_error` / `temporarily_unavailable`. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'server_error'
  | 'temporarily_unavailable';

/**
 * The OAuth code of each platform error: malformed requests are `invalid_request`; a rate limit and a stopping
 * service are `temporarily_unavailable` (RFC 6749 section 4.1.2.1's code, as OAuth clients know it); a 500 is
 * `server_error`.
 */
const PLATFORM_CODES: PlatformCodeMap<OAuthErrorCode> = {
  validation_failed: 'invalid_request',
  bad_request: 'invalid_request',
  invalid_pagination: 'invalid_request',
  operator_unauthenticated: 'invalid_client',
  not_found: 'invalid_request',
  idempotency_key_reused: 'invalid_request',
  idempotency_key_in_use: 'invalid_request',
  payload_too_large: 'invalid_request',
  method_not_allowed: 'invalid_request',
  request_timeout: 'invalid_request',
  uri_too_long: 'invalid_request',
  header_fields_too_large: 'invalid_request',
  unsupported_media_type: 'invalid_request',
  rate_limited: 'temporarily_unavailable',
  internal: 'server_error',
  service_unavailable: 'temporarily_unavailable',
};

const OWN_CODES = new Set<string>([
  'invalid_request',
  'invalid_client',
  'unsupported_grant_type',
  'invalid_scope',
]);

/** `Cache-Control: no-store` and `Pragma: no-cache`, on every token endpoint answer (RFC 6749 section 5.1). */
export const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' } as const;

/** The realm of the token endpoint's `WWW-Authenticate: Basic` challenge. */
const REALM = 'payments';

/** Renders an ApiError as an RFC 6749 section 5.2 error body, with the no-store headers (and the Basic challenge). */
export function formatOAuthError(error: ApiError): { body: unknown; headers: Record<string, string> } {
  const code: OAuthErrorCode = OWN_CODES.has(error.code)
    ? (error.code as OAuthErrorCode)
    : isPlatformErrorCode(error.code)
      ? PLATFORM_CODES[error.code]
      : error.status >= 500
        ? 'server_error'
        : 'invalid_request';
  const issues = error.details?.issues as FieldIssue[] | undefined;
  const description =
    Array.isArray(issues) && issues.length > 0
      ? `Invalid request: ${describeIssues(issues, { withLocation: false })}.`
      : error.message;
  const headers: Record<string, string> = { ...NO_STORE };
  if (error.status === 401) headers['www-authenticate'] = `Basic realm="${REALM}", charset="UTF-8"`;
  // RFC 6749 section 5.2: error_description is printable ASCII without `"` and `\`.
  return { body: { error: code, error_description: asciiDescription(description) }, headers };
}

function asciiDescription(text: string): string {
  const ascii = text.replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, ' ').slice(0, 500);
  return ascii.trim() || 'The request was refused.';
}

/** 400 `invalid_request`: a parameter is missing, repeated, malformed, or two client authentications were used. */
export function invalidRequest(description: string): ApiError {
  return oauthError(400, 'invalid_request', description);
}

/** 401 `invalid_client`: client authentication failed (unknown client, wrong or revoked secret, none sent). */
export function invalidClient(description: string): ApiError {
  return oauthError(401, 'invalid_client', description);
}

/** 400 `unsupported_grant_type`: only `client_credentials` is supported. */
export function unsupportedGrantType(grantType: string): ApiError {
  return oauthError(
    400,
    'unsupported_grant_type',
    `grant_type ${grantType.slice(0, 50)} is not supported; use client_credentials.`,
  );
}

/** 400 `invalid_scope`: the scope is malformed, unknown, or beyond what the client was registered with. */
export function invalidScope(description: string): ApiError {
  return oauthError(400, 'invalid_scope', description);
}

function oauthError(status: number, code: OAuthErrorCode, description: string): ApiError {
  return new ApiError(status, code, description);
}
