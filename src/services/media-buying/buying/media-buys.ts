/**
 * Media buys sent through the ad-platform adapters (spec "MCP", "Errors", "Media-buy change outcomes"): what
 * `create_media_buy` and `update_media_buy` do, over part 2's records (`Catalog.createMediaBuy`; a buy made here is on
 * the REST lists). Every check runs before the ad platform is called and answers `not_dispatched`; the platform's own
 * outcome follows the table: `unknown` (the change stays unapplied here, the dispatch is marked `outcome_unknown`,
 * cleanup is required), `rolled_back` and `not_dispatched` (nothing is kept: the writes of the attempt are rolled
 * back to a savepoint).
 *
 * A storefront with an approval hold keeps new buys provisional (`pending_start`, unconfirmed) until the operator
 * approves ({@link MediaBuyDesk.approve}): a buy whose `end_time` has passed by then fails with `flight_window_elapsed`
 * and is never resent; a past `start_time` alone is sent as a start now.
 */
import { and, desc, eq, sql } from 'drizzle-orm';
import type { Clock } from '../../../platform/clock.ts';
import type { Db, Executor } from '../../../platform/database.ts';
import { type Acting, type Catalog, convertMinor, fromMinor, toMinor } from '../catalog/index.ts';
import {
  advertiserAccounts,
  advertisers,
  campaigns,
  deliveryMetrics,
  discoveryQuotes,
  discoverySessions,
  mediaBuyDispatches,
  mediaBuys,
  packages,
  pricingRules,
  products,
  type SalesAgentCapability,
  type SourceRejection,
  storefronts,
} from '../db/schema.ts';
import { insufficientMediaBudget } from '../media-buying-errors.ts';
import { OPERATOR, type Organizations } from '../organizations/index.ts';
import type { AdPlatformAdapter, DispatchResult, PlatformScope } from './adapter.ts';
import { accountNotFound, asRefusal, BuyingRefusal, outcomeDetails, refused } from './errors.ts';

/** How the buyer names the account to bill (AdCP `account-ref`). */
export type AccountRef = { accountId: string } | { brandId: string | undefined; operator: string };

/** One package of a new buy. */
export interface NewPackage {
  productId: string;
  pricingOptionId: string;
  budget: number;
  impressions?: number;
  /** AdCP `targeting_overlay` (its keys are the dimensions checked against the ad server's). */
  targeting?: Record<string, unknown>;
  /** A discovery quote (`dqt_`) the price was taken from (`ext.quote_id`). */
  quoteId?: string;
}

/** A `create_media_buy` for one storefront (one source). */
export interface NewMediaBuy {
  account: AccountRef;
  /** The campaign to fund it (`ext.campaign_id`); default: the advertiser's newest active campaign. */
  campaignId?: string;
  name?: string;
  /** Null: as soon as possible. */
  startTime: Date | null;
  endTime: Date;
  /** ISO 4217 of the budgets (`total_budget.currency`); default: the storefront's. */
  currency?: string;
  packages: NewPackage[];
}

/** An `update_media_buy` (only the fields that change). */
export interface MediaBuyChange {
  mediaBuyId: string;
  accountId?: string;
  paused?: boolean;
  canceled?: boolean;
  startTime?: Date;
  endTime?: Date;
  totalBudget?: { amount: number; currency: string };
}

/** Which operation each update field needs from the sales agent (AdCP `update_media_buy`). */
const FIELD_OPERATIONS: Record<string, (c: MediaBuyChange) => SalesAgentCapability | null> = {
  total_budget: (c) => (c.totalBudget ? 'update_budget' : null),
  start_time: (c) => (c.startTime ? 'update_flight' : null),
  end_time: (c) => (c.endTime ? 'update_flight' : null),
  paused: (c) => (c.paused === undefined ? null : c.paused ? 'pause' : 'resume'),
  canceled: (c) => (c.canceled ? 'cancel' : null),
};

/** Thrown inside a savepoint to roll the attempt back, carrying the error to raise after. */
class Rollback extends Error {
  constructor(readonly error: unknown) {
    super('rollback');
  }
}

/** The outcome error of a failed dispatch (module comment). */
function dispatchError(
  result: Extract<DispatchResult, { status: 'failed' }>,
  mediaBuyId: string | null,
): BuyingRefusal {
  const ids = mediaBuyId ? { media_buy_id: mediaBuyId } : {};
  if (result.outcome === 'unknown')
    return new BuyingRefusal({
      code: 'SERVICE_UNAVAILABLE',
      message:
        'The ad platform received the change and its result cannot be confirmed or undone. Do not resend it: read the media buy, then send any further change as a new request.',
      recovery: 'terminal',
      details: { ...ids, ...outcomeDetails('unknown', 'adapter_update_outcome_unknown') },
    });
  if (result.outcome === 'rolled_back')
    return new BuyingRefusal({
      code: 'SERVICE_UNAVAILABLE',
      message:
        'The ad platform took the request, then removed it after a later step failed; nothing changed.',
      recovery: 'transient',
      details: { ...ids, ...outcomeDetails('rolled_back', 'adapter_rolled_back') },
    });
  const rejection: SourceRejection = result.rejection ?? {
    code: 'SERVICE_UNAVAILABLE',
    message: 'The ad platform refused the request before anything was sent.',
    recovery: 'transient',
  };
  const buyerActionable = rejection.recovery === 'correctable';
  return new BuyingRefusal({
    code: buyerActionable ? 'INVALID_REQUEST' : rejection.code,
    message: rejection.message,
    recovery: rejection.recovery,
    details: { ...ids, source_code: rejection.code, ...outcomeDetails('not_dispatched', 'adapter_refused') },
    // The source's own code, passed through unchanged (spec "Errors": unknown codes are passed through).
    ...(buyerActionable ? { buyer_reason: { code: rejection.code, message: rejection.message } } : {}),
  });
}

/** Media buys through the ad platforms (module comment). */
export class MediaBuyDesk {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly catalog: Catalog,
    private readonly organizations: Organizations,
    private readonly adapter: AdPlatformAdapter,
  ) {}

  /** The UTC day of the injected clock, `YYYY-MM-DD`. */
  private today(): string {
    return this.clock.now().toISOString().slice(0, 10);
  }

  /**
   * The storefront (internal and public id) whose products a package list names; null when none is an active
   * product (the catalog then names the package).
   */
  async storefrontOfProducts(tx: Executor, productIds: string[]) {
    const [row] = await tx
      .select({ id: storefronts.id, publicId: storefronts.publicId })
      .from(products)
      .innerJoin(storefronts, eq(storefronts.id, products.storefrontId))
      .where(and(eq(products.publicId, productIds[0] ?? ''), eq(products.status, 'active')));
    return row ?? null;
  }

  /**
   * The buyer's active account link on a storefront named by `ref`.
   * @throws BuyingRefusal `ACCOUNT_NOT_FOUND` (not the buyer's, or not on this storefront), `ACCOUNT_SETUP_REQUIRED`
   *   (`pending_approval`, or `rejected`/`closed`: terminal), `ACCOUNT_PAYMENT_REQUIRED`, `ACCOUNT_SUSPENDED`.
   */
  async activeAccount(tx: Executor, organizationId: number, storefrontId: number, ref: AccountRef) {
    const where =
      'accountId' in ref
        ? eq(advertiserAccounts.publicId, ref.accountId)
        : eq(advertisers.publicId, ref.brandId ?? '');
    const [row] = await tx
      .select({ account: advertiserAccounts })
      .from(advertiserAccounts)
      .innerJoin(advertisers, eq(advertisers.id, advertiserAccounts.advertiserId))
      .where(
        and(
          where,
          eq(advertiserAccounts.organizationId, organizationId),
          eq(advertiserAccounts.storefrontId, storefrontId),
        ),
      );
    if (!row || ('operator' in ref && ref.operator !== row.account.operator))
      throw accountNotFound('accountId' in ref ? ref.accountId : undefined, 'account');
    const status = row.account.status;
    const refusals: Record<string, [string, 'correctable' | 'terminal', string]> = {
      pending_approval: [
        'ACCOUNT_SETUP_REQUIRED',
        'correctable',
        'The account link waits for the seller’s approval.',
      ],
      payment_required: [
        'ACCOUNT_PAYMENT_REQUIRED',
        'correctable',
        'The seller requires an outstanding balance to be paid.',
      ],
      suspended: ['ACCOUNT_SUSPENDED', 'terminal', 'The seller suspended this account link.'],
      rejected: [
        'ACCOUNT_SETUP_REQUIRED',
        'terminal',
        'The seller rejected this account link; it needs re-onboarding.',
      ],
      closed: ['ACCOUNT_SETUP_REQUIRED', 'terminal', 'This account link is closed; it needs re-onboarding.'],
    };
    const refusal = refusals[status];
    if (refusal)
      throw refused({
        code: refusal[0],
        message: refusal[2],
        recovery: refusal[1],
        reason: `account_${status}`,
        field: 'account',
        details: { account_id: row.account.publicId, status },
        ...(refusal[1] === 'correctable' ? { buyerReason: refusal[0] } : {}),
      });
    return row.account;
  }

  /**
   * The FX source of a REST create (part 2's route) naming `productId`: the ad platform's rate for that product's
   * storefront and sales agent, or `FX_RATE_UNAVAILABLE`; counts the campaign's buys in other currencies.
   */
  async fxSourceFor(tx: Executor, productId: string) {
    const [row] = await tx
      .select({ storefrontId: products.storefrontId, salesAgentId: products.salesAgentId })
      .from(products)
      .where(eq(products.publicId, productId));
    return this.fx(tx, { storefrontId: row?.storefrontId ?? 0, salesAgentId: row?.salesAgentId ?? 0 });
  }

  /** A FX source for the catalog: the adapter's rate, or `FX_RATE_UNAVAILABLE` (503, `transient`). */
  private fx(tx: Executor, scope: PlatformScope) {
    return async (from: string, to: string) => {
      const rate = await this.adapter.fxRate(tx, scope, from, to);
      if (rate === null)
        throw refused({
          code: 'FX_RATE_UNAVAILABLE',
          message: `No ${from}/${to} rate is available now; retry later.`,
          recovery: 'transient',
          reason: 'fx_rate_unavailable',
          details: { from, to },
        });
      return rate;
    };
  }

  /**
   * Creates one buy on one storefront and sends it to the ad platform (module comment), in `tx`.
   * @returns the buy, its packages, its account, and whether it is held for approval.
   * @throws BuyingRefusal for every refusal (see {@link asRefusal} for the catalog's), and the dispatch outcomes.
   */
  async create(
    tx: Executor,
    acting: Acting,
    storefront: { id: number; publicId: string },
    input: NewMediaBuy,
  ) {
    const now = this.clock.now();
    const account = await this.activeAccount(tx, acting.organizationId, storefront.id, input.account);
    const campaign = await this.campaignFor(
      tx,
      acting.organizationId,
      account.advertiserId,
      input.campaignId,
    );
    if (input.endTime <= now)
      throw refused({
        code: 'INVALID_REQUEST',
        message: 'end_time has passed; choose a flight that ends in the future.',
        recovery: 'correctable',
        reason: 'flight_ended',
        field: 'end_time',
      });
    for (const [i, p] of input.packages.entries()) {
      if (p.quoteId === undefined) continue;
      const [quote] = await tx
        .select({ quoteDay: discoverySessions.quoteDay })
        .from(discoveryQuotes)
        .innerJoin(discoverySessions, eq(discoverySessions.id, discoveryQuotes.sessionId))
        .where(
          and(
            eq(discoveryQuotes.publicId, p.quoteId),
            eq(discoverySessions.organizationId, acting.organizationId),
          ),
        );
      if (!quote)
        throw refused({
          code: 'REFERENCE_NOT_FOUND',
          message: `Quote ${p.quoteId} not found; rerun discovery.`,
          recovery: 'correctable',
          reason: 'quote_not_found',
          field: `packages[${i}].ext.quote_id`,
        });
      if (quote.quoteDay < this.today())
        throw refused({
          code: 'FX_QUOTE_EXPIRED',
          message: `Quote ${p.quoteId} was priced for ${quote.quoteDay} (UTC); rerun discovery and resubmit.`,
          recovery: 'correctable',
          reason: 'fx_quote_expired',
          field: `packages[${i}].ext.quote_id`,
          details: { quote_id: p.quoteId, priced_for_day: quote.quoteDay },
        });
    }
    const [agentRow] = await tx
      .select({ salesAgentId: products.salesAgentId })
      .from(products)
      .where(eq(products.publicId, input.packages[0]!.productId));
    const attempt = async (sp: Executor) => {
      const { buy, packages: pkgs } = await this.catalog
        .createMediaBuy(
          sp,
          acting,
          {
            campaignId: campaign.publicId,
            ...(input.name === undefined ? {} : { name: input.name }),
            // A past start_time is sent as a start now (spec "Errors", flight_window_elapsed).
            startTime: input.startTime === null || input.startTime < now ? now : input.startTime,
            endTime: input.endTime,
            currency: input.currency ?? campaign.currency,
            packages: input.packages.map((p) => ({
              productId: p.productId,
              pricingOptionId: p.pricingOptionId,
              budget: p.budget,
              ...(p.impressions === undefined ? {} : { impressions: p.impressions }),
            })),
          },
          {
            fxRate: this.fx(sp, { storefrontId: storefront.id, salesAgentId: agentRow?.salesAgentId ?? 0 }),
            provisional: false,
          },
        )
        .catch((e: unknown) => {
          throw asRefusal(e);
        });
      const scope = { storefrontId: buy.storefrontId, salesAgentId: buy.salesAgentId };
      const caps = await this.adapter.capabilities(sp, scope);
      const unsupported = input.packages.flatMap((p, i) =>
        caps.targeting === null
          ? []
          : Object.keys(p.targeting ?? {})
              .filter((k) => !caps.targeting!.includes(k))
              .map((k) => ({ field: `packages[${i}].targeting_overlay.${k}`, dimension: k })),
      );
      if (unsupported.length > 0)
        throw refused({
          code: 'UNSUPPORTED_FEATURE',
          message: `The ad server does not take targeting on ${unsupported.map((u) => u.dimension).join(', ')}; remove it and resubmit.`,
          recovery: 'correctable',
          reason: 'unsupported_targeting',
          field: unsupported[0]!.field,
          details: { unsupported, supported_targeting: caps.targeting },
          buyerReason: 'unsupported_targeting',
        });
      if (caps.approvalRequired) {
        await sp
          .update(mediaBuys)
          .set({ status: 'pending_start', confirmedAt: null })
          .where(eq(mediaBuys.id, buy.id));
        await this.recordDispatch(sp, buy.id, 'held', null, null);
        return {
          buy: { ...buy, status: 'pending_start' as const, confirmedAt: null },
          packages: pkgs,
          held: true,
        };
      }
      const result = await this.adapter.createOrder(sp, scope, {
        mediaBuyId: buy.publicId,
        currency: buy.currency,
        totalBudgetMinor: buy.totalBudgetMinor,
        startTime: buy.startTime,
        endTime: buy.endTime,
        packages: pkgs.map((p) => ({ packageId: p.publicId, budgetMinor: p.budgetMinor })),
      });
      if (result.status === 'failed') {
        if (result.outcome !== 'unknown') throw new Rollback(dispatchError(result, null));
        await this.recordDispatch(sp, buy.id, 'outcome_unknown', null, null);
        return { buy, packages: pkgs, held: false, unknown: dispatchError(result, buy.publicId) };
      }
      await this.recordDispatch(sp, buy.id, 'dispatched', result.platformRef, null);
      return { buy, packages: pkgs, held: false };
    };
    const created = await this.savepoint(tx, attempt);
    if ('unknown' in created && created.unknown) throw created.unknown;
    return { ...created, account };
  }

  /** Runs `fn` in a savepoint of `tx`; a {@link Rollback} rolls it back and raises its error. */
  private async savepoint<T>(tx: Executor, fn: (sp: Executor) => Promise<T>): Promise<T> {
    try {
      return await (tx as Db).transaction(fn);
    } catch (e) {
      throw e instanceof Rollback ? e.error : e;
    }
  }

  private async recordDispatch(
    tx: Executor,
    mediaBuyId: number,
    state: 'held' | 'dispatched' | 'failed' | 'outcome_unknown' | 'rolled_back',
    platformRef: string | null,
    forwardError: { code: string; message: string } | null,
  ) {
    const now = this.clock.now();
    await tx
      .insert(mediaBuyDispatches)
      .values({ mediaBuyId, state, platformRef, forwardError, createdAt: now, updatedAt: now })
      .onConflictDoUpdate({
        target: mediaBuyDispatches.mediaBuyId,
        set: { state, forwardError, updatedAt: now, ...(platformRef ? { platformRef } : {}) },
      });
  }

  /**
   * The campaign funding a buy: the named one of the advertiser, else its newest active one.
   * @throws BuyingRefusal `REFERENCE_NOT_FOUND` (`correctable`) on `ext.campaign_id`.
   */
  private async campaignFor(tx: Executor, organizationId: number, advertiserId: number, campaignId?: string) {
    const [row] = await tx
      .select()
      .from(campaigns)
      .where(
        and(
          eq(campaigns.organizationId, organizationId),
          eq(campaigns.advertiserId, advertiserId),
          campaignId === undefined ? eq(campaigns.status, 'active') : eq(campaigns.publicId, campaignId),
        ),
      )
      .orderBy(desc(campaigns.id))
      .limit(1);
    if (!row)
      throw refused({
        code: 'REFERENCE_NOT_FOUND',
        message:
          campaignId === undefined
            ? "The account's advertiser has no active campaign; create one or name it in ext.campaign_id."
            : `Campaign ${campaignId} is not a campaign of the account's advertiser.`,
        recovery: 'correctable',
        reason: 'campaign_not_found',
        field: 'ext.campaign_id',
      });
    return row;
  }

  /**
   * The operator's approval of a held buy: dispatched to the ad platform, or failed with `flight_window_elapsed`
   * when its `end_time` has passed (never resent). A past `start_time` is sent as a start now.
   * @returns the dispatch state and, on failure, the error the buyer is shown.
   * @returns null for a buy that is not held, or that its buyer paused or canceled while held.
   */
  async approve(mediaBuyPublicId: string) {
    return this.db.transaction(async (tx) => {
      const [row] = await tx
        .select({ buy: mediaBuys, dispatch: mediaBuyDispatches })
        .from(mediaBuys)
        .innerJoin(mediaBuyDispatches, eq(mediaBuyDispatches.mediaBuyId, mediaBuys.id))
        .where(
          and(
            eq(mediaBuys.publicId, mediaBuyPublicId),
            eq(mediaBuyDispatches.state, 'held'),
            // A held buy the buyer paused or canceled meanwhile is not sent (resumed, it can be approved again).
            eq(mediaBuys.status, 'pending_start'),
          ),
        )
        .for('update');
      if (!row) return null;
      const { buy } = row;
      const now = this.clock.now();
      const reject = async (forward: { code: string; message: string }, state: 'failed' | 'rolled_back') => {
        await tx
          .update(mediaBuys)
          .set({ status: 'rejected', updatedAt: now, revision: sql`${mediaBuys.revision} + 1` })
          .where(eq(mediaBuys.id, buy.id));
        await this.recordDispatch(tx, buy.id, state, null, forward);
      };
      if (buy.endTime <= now) {
        const forward = {
          code: 'flight_window_elapsed',
          message: 'The flight ended before the buy was approved.',
        };
        await reject(forward, 'failed');
        return { state: 'failed' as const, error: forwardingFailed(buy.publicId, forward) };
      }
      const startTime = buy.startTime < now ? now : buy.startTime;
      const scope = { storefrontId: buy.storefrontId, salesAgentId: buy.salesAgentId };
      const pkgs = await tx.select().from(packages).where(eq(packages.mediaBuyId, buy.id));
      const result = await this.adapter.createOrder(tx, scope, {
        mediaBuyId: buy.publicId,
        currency: buy.currency,
        totalBudgetMinor: buy.totalBudgetMinor,
        startTime,
        endTime: buy.endTime,
        packages: pkgs.map((p) => ({ packageId: p.publicId, budgetMinor: p.budgetMinor })),
      });
      if (result.status === 'failed') {
        const error = dispatchError(result, buy.publicId);
        if (result.outcome === 'unknown')
          await this.recordDispatch(tx, buy.id, 'outcome_unknown', null, null);
        else
          await reject(
            { code: error.body.code, message: error.body.message },
            result.outcome === 'rolled_back' ? 'rolled_back' : 'failed',
          );
        return { state: result.outcome, error: error.body };
      }
      await tx
        .update(mediaBuys)
        .set({
          startTime,
          status: startTime <= now ? 'active' : 'pending_start',
          confirmedAt: now,
          updatedAt: now,
          revision: sql`${mediaBuys.revision} + 1`,
        })
        .where(eq(mediaBuys.id, buy.id));
      await this.recordDispatch(tx, buy.id, 'dispatched', result.platformRef, null);
      await this.organizations.audit(
        tx,
        buy.organizationId,
        OPERATOR,
        'media_buy.dispatched',
        'media_buy',
        buy.publicId,
        { startTime: startTime.toISOString() },
      );
      return { state: 'dispatched' as const, error: null };
    });
  }

  /**
   * Changes a live buy (module comment): declared capabilities first (`CAPABILITY_NOT_SUPPORTED`, no state change),
   * then the budget rules (`PRICING_NOT_CONFIGURED`, `CURRENCY_MISMATCH`, `SPEND_DENOMINATION_UNRESOLVED`,
   * `BUDGET_TOO_LOW`, `FX_RATE_UNAVAILABLE`, `INSUFFICIENT_MEDIA_BUDGET`), then the ad platform.
   * @throws BuyingRefusal for each refusal and for the dispatch outcomes.
   */
  async update(tx: Executor, acting: Acting, storefrontId: number | null, change: MediaBuyChange) {
    const found = await this.lockedBuy(tx, acting, storefrontId, change);
    const { buy } = found;
    const [dispatch] = await tx
      .select()
      .from(mediaBuyDispatches)
      .where(eq(mediaBuyDispatches.mediaBuyId, buy.id));
    if (dispatch?.state === 'failed' && dispatch.forwardError)
      throw new BuyingRefusal(forwardingFailed(buy.publicId, dispatch.forwardError));
    // A buy held for approval is not on the ad platform yet: its changes are local (see `attempt`).
    const held = dispatch?.state === 'held';
    if (['canceled', 'completed', 'rejected'].includes(buy.status))
      throw refused({
        code: 'INVALID_STATE',
        message: `Media buy ${buy.publicId} is ${buy.status}; it cannot change.`,
        recovery: 'terminal',
        reason: 'media_buy_final',
        details: { media_buy_status: buy.status },
      });
    const scope = { storefrontId: buy.storefrontId, salesAgentId: buy.salesAgentId };
    const caps = await this.adapter.capabilities(tx, scope);
    const unsupported = Object.entries(FIELD_OPERATIONS).flatMap(([field, op]) => {
      const needed = op(change);
      return needed && !caps.operations.includes(needed)
        ? [
            {
              mediaBuyId: buy.publicId,
              salesAgentId: found.salesAgentId,
              field,
              reason: `operation_not_declared:${needed}`,
            },
          ]
        : [];
    });
    if (unsupported.length > 0)
      throw refused({
        code: 'CAPABILITY_NOT_SUPPORTED',
        message: `The sales agent does not declare ${unsupported.map((u) => u.field).join(', ')}; nothing changed.`,
        recovery: 'correctable',
        reason: 'capability_not_supported',
        field: unsupported[0]!.field,
        details: { unsupported },
      });
    const now = this.clock.now();
    const set: Partial<typeof mediaBuys.$inferInsert> = {};
    if (change.totalBudget)
      set.totalBudgetMinor = await this.checkBudget(tx, found, change.totalBudget, scope);
    if (change.startTime) set.startTime = change.startTime < now ? now : change.startTime;
    if (change.endTime) set.endTime = change.endTime;
    const start = set.startTime ?? buy.startTime;
    const end = set.endTime ?? buy.endTime;
    if ((change.startTime || change.endTime) && end <= start)
      throw refused({
        code: 'INVALID_REQUEST',
        message: 'end_time must be after start_time.',
        recovery: 'correctable',
        reason: 'invalid_flight',
        field: 'end_time',
      });
    if (change.canceled) set.status = 'canceled';
    else if (change.paused === true) set.status = 'paused';
    else if (change.paused === false && buy.status === 'paused')
      set.status = !held && start <= now ? 'active' : 'pending_start';
    const attempt = async (sp: Executor) => {
      const [updated] = await sp
        .update(mediaBuys)
        .set({ ...set, updatedAt: now, revision: sql`${mediaBuys.revision} + 1` })
        .where(eq(mediaBuys.id, buy.id))
        .returning();
      if (set.totalBudgetMinor !== undefined) await this.spreadBudget(sp, buy.id, set.totalBudgetMinor);
      const result = await this.sendChange(sp, buy, change, set, held);
      if (result.status === 'failed') throw new Rollback(dispatchError(result, buy.publicId));
      await this.organizations.audit(
        sp,
        acting.organizationId,
        acting,
        'media_buy.updated',
        'media_buy',
        buy.publicId,
        {
          fields: Object.keys(set),
        },
      );
      return updated!;
    };
    try {
      return { buy: await this.savepoint(tx, attempt), currency: buy.currency };
    } catch (e) {
      // An unknown outcome leaves the change unapplied here and marks the buy for cleanup.
      if (e instanceof BuyingRefusal && e.body.details?.mutation_outcome === 'unknown')
        await this.recordDispatch(tx, buy.id, 'outcome_unknown', null, null);
      throw e;
    }
  }

  /**
   * The buy an update names, its row locked (`FOR UPDATE`) before any check: a concurrent update (or the operator's
   * approval) waits, so the status and totals the checks read are the ones written over.
   * @throws BuyingRefusal `MEDIA_BUY_NOT_FOUND`, `ACCOUNT_NOT_FOUND`.
   */
  private async lockedBuy(tx: Executor, acting: Acting, storefrontId: number | null, change: MediaBuyChange) {
    const read = await this.catalog.mediaBuy(acting.organizationId, change.mediaBuyId, tx).catch(() => null);
    const [locked] = read
      ? await tx.select().from(mediaBuys).where(eq(mediaBuys.id, read.buy.id)).for('update')
      : [];
    const found = read && locked ? { ...read, buy: locked } : null;
    if (!found || (storefrontId !== null && found.buy.storefrontId !== storefrontId))
      throw refused({
        code: 'MEDIA_BUY_NOT_FOUND',
        message: `Media buy ${change.mediaBuyId} not found.`,
        recovery: 'correctable',
        reason: 'media_buy_not_found',
        field: 'media_buy_id',
      });
    if (change.accountId !== undefined && change.accountId !== found.accountId)
      throw accountNotFound(change.accountId, 'account');
    return found;
  }

  /**
   * Sends a change of a buy to the ad platform. A held buy is not on the platform yet: nothing is sent (a cancel ends
   * its dispatch, so it is never forwarded; other changes wait for the approval).
   */
  private async sendChange(
    sp: Executor,
    buy: typeof mediaBuys.$inferSelect,
    change: MediaBuyChange,
    set: Partial<typeof mediaBuys.$inferInsert>,
    held: boolean,
  ): Promise<DispatchResult> {
    const scope = { storefrontId: buy.storefrontId, salesAgentId: buy.salesAgentId };
    if (held) {
      if (change.canceled) await this.recordDispatch(sp, buy.id, 'failed', null, null);
      return { status: 'accepted', platformRef: `held_${buy.publicId}` };
    }
    if (change.canceled) return this.adapter.cancelOrder(sp, scope, buy.publicId);
    if (change.totalBudget || change.startTime || change.endTime)
      return this.adapter.updateOrder(sp, scope, buy.publicId, {
        ...(set.totalBudgetMinor === undefined ? {} : { totalBudgetMinor: set.totalBudgetMinor }),
        ...(set.startTime ? { startTime: set.startTime } : {}),
        ...(set.endTime ? { endTime: set.endTime } : {}),
      });
    if (change.paused !== undefined) return this.adapter.setPaused(sp, scope, buy.publicId, change.paused);
    return { status: 'accepted', platformRef: `unchanged_${buy.publicId}` };
  }

  /**
   * The budget rules of a change of `total_budget` (module comment of {@link MediaBuyDesk.update}).
   * @returns the new total in minor units. @throws BuyingRefusal.
   */
  private async checkBudget(
    tx: Executor,
    found: Awaited<ReturnType<Catalog['mediaBuy']>>,
    totalBudget: { amount: number; currency: string },
    scope: PlatformScope,
  ): Promise<number> {
    const { buy } = found;
    const change = { totalBudget };
    const [rule] = await tx
      .select()
      .from(pricingRules)
      .where(eq(pricingRules.salesAgentId, buy.salesAgentId));
    if (!rule)
      throw refused({
        code: 'PRICING_NOT_CONFIGURED',
        message: `The fee terms of ${buy.publicId} are unknown: its sales agent has no pricing rule.`,
        recovery: 'terminal',
        reason: 'pricing_not_configured',
        field: 'total_budget',
        details: { unpricedBuyIds: [buy.publicId], salesAgentId: found.salesAgentId },
      });
    if (change.totalBudget.currency !== buy.currency)
      throw refused({
        code: 'CURRENCY_MISMATCH',
        message: `The budget is in ${change.totalBudget.currency}; media buy ${buy.publicId} is in ${buy.currency}.`,
        recovery: 'correctable',
        reason: 'currency_mismatch',
        field: 'total_budget.currency',
        details: { budgetCurrency: change.totalBudget.currency, expectedCurrency: buy.currency },
      });
    const newMinor = toMinor(change.totalBudget.amount, buy.currency);
    if (newMinor === null || newMinor === 0)
      throw refused({
        code: 'INVALID_REQUEST',
        message: `total_budget must be positive with at most ${buy.currency}'s decimals.`,
        recovery: 'correctable',
        reason: 'invalid_budget',
        field: 'total_budget.amount',
      });
    const [delivered] = await tx
      .select({ total: sql<string>`coalesce(sum(${deliveryMetrics.spendMinor}), 0)` })
      .from(deliveryMetrics)
      .where(eq(deliveryMetrics.mediaBuyId, buy.id));
    const spend = await this.adapter.spendToDate(tx, scope, Number(delivered!.total), buy.currency);
    if (spend.currency === null)
      throw refused({
        code: 'SPEND_DENOMINATION_UNRESOLVED',
        message: 'The spend of this media buy has no resolvable currency; exclude it from the request.',
        recovery: 'terminal',
        reason: 'spend_denomination_unresolved',
        details: { mediaBuyIds: [buy.publicId], unresolvedCount: 1 },
      });
    if (newMinor < spend.spendMinor)
      throw refused({
        code: 'BUDGET_TOO_LOW',
        message: `total_budget is below the ${fromMinor(spend.spendMinor, buy.currency)} ${buy.currency} already spent.`,
        recovery: 'correctable',
        reason: 'budget_below_spend',
        field: 'total_budget.amount',
        buyerReason: 'BUDGET_TOO_LOW',
      });
    await this.checkCampaignBudget(tx, buy, newMinor, scope);
    return newMinor;
  }

  /** Spreads a new total over a buy's live packages in proportion to their budgets (the remainder to the last). */
  private async spreadBudget(tx: Executor, mediaBuyId: number, totalMinor: number) {
    const pkgs = await tx
      .select()
      .from(packages)
      .where(eq(packages.mediaBuyId, mediaBuyId))
      .orderBy(packages.id);
    const before = pkgs.reduce((s, p) => s + p.budgetMinor, 0);
    let left = totalMinor;
    for (const [i, p] of pkgs.entries()) {
      const share =
        i === pkgs.length - 1 ? left : Math.floor((p.budgetMinor * totalMinor) / Math.max(before, 1));
      left -= share;
      await tx.update(packages).set({ budgetMinor: share }).where(eq(packages.id, p.id));
    }
  }

  /** The campaign budget against a buy's new total (other live buys at today's rate). @throws BuyingRefusal. */
  private async checkCampaignBudget(
    tx: Executor,
    buy: typeof mediaBuys.$inferSelect,
    newMinor: number,
    scope: PlatformScope,
  ) {
    const [campaign] = await tx
      .select()
      .from(campaigns)
      .where(eq(campaigns.id, buy.campaignId))
      .for('update');
    const rows = await tx
      .select({
        id: mediaBuys.id,
        currency: mediaBuys.currency,
        total: mediaBuys.totalBudgetMinor,
        status: mediaBuys.status,
      })
      .from(mediaBuys)
      .where(eq(mediaBuys.campaignId, buy.campaignId));
    const fx = this.fx(tx, scope);
    const toCampaign = async (minor: number, currency: string) =>
      currency === campaign!.currency
        ? minor
        : convertMinor(minor, currency, campaign!.currency, await fx(currency, campaign!.currency));
    let committed = 0;
    for (const r of rows)
      if (r.id !== buy.id && r.status !== 'canceled' && r.status !== 'rejected')
        committed += await toCampaign(r.total, r.currency);
    const requested = await toCampaign(newMinor, buy.currency);
    if (committed + requested > campaign!.budgetTotalMinor) {
      const error = asRefusal(
        insufficientMediaBudget({
          campaignId: campaign!.publicId,
          currency: campaign!.currency,
          budgetTotal: fromMinor(campaign!.budgetTotalMinor, campaign!.currency),
          committed: fromMinor(committed, campaign!.currency),
          requested: fromMinor(requested, campaign!.currency),
        }),
      );
      throw error;
    }
  }
}

/**
 * The error of a held buy whose forwarding failed (spec "Errors", `flight_window_elapsed`): `correctable`, submit a
 * new `create_media_buy` with a current `end_time`; the failed buy is never resent.
 */
function forwardingFailed(mediaBuyId: string, forward: { code: string; message: string }) {
  return {
    code: 'INVALID_REQUEST',
    message: `Media buy ${mediaBuyId} was not forwarded to the storefront: ${forward.message} Submit a new create_media_buy with a current end_time.`,
    recovery: 'correctable' as const,
    details: {
      media_buy_id: mediaBuyId,
      reason: 'storefront_forwarding_failed',
      source_outcome: 'precondition_failed',
      forward_error: forward,
      mutation_outcome: 'not_dispatched',
      cleanup_required: false,
      retry_safe: false,
    },
  };
}
