/**
 * Product discovery (spec "Lists and discovery": `POST /api/v2/buyer/discovery/{discoveryId}/discover-products`).
 *
 * - **A session starts** when `discoveryId` is `new`: the active products of every active storefront are grouped by
 *   storefront (storefronts in creation order, products in creation order) and the grouping is kept as a
 *   `discovery_sessions` row (`dsc_` id). Later calls with that id page through the same groups, so pages never
 *   shift while sellers add products.
 * - **Quotes are priced for the UTC day** the session started (`quote.pricedForDay`); the session expires at the end
 *   of that day (`expiresAt`, 00:00 UTC next), after which its id answers 409 `CONFLICT` (`discovery_expired`):
 *   rerun discovery. Part 3 refuses an expired quote with `FX_QUOTE_EXPIRED`.
 * - Paging: `groupOffset`/`groupLimit` over groups, and `productOffset`/`productsPerGroup` inside each group.
 */
import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/database.ts';
import { prefixedHexId } from '../../../platform/ids.ts';
import { discoverySessions, organizations, products, storefronts } from '../db/schema.ts';
import { conflict, notFound, semanticValidation } from '../media-buying-errors.ts';
import type { Catalog } from './catalog.ts';
import { productView } from './views.ts';

/** The path value that starts a new session. */
export const NEW_DISCOVERY = 'new';

/** Paging of one discover-products call. */
export interface DiscoverInput {
  advertiserId: string;
  groupLimit: number;
  groupOffset: number;
  productsPerGroup: number;
  productOffset: number;
}

/** The UTC calendar day of `at` (`YYYY-MM-DD`). */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** Discovery sessions and their pages (module comment). */
export class Discovery {
  private readonly sessionQuery;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly catalog: Catalog,
  ) {
    this.sessionQuery = db
      .select()
      .from(discoverySessions)
      .where(
        and(
          eq(discoverySessions.publicId, sql.placeholder('id')),
          eq(discoverySessions.organizationId, sql.placeholder('orgId')),
        ),
      )
      .limit(1)
      .prepare('mb_discovery_session');
  }

  /**
   * One page of a discovery (module comment). A buying route: Buyer Setup step 1 first.
   * @throws ApiError 409 `BUYER_SETUP_REQUIRED`; 404 for an unknown session or advertiser; 409 `CONFLICT`
   *   (`discovery_expired`); 422 when `advertiserId` is not the session's.
   */
  async discover(organizationId: number, discoveryId: string, input: DiscoverInput) {
    const now = this.clock.now();
    // An unknown or another account's session is 404 before anything else (its existence never leaks).
    const [existing] =
      discoveryId === NEW_DISCOVERY
        ? []
        : await this.sessionQuery.execute({ id: discoveryId, orgId: organizationId });
    if (discoveryId !== NEW_DISCOVERY && !existing) throw notFound('Discovery', discoveryId);
    await this.catalog.requireBuyerSetup(organizationId);
    let session: typeof discoverySessions.$inferSelect;
    let advertiserPublicId = input.advertiserId;
    if (discoveryId === NEW_DISCOVERY) {
      const advertiser = await this.catalog.advertiser(organizationId, input.advertiserId);
      advertiserPublicId = advertiser.publicId;
      session = await this.start(organizationId, advertiser.id, now);
    } else {
      const found = existing!;
      if (found.expiresAt <= now)
        throw conflict('This discovery priced its quotes for an earlier UTC day; start a new discovery.', {
          reason: 'discovery_expired',
          expiredAt: found.expiresAt.toISOString(),
        });
      const advertiser = await this.catalog.advertiser(organizationId, input.advertiserId);
      if (advertiser.id !== found.advertiserId)
        throw semanticValidation([
          {
            field: 'advertiserId',
            location: 'body',
            message: 'must be the advertiser the discovery started with',
          },
        ]);
      session = found;
    }
    const groups = session.groups.slice(input.groupOffset, input.groupOffset + input.groupLimit);
    const wanted = groups.flatMap((g) =>
      g.productIds.slice(input.productOffset, input.productOffset + input.productsPerGroup),
    );
    const rows =
      wanted.length === 0
        ? []
        : await this.db
            .select({ product: products, storefront: storefronts, sellerAccountId: organizations.publicId })
            .from(products)
            .innerJoin(storefronts, eq(storefronts.id, products.storefrontId))
            .innerJoin(organizations, eq(organizations.id, storefronts.organizationId))
            .where(inArray(products.publicId, wanted));
    const byId = new Map(rows.map((r) => [r.product.publicId, r]));
    const expiresAt = session.expiresAt.toISOString();
    const productGroups = groups.map((g) => {
      const ids = g.productIds.slice(input.productOffset, input.productOffset + input.productsPerGroup);
      const first = byId.get(ids[0] ?? '');
      return {
        groupId: g.storefrontId,
        storefront: first
          ? {
              id: first.storefront.publicId,
              name: first.storefront.name,
              currency: first.storefront.currency,
              sellerAccountId: first.sellerAccountId,
            }
          : { id: g.storefrontId, name: null, currency: null, sellerAccountId: null },
        totalProducts: g.productIds.length,
        hasMoreProducts: input.productOffset + ids.length < g.productIds.length,
        products: ids
          .map((id) => byId.get(id))
          .filter((r) => r !== undefined)
          .map((r) => ({
            ...productView(r.product, r.storefront.publicId),
            quotes: r.product.pricingOptions.map((o) => ({
              pricingOptionId: o.pricingOptionId,
              pricingModel: o.pricingModel,
              price: o.fixedPrice ?? o.floorPrice ?? null,
              priceType: o.fixedPrice !== undefined ? 'fixed' : 'floor',
              currency: o.currency,
              pricedForDay: session.quoteDay,
              expiresAt,
            })),
          })),
      };
    });
    return {
      discoveryId: session.publicId,
      advertiserId: advertiserPublicId,
      productGroups,
      totalGroups: session.groups.length,
      hasMoreGroups: input.groupOffset + groups.length < session.groups.length,
      summary: {
        totalProducts: session.groups.reduce((n, g) => n + g.productIds.length, 0),
        pricedForDay: session.quoteDay,
        expiresAt,
      },
    };
  }

  /** Starts a session: the grouping of the active catalog now, priced for today's UTC day. */
  private async start(organizationId: number, advertiserId: number, now: Date) {
    const rows = await this.db
      .select({ storefrontId: storefronts.publicId, productId: products.publicId })
      .from(products)
      .innerJoin(storefronts, eq(storefronts.id, products.storefrontId))
      .where(and(eq(products.status, 'active'), eq(storefronts.status, 'active')))
      .orderBy(asc(storefronts.id), asc(products.id));
    const groups: { storefrontId: string; productIds: string[] }[] = [];
    for (const r of rows) {
      const last = groups.at(-1);
      if (last?.storefrontId === r.storefrontId) last.productIds.push(r.productId);
      else groups.push({ storefrontId: r.storefrontId, productIds: [r.productId] });
    }
    const day = utcDay(now);
    const expiresAt = new Date(`${day}T00:00:00.000Z`);
    expiresAt.setUTCDate(expiresAt.getUTCDate() + 1);
    const [session] = await this.db
      .insert(discoverySessions)
      .values({
        publicId: prefixedHexId('dsc'),
        organizationId,
        advertiserId,
        quoteDay: day,
        groups,
        createdAt: now,
        expiresAt,
      })
      .returning();
    return session!;
  }
}
