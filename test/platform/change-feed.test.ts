import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { ChangeFeed, type ChangeSource, lastIdOf } from '../../src/platform/change-feed.ts';
import { type Database, openDatabase } from '../../src/platform/database.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { Notifier } from '../../src/platform/notifications.ts';
import { createTestDatabase, type TestDatabase } from '../support/platform.ts';
import { waitUntil } from '../support/wait.ts';

interface Row {
  id: number;
  v: string;
}

describe('platform: ChangeFeed (delivery in id order, replay from a cursor, resync)', () => {
  let database: TestDatabase;
  let db: Database;
  const notifiers: Notifier[] = [];
  const stops: (() => Promise<void>)[] = [];
  const CHANNEL = 'feed_test_changes';

  const source = (hook?: (after: number) => Promise<void>): ChangeSource<Row> => ({
    channel: CHANNEL,
    read: async (after, upTo, limit) => {
      await hook?.(after);
      const { rows } = await db.pool.query(
        'select id::int, v from feed_test.changes where id > $1 and id <= $2 order by id limit $3',
        [after, upTo, limit],
      );
      return rows as Row[];
    },
    lastId: () => lastIdOf(db.db, 'feed_test.changes'),
  });

  /** Appends rows as a writer on another instance would: one transaction, then its commit notification. */
  async function append(values: string[], notify = true): Promise<number> {
    return db.db.transaction(async (tx) => {
      let last = 0;
      for (const v of values) {
        const r = await tx.execute(sql`insert into feed_test.changes (v) values (${v}) returning id`);
        last = Number((r.rows[0] as { id: number }).id);
      }
      if (notify) await ChangeFeed.notify(tx, CHANNEL, last);
      return last;
    });
  }

  async function startFeed(hook?: (after: number) => Promise<void>) {
    const notifier = new Notifier(database.url, createLogger('silent'));
    notifiers.push(notifier);
    const feed = new ChangeFeed<Row>(source(hook), createLogger('silent'));
    stops.push(await feed.start(notifier));
    return feed;
  }

  before(async () => {
    database = await createTestDatabase();
    db = openDatabase(database.url);
    await db.pool.query(
      'create schema feed_test; create table feed_test.changes (id serial primary key, v text)',
    );
  });
  after(async () => {
    for (const stop of stops) await stop();
    for (const n of notifiers) await n.close();
    await db?.close();
    await database?.drop();
  });

  test('rows committed anywhere reach every subscriber once, in id order; the generation moves', async () => {
    const feed = await startFeed();
    const seen: number[] = [];
    const unsubscribe = feed.subscribe((rows) => seen.push(...rows.map((r) => r.id)));
    const gen = feed.generation;
    const first = await append(['a', 'b']);
    const second = await append(['c']);
    await waitUntil('three rows', () => seen.length === 3);
    assert.deepEqual(seen, [first - 1, first, second]);
    assert.ok(feed.generation > gen);
    assert.equal(feed.deliveredUpTo, second);
    unsubscribe();
  });

  test('subscribeFrom replays the rows after the cursor, then live rows, none twice, none skipped', async () => {
    const cursor = await lastIdOf(db.db, 'feed_test.changes');
    let paused: (() => void) | undefined;
    const feed = await startFeed(async (after) => {
      // The first replay read waits while more rows commit and are delivered live.
      if (after === cursor && !paused) await new Promise<void>((resolve) => (paused = resolve));
    });
    const replayed = await append(['r1', 'r2', 'r3']);
    feed.committed(replayed);
    await feed.drain();
    const seen: number[] = [];
    const subscribing = feed.subscribeFrom(cursor, (rows) => seen.push(...rows.map((r) => r.id)));
    await waitUntil('the replay to start', () => paused !== undefined);
    const live = await append(['l1', 'l2']);
    await waitUntil('the live rows to be delivered', () => feed.deliveredUpTo === live);
    paused!();
    const unsubscribe = await subscribing;
    const later = await append(['l3']);
    await waitUntil('the next live row', () => seen.includes(later));
    assert.deepEqual(
      seen,
      Array.from({ length: later - cursor }, (_, i) => cursor + 1 + i),
    );
    unsubscribe();
  });

  test('after a lost LISTEN connection the feed delivers what it missed and moves its generation', async () => {
    const feed = await startFeed();
    const seen: number[] = [];
    feed.subscribe((rows) => seen.push(...rows.map((r) => r.id)));
    // Committed with no notification this instance hears (as if sent while it was disconnected).
    const missed = await append(['missed'], false);
    const gen = feed.generation;
    const killed = await db.pool.query(
      "select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'api-suite-listen' and datname = $1",
      [database.name],
    );
    assert.ok(killed.rowCount && killed.rowCount > 0);
    await waitUntil('the missed row after the reconnection', () => seen.includes(missed));
    assert.ok(feed.generation > gen);
    const next = await append(['after']);
    await waitUntil('notifications to flow again', () => seen.includes(next));
  });
});
