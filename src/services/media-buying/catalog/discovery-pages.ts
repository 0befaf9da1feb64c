/**
 * The discovery pages of MCP `get_products` (part 3), over part 2's discovery sessions (`discovery.ts`):
 *
 * - {@link DiscoveryPages.find}: the session a call reads. A later page names its session (its cursor); a first page
 *   reads the **kept session** of the account's advertiser for today: in one prepared statement, the advertiser (the
 *   Buyer Account's first active one, an `adv_…` of it, or the advertiser of an account link `acc_…`), the Buyer
 *   Account's operator identity (Buyer Setup step 1), the catalog version and fingerprint the database keeps
 *   (`catalog_versions`), and the newest session of that advertiser, UTC day and fingerprint. Only when there is none
 *   (the catalog changed, or the first call of the day) is the catalog read and a session reused or started
 *   ({@link Discovery.keptOrStarted}).
 * - {@link DiscoveryPages.page}: one page of it, in SQL: an offset and a limit over the available products of the
 *   groups (storefronts) asked for, in session order (groups, then products). A session whose fingerprint is the live
 *   catalog's has every product available and pages over its quote rows alone; another one pages over the products
 *   still active in active storefronts, with each group's count. A page may also be narrowed to chosen products
 *   (`choose`, for `refine`): the session's available products are read (ids, delivery types, channels), the caller
 *   chooses, and the page is read over the chosen ones.
 *
 * Pages are cached per instance under everything they depend on as the database answered it for the call: the session
 * (its quote rows are written once, with it), the groups, the range, and the catalog version unless every product is
 * available. So a cached page is never stale, on any number of instances.
 */
import { sql } from 'drizzle-orm';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../../../platform/clock.ts';
import { type Db, NamedStatement } from '../../../platform/database.ts';
import {
  advertiserAccounts,
  advertisers,
  buyerOperatorIdentities,
  catalogVersions,
  type DiscoveryProductSnapshot,
  type DiscoveryQuoteOption,
  discoveryQuotes,
  discoverySessions,
  products,
  storefronts,
} from '../db/schema.ts';
import { conflict, notFound, semanticValidation } from '../media-buying-errors.ts';
import type { Catalog } from './catalog.ts';
import { type Discovery, utcDay } from './discovery.ts';

/**
 * The advertiser a first page runs for: the Buyer Account's first active advertiser, an advertiser (`adv_…`) of the
 * Buyer Account, or the advertiser of an account link (`acc_…`) of the Buyer Account (with `storefrontId`, a link with
 * that storefront only).
 */
export type ProductsAccount =
  | { kind: 'first' }
  | { kind: 'advertiser'; publicId: string }
  | { kind: 'link'; publicId: string; storefrontId: number | null };

/**
 * Thrown by {@link DiscoveryPages.find} when the account it was given names nothing of the Buyer Account
 * (`account_not_found`), or the Buyer Account has no active advertiser to run for (`no_advertiser`).
 */
export class DiscoveryAccountError extends Error {
  constructor(readonly reason: 'account_not_found' | 'no_advertiser') {
    super(reason === 'account_not_found' ? 'account not found' : 'no active advertiser');
    this.name = 'DiscoveryAccountError';
  }
}

/** The session a call reads ({@link DiscoveryPages.find}). */
export interface FoundDiscovery {
  /** The session's row id (cache keys, statements). */
  sessionId: number;
  discoveryId: string;
  advertiserId: string;
  /** The UTC day the quotes are priced for (`YYYY-MM-DD`) and when they expire (ISO 8601, 00:00 UTC next day). */
  pricedForDay: string;
  expiresAt: string;
  /** The session's groups in order: one storefront each (as it was at the start) and its product count. */
  groups: { storefrontId: string; name: string; totalProducts: number }[];
  /** The catalog version read for the call (`catalog_versions.version`). */
  catalogVersion: number;
  /** Every product of the session is available now: its fingerprint is the live catalog's. */
  allAvailable: boolean;
}

/** A product of a page: its quote id, the product as the session saw it, and its quoted options. */
export interface ProductsPageItem {
  quoteId: string;
  product: DiscoveryProductSnapshot;
  options: DiscoveryQuoteOption[];
}

/** An available product of a session, as {@link PageRequest.choose} sees it. */
export interface ProductCandidate {
  productId: string;
  groupIndex: number;
  deliveryType: string;
  channels: string[];
}

/** One page request ({@link DiscoveryPages.page}). */
export interface PageRequest {
  /** The indexes of the groups to page over, ascending. */
  groups: number[];
  /** Products to skip, and at most how many to answer. */
  skip: number;
  take: number;
  /** Narrows the page to the products chosen among the session's available products of `groups` (not cached). */
  choose?: (candidates: ProductCandidate[]) => ReadonlySet<string>;
}

/** One page: its products, and the products (available, or chosen) of each group asked for, in `groups` order. */
export interface DiscoveryPage {
  items: ProductsPageItem[];
  counts: number[];
  total: number;
}

/** The products the page cache holds at most, over all its pages. */
const PAGE_CACHE_PRODUCTS = 10_000;

type Group = (typeof discoverySessions.$inferSelect)['groups'][number];

/** The context row of a first page (module comment). */
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
  groups: Group[] | null;
  expiresAt: Date | null;
}

/** The context row of a later page (the session its cursor names). */
interface CursorRow {
  id: number;
  publicId: string;
  quoteDay: string;
  groups: Group[];
  expiresAt: Date;
  fingerprint: string | null;
  advertiserPublicId: string;
  operatorDomain: string | null;
  version: number | null;
  liveFingerprint: string | null;
}

/** The discovery pages of MCP `get_products` (module comment). Built once per instance. */
export class DiscoveryPages {
  /** The statements, built once and run by name. */
  private readonly statements;
  /** Pages read so far (module comment), bounded by {@link PAGE_CACHE_PRODUCTS} products. */
  private readonly pages = new LRUCache<string, DiscoveryPage>({
    maxSize: PAGE_CACHE_PRODUCTS,
    sizeCalculation: (page) => page.items.length + 1,
  });

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly catalog: Catalog,
    private readonly discovery: Discovery,
  ) {
    const p = (name: string) => sql.placeholder(name);
    // The context of a first page: the advertiser (`adv`, one of three kinds), the Buyer Account's operator identity,
    // the catalog version and fingerprint, and the newest kept session of that fingerprint.
    const kept = (name: string, adv: ReturnType<typeof sql>) =>
      new NamedStatement<KeptRow>(
        name,
        sql`with adv as (${adv}),
          cv as (select version, fingerprint from ${catalogVersions} where id = 1)
        select adv.id as "advertiserId", adv.public_id as "advertiserPublicId", adv.archived as "archived",
          (select domain from ${buyerOperatorIdentities} where organization_id = ${p('orgId')}) as "operatorDomain",
          cv.version as "version", cv.fingerprint as "fingerprint",
          s.id as "sessionId", s.public_id as "sessionPublicId", s.quote_day::text as "quoteDay",
          s.groups as "groups", s.expires_at as "expiresAt"
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
    // The session's products still active in active storefronts, among the groups asked for.
    const live = sql`select dq.id, dq.group_index, dq.position, dq.product
      from ${discoveryQuotes} dq
      join ${products} pr on pr.id = dq.product_id
      join ${storefronts} sf on sf.id = pr.storefront_id
      where dq.session_id = ${p('sessionId')} and dq.group_index = any(${p('groups')}::int[])
        and pr.status = 'active' and sf.status = 'active'`;
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
      // A page of a session whose products are all available: its quote rows alone.
      page: new NamedStatement<ProductsPageItem>(
        'mb_products_page',
        sql`select public_id as "quoteId", product, options from ${discoveryQuotes}
          where session_id = ${p('sessionId')} and group_index = any(${p('groups')}::int[])
          order by group_index, position
          limit ${p('take')} offset ${p('skip')}`,
      ),
      // A page over the available products only, with each group's count (one row even for an empty page).
      livePage: new NamedStatement<{ counts: Record<string, number> } & Partial<ProductsPageItem>>(
        'mb_products_live_page',
        sql`with q as (${live}),
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
      // The available products a choice is made among.
      candidates: new NamedStatement<ProductCandidate>(
        'mb_products_candidates',
        sql`select q.product->>'productId' as "productId", q.group_index as "groupIndex",
            q.product->>'deliveryType' as "deliveryType", q.product->'channels' as "channels"
          from (${live}) q order by q.group_index, q.position`,
      ),
      // A page over chosen products.
      chosenPage: new NamedStatement<ProductsPageItem>(
        'mb_products_chosen_page',
        sql`select public_id as "quoteId", product, options from ${discoveryQuotes}
          where session_id = ${p('sessionId')} and group_index = any(${p('groups')}::int[])
            and product->>'productId' = any(${p('ids')}::text[])
          order by group_index, position
          limit ${p('take')} offset ${p('skip')}`,
      ),
    };
  }

  /**
   * The session a call reads (module comment): the one `session` names (a later page), else the kept session of
   * `account`'s advertiser for today (UTC, by the clock), started when there is none for the live catalog. Buyer Setup
   * step 1 is checked.
   * @throws DiscoveryAccountError (no session: the account names nothing of the Buyer Account, or it has no active
   *   advertiser); ApiError 409 `BUYER_SETUP_REQUIRED`; 404 `NOT_FOUND` for an unknown session or an archived
   *   advertiser; 409 `CONFLICT` (`discovery_expired`); 422 when the session's advertiser is not `advertiserId`.
   */
  async find(
    organizationId: number,
    request: {
      session: { discoveryId: string; advertiserId: string } | null;
      account: ProductsAccount;
    },
  ): Promise<FoundDiscovery> {
    const now = this.clock.now();
    return request.session
      ? this.named(organizationId, request.session, now)
      : this.kept(organizationId, request.account, now);
  }

  /** One page of a session found by {@link find} (module comment). */
  async page(found: FoundDiscovery, request: PageRequest): Promise<DiscoveryPage> {
    const values = {
      sessionId: found.sessionId,
      groups: request.groups,
      take: request.take,
      skip: request.skip,
    };
    if (request.choose) {
      const candidates =
        request.groups.length === 0 ? [] : await this.statements.candidates.rows(this.db, values);
      const chosen = request.choose(candidates);
      const counts = request.groups.map(
        (g) => candidates.filter((c) => c.groupIndex === g && chosen.has(c.productId)).length,
      );
      const total = counts.reduce((n, c) => n + c, 0);
      const items =
        request.skip < total
          ? await this.statements.chosenPage.rows(this.db, { ...values, ids: [...chosen] })
          : [];
      return { items, counts, total };
    }
    const key = `${found.sessionId}:${found.allAvailable ? 'all' : found.catalogVersion}:${request.groups.join(',')}:${request.skip}:${request.take}`;
    let page = this.pages.get(key);
    if (!page) {
      page = await this.read(found, request, values);
      this.pages.set(key, page);
    }
    return page;
  }

  /** A page as the database has it (not cached). */
  private async read(
    found: FoundDiscovery,
    request: PageRequest,
    values: Record<string, unknown>,
  ): Promise<DiscoveryPage> {
    if (found.allAvailable) {
      const counts = request.groups.map((g) => found.groups[g]?.totalProducts ?? 0);
      const total = counts.reduce((n, c) => n + c, 0);
      const items = request.skip < total ? await this.statements.page.rows(this.db, values) : [];
      return { items, counts, total };
    }
    const rows = request.groups.length === 0 ? [] : await this.statements.livePage.rows(this.db, values);
    const byGroup = rows[0]?.counts ?? {};
    const counts = request.groups.map((g) => byGroup[String(g)] ?? 0);
    return {
      items: rows.filter((r): r is typeof r & ProductsPageItem => typeof r.quoteId === 'string'),
      counts,
      total: counts.reduce((n, c) => n + c, 0),
    };
  }

  /** The session a later page names, with whether all its products are still available. */
  private async named(
    organizationId: number,
    named: { discoveryId: string; advertiserId: string },
    now: Date,
  ): Promise<FoundDiscovery> {
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
    return foundOf(found, found.advertiserPublicId, found.version ?? 0, {
      allAvailable: found.fingerprint !== null && found.fingerprint === found.liveFingerprint,
    });
  }

  /** The kept session of an account's advertiser for today (module comment). Every product of it is available. */
  private async kept(organizationId: number, account: ProductsAccount, now: Date): Promise<FoundDiscovery> {
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
      return foundOf(
        {
          id: ctx.sessionId,
          publicId: ctx.sessionPublicId!,
          quoteDay: ctx.quoteDay!,
          groups: ctx.groups!,
          expiresAt: ctx.expiresAt!,
        },
        ctx.advertiserPublicId,
        ctx.version ?? 0,
        { allAvailable: true },
      );
    // The catalog changed since its fingerprint was last stored, or this advertiser has no session of it today.
    const { session, version } = await this.discovery.keptOrStarted(organizationId, ctx.advertiserId, now);
    return foundOf(session, ctx.advertiserPublicId, version, { allAvailable: true });
  }
}

/** A {@link FoundDiscovery} of a session row. */
function foundOf(
  session: { id: number; publicId: string; quoteDay: string; groups: Group[]; expiresAt: Date },
  advertiserId: string,
  catalogVersion: number,
  { allAvailable }: { allAvailable: boolean },
): FoundDiscovery {
  return {
    sessionId: session.id,
    discoveryId: session.publicId,
    advertiserId,
    pricedForDay: session.quoteDay,
    expiresAt: session.expiresAt.toISOString(),
    groups: session.groups.map((g) => ({
      storefrontId: g.storefrontId,
      name: g.storefront.name,
      totalProducts: g.totalProducts,
    })),
    catalogVersion,
    allAvailable,
  };
}
