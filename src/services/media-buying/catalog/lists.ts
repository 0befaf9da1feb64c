/**
 * The offset lists of a Buyer Account (spec "Lists and discovery": `take`, `skip`, `meta.pagination`), as prepared
 * statements built once per instance. Each page and its total are one query (the total a scalar count subquery;
 * past the last row the total is counted on its own). Orders are total (the id breaks every tie), so consecutive
 * pages never repeat or skip a row: newest first for the audit log and the delivery metrics, creation order for the
 * other records.
 *
 * Caps of `take` per endpoint are {@link LIST_CAPS}; the routes' schemas enforce them.
 */
import { aliasedTable, and, asc, count, desc, eq, sql } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import { type Db, NamedStatement } from '../../../platform/database.ts';
import {
  advertiserAccounts,
  advertisers,
  auditLogs,
  campaigns,
  creatives,
  deliveryMetrics,
  humanFeedback,
  type MeasurementKind,
  measurementRecords,
  mediaBuys,
  organizations,
  packages,
  products,
  salesAgents,
  storefronts,
  testCohorts,
  users,
} from '../db/schema.ts';
import { fromMinor } from './money.ts';
import {
  advertiserAccountView,
  campaignView,
  creativeView,
  humanFeedbackView,
  measurementView,
  mediaBuyView,
  packageView,
  testCohortView,
} from './views.ts';

/** Largest `take` per list (the spec: "capped per endpoint, usually 100 or 200"). */
export const LIST_CAPS = {
  auditLogs: 200,
  metrics: 200,
  creatives: 100,
  testCohorts: 100,
  humanFeedback: 100,
  measurement: 100,
  advertiserAccounts: 100,
  campaigns: 100,
  mediaBuys: 100,
  storefrontProducts: 100,
  accountLinks: 100,
} as const;

/** The default `take` of every list. */
export const DEFAULT_TAKE = 50;

/** A row of the human-feedback page (its statement aliases the columns). */
interface FeedbackRow {
  publicId: string;
  rating: number;
  comment: string;
  createdAt: Date;
  mediaBuyId: string | null;
  authorId: string | null;
  total: number;
}

/** A page request: `take` rows after `skip`; `organizationId` null (an unbound sandbox) matches nothing. */
export interface PageQuery {
  organizationId: number | null;
  take: number;
  skip: number;
}

/** A page of views and the total count. */
export interface Page<T> {
  items: T[];
  total: number;
}

const NO_ORGANIZATION = 0; // identity ids start at 1: matches no row

async function paged<R extends { total: number }, V>(
  rows: R[],
  q: PageQuery,
  recount: () => Promise<number>,
  view: (row: R) => V,
): Promise<Page<V>> {
  const total = rows[0]?.total ?? (q.skip === 0 ? 0 : await recount());
  return { items: rows.map(view), total };
}

/** The prepared list queries of a Buyer Account (module comment). */
export class BuyerLists {
  private readonly q;

  constructor(private readonly db: Db) {
    const org = sql.placeholder('orgId');
    const take = sql.placeholder('take');
    const skip = sql.placeholder('skip');
    const actor = aliasedTable(users, 'actor');
    const seller = aliasedTable(organizations, 'seller');
    /** `select count(*)` of `table` where `column` is the organization. */
    const countOf = (table: PgTable, column: PgColumn) =>
      db.select({ n: count() }).from(table).where(eq(column, org));
    /**
     * A page's total: the count as a scalar subquery, run once per page (an index count; the page's joins run for its
     * rows only, where a window count would join every row of the account).
     */
    const totalOf = (counted: ReturnType<typeof countOf>) => sql<number>`(${counted})`.mapWith(Number);
    /** The total of a page past its last row, on its own. */
    const countWhere = (table: PgTable, column: PgColumn, name: string) =>
      countOf(table, column).prepare(name);
    /** A page of advertiser accounts (account links) whose `owner` column is the organization (buyer or seller side). */
    const accountLinksWhere = (owner: PgColumn, name: string) =>
      db
        .select({
          row: advertiserAccounts,
          advertiserId: advertisers.publicId,
          storefrontId: storefronts.publicId,
          sellerAccountId: seller.publicId,
          total: totalOf(countOf(advertiserAccounts, owner)),
        })
        .from(advertiserAccounts)
        .innerJoin(advertisers, eq(advertisers.id, advertiserAccounts.advertiserId))
        .innerJoin(storefronts, eq(storefronts.id, advertiserAccounts.storefrontId))
        .innerJoin(seller, eq(seller.id, advertiserAccounts.sellerOrganizationId))
        .where(eq(owner, org))
        .orderBy(asc(advertiserAccounts.id))
        .limit(take)
        .offset(skip)
        .prepare(name);
    const metricsCount = db
      .select({ n: count() })
      .from(deliveryMetrics)
      .innerJoin(mediaBuys, eq(mediaBuys.id, deliveryMetrics.mediaBuyId))
      .where(
        and(
          eq(deliveryMetrics.organizationId, org),
          sql`(${sql.placeholder('mediaBuyId')}::text is null or ${mediaBuys.publicId} = ${sql.placeholder('mediaBuyId')}::text)`,
        ),
      );
    const measurementCount = db
      .select({ n: count() })
      .from(measurementRecords)
      .where(
        and(eq(measurementRecords.organizationId, org), eq(measurementRecords.kind, sql.placeholder('kind'))),
      );
    this.q = {
      audit: db
        .select({
          row: auditLogs,
          actorId: actor.publicId,
          total: totalOf(countOf(auditLogs, auditLogs.organizationId)),
        })
        .from(auditLogs)
        .leftJoin(actor, eq(actor.id, auditLogs.actorUserId))
        .where(eq(auditLogs.organizationId, org))
        .orderBy(desc(auditLogs.id))
        .limit(take)
        .offset(skip)
        .prepare('mb_list_audit'),
      auditCount: countWhere(auditLogs, auditLogs.organizationId, 'mb_count_audit'),
      metrics: db
        .select({
          row: deliveryMetrics,
          mediaBuyId: mediaBuys.publicId,
          packageId: packages.publicId,
          total: totalOf(metricsCount),
        })
        .from(deliveryMetrics)
        .innerJoin(mediaBuys, eq(mediaBuys.id, deliveryMetrics.mediaBuyId))
        .innerJoin(packages, eq(packages.id, deliveryMetrics.packageId))
        .where(
          and(
            eq(deliveryMetrics.organizationId, org),
            sql`(${sql.placeholder('mediaBuyId')}::text is null or ${mediaBuys.publicId} = ${sql.placeholder('mediaBuyId')}::text)`,
          ),
        )
        .orderBy(desc(deliveryMetrics.day), desc(deliveryMetrics.id))
        .limit(take)
        .offset(skip)
        .prepare('mb_list_metrics'),
      metricsCount: metricsCount.prepare('mb_count_metrics'),
      creatives: db
        .select({
          row: creatives,
          advertiserId: advertisers.publicId,
          total: totalOf(countOf(creatives, creatives.organizationId)),
        })
        .from(creatives)
        .innerJoin(advertisers, eq(advertisers.id, creatives.advertiserId))
        .where(eq(creatives.organizationId, org))
        .orderBy(asc(creatives.id))
        .limit(take)
        .offset(skip)
        .prepare('mb_list_creatives'),
      creativesCount: countWhere(creatives, creatives.organizationId, 'mb_count_creatives'),
      cohorts: db
        .select({
          row: testCohorts,
          advertiserId: advertisers.publicId,
          total: totalOf(countOf(testCohorts, testCohorts.organizationId)),
        })
        .from(testCohorts)
        .innerJoin(advertisers, eq(advertisers.id, testCohorts.advertiserId))
        .where(eq(testCohorts.organizationId, org))
        .orderBy(asc(testCohorts.id))
        .limit(take)
        .offset(skip)
        .prepare('mb_list_cohorts'),
      cohortsCount: countWhere(testCohorts, testCohorts.organizationId, 'mb_count_cohorts'),
      // Read by name with the view's columns only and mapped by hand: Drizzle's per-field row mapping of this page (100
      // rows) was the largest share of the route's CPU profile (bench/README.md).
      feedback: new NamedStatement<FeedbackRow>(
        'mb_list_feedback',
        sql`select f.public_id as "publicId", f.rating as "rating", f.comment as "comment",
            f.created_at as "createdAt", b.public_id as "mediaBuyId", u.public_id as "authorId",
            (${countOf(humanFeedback, humanFeedback.organizationId)}) as "total"
          from ${humanFeedback} f
          left join ${mediaBuys} b on b.id = f.media_buy_id
          left join ${users} u on u.id = f.author_user_id
          where f.organization_id = ${org}
          order by f.id
          limit ${take} offset ${skip}`,
      ),
      feedbackCount: countWhere(humanFeedback, humanFeedback.organizationId, 'mb_count_feedback'),
      measurement: db
        .select({ row: measurementRecords, total: totalOf(measurementCount) })
        .from(measurementRecords)
        .where(
          and(
            eq(measurementRecords.organizationId, org),
            eq(measurementRecords.kind, sql.placeholder('kind')),
          ),
        )
        .orderBy(asc(measurementRecords.id))
        .limit(take)
        .offset(skip)
        .prepare('mb_list_measurement'),
      measurementCount: measurementCount.prepare('mb_count_measurement'),
      accounts: accountLinksWhere(advertiserAccounts.organizationId, 'mb_list_accounts'),
      accountsCount: countWhere(advertiserAccounts, advertiserAccounts.organizationId, 'mb_count_accounts'),
      links: accountLinksWhere(advertiserAccounts.sellerOrganizationId, 'mb_list_links'),
      linksCount: countWhere(advertiserAccounts, advertiserAccounts.sellerOrganizationId, 'mb_count_links'),
      campaigns: db
        .select({
          row: campaigns,
          advertiserId: advertisers.publicId,
          total: totalOf(countOf(campaigns, campaigns.organizationId)),
        })
        .from(campaigns)
        .innerJoin(advertisers, eq(advertisers.id, campaigns.advertiserId))
        .where(eq(campaigns.organizationId, org))
        .orderBy(asc(campaigns.id))
        .limit(take)
        .offset(skip)
        .prepare('mb_list_campaigns'),
      campaignsCount: countWhere(campaigns, campaigns.organizationId, 'mb_count_campaigns'),
      mediaBuys: db
        .select({
          buy: mediaBuys,
          advertiserId: advertisers.publicId,
          campaignId: campaigns.publicId,
          storefrontId: storefronts.publicId,
          salesAgentId: salesAgents.publicId,
          sellerAccountId: seller.publicId,
          accountId: advertiserAccounts.publicId,
          total: totalOf(countOf(mediaBuys, mediaBuys.organizationId)),
        })
        .from(mediaBuys)
        .innerJoin(advertisers, eq(advertisers.id, mediaBuys.advertiserId))
        .innerJoin(campaigns, eq(campaigns.id, mediaBuys.campaignId))
        .innerJoin(storefronts, eq(storefronts.id, mediaBuys.storefrontId))
        .innerJoin(salesAgents, eq(salesAgents.id, mediaBuys.salesAgentId))
        .innerJoin(seller, eq(seller.id, mediaBuys.sellerOrganizationId))
        .leftJoin(advertiserAccounts, eq(advertiserAccounts.id, mediaBuys.advertiserAccountId))
        .where(eq(mediaBuys.organizationId, org))
        .orderBy(asc(mediaBuys.id))
        .limit(take)
        .offset(skip)
        .prepare('mb_list_media_buys'),
      mediaBuysCount: countWhere(mediaBuys, mediaBuys.organizationId, 'mb_count_media_buys'),
      packagesOf: db
        .select({ pkg: packages, productId: products.publicId })
        .from(packages)
        .innerJoin(products, eq(products.id, packages.productId))
        .where(sql`${packages.mediaBuyId} = any(${sql.placeholder('ids')}::bigint[])`)
        .orderBy(asc(packages.mediaBuyId), asc(packages.id))
        .prepare('mb_list_media_buy_packages'),
    };
  }

  private params(q: PageQuery) {
    return { orgId: q.organizationId ?? NO_ORGANIZATION, take: q.take, skip: q.skip };
  }

  private async counted(
    statement: { execute(p: Record<string, unknown>): Promise<{ n: number }[]> },
    p: Record<string, unknown>,
  ) {
    return (await statement.execute(p))[0]!.n;
  }

  /** The audit log of the account, newest first: every mutation made in it (who, what, when; never a secret). */
  async auditLogs(q: PageQuery) {
    const p = this.params(q);
    return paged(
      await this.q.audit.execute(p),
      q,
      () => this.counted(this.q.auditCount, p),
      (r) => ({
        id: String(r.row.id),
        action: r.row.action,
        targetType: r.row.targetType,
        targetId: r.row.targetId,
        actor: { userId: r.actorId, kind: r.row.actorKind },
        metadata: r.row.metadata,
        createdAt: r.row.createdAt.toISOString(),
      }),
    );
  }

  /** Daily delivery per package, newest day first (optionally one media buy's). */
  async metrics(q: PageQuery & { mediaBuyId: string | null }) {
    const p = { ...this.params(q), mediaBuyId: q.mediaBuyId };
    return paged(
      await this.q.metrics.execute(p),
      q,
      () => this.counted(this.q.metricsCount, p),
      (r) => ({
        mediaBuyId: r.mediaBuyId,
        packageId: r.packageId,
        date: r.row.day,
        impressions: r.row.impressions,
        clicks: r.row.clicks,
        spend: fromMinor(r.row.spendMinor, r.row.currency),
        currency: r.row.currency,
      }),
    );
  }

  /** Creatives, in creation order. */
  async creatives(q: PageQuery) {
    const p = this.params(q);
    return paged(
      await this.q.creatives.execute(p),
      q,
      () => this.counted(this.q.creativesCount, p),
      (r) => creativeView(r.row, r.advertiserId),
    );
  }

  /** Test cohorts, in creation order. */
  async testCohorts(q: PageQuery) {
    const p = this.params(q);
    return paged(
      await this.q.cohorts.execute(p),
      q,
      () => this.counted(this.q.cohortsCount, p),
      (r) => testCohortView(r.row, r.advertiserId),
    );
  }

  /** Human feedback, in creation order. */
  async humanFeedback(q: PageQuery) {
    const p = this.params(q);
    return paged(
      await this.q.feedback.rows(this.db, p),
      q,
      () => this.counted(this.q.feedbackCount, p),
      (r) => humanFeedbackView(r, r),
    );
  }

  /** Measurement-engine records of one kind, in creation order. */
  async measurement(q: PageQuery & { kind: MeasurementKind }) {
    const p = { ...this.params(q), kind: q.kind };
    return paged(
      await this.q.measurement.execute(p),
      q,
      () => this.counted(this.q.measurementCount, p),
      (r) => measurementView(r.row),
    );
  }

  /** Advertiser accounts (account links) of the Buyer Account, in creation order. */
  async advertiserAccounts(q: PageQuery) {
    const p = this.params(q);
    return paged(
      await this.q.accounts.execute(p),
      q,
      () => this.counted(this.q.accountsCount, p),
      (r) => advertiserAccountView(r.row, r),
    );
  }

  /** Account links on the storefronts of Seller Account `organizationId`, in creation order. */
  async accountLinks(q: PageQuery) {
    const p = this.params(q);
    return paged(
      await this.q.links.execute(p),
      q,
      () => this.counted(this.q.linksCount, p),
      (r) => advertiserAccountView(r.row, r),
    );
  }

  /**
   * Media buys of the Buyer Account with their packages and persisted seller account, in creation order (two
   * prepared queries: the page with its total, then the packages of that page).
   */
  async mediaBuys(q: PageQuery) {
    const p = this.params(q);
    const rows = await this.q.mediaBuys.execute(p);
    const pkgs =
      rows.length === 0
        ? []
        : await this.q.packagesOf.execute({ ids: `{${rows.map((r) => r.buy.id).join(',')}}` });
    const byBuy = new Map<number, typeof pkgs>();
    for (const k of pkgs) {
      const list = byBuy.get(k.pkg.mediaBuyId) ?? [];
      list.push(k);
      byBuy.set(k.pkg.mediaBuyId, list);
    }
    return paged(
      rows,
      q,
      () => this.counted(this.q.mediaBuysCount, p),
      (r) =>
        mediaBuyView(
          r.buy,
          r,
          (byBuy.get(r.buy.id) ?? []).map((k) => packageView(k.pkg, k.productId, r.buy.currency)),
        ),
    );
  }

  /** Campaigns, in creation order. */
  async campaigns(q: PageQuery) {
    const p = this.params(q);
    return paged(
      await this.q.campaigns.execute(p),
      q,
      () => this.counted(this.q.campaignsCount, p),
      (r) => campaignView(r.row, r.advertiserId),
    );
  }
}
