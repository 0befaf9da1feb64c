import { sql } from 'drizzle-orm';
import type { Db, Executor } from '../../platform/database.ts';
import type { AppLogger } from '../../platform/logger.ts';
import { Notifier } from '../../platform/notifications.ts';

/** The NOTIFY channel of committed changes; payload `{"to": <last change id>}`. */
export const CHANGES_CHANNEL = 'odds_changes';

/** One row of the change log as the delta feed and the WebSocket stream show it (spec F, NOTES.md delta anchor). */
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

/** A subscriber of committed changes (the WebSocket stream). */
export type ChangeListener = (changes: ChangeRecord[]) => void;

/**
 * The change feed of one instance: a `generation` counter that moves whenever changes commit anywhere (it keys the
 * response cache), and delivery of every committed change, in id order, to local listeners (WebSocket clients).
 *
 * Writers hold the change-log lock ({@link lockChangeLog}) so ids commit in order, send `NOTIFY odds_changes` inside
 * their transaction, and call {@link ChangeFeed.committed} after commit (this instance learns at once; the others
 * through LISTEN). Listeners read the rows after the last delivered id, so a lost notification only delays delivery
 * to the next one.
 */
export class ChangeFeed {
  private gen = 0;
  private lastDelivered = 0;
  private knownLast = 0;
  private readonly listeners = new Set<ChangeListener>();
  private pumping: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly db: Db,
    private readonly logger: AppLogger,
  ) {}

  /** Reads the current last id and subscribes to NOTIFY; returns the unsubscribe function. */
  async start(notifier: Notifier): Promise<() => Promise<void>> {
    const last = await this.lastId();
    this.lastDelivered = last;
    this.knownLast = last;
    return notifier.listen(CHANGES_CHANNEL, (payload) => {
      let to = 0;
      try {
        to = Number((JSON.parse(payload) as { to?: unknown }).to) || 0;
      } catch {
        to = 0;
      }
      this.committed(to);
    });
  }

  /** Cache generation: changes whenever a change commits (here or on another instance). */
  get generation(): number {
    return this.gen;
  }

  /** The highest change id in the database (the `delta_last_id` of a fresh read). */
  async lastId(executor: Executor = this.db): Promise<number> {
    const result = await executor.execute(sql`select coalesce(max(id), 0)::bigint as id from odds.changes`);
    return Number((result.rows[0] as { id: string | number }).id);
  }

  /** Sends the commit notification inside the writer's transaction. */
  static async notify(executor: Executor, lastId: number): Promise<void> {
    await Notifier.notify(executor, CHANGES_CHANNEL, JSON.stringify({ to: lastId }));
  }

  /** Records that changes up to `lastId` committed: moves the generation and delivers them to listeners. */
  committed(lastId: number): void {
    this.gen += 1;
    if (lastId > this.knownLast) this.knownLast = lastId;
    if (this.listeners.size === 0) {
      this.lastDelivered = Math.max(this.lastDelivered, this.knownLast);
      return;
    }
    this.pump();
  }

  /**
   * The id up to which changes were handed to listeners: a listener added now receives every change after it, so it
   * is the delta cursor of a new WebSocket subscriber (`hello.delta_last_id`).
   */
  get deliveredUpTo(): number {
    return this.lastDelivered;
  }

  /** Adds a listener of committed changes; returns the remover. */
  subscribe(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Resolves once every change known to have committed was delivered (tests). */
  async drain(): Promise<void> {
    while (this.pumping) await this.pumping;
  }

  private pump(): void {
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = (async () => {
      do {
        this.again = false;
        while (this.lastDelivered < this.knownLast) {
          const result = await this.db.execute(
            sql`select * from odds.changes where id > ${this.lastDelivered} and id <= ${this.knownLast} order by id limit 2000`,
          );
          const rows = (result.rows as Record<string, unknown>[]).map(changeFromRow);
          if (rows.length === 0) {
            this.lastDelivered = this.knownLast;
            break;
          }
          this.lastDelivered = rows[rows.length - 1]!.id;
          for (const listener of this.listeners) {
            try {
              listener(rows);
            } catch (err) {
              this.logger.warn({ err }, 'change listener failed');
            }
          }
        }
      } while (this.again);
    })()
      .catch((err) => this.logger.error({ err }, 'change delivery failed'))
      .finally(() => {
        this.pumping = undefined;
      });
  }
}

/** Serialises writers of the change log (ids then commit in order, so a delta cursor never skips a row). */
export async function lockChangeLog(executor: Executor): Promise<void> {
  await executor.execute(sql`select pg_advisory_xact_lock(hashtext('odds:changes'))`);
}
