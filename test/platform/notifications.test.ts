import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Database, openDatabase } from '../../src/platform/database.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { Notifier } from '../../src/platform/notifications.ts';
import { createTestDatabase, type TestDatabase } from '../support/platform.ts';
import { waitUntil } from '../support/wait.ts';

describe('platform: Notifier (LISTEN/NOTIFY)', () => {
  let database: TestDatabase;
  let db: Database;
  let notifier: Notifier;
  /** Payloads of the always-listened sentinel channel: once one arrives, every earlier notification has too. */
  const sentinel: string[] = [];
  let seq = 0;

  /** Sends a sentinel and waits for it: notifications are delivered in order on the one connection. */
  async function flush(): Promise<void> {
    const mark = `mark-${++seq}`;
    await Notifier.notify(db.db, 'sentinel', mark);
    await waitUntil('the notifications', () => sentinel.includes(mark));
  }

  before(async () => {
    database = await createTestDatabase();
    db = openDatabase(database.url);
    notifier = new Notifier(database.url, createLogger('silent'));
    await notifier.listen('sentinel', (p) => sentinel.push(p));
  });
  after(async () => {
    await notifier?.close();
    await db?.close();
    await database?.drop();
  });

  test('a notification reaches every handler of its channel, and only that channel', async () => {
    const a: string[] = [];
    const b: string[] = [];
    const other: string[] = [];
    const offA = await notifier.listen('orders', (p) => a.push(p));
    const offB = await notifier.listen('orders', (p) => b.push(p));
    const offOther = await notifier.listen('Other Channel', (p) => other.push(p));
    try {
      await Notifier.notify(db.db, 'orders', 'ord_1');
      await Notifier.notify(db.db, 'Other Channel', 'x');
      await waitUntil('the notifications', () => a.length === 1 && b.length === 1 && other.length === 1);
      await flush();
      assert.deepEqual(a, ['ord_1']);
      assert.deepEqual(b, ['ord_1']);
      assert.deepEqual(other, ['x']);
    } finally {
      await offA();
      await offB();
      await offOther();
    }
  });

  test('unlisten stops delivery to that handler; the others keep receiving', async () => {
    const a: string[] = [];
    const b: string[] = [];
    const offA = await notifier.listen('prices', (p) => a.push(p));
    const offB = await notifier.listen('prices', (p) => b.push(p));
    await Notifier.notify(db.db, 'prices', 'p1');
    await waitUntil('the notifications', () => a.length === 1 && b.length === 1);
    await offA();
    await Notifier.notify(db.db, 'prices', 'p2');
    await waitUntil('the notifications', () => b.length === 2);
    await flush();
    assert.deepEqual(a, ['p1']);
    assert.deepEqual(b, ['p1', 'p2']);
    await offB();
    await Notifier.notify(db.db, 'prices', 'p3');
    await flush();
    assert.deepEqual(b, ['p1', 'p2']);
  });

  test('the first listen subscribes the connection and the last unlisten unsubscribes it', async () => {
    // Reads the listening connection's own subscriptions (pg_listening_channels is per session).
    const channels = async () => {
      const client = (
        notifier as unknown as { client: { query(q: string): Promise<{ rows: { c: string }[] }> } }
      ).client;
      const r = await client.query('select pg_listening_channels() as c');
      return r.rows.map((row) => row.c).sort();
    };
    assert.deepEqual(await channels(), ['sentinel']);
    const off1 = await notifier.listen('rates', () => undefined);
    const off2 = await notifier.listen('rates', () => undefined);
    assert.deepEqual(await channels(), ['rates', 'sentinel']);
    await off1();
    assert.deepEqual(await channels(), ['rates', 'sentinel'], 'one handler is left');
    await off2();
    assert.deepEqual(await channels(), ['sentinel']);
    // Listening again afterwards works, and only new notifications arrive.
    const got: string[] = [];
    await Notifier.notify(db.db, 'rates', 'while-unlistened');
    await flush();
    const off3 = await notifier.listen('rates', (p) => got.push(p));
    await Notifier.notify(db.db, 'rates', 'after');
    await waitUntil('the notifications', () => got.length === 1);
    await flush();
    assert.deepEqual(got, ['after']);
    await off3();
  });

  test('a notification inside a transaction is delivered on commit only', async () => {
    const got: string[] = [];
    const off = await notifier.listen('tx', (p) => got.push(p));
    try {
      await assert.rejects(
        db.db.transaction(async (tx) => {
          await Notifier.notify(tx, 'tx', 'rolled-back');
          throw new Error('rollback');
        }),
      );
      await flush();
      assert.deepEqual(got, []);
      await db.db.transaction(async (tx) => {
        await Notifier.notify(tx, 'tx', 'committed');
        await flush();
        assert.deepEqual(got, [], 'not before commit');
      });
      await waitUntil('the notifications', () => got.length === 1);
      assert.deepEqual(got, ['committed']);
    } finally {
      await off();
    }
  });

  test('a throwing handler does not stop the other handlers', async () => {
    const got: string[] = [];
    const offBad = await notifier.listen('fragile', () => {
      throw new Error('handler bug');
    });
    const offGood = await notifier.listen('fragile', (p) => got.push(p));
    try {
      await Notifier.notify(db.db, 'fragile', 'still-delivered');
      await waitUntil('the notifications', () => got.length === 1);
      assert.deepEqual(got, ['still-delivered']);
    } finally {
      await offBad();
      await offGood();
    }
  });

  test('after its connection is killed, the notifier reconnects and re-subscribes', async () => {
    const n2 = new Notifier(database.url, createLogger('silent'));
    const got: string[] = [];
    try {
      await n2.listen('resilient', (p) => got.push(p));
      await Notifier.notify(db.db, 'resilient', 'before');
      await waitUntil('the notifications', () => got.includes('before'));
      const killed = await db.pool.query(
        "select pg_terminate_backend(pid) as ok from pg_stat_activity where application_name = 'api-suite-listen' and datname = current_database() and query ilike '%resilient%'",
      );
      assert.ok(killed.rows.length >= 1, 'the listening backend was found and terminated');
      // Keep notifying until the re-subscribed connection receives one (bounded poll).
      let i = 0;
      await waitUntil(
        'the notifications',
        () => {
          void Notifier.notify(db.db, 'resilient', `after-${++i}`);
          return got.some((p) => p.startsWith('after-'));
        },
        { timeoutMs: 8000 },
      );
    } finally {
      await n2.close();
    }
  });

  test('resync handlers run once after a lost connection is back (not at the first connection); throwing ones are contained', async () => {
    const n2 = new Notifier(database.url, createLogger('silent'));
    const got: string[] = [];
    let resyncs = 0;
    try {
      n2.onResync(() => {
        throw new Error('a broken handler');
      });
      const off = n2.onResync(async () => {
        resyncs++;
      });
      await n2.listen('resync_test', (p) => got.push(p));
      await Notifier.notify(db.db, 'resync_test', 'first');
      await waitUntil('the notifications', () => got.includes('first'));
      assert.equal(resyncs, 0, 'the first connection is no resync');
      await db.pool.query(
        "select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'api-suite-listen' and datname = current_database() and query ilike '%resync_test%'",
      );
      await waitUntil('the notifications', () => resyncs === 1, { timeoutMs: 8000 });
      await Notifier.notify(db.db, 'resync_test', 'second');
      await waitUntil('the notifications', () => got.includes('second'));
      assert.equal(resyncs, 1);
      off();
    } finally {
      await n2.close();
    }
  });

  test('a notifier closed while it connects leaves no connection behind', async () => {
    const n2 = new Notifier(database.url, createLogger('silent'));
    const listening = n2.listen('closed_early', () => undefined);
    await n2.close();
    await listening.catch(() => undefined);
    const count = async () =>
      Number(
        (
          await db.pool.query(
            "select count(*)::int as n from pg_stat_activity where application_name = 'api-suite-listen' and datname = current_database() and query ilike '%closed_early%'",
          )
        ).rows[0].n,
      );
    // The connection is ended asynchronously after close(): wait for it to go (bounded).
    await waitUntil('no listening connection left', async () => (await count()) === 0, { timeoutMs: 2000 });
  });

  test('after close, nothing more is delivered', async () => {
    const n2 = new Notifier(database.url, createLogger('silent'));
    const got: string[] = [];
    await n2.listen('closing', (p) => got.push(p));
    await Notifier.notify(db.db, 'closing', 'one');
    await waitUntil('the notifications', () => got.length === 1);
    await n2.close();
    await Notifier.notify(db.db, 'closing', 'two');
    await flush();
    assert.deepEqual(got, ['one']);
  });
});
