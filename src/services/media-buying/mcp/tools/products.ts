/**
 * `get_products` of the buyer (`/mcp/v3`) and storefront (`/mcp/v3/storefronts/{sf_id}`) MCP endpoints (spec "MCP",
 * "Errors"; AdCP 3.x `media-buy/get-products-request.json`, `-response.json`): part 2's discovery sessions (quotes fixed
 * for the UTC day, the kept session of the advertiser and UTC day reused while the catalog is unchanged) in AdCP's
 * product shape; each product's `ext` carries its `quote_id`, `priced_for_day` and `expires_at` (where REST
 * discover-products puts `quoteId`). Paged with AdCP `pagination` in SQL; the cursor names the discovery session, so
 * pages never shift within the UTC day (a product archived meanwhile leaves the later pages).
 *
 * - **Buying modes** (AdCP `buying_mode`): `brief` (a `brief` is required; this seller does no natural-language
 *   curation: every available product in scope is the curated answer), `wholesale` (no `brief`, no `refine`: the whole
 *   priced feed, paged) and `refine` (a `refine` array, no `brief`: the products it names, with
 *   `refinement_applied[]`, see {@link Refinement}). A mode's forbidden or missing field is `INVALID_REQUEST`.
 * - **Sources**: each storefront is a source, answered by its ad platform's adapter
 *   ({@link AdPlatformAdapter.discoveryFailures}). A source that does not answer is left out of the page: on `/mcp/v3`
 *   `ext.per_source[]` shows it `failed` with its `error` and `recovery` while the others answer, the response carries
 *   `incomplete[]` (`products`, or `wholesale_feed` in wholesale mode) and one `errors[]` entry per failed source; when
 *   no source in scope answers, the call fails with `details.reason` `all_sources_failed` and `details.per_source[]`.
 * - **Feed versions** (AdCP `wholesale_feed_version`, capability `wholesale_feed_versioning.supported`): every answer
 *   carries the version of the feed it was read from (the discovery session, the catalog version when the session no
 *   longer matches the live catalog, and the sources that did not answer); a request with `if_wholesale_feed_version`
 *   equal to it (wholesale mode) answers `unchanged: true` without products.
 * - **Terms**: like REST discover-products (a `POST`, which may start a session), it is refused while the caller has
 *   Terms of Service to accept (`TOS_ACCEPTANCE_REQUIRED`, by the MCP layer).
 *
 * The caller must be of a Buyer Account with buyer read access (`PERMISSION_DENIED`); `account.account_id` (an
 * advertiser `adv_…` or an account link `acc_…` of the Buyer Account; on a storefront endpoint a link with that
 * storefront) chooses the advertiser the discovery runs for (default: the first active one); any other is
 * `ACCOUNT_NOT_FOUND`.
 */
import { createHash } from 'node:crypto';
import type { Db } from '../../../../platform/database.ts';
import type { AppLogger } from '../../../../platform/logger.ts';
import type { AdPlatformAdapter } from '../../buying/index.ts';
import {
  DiscoveryAccountError,
  type DiscoveryPages,
  type FoundDiscovery,
  type ProductCandidate,
  type ProductsAccount,
  type ProductsPageItem,
} from '../../catalog/index.ts';
import type { SourceRejection } from '../../db/schema.ts';
import { AdcpError, type AdcpErrorBody, type McpTool, type McpToolContext } from '../contract.ts';
import { IDEMPOTENCY_KEY } from './buying.ts';
import {
  ACCOUNT,
  accountNotFound,
  argsSchema,
  buyerOf,
  DEFAULT_RESULTS,
  decodeCursor,
  echo,
  PAGINATION,
  pagination,
  pricingOptionsOf,
  REPORTING_CAPABILITIES,
} from './shared.ts';

/** What `get_products` reads through. */
export interface ProductsToolDeps {
  db: Db;
  discoveryPages: DiscoveryPages;
  adPlatform: AdPlatformAdapter;
  /** Where an ad platform's failure to answer is logged (the caller sees a failed source, never the error). */
  logger?: AppLogger;
}

/**
 * What a source shows when its ad platform's discovery check itself fails (the adapter threw: a network error, a
 * platform outage): it did not answer, and the buyer may try again.
 */
const DISCOVERY_UNANSWERED: SourceRejection = {
  code: 'SERVICE_UNAVAILABLE',
  message: 'The ad platform did not answer product discovery; try again later.',
  recovery: 'transient',
};

/** AdCP `buying_mode` values. */
const BUYING_MODES = ['brief', 'wholesale', 'refine'] as const;

/** One AdCP `refine[]` entry (`media-buy/get-products-request.json`). */
type RefineEntry =
  | { scope: 'request'; ask: string }
  | { scope: 'product'; product_id: string; action?: 'include' | 'omit' | 'more_like_this'; ask?: string }
  | { scope: 'proposal'; proposal_id: string; action?: 'include' | 'omit' | 'finalize'; ask?: string };

/** The pieces of a `get_products` call's arguments the tool reads. */
interface ProductsArgs {
  buying_mode: (typeof BUYING_MODES)[number];
  brief?: string;
  refine?: RefineEntry[];
  account?: { account_id?: string };
  pagination?: { max_results?: number; cursor?: string };
  if_wholesale_feed_version?: string;
}

const ASK = { type: 'string', minLength: 1, maxLength: 2_000 } as const;
const REF_ID = { type: 'string', minLength: 1, maxLength: 128 } as const;
/** AdCP's `refine[]` entries (their `oneOf` on `scope`, unknown fields refused as AdCP does). */
const REFINE = {
  type: 'array',
  minItems: 1,
  maxItems: 100,
  items: {
    oneOf: [
      {
        type: 'object',
        properties: { scope: { const: 'request' }, ask: ASK },
        required: ['scope', 'ask'],
        additionalProperties: false,
      },
      {
        type: 'object',
        properties: {
          scope: { const: 'product' },
          product_id: REF_ID,
          action: { enum: ['include', 'omit', 'more_like_this'] },
          ask: ASK,
        },
        required: ['scope', 'product_id'],
        additionalProperties: false,
      },
      {
        type: 'object',
        properties: {
          scope: { const: 'proposal' },
          proposal_id: REF_ID,
          action: { enum: ['include', 'omit', 'finalize'] },
          ask: ASK,
        },
        required: ['scope', 'proposal_id'],
        additionalProperties: false,
      },
    ],
  },
} as const;
const VERSION_TOKEN = { type: 'string', minLength: 1, maxLength: 200 } as const;

/** `INVALID_REQUEST` (AdCP, `correctable`) for a field the buying mode requires or forbids. */
function invalid(field: string, message: string): AdcpError {
  return new AdcpError({ code: 'INVALID_REQUEST', message, recovery: 'correctable', field });
}

/**
 * The buying mode's rules on `brief` and `refine` (AdCP `get_products`: `brief` is required in brief mode and must not
 * be sent in the others; `refine` is required in refine mode and must not be sent in the others), and `refine[]`'s
 * finalize rule: a finalize entry makes every entry a proposal finalize (else `INVALID_REQUEST`); this seller issues
 * no proposals, so finalizing one is `PROPOSAL_NOT_FOUND`.
 * @throws AdcpError.
 */
function checkMode(args: ProductsArgs): void {
  const mode = args.buying_mode;
  const hasBrief = args.brief !== undefined;
  if (mode === 'brief' && (args.brief ?? '').trim() === '')
    throw invalid(
      'brief',
      'buying_mode brief needs a brief: describe the campaign, or use buying_mode wholesale.',
    );
  if (mode !== 'brief' && hasBrief)
    throw invalid('brief', `A brief must not be sent with buying_mode ${mode}.`);
  if (mode === 'refine' && args.refine === undefined)
    throw invalid('refine', 'buying_mode refine needs a refine array of change requests.');
  if (mode !== 'refine' && args.refine !== undefined)
    throw invalid('refine', `refine is only valid with buying_mode refine, not ${mode}.`);
  const entries = args.refine ?? [];
  const finalize = entries.findIndex((e) => e.scope === 'proposal' && e.action === 'finalize');
  if (finalize < 0) return;
  if (entries.some((e) => e.scope !== 'proposal' || e.action !== 'finalize'))
    throw invalid(
      'refine',
      'A finalize entry must not be mixed with other entries: send the finalize entries alone.',
    );
  const entry = entries[finalize] as { proposal_id: string };
  throw new AdcpError({
    code: 'PROPOSAL_NOT_FOUND',
    message: `No proposal ${entry.proposal_id}: this seller issues no proposals; buy products with create_media_buy.`,
    recovery: 'correctable',
    field: `refine[${finalize}].proposal_id`,
  });
}

/** AdCP `refinement_applied[]` entry. */
type RefinementResult =
  | { scope: 'request'; status: string; notes?: string }
  | { scope: 'product'; product_id: string; status: string; notes?: string }
  | { scope: 'proposal'; proposal_id: string; status: string; notes?: string };

/**
 * A `refine` call's choice of products and its answer to each entry (AdCP "Refinement"; each call stands alone: the
 * entries name products by id). The chosen products are those named by `include` (the default action) and
 * `more_like_this` entries, with, for each `more_like_this`, the other products of the discovery that share its
 * delivery type and a channel; without such entries, every product. `omit` removes a product (over any other entry).
 * Products are chosen among the discovery's available products of the sources that answered, and paged in session
 * order. Answers: a named product not among them is `unable`; an `ask` is not acted on (`partial`, or `unable` for
 * a request-level ask); proposal entries are `unable` (this seller issues no proposals).
 */
class Refinement {
  private candidates: ProductCandidate[] = [];

  constructor(private readonly entries: RefineEntry[]) {}

  /** The chosen product ids among `candidates` (class comment). */
  choose = (candidates: ProductCandidate[]): ReadonlySet<string> => {
    this.candidates = candidates;
    const available = new Map(candidates.map((c) => [c.productId, c]));
    const omitted = this.omitted();
    const named = this.entries.filter(
      (e): e is Extract<RefineEntry, { scope: 'product' }> => e.scope === 'product' && e.action !== 'omit',
    );
    if (named.length === 0)
      return new Set(candidates.map((c) => c.productId).filter((id) => !omitted.has(id)));
    const chosen = new Set<string>();
    for (const entry of named) {
      const product = available.get(entry.product_id);
      if (!product || omitted.has(entry.product_id)) continue;
      chosen.add(entry.product_id);
      if (entry.action === 'more_like_this')
        for (const other of this.similar(product))
          if (!omitted.has(other.productId)) chosen.add(other.productId);
    }
    return chosen;
  };

  /** AdCP `refinement_applied[]`, by position (class comment). */
  applied(): RefinementResult[] {
    const available = new Map(this.candidates.map((c) => [c.productId, c]));
    const omitted = this.omitted();
    return this.entries.map((entry): RefinementResult => {
      if (entry.scope === 'request')
        return {
          scope: 'request',
          status: 'unable',
          notes:
            'This seller does not act on natural-language asks; the product entries choose the products.',
        };
      if (entry.scope === 'proposal')
        return {
          scope: 'proposal',
          proposal_id: entry.proposal_id,
          status: 'unable',
          notes: `No proposal ${entry.proposal_id}: this seller issues no proposals.`,
        };
      const base = { scope: 'product' as const, product_id: entry.product_id };
      if (entry.action === 'omit') return { ...base, status: 'applied' };
      const product = available.get(entry.product_id);
      if (!product)
        return {
          ...base,
          status: 'unable',
          notes: 'Not an available product of this discovery (or its storefront did not answer).',
        };
      if (omitted.has(entry.product_id))
        return { ...base, status: 'unable', notes: 'Omitted by another entry of this refine array.' };
      if (entry.action === 'more_like_this') {
        const similar = this.similar(product).filter((p) => !omitted.has(p.productId)).length;
        return {
          ...base,
          status: similar > 0 && entry.ask === undefined ? 'applied' : 'partial',
          notes: `${similar} similar product(s): the same delivery type and a shared channel${entry.ask === undefined ? '' : '; the ask was not acted on'}.`,
        };
      }
      return entry.ask === undefined
        ? { ...base, status: 'applied' }
        : {
            ...base,
            status: 'partial',
            notes: 'Returned as offered: this seller does not change products on request.',
          };
    });
  }

  private omitted(): Set<string> {
    return new Set(
      this.entries.flatMap((e) => (e.scope === 'product' && e.action === 'omit' ? [e.product_id] : [])),
    );
  }

  /** The other available products of the same delivery type sharing a channel with `product`. */
  private similar(product: ProductCandidate): ProductCandidate[] {
    return this.candidates.filter(
      (c) =>
        c.productId !== product.productId &&
        c.deliveryType === product.deliveryType &&
        c.channels.some((ch) => product.channels.includes(ch)),
    );
  }
}

/** A later page's session (`dsc_…~adv_…:<offset>` cursor) or none, and the page's range. */
function pageRange(args: ProductsArgs) {
  const cursor = decodeCursor(args.pagination?.cursor);
  const named = cursor?.scope.startsWith('dsc_') ? cursor.scope.split('~') : undefined;
  if (cursor && (named?.length !== 2 || !named[1]))
    throw new AdcpError({
      code: 'VALIDATION_ERROR',
      message: 'pagination.cursor belongs to another listing.',
      recovery: 'correctable',
      field: 'pagination.cursor',
    });
  return {
    session: named ? { discoveryId: named[0]!, advertiserId: named[1]! } : null,
    skip: cursor?.offset ?? 0,
    take: args.pagination?.max_results ?? DEFAULT_RESULTS,
  };
}

/** The advertiser a first page runs for: the account named (`adv_…`, else an account link), or the first one. */
function accountOf(ctx: McpToolContext, args: ProductsArgs): ProductsAccount {
  const accountId = args.account?.account_id;
  if (accountId === undefined) return { kind: 'first' };
  return accountId.startsWith('adv_')
    ? { kind: 'advertiser', publicId: accountId }
    : { kind: 'link', publicId: accountId, storefrontId: ctx.storefront?.id ?? null };
}

/**
 * The AdCP error of an account a discovery cannot run for: `ACCOUNT_REQUIRED` (the Buyer Account has no advertiser),
 * else `ACCOUNT_NOT_FOUND`.
 */
function accountError(ctx: McpToolContext, error: DiscoveryAccountError, args: ProductsArgs): AdcpError {
  return error.reason === 'no_advertiser'
    ? new AdcpError({
        code: 'ACCOUNT_REQUIRED',
        message: 'This Buyer Account has no advertiser yet: create one, then name it in account.account_id.',
        recovery: 'correctable',
        field: 'account',
      })
    : accountNotFound(ctx, args.account?.account_id ?? '');
}

/** A source that did not answer, as `per_source[]` shows it (spec "Errors"). */
interface FailedSource {
  source_id: string;
  status: 'failed';
  error: { code: string; message: string };
  recovery: AdcpErrorBody['recovery'];
}

/**
 * The error of a call no source in scope answered (spec "Errors": `details.reason` `all_sources_failed`,
 * `details.per_source[]`): the sources' code when they agree (else `SERVICE_UNAVAILABLE`), and their recovery when
 * they agree (else `transient` when any is, else `correctable` when any is, else `terminal`).
 */
function allSourcesFailed(failed: FailedSource[]): AdcpError {
  const codes = new Set(failed.map((f) => f.error.code));
  const recoveries = new Set(failed.map((f) => f.recovery));
  return new AdcpError({
    code: codes.size === 1 ? failed[0]!.error.code : 'SERVICE_UNAVAILABLE',
    message: `No source answered: ${failed.map((f) => `${f.source_id}: ${f.error.message}`).join(' | ')}`,
    recovery:
      recoveries.size === 1
        ? failed[0]!.recovery
        : recoveries.has('transient')
          ? 'transient'
          : recoveries.has('correctable')
            ? 'correctable'
            : 'terminal',
    details: { reason: 'all_sources_failed', per_source: failed },
  });
}

/**
 * The feed version of an answer (module comment): the discovery session, the catalog version when the session no
 * longer matches the live catalog, and a digest of the sources that did not answer. Opaque to buyers.
 */
function feedVersion(found: FoundDiscovery, failedIds: string[]): string {
  let version = found.allAvailable ? found.discoveryId : `${found.discoveryId}.v${found.catalogVersion}`;
  if (failedIds.length > 0)
    version += `.f${createHash('sha256').update(failedIds.join(',')).digest('hex').slice(0, 16)}`;
  return version;
}

/** One product of a discovery page in AdCP's product shape, its pricing options at the session's quotes. */
function adcpProduct({ quoteId, product, options }: ProductsPageItem, found: FoundDiscovery) {
  return {
    product_id: product.productId,
    name: product.name,
    description: product.description,
    publisher_properties: product.publisherProperties.map((pp) => ({
      publisher_domain: pp.publisherDomain,
      selection_type: pp.selectionType,
      ...(pp.propertyIds ? { property_ids: pp.propertyIds } : {}),
      ...(pp.propertyTags ? { property_tags: pp.propertyTags } : {}),
    })),
    channels: product.channels,
    format_ids: product.formatIds.map((f) => ({ agent_url: f.agentUrl, id: f.id })),
    delivery_type: product.deliveryType,
    pricing_options: pricingOptionsOf(
      product.pricingOptions.map((o) => {
        const quote = options.find((q) => q.pricingOptionId === o.pricingOptionId);
        if (!quote || quote.price === null) return o;
        return quote.priceType === 'fixed'
          ? { ...o, fixedPrice: quote.price, floorPrice: undefined }
          : { ...o, floorPrice: quote.price, fixedPrice: undefined };
      }),
    ),
    reporting_capabilities: REPORTING_CAPABILITIES,
    ext: {
      quote_id: quoteId,
      storefront_id: product.storefrontId,
      priced_for_day: found.pricedForDay,
      expires_at: found.expiresAt,
    },
  };
}

/** The `get_products` tool (module comment). */
export function getProductsTool(deps: ProductsToolDeps): McpTool {
  /**
   * The AdCP products of a discovery page, by the page's product list: the per-instance page cache hands out the same
   * list for the same page (one session's quotes), so each is rendered once while it stays cached.
   */
  const rendered = new WeakMap<ProductsPageItem[], ReturnType<typeof adcpProduct>[]>();
  const productsOf = (items: ProductsPageItem[], found: FoundDiscovery) => {
    let list = rendered.get(items);
    if (!list) {
      list = items.map((item) => adcpProduct(item, found));
      rendered.set(items, list);
    }
    return list;
  };

  /** The sources in scope (group indexes), and those whose ad platform does not answer now. */
  const sourcesOf = async (ctx: McpToolContext, found: FoundDiscovery) => {
    const scope = ctx.storefront
      ? found.groups.flatMap((g, i) => (g.storefrontId === ctx.storefront!.publicId ? [i] : []))
      : found.groups.map((_, i) => i);
    const ids = scope.map((i) => found.groups[i]!.storefrontId);
    let failures = new Map<string, SourceRejection>();
    if (ids.length > 0)
      try {
        failures = await deps.adPlatform.discoveryFailures(deps.db, ids, found.catalogVersion);
      } catch (err) {
        // The check did not answer: every source it covers is a failed source (all_sources_failed when that is all).
        deps.logger?.warn({ err }, 'media buying: the ad platform did not answer product discovery');
        failures = new Map(ids.map((id) => [id, DISCOVERY_UNANSWERED]));
      }
    const failed: FailedSource[] = scope.flatMap((i) => {
      const id = found.groups[i]!.storefrontId;
      const rejection = failures.get(id);
      return rejection
        ? [
            {
              source_id: id,
              status: 'failed' as const,
              error: { code: rejection.code, message: rejection.message },
              recovery: rejection.recovery,
            },
          ]
        : [];
    });
    const answering = scope.filter((i) => !failures.has(found.groups[i]!.storefrontId));
    if (scope.length > 0 && answering.length === 0) throw allSourcesFailed(failed);
    return { scope, answering, failed };
  };

  return {
    name: 'get_products',
    description:
      'Products of the storefront (or of every active storefront), priced for the current UTC day; each carries its quote id in ext.quote_id. buying_mode brief (with a brief), wholesale (the whole feed) or refine (a refine array).',
    audiences: ['buyer', 'storefront'],
    inputSchema: {
      ...argsSchema(
        {
          buying_mode: { enum: BUYING_MODES },
          brief: { type: 'string', maxLength: 10_000 },
          refine: REFINE,
          account: ACCOUNT,
          pagination: PAGINATION,
          idempotency_key: IDEMPOTENCY_KEY,
          if_wholesale_feed_version: VERSION_TOKEN,
          if_pricing_version: VERSION_TOKEN,
        },
        ['buying_mode'],
      ),
      // AdCP: the pricing version needs the feed version, and both are for wholesale feed reads only.
      dependentRequired: { if_pricing_version: ['if_wholesale_feed_version'] },
      dependentSchemas: {
        if_wholesale_feed_version: { properties: { buying_mode: { const: 'wholesale' } } },
      },
    },
    mutating: false,
    requiresTerms: true,
    async handler(ctx, raw) {
      const organizationId = buyerOf(ctx);
      const args = raw as unknown as ProductsArgs;
      checkMode(args);
      const range = pageRange(args);
      const found = await deps.discoveryPages
        .find(organizationId, { session: range.session, account: accountOf(ctx, args) })
        .catch((e: unknown) => {
          throw e instanceof DiscoveryAccountError ? accountError(ctx, e, args) : e;
        });
      const { scope, answering, failed } = await sourcesOf(ctx, found);
      const version = feedVersion(
        found,
        failed.map((f) => f.source_id),
      );
      const common = {
        wholesale_feed_version: version,
        // Quotes belong to this Buyer Account's discovery session: never a public rate card.
        cache_scope: 'account',
      };
      const ext = {
        discovery_id: found.discoveryId,
        priced_for_day: found.pricedForDay,
        expires_at: found.expiresAt,
      };
      if (args.if_wholesale_feed_version === version)
        return { unchanged: true, ...common, ext, ...echo(raw) };
      const refinement = args.refine ? new Refinement(args.refine) : undefined;
      const page = await deps.discoveryPages.page(found, {
        groups: answering,
        skip: range.skip,
        take: range.take,
        ...(refinement ? { choose: refinement.choose } : {}),
      });
      const perSource = scope.map((g) => {
        const source = found.groups[g]!;
        const failure = failed.find((f) => f.source_id === source.storefrontId);
        return failure
          ? { ...failure, name: source.name }
          : {
              source_id: source.storefrontId,
              name: source.name,
              status: 'ok',
              product_count: page.counts[answering.indexOf(g)]!,
            };
      });
      return {
        products: productsOf(page.items, found),
        pagination: pagination(
          `${found.discoveryId}~${found.advertiserId}`,
          range.skip,
          page.items.length,
          page.total,
        ),
        ...common,
        ...(refinement ? { refinement_applied: refinement.applied() } : {}),
        ...(failed.length > 0
          ? {
              incomplete: [
                {
                  scope: args.buying_mode === 'wholesale' ? 'wholesale_feed' : 'products',
                  description: `${failed.length} of ${scope.length} sources did not answer: ${failed.map((f) => f.source_id).join(', ')}.`,
                },
              ],
              errors: failed.map((f) => ({
                code: f.error.code,
                message: f.error.message,
                recovery: f.recovery,
                details: { source_id: f.source_id },
              })),
            }
          : {}),
        ext: { ...ext, ...(ctx.storefront ? {} : { per_source: perSource }) },
        ...echo(raw),
      };
    },
  };
}
