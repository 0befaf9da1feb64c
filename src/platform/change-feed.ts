/**
 * A change feed: the rows of an append-only change table (increasing ids, committed in id order) delivered to the
 * subscribers of every instance, in id order, exactly once each, through PostgreSQL `LISTEN/NOTIFY`.
 *
 * Writers hold the table's lock so ids commit in order, send {@link ChangeFeed.notify} inside their transaction and,
 * on the writing instance, call {@link ChangeFeed.committed} after the commit (other instances learn through
 * LISTEN). Subscribers read the rows after the last delivered id, so a lost notification only delays delivery to the
 * next one; after a lost LISTEN connection the feed catches up on its own (the notifier's resync). A long-lived stream
 * resumes from a cursor (`Last-Event-ID`) with {@link ChangeFeed.subscribeFrom}: the rows after it are replayed from
 * the table, then live ones follow, none twice, none skipped. `generation` moves with every commit, so per-instance
 * caches of what the table feeds know when to drop their answers.
 */
import { sql } from 'drizzle-orm';
import type { Executor } from './database.ts';
import type { AppLogger } from './logger.ts';
import { Notifier } from './notifications.ts';

/** Where a feed's rows come from. */
export interface ChangeSource<T extends { id: number }> {
  /** The NOTIFY channel of commits (payload `{"to": <last id>}`). */
  channel: string;
  /** Rows with `after < id <= upTo`, in id order, at most `limit`. */
  read(after: number, upTo: number, limit: number): Promise<T[]>;
  /** The highest committed id (0 when the table is empty). */
  lastId(): Promise<number>;
}

/** A subscriber: called with each batch of new rows, in id order. */
export type ChangeListener<T> = (changes: T[]) => void;

/** Rows read per query while delivering or replaying. */
const READ_BATCH = 2000;

/** The change feed of one table on one instance; see the module comment. */
export class ChangeFeed<T extends { id: number }> {
  private gen = 0;
  private lastDelivered = 0;
  private knownLast = 0;
  private readonly listeners = new Set<ChangeListener<T>>();
  private pumping: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly source: ChangeSource<T>,
    private readonly logger: AppLogger,
  ) {}

  /**
   * Reads the current last id, subscribes to the commit notifications and to the notifier's resync (after a lost
   * connection it reads the last id again and delivers what it missed).
   * @returns the function that unsubscribes.
   */
  async start(notifier: Notifier): Promise<() => Promise<void>> {
    const last = await this.source.lastId();
    this.lastDelivered = last;
    this.knownLast = last;
    const unlisten = await notifier.listen(this.source.channel, (payload) =>
      this.committed(parseTo(payload)),
    );
    const unresync = notifier.onResync(async () => this.committed(await this.source.lastId()));
    return async () => {
      unresync();
      await unlisten();
    };
  }

  /** Sends the commit notification of `channel` up to `lastId` inside the writer's transaction. */
  static async notify(executor: Executor, channel: string, lastId: number): Promise<void> {
    await Notifier.notify(executor, channel, JSON.stringify({ to: lastId }));
  }

  /** Cache generation: moves whenever a change commits (here or on another instance), and at a resync. */
  get generation(): number {
    return this.gen;
  }

  /** The highest committed id in the table (`delta_last_id` of a fresh read). */
  lastId(): Promise<number> {
    return this.source.lastId();
  }

  /** Records that rows up to `lastId` committed: moves the generation and delivers them to the subscribers. */
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
   * The id up to which rows were handed to subscribers: one added now receives every row after it, so it is the
   * cursor of a new live subscriber.
   */
  get deliveredUpTo(): number {
    return this.lastDelivered;
  }

  /** Adds a subscriber of rows committed from now on; returns the remover. */
  subscribe(listener: ChangeListener<T>): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /**
   * Adds a subscriber of every row after `cursor`: the rows already delivered to live subscribers are read from the
   * table first, then live rows follow (those arriving meanwhile wait), each row once, in id order. A cursor ahead of
   * the table simply waits for live rows past it.
   * @returns the remover (call it when the stream ends).
   * @throws the source's error when the replay cannot be read (nothing is subscribed then).
   */
  async subscribeFrom(cursor: number, listener: ChangeListener<T>): Promise<() => void> {
    let last = cursor;
    let replaying = true;
    const waiting: T[] = [];
    const deliver = (rows: T[]) => {
      const fresh = rows.filter((r) => r.id > last);
      if (fresh.length === 0) return;
      last = fresh[fresh.length - 1]!.id;
      listener(fresh);
    };
    const live: ChangeListener<T> = (rows) => {
      if (replaying) waiting.push(...rows);
      else deliver(rows);
    };
    // Every row after `upTo` reaches `live`; the rows up to it come from the table.
    const upTo = this.lastDelivered;
    this.listeners.add(live);
    try {
      let after = cursor;
      while (after < upTo) {
        const rows = await this.source.read(after, upTo, READ_BATCH);
        if (rows.length === 0) break;
        deliver(rows);
        after = rows[rows.length - 1]!.id;
      }
    } catch (err) {
      this.listeners.delete(live);
      throw err;
    }
    replaying = false;
    deliver(waiting.splice(0));
    return () => {
      this.listeners.delete(live);
    };
  }

  /** Resolves once every row known to have committed was delivered (tests). */
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
          const rows = await this.source.read(this.lastDelivered, this.knownLast, READ_BATCH);
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

/** The `to` of a commit notification payload (0 when unreadable: the next notification delivers). */
function parseTo(payload: string): number {
  try {
    return Number((JSON.parse(payload) as { to?: unknown }).to) || 0;
  } catch {
    return 0;
  }
}

/** The highest `id` of `table` (a trusted, qualified table name such as `odds.changes`), 0 when empty. */
export async function lastIdOf(executor: Executor, table: string): Promise<number> {
  const result = await executor.execute(
    sql`select coalesce(max(id), 0)::bigint as id from ${sql.raw(table)}`,
  );
  return Number((result.rows[0] as { id: string | number }).id);
}
