import { sql } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.ts';
import type { Db, Tx } from '../../platform/database.ts';
import type { AppLogger } from '../../platform/logger.ts';
import { lockChangeLog, notifyChanges, type OddsChangeFeed } from './change-feed.ts';
import { eventIdOf, pricesCloseAt, type ScheduledGame } from './game-model.ts';
import { type EventUpdate, writeEvents } from './odds-writer.ts';
import { recordsAt, scheduleFor } from './schedules.ts';
import { seedReferenceData } from './seed-data.ts';
import { eventRowAt, eventUpdateSince, marketsKey } from './simulator.ts';

/** What one simulator step did. */
export interface TickResult {
  /** Events written (scheduled, moved or re-priced). */
  events: number;
  /** Rows appended to the change log. */
  changes: number;
  lastId: number;
  /** True when anything an answer shows changed (see `WriteResult.touched`), a team's record included. */
  touched: boolean;
}

/** The UTC days a step covers, as offsets from today: yesterday, today and tomorrow. */
const ALL_DAYS = [-1, 0, 1];
/**
 * The days of the first step of a starting worker, which the service waits for before it is ready: today and tomorrow
 * (what a reader asks for first). Yesterday's games, finished by then, follow with the next step, seconds later; a
 * third of the work of a busy first step.
 */
export const WARM_UP_DAYS = [0, 1];

/** Statuses after which a simulated event never changes again (the simulator skips it). */
const DONE_STATUSES = ['STATUS_FINAL', 'STATUS_CANCELED', 'STATUS_POSTPONED'];

/**
 * Drives the simulator against the database: each {@link FeedSimulator.tick} computes, for the games of yesterday,
 * today and tomorrow (UTC) of every simulated sport whose teams are known by then, the state at the clock's time and
 * writes the difference (new events, status and score moves, price moves, prices closing at the start or when a game
 * is postponed or canceled), then the teams' records from the simulated results of their season. Price moves since the
 * game's last recorded price change are replayed ({@link eventUpdateSince}) and recorded at the time they happened, not
 * at the tick: a game first seen after its markets opened (a fresh start, a restart after a pause) gets its opening
 * prices and the prices of its last bucket before they closed, so its openers and closing are right even when it is
 * already under way. Finished, canceled and postponed events are skipped. Ticks are serialised across workers by the
 * change-log lock, and idempotent: a second tick at the same time changes nothing.
 */
export class FeedSimulator {
  private referenceSynced = false;
  /**
   * What this process last wrote per event: its row (without the model) and its markets key ({@link marketsKey}).
   * A step skips an event whose row and markets key are the same (nothing can have changed), and recomputes an
   * event's markets only when its key moved: once per price bucket before its start.
   */
  private readonly written = new Map<string, { row: string; markets: string }>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly feed: OddsChangeFeed,
    private readonly logger: AppLogger,
    readonly seed: string,
    /** The sports it simulates (`ODDS_SIM_SPORTS`). */
    readonly sports: readonly number[],
  ) {}

  /** The simulated games of the UTC days `days` (offsets from today) whose teams are known at `now`. */
  gamesAround(now: Date, days: readonly number[] = ALL_DAYS): ScheduledGame[] {
    const games: ScheduledGame[] = [];
    for (const offset of days) {
      const date = new Date(now.getTime() + offset * 86_400_000).toISOString().slice(0, 10);
      for (const sportId of this.sports)
        for (const g of scheduleFor(this.seed, sportId, date))
          if (!g.knownAt || g.knownAt <= now) games.push(g);
    }
    return games;
  }

  /**
   * One step at the clock's current time.
   * @param days the UTC days it covers, as offsets from today: yesterday, today and tomorrow, except for the warm-up
   *   step of a starting worker ({@link WARM_UP_DAYS}).
   */
  async tick(days: readonly number[] = ALL_DAYS): Promise<TickResult> {
    const now = this.clock.now();
    const games = this.gamesAround(now, days);
    const ids = games.map((g) => eventIdOf(this.seed, g));
    const outcome = await this.db.transaction(async (tx) => {
      // Read under the change-log lock (writeEvents takes it again): another worker's tick commits before this read,
      // so the replay starts after the moves it recorded.
      await lockChangeLog(tx);
      // Teams and markets added to the data files since this database was seeded.
      if (!this.referenceSynced) await seedReferenceData(tx);
      // Per known game: finished or not, and the time of its last recorded price change (the replay starts after it).
      const known = await tx.execute(sql`
        select e.event_id, e.status = any(${`{${DONE_STATUSES.join(',')}}`}::text[]) as done,
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
      const updates: EventUpdate[] = [];
      const wrote = new Map<string, { row: string; markets: string }>();
      games.forEach((g, i) => {
        const id = ids[i]!;
        const stored = state.get(id);
        if (stored?.done) return;
        const event = eventRowAt(this.seed, g, now);
        const key = { row: JSON.stringify({ ...event, simulation: undefined }), markets: marketsKey(g, now) };
        const last = this.written.get(id);
        if (stored && last?.row === key.row && last.markets === key.markets) return;
        const lastPrice = stored?.last_price_ms == null ? null : Number(stored.last_price_ms);
        // Markets unchanged since this process wrote them, or closed and their closing recorded: the row only.
        const marketsDone =
          stored &&
          (last?.markets === key.markets || (lastPrice !== null && lastPrice >= pricesCloseAt(g).getTime()));
        updates.push(
          marketsDone
            ? { event, markets: [] }
            : eventUpdateSince(this.seed, g, lastPrice === null ? null : new Date(lastPrice), now),
        );
        wrote.set(id, key);
      });
      const written =
        updates.length === 0
          ? { events: 0, changes: 0, lastId: 0, touched: false }
          : await writeEvents(tx, updates, now);
      const records = await this.writeRecords(tx, now);
      // A record has no change-log row: its change is still news to every instance's cached answers.
      if (records && !written.touched) await notifyChanges(tx, written.lastId);
      return { result: { ...written, touched: written.touched || records }, wrote };
    });
    this.referenceSynced = true;
    // Only what this step considered: events of other days are forgotten.
    const considered = new Set(ids);
    for (const id of this.written.keys()) if (!considered.has(id)) this.written.delete(id);
    for (const [id, key] of outcome.wrote) this.written.set(id, key);
    const { result } = outcome;
    if (result.touched) this.feed.committed(result.lastId);
    if (result.changes > 0) this.logger.debug({ changes: result.changes }, 'simulator tick');
    return result;
  }

  /** Writes every simulated team's record at `now`; true when one changed. */
  private async writeRecords(tx: Tx, now: Date): Promise<boolean> {
    const rows: { id: number; record: string }[] = [];
    for (const sportId of this.sports)
      for (const [id, record] of recordsAt(this.seed, sportId, now)) rows.push({ id, record });
    const changed = await tx.execute(sql`
      update odds.teams t set record = v.record
      from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as v(id int, record text)
      where t.id = v.id and t.record is distinct from v.record
      returning t.id`);
    return changed.rows.length > 0;
  }
}
