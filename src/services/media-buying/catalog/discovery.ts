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
 * - **Kept sessions** (MCP `get_products`, {@link Discovery.products}): a call without a session reuses the newest
 *   session of the same Buyer Account, advertiser and UTC day whose catalog fingerprint (storefronts' id, name,
 *   currency, Seller Account, product ids and pricing options, in session order) equals the live catalog's, so a repeat
 *   call only reads; prices stay the quotes of that UTC day. The live catalog's fingerprint is kept by the database
 *   with its version (`catalog_versions`: a trigger bumps the version and clears the fingerprint in every transaction
 *   that writes products, storefronts or a Seller Account's public id); the first call after a change reads the
 *   catalog once, in the same statement as the version, and stores the fingerprint for that version. REST `new`
 *   always starts a session.
 * - Paging: REST pages with `groupOffset`/`groupLimit` over groups, and `productOffset`/`productsPerGroup` inside each
 *   group; MCP pages with an offset and a limit over the available products of the groups in scope, in session order,
 *   in SQL. A page of a kept session is two prepared statements: its context (the session, its advertiser, the Buyer
 *   Account's operator identity and the catalog version) and its quote rows.
 */
import { createHash } from 'node:crypto';
import { and, asc, desc, eq, gt, gte, isNull, lt, sql } from 'drizzle-orm';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../../../platform/clock.ts';
import { type Db, NamedStatement } from '../../../platform/database.ts';
import { prefixedHexId } from '../../../platform/ids.ts';
import {
  advertiserAccounts,
  advertisers,
  buyerOperatorIdentities,
  catalogVersions,
  type DiscoveryProductSnapshot,
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

/**
 * The advertiser a {@link Discovery.products} call without a session runs for: the Buyer Account's first active
 * advertiser, an advertiser (`adv_…`) of the Buyer Account, or the advertiser of an account link (`acc_…`) of the Buyer
 * Account (with `storefrontId`, a link with that storefront only).
 */
export type ProductsAccount =
  | { kind: 'first' }
  | { kind: 'advertiser'; publicId: string }
  | { kind: 'link'; publicId: string; storefrontId: number | null };

/**
 * Thrown by {@link Discovery.products} when the account it was given names nothing of the Buyer Account
 * (`account_not_found`), or the Buyer Account has no active advertiser to run for (`no_advertiser`).
 */
export class DiscoveryAccountError extends Error {
  constructor(readonly reason: 'account_not_found' | 'no_advertiser') {
    super(reason === 'account_not_found' ? 'account not found' : 'no active advertiser');
    this.name = 'DiscoveryAccountError';
  }
}

/** One page request of {@link Discovery.products}. */
export interface ProductsRequest {
  /** A later page: the session and advertiser its cursor names. Null: the kept session of `account`. */
  session: { discoveryId: string; advertiserId: string } | null;
  /** Whose kept session (ignored with `session`). */
  account: ProductsAccount;
  /** Only the products of this storefront (public id); null: every storefront of the session. */
  storefrontId: string | null;
  /** Available products to skip, in session order (storefront groups, then products). */
  skip: number;
  /** At most this many products. */
  take: number;
}

/** A product of a {@link ProductsPage}: its quote id, the product as the session saw it, and its quoted options. */
export interface ProductsPageItem {
  quoteId: string;
  product: DiscoveryProductSnapshot;
  options: DiscoveryQuoteOption[];
}

/** One page of {@link Discovery.products}. */
export interface ProductsPage {
  discoveryId: string;
  advertiserId: string;
  /** The UTC day the quotes are priced for (`YYYY-MM-DD`) and when they expire (ISO 8601, 00:00 UTC next day). */
  pricedForDay: string;
  expiresAt: string;
  /** The catalog version the page was read at (`catalog_versions.version`). */
  catalogVersion: number;
  products: ProductsPageItem[];
  /** Available products in scope (every page). */
  total: number;
  /** The storefronts in scope, in session order, with their available products. */
  sources: { storefrontId: string; name: string; productCount: number }[];
}

/** A session as {@link Discovery.products} reads it. */
interface SessionContext {
  id: number;
  publicId: string;
  quoteDay: string;
  groups: DiscoveryGroup[];
  expiresAt: Date;
  fingerprint: string | null;
}

/** The products the page cache of {@link Discovery.products} holds at most, over all its pages. */
const PAGE_CACHE_PRODUCTS = 10_000;

/** A cached page of {@link Discovery.products}: its quote rows and the available products of each group in scope. */
interface CachedPage {
  items: ProductsPageItem[];
  counts: number[];
}

/** A session found for {@link Discovery.products}, its advertiser, the catalog version, and whether all is available. */
interface FoundSession {
  session: SessionContext;
  advertiserId: string;
  version: number;
  allAvailable: boolean;
}

/** The context row of a call without a session (module comment, "Kept sessions"). */
interface KeptRow {
  advertiserId: number | null;
  advertiserPublicId: string | null;
  archived: boolean | null;
  operatorDomain: string | null;
  version: number | null;
  fingerprint: string | null;
  sessionId: number | null;
  sessionPublicId: string | null;
  quoteDay: string | null;
  groups: DiscoveryGroup[] | null;
  expiresAt: Date | null;
  sessionFingerprint: string | null;
}

/** The context row of a later page (the session its cursor names). */
interface CursorRow {
  id: number;
  publicId: string;
  quoteDay: string;
  groups: DiscoveryGroup[];
  expiresAt: Date;
  fingerprint: string | null;
  advertiserPublicId: string;
  operatorDomain: string | null;
  version: number | null;
  liveFingerprint: string | null;
}

/** Discovery sessions and their pages (module comment). */
export class Discovery {
  private readonly sessionQuery;
  private readonly pageQuery;
  /** The statements of {@link products}, built once and run by name. */
  private readonly statements;
  /**
   * Pages of {@link products} read so far, by session, availability (all, or the catalog version) and range: never
   * stale, since the key holds everything a page depends on as the database answered it for the request. Bounded by
   * {@link PAGE_CACHE_PRODUCTS} products.
   */
  private readonly pages = new LRUCache<string, CachedPage>({
    maxSize: PAGE_CACHE_PRODUCTS,
    sizeCalculation: (page) => page.items.length + 1,
  });

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

    const p = (name: string) => sql.placeholder(name);
    // The context of a call without a session: the advertiser (`adv`, one of three kinds), the Buyer Account's
    // operator identity, the catalog version and fingerprint, and the newest kept session of that fingerprint.
    const kept = (name: string, adv: ReturnType<typeof sql>) =>
      new NamedStatement<KeptRow>(
        name,
        sql`with adv as (${adv}),
          cv as (select version, fingerprint from ${catalogVersions} where id = 1)
        select adv.id as "advertiserId", adv.public_id as "advertiserPublicId", adv.archived as "archived",
          (select domain from ${buyerOperatorIdentities} where organization_id = ${p('orgId')}) as "operatorDomain",
          cv.version as "version", cv.fingerprint as "fingerprint",
          s.id as "sessionId", s.public_id as "sessionPublicId", s.quote_day::text as "quoteDay",
          s.groups as "groups", s.expires_at as "expiresAt", s.catalog_fingerprint as "sessionFingerprint"
        from (select 1) one
        left join adv on true
        left join cv on true
        left join lateral (
          select * from ${discoverySessions} ds
          where ds.organization_id = ${p('orgId')} and ds.advertiser_id = adv.id
            and ds.quote_day = ${p('day')}::date and ds.expires_at > ${p('now')}::timestamptz
            and ds.catalog_fingerprint = cv.fingerprint
          order by ds.id desc limit 1
        ) s on true`,
      );
    this.statements = {
      keptFirst: kept(
        'mb_products_kept_first',
        sql`select id, public_id, false as archived from ${advertisers}
          where organization_id = ${p('orgId')} and archived_at is null order by id limit 1`,
      ),
      keptAdvertiser: kept(
        'mb_products_kept_advertiser',
        sql`select id, public_id, archived_at is not null as archived from ${advertisers}
          where public_id = ${p('named')} and organization_id = ${p('orgId')}`,
      ),
      keptLink: kept(
        'mb_products_kept_link',
        sql`select a.id, a.public_id, a.archived_at is not null as archived
          from ${advertiserAccounts} l join ${advertisers} a on a.id = l.advertiser_id
          where l.public_id = ${p('named')} and l.organization_id = ${p('orgId')}
            and (${p('storefrontId')}::bigint is null or l.storefront_id = ${p('storefrontId')}::bigint)`,
      ),
      cursor: new NamedStatement<CursorRow>(
        'mb_products_cursor',
        sql`select s.id as "id", s.public_id as "publicId", s.quote_day::text as "quoteDay", s.groups as "groups",
            s.expires_at as "expiresAt", s.catalog_fingerprint as "fingerprint",
            a.public_id as "advertiserPublicId", o.domain as "operatorDomain",
            cv.version as "version", cv.fingerprint as "liveFingerprint"
          from ${discoverySessions} s
          join ${advertisers} a on a.id = s.advertiser_id
          left join ${buyerOperatorIdentities} o on o.organization_id = s.organization_id
          left join ${catalogVersions} cv on cv.id = 1
          where s.public_id = ${p('id')} and s.organization_id = ${p('orgId')}`,
      ),
      // A page of a session whose products are all available (it matches the live catalog's fingerprint).
      page: new NamedStatement<ProductsPageItem>(
        'mb_products_page',
        sql`select public_id as "quoteId", product, options from ${discoveryQuotes}
          where session_id = ${p('sessionId')} and group_index >= ${p('groupFrom')} and group_index < ${p('groupTo')}
          order by group_index, position
          limit ${p('take')} offset ${p('skip')}`,
      ),
      // A page over the available products only (the catalog moved since the session), with each group's count.
      livePage: new NamedStatement<{ counts: Record<string, number> } & Partial<ProductsPageItem>>(
        'mb_products_live_page',
        sql`with q as (
            select dq.id, dq.group_index, dq.position
            from ${discoveryQuotes} dq
            join ${products} pr on pr.id = dq.product_id
            join ${storefronts} sf on sf.id = pr.storefront_id
            where dq.session_id = ${p('sessionId')} and dq.group_index >= ${p('groupFrom')}
              and dq.group_index < ${p('groupTo')} and pr.status = 'active' and sf.status = 'active'
          ),
          counts as (
            select coalesce(jsonb_object_agg(group_index, n), '{}'::jsonb) as counts
            from (select group_index, count(*) as n from q group by group_index) c
          )
          select counts.counts as "counts", page."quoteId", page.product, page.options
          from counts left join lateral (
            select dq.public_id as "quoteId", dq.product, dq.options
            from q join ${discoveryQuotes} dq on dq.id = q.id
            order by q.group_index, q.position
            limit ${p('take')} offset ${p('skip')}
          ) page on true`,
      ),
    };
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
   * One page of the products of a discovery for MCP `get_products` (module comment, "Kept sessions", "Paging"): the
   * session `request.session` names, or else the kept session of `request.account`'s advertiser for today (UTC, by
   * the clock), started when there is none for the live catalog. The page holds the available products of the
   * storefronts in scope, in session order, from `skip`, at most `take`. Buyer Setup step 1 is checked.
   * @throws DiscoveryAccountError (no session: the account names nothing of the Buyer Account, or it has no active
   *   advertiser); ApiError 409 `BUYER_SETUP_REQUIRED`; 404 `NOT_FOUND` for an unknown session or an archived
   *   advertiser; 409 `CONFLICT` (`discovery_expired`); 422 when the session's advertiser is not `advertiserId`.
   */
  async products(organizationId: number, request: ProductsRequest): Promise<ProductsPage> {
    const now = this.clock.now();
    const found = request.session
      ? await this.namedSession(organizationId, request.session, now)
      : await this.keptSession(organizationId, request.account, now);
    const { session } = found;
    // The groups in scope: every group, or the storefront's.
    let groupFrom = 0;
    let groupTo = session.groups.length;
    if (request.storefrontId !== null) {
      const index = session.groups.findIndex((g) => g.storefrontId === request.storefrontId);
      groupFrom = Math.max(index, 0);
      groupTo = index + 1;
    }
    const inScope = session.groups.slice(groupFrom, groupTo);
    // A page is a function of the session's quote rows (written once, with the session) and, unless all its products
    // are available, of the catalog version: cached per instance under both, as read from the database just now.
    const key = `${session.id}:${found.allAvailable ? 'all' : found.version}:${groupFrom}:${groupTo}:${request.skip}:${request.take}`;
    let page = this.pages.get(key);
    if (!page) {
      page = await this.readPage(session.id, found.allAvailable, inScope, groupFrom, request);
      this.pages.set(key, page);
    }
    const { items, counts } = page;
    return {
      discoveryId: session.publicId,
      advertiserId: found.advertiserId,
      pricedForDay: session.quoteDay,
      expiresAt: session.expiresAt.toISOString(),
      catalogVersion: found.version,
      products: items,
      total: counts.reduce((n, c) => n + c, 0),
      sources: inScope.map((g, i) => ({
        storefrontId: g.storefrontId,
        name: g.storefront.name,
        productCount: counts[i]!,
      })),
    };
  }

  /** The quote rows of one page of {@link products} and the available products of each group in scope. */
  private async readPage(
    sessionId: number,
    allAvailable: boolean,
    inScope: DiscoveryGroup[],
    groupFrom: number,
    request: ProductsRequest,
  ): Promise<CachedPage> {
    const values = {
      sessionId,
      groupFrom,
      groupTo: groupFrom + inScope.length,
      take: request.take,
      skip: request.skip,
    };
    if (allAvailable) {
      const counts = inScope.map((g) => g.totalProducts);
      const total = counts.reduce((n, c) => n + c, 0);
      return { counts, items: request.skip < total ? await this.statements.page.rows(this.db, values) : [] };
    }
    const rows = inScope.length === 0 ? [] : await this.statements.livePage.rows(this.db, values);
    const byGroup = rows[0]?.counts ?? {};
    return {
      counts: inScope.map((_, i) => byGroup[String(groupFrom + i)] ?? 0),
      items: rows.filter((r): r is typeof r & ProductsPageItem => typeof r.quoteId === 'string'),
    };
  }

  /**
   * The session a later page names ({@link products}), with whether all its products are still available (the
   * session's fingerprint is the live catalog's).
   */
  private async namedSession(
    organizationId: number,
    named: { discoveryId: string; advertiserId: string },
    now: Date,
  ): Promise<FoundSession> {
    const [found] = await this.statements.cursor.rows(this.db, {
      id: named.discoveryId,
      orgId: organizationId,
    });
    // An unknown or another account's session is 404 before anything else (its existence never leaks).
    if (!found) throw notFound('Discovery', named.discoveryId);
    this.catalog.checkBuyerSetup(found.operatorDomain);
    if (found.expiresAt <= now)
      throw conflict('This discovery priced its quotes for an earlier UTC day; start a new discovery.', {
        reason: 'discovery_expired',
        expiredAt: found.expiresAt.toISOString(),
      });
    if (found.advertiserPublicId !== named.advertiserId) {
      // Another advertiser of this account is a 422; an unknown one stays a 404.
      await this.catalog.advertiser(organizationId, named.advertiserId);
      throw semanticValidation([
        {
          field: 'advertiserId',
          location: 'body',
          message: 'must be the advertiser the discovery started with',
        },
      ]);
    }
    return {
      session: found,
      advertiserId: found.advertiserPublicId,
      version: found.version ?? 0,
      allAvailable: found.fingerprint !== null && found.fingerprint === found.liveFingerprint,
    };
  }

  /**
   * The kept session of an account's advertiser for today ({@link products}): read with its context in one statement
   * while the live catalog's fingerprint is stored and a session of it exists; else the catalog is read, and a kept
   * session of its fingerprint reused or a new one started. Every product of it is available.
   */
  private async keptSession(
    organizationId: number,
    account: ProductsAccount,
    now: Date,
  ): Promise<FoundSession> {
    const statement =
      account.kind === 'first'
        ? this.statements.keptFirst
        : account.kind === 'advertiser'
          ? this.statements.keptAdvertiser
          : this.statements.keptLink;
    const [ctx] = await statement.rows(this.db, {
      orgId: organizationId,
      day: utcDay(now),
      now: now.toISOString(),
      ...(account.kind === 'first' ? {} : { named: account.publicId }),
      ...(account.kind === 'link' ? { storefrontId: account.storefrontId } : {}),
    });
    if (!ctx || ctx.advertiserId === null || ctx.advertiserPublicId === null)
      throw new DiscoveryAccountError(account.kind === 'first' ? 'no_advertiser' : 'account_not_found');
    this.catalog.checkBuyerSetup(ctx.operatorDomain);
    if (ctx.archived) throw notFound('Advertiser', ctx.advertiserPublicId);
    if (ctx.sessionId !== null)
      return {
        session: {
          id: ctx.sessionId,
          publicId: ctx.sessionPublicId!,
          quoteDay: ctx.quoteDay!,
          groups: ctx.groups!,
          expiresAt: ctx.expiresAt!,
          fingerprint: ctx.sessionFingerprint,
        },
        advertiserId: ctx.advertiserPublicId,
        version: ctx.version ?? 0,
        allAvailable: true,
      };
    // The catalog changed since its fingerprint was last stored, or this advertiser has no session of it today.
    const live = await this.catalogNow();
    const session =
      (await this.keptOf(organizationId, ctx.advertiserId, now, live.fingerprint)) ??
      (await this.start(organizationId, ctx.advertiserId, now, live.rows, live.fingerprint));
    return {
      session: { ...session, fingerprint: session.catalogFingerprint },
      advertiserId: ctx.advertiserPublicId,
      version: live.version,
      allAvailable: true,
    };
  }

  /** The newest kept session of an advertiser for today (UTC, `now`) built from a catalog of `fingerprint`. */
  private async keptOf(organizationId: number, advertiserId: number, now: Date, fingerprint: string) {
    const [kept] = await this.db
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
   * day, written in one transaction.
   */
  private async start(
    organizationId: number,
    advertiserId: number,
    now: Date,
    rows: Awaited<ReturnType<Discovery['catalogNow']>>['rows'],
    fingerprint: string,
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
    return this.db.transaction(async (tx) => {
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
    });
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
