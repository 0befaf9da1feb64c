import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import { ManualClock } from '../../src/platform/clock.ts';
import { ApiError } from '../../src/platform/errors.ts';
import type { ServiceApp } from '../../src/platform/http.ts';
import {
  AUTH_FAILURES_PER_MINUTE,
  clockedMemoryStore,
  createFailureCounter,
  registerRateLimit,
} from '../../src/platform/rate-limit.ts';
import { bareServiceApp } from '../support/platform.ts';

const MINUTE = 60_000;

/** A service app with the platform rate limiter: /a and /b share one hook (3 per minute), /c has its own config. */
async function buildApp(options: {
  clock: ManualClock;
  redis: Redis | undefined;
  nameSpace: string;
}): Promise<ServiceApp> {
  const app = await bareServiceApp({
    name: 'rl-test',
    operatorToken: 'operator-token-for-rate-limit-tests',
  });
  await registerRateLimit(app, options);
  const keyOf = (request: FastifyRequest) => `key:${String(request.headers['x-key'] ?? 'anon')}`;
  const limit = app.rateLimit({
    max: 3,
    timeWindow: MINUTE,
    keyGenerator: keyOf,
    errorResponseBuilder: (_request, context) =>
      new ApiError(429, 'rate_limited', `Too many requests; retry in ${Math.ceil(context.ttl / 1000)} s.`),
  });
  app.get('/a', { onRequest: limit }, async () => ({ route: 'a' }));
  app.get('/b', { onRequest: limit }, async () => ({ route: 'b' }));
  app.get('/c', { config: { rateLimit: { max: 5, timeWindow: 10_000, keyGenerator: keyOf } } }, async () => ({
    route: 'c',
  }));
  app.get('/free', async () => ({ route: 'free' }));
  app.get('/private', async (request) => {
    if (request.headers['x-key'] !== 'good') throw new ApiError(401, 'unauthenticated', 'Unknown key.');
    return { route: 'private' };
  });
  await app.ready();
  return app;
}

/** Fails authentication `n` times from `remoteAddress` on `app`. */
async function failAuthentication(app: ServiceApp, remoteAddress: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const res = await app.inject({ url: '/private', headers: { 'x-key': 'bad' }, remoteAddress });
    assert.equal(res.statusCode, 401, `failure ${i + 1}`);
  }
}

describe('platform: rate limiting (in-memory store on the injected clock)', () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  let app: ServiceApp;
  const get = (url: string, key = 'k1') => app.inject({ url, headers: { 'x-key': key } });

  before(async () => {
    app = await buildApp({ clock, redis: undefined, nameSpace: 'rl-test:' });
  });
  after(() => app.close());

  test('allows max requests in a window, then answers 429 in the service format with Retry-After', async () => {
    for (let i = 1; i <= 3; i++) {
      const res = await get('/a', 'limit');
      assert.equal(res.statusCode, 200, `request ${i}`);
      assert.equal(res.headers['x-ratelimit-limit'], '3');
      assert.equal(res.headers['x-ratelimit-remaining'], String(3 - i));
    }
    clock.advance(15_000);
    const limited = await get('/a', 'limit');
    assert.equal(limited.statusCode, 429);
    assert.deepEqual(limited.json(), { code: 'rate_limited', message: 'Too many requests; retry in 45 s.' });
    assert.equal(
      limited.headers['retry-after'],
      '45',
      'seconds until the window started by the first request ends',
    );
    assert.equal(limited.headers['x-ratelimit-remaining'], '0');
  });

  test('moving the clock to the end of the window resets the counter', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await get('/a', 'reset')).statusCode, 200);
    clock.advance(MINUTE - 1);
    const still = await get('/a', 'reset');
    assert.equal(still.statusCode, 429);
    assert.equal(still.headers['retry-after'], '1');
    clock.advance(1);
    const fresh = await get('/a', 'reset');
    assert.equal(fresh.statusCode, 200);
    assert.equal(fresh.headers['x-ratelimit-remaining'], '2', 'a new window counts from one');
  });

  test('a key budget is shared across the routes that use it', async () => {
    assert.equal((await get('/a', 'shared')).statusCode, 200);
    assert.equal((await get('/b', 'shared')).statusCode, 200);
    assert.equal((await get('/a', 'shared')).statusCode, 200);
    assert.equal(
      (await get('/b', 'shared')).statusCode,
      429,
      'the fourth request of the key, on another route',
    );
    // /c allows 5 per key, but the key has already used 4 requests on /a and /b: this is its fifth.
    const viaC = await get('/c', 'shared');
    assert.equal(viaC.statusCode, 200);
    assert.equal(
      viaC.headers['x-ratelimit-remaining'],
      '0',
      'the counter of the key is shared with /a and /b',
    );
    assert.equal((await get('/c', 'shared')).statusCode, 429);
  });

  test('different keys have separate counters; unlimited routes are not counted', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await get('/a', 'one')).statusCode, 200);
    assert.equal((await get('/a', 'one')).statusCode, 429);
    assert.equal((await get('/a', 'two')).statusCode, 200);
    for (let i = 0; i < 10; i++) assert.equal((await get('/free', 'one')).statusCode, 200);
  });

  test('a route-config limit without its own builder still answers 429 rate_limited in the service format', async () => {
    for (let i = 0; i < 5; i++) assert.equal((await get('/c', 'cfg')).statusCode, 200);
    const limited = await get('/c', 'cfg');
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.json().code, 'rate_limited');
    assert.equal(limited.headers['retry-after'], '10');
    clock.advance(10_000);
    assert.equal((await get('/c', 'cfg')).statusCode, 200);
  });

  test(`past ${AUTH_FAILURES_PER_MINUTE} failed authentications a minute an address gets 429 until the window ends`, async () => {
    await failAuthentication(app, '192.0.2.1', AUTH_FAILURES_PER_MINUTE);
    clock.advance(20_000);
    const refused = await app.inject({
      url: '/private',
      headers: { 'x-key': 'good' },
      remoteAddress: '192.0.2.1',
    });
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.json().code, 'rate_limited');
    assert.equal(refused.headers['retry-after'], '40');
    assert.equal(
      (await app.inject({ url: '/free', remoteAddress: '192.0.2.1' })).statusCode,
      429,
      'every route',
    );
    assert.equal(
      (await app.inject({ url: '/healthz', remoteAddress: '192.0.2.1' })).statusCode,
      200,
      'not probes',
    );
    const other = await app.inject({
      url: '/private',
      headers: { 'x-key': 'good' },
      remoteAddress: '192.0.2.2',
    });
    assert.equal(other.statusCode, 200, 'another address is not refused');
    clock.advance(40_000);
    const again = await app.inject({
      url: '/private',
      headers: { 'x-key': 'good' },
      remoteAddress: '192.0.2.1',
    });
    assert.equal(again.statusCode, 200, 'a new window');
  });

  test('loopback clients are neither counted nor refused (a local proxy without TRUST_PROXY is every client)', async () => {
    for (const address of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) {
      await failAuthentication(app, address, AUTH_FAILURES_PER_MINUTE + 5);
      assert.equal((await app.inject({ url: '/free', remoteAddress: address })).statusCode, 200, address);
    }
  });

  test('successful requests and other errors do not count as failed authentications', async () => {
    for (let i = 0; i < AUTH_FAILURES_PER_MINUTE + 5; i++) {
      assert.equal((await app.inject({ url: '/nowhere', remoteAddress: '192.0.2.3' })).statusCode, 404);
      await app.inject({ url: '/private', headers: { 'x-key': 'good' }, remoteAddress: '192.0.2.3' });
    }
    assert.equal((await app.inject({ url: '/free', remoteAddress: '192.0.2.3' })).statusCode, 200);
  });

  test('a Redis outage lets requests through (skipOnError)', async () => {
    const broken = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    broken.on('error', () => undefined);
    const outageApp = await buildApp({ clock, redis: broken, nameSpace: 'rl-outage:' });
    try {
      for (let i = 0; i < 6; i++) {
        const res = await outageApp.inject({ url: '/a', headers: { 'x-key': 'outage' } });
        assert.equal(res.statusCode, 200, `request ${i + 1}`);
      }
    } finally {
      await outageApp.close();
      broken.disconnect();
    }
  });
});

describe('platform: clockedMemoryStore', () => {
  function incr(
    store: {
      incr: (
        k: string,
        cb: (e: Error | null, r?: { current: number; ttl: number }) => void,
        w: number,
      ) => void;
    },
    key: string,
    windowMs: number,
  ) {
    let out: { current: number; ttl: number } | undefined;
    store.incr(
      key,
      (err, r) => {
        assert.equal(err, null);
        out = r;
      },
      windowMs,
    );
    assert.ok(out);
    return out;
  }

  test('fixed windows follow the clock, including a clock moved backwards', () => {
    const clock = new ManualClock(1_000_000);
    const Store = clockedMemoryStore(clock);
    const store = new Store();
    assert.deepEqual(incr(store, 'k', 1000), { current: 1, ttl: 1000 });
    clock.advance(400);
    assert.deepEqual(incr(store, 'k', 1000), { current: 2, ttl: 600 });
    clock.advance(600);
    assert.deepEqual(incr(store, 'k', 1000), { current: 1, ttl: 1000 });
    clock.advance(-5000);
    assert.deepEqual(
      incr(store, 'k', 1000),
      { current: 1, ttl: 1000 },
      'a window from the future is restarted',
    );
    assert.equal(store.child(), store, 'routes share the one store');
  });

  test('memory stays bounded: the oldest key is dropped at maxKeys', () => {
    const clock = new ManualClock(0);
    const Store = clockedMemoryStore(clock, 2);
    const store = new Store();
    incr(store, 'a', 1000);
    incr(store, 'a', 1000);
    incr(store, 'b', 1000);
    incr(store, 'c', 1000);
    assert.equal(incr(store, 'b', 1000).current, 2, 'b was kept');
    assert.equal(incr(store, 'a', 1000).current, 1, 'a (the oldest) was dropped and starts over');
  });
});

const REDIS_URL = process.env.REDIS_URL;

describe('platform: rate limiting with the Redis store', {
  skip: REDIS_URL ? false : 'REDIS_URL is not set',
}, () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const nameSpace = `rl-test-${randomBytes(4).toString('hex')}:`;
  let redis: Redis;
  let instanceA: ServiceApp;
  let instanceB: ServiceApp;

  before(async () => {
    redis = new Redis(REDIS_URL!, { maxRetriesPerRequest: 2 });
    instanceA = await buildApp({ clock, redis, nameSpace });
    instanceB = await buildApp({ clock, redis, nameSpace });
  });
  after(async () => {
    await instanceA?.close();
    await instanceB?.close();
    if (redis) {
      const keys = await redis.keys(`${nameSpace}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
  });

  test('counters are shared by every instance and limit with 429 and Retry-After', async () => {
    const headers = { 'x-key': 'redis-shared' };
    assert.equal((await instanceA.inject({ url: '/a', headers })).statusCode, 200);
    assert.equal((await instanceB.inject({ url: '/b', headers })).statusCode, 200);
    assert.equal((await instanceA.inject({ url: '/a', headers })).statusCode, 200);
    const limited = await instanceB.inject({ url: '/a', headers });
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.json().code, 'rate_limited');
    const retryAfter = Number(limited.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `retry-after ${retryAfter}`);
    assert.equal(
      (await instanceA.inject({ url: '/a', headers: { 'x-key': 'redis-other' } })).statusCode,
      200,
    );
  });

  test('failed authentications are counted across instances', async () => {
    await failAuthentication(instanceA, '192.0.2.9', AUTH_FAILURES_PER_MINUTE - 1);
    await failAuthentication(instanceB, '192.0.2.9', 1);
    const refused = await instanceA.inject({ url: '/free', remoteAddress: '192.0.2.9' });
    assert.equal(refused.statusCode, 429);
    const ttl = await redis.pttl(`${nameSpace}auth-failures:192.0.2.9`);
    assert.ok(ttl > 0 && ttl <= 60_000, `the counter expires with its window (${ttl} ms)`);
  });

  test('the counter lives under the namespace with the window as its expiry', async () => {
    await instanceA.inject({ url: '/a', headers: { 'x-key': 'redis-ttl' } });
    const key = `${nameSpace}key:redis-ttl`;
    assert.equal(await redis.get(key), '1');
    const pttl = await redis.pttl(key);
    assert.ok(pttl > 0 && pttl <= MINUTE, `pttl ${pttl}`);
    // An expired window (simulated by dropping the key, as Redis would at its expiry) starts over.
    await instanceA.inject({ url: '/a', headers: { 'x-key': 'redis-ttl' } });
    assert.equal(await redis.get(key), '2');
    await redis.del(key);
    const res = await instanceA.inject({ url: '/a', headers: { 'x-key': 'redis-ttl' } });
    assert.equal(res.headers['x-ratelimit-remaining'], '2');
  });

  test('a counter left without expiry gets one again', async () => {
    const key = `${nameSpace}key:redis-noexpire`;
    await redis.set(key, '1');
    await instanceA.inject({ url: '/a', headers: { 'x-key': 'redis-noexpire' } });
    const pttl = await redis.pttl(key);
    assert.ok(pttl > 0 && pttl <= MINUTE, `pttl ${pttl}`);
  });
});

describe('platform: createFailureCounter', () => {
  test('in memory: one-minute windows per key on the clock; peek reads without counting', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const counter = createFailureCounter({ clock, redis: undefined, prefix: 'x:' });
    assert.equal(await counter.peek('a'), undefined);
    await counter.count('a');
    await counter.count('a');
    await counter.count('b');
    clock.advance(20_000);
    assert.deepEqual(await counter.peek('a'), { count: 2, ttlMs: 40_000 });
    assert.deepEqual(await counter.peek('a'), { count: 2, ttlMs: 40_000 }, 'peek does not count');
    assert.equal((await counter.peek('b'))?.count, 1);
    clock.advance(40_000);
    assert.equal(await counter.peek('a'), undefined, 'the window ended');
  });

  test('in Redis: shared by every counter on the same prefix, with the window as expiry', {
    skip: REDIS_URL ? false : 'REDIS_URL is not set',
  }, async () => {
    const redis = new Redis(REDIS_URL!, { maxRetriesPerRequest: 2 });
    const prefix = `fc-test-${randomBytes(4).toString('hex')}:`;
    try {
      const clock = new ManualClock();
      const a = createFailureCounter({ clock, redis, prefix });
      const b = createFailureCounter({ clock, redis, prefix });
      await a.count('k');
      await b.count('k');
      const seen = await a.peek('k');
      assert.equal(seen?.count, 2);
      assert.ok(seen!.ttlMs > 0 && seen!.ttlMs <= MINUTE);
    } finally {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
  });
});
