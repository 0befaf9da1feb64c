/**
 * Errors of the media-buying service (spec document 000, "Errors"), in the REST envelope
 * `{data: null, error: {code, message, field?, details?}}`.
 *
 * | status | codes                                                                                   |
 * | ------ | --------------------------------------------------------------------------------------- |
 * | 400    | `BAD_REQUEST` (malformed body, URL or parameter), `VALIDATION_ERROR` (the request schema) |
 * | 401    | `UNAUTHORIZED` (no credential, expired, revoked or unknown)                              |
 * | 403    | `FORBIDDEN`, `ACCESS_DENIED`, `ALPHA_OPT_IN_REQUIRED`, `TOS_ACCEPTANCE_REQUIRED`          |
 * | 404    | `NOT_FOUND` (unknown id, or hidden from the caller's scope: the same answer)              |
 * | 409    | `CONFLICT`                                                                              |
 * | 422    | `VALIDATION_ERROR` (schema-valid but semantically invalid: a weak password, a used token) |
 * | 429    | `RATE_LIMITED` with `Retry-After`                                                       |
 * | 500    | `INTERNAL_ERROR` (safe to retry once)                                                   |
 * | 501    | `NOT_IMPLEMENTED`                                                                       |
 * | 503    | `SERVICE_UNAVAILABLE`, `SIGNUP_EXPERIENCE_STATE_UNAVAILABLE` (flat body, see below)        |
 *
 * HTTP answers the framework gives before a route runs keep their own status (405, 408, 413, 414, 415, 431) with
 * the code `BAD_REQUEST`: the spec's table has no other code for a malformed request.
 *
 * The four legacy auth endpoints (`GET /auth/url`, `GET /auth/sso/url`, `POST /auth/token`,
 * `POST /auth/sso/callback`) answer `SIGNUP_EXPERIENCE_STATE_UNAVAILABLE` as the flat 503
 * `{error, message, retryable: true}` ({@link formatLegacyAuthError}).
 */
import {
  ApiError,
  type FieldIssue,
  isPlatformErrorCode,
  type PlatformCodeMap,
} from '../../platform/errors.ts';

/** Every code of the spec's error table that the REST API answers. */
export const MediaBuyingCode = {
  badRequest: 'BAD_REQUEST',
  validation: 'VALIDATION_ERROR',
  currencyMismatch: 'CURRENCY_MISMATCH',
  unauthorized: 'UNAUTHORIZED',
  forbidden: 'FORBIDDEN',
  accessDenied: 'ACCESS_DENIED',
  alphaOptInRequired: 'ALPHA_OPT_IN_REQUIRED',
  tosAcceptanceRequired: 'TOS_ACCEPTANCE_REQUIRED',
  notFound: 'NOT_FOUND',
  conflict: 'CONFLICT',
  buyerSetupRequired: 'BUYER_SETUP_REQUIRED',
  pricingNotConfigured: 'PRICING_NOT_CONFIGURED',
  insufficientMediaBudget: 'INSUFFICIENT_MEDIA_BUDGET',
  capabilityNotSupported: 'CAPABILITY_NOT_SUPPORTED',
  spendDenominationUnresolved: 'SPEND_DENOMINATION_UNRESOLVED',
  rateLimited: 'RATE_LIMITED',
  internal: 'INTERNAL_ERROR',
  notImplemented: 'NOT_IMPLEMENTED',
  serviceUnavailable: 'SERVICE_UNAVAILABLE',
  signupExperienceStateUnavailable: 'SIGNUP_EXPERIENCE_STATE_UNAVAILABLE',
  fxRateUnavailable: 'FX_RATE_UNAVAILABLE',
  fxQuoteExpired: 'FX_QUOTE_EXPIRED',
  unboundFreeWriteProhibited: 'UNBOUND_FREE_WRITE_PROHIBITED',
  unboundFreeForeignTenancyProhibited: 'UNBOUND_FREE_FOREIGN_TENANCY_PROHIBITED',
  unboundFreeSpendProhibited: 'UNBOUND_FREE_SPEND_PROHIBITED',
} as const;

/** A code of {@link MediaBuyingCode}. */
export type MediaBuyingErrorCode = (typeof MediaBuyingCode)[keyof typeof MediaBuyingCode];

/** How each platform error shows in the envelope. */
const PLATFORM_CODES: PlatformCodeMap<MediaBuyingErrorCode> = {
  validation_failed: MediaBuyingCode.validation,
  bad_request: MediaBuyingCode.badRequest,
  invalid_pagination: MediaBuyingCode.validation,
  operator_unauthenticated: MediaBuyingCode.unauthorized,
  not_found: MediaBuyingCode.notFound,
  method_not_allowed: MediaBuyingCode.badRequest,
  idempotency_key_reused: MediaBuyingCode.conflict,
  idempotency_key_in_use: MediaBuyingCode.conflict,
  payload_too_large: MediaBuyingCode.badRequest,
  request_timeout: MediaBuyingCode.badRequest,
  uri_too_long: MediaBuyingCode.badRequest,
  header_fields_too_large: MediaBuyingCode.badRequest,
  unsupported_media_type: MediaBuyingCode.badRequest,
  rate_limited: MediaBuyingCode.rateLimited,
  internal: MediaBuyingCode.internal,
  service_unavailable: MediaBuyingCode.serviceUnavailable,
};

/** The error object of the envelope. */
export interface EnvelopeError {
  code: string;
  message: string;
  field?: string;
  details?: Record<string, unknown>;
}

/** A field path as the envelope names it: `body.password` -> `password`, `lineItems/0/qty` -> `lineItems.0.qty`. */
function fieldPath(issue: FieldIssue): string {
  const field = issue.field.replace(/\//g, '.');
  return issue.location === 'body' || field === '' ? field || issue.location : `${issue.location}.${field}`;
}

/**
 * Renders any ApiError as the envelope `{data: null, error}`. A validation failure names its first field in
 * `field` and lists every issue in `details.issues` (`[{field, location, message}]`); other `details` pass through.
 */
export function formatMediaBuyingError(error: ApiError, _request?: unknown): { body: unknown } {
  const code = isPlatformErrorCode(error.code) ? PLATFORM_CODES[error.code] : error.code;
  const out: EnvelopeError = { code, message: error.message };
  const issues = error.details?.issues as FieldIssue[] | undefined;
  if (Array.isArray(issues) && issues.length > 0) {
    out.field = fieldPath(issues[0]!);
    out.details = {
      ...error.details,
      issues: issues.map((i) => ({ field: fieldPath(i), location: i.location, message: i.message })),
    };
  } else {
    const { field, ...rest } = error.details ?? {};
    if (typeof field === 'string') out.field = field;
    if (Object.keys(rest).length > 0) out.details = rest;
  }
  return { body: { data: null, error: out } };
}

/** 401 `UNAUTHORIZED`: no credential (or not a bearer credential or session cookie). */
export function credentialMissing(): ApiError {
  return new ApiError(
    401,
    MediaBuyingCode.unauthorized,
    'Authentication required: send Authorization: Bearer <credential> or sign in.',
  );
}

/** 401 `UNAUTHORIZED`: an unknown, revoked or expired credential (one answer: which one is not said). */
export function credentialInvalid(): ApiError {
  return new ApiError(401, MediaBuyingCode.unauthorized, 'The credential is invalid, expired or revoked.');
}

/** 401 `UNAUTHORIZED`: a sign-in with a wrong email or password (one answer for both). */
export function invalidSignIn(): ApiError {
  return new ApiError(401, MediaBuyingCode.unauthorized, 'Invalid email or password.');
}

/** 403 `FORBIDDEN` with a reason safe to show. */
export function forbidden(message: string, details?: Record<string, unknown>): ApiError {
  return new ApiError(403, MediaBuyingCode.forbidden, message, details ? { details } : {});
}

/** 403 `TOS_ACCEPTANCE_REQUIRED`: the latest Terms of Service must be accepted before any mutation. */
export function termsAcceptanceRequired(version: string): ApiError {
  return new ApiError(
    403,
    MediaBuyingCode.tosAcceptanceRequired,
    `Accept the latest Terms of Service (version ${version}) before making changes.`,
    { details: { termsVersion: version } },
  );
}

/** 403 `ALPHA_OPT_IN_REQUIRED`: an alpha feature the organization has not opted into (through support). */
export function alphaOptInRequired(feature: string): ApiError {
  return new ApiError(
    403,
    MediaBuyingCode.alphaOptInRequired,
    `'${feature}' is an alpha feature; ask support to opt your organization in.`,
    { details: { feature } },
  );
}

/** 404 `NOT_FOUND`: the same answer for an unknown id and one hidden from the caller's scope. */
export function notFound(what: string, id?: string): ApiError {
  return new ApiError(
    404,
    MediaBuyingCode.notFound,
    id === undefined ? `${what} not found.` : `${what} ${id} not found.`,
  );
}

/** 409 `CONFLICT`: a duplicate, an illegal state change or a violated invariant. */
export function conflict(message: string, details?: Record<string, unknown>): ApiError {
  return new ApiError(409, MediaBuyingCode.conflict, message, details ? { details } : {});
}

/**
 * 422 `VALIDATION_ERROR`: values the request schema accepts but the rules refuse (a weak password, a used or
 * expired token), every issue listed like a schema failure.
 */
export function semanticValidation(issues: FieldIssue[], message?: string): ApiError {
  return new ApiError(
    422,
    MediaBuyingCode.validation,
    message ?? `Invalid request: ${issues.map((i) => `${i.field} ${i.message}`).join('; ')}.`,
    { details: { issues } },
  );
}

/** 429 `RATE_LIMITED` with `Retry-After` in seconds. */
export function rateLimited(message: string, retryAfterSeconds: number): ApiError {
  return new ApiError(429, MediaBuyingCode.rateLimited, message, {
    headers: { 'retry-after': String(retryAfterSeconds) },
    details: { retryAfterSeconds },
  });
}

/** Why an invitation link cannot be used any more. */
export type InvitationRefusal = 'invitation_expired' | 'invitation_revoked' | 'invitation_used';

/**
 * 422 `VALIDATION_ERROR` on field `token` (of the body or the query): the invitation link expired, was revoked or
 * was used already (`details.reason`); ask the organization for a new invitation.
 */
export function invitationUnusable(reason: InvitationRefusal, location: 'body' | 'query'): ApiError {
  const why = {
    invitation_expired: 'has expired',
    invitation_revoked: 'was revoked',
    invitation_used: 'was used already',
  }[reason];
  return new ApiError(
    422,
    MediaBuyingCode.validation,
    `This invitation ${why}; ask the organization for a new one.`,
    { details: { reason, issues: [{ location, field: 'token', message: why }] } },
  );
}

/**
 * 401 `UNAUTHORIZED` with `details.reason` `sign_in_required`: the invited email has an account, so its owner signs
 * in (then accepts) instead of creating one.
 */
export function signInRequired(message: string): ApiError {
  return new ApiError(401, MediaBuyingCode.unauthorized, message, {
    details: { reason: 'sign_in_required' },
  });
}

/**
 * 503 `FX_RATE_UNAVAILABLE` (spec "Errors", transient): no `from`/`to` rate is available now to count a buy in another
 * currency against its campaign's budget; retry later.
 */
export function fxRateUnavailable(from: string, to: string): ApiError {
  return new ApiError(
    503,
    MediaBuyingCode.fxRateUnavailable,
    `No ${from}/${to} rate is available now; retry later.`,
    {
      details: { from, to },
    },
  );
}

/** 503 `SERVICE_UNAVAILABLE`: a dependency is down; retry (it does not mean terms need accepting). */
export function serviceUnavailable(message: string): ApiError {
  return new ApiError(503, MediaBuyingCode.serviceUnavailable, message);
}

/**
 * 503 `SIGNUP_EXPERIENCE_STATE_UNAVAILABLE` (spec "Errors"): the routing-intent state of an OAuth or SSO sign-in
 * cannot be stored, or the callback's state is unavailable, expired, malformed or for the wrong flow. Restart sign-in;
 * never rebuild the state. Rendered flat by {@link formatLegacyAuthError}.
 */
export function signupExperienceStateUnavailable(message: string): ApiError {
  return new ApiError(503, MediaBuyingCode.signupExperienceStateUnavailable, message);
}

/**
 * The error format of the four legacy auth endpoints (`GET /auth/url`, `GET /auth/sso/url`, `POST /auth/token`,
 * `POST /auth/sso/callback`): `SIGNUP_EXPERIENCE_STATE_UNAVAILABLE` as the flat body `{error, message, retryable:
 * true}` the spec gives them; every other error in the envelope ({@link formatMediaBuyingError}).
 */
export function formatLegacyAuthError(error: ApiError, request?: unknown): { body: unknown } {
  if (error.code === MediaBuyingCode.signupExperienceStateUnavailable)
    return { body: { error: error.code, message: error.message, retryable: true } };
  return formatMediaBuyingError(error, request);
}

/** 401 `UNAUTHORIZED`: a wrong, used, expired or dead sign-in code, or an unknown email (one answer for all). */
export function invalidSignInCode(): ApiError {
  return new ApiError(401, MediaBuyingCode.unauthorized, 'Invalid or expired code.');
}

/**
 * 400 `BAD_REQUEST` with `details.reason`: a well-formed request the rules refuse with 400 (spec "Text messaging",
 * rule 5: an opted-out recipient, a destination outside the sending limits).
 */
export function badRequest(message: string, details: Record<string, unknown>): ApiError {
  return new ApiError(400, MediaBuyingCode.badRequest, message, { details });
}

/** 401 `UNAUTHORIZED` of the carrier webhooks: the signature is missing, outside its window or wrong (`details.reason`). */
export function carrierSignatureInvalid(reason: string): ApiError {
  return new ApiError(401, MediaBuyingCode.unauthorized, 'The carrier signature is missing or invalid.', {
    details: { reason },
  });
}

/** Why Buyer Setup step 1 is incomplete (spec "Other shapes", buyer-setup error details). */
export type BuyerSetupReason = 'missing_operator_identity' | 'platform_operator_not_allowed';

/**
 * 409 `BUYER_SETUP_REQUIRED`: the Buyer Account's operator identity (Buyer Setup step 1) is missing, or names the
 * platform's own domain (never substituted). `details`: `{reason, readinessCheck: operator_identity, setupStep: 1,
 * setupPage: buyer_setup}`.
 */
export function buyerSetupRequired(reason: BuyerSetupReason): ApiError {
  return new ApiError(
    409,
    MediaBuyingCode.buyerSetupRequired,
    reason === 'missing_operator_identity'
      ? 'Complete Buyer Setup step 1: set the operator identity of your Buyer Account, then retry.'
      : "The operator identity names this platform's own domain; set your own operator domain in Buyer Setup step 1, then retry.",
    { details: { reason, readinessCheck: 'operator_identity', setupStep: 1, setupPage: 'buyer_setup' } },
  );
}

/** 409 `PRICING_NOT_CONFIGURED`: the selected sales agent has no pricing rule. */
export function pricingNotConfigured(salesAgentId: string): ApiError {
  return new ApiError(
    409,
    MediaBuyingCode.pricingNotConfigured,
    `Sales agent ${salesAgentId} has no pricing rule; its seller must configure one.`,
    { details: { salesAgentId } },
  );
}

/** 400 `CURRENCY_MISMATCH`: a budget's currency differs from the agent's or storefront's. */
export function currencyMismatch(budgetCurrency: string, expected: string, field: string): ApiError {
  return new ApiError(
    400,
    MediaBuyingCode.currencyMismatch,
    `The budget is in ${budgetCurrency}, the sales agent and storefront take ${expected}.`,
    { details: { field, budgetCurrency, expectedCurrency: expected } },
  );
}

/**
 * 409 `INSUFFICIENT_MEDIA_BUDGET`: the campaign's `budget.total` cannot cover its media buys; names the requested
 * total and the committed allocation (decimal major units).
 */
export function insufficientMediaBudget(details: {
  campaignId: string;
  currency: string;
  budgetTotal: number;
  committed: number;
  requested: number;
}): ApiError {
  return new ApiError(
    409,
    MediaBuyingCode.insufficientMediaBudget,
    `Campaign ${details.campaignId} has ${details.budgetTotal} ${details.currency}; ${details.committed} is committed and ${details.requested} more was requested.`,
    { details },
  );
}

/** The three denials of the activation sandbox (spec "Activation state"). */
export type SandboxDenial = 'write' | 'foreign_tenancy' | 'spend';

const SANDBOX_DENIALS: Record<SandboxDenial, { code: string; message: string }> = {
  write: {
    code: MediaBuyingCode.unboundFreeWriteProhibited,
    message: 'The activation sandbox allows no mutation here: only the provider binding changes anything.',
  },
  foreign_tenancy: {
    code: MediaBuyingCode.unboundFreeForeignTenancyProhibited,
    message:
      "The activation sandbox reads only its own listed routes: no advertiser's nested routes, no other tenant.",
  },
  spend: {
    code: MediaBuyingCode.unboundFreeSpendProhibited,
    message: 'The activation sandbox has a zero-dollar spend cap: no spend-changing or money-moving request.',
  },
};

/** 403 with one of the sandbox codes (`details.activationState`, `details.routeClass`). */
export function sandboxDenied(denial: SandboxDenial, state: string, routeClass: string): ApiError {
  const { code, message } = SANDBOX_DENIALS[denial];
  return new ApiError(403, code, message, { details: { activationState: state, routeClass } });
}

/** The code of a sandbox denial (for the published contract). */
export function sandboxDenialCode(denial: SandboxDenial): string {
  return SANDBOX_DENIALS[denial].code;
}

/** 401 `UNAUTHORIZED`: an activation assertion that does not verify, expired or was already exchanged (one answer). */
export function activationAssertionInvalid(): ApiError {
  return new ApiError(
    401,
    MediaBuyingCode.unauthorized,
    'The assertion is invalid, expired or already used; register again for a fresh one.',
  );
}
