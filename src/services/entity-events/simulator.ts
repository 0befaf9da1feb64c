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

/**
 * The built-in simulator: picks random (entity, event type) pairs among active enrollments and stores an event with
 * realistic `data` for each, through the same ingest path as the operator API (so fan-out and delivery are the real
 * ones). Rate in events per minute: `ENTITY_EVENTS_SIMULATOR_EVENTS_PER_MINUTE` at start, changeable at run time
 * through the operator API (stored in `settings`, shared by every instance); 0 stops it.
 */
export class EntityEventSimulator implements EventSource {
  private timer: NodeJS.Timeout | undefined;
  private carry = 0;
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

  /** Sets the rate for every instance (events per minute, 0 stops). */
  async setRate(perMinute: number): Promise<number> {
    await this.db
      .insert(settings)
      .values({ name: RATE_SETTING, value: perMinute })
      .onConflictDoUpdate({ target: settings.name, set: { value: perMinute } });
    return perMinute;
  }

  async produce(count: number): Promise<number> {
    if (count <= 0) return 0;
    const picks = await this.db.execute(sql`
      select e.entity_type, ee.entity_id, e.event_types[1 + floor(random() * cardinality(e.event_types))::int] as event_name
      from entity_events.enrollments e
      join entity_events.enrollment_entities ee on ee.enrollment_id = e.id
      where e.status = 'active'
      order by random()
      limit ${count}`);
    const rows = picks.rows as { entity_type: EntityType; entity_id: string; event_name: string }[];
    if (rows.length === 0) return 0;
    const now = this.clock.now();
    const batch: IngestEvent[] = rows.map((r) => ({
      entity_type: r.entity_type,
      entity_id: r.entity_id,
      event_name: r.event_name,
      event_time: now.toISOString(),
      data: sampleData(r.event_name, now),
    }));
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
   * One timer tick: adds `rate * tickMs / 60,000` events to a running fraction and produces the whole part.
   * @returns how many events were stored.
   */
  async tick(): Promise<number> {
    const perMinute = await this.rate();
    this.carry += (perMinute * this.tickMs) / 60_000;
    const n = Math.floor(this.carry);
    if (n < 1) return 0;
    this.carry -= n;
    return this.produce(Math.min(n, 1000));
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
