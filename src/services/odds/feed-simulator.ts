import { sql } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.ts';
import type { Db } from '../../platform/database.ts';
import type { AppLogger } from '../../platform/logger.ts';
import type { ChangeFeed } from './change-feed.ts';
import { writeEvents } from './odds-writer.ts';
import { eventIds, eventStateAt, type ScheduledGame, SIMULATED_SPORTS, scheduleFor } from './simulator.ts';

/** What one simulator step did. */
export interface TickResult {
  /** Events written (scheduled, moved or re-priced). */
  events: number;
  /** Rows appended to the change log. */
  changes: number;
  lastId: number;
  /** True when anything an answer shows changed (see `WriteResult.touched`). */
  touched: boolean;
}

/**
 * Drives the simulator against the database: each {@link FeedSimulator.tick} computes, for the games of yesterday,
 * today and tomorrow (UTC) of every simulated sport, the state at the clock's time ({@link eventStateAt}) and writes
 * the difference (new events, status and score moves, price moves, closing at the start). Finished events are skipped.
 * Ticks are serialised across workers by the change-log lock, and idempotent: a second tick at the same time
 * changes nothing.
 */
export class FeedSimulator {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly feed: ChangeFeed,
    private readonly logger: AppLogger,
    readonly seed: string,
  ) {}

  /** The simulated games of the UTC days around `now`. */
  gamesAround(now: Date): ScheduledGame[] {
    const games: ScheduledGame[] = [];
    for (const offset of [-1, 0, 1]) {
      const date = new Date(now.getTime() + offset * 86_400_000).toISOString().slice(0, 10);
      for (const sportId of SIMULATED_SPORTS) games.push(...scheduleFor(this.seed, sportId, date));
    }
    return games;
  }

  /** One step at the clock's current time. */
  async tick(): Promise<TickResult> {
    const now = this.clock.now();
    const games = this.gamesAround(now);
    const ids = games.map((g) => eventIds(this.seed, g).eventId);
    const finished = await this.db.execute(
      sql`select event_id from odds.events where status in ('STATUS_FINAL', 'STATUS_CANCELED')
          and event_id = any(array(select jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb)))`,
    );
    const done = new Set((finished.rows as { event_id: string }[]).map((r) => r.event_id));
    const updates = games.filter((_, i) => !done.has(ids[i]!)).map((g) => eventStateAt(this.seed, g, now));
    if (updates.length === 0) return { events: 0, changes: 0, lastId: 0, touched: false };
    const result = await this.db.transaction((tx) => writeEvents(tx, updates, now));
    if (result.touched) this.feed.committed(result.lastId);
    if (result.changes > 0) this.logger.debug({ changes: result.changes }, 'simulator tick');
    return result;
  }
}
