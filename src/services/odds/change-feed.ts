import { sql } from 'drizzle-orm';
import { ChangeFeed, lastIdOf } from '../../platform/change-feed.ts';
import type { Db, Executor } from '../../platform/database.ts';
import type { AppLogger } from '../../platform/logger.ts';

/** The NOTIFY channel of committed changes; payload `{"to": <last change id>}`. */
export const CHANGES_CHANNEL = 'odds_changes';

/** One row of the change log as the delta feed and the WebSocket stream show it (spec F; the anchor's delta rows). */
export interface ChangeRecord {
  id: number;
  kind: 'price' | 'event';
  /** `opened`, `changed`, `closed`, `reopened` (price); `status`, `score` (event). */
  change_type: string;
  event_id: string;
  sport_id: number;
  affiliate_id: number | null;
  market_id: number | null;
  period_id: number | null;
  line_id: number | null;
  price_id: number | null;
  participant_id: number | null;
  participant_type: string | null;
  line: string | null;
  price: number | null;
  previous_price: number | null;
  is_main_line: boolean | null;
  event_status: string | null;
  score_away: number | null;
  score_home: number | null;
  /** ISO 8601 UTC. */
  updated_at: string;
}

/** Maps a raw `odds.changes` row (snake_case from SQL) to a {@link ChangeRecord}. */
export function changeFromRow(r: Record<string, unknown>): ChangeRecord {
  const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return {
    id: Number(r.id),
    kind: r.kind as 'price' | 'event',
    change_type: String(r.change_type),
    event_id: String(r.event_id),
    sport_id: Number(r.sport_id),
    affiliate_id: num(r.affiliate_id),
    market_id: num(r.market_id),
    period_id: num(r.period_id),
    line_id: num(r.line_id),
    price_id: num(r.price_id),
    participant_id: num(r.participant_id),
    participant_type: (r.participant_type as string | null) ?? null,
    line: (r.line as string | null) ?? null,
    price: num(r.price),
    previous_price: num(r.previous_price),
    is_main_line: (r.is_main_line as boolean | null) ?? null,
    event_status: (r.event_status as string | null) ?? null,
    score_away: num(r.score_away),
    score_home: num(r.score_home),
    updated_at: new Date(r.recorded_at as string | Date).toISOString(),
  };
}

/** The change feed of `odds.changes` (the platform's ChangeFeed). */
export type OddsChangeFeed = ChangeFeed<ChangeRecord>;

/**
 * The feed of committed changes of this instance: a `generation` that moves whenever changes commit anywhere (it keys
 * the response cache), and delivery of every committed change, in id order, to the WebSocket subscribers.
 */
export function createChangeFeed(db: Db, logger: AppLogger): OddsChangeFeed {
  return new ChangeFeed<ChangeRecord>(
    {
      channel: CHANGES_CHANNEL,
      read: async (after, upTo, limit) => {
        const result = await db.execute(
          sql`select * from odds.changes where id > ${after} and id <= ${upTo} order by id limit ${limit}`,
        );
        return (result.rows as Record<string, unknown>[]).map(changeFromRow);
      },
      lastId: () => lastIdOf(db, 'odds.changes'),
    },
    logger,
  );
}

/** Sends the commit notification of changes up to `lastId` inside the writer's transaction. */
export function notifyChanges(executor: Executor, lastId: number): Promise<void> {
  return ChangeFeed.notify(executor, CHANGES_CHANNEL, lastId);
}

/** Serialises writers of the change log (ids then commit in order, so a delta cursor never skips a row). */
export async function lockChangeLog(executor: Executor): Promise<void> {
  await executor.execute(sql`select pg_advisory_xact_lock(hashtext('odds:changes'))`);
}
