import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { ManualClock } from '../../src/platform/clock.ts';
import { type Database, NamedStatement, openDatabase, runMigrations } from '../../src/platform/database.ts';
import { ApiError } from '../../src/platform/errors.ts';
import {
  canonicalJson,
  claimKeySql,
  IdempotencyConflictError,
  IdempotencyStore,
  type IdempotentResponse,
  requestFingerprint,
} from '../../src/platform/idempotency.ts';
import { PLATFORM_MIGRATIONS } from '../../src/platform/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../support/platform.ts';
import { waitUntil } from '../support/wait.ts';

const HOUR = 3_600_000;

describe('platform: idempotency (replay, conflict, concurrency, expiry)', () => {
  let database: TestDatabase;
  let db: Database;
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  let store: IdempotencyStore;
  let n = 0;
  /** A fresh key per test so tests do not share records. */
  const freshKey = () => `key-${++n}-${Math.random().toString(36).slice(2)}`;

  before(async () => {
    database = await createTestDatabase();
    db = openDatabase(database.url);
    await runMigrations(db.pool, [PLATFORM_MIGRATIONS]);
    await db.pool.query('create table side_effects (id serial primary key, note text)');
    store = new IdempotencyStore(db.db, clock);
  });
  after(async () => {
    await db?.close();
    await database?.drop();
  });

  test('claimKeySql: a guarded claim writes nothing when its guard is false; a claimed key replays through the store', async () => {
    const claim = new NamedStatement<{ key: string }>(
      'test_guarded_claim',
      claimKeySql(sql`${sql.placeholder('open')}::boolean`),
    );
    const key = freshKey();
    const params = { scope: 'test:guarded', key, fingerprint: 'fp', ttlMs: HOUR };
    const answer = { status: 202, body: { id: 'x' } };
    assert.deepEqual(await claim.rows(db.db, { ...store.claimValues(params, answer), open: false }), []);
    assert.equal(await store.recorded(params), undefined, 'nothing written');
    assert.equal((await claim.rows(db.db, { ...store.claimValues(params, answer), open: true })).length, 1);
    assert.deepEqual(
      await claim.rows(db.db, { ...store.claimValues(params, answer), open: true }),
      [],
      'taken',
    );
    assert.deepEqual(await store.recorded(params), { replayed: true, response: answer });
    await assert.rejects(store.recorded({ ...params, fingerprint: 'other' }), IdempotencyConflictError);
  });

  async function sideEffects(note: string): Promise<number> {
    const r = await db.pool.query('select count(*)::int as n from side_effects where note = $1', [note]);
    return r.rows[0].n as number;
  }

  /** An operation that writes a row in the caller's transaction and answers 201 with `body`. */
  function op(note: string, body: unknown, status = 201) {
    let calls = 0;
    const fn = async (
      tx: Parameters<Parameters<IdempotencyStore['run']>[1]>[0],
    ): Promise<IdempotentResponse> => {
      calls++;
      await tx.execute(sql`insert into side_effects (note) values (${note})`);
      return { status, body };
    };
    return { fn, calls: () => calls };
  }

  test('requestFingerprint ignores key order and whitespace, but not method, path or values', () => {
    const a = requestFingerprint('post', '/v1/things', { b: 1, a: { y: [1, 2], x: null } });
    const b = requestFingerprint(
      'POST',
      '/v1/things',
      JSON.parse('{ "a": {"x": null, "y": [1,2]}, "b": 1 }'),
    );
    assert.equal(a, b);
    assert.match(a, /^[0-9a-f]{64}$/);
    assert.notEqual(a, requestFingerprint('PUT', '/v1/things', { b: 1, a: { y: [1, 2], x: null } }));
    assert.notEqual(a, requestFingerprint('POST', '/v1/other', { b: 1, a: { y: [1, 2], x: null } }));
    assert.notEqual(a, requestFingerprint('POST', '/v1/things', { b: 2, a: { y: [1, 2], x: null } }));
    assert.notEqual(a, requestFingerprint('POST', '/v1/things', { b: 1, a: { y: [2, 1], x: null } }));
  });

  test('canonicalJson sorts object keys recursively and keeps array order', () => {
    assert.equal(canonicalJson({ b: 1, a: [{ d: 1, c: 2 }] }), '{"a":[{"c":2,"d":1}],"b":1}');
    assert.equal(canonicalJson(undefined), '');
    assert.equal(canonicalJson([3, 1]), '[3,1]');
  });

  test('first use runs the operation and stores its answer', async () => {
    const key = freshKey();
    const o = op(key, { id: 'thing_1', amount: 10 });
    const out = await store.run({ scope: 's', key, fingerprint: 'f1', ttlMs: HOUR }, o.fn);
    assert.deepEqual(out, {
      replayed: false,
      response: { status: 201, body: { id: 'thing_1', amount: 10 } },
    });
    assert.equal(o.calls(), 1);
    assert.equal(await sideEffects(key), 1);
  });

  test('same key and same fingerprint replays the stored answer without running again', async () => {
    const key = freshKey();
    const first = op(key, { id: 'thing_2', nested: { list: [1, 'two'] } });
    await store.run({ scope: 's', key, fingerprint: 'f', ttlMs: HOUR }, first.fn);
    const second = op(key, { id: 'DIFFERENT' }, 200);
    const out = await store.run({ scope: 's', key, fingerprint: 'f', ttlMs: HOUR }, second.fn);
    assert.equal(out.replayed, true);
    assert.deepEqual(out.response, { status: 201, body: { id: 'thing_2', nested: { list: [1, 'two'] } } });
    assert.equal(second.calls(), 0);
    assert.equal(await sideEffects(key), 1);
  });

  test('same key with a different fingerprint is a 409 idempotency_key_reused', async () => {
    const key = freshKey();
    await store.run({ scope: 's', key, fingerprint: 'f-a', ttlMs: HOUR }, op(key, {}).fn);
    const other = op(key, {});
    await assert.rejects(
      store.run({ scope: 's', key, fingerprint: 'f-b', ttlMs: HOUR }, other.fn),
      (err: unknown) =>
        err instanceof IdempotencyConflictError &&
        err instanceof ApiError &&
        err.status === 409 &&
        err.code === 'idempotency_key_reused',
    );
    assert.equal(other.calls(), 0);
    assert.equal(await sideEffects(key), 1);
  });

  test('recorded: the stored answer in one read, a conflict for another fingerprint, nothing when unused or expired', async () => {
    const key = freshKey();
    assert.equal(await store.recorded({ scope: 's', key, fingerprint: 'f' }), undefined);
    await store.run({ scope: 's', key, fingerprint: 'f', ttlMs: HOUR }, op(key, { id: 7 }).fn);
    assert.deepEqual(await store.recorded({ scope: 's', key, fingerprint: 'f' }), {
      replayed: true,
      response: { status: 201, body: { id: 7 } },
    });
    assert.equal(await store.recorded({ scope: 'other', key, fingerprint: 'f' }), undefined);
    await assert.rejects(store.recorded({ scope: 's', key, fingerprint: 'g' }), IdempotencyConflictError);
    clock.advance(HOUR);
    assert.equal(await store.recorded({ scope: 's', key, fingerprint: 'f' }), undefined, 'expired');
  });

  test('peek: the guard and the record in one statement; the record decides as recorded does', async () => {
    await db.pool.query('create table if not exists peek_guard (id int primary key, label text)');
    await db.pool.query(`insert into peek_guard values (1, 'ready') on conflict (id) do nothing`);
    const guard = {
      name: 'test_label',
      value: sql`select label from peek_guard where id = ${sql.placeholder('id')}`,
    };
    const key = freshKey();
    const unused = await store.peek<string>({ scope: 's', key, fingerprint: 'f' }, guard, { id: 1 });
    assert.equal(unused.guard, 'ready');
    assert.equal(unused.recorded(), undefined);
    assert.equal((await store.peek({ scope: 's', key, fingerprint: 'f' }, guard, { id: 2 })).guard, null);
    await store.run({ scope: 's', key, fingerprint: 'f', ttlMs: HOUR }, op(key, { id: 8 }).fn);
    const stored = await store.peek<string>({ scope: 's', key, fingerprint: 'f' }, guard, { id: 1 });
    assert.equal(stored.guard, 'ready');
    assert.deepEqual(stored.recorded(), { replayed: true, response: { status: 201, body: { id: 8 } } });
    const other = await store.peek({ scope: 's', key, fingerprint: 'g' }, guard, { id: 1 });
    assert.throws(() => other.recorded(), IdempotencyConflictError, 'the conflict is thrown when asked');
    clock.advance(HOUR);
    assert.equal(
      (await store.peek({ scope: 's', key, fingerprint: 'f' }, guard, { id: 1 })).recorded(),
      undefined,
      'expired',
    );
  });

  test('the same key in another scope is independent', async () => {
    const key = freshKey();
    await store.run({ scope: 'merchant-a', key, fingerprint: 'f', ttlMs: HOUR }, op(key, { m: 'a' }).fn);
    const out = await store.run(
      { scope: 'merchant-b', key, fingerprint: 'other', ttlMs: HOUR },
      op(key, { m: 'b' }).fn,
    );
    assert.equal(out.replayed, false);
    assert.deepEqual(out.response.body, { m: 'b' });
    assert.equal(await sideEffects(key), 2);
  });

  test('a failing operation stores nothing (its writes roll back) and a retry runs it again', async () => {
    const key = freshKey();
    await assert.rejects(
      store.run({ scope: 's', key, fingerprint: 'f', ttlMs: HOUR }, async (tx) => {
        await tx.execute(sql`insert into side_effects (note) values (${key})`);
        throw new Error('declined');
      }),
      /declined/,
    );
    assert.equal(await sideEffects(key), 0);
    const retry = op(key, { ok: true });
    const out = await store.run({ scope: 's', key, fingerprint: 'f', ttlMs: HOUR }, retry.fn);
    assert.equal(out.replayed, false);
    assert.equal(retry.calls(), 1);
  });

  test('runKnown: the answer known up front is stored with the claim and replayed; a failure stores nothing; an expired record is replaced', async () => {
    const key = freshKey();
    const params = { scope: 's', key, fingerprint: 'f', ttlMs: HOUR };
    await assert.rejects(
      store.runKnown(params, { status: 202, body: { id: 'a' } }, async (tx) => {
        await tx.execute(sql`insert into side_effects (note) values (${key})`);
        throw new Error('declined');
      }),
      /declined/,
    );
    assert.equal(await sideEffects(key), 0);
    assert.equal(await store.recorded(params), undefined);
    let calls = 0;
    const first = await store.runKnown(params, { status: 202, body: { id: 'b' } }, async (tx) => {
      calls++;
      await tx.execute(sql`insert into side_effects (note) values (${key})`);
    });
    assert.deepEqual(first, { replayed: false, response: { status: 202, body: { id: 'b' } } });
    const again = await store.runKnown(params, { status: 202, body: { id: 'c' } }, async () => {
      calls++;
    });
    assert.deepEqual(again, { replayed: true, response: { status: 202, body: { id: 'b' } } });
    assert.deepEqual(await store.recorded(params), again);
    await assert.rejects(
      store.runKnown({ ...params, fingerprint: 'other' }, { status: 202, body: {} }, async () => {
        calls++;
      }),
      IdempotencyConflictError,
    );
    assert.equal(calls, 1);
    assert.equal(await sideEffects(key), 1);
    clock.advance(HOUR + 1);
    const fresh = await store.runKnown(
      { ...params, fingerprint: 'other' },
      { status: 202, body: { id: 'd' } },
      async () => {
        calls++;
      },
    );
    assert.deepEqual(fresh, { replayed: false, response: { status: 202, body: { id: 'd' } } });
    assert.equal(calls, 2);
  });

  test('a null body is stored and replayed as null', async () => {
    const key = freshKey();
    await store.run({ scope: 's', key, fingerprint: 'f', ttlMs: HOUR }, async () => ({
      status: 204,
      body: null,
    }));
    const out = await store.run({ scope: 's', key, fingerprint: 'f', ttlMs: HOUR }, async () => ({
      status: 500,
      body: 1,
    }));
    assert.deepEqual(out, { replayed: true, response: { status: 204, body: null } });
  });

  test('concurrent requests with one key execute once; the other replays the committed answer', async () => {
    const key = freshKey();
    let calls = 0;
    const slow = async (tx: Parameters<Parameters<IdempotencyStore['run']>[1]>[0]) => {
      calls++;
      await tx.execute(sql`insert into side_effects (note) values (${key})`);
      await tx.execute(sql`select pg_sleep(0.2)`);
      return { status: 201, body: { n: calls } };
    };
    const outcomes = await Promise.all(
      Array.from({ length: 5 }, () => store.run({ scope: 's', key, fingerprint: 'f', ttlMs: HOUR }, slow)),
    );
    assert.equal(calls, 1);
    assert.equal(await sideEffects(key), 1);
    assert.equal(outcomes.filter((o) => !o.replayed).length, 1);
    for (const o of outcomes) assert.deepEqual(o.response, { status: 201, body: { n: 1 } });
  });

  test('a concurrent request with the same key but another body conflicts once the first commits', async () => {
    const key = freshKey();
    let firstHoldsKey = false;
    const slow = async (tx: Parameters<Parameters<IdempotencyStore['run']>[1]>[0]) => {
      firstHoldsKey = true;
      await tx.execute(sql`select pg_sleep(0.2)`);
      return { status: 200, body: {} };
    };
    const [a, b] = await Promise.allSettled([
      store.run({ scope: 's', key, fingerprint: 'body-1', ttlMs: HOUR }, slow),
      (async () => {
        // The operation runs once the key's record is written (uncommitted): the second comes after that.
        await waitUntil('the first request to hold the key', () => firstHoldsKey);
        return store.run({ scope: 's', key, fingerprint: 'body-2', ttlMs: HOUR }, slow);
      })(),
    ]);
    assert.equal(a.status, 'fulfilled');
    assert.equal(b.status, 'rejected');
    assert.ok((b as PromiseRejectedResult).reason instanceof IdempotencyConflictError);
  });

  test('when the first of two concurrent requests fails, the waiting one runs', async () => {
    const key = freshKey();
    let calls = 0;
    const [a, b] = await Promise.allSettled([
      store.run({ scope: 's', key, fingerprint: 'f', ttlMs: HOUR }, async (tx) => {
        calls++;
        await tx.execute(sql`select pg_sleep(0.2)`);
        throw new Error('first failed');
      }),
      (async () => {
        await waitUntil('the first request to hold the key', () => calls === 1);
        return store.run({ scope: 's', key, fingerprint: 'f', ttlMs: HOUR }, async () => {
          calls++;
          return { status: 201, body: { second: true } };
        });
      })(),
    ]);
    assert.equal(a.status, 'rejected');
    assert.equal(b.status, 'fulfilled');
    assert.deepEqual((b as PromiseFulfilledResult<{ replayed: boolean }>).value.replayed, false);
    assert.equal(calls, 2);
  });

  test('a record binds its key until its ttl passes (ManualClock), then the key runs afresh', async () => {
    const key = freshKey();
    const start = clock.nowMs();
    try {
      await store.run({ scope: 's', key, fingerprint: 'f-old', ttlMs: 48 * HOUR }, op(key, { v: 1 }).fn);
      clock.advance(48 * HOUR - 1);
      const during = await store.run(
        { scope: 's', key, fingerprint: 'f-old', ttlMs: 48 * HOUR },
        op(key, { v: 2 }).fn,
      );
      assert.equal(during.replayed, true);
      await assert.rejects(
        store.run({ scope: 's', key, fingerprint: 'f-new', ttlMs: 48 * HOUR }, op(key, {}).fn),
        IdempotencyConflictError,
      );
      clock.advance(1);
      const afterExpiry = await store.run(
        { scope: 's', key, fingerprint: 'f-new', ttlMs: 48 * HOUR },
        op(key, { v: 3 }).fn,
      );
      assert.deepEqual(afterExpiry, { replayed: false, response: { status: 201, body: { v: 3 } } });
      assert.equal(await sideEffects(key), 2);
    } finally {
      clock.set(start);
    }
  });

  test('prune deletes only expired records', async () => {
    const start = clock.nowMs();
    try {
      await db.pool.query('delete from platform.idempotency_keys');
      const short = freshKey();
      const long = freshKey();
      await store.run({ scope: 'p', key: short, fingerprint: 'f', ttlMs: 1000 }, op(short, {}).fn);
      await store.run({ scope: 'p', key: long, fingerprint: 'f', ttlMs: 10_000 }, op(long, {}).fn);
      assert.equal(await store.prune(), 0);
      clock.advance(1000);
      assert.equal(await store.prune(), 1);
      const left = await db.pool.query('select key from platform.idempotency_keys');
      assert.deepEqual(
        left.rows.map((r) => r.key),
        [long],
      );
      clock.advance(9000);
      assert.equal(await store.prune(), 1);
    } finally {
      clock.set(start);
    }
  });
});
