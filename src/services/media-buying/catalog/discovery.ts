/**
 * Product discovery (spec "Lists and discovery": `POST /api/v2/buyer/discovery/{discoveryId}/discover-products`).
 *
 * - **A session starts** when `discoveryId` is `new`: the active products of every active storefront (at most
 *   {@link MAX_DISCOVERY_PRODUCTS}) are grouped by storefront (storefronts in creation order, products in creation
 *   order) and kept: a `discovery_sessions` row (`dsc_` id) and one `discovery_quotes` row (`dqt_` quote id) per
 *   product, holding the product and storefront as they were and each pricing option's price. Later calls with that
 *   id page through these rows only, so pages never shift while sellers add products and prices never move.
 * - **Quotes are fixed for the UTC day** the session started (`quote.pricedForDay`); the session expires at the end
 *   of that day (`expiresAt`, 00:00 UTC next), after which its id answers 409 `CONFLICT` (`discovery_expired`):
 *   rerun discovery. Part 3 refuses an expired quote id with `FX_QUOTE_EXPIRED`. Expired sessions are pruned hourly.
 * - **Unavailable products**: a product archived, or whose storefront was archived or replaced, after the session
 *   started stays in its place (pages do not shift) with `available: false`; its quotes are not offered (`quotes: []`).
 * - **Kept sessions** (MCP `get_products`, `discovery-pages.ts`): a call without a session reuses the newest session of
 *   the same Buyer Account, advertiser and UTC day whose catalog fingerprint (storefronts' id, name, currency, Seller
 *   Account, product ids and pricing options, in session order) equals the live catalog's, so a repeat call only
 *   reads; prices stay the quotes of that UTC day. The live catalog's fingerprint is kept by the database with its
 *   version (`catalog_versions`: a trigger bumps the version and clears the fingerprint in every transaction that
 *   writes products, storefronts or a Seller Account's public id); the first call after a change reads the catalog
 *   once, in the same statement as the version, and stores the fingerprint for that version
 *   ({@link Discovery.keptOrStarted}). REST `new` always starts a session.
 * - Paging (REST): `groupOffset`/`groupLimit` over groups, and `productOffset`/`productsPerGroup` inside each group.
 *   A page of a session is two prepared queries (the session with its advertiser and operator identity; the page).
 */
import { createHash } from 'node:crypto';
import { and, asc, desc, eq, gt, gte, isNull, lt, sql } from 'drizzle-orm';
import type { Clock } from '../../../platform/clock.ts';
import type { Db, Executor, Tx } from '../../../platform/database.ts';
import { prefixedHexId } from '../../../platform/ids.ts';
import {
  advertisers,
  buyerOperatorIdentities,
  catalogVersions,
  type DiscoveryQuoteOption,
  discoveryQuotes,
  discoverySessions,
  organizations,
  products,
  storefronts,
} from '../db/schema.ts';
import { buyerSetupRequired, conflict, notFound, semanticValidation } from '../media-buying-errors.ts';
import type { Catalog } from './catalog.ts';
import { productView } from './views.ts';

/**
 * Days an expired discovery session (and its quotes) is kept before the hourly prune deletes it: long enough for
 * part 3 to answer a late quote id `FX_QUOTE_EXPIRED` rather than not found.
 */
export const EXPIRED_DISCOVERY_KEPT_DAYS = 7;

/** The most products one discovery session keeps (the rest of a larger catalog is not offered; documented). */
export const MAX_DISCOVERY_PRODUCTS = 5_000;

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
  private readonly pageQuery;
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly catalog: Catalog,
  ) {
    this.sessionQuery = db
      .select({
        session: discoverySessions,
        advertiserPublicId: advertisers.publicId,
        operatorDomain: buyerOperatorIdentities.domain,
      })
      .from(discoverySessions)
      .innerJoin(advertisers, eq(advertisers.id, discoverySessions.advertiserId))
      .leftJoin(
        buyerOperatorIdentities,
        eq(buyerOperatorIdentities.organizationId, discoverySessions.organizationId),
      )
      .where(
        and(
          eq(discoverySessions.publicId, sql.placeholder('id')),
          eq(discoverySessions.organizationId, sql.placeholder('orgId')),
        ),
      )
      .limit(1)
      .prepare('mb_discovery_session');
    this.pageQuery = db
      .select({
        quoteId: discoveryQuotes.publicId,
        groupIndex: discoveryQuotes.groupIndex,
        product: discoveryQuotes.product,
        storefront: discoveryQuotes.storefront,
        options: discoveryQuotes.options,
        available: sql<boolean>`(${products.status} = 'active' and ${storefronts.status} = 'active')`,
      })
      .from(discoveryQuotes)
      .innerJoin(products, eq(products.id, discoveryQuotes.productId))
      .innerJoin(storefronts, eq(storefronts.id, products.storefrontId))
      .where(
        and(
          eq(discoveryQuotes.sessionId, sql.placeholder('sessionId')),
          gte(discoveryQuotes.groupIndex, sql.placeholder('groupFrom')),
          lt(discoveryQuotes.groupIndex, sql.placeholder('groupTo')),
          gte(discoveryQuotes.position, sql.placeholder('productFrom')),
          lt(discoveryQuotes.position, sql.placeholder('productTo')),
        ),
      )
      .orderBy(asc(discoveryQuotes.groupIndex), asc(discoveryQuotes.position))
      .prepare('mb_discovery_page');
  }

  /**
   * One page of a discovery (module comment). A buying route: Buyer Setup step 1 first.
   * @throws ApiError 409 `BUYER_SETUP_REQUIRED`; 404 for an unknown session or advertiser; 409 `CONFLICT`
   *   (`discovery_expired`); 422 when `advertiserId` is not the session's.
   */
  async discover(organizationId: number, discoveryId: string, input: DiscoverInput) {
    const now = this.clock.now();
    let session: typeof discoverySessions.$inferSelect;
    let advertiserPublicId = input.advertiserId;
    if (discoveryId === NEW_DISCOVERY) {
      await this.catalog.requireBuyerSetup(organizationId);
      const advertiser = await this.catalog.advertiser(organizationId, input.advertiserId);
      advertiserPublicId = advertiser.publicId;
      const { rows, fingerprint } = await this.catalogNow();
      session = await this.start(organizationId, advertiser.id, now, rows, fingerprint);
    } else {
      // An unknown or another account's session is 404 before anything else (its existence never leaks).
      const [found] = await this.sessionQuery.execute({ id: discoveryId, orgId: organizationId });
      if (!found) throw notFound('Discovery', discoveryId);
      if (found.operatorDomain === null) throw buyerSetupRequired('missing_operator_identity');
      if (this.catalog.isPlatformDomain(found.operatorDomain))
        throw buyerSetupRequired('platform_operator_not_allowed');
      if (found.session.expiresAt <= now)
        throw conflict('This discovery priced its quotes for an earlier UTC day; start a new discovery.', {
          reason: 'discovery_expired',
          expiredAt: found.session.expiresAt.toISOString(),
        });
      if (found.advertiserPublicId !== input.advertiserId) {
        // Another advertiser of this account is a 422; an unknown one stays a 404.
        await this.catalog.advertiser(organizationId, input.advertiserId);
        throw semanticValidation([
          {
            field: 'advertiserId',
            location: 'body',
            message: 'must be the advertiser the discovery started with',
          },
        ]);
      }
      session = found.session;
    }
    const groups = session.groups.slice(input.groupOffset, input.groupOffset + input.groupLimit);
    const rows =
      groups.length === 0
        ? []
        : await this.pageQuery.execute({
            sessionId: session.id,
            groupFrom: input.groupOffset,
            groupTo: input.groupOffset + groups.length,
            productFrom: input.productOffset,
            productTo: input.productOffset + input.productsPerGroup,
          });
    const expiresAt = session.expiresAt.toISOString();
    const productGroups = groups.map((g, i) => {
      const inGroup = rows.filter((r) => r.groupIndex === input.groupOffset + i);
      return {
        groupId: g.storefrontId,
        storefront: g.storefront,
        totalProducts: g.totalProducts,
        hasMoreProducts: input.productOffset + inGroup.length < g.totalProducts,
        products: inGroup.map((r) => ({
          ...r.product,
          quoteId: r.quoteId,
          available: r.available,
          quotes: r.available
            ? r.options.map((o) => ({ ...o, pricedForDay: session.quoteDay, expiresAt }))
            : [],
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
        totalProducts: session.groups.reduce((n, g) => n + g.totalProducts, 0),
        pricedForDay: session.quoteDay,
        expiresAt,
      },
    };
  }

  /**
   * Deletes the sessions expired more than {@link EXPIRED_DISCOVERY_KEPT_DAYS} days ago by the clock (their quotes go
   * with them). @returns how many sessions were deleted.
   */
  async prune(): Promise<number> {
    const before = new Date(this.clock.nowMs() - EXPIRED_DISCOVERY_KEPT_DAYS * 86_400_000);
    const deleted = await this.db
      .delete(discoverySessions)
      .where(lt(discoverySessions.expiresAt, before))
      .returning({ id: discoverySessions.id });
    return deleted.length;
  }

  /**
   * The kept session of an advertiser for today (UTC, `now`) built from the live catalog, read now (module comment,
   * "Kept sessions"): the newest of its fingerprint, or a new one started from it. `version` is the catalog version
   * read with it.
   */
  async keptOrStarted(organizationId: number, advertiserId: number, now: Date) {
    const live = await this.catalogNow();
    const session =
      (await this.keptOf(this.db, organizationId, advertiserId, now, live.fingerprint)) ??
      // None yet: one caller starts it. Concurrent first calls of one advertiser (after a catalog change) wait for
      // each other on the advertiser's lock, and the later ones find the session the first started.
      (await this.db.transaction(async (tx) => {
        await tx.execute(
          sql`select pg_advisory_xact_lock(hashtext(${`media_buying:kept-discovery:${advertiserId}`}))`,
        );
        return (
          (await this.keptOf(tx, organizationId, advertiserId, now, live.fingerprint)) ??
          (await this.start(organizationId, advertiserId, now, live.rows, live.fingerprint, tx))
        );
      }));
    return { session, version: live.version };
  }

  /** The newest kept session of an advertiser for today (UTC, `now`) built from a catalog of `fingerprint`. */
  private async keptOf(
    executor: Executor,
    organizationId: number,
    advertiserId: number,
    now: Date,
    fingerprint: string,
  ) {
    const [kept] = await executor
      .select()
      .from(discoverySessions)
      .where(
        and(
          eq(discoverySessions.organizationId, organizationId),
          eq(discoverySessions.advertiserId, advertiserId),
          eq(discoverySessions.quoteDay, utcDay(now)),
          gt(discoverySessions.expiresAt, now),
          eq(discoverySessions.catalogFingerprint, fingerprint),
        ),
      )
      .orderBy(desc(discoverySessions.id))
      .limit(1);
    return kept;
  }

  /**
   * The active catalog now, in session order (at most {@link MAX_DISCOVERY_PRODUCTS} products), with its version read
   * in the same statement (one snapshot) and its fingerprint, which is stored for that version when none is yet (the
   * update applies only while the version is unchanged, so a fingerprint is never stored for another catalog).
   */
  private async catalogNow() {
    const rows = await this.db
      .select({
        product: products,
        storefront: storefronts,
        sellerAccountId: organizations.publicId,
        version: sql<number>`(select version from ${catalogVersions} where id = 1)`.mapWith(Number),
      })
      .from(products)
      .innerJoin(storefronts, eq(storefronts.id, products.storefrontId))
      .innerJoin(organizations, eq(organizations.id, storefronts.organizationId))
      .where(and(eq(products.status, 'active'), eq(storefronts.status, 'active')))
      .orderBy(asc(storefronts.id), asc(products.id))
      .limit(MAX_DISCOVERY_PRODUCTS);
    const fingerprint = fingerprintOf(rows);
    const version = rows[0]?.version ?? 0;
    // An empty catalog carries no version (no row): nothing is stored; the next call reads it again, cheaply.
    if (rows.length > 0)
      await this.db
        .update(catalogVersions)
        .set({ fingerprint })
        .where(
          and(
            eq(catalogVersions.id, 1),
            eq(catalogVersions.version, version),
            isNull(catalogVersions.fingerprint),
          ),
        );
    return { rows, fingerprint, version };
  }

  /**
   * Starts a session: the active catalog `rows` (read now, with their `fingerprint`), its quotes fixed for today's UTC
   * day, written in one transaction (`within`, when the caller holds one).
   */
  private async start(
    organizationId: number,
    advertiserId: number,
    now: Date,
    rows: Awaited<ReturnType<Discovery['catalogNow']>>['rows'],
    fingerprint: string,
    within?: Tx,
  ) {
    const groups: DiscoveryGroup[] = [];
    const quotes: Omit<typeof discoveryQuotes.$inferInsert, 'sessionId'>[] = [];
    for (const r of rows) {
      let last = groups.at(-1);
      if (last?.storefrontId !== r.storefront.publicId) {
        last = {
          storefrontId: r.storefront.publicId,
          storefront: {
            id: r.storefront.publicId,
            name: r.storefront.name,
            currency: r.storefront.currency,
            sellerAccountId: r.sellerAccountId,
          },
          totalProducts: 0,
        };
        groups.push(last);
      }
      quotes.push({
        publicId: prefixedHexId('dqt'),
        groupIndex: groups.length - 1,
        position: last.totalProducts,
        productId: r.product.id,
        product: productView(r.product, r.storefront.publicId),
        storefront: last.storefront,
        options: r.product.pricingOptions.map(
          (o): DiscoveryQuoteOption => ({
            pricingOptionId: o.pricingOptionId,
            pricingModel: o.pricingModel,
            price: o.fixedPrice ?? o.floorPrice ?? null,
            priceType: o.fixedPrice !== undefined ? 'fixed' : 'floor',
            currency: o.currency,
          }),
        ),
      });
      last.totalProducts += 1;
    }
    const day = utcDay(now);
    const expiresAt = new Date(`${day}T00:00:00.000Z`);
    expiresAt.setUTCDate(expiresAt.getUTCDate() + 1);
    const write = async (tx: Tx) => {
      const [session] = await tx
        .insert(discoverySessions)
        .values({
          publicId: prefixedHexId('dsc'),
          organizationId,
          advertiserId,
          quoteDay: day,
          groups,
          createdAt: now,
          expiresAt,
          catalogFingerprint: fingerprint,
        })
        .returning();
      for (let i = 0; i < quotes.length; i += 500)
        await tx
          .insert(discoveryQuotes)
          .values(quotes.slice(i, i + 500).map((q) => ({ ...q, sessionId: session!.id })));
      return session!;
    };
    return within ? write(within) : this.db.transaction(write);
  }
}

type DiscoveryGroup = (typeof discoverySessions.$inferSelect)['groups'][number];

/**
 * The catalog fingerprint of a session's rows (module comment, "Kept sessions"): SHA-256 hex over each product's
 * storefront (public id, name, currency, Seller Account), product public id and pricing options, in session order.
 */
function fingerprintOf(
  rows: {
    product: { publicId: string; pricingOptions: unknown };
    storefront: { publicId: string; name: string; currency: string };
    sellerAccountId: string;
  }[],
): string {
  const hash = createHash('sha256');
  for (const r of rows)
    hash.update(
      `${JSON.stringify([r.storefront.publicId, r.storefront.name, r.storefront.currency, r.sellerAccountId, r.product.publicId, r.product.pricingOptions])}\n`,
    );
  return hash.digest('hex');
}
