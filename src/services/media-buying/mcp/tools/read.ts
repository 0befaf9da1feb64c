/**
 * The read tools of the buyer (`/mcp/v3`) and storefront (`/mcp/v3/storefronts/{sf_id}`) MCP endpoints (spec "MCP";
 * AdCP 3.x media-buy seller protocol), over part 2's records:
 *
 * - `get_adcp_capabilities`: protocols, AdCP versions, idempotency, and the seller's declared features (pricing models
 *   of its active products, its sales agents' `update_media_buy` capabilities) of the storefront, or of every active
 *   storefront on the buyer endpoint.
 * - `get_products`: part 2's Discovery in AdCP's product shape (`products.ts`).
 * - `list_creative_formats`: the formats the storefront's (or every active storefront's) active products accept.
 * - `list_creatives`, `get_media_buys`, `get_media_buy_delivery`: the Buyer Account's creatives, media buys (on a
 *   storefront endpoint, those placed with that storefront) and their delivery (part 2's daily metrics, which move as
 *   the delivery job reports ended UTC days on the clock).
 *
 * Buyer tools need a Buyer Account caller with buyer read access (`PERMISSION_DENIED` otherwise). A tool's
 * `account.account_id` (an advertiser `adv_…` or an account link `acc_…` of the Buyer Account; on a storefront
 * endpoint a link with that storefront) narrows it to that advertiser; any other is `ACCOUNT_NOT_FOUND`.
 */
import { and, asc, eq, gte, inArray, lte, sql } from 'drizzle-orm';
import type { Clock } from '../../../../platform/clock.ts';
import type { Db } from '../../../../platform/database.ts';
import { fromMinor } from '../../catalog/index.ts';
import {
  advertiserAccounts,
  advertisers,
  creatives,
  deliveryMetrics,
  mediaBuys,
  organizations,
  packages,
  products,
  salesAgents,
  storefronts,
} from '../../db/schema.ts';
import { AdcpError, type McpTool, type McpToolContext } from '../contract.ts';
import { SUPPORTED_ADCP_MAJORS, SUPPORTED_ADCP_VERSIONS } from '../versions.ts';
import { getProductsTool, type ProductsToolDeps } from './products.ts';
import {
  ACCOUNT,
  accountNotFound,
  argsSchema,
  buyerOf,
  DATE,
  echo,
  ID_LIST,
  PAGINATION,
  pageOf,
  pagination,
} from './shared.ts';

/** What the read tools read through. */
export interface ReadToolDeps extends ProductsToolDeps {
  db: Db;
  clock: Clock;
}

/**
 * How long a mutating tool's `idempotency_key` replays its first answer (capabilities `adcp.idempotency`): the
 * buying tools' idempotency layer must keep keys at least this long.
 */
export const IDEMPOTENCY_REPLAY_TTL_SECONDS = 86_400;

/** The read tools (module comment). */
export function readTools(deps: ReadToolDeps): McpTool[] {
  const { db } = deps;

  /** The active storefronts a call covers: the endpoint's, or every active one (buyer endpoint). */
  const storefrontsOf = (ctx: McpToolContext) =>
    db
      .select({
        id: storefronts.id,
        publicId: storefronts.publicId,
        name: storefronts.name,
        currency: storefronts.currency,
      })
      .from(storefronts)
      .where(ctx.storefront ? eq(storefronts.id, ctx.storefront.id) : eq(storefronts.status, 'active'))
      .orderBy(asc(storefronts.id));

  /**
   * The advertiser of the account a call names in `account.account_id` (spec "Errors", `ACCOUNT_NOT_FOUND` (MCP):
   * the supplied account must be authorized for the buyer on that storefront): an advertiser (`adv_…`) of the Buyer
   * Account, or an account link (`acc_…`) of the Buyer Account, on a storefront endpoint one with that storefront.
   * @returns the advertiser (row id and public id), or null when the call names no account.
   * @throws AdcpError `ACCOUNT_NOT_FOUND` (`correctable`, `details.reason: account_not_authorized_for_buyer`).
   */
  const accountOf = async (
    ctx: McpToolContext,
    organizationId: number,
    args: Record<string, unknown>,
  ): Promise<{ id: number; publicId: string } | null> => {
    const named = (args.account as { account_id?: string } | undefined)?.account_id;
    if (named === undefined) return null;
    const [row] = named.startsWith('adv_')
      ? await db
          .select({ id: advertisers.id, publicId: advertisers.publicId })
          .from(advertisers)
          .where(and(eq(advertisers.publicId, named), eq(advertisers.organizationId, organizationId)))
      : await db
          .select({ id: advertisers.id, publicId: advertisers.publicId })
          .from(advertiserAccounts)
          .innerJoin(advertisers, eq(advertisers.id, advertiserAccounts.advertiserId))
          .where(
            and(
              eq(advertiserAccounts.publicId, named),
              eq(advertiserAccounts.organizationId, organizationId),
              ctx.storefront ? eq(advertiserAccounts.storefrontId, ctx.storefront.id) : undefined,
            ),
          );
    if (!row) throw accountNotFound(ctx, named);
    return row;
  };

  const getAdcpCapabilities: McpTool = {
    name: 'get_adcp_capabilities',
    description:
      "The AdCP protocols, versions and features this agent supports; on a storefront endpoint, the seller's declared features.",
    audiences: ['buyer', 'storefront'],
    inputSchema: argsSchema({
      protocols: { type: 'array', items: { type: 'string', maxLength: 64 }, maxItems: 20 },
    }),
    mutating: false,
    async handler(ctx, args) {
      const covered = await storefrontsOf(ctx);
      const ids = covered.map((s) => s.id);
      const models =
        ids.length === 0
          ? []
          : await db
              .selectDistinct({ model: sql<string>`o->>'pricingModel'` })
              .from(products)
              .innerJoin(sql`jsonb_array_elements(${products.pricingOptions}) o`, sql`true`)
              .where(and(inArray(products.storefrontId, ids), eq(products.status, 'active')));
      const agents =
        ids.length === 0
          ? []
          : await db
              .select({
                id: salesAgents.publicId,
                storefrontId: storefronts.publicId,
                name: salesAgents.name,
                capabilities: salesAgents.capabilities,
                currency: salesAgents.currency,
              })
              .from(salesAgents)
              .innerJoin(storefronts, eq(storefronts.id, salesAgents.storefrontId))
              .where(inArray(salesAgents.storefrontId, ids))
              .orderBy(asc(salesAgents.id));
      const controls = agents.some((a) => a.capabilities.length > 0);
      return {
        adcp: {
          major_versions: [...SUPPORTED_ADCP_MAJORS],
          supported_versions: [...SUPPORTED_ADCP_VERSIONS],
          idempotency: { supported: true, replay_ttl_seconds: IDEMPOTENCY_REPLAY_TTL_SECONDS },
        },
        supported_protocols: ['media_buy'],
        // get_products answers wholesale_feed_version and honours if_wholesale_feed_version (products.ts).
        wholesale_feed_versioning: { supported: true, pricing_version_separate: false },
        media_buy: {
          ...(models.length > 0 ? { supported_pricing_models: models.map((m) => m.model).sort() } : {}),
          // get_products: brief (every available product is the curated answer), wholesale, refine (products.ts).
          buying_modes: ['brief', 'wholesale', 'refine'],
          lifecycle_tools: ['list_products', 'buy_products', ...(controls ? ['control_media_buy'] : [])],
        },
        ext: {
          storefronts: covered.map((s) => ({
            storefront_id: s.publicId,
            name: s.name,
            currency: s.currency,
          })),
          sales_agents: agents.map((a) => ({
            sales_agent_id: a.id,
            storefront_id: a.storefrontId,
            name: a.name,
            currency: a.currency,
            update_media_buy_capabilities: a.capabilities,
          })),
        },
        ...echo(args),
      };
    },
  };

  const listCreativeFormats: McpTool = {
    name: 'list_creative_formats',
    description:
      "The creative formats the storefront's (or every active storefront's) active products accept.",
    audiences: ['buyer', 'storefront'],
    inputSchema: argsSchema({ pagination: PAGINATION }),
    mutating: false,
    async handler(ctx, args) {
      const covered = await storefrontsOf(ctx);
      const ids = covered.map((s) => s.id);
      const rows =
        ids.length === 0
          ? []
          : await db
              .selectDistinct({ agentUrl: sql<string>`f->>'agentUrl'`, id: sql<string>`f->>'id'` })
              .from(products)
              .innerJoin(sql`jsonb_array_elements(${products.formatIds}) f`, sql`true`)
              .where(and(inArray(products.storefrontId, ids), eq(products.status, 'active')));
      rows.sort((a, b) => a.agentUrl.localeCompare(b.agentUrl) || a.id.localeCompare(b.id));
      const { take, skip } = pageOf(args, 'fmt');
      const slice = rows.slice(skip, skip + take);
      return {
        formats: slice.map((f) => ({ format_id: { agent_url: f.agentUrl, id: f.id }, name: f.id })),
        pagination: pagination('fmt', skip, slice.length, rows.length),
        ...echo(args),
      };
    },
  };

  const listCreatives: McpTool = {
    name: 'list_creatives',
    description: "The Buyer Account's creatives, in creation order.",
    audiences: ['buyer', 'storefront'],
    inputSchema: argsSchema({ pagination: PAGINATION, account: ACCOUNT }),
    mutating: false,
    async handler(ctx, args) {
      const organizationId = buyerOf(ctx);
      const account = await accountOf(ctx, organizationId, args);
      const { take, skip } = pageOf(args, 'cr');
      const mine = and(
        eq(creatives.organizationId, organizationId),
        account ? eq(creatives.advertiserId, account.id) : undefined,
      );
      const rows = await db
        .select({ row: creatives, total: sql<number>`count(*) over ()`.mapWith(Number) })
        .from(creatives)
        .where(mine)
        .orderBy(asc(creatives.id))
        .limit(take)
        .offset(skip);
      const total = rows[0]?.total ?? (await db.$count(creatives, mine));
      return {
        query_summary: { total_matching: total, returned: rows.length },
        pagination: pagination('cr', skip, rows.length, total),
        creatives: rows.map(({ row }) => ({
          creative_id: row.publicId,
          name: row.name,
          format_id: { agent_url: row.formatId.agentUrl, id: row.formatId.id },
          status: row.status,
          created_date: row.createdAt.toISOString(),
          updated_date: row.updatedAt.toISOString(),
        })),
        ...echo(args),
      };
    },
  };

  /**
   * The buyer's media buys a call covers (the endpoint's storefront; the account named, {@link accountOf}; the ids
   * asked for), in creation order.
   * @throws AdcpError `ACCOUNT_NOT_FOUND` for an account not of the buyer (on that storefront).
   */
  const buysOf = async (ctx: McpToolContext, organizationId: number, args: Record<string, unknown>) => {
    const account = await accountOf(ctx, organizationId, args);
    const ids = args.media_buy_ids as string[] | undefined;
    return db
      .select({ buy: mediaBuys, seller: organizations.publicId })
      .from(mediaBuys)
      .innerJoin(organizations, eq(organizations.id, mediaBuys.sellerOrganizationId))
      .where(
        and(
          eq(mediaBuys.organizationId, organizationId),
          account ? eq(mediaBuys.advertiserId, account.id) : undefined,
          ctx.storefront ? eq(mediaBuys.storefrontId, ctx.storefront.id) : undefined,
          ids ? inArray(mediaBuys.publicId, ids) : undefined,
        ),
      )
      .orderBy(asc(mediaBuys.id));
  };

  const getMediaBuys: McpTool = {
    name: 'get_media_buys',
    description:
      "The Buyer Account's media buys (on a storefront endpoint, those placed with it) and their packages.",
    audiences: ['buyer', 'storefront'],
    inputSchema: argsSchema({ media_buy_ids: ID_LIST, pagination: PAGINATION, account: ACCOUNT }),
    mutating: false,
    async handler(ctx, args) {
      const organizationId = buyerOf(ctx);
      const { take, skip } = pageOf(args, 'mb');
      const all = await buysOf(ctx, organizationId, args);
      const slice = all.slice(skip, skip + take);
      const pkgs =
        slice.length === 0
          ? []
          : await db
              .select({ pkg: packages, productId: products.publicId })
              .from(packages)
              .innerJoin(products, eq(products.id, packages.productId))
              .where(
                inArray(
                  packages.mediaBuyId,
                  slice.map((s) => s.buy.id),
                ),
              )
              .orderBy(asc(packages.id));
      return {
        media_buys: slice.map(({ buy }) => ({
          media_buy_id: buy.publicId,
          name: buy.name,
          status: buy.status,
          currency: buy.currency,
          total_budget: fromMinor(buy.totalBudgetMinor, buy.currency),
          start_time: buy.startTime.toISOString(),
          end_time: buy.endTime.toISOString(),
          confirmed_at: buy.confirmedAt?.toISOString() ?? null,
          revision: buy.revision,
          created_at: buy.createdAt.toISOString(),
          updated_at: buy.updatedAt.toISOString(),
          packages: pkgs
            .filter((k) => k.pkg.mediaBuyId === buy.id)
            .map((k) => ({
              package_id: k.pkg.publicId,
              product_id: k.productId,
              pricing_option_id: k.pkg.pricingOptionId,
              budget: fromMinor(k.pkg.budgetMinor, buy.currency),
              paused: k.pkg.paused,
            })),
        })),
        pagination: pagination('mb', skip, slice.length, all.length),
        ...echo(args),
      };
    },
  };

  const getMediaBuyDelivery: McpTool = {
    name: 'get_media_buy_delivery',
    description:
      'Delivery (impressions, clicks, spend) of the Buyer Account media buys per package, from the ended UTC days reported so far.',
    audiences: ['buyer', 'storefront'],
    inputSchema: argsSchema({ media_buy_ids: ID_LIST, start_date: DATE, end_date: DATE, account: ACCOUNT }),
    mutating: false,
    async handler(ctx, args) {
      const organizationId = buyerOf(ctx);
      const start = (args.start_date as string | undefined) ?? null;
      const end = (args.end_date as string | undefined) ?? deps.clock.now().toISOString().slice(0, 10);
      if (start !== null && start > end)
        throw new AdcpError({
          code: 'VALIDATION_ERROR',
          message: `start_date ${start} is after end_date ${end}.`,
          recovery: 'correctable',
          field: 'start_date',
        });
      const buys = await buysOf(ctx, organizationId, args);
      const rows =
        buys.length === 0
          ? []
          : await db
              .select({
                mediaBuyId: deliveryMetrics.mediaBuyId,
                packageId: packages.publicId,
                impressions: sql<number>`sum(${deliveryMetrics.impressions})`.mapWith(Number),
                clicks: sql<number>`sum(${deliveryMetrics.clicks})`.mapWith(Number),
                spendMinor: sql<number>`sum(${deliveryMetrics.spendMinor})`.mapWith(Number),
                firstDay: sql<string>`min(${deliveryMetrics.day})`,
              })
              .from(deliveryMetrics)
              .innerJoin(packages, eq(packages.id, deliveryMetrics.packageId))
              .where(
                and(
                  inArray(
                    deliveryMetrics.mediaBuyId,
                    buys.map((b) => b.buy.id),
                  ),
                  start ? gte(deliveryMetrics.day, start) : undefined,
                  lte(deliveryMetrics.day, end),
                ),
              )
              .groupBy(deliveryMetrics.mediaBuyId, packages.publicId, packages.id)
              .orderBy(asc(packages.id));
      const currencies = new Set(buys.map((b) => b.buy.currency));
      const currency = currencies.size === 1 ? [...currencies][0]! : (buys[0]?.buy.currency ?? 'USD');
      const deliveries = buys.map(({ buy }) => {
        const mine = rows.filter((r) => r.mediaBuyId === buy.id);
        const sum = (f: (r: (typeof mine)[number]) => number) => mine.reduce((n, r) => n + f(r), 0);
        return {
          media_buy_id: buy.publicId,
          status: buy.status,
          totals: {
            impressions: sum((r) => r.impressions),
            clicks: sum((r) => r.clicks),
            spend: fromMinor(
              sum((r) => r.spendMinor),
              buy.currency,
            ),
          },
          by_package: mine.map((r) => ({
            package_id: r.packageId,
            impressions: r.impressions,
            clicks: r.clicks,
            spend: fromMinor(r.spendMinor, buy.currency),
          })),
          currency: buy.currency,
        };
      });
      const firstDays = rows.map((r) => r.firstDay).sort();
      const periodStart = start ?? firstDays[0] ?? end;
      return {
        reporting_period: { start: `${periodStart}T00:00:00Z`, end: `${end}T23:59:59Z` },
        currency,
        // Totals across buys only when they share one currency (no conversion here).
        ...(currencies.size <= 1
          ? {
              aggregated_totals: {
                impressions: deliveries.reduce((n, d) => n + d.totals.impressions, 0),
                clicks: deliveries.reduce((n, d) => n + d.totals.clicks, 0),
                spend: Number(deliveries.reduce((n, d) => n + d.totals.spend, 0).toFixed(6)),
                media_buy_count: deliveries.length,
              },
            }
          : {}),
        media_buy_deliveries: deliveries.map(({ currency: _c, ...d }) => d),
        ...echo(args),
      };
    },
  };

  return [
    getAdcpCapabilities,
    getProductsTool(deps),
    listCreativeFormats,
    listCreatives,
    getMediaBuys,
    getMediaBuyDelivery,
  ];
}
