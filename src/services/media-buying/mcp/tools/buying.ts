/**
 * The mutating buying tools of the MCP endpoints (spec "MCP", "Errors", "Media-buy change outcomes"; AdCP 3.x
 * `media-buy/create-media-buy-*`, `media-buy/update-media-buy-*`, `creative/sync-creatives-*`): `create_media_buy`,
 * `update_media_buy` and `sync_creatives`, on the buyer endpoint (`/mcp/v3`, fanning out per storefront "source") and
 * on each storefront endpoint (that storefront only). Each runs under its `idempotency_key` ({@link McpIdempotency}).
 *
 * Mapping to the records of part 2: `account.account_id` is an account link (`acc_`), or the natural key `brand` +
 * `operator` with `brand.brand_id` = the advertiser's id (`adv_...`) and `operator` = the Buyer Account's operator
 * domain; the funding campaign is `ext.campaign_id` (default: the advertiser's newest active campaign); a package's
 * `ext.quote_id` names the discovery quote its price came from (`FX_QUOTE_EXPIRED` once its UTC day is over).
 */
import type { Tx } from '../../../../platform/database.ts';
import {
  asRefusal,
  BuyingRefusal,
  type CreativeDesk,
  type MediaBuyDesk,
  type NewMediaBuy,
  refused,
} from '../../buying/index.ts';
import { type Acting, type Catalog, CURRENCIES, fromMinor } from '../../catalog/index.ts';
import { allows, type Caller } from '../../credentials/index.ts';
import { sandboxDenied, termsAcceptanceRequired } from '../../media-buying-errors.ts';
import { AdcpError, type AdcpErrorBody, type McpTool, type McpToolContext } from '../contract.ts';
import type { McpIdempotency, OpenedKey } from '../idempotency.ts';

/** What the buying tools need. */
export interface BuyingToolDeps {
  catalog: Catalog;
  desk: MediaBuyDesk;
  creatives: CreativeDesk;
  idempotency: McpIdempotency;
}

/** AdCP `idempotency_key`: 16-255 characters of `[A-Za-z0-9_.:-]`. */
export const IDEMPOTENCY_KEY = { type: 'string', pattern: '^[A-Za-z0-9_.:-]{16,255}$' } as const;

const ID = { type: 'string', minLength: 1, maxLength: 64 } as const;
const INSTANT = { type: 'string', format: 'date-time', maxLength: 40 } as const;
const MONEY = { type: 'number', minimum: 0, maximum: 100_000_000_000 } as const;
const CURRENCY = { type: 'string', enum: CURRENCIES } as const;
const VERSION = {
  adcp_version: { type: 'string', maxLength: 16 },
  adcp_major_version: { type: 'integer', minimum: 1, maximum: 99 },
} as const;

/** AdCP `account-ref`: an account id, or the natural key (brand + operator). */
export const ACCOUNT_REF = {
  oneOf: [
    { type: 'object', required: ['account_id'], properties: { account_id: ID } },
    {
      type: 'object',
      required: ['brand', 'operator'],
      properties: {
        brand: {
          type: 'object',
          required: ['domain'],
          properties: { domain: { type: 'string', maxLength: 253 }, brand_id: ID },
        },
        operator: { type: 'string', maxLength: 253 },
      },
    },
  ],
} as const;

/** Who acts, for the records (the audit log's actor and the tenancy). */
export function actingOf(caller: Caller): Acting {
  return { userId: caller.user?.id ?? null, kind: caller.kind, organizationId: caller.organization!.id };
}

/**
 * The rules every mutating buying tool applies to its caller: the activation sandbox is refused
 * (`UNBOUND_FREE_SPEND_PROHIBITED` for spend, else `UNBOUND_FREE_WRITE_PROHIBITED`), the caller must have buyer write
 * access in a Buyer Account (`PERMISSION_DENIED`), accepted terms (`TOS_ACCEPTANCE_REQUIRED`) and Buyer Setup step 1
 * (`BUYER_SETUP_REQUIRED`). The operator identity of Buyer Setup is read with the call's `idempotency_key` in one
 * statement ({@link McpIdempotency.open}): a replay is that statement alone.
 * @returns who acts, and the call's key to run the tool under.
 * @throws AdcpError.
 */
export async function requireBuyerWriter(
  ctx: McpToolContext,
  deps: { catalog: Catalog; idempotency: McpIdempotency },
  spend: boolean,
  tool: string,
  args: Record<string, unknown>,
): Promise<{ acting: Acting; key: OpenedKey }> {
  const { caller } = ctx;
  if (caller.sandbox)
    throw toAdcp(sandboxDenied(spend ? 'spend' : 'write', caller.sandbox.state, 'mcp_tool'));
  if (caller.organization?.kind !== 'buyer' || !allows(caller.access, 'buyer', 'write'))
    throw new AdcpError({
      code: 'PERMISSION_DENIED',
      message: 'This credential cannot buy: it needs write access to a Buyer Account.',
      recovery: 'terminal',
    });
  if (caller.outstandingTerms !== null) throw toAdcp(termsAcceptanceRequired(caller.outstandingTerms));
  const key = await deps.idempotency.open(ctx, tool, args, caller.organization.id);
  try {
    deps.catalog.checkBuyerSetup(key.operatorDomain);
  } catch (e) {
    throw toAdcp(e);
  }
  return { acting: actingOf(caller), key };
}

/** The contract's AdcpError of a buying refusal or a REST error (with buyer reasons); anything else unchanged. */
export function toAdcp(error: unknown): unknown {
  const refusal = asRefusal(error);
  return refusal instanceof BuyingRefusal ? new AdcpError(refusal.body) : refusal;
}

/** Runs a handler body, turning buying refusals and REST errors into AdCP errors. */
export async function adcp<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw toAdcp(e);
  }
}

interface PackageArgs {
  product_id: string;
  pricing_option_id: string;
  budget: number;
  impressions?: number;
  targeting_overlay?: Record<string, unknown>;
  ext?: { quote_id?: string };
}

interface CreateArgs {
  account: { account_id?: string; brand?: { domain: string; brand_id?: string }; operator?: string };
  name?: string;
  start_time: string;
  end_time: string;
  total_budget?: { amount: number; currency: string };
  packages: PackageArgs[];
  ext?: { campaign_id?: string };
}

/** One per-source failure of the buyer endpoint (spec "Errors", `details.per_source[]`). */
interface SourceFailure {
  source_id: string;
  status: 'failed';
  error: { code: string; message: string };
  recovery: AdcpErrorBody['recovery'];
  buyer_reason?: AdcpErrorBody['buyer_reason'];
  body: AdcpErrorBody;
}

/** The error of a buyer-endpoint create whose every source failed (one source: its own error, with `per_source`). */
function allSourcesFailed(failures: SourceFailure[]): AdcpError {
  const perSource = failures.map(({ body: _b, ...f }) => f);
  if (failures.length === 1) {
    const body = failures[0]!.body;
    return new AdcpError({ ...body, details: { ...body.details, per_source: perSource } });
  }
  const recoveries = new Set(failures.map((f) => f.recovery));
  const outcomes = failures.map((f) => f.body.details?.mutation_outcome);
  const outcome = outcomes.includes('unknown')
    ? 'unknown'
    : outcomes.includes('rolled_back')
      ? 'rolled_back'
      : 'not_dispatched';
  const codes = new Set(failures.map((f) => f.error.code));
  return new AdcpError({
    code: codes.size === 1 ? failures[0]!.error.code : 'INVALID_REQUEST',
    message: `Every storefront refused the media buy: ${failures.map((f) => `${f.source_id}: ${f.error.message}`).join(' | ')}`,
    recovery:
      recoveries.size === 1
        ? failures[0]!.recovery
        : recoveries.has('correctable')
          ? 'correctable'
          : 'terminal',
    details: {
      reason: 'all_sources_failed',
      per_source: perSource,
      mutation_outcome: outcome,
      cleanup_required: outcome === 'unknown',
      retry_safe: outcome === 'not_dispatched',
    },
  });
}

/** The AdCP `account` of a response. */
function accountView(account: {
  publicId: string;
  name: string;
  status: string;
  currency: string;
  operator: string;
}) {
  return {
    account_id: account.publicId,
    name: account.name,
    status: account.status,
    currency: account.currency,
    operator: account.operator,
  };
}

/** The buying tools (module comment). */
export function createBuyingTools(deps: BuyingToolDeps): McpTool[] {
  const { desk } = deps;

  const createOne = async (
    tx: Tx,
    acting: Acting,
    storefront: { id: number; publicId: string },
    args: CreateArgs,
    pkgs: PackageArgs[],
  ) => {
    const input: NewMediaBuy = {
      account: args.account.account_id
        ? { accountId: args.account.account_id }
        : { brandId: args.account.brand?.brand_id, operator: args.account.operator ?? '' },
      ...(args.ext?.campaign_id === undefined ? {} : { campaignId: args.ext.campaign_id }),
      ...(args.name === undefined ? {} : { name: args.name }),
      startTime: args.start_time === 'asap' ? null : new Date(args.start_time),
      endTime: new Date(args.end_time),
      ...(args.total_budget ? { currency: args.total_budget.currency } : {}),
      packages: pkgs.map((p) => ({
        productId: p.product_id,
        pricingOptionId: p.pricing_option_id,
        budget: p.budget,
        ...(p.impressions === undefined ? {} : { impressions: p.impressions }),
        ...(p.targeting_overlay ? { targeting: p.targeting_overlay } : {}),
        ...(p.ext?.quote_id ? { quoteId: p.ext.quote_id } : {}),
      })),
    };
    const { buy, packages: rows, account } = await desk.create(tx, acting, storefront, input);
    return {
      status: 'completed',
      media_buy_id: buy.publicId,
      name: buy.name,
      account: accountView(account),
      media_buy_status: buy.status,
      confirmed_at: buy.confirmedAt ? buy.confirmedAt.toISOString() : null,
      revision: buy.revision,
      currency: buy.currency,
      total_budget: fromMinor(buy.totalBudgetMinor, buy.currency),
      packages: rows.map((row, i) => ({
        package_id: row.publicId,
        product_id: pkgs[i]!.product_id,
        pricing_option_id: row.pricingOptionId,
        budget: fromMinor(row.budgetMinor, buy.currency),
        ...(row.impressions === null ? {} : { impressions: row.impressions }),
        start_time: buy.startTime.toISOString(),
        end_time: buy.endTime.toISOString(),
        paused: row.paused,
        canceled: row.canceled,
      })),
    };
  };

  type Sources = Map<string, { storefront: { id: number; publicId: string }; pkgs: PackageArgs[] }>;

  /**
   * The packages grouped by the storefront of their product (the sources; on a storefront endpoint, only its own).
   * @throws BuyingRefusal `PRODUCT_NOT_FOUND`.
   */
  const groupBySource = async (tx: Tx, ctx: McpToolContext, packages: PackageArgs[]): Promise<Sources> => {
    // Group the packages by the storefront of their product (the sources).
    const groups = new Map<string, { storefront: { id: number; publicId: string }; pkgs: PackageArgs[] }>();
    for (const [i, p] of packages.entries()) {
      const sf = await desk.storefrontOfProducts(tx, [p.product_id]);
      if (!sf || (ctx.storefront && sf.id !== ctx.storefront.id))
        throw refused({
          code: 'PRODUCT_NOT_FOUND',
          message: `Product ${p.product_id} is not available${ctx.storefront ? ' on this storefront' : ''}.`,
          recovery: 'correctable',
          reason: 'product_not_found',
          field: `packages[${i}].product_id`,
          buyerReason: 'PRODUCT_NOT_FOUND',
        });
      const group = groups.get(sf.publicId) ?? { storefront: sf, pkgs: [] };
      group.pkgs.push(p);
      groups.set(sf.publicId, group);
    }
    return groups;
  };

  /** The buyer endpoint's create: one buy per source, failures in `per_source` (all failed: the combined error). */
  const fanOut = async (tx: Tx, acting: Acting, args: CreateArgs, groups: Sources) => {
    const created: Record<string, unknown>[] = [];
    const failures: SourceFailure[] = [];
    for (const [sourceId, group] of groups) {
      try {
        created.push(await adcp(() => createOne(tx, acting, group.storefront, args, group.pkgs)));
      } catch (thrown) {
        const e = toAdcp(thrown);
        if (!(e instanceof AdcpError)) throw e;
        failures.push({
          source_id: sourceId,
          status: 'failed',
          error: { code: e.body.code, message: e.body.message },
          recovery: e.body.recovery,
          ...(e.body.buyer_reason ? { buyer_reason: e.body.buyer_reason } : {}),
          body: e.body,
        });
      }
    }
    if (created.length === 0) throw allSourcesFailed(failures);
    const [first] = created;
    if (created.length === 1 && failures.length === 0) return first!;
    return {
      ...first!,
      ext: {
        media_buys: created.map((c) => ({
          media_buy_id: c.media_buy_id,
          media_buy_status: c.media_buy_status,
        })),
        per_source: failures.map(({ body: _b, ...f }) => f),
      },
    };
  };

  const create: McpTool = {
    name: 'create_media_buy',
    description:
      'Create a media buy from packages of products (AdCP create_media_buy). On the buyer endpoint the packages may span storefronts: one buy per storefront, each a source of details.per_source[].',
    audiences: ['buyer', 'storefront'],
    mutating: true,
    inputSchema: {
      type: 'object',
      required: ['idempotency_key', 'account', 'brand', 'start_time', 'end_time', 'packages'],
      properties: {
        ...VERSION,
        idempotency_key: IDEMPOTENCY_KEY,
        account: ACCOUNT_REF,
        brand: {
          type: 'object',
          required: ['domain'],
          properties: { domain: { type: 'string', maxLength: 253 }, brand_id: ID },
        },
        name: { type: 'string', minLength: 1, maxLength: 255 },
        start_time: { anyOf: [{ const: 'asap' }, INSTANT] },
        end_time: INSTANT,
        total_budget: {
          type: 'object',
          required: ['amount', 'currency'],
          properties: { amount: MONEY, currency: CURRENCY },
        },
        packages: {
          type: 'array',
          minItems: 1,
          maxItems: 50,
          items: {
            type: 'object',
            required: ['product_id', 'pricing_option_id', 'budget'],
            properties: {
              product_id: ID,
              pricing_option_id: { type: 'string', minLength: 1, maxLength: 128 },
              budget: MONEY,
              impressions: { type: 'integer', minimum: 0, maximum: 1_000_000_000_000 },
              targeting_overlay: { type: 'object', maxProperties: 50 },
              ext: { type: 'object', properties: { quote_id: ID } },
            },
          },
        },
        ext: { type: 'object', properties: { campaign_id: ID } },
      },
    },
    async handler(ctx, raw) {
      const args = raw as unknown as CreateArgs;
      const { acting, key } = await requireBuyerWriter(ctx, deps, true, 'create_media_buy', raw);
      return key.run((tx) =>
        adcp(async () => {
          // total_budget is the whole request's: checked once over every package, before the split per source.
          if (args.total_budget) {
            const sum = args.packages.reduce((t, p) => t + p.budget, 0);
            if (Math.abs(sum - args.total_budget.amount) > 1e-6)
              throw refused({
                code: 'INVALID_REQUEST',
                message: 'total_budget.amount must equal the sum of the package budgets.',
                recovery: 'correctable',
                reason: 'total_budget_mismatch',
                field: 'total_budget.amount',
              });
          }
          const groups = await groupBySource(tx, ctx, args.packages);
          if (ctx.storefront) {
            const [group] = groups.values();
            return adcp(() => createOne(tx, acting, group!.storefront, args, group!.pkgs));
          }
          return fanOut(tx, acting, args, groups);
        }),
      );
    },
  };

  const update: McpTool = {
    name: 'update_media_buy',
    description:
      'Change a media buy (AdCP update_media_buy): pause, resume, cancel, flight, total budget. Operations the sales agent does not declare are refused upfront (CAPABILITY_NOT_SUPPORTED).',
    audiences: ['buyer', 'storefront'],
    mutating: true,
    inputSchema: {
      type: 'object',
      required: ['idempotency_key', 'account', 'media_buy_id'],
      properties: {
        ...VERSION,
        idempotency_key: IDEMPOTENCY_KEY,
        account: ACCOUNT_REF,
        media_buy_id: ID,
        paused: { type: 'boolean' },
        canceled: { type: 'boolean' },
        start_time: { anyOf: [{ const: 'asap' }, INSTANT] },
        end_time: INSTANT,
        total_budget: {
          type: 'object',
          required: ['amount', 'currency'],
          properties: { amount: MONEY, currency: CURRENCY },
        },
      },
    },
    async handler(ctx, raw) {
      const { acting, key } = await requireBuyerWriter(ctx, deps, true, 'update_media_buy', raw);
      const args = raw as {
        account: { account_id?: string };
        media_buy_id: string;
        paused?: boolean;
        canceled?: boolean;
        start_time?: string;
        end_time?: string;
        total_budget?: { amount: number; currency: string };
      };
      for (const field of ['packages', 'new_packages', 'budget_allocation', 'bidding', 'pacing'])
        if (raw[field] !== undefined)
          throw toAdcp(
            refused({
              code: 'UNSUPPORTED_FEATURE',
              message: `${field} cannot be changed here; change the buy's total_budget, flight or state.`,
              recovery: 'correctable',
              reason: 'field_not_supported',
              field,
            }),
          );
      return key.run((tx) =>
        adcp(async () => {
          const { buy, currency } = await desk.update(tx, acting, ctx.storefront?.id ?? null, {
            mediaBuyId: args.media_buy_id,
            ...(args.account.account_id ? { accountId: args.account.account_id } : {}),
            ...(args.paused === undefined ? {} : { paused: args.paused }),
            ...(args.canceled === undefined ? {} : { canceled: args.canceled }),
            ...(args.start_time
              ? { startTime: args.start_time === 'asap' ? new Date(0) : new Date(args.start_time) }
              : {}),
            ...(args.end_time ? { endTime: new Date(args.end_time) } : {}),
            ...(args.total_budget ? { totalBudget: args.total_budget } : {}),
          });
          return {
            status: 'completed',
            media_buy_id: buy.publicId,
            media_buy_status: buy.status,
            revision: buy.revision,
            currency,
            total_budget: fromMinor(buy.totalBudgetMinor, currency),
          };
        }),
      );
    },
  };

  const syncCreatives: McpTool = {
    name: 'sync_creatives',
    description:
      "Sync creatives to the account's storefront (AdCP sync_creatives): per-creative results, failed ones with errors[] (MANAGED_ACCOUNT_LINKAGE_REQUIRED, destination_*, X_PLATFORM_CREATIVE_*).",
    audiences: ['buyer', 'storefront'],
    mutating: true,
    inputSchema: {
      type: 'object',
      required: ['idempotency_key', 'account', 'creatives'],
      properties: {
        ...VERSION,
        idempotency_key: IDEMPOTENCY_KEY,
        account: ACCOUNT_REF,
        delete_missing: { type: 'boolean' },
        creatives: {
          type: 'array',
          minItems: 1,
          maxItems: 100,
          items: {
            type: 'object',
            required: ['creative_id', 'name', 'format_id', 'assets'],
            properties: {
              creative_id: { type: 'string', minLength: 1, maxLength: 255 },
              name: { type: 'string', minLength: 1, maxLength: 255 },
              format_id: {
                type: 'object',
                required: ['agent_url', 'id'],
                properties: {
                  agent_url: { type: 'string', format: 'uri', maxLength: 2048 },
                  id: { type: 'string', minLength: 1, maxLength: 128 },
                },
              },
              assets: { type: 'object', maxProperties: 50 },
            },
          },
        },
      },
    },
    async handler(ctx, raw) {
      const { acting, key } = await requireBuyerWriter(ctx, deps, false, 'sync_creatives', raw);
      const args = raw as {
        account: { account_id?: string; brand?: { brand_id?: string } };
        delete_missing?: boolean;
        creatives: {
          creative_id: string;
          name: string;
          format_id: { agent_url: string; id: string };
          assets: Record<string, unknown>;
        }[];
      };
      const ids = new Set<string>();
      for (const [i, c] of args.creatives.entries()) {
        if (ids.has(c.creative_id))
          throw new AdcpError({
            code: 'INVALID_REQUEST',
            message: `creative_id ${c.creative_id} appears twice.`,
            recovery: 'correctable',
            field: `creatives[${i}].creative_id`,
          });
        ids.add(c.creative_id);
      }
      return key.run((tx) =>
        adcp(async () => ({
          status: 'completed',
          creatives: await deps.creatives.sync(tx, acting, {
            storefrontId: ctx.storefront?.id ?? null,
            account: args.account.account_id
              ? { accountId: args.account.account_id }
              : { brandId: args.account.brand?.brand_id },
            deleteMissing: args.delete_missing ?? false,
            creatives: args.creatives.map((c) => ({
              creativeId: c.creative_id,
              name: c.name,
              formatId: { agentUrl: c.format_id.agent_url, id: c.format_id.id },
              assets: c.assets,
            })),
          }),
        })),
      );
    },
  };

  return [create, update, syncCreatives];
}
