/**
 * `get_products` of the buyer (`/mcp/v3`) and storefront (`/mcp/v3/storefronts/{sf_id}`) MCP endpoints (spec "MCP";
 * AdCP 3.x `media-buy/get-products-request.json`, `-response.json`): part 2's Discovery (a discovery session with
 * quotes fixed for the UTC day, reused by later calls of the same advertiser and UTC day while the catalog is
 * unchanged), products of the storefront or of every active storefront, in AdCP's product shape; each product's `ext`
 * carries its `quote_id`, `priced_for_day` and `expires_at` (where REST discover-products puts `quoteId`). Paged with
 * AdCP `pagination` in SQL (the cursor names the discovery session, so pages never shift within the UTC day). On
 * `/mcp/v3` the answer's `ext.per_source[]` lists each storefront (source) with its status and product count.
 *
 * The caller must be of a Buyer Account with buyer read access (`PERMISSION_DENIED`); `account.account_id` (an
 * advertiser `adv_…` or an account link `acc_…` of the Buyer Account; on a storefront endpoint a link with that
 * storefront) chooses the advertiser the discovery runs for (default: the first active one); any other is
 * `ACCOUNT_NOT_FOUND`.
 */
import {
  type Discovery,
  DiscoveryAccountError,
  type ProductsPage,
  type ProductsPageItem,
  type ProductsRequest,
} from '../../catalog/index.ts';
import { AdcpError, type McpTool, type McpToolContext } from '../contract.ts';
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

/** The pieces of a `get_products` call's arguments the tool reads. */
interface ProductsArgs {
  account?: { account_id?: string };
  pagination?: { max_results?: number; cursor?: string };
}

/**
 * The discovery page a call asks for: a later page of the session its cursor names (`dsc_…~adv_…:<offset>`: the same
 * quotes, pages never shift), or the first page of the kept session of the account it names.
 * @throws AdcpError `VALIDATION_ERROR` for a cursor of another listing.
 */
function pageRequest(ctx: McpToolContext, args: ProductsArgs): ProductsRequest {
  const cursor = decodeCursor(args.pagination?.cursor);
  const named = cursor?.scope.startsWith('dsc_') ? cursor.scope.split('~') : undefined;
  if (cursor && (named?.length !== 2 || !named[1]))
    throw new AdcpError({
      code: 'VALIDATION_ERROR',
      message: 'pagination.cursor belongs to another listing.',
      recovery: 'correctable',
      field: 'pagination.cursor',
    });
  const accountId = args.account?.account_id;
  return {
    session: named ? { discoveryId: named[0]!, advertiserId: named[1]! } : null,
    account:
      accountId === undefined
        ? { kind: 'first' }
        : accountId.startsWith('adv_')
          ? { kind: 'advertiser', publicId: accountId }
          : { kind: 'link', publicId: accountId, storefrontId: ctx.storefront?.id ?? null },
    storefrontId: ctx.storefront?.publicId ?? null,
    skip: cursor?.offset ?? 0,
    take: args.pagination?.max_results ?? DEFAULT_RESULTS,
  };
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

/** One product of a discovery page in AdCP's product shape, its pricing options at the session's quotes. */
function adcpProduct({ quoteId, product, options }: ProductsPageItem, page: ProductsPage) {
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
      priced_for_day: page.pricedForDay,
      expires_at: page.expiresAt,
    },
  };
}

/** The `get_products` tool (module comment). */
export function getProductsTool(deps: { discovery: Discovery }): McpTool {
  /**
   * The AdCP products of a discovery page, by the page's product list: the discovery's per-instance page cache hands
   * out the same list for the same page (one session's quotes), so each is rendered once while it stays cached.
   */
  const rendered = new WeakMap<ProductsPage['products'], ReturnType<typeof adcpProduct>[]>();
  const productsOf = (page: ProductsPage) => {
    let list = rendered.get(page.products);
    if (!list) {
      list = page.products.map((item) => adcpProduct(item, page));
      rendered.set(page.products, list);
    }
    return list;
  };

  return {
    name: 'get_products',
    description:
      'Products of the storefront (or of every active storefront), priced for the current UTC day; each carries its quote id in ext.quote_id.',
    audiences: ['buyer', 'storefront'],
    inputSchema: argsSchema(
      {
        buying_mode: { enum: ['brief', 'wholesale', 'refine'] },
        brief: { type: 'string', maxLength: 10_000 },
        account: ACCOUNT,
        pagination: PAGINATION,
      },
      ['buying_mode'],
    ),
    mutating: false,
    async handler(ctx, raw) {
      const organizationId = buyerOf(ctx);
      const args = raw as ProductsArgs;
      const request = pageRequest(ctx, args);
      const page = await deps.discovery.products(organizationId, request).catch((e: unknown) => {
        throw e instanceof DiscoveryAccountError ? accountError(ctx, e, args) : e;
      });
      return {
        products: productsOf(page),
        pagination: pagination(
          `${page.discoveryId}~${page.advertiserId}`,
          request.skip,
          page.products.length,
          page.total,
        ),
        // Quotes belong to this Buyer Account's discovery session: never a public rate card.
        cache_scope: 'account',
        ext: {
          discovery_id: page.discoveryId,
          priced_for_day: page.pricedForDay,
          expires_at: page.expiresAt,
          ...(ctx.storefront
            ? {}
            : {
                per_source: page.sources.map((source) => ({
                  source: source.storefrontId,
                  name: source.name,
                  status: 'ok',
                  product_count: source.productCount,
                })),
              }),
        },
        ...echo(raw),
      };
    },
  };
}
