/**
 * What the read tools of the MCP endpoints share (`read.ts`, `products.ts`): the JSON Schema pieces of their
 * arguments (AdCP version envelope, `context`, `ext`, `pagination`, `account`), the caller's Buyer Account, AdCP
 * offset cursors and `pagination`, and AdCP's product pieces.
 */
import { allows } from '../../credentials/index.ts';
import { AdcpError, type McpToolContext } from '../contract.ts';

/** Largest page of the paged tools (AdCP `pagination.max_results`). */
export const MAX_RESULTS = 100;
export const DEFAULT_RESULTS = 50;

/** The JSON Schema pieces every tool's arguments share (AdCP version envelope, context, ext). */
export const ENVELOPE = {
  adcp_version: { type: 'string', maxLength: 32 },
  adcp_major_version: { type: 'integer', minimum: 1, maximum: 99 },
  context: { type: 'object' },
  ext: { type: 'object' },
} as const;
export const PAGINATION = {
  type: 'object',
  properties: {
    max_results: { type: 'integer', minimum: 1, maximum: MAX_RESULTS },
    cursor: { type: 'string', maxLength: 200 },
  },
} as const;
export const ID_LIST = { type: 'array', items: { type: 'string', maxLength: 64 }, maxItems: 100 } as const;
/** A calendar date (RFC 3339 `full-date`: ajv-formats' full mode checks the days of each month). */
export const DATE = { type: 'string', format: 'date' } as const;
export const ACCOUNT = {
  type: 'object',
  properties: { account_id: { type: 'string', maxLength: 64 } },
} as const;

/** The schema of a tool's arguments: the envelope plus `properties`, unknown AdCP fields allowed (and ignored). */
export function argsSchema(
  properties: Record<string, unknown>,
  required: string[] = [],
): Record<string, unknown> {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: { ...ENVELOPE, ...properties },
    required,
  };
}

/** `context` echoed back (AdCP: responses carry the request's `context` unchanged). */
export function echo(args: Record<string, unknown>): Record<string, unknown> {
  return args.context === undefined ? {} : { context: args.context };
}

/**
 * The Buyer Account of a buyer tool's caller.
 * @throws AdcpError `PERMISSION_DENIED` (`terminal`) for a caller not in a Buyer Account or without buyer read access.
 */
export function buyerOf(ctx: McpToolContext): number {
  const org = ctx.caller.organization;
  if (org?.kind !== 'buyer' || !allows(ctx.caller.access, 'buyer', 'read'))
    throw new AdcpError({
      code: 'PERMISSION_DENIED',
      message: 'This tool needs a credential of a Buyer Account with buyer read access.',
      recovery: 'terminal',
      details: { reason: org ? 'wrong_account_kind' : 'no_organization' },
    });
  return org.id;
}

/**
 * `ACCOUNT_NOT_FOUND` (spec "Errors", MCP; `correctable`, `details.reason: account_not_authorized_for_buyer`): the
 * account `named` is not the Buyer Account's (on a storefront endpoint: not with that storefront).
 */
export function accountNotFound(ctx: McpToolContext, named: string): AdcpError {
  return new AdcpError({
    code: 'ACCOUNT_NOT_FOUND',
    message: ctx.storefront
      ? `No account ${named} of this Buyer Account on this storefront.`
      : `No account ${named} of this Buyer Account.`,
    recovery: 'correctable',
    field: 'account.account_id',
    details: { reason: 'account_not_authorized_for_buyer' },
  });
}

/** An offset cursor (`o:<n>`) of the simple paged tools, or of a discovery (`<dsc_id>:<n>`). */
export function decodeCursor(cursor: unknown): { scope: string; offset: number } | null {
  if (typeof cursor !== 'string') return null;
  const m = /^([a-z0-9_~]{1,100}):(\d{1,6})$/.exec(cursor);
  if (!m)
    throw new AdcpError({
      code: 'VALIDATION_ERROR',
      message: 'pagination.cursor is not a cursor this agent issued.',
      recovery: 'correctable',
      field: 'pagination.cursor',
    });
  return { scope: m[1]!, offset: Number(m[2]) };
}

/** `max_results` and the offset of a page request. */
export function pageOf(args: Record<string, unknown>, scope: string): { take: number; skip: number } {
  const p = (args.pagination ?? {}) as { max_results?: number; cursor?: string };
  const cursor = decodeCursor(p.cursor);
  if (cursor && cursor.scope !== scope)
    throw new AdcpError({
      code: 'VALIDATION_ERROR',
      message: 'pagination.cursor belongs to another listing.',
      recovery: 'correctable',
      field: 'pagination.cursor',
    });
  return { take: p.max_results ?? DEFAULT_RESULTS, skip: cursor?.offset ?? 0 };
}

/** The AdCP pagination answer of a page. */
export function pagination(scope: string, skip: number, returned: number, total: number) {
  const hasMore = skip + returned < total;
  return {
    has_more: hasMore,
    total_count: total,
    ...(hasMore ? { cursor: `${scope}:${skip + returned}` } : {}),
  };
}

/** AdCP `pricing_options[]` of a product's options, priced by the discovery's quotes when given. */
export function pricingOptionsOf(
  options: {
    pricingOptionId: string;
    pricingModel: string;
    currency: string;
    fixedPrice?: number;
    floorPrice?: number;
    minSpendPerPackage?: number;
  }[],
) {
  return options.map((o) => ({
    pricing_option_id: o.pricingOptionId,
    pricing_model: o.pricingModel,
    currency: o.currency,
    ...(o.fixedPrice !== undefined ? { fixed_price: o.fixedPrice } : {}),
    ...(o.floorPrice !== undefined ? { floor_price: o.floorPrice } : {}),
    ...(o.minSpendPerPackage !== undefined ? { min_spend_per_package: o.minSpendPerPackage } : {}),
  }));
}

/** What the service reports on delivery (AdCP `reporting_capabilities`): daily, UTC, ended days, pulled. */
export const REPORTING_CAPABILITIES = {
  available_reporting_frequencies: ['daily'],
  expected_delay_minutes: 60,
  timezone: 'UTC',
  supports_webhooks: false,
  available_metrics: ['impressions', 'clicks', 'spend'],
  date_range_support: 'date_range',
};
