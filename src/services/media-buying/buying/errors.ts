/**
 * AdCP errors of the buying tools (spec "Errors", "Media-buy change outcomes"; AdCP `core/error.json`): each carries a
 * `recovery`, buyer-actionable ones a `buyer_reason` that agrees with it, and every media-buy error its
 * `details.mutation_outcome` (`not_dispatched` for everything refused before the ad platform was called).
 */
import { ApiError } from '../../../platform/errors.ts';

/** AdCP `recovery`. */
export type Recovery = 'transient' | 'correctable' | 'terminal';

/** An AdCP error object (`core/error.json`, the spec's `adcp_error`): the MCP contract's `RefusalBody`. */
export interface RefusalBody {
  code: string;
  message: string;
  recovery: Recovery;
  field?: string;
  details?: Record<string, unknown>;
  buyer_reason?: { code: string; message: string };
}

/**
 * A refusal of the buying layer in AdCP's shape. The MCP tools raise it as the contract's `AdcpError` (same body);
 * this folder does not depend on the MCP layer.
 */
export class BuyingRefusal extends Error {
  readonly body: RefusalBody;
  constructor(body: RefusalBody) {
    super(body.message);
    this.name = 'BuyingRefusal';
    this.body =
      body.recovery === 'correctable' && !body.buyer_reason
        ? { ...body, buyer_reason: { code: buyerReasonCode(body.code), message: body.message } }
        : body;
  }
}

/** `recovery` of a REST status: 429 and 5xx `transient`, other 4xx `correctable` (the MCP contract's rule). */
function recoveryOfStatus(status: number): Recovery {
  return status === 429 || status >= 500 ? 'transient' : 'correctable';
}

/** Outcome details of a media-buy request (spec "Other shapes", mutation-outcome details). */
export function outcomeDetails(
  outcome: 'unknown' | 'not_dispatched' | 'rolled_back',
  reason: string,
): Record<string, unknown> {
  return {
    mutation_outcome: outcome,
    cleanup_required: outcome === 'unknown',
    retry_safe: outcome === 'not_dispatched',
    reason,
  };
}

/** An error refused before dispatch (`not_dispatched`), with an optional buyer reason whose recovery agrees. */
/** Buyer-reason codes (AdCP `enums/error-code.json`) of this service's own buyer-actionable codes. */
const OWN_BUYER_REASONS: Record<string, string> = {
  CURRENCY_MISMATCH: 'INVALID_REQUEST',
  FX_QUOTE_EXPIRED: 'REQUOTE_REQUIRED',
  CAPABILITY_NOT_SUPPORTED: 'UNSUPPORTED_FEATURE',
  IDEMPOTENCY_CONFLICT: 'IDEMPOTENCY_CONFLICT',
};

/** AdCP error codes a buyer reason may carry as they are. */
const ADCP_CODES = new Set([
  'INVALID_REQUEST',
  'ACCOUNT_NOT_FOUND',
  'ACCOUNT_SETUP_REQUIRED',
  'ACCOUNT_PAYMENT_REQUIRED',
  'BUDGET_TOO_LOW',
  'BUDGET_EXCEEDED',
  'MEDIA_BUY_NOT_FOUND',
  'REFERENCE_NOT_FOUND',
  'PRODUCT_NOT_FOUND',
  'PRODUCT_UNAVAILABLE',
  'UNSUPPORTED_FEATURE',
  'INVALID_PRICING_OPTION',
  'VALIDATION_ERROR',
]);

/**
 * The `buyer_reason.code` of a buyer-actionable (`correctable`) error (spec "Errors": such errors of
 * `create_media_buy`, `update_media_buy` and `sync_creatives` carry a `buyer_reason`): the AdCP code itself, or the
 * AdCP code closest to this service's own, else `INVALID_REQUEST`.
 */
function buyerReasonCode(code: string): string {
  return OWN_BUYER_REASONS[code] ?? (ADCP_CODES.has(code) ? code : 'INVALID_REQUEST');
}

export function refused(body: {
  code: string;
  message: string;
  recovery: Recovery;
  reason: string;
  field?: string;
  details?: Record<string, unknown>;
  buyerReason?: string;
}): BuyingRefusal {
  return new BuyingRefusal({
    code: body.code,
    message: body.message,
    recovery: body.recovery,
    ...(body.field === undefined ? {} : { field: body.field }),
    details: { ...body.details, ...outcomeDetails('not_dispatched', body.reason) },
    ...(body.buyerReason === undefined
      ? {}
      : { buyer_reason: { code: body.buyerReason, message: body.message } }),
  });
}

/** `ACCOUNT_NOT_FOUND` (spec: `correctable`, `details.reason` `account_not_authorized_for_buyer`; use `list_accounts`). */
export function accountNotFound(accountId: string | undefined, field: string): BuyingRefusal {
  return new BuyingRefusal({
    code: 'ACCOUNT_NOT_FOUND',
    message: `Account ${accountId ?? '(natural key)'} is not authorized for this buyer on this storefront; call list_accounts.`,
    recovery: 'correctable',
    field,
    details: {
      reason: 'account_not_authorized_for_buyer',
      ...outcomeDetails('not_dispatched', 'account_not_authorized_for_buyer'),
    },
  });
}

/** Buyer reasons of REST codes that the buyer can act on (AdCP error-code vocabulary). */
const BUYER_REASONS: Record<string, string> = {
  BUYER_SETUP_REQUIRED: 'ACCOUNT_SETUP_REQUIRED',
  INSUFFICIENT_MEDIA_BUDGET: 'BUDGET_EXCEEDED',
  TOS_ACCEPTANCE_REQUIRED: 'PERMISSION_DENIED',
  FORBIDDEN: 'PERMISSION_DENIED',
};

/** Recovery of REST codes whose status alone does not say it (spec "Errors"). */
const RECOVERIES: Record<string, Recovery> = {
  SPEND_DENOMINATION_UNRESOLVED: 'terminal',
  PRICING_NOT_CONFIGURED: 'terminal',
};

/**
 * The AdCP form ({@link BuyingRefusal}) of an error of the REST domain raised by a buying tool: same code and details, `recovery` from its
 * status (or the spec's row), `not_dispatched`, and a buyer reason where the buyer can act. A validation failure on a
 * package's product is `PRODUCT_NOT_FOUND`. Any other error is returned unchanged.
 */
export function asRefusal(error: unknown): unknown {
  if (!(error instanceof ApiError)) return error;
  const issues = error.details?.issues as { field: string; message: string }[] | undefined;
  const { issues: _issues, field: detailField, ...rest } = error.details ?? {};
  const recovery = RECOVERIES[error.code] ?? recoveryOfStatus(error.status);
  const productIssue = issues?.find((i) => /^packages\/\d+\/productId$/.test(i.field));
  const field = issues?.[0]?.field ?? (typeof detailField === 'string' ? detailField : undefined);
  const body: RefusalBody = {
    code: error.code === 'NOT_FOUND' ? 'REFERENCE_NOT_FOUND' : error.code,
    message: error.message,
    recovery,
    ...(field === undefined ? {} : { field: field.replace(/\//g, '.') }),
    // The REST error's own `reason` (e.g. BUYER_SETUP_REQUIRED's) wins over the code-derived one.
    details: {
      ...outcomeDetails('not_dispatched', error.code.toLowerCase()),
      ...rest,
      ...(issues ? { issues } : {}),
    },
  };
  const reason = productIssue ? 'PRODUCT_NOT_FOUND' : BUYER_REASONS[error.code];
  if (reason && recovery === 'correctable') body.buyer_reason = { code: reason, message: error.message };
  return new BuyingRefusal(body);
}
