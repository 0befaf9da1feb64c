import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/platform/clock.ts';
import { type Database, openDatabase } from '../../src/platform/database.ts';
import { KeyCache } from '../../src/platform/key-cache.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { Notifier } from '../../src/platform/notifications.ts';
import { createTestDatabase, type TestDatabase } from '../../src/platform/testing.ts';

async function waitFor(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('platform: KeyCache (API-key lookups, revocation across instances)', () => {
  let database: TestDatabase;
  let db: Database;
  const notifiers: Notifier[] = [];

  before(async () => {
    database = await createTestDatabase();
    db = openDatabase(database.url);
  });
  after(async () => {
    for (const n of notifiers) await n.close();
    await db?.close();
    await database?.drop();
  });

  test('caches a lookup for its ttl, then loads again (moving the clock)', async () => {
    const clock = new ManualClock(0);
    const cache = new KeyCache<string>('test_keys_ttl', clock, 60_000);
    let loads = 0;
    const load = async (h: string) => {
      loads++;
      return `value-of-${h}`;
    };
    assert.equal(await cache.get('h1', load), 'value-of-h1');
    assert.equal(await cache.get('h1', load), 'value-of-h1');
    assert.equal(loads, 1);
    clock.advance(59_999);
    await cache.get('h1', load);
    assert.equal(loads, 1);
    clock.advance(1);
    await cache.get('h1', load);
    assert.equal(loads, 2);
  });

  test('concurrent lookups of one hash share one load', async () => {
    const cache = new KeyCache<number>('test_keys_flight', new ManualClock(0));
    let loads = 0;
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        cache.get('h', async () => {
          loads++;
          await new Promise((r) => setTimeout(r, 20));
          return 7;
        }),
      ),
    );
    assert.deepEqual(results, Array(10).fill(7));
    assert.equal(loads, 1);
  });

  test('a revocation committed on one instance drops the entry on another; a rolled-back one does not', async () => {
    const clock = new ManualClock(0);
    const logger = createLogger('silent');
    const instanceA = new KeyCache<string>('test_keys_revoked', clock);
    const instanceB = new KeyCache<string>('test_keys_revoked', clock);
    const notifierB = new Notifier(database.url, logger);
    notifiers.push(notifierB);
    await instanceB.listen(notifierB);
    let state = 'valid';
    let loadsB = 0;
    const loadB = async () => {
      loadsB++;
      return state;
    };
    assert.equal(await instanceB.get('hash-1', loadB), 'valid');

    // Rolled back: B keeps its entry.
    await assert.rejects(
      db.db.transaction(async (tx) => {
        await instanceA.revoked(tx, 'hash-1');
        throw new Error('rollback');
      }),
    );
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(await instanceB.get('hash-1', loadB), 'valid');
    assert.equal(loadsB, 1);

    // Committed: B drops it and loads the new state at once, long before the ttl.
    state = 'revoked';
    await db.db.transaction(async (tx) => {
      await instanceA.revoked(tx, 'hash-1');
    });
    let seen = '';
    await waitFor(() => {
      void instanceB.get('hash-1', loadB).then((v) => {
        seen = v;
      });
      return seen === 'revoked';
    });
    assert.equal(seen, 'revoked');
  });
});
