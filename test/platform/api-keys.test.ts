import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { integer, pgSchema, text, timestamp } from 'drizzle-orm/pg-core';
import { revokeApiKey } from '../../src/platform/api-keys.ts';
import { ManualClock } from '../../src/platform/clock.ts';
import { hashApiKey, issueApiKey } from '../../src/platform/crypto.ts';
import { type Database, openDatabase } from '../../src/platform/database.ts';
import { KeyCache } from '../../src/platform/key-cache.ts';
import { createTestDatabase, type TestDatabase } from '../../src/platform/testing.ts';

const schema = pgSchema('keys_test');
const keys = schema.table('api_keys', {
  id: integer('id').primaryKey(),
  keyHash: text('key_hash').notNull(),
  owner: text('owner').notNull(),
  revokedAt: timestamp('revoked_at', { withTimezone: true }),
});

describe('platform: revokeApiKey (one transaction, first revocation time kept, cache dropped)', () => {
  let database: TestDatabase;
  let db: Database;
  const clock = new ManualClock(Date.UTC(2026, 0, 1));

  before(async () => {
    database = await createTestDatabase();
    db = openDatabase(database.url);
    await db.pool.query(
      'create schema keys_test; create table keys_test.api_keys (id int primary key, key_hash text not null, owner text not null, revoked_at timestamptz)',
    );
  });
  after(async () => {
    await db?.close();
    await database?.drop();
  });

  async function insertKey(id: number) {
    const issued = issueApiKey('tk_');
    await db.db.insert(keys).values({ id, keyHash: issued.hash, owner: `owner-${id}` });
    return issued;
  }

  test('revokes a key, drops its cached lookup, and reports extra read in the same transaction', async () => {
    const issued = await insertKey(1);
    const cache = new KeyCache<string>('keys_test_revoked', clock);
    let loads = 0;
    const load = async () => {
      loads++;
      return 'valid';
    };
    await cache.get(hashApiKey(issued.plaintext), load);
    const result = await revokeApiKey(db.db, keys, 1, {
      now: clock.now(),
      cache,
      extra: async (_tx, row) => row.owner.toUpperCase(),
    });
    assert.ok(result);
    assert.equal(result.extra, 'OWNER-1');
    assert.deepEqual(result.row.revokedAt, clock.now());
    const [stored] = await db.db.select().from(keys).where(eq(keys.id, 1));
    assert.deepEqual(stored?.revokedAt, clock.now());
    await cache.get(hashApiKey(issued.plaintext), load);
    assert.equal(loads, 2, 'the cached lookup was dropped, so the next one loads again');
  });

  test('revoking again keeps the first revocation time', async () => {
    const first = clock.now();
    clock.advance(3_600_000);
    const cache = new KeyCache<string>('keys_test_revoked', clock);
    const again = await revokeApiKey(db.db, keys, 1, { now: clock.now(), cache });
    assert.deepEqual(again?.row.revokedAt, first);
  });

  test('an unknown id gives undefined and changes nothing', async () => {
    await insertKey(2);
    const cache = new KeyCache<string>('keys_test_revoked', clock);
    assert.equal(await revokeApiKey(db.db, keys, 999, { now: clock.now(), cache }), undefined);
    const [other] = await db.db.select().from(keys).where(eq(keys.id, 2));
    assert.equal(other?.revokedAt, null);
  });

  test('a failure in extra rolls the revocation back', async () => {
    const cache = new KeyCache<string>('keys_test_revoked', clock);
    await assert.rejects(
      revokeApiKey(db.db, keys, 2, {
        now: clock.now(),
        cache,
        extra: async () => {
          throw new Error('boom');
        },
      }),
      /boom/,
    );
    const [row] = await db.db.select().from(keys).where(eq(keys.id, 2));
    assert.equal(row?.revokedAt, null);
  });
});
