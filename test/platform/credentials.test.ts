import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { pgSchema, text } from 'drizzle-orm/pg-core';
import type { FastifyRequest } from 'fastify';
import { createLocalJWKSet, exportJWK, generateKeyPair, type JWTPayload, SignJWT, UnsecuredJWT } from 'jose';
import { bearerToken, defineAuthentication, firstHeader } from '../../src/platform/auth.ts';
import { ManualClock } from '../../src/platform/clock.ts';
import { CredentialStore, firstAccepting, JwtCredentialSource } from '../../src/platform/credentials.ts';
import { hashApiKey } from '../../src/platform/crypto.ts';
import { type Database, openDatabase } from '../../src/platform/database.ts';
import { expiringCredentialColumns } from '../../src/platform/db/columns.ts';
import { ApiError } from '../../src/platform/errors.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { Notifier } from '../../src/platform/notifications.ts';
import { createTestDatabase, type TestDatabase } from '../support/platform.ts';
import { waitUntil } from '../support/wait.ts';

const schema = pgSchema('kit_test');
const keys = schema.table('keys', { ...expiringCredentialColumns(), owner: text('owner').notNull() });

interface Owner {
  keyId: number;
  owner: string;
}

describe('platform: credential kit (CredentialStore)', () => {
  let database: TestDatabase;
  let db: Database;
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const notifiers: Notifier[] = [];
  const stops: (() => Promise<void>)[] = [];
  let principalReads = 0;

  const makeStore = () =>
    new CredentialStore<typeof keys, Owner, { owner: string }>({
      service: 'kit-test',
      table: keys,
      db: db.db,
      clock,
      prefixes: ['tk_', 'tk_legacy_'],
      principal: (row) => {
        principalReads++;
        return { keyId: row.id, owner: row.owner };
      },
      attributes: (row) => ({ owner: row.owner }),
    });

  /** A store on its own LISTEN connection: another instance of the service. */
  async function instance(): Promise<{ store: ReturnType<typeof makeStore>; notifier: Notifier }> {
    const notifier = new Notifier(database.url, createLogger('silent'));
    notifiers.push(notifier);
    const store = makeStore();
    stops.push(await store.listen(notifier));
    return { store, notifier };
  }

  before(async () => {
    database = await createTestDatabase();
    db = openDatabase(database.url);
    await db.pool.query(`create schema kit_test;
      create table kit_test.keys (id bigint generated always as identity primary key, key_hash text not null unique,
        hint text not null, label text, created_at timestamptz not null, revoked_at timestamptz,
        expires_at timestamptz, owner text not null)`);
  });
  after(async () => {
    for (const stop of stops) await stop();
    for (const n of notifiers) await n.close();
    await db?.close();
    await database?.drop();
  });

  test('issue: the key is shown once (<prefix> + 43 base64url), only its SHA-256 and hint are stored', async () => {
    const store = makeStore();
    const issued = await store.issue(db.db, { label: 'ci', values: { owner: 'alice' } });
    assert.match(issued.key, /^tk_[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(Object.keys(issued.record).sort(), [
      'createdAt',
      'expiresAt',
      'hint',
      'id',
      'label',
      'owner',
      'revokedAt',
    ]);
    assert.equal(issued.record.hint, issued.key.slice(-4));
    assert.equal(issued.record.owner, 'alice');
    assert.equal(issued.record.createdAt, clock.now().toISOString());
    const { rows } = await db.pool.query('select * from kit_test.keys where id = $1', [issued.row.id]);
    assert.equal(rows[0].key_hash, hashApiKey(issued.key));
    assert.ok(!JSON.stringify(rows).includes(issued.key));
    const legacy = await store.issue(db.db, { prefix: 'tk_legacy_', values: { owner: 'bob' } });
    assert.match(legacy.key, /^tk_legacy_/);
    await assert.rejects(
      store.issue(db.db, { prefix: 'xx_', values: { owner: 'bob' } }),
      /unknown credential prefix/,
    );
  });

  test('resolve: active with the principal; unknown, malformed and foreign-prefix secrets are unknown', async () => {
    const store = makeStore();
    const issued = await store.issue(db.db, { values: { owner: 'carol' } });
    assert.deepEqual(await store.resolve(issued.key), {
      status: 'active',
      principal: { keyId: issued.row.id, owner: 'carol' },
    });
    for (const secret of ['', 'tk_short', `xx_${'a'.repeat(43)}`, `tk_${'a'.repeat(43)}`, `${issued.key}x`]) {
      assert.deepEqual(await store.resolve(secret), { status: 'unknown' }, secret);
    }
  });

  test('an expiring credential resolves expired once the clock passes expiresAt, also from the cache', async () => {
    const store = makeStore();
    const issued = await store.issue(db.db, {
      values: { owner: 'dave' },
      expiresAt: new Date(clock.nowMs() + 30_000),
    });
    assert.equal((await store.resolve(issued.key)).status, 'active');
    assert.equal(issued.record.expiresAt, new Date(clock.nowMs() + 30_000).toISOString());
    clock.advance(30_000);
    assert.deepEqual(await store.resolve(issued.key), { status: 'expired' });
  });

  test('resolutions are cached for the ttl on the injected clock; concurrent resolves share one load', async () => {
    const store = makeStore();
    const issued = await store.issue(db.db, { values: { owner: 'erin' } });
    principalReads = 0;
    const answers = await Promise.all(Array.from({ length: 10 }, () => store.resolve(issued.key)));
    assert.ok(answers.every((a) => a.status === 'active'));
    assert.equal(principalReads, 1);
    // Revoked behind the store's back (no NOTIFY): the cached answer holds until the ttl is over.
    await db.db.update(keys).set({ revokedAt: clock.now() }).where(eq(keys.id, issued.row.id));
    clock.advance(59_999);
    assert.equal((await store.resolve(issued.key)).status, 'active');
    clock.advance(2);
    assert.deepEqual(await store.resolve(issued.key), { status: 'revoked' });
    assert.equal(principalReads, 1);
  });

  test('revoke: one transaction, the first revocation time kept, unknown or not-allowed ids change nothing', async () => {
    const store = makeStore();
    const a = await store.issue(db.db, { values: { owner: 'frank' } });
    const b = await store.issue(db.db, { values: { owner: 'grace' } });
    assert.equal(await store.revoke(a.row.id, { allowed: (row) => row.owner === 'someone else' }), undefined);
    assert.equal((await store.find(a.row.id))?.revokedAt, null);
    assert.equal(await store.revoke(999_999), undefined);

    await assert.rejects(
      store.revoke(b.row.id, {
        beforeCommit: async () => {
          throw new Error('boom');
        },
      }),
      /boom/,
    );
    assert.equal((await store.find(b.row.id))?.revokedAt, null);
    assert.equal((await store.resolve(b.key)).status, 'active');

    const first = clock.now();
    const revoked = await store.revoke(a.row.id, { allowed: (row) => row.owner === 'frank' });
    assert.deepEqual(revoked?.revokedAt, first);
    assert.deepEqual(await store.resolve(a.key), { status: 'revoked' });
    clock.advance(3_600_000);
    assert.deepEqual((await store.revoke(a.row.id))?.revokedAt, first);

    const listed = await store.list({ where: eq(keys.owner, 'frank') });
    assert.deepEqual(listed, []);
    const all = await store.list({ where: eq(keys.owner, 'frank'), includeRevoked: true });
    assert.deepEqual(
      all.map((r) => r.id),
      [a.row.id],
    );
    assert.equal((await store.record(all[0]!)).revokedAt, first.toISOString());
  });

  test('a revocation committed on one instance reaches another at once; a rolled-back one does not', async () => {
    const a = await instance();
    const b = await instance();
    const issued = await a.store.issue(db.db, { values: { owner: 'heidi' } });
    assert.equal((await b.store.resolve(issued.key)).status, 'active');
    let watched = 0;
    b.store.watch(issued.row.id, () => {
      watched++;
    });

    await assert.rejects(
      db.db.transaction(async (tx) => {
        await a.store.revoke(issued.row.id, { executor: tx });
        throw new Error('rollback');
      }),
      /rollback/,
    );
    assert.equal((await a.store.find(issued.row.id))?.revokedAt, null);

    await a.store.revoke(issued.row.id);
    // The clock does not move: only the notification can make B refuse the key before its ttl.
    await waitUntil(
      'B to refuse the key',
      async () => (await b.store.resolve(issued.key)).status === 'revoked',
    );
    await waitUntil("B's watcher", () => watched === 1);
    assert.equal(watched, 1, 'the rolled-back revocation fired nothing');
  });

  test('two stores of one instance on one table: a revocation through one is refused by the other at once', async () => {
    // One instance (one notifier) reading one table through two stores, as payments reads API keys and OAuth client
    // secrets: the second store must not wait for the NOTIFY to come back.
    const { store: first, notifier } = await instance();
    const second = makeStore();
    stops.push(await second.listen(notifier));
    const { store: other } = await instance();
    const issued = await first.issue(db.db, { values: { owner: 'ivan' } });
    assert.equal((await second.resolve(issued.key)).status, 'active');
    assert.equal((await other.resolve(issued.key)).status, 'active');
    await first.revoke(issued.row.id);
    assert.equal((await second.resolve(issued.key)).status, 'revoked', 'the same instance, at once');
    // Another instance learns by NOTIFY (asynchronously), not through the in-process registry.
    await waitUntil(
      'the other instance to refuse the key',
      async () => (await other.resolve(issued.key)).status === 'revoked',
    );
  });

  test('after the LISTEN connection is lost, a revocation missed meanwhile is refused once it is back', async () => {
    const b = await instance();
    const issued = await b.store.issue(db.db, { values: { owner: 'ivan' } });
    const other = await b.store.issue(db.db, { values: { owner: 'judy' } });
    assert.equal((await b.store.resolve(issued.key)).status, 'active');
    let watchedRevoked = 0;
    let watchedActive = 0;
    b.store.watch(issued.row.id, () => {
      watchedRevoked++;
    });
    b.store.watch(other.row.id, () => {
      watchedActive++;
    });
    // Revoked without a notification (as if it was sent while B was disconnected), then B's connection dies.
    await db.db.update(keys).set({ revokedAt: clock.now() }).where(eq(keys.id, issued.row.id));
    const killed = await db.pool.query(
      "select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'api-suite-listen' and datname = $1",
      [database.name],
    );
    assert.ok(killed.rowCount && killed.rowCount > 0);
    // The clock does not move (the 60 s cache would otherwise hide the revocation): the resync must.
    await waitUntil(
      'the key refused after the reconnection',
      async () => (await b.store.resolve(issued.key)).status === 'revoked',
    );
    await waitUntil('the watcher of the key revoked meanwhile', () => watchedRevoked === 1);
    assert.equal(watchedActive, 0);
    assert.equal((await b.store.resolve(other.key)).status, 'active');
  });
});

describe('platform: JwtCredentialSource (M2M JWT access tokens with jose)', () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const issuer = 'https://issuer.test';
  const audience = 'https://api.test';
  let keysOfIssuer: Awaited<ReturnType<typeof generateKeyPair>>;
  let otherKeys: Awaited<ReturnType<typeof generateKeyPair>>;
  let source: JwtCredentialSource<{ client: string }>;

  const sign = (
    claims: JWTPayload,
    options: {
      key?: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
      iss?: string;
      aud?: string;
      expSeconds?: number;
    } = {},
  ) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer(options.iss ?? issuer)
      .setAudience(options.aud ?? audience)
      .setIssuedAt(Math.floor(clock.nowMs() / 1000))
      .setExpirationTime(Math.floor(clock.nowMs() / 1000) + (options.expSeconds ?? 300))
      .sign(options.key ?? keysOfIssuer.privateKey);

  before(async () => {
    keysOfIssuer = await generateKeyPair('ES256');
    otherKeys = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(keysOfIssuer.publicKey)), kid: 'k1', alg: 'ES256' };
    source = new JwtCredentialSource({
      keys: createLocalJWKSet({ keys: [jwk] }),
      issuer,
      audience,
      clock,
      principal: (claims) =>
        claims.sub === 'revoked-client' ? 'revoked' : claims.sub ? { client: claims.sub } : 'unknown',
    });
  });

  test('a token of the issuer for the audience is active; its claims make the principal', async () => {
    assert.deepEqual(await source.resolve(await sign({ sub: 'cli_1' })), {
      status: 'active',
      principal: { client: 'cli_1' },
    });
    assert.deepEqual(await source.resolve(await sign({ sub: 'revoked-client' })), { status: 'revoked' });
    assert.deepEqual(await source.resolve(await sign({})), { status: 'unknown' });
  });

  test('expired (on the injected clock), another issuer or audience, another key, alg none, not a JWT', async () => {
    const token = await sign({ sub: 'cli_1' }, { expSeconds: 60 });
    clock.advance(60_000 + 31_000);
    assert.deepEqual(await source.resolve(token), { status: 'expired' });
    for (const bad of [
      await sign({ sub: 'cli_1' }, { iss: 'https://evil.test' }),
      await sign({ sub: 'cli_1' }, { aud: 'https://other.test' }),
      await sign({ sub: 'cli_1' }, { key: otherKeys.privateKey }),
      new UnsecuredJWT({ sub: 'cli_1' }).setIssuer(issuer).setAudience(audience).encode(),
      'not-a-jwt',
      'a.b.c',
    ]) {
      assert.deepEqual(await source.resolve(bad), { status: 'unknown' }, bad);
    }
  });

  test('firstAccepting hands a secret to the first source that accepts its form', async () => {
    const seen: string[] = [];
    const named = (name: string) => ({
      resolve: async (secret: string) => {
        seen.push(`${name}:${secret}`);
        return { status: 'active' as const, principal: name };
      },
    });
    const router = firstAccepting([
      { accepts: (s) => s.startsWith('key_'), source: named('keys') },
      { accepts: (s) => s.split('.').length === 3, source: named('jwt') },
    ]);
    assert.deepEqual(await router.resolve('key_1'), { status: 'active', principal: 'keys' });
    assert.deepEqual(await router.resolve('a.b.c'), { status: 'active', principal: 'jwt' });
    assert.deepEqual(await router.resolve('other'), { status: 'unknown' });
    assert.deepEqual(seen, ['keys:key_1', 'jwt:a.b.c']);
  });
});

describe('platform: typed authentication helpers', () => {
  test('bearerToken: the scheme is case-insensitive (RFC 9110), the token a b64token (RFC 6750)', () => {
    assert.equal(bearerToken('Bearer abc'), 'abc');
    assert.equal(bearerToken('bearer abc'), 'abc');
    assert.equal(bearerToken('BEARER \t abc.def-ghi_~+/== '), 'abc.def-ghi_~+/==');
    assert.equal(bearerToken(['Bearer first', 'Bearer second']), 'first');
    for (const bad of [
      undefined,
      '',
      'Bearer',
      'Bearer ',
      'Basic abc',
      'Bearerabc',
      'Bearer a b',
      'Bearer a=b',
    ]) {
      assert.equal(bearerToken(bad), undefined, String(bad));
    }
    assert.equal(firstHeader(['x', 'y']), 'x');
    assert.equal(firstHeader(undefined), undefined);
  });

  test('defineAuthentication keeps the principal per request; reading one never resolved is a 500', async () => {
    const auth = defineAuthentication<{ id: string }>(async (request) => {
      const token = bearerToken(request.headers.authorization);
      if (token === 'anonymous') return undefined;
      if (token !== 'good') throw new ApiError(401, 'unauthenticated', 'no');
      return { id: 'p1' };
    });
    const request = (authorization: string) =>
      ({ headers: { authorization }, url: '/x', routeOptions: { url: '/x' } }) as unknown as FastifyRequest;
    const good = request('Bearer good');
    await auth.onRequest(good);
    assert.deepEqual(auth.principal(good), { id: 'p1' });
    const anonymous = request('Bearer anonymous');
    await auth.onRequest(anonymous);
    assert.equal(auth.optionalPrincipal(anonymous), undefined);
    assert.throws(
      () => auth.principal(anonymous),
      (err: ApiError) => err.status === 500,
    );
    await assert.rejects(auth.onRequest(request('Bearer bad')), (err: ApiError) => err.status === 401);
  });
});
