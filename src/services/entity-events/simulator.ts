import { randomInt } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.ts';
import type { Db } from '../../platform/database.ts';
import type { AppLogger } from '../../platform/logger.ts';
import { type EntityType, sampleData } from './catalogue.ts';
import { settings } from './db/schema.ts';
import type { EventStore, IngestEvent } from './events.ts';

/**
 * Where events come from besides the operator API: an interface so a real data feed can replace the simulator
 * without touching the domain.
 */
export interface EventSource {
  /** Produces up to `count` events now; returns how many were stored. */
  produce(count: number): Promise<number>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

const RATE_SETTING = 'simulator_events_per_minute';
/** Service-clock instant (ms) up to which simulated events have been produced; shared by every instance. */
const CURSOR_SETTING = 'simulator_cursor_ms';
/** At most this many events per tick (and per `produce`). */
const MAX_PER_TICK = 1000;
/**
 * Time owed from before this is forgotten: after every worker was stopped for an hour the simulator resumes at its
 * rate instead of catching up with a burst.
 */
const MAX_BACKLOG_MS = 10_000;

/**
 * The built-in simulator: picks random (entity, event type) pairs among active enrollments and stores an event with
 * realistic `data` for each, through the same ingest path as the operator API (so fan-out and delivery are the real
 * ones). Rate in events per minute: `ENTITY_EVENTS_SIMULATOR_EVENTS_PER_MINUTE` at start, changeable at run time
 * through the operator API (stored in `settings`, shared by every instance); 0 stops it.
 *
 * How many events are due is computed from the service clock against a cursor row shared by every instance (locked
 * while it moves), so several worker instances together produce the configured rate, not a multiple of it, and tests
 * move the clock instead of waiting.
 */
export class EntityEventSimulator implements EventSource {
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly store: EventStore,
    private readonly logger: AppLogger,
    private readonly defaultRatePerMinute: number,
    private readonly tickMs = 1000,
  ) {}

  /** Events per minute now (the stored setting, else the configured default). */
  async rate(): Promise<number> {
    const [row] = await this.db.select().from(settings).where(eq(settings.name, RATE_SETTING));
    return row ? Number(row.value) : this.defaultRatePerMinute;
  }

  /** Sets the rate for every instance (events per minute, 0 stops); production restarts from now. */
  async setRate(perMinute: number): Promise<number> {
    const now = this.clock.nowMs();
    await this.db.transaction(async (tx) => {
      for (const [name, value] of [
        [RATE_SETTING, perMinute],
        [CURSOR_SETTING, now],
      ] as const)
        await tx
          .insert(settings)
          .values({ name, value })
          .onConflictDoUpdate({ target: settings.name, set: { value } });
    });
    return perMinute;
  }

  /**
   * Claims the events due by the service clock since the shared cursor (rate x elapsed time, whole events only; the
   * fraction stays for the next tick) and moves the cursor, under a row lock so two instances never claim the same
   * interval. @returns how many events to produce now.
   */
  private async claimDue(perMinute: number): Promise<number> {
    const now = this.clock.nowMs();
    return this.db.transaction(async (tx) => {
      const [row] = await tx.select().from(settings).where(eq(settings.name, CURSOR_SETTING)).for('update');
      const cursor = row ? Number(row.value) : Number.NaN;
      const save = (value: number) =>
        tx
          .insert(settings)
          .values({ name: CURSOR_SETTING, value })
          .onConflictDoUpdate({ target: settings.name, set: { value } });
      if (!Number.isFinite(cursor) || cursor > now || perMinute <= 0) {
        await save(now);
        return 0;
      }
      const from = Math.max(cursor, now - MAX_BACKLOG_MS);
      const due = Math.floor(((now - from) * perMinute) / 60_000);
      if (due < 1) {
        if (from !== cursor) await save(from);
        return 0;
      }
      if (due > MAX_PER_TICK) {
        await save(now);
        return MAX_PER_TICK;
      }
      await save(from + (due * 60_000) / perMinute);
      return due;
    });
  }

  /**
   * Stores `count` events (at most 1,000) for random enrolled (entity, event type) pairs. With fewer enrolled entities
   * than `count`, entities get several events, so the configured rate holds however few entities are enrolled.
   * @returns how many were stored (0 when nothing is enrolled).
   */
  async produce(count: number): Promise<number> {
    const n = Math.min(Math.floor(count), MAX_PER_TICK);
    if (n <= 0) return 0;
    const picks = await this.db.execute(sql`
      select e.entity_type, ee.entity_id, e.event_types
      from entity_events.enrollments e
      join entity_events.enrollment_entities ee on ee.enrollment_id = e.id
      where e.status = 'active'
      order by random()
      limit ${n}`);
    const rows = picks.rows as { entity_type: EntityType; entity_id: string; event_types: string[] }[];
    if (rows.length === 0) return 0;
    const now = this.clock.now();
    const batch: IngestEvent[] = Array.from({ length: n }, (_, i) => {
      const r = rows[i % rows.length]!;
      const eventName = r.event_types[randomInt(r.event_types.length)]!;
      return {
        entity_type: r.entity_type,
        entity_id: r.entity_id,
        event_name: eventName,
        event_time: now.toISOString(),
        data: sampleData(eventName, now),
      };
    });
    const result = await this.store.ingest(batch, 'simulator');
    return result.events.length;
  }

  async start(): Promise<void> {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = true;
      this.tick()
        .catch((err) => this.logger.warn({ err }, 'simulator tick failed'))
        .finally(() => {
          this.running = false;
        });
    }, this.tickMs);
    this.timer.unref();
  }

  /**
   * One timer tick: produces the events due by the service clock since the shared cursor (see {@link claimDue}).
   * @returns how many events were stored.
   */
  async tick(): Promise<number> {
    const n = await this.claimDue(await this.rate());
    return n > 0 ? this.produce(n) : 0;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
