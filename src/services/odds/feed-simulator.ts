import { sql } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.ts';
import type { Db } from '../../platform/database.ts';
import type { AppLogger } from '../../platform/logger.ts';
import { lockChangeLog, type OddsChangeFeed } from './change-feed.ts';
import { writeEvents } from './odds-writer.ts';
import {
  eventIds,
  eventUpdateSince,
  type ScheduledGame,
  SIMULATED_SPORTS,
  scheduleFor,
} from './simulator.ts';

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
 * today and tomorrow (UTC) of every simulated sport, the state at the clock's time and writes the difference (new
 * events, status and score moves, price moves, closing at the start). Price moves since the game's last recorded price
 * change are replayed ({@link eventUpdateSince}) and recorded at the time they happened, not at the tick: a game first
 * seen after its markets opened (a fresh start, a restart after a pause) gets its opening prices and the prices of
 * its last bucket before the start, so its openers and closing are right even when it is already under way. Finished
 * events are skipped. Ticks are serialised across workers by the change-log lock, and idempotent: a second tick at
 * the same time changes nothing.
 */
export class FeedSimulator {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly feed: OddsChangeFeed,
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
    const result = await this.db.transaction(async (tx) => {
      // Read under the change-log lock (writeEvents takes it again): another worker's tick commits before this read,
      // so the replay starts after the moves it recorded.
      await lockChangeLog(tx);
      // Per known game: finished or not, and the time of its last recorded price change (the replay starts after it).
      const known = await tx.execute(sql`
        select e.event_id, e.status in ('STATUS_FINAL', 'STATUS_CANCELED') as done,
          (select (extract(epoch from max(p.updated_at)) * 1000)::float8 from odds.prices p
            where p.event_id = e.event_id) as last_price_ms
        from odds.events e
        where e.event_id = any(array(select jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb)))`);
      const state = new Map(
        (known.rows as { event_id: string; done: boolean; last_price_ms: number | null }[]).map((r) => [
          r.event_id,
          r,
        ]),
      );
      const updates = games.flatMap((g, i) => {
        const row = state.get(ids[i]!);
        if (row?.done) return [];
        const after = row?.last_price_ms == null ? null : new Date(Number(row.last_price_ms));
        return [eventUpdateSince(this.seed, g, after, now)];
      });
      if (updates.length === 0) return { events: 0, changes: 0, lastId: 0, touched: false };
      return writeEvents(tx, updates, now);
    });
    if (result.touched) this.feed.committed(result.lastId);
    if (result.changes > 0) this.logger.debug({ changes: result.changes }, 'simulator tick');
    return result;
  }
}
