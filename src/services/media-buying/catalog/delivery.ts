/**
 * Delivery of live media buys: an ad platform behind {@link AdPlatformAdapter} reports impressions, clicks and spend
 * per package and UTC day; the `media-buying:simulate-delivery` job (hourly, and on the operator's demand) asks it for
 * every completed day of every live buy that has no row yet, on the injected clock. So reporting moves when the clock
 * does: a day is reported once it has ended (00:00 UTC), never twice (unique package and day).
 *
 * Status moves made here (AdCP `media-buy-status`), each with an audit row: `pending_start` -> `active` once the start
 * time has passed, `active` -> `completed` once the end time has passed and its last day is reported. The last day of
 * a flight is the UTC day of `endTime - 1 ms` (a flight ending at 00:00 UTC does not deliver on that day).
 */
import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { and, asc, eq, inArray, isNotNull, lte, sql } from 'drizzle-orm';
import type { Clock } from '../../../platform/clock.ts';
import type { Db, Executor } from '../../../platform/database.ts';
import { defineTask } from '../../../platform/jobs.ts';
import { auditLogs, deliveryMetrics, mediaBuys, packages, products } from '../db/schema.ts';
import { exponentOf } from './money.ts';

/** What the adapter is asked for one package on one UTC day. */
export interface DeliveryRequest {
  mediaBuyId: string;
  packageId: string;
  /** `YYYY-MM-DD` (UTC). */
  day: string;
  pricingModel: string;
  /** Price per unit (per 1,000 impressions for cpm/vcpm, per click for cpc, per view for cpcv/cpv, per day for flat_rate), decimal major units. */
  unitPrice: number;
  currency: string;
  /** What the package may still spend, minor units. */
  remainingMinor: number;
  /** The even share of the package budget for one day of the flight, minor units. */
  dailyBudgetMinor: number;
}

/** One day of delivery of one package. */
export interface DailyDelivery {
  impressions: number;
  clicks: number;
  spendMinor: number;
}

/** An ad platform that runs packages and reports their delivery (a real platform's reporting API, or the simulator). */
export interface AdPlatformAdapter {
  /** The delivery of one package on one completed UTC day; spend never exceeds `remainingMinor`. */
  dailyDelivery(request: DeliveryRequest): Promise<DailyDelivery>;
}

/**
 * The built-in ad platform: deterministic numbers from the package id and the day (the same request always gets the
 * same answer, so a retried job writes what the first would have). It spends 80-100% of the day's even budget share
 * (capped by what remains), buys impressions at the unit price and clicks at a 0.2-0.8% rate.
 */
export class SimulatedAdPlatform implements AdPlatformAdapter {
  async dailyDelivery(r: DeliveryRequest): Promise<DailyDelivery> {
    const seed = createHash('sha256').update(`${r.packageId}:${r.day}`).digest();
    const pace = 0.8 + (seed.readUInt16BE(0) / 0xffff) * 0.2;
    const ctr = 0.002 + (seed.readUInt16BE(2) / 0xffff) * 0.006;
    const spendMinor = Math.max(0, Math.min(r.remainingMinor, Math.floor(r.dailyBudgetMinor * pace)));
    const spend = spendMinor / 10 ** exponentOf(r.currency);
    const price = r.unitPrice > 0 ? r.unitPrice : 1;
    let impressions: number;
    let clicks: number;
    switch (r.pricingModel) {
      case 'cpc':
        clicks = Math.floor(spend / price);
        impressions = Math.floor(clicks / ctr);
        break;
      case 'cpcv':
      case 'cpv':
        impressions = Math.floor((spend / price) * 1.25);
        clicks = Math.floor(impressions * ctr);
        break;
      case 'flat_rate':
        impressions = Math.floor(spend * 400);
        clicks = Math.floor(impressions * ctr);
        break;
      default:
        impressions = Math.floor((spend / price) * 1000);
        clicks = Math.floor(impressions * ctr);
    }
    return { impressions, clicks, spendMinor };
  }
}

const DAY_MS = 86_400_000;

function dayOf(at: Date): string {
  return at.toISOString().slice(0, 10);
}

function addDays(day: string, n: number): string {
  return dayOf(new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS));
}

/** Runs delivery for the live media buys (module comment). */
export class DeliveryRunner {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly adapter: AdPlatformAdapter,
  ) {}

  /**
   * Reports every completed day of every live buy that has none yet, and moves statuses (each move audit-logged, actor
   * kind `system`).
   * @returns how many package-days were written.
   */
  async run(): Promise<number> {
    const now = this.clock.now();
    await this.db.transaction(async (tx) => {
      const started = await tx
        .update(mediaBuys)
        .set({ status: 'active', updatedAt: now, revision: sql`${mediaBuys.revision} + 1` })
        // Only confirmed buys start: a buy held for the operator's approval (`confirmed_at` null) stays provisional.
        .where(
          and(
            eq(mediaBuys.status, 'pending_start'),
            lte(mediaBuys.startTime, now),
            isNotNull(mediaBuys.confirmedAt),
          ),
        )
        .returning({ organizationId: mediaBuys.organizationId, publicId: mediaBuys.publicId });
      for (const b of started) await this.audit(tx, b, 'media_buy.started', 'pending_start', 'active', now);
    });
    const live = await this.db
      .select({ id: mediaBuys.id })
      .from(mediaBuys)
      .where(
        and(eq(mediaBuys.status, 'active'), lte(mediaBuys.startTime, now), isNotNull(mediaBuys.confirmedAt)),
      )
      .orderBy(asc(mediaBuys.id));
    let written = 0;
    for (const { id } of live) written += await this.runBuy(id, now);
    return written;
  }

  /**
   * One buy: reads what is reported, asks the adapter for the missing ended days with no transaction open (a real
   * platform's reporting API may be slow), then writes them in one short transaction under the buy's row lock. The
   * adapter is deterministic and rows are unique per package and day, so a concurrent or retried run writes nothing
   * twice.
   */
  private async runBuy(buyId: number, now: Date): Promise<number> {
    const [buy] = await this.db.select().from(mediaBuys).where(eq(mediaBuys.id, buyId));
    if (buy?.status !== 'active') return 0;
    const today = dayOf(now);
    const firstDay = dayOf(buy.startTime);
    // The last day the flight touches: a flight ending at 00:00 UTC ends with the day before.
    const lastDay = dayOf(new Date(buy.endTime.getTime() - 1));
    const flightDays = Math.max(1, Math.round((Date.parse(lastDay) - Date.parse(firstDay)) / DAY_MS) + 1);
    const pkgs = await this.db
      .select({ pkg: packages, product: products })
      .from(packages)
      .innerJoin(products, eq(products.id, packages.productId))
      .where(eq(packages.mediaBuyId, buy.id))
      .orderBy(asc(packages.id));
    const live = pkgs.filter((p) => !p.pkg.paused && !p.pkg.canceled);
    const reported = live.length
      ? await this.db
          .select({
            packageId: deliveryMetrics.packageId,
            lastDay: sql<string>`max(${deliveryMetrics.day})::text`,
            spent: sql<string>`sum(${deliveryMetrics.spendMinor})`,
          })
          .from(deliveryMetrics)
          .where(
            inArray(
              deliveryMetrics.packageId,
              live.map((p) => p.pkg.id),
            ),
          )
          .groupBy(deliveryMetrics.packageId)
      : [];
    const state = new Map(reported.map((r) => [r.packageId, r]));
    const rows: (typeof deliveryMetrics.$inferInsert)[] = [];
    for (const { pkg, product } of live) {
      const prior = state.get(pkg.id);
      let spent = Number(prior?.spent ?? 0);
      const option = product.pricingOptions.find((o) => o.pricingOptionId === pkg.pricingOptionId);
      for (
        let day = prior ? addDays(prior.lastDay, 1) : firstDay;
        day < today && day <= lastDay;
        day = addDays(day, 1)
      ) {
        const delivery = await this.adapter.dailyDelivery({
          mediaBuyId: buy.publicId,
          packageId: pkg.publicId,
          day,
          pricingModel: option?.pricingModel ?? 'cpm',
          unitPrice: option?.fixedPrice ?? option?.floorPrice ?? 1,
          currency: buy.currency,
          remainingMinor: pkg.budgetMinor - spent,
          dailyBudgetMinor: Math.floor(pkg.budgetMinor / flightDays),
        });
        spent += delivery.spendMinor;
        rows.push({
          organizationId: buy.organizationId,
          mediaBuyId: buy.id,
          packageId: pkg.id,
          day,
          impressions: delivery.impressions,
          clicks: delivery.clicks,
          spendMinor: delivery.spendMinor,
          currency: buy.currency,
          createdAt: now,
        });
      }
    }
    const completes = now >= buy.endTime && today > lastDay;
    if (rows.length === 0 && !completes) return 0;
    return this.db.transaction(async (tx) => {
      // One writer per buy at a time; another skips it (it is being reported).
      const [locked] = await tx
        .select({ status: mediaBuys.status })
        .from(mediaBuys)
        .where(eq(mediaBuys.id, buy.id))
        .for('update', { skipLocked: true });
      if (locked?.status !== 'active') return 0;
      const inserted = rows.length
        ? await tx
            .insert(deliveryMetrics)
            .values(rows)
            .onConflictDoNothing()
            .returning({ id: deliveryMetrics.id })
        : [];
      if (completes) {
        await tx
          .update(mediaBuys)
          .set({ status: 'completed', updatedAt: now, revision: sql`${mediaBuys.revision} + 1` })
          .where(eq(mediaBuys.id, buy.id));
        await this.audit(tx, buy, 'media_buy.completed', 'active', 'completed', now);
      }
      return inserted.length;
    });
  }

  private async audit(
    tx: Executor,
    buy: { organizationId: number; publicId: string },
    action: string,
    from: string,
    to: string,
    now: Date,
  ) {
    await tx.insert(auditLogs).values({
      organizationId: buy.organizationId,
      actorUserId: null,
      actorKind: 'system',
      action,
      targetType: 'media_buy',
      targetId: buy.publicId,
      metadata: { from, to },
      createdAt: now,
    });
  }
}

/** The delivery job: hourly (cron) and on demand (`POST /_ops/ad-platform/deliver`). Payload `{}`. */
export const simulateDeliveryTask = defineTask(
  'media-buying:simulate-delivery',
  Type.Object({}),
  async (_payload, deps: { delivery: DeliveryRunner }) => {
    await deps.delivery.run();
  },
);
