import rateLimit, { type FastifyRateLimitStore } from '@fastify/rate-limit';
import type { FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { isLoopbackAddress } from './addresses.ts';
import type { Clock } from './clock.ts';
import { type ApiError, platformError } from './errors.ts';
import type { ServiceApp } from './http.ts';

/**
 * Rate limiting with `@fastify/rate-limit` (docs/architecture.md, "Scale-out"): counters in Redis when `REDIS_URL`
 * is set (shared by every instance), otherwise in process memory. The in-memory store reads the injectable
 * {@link Clock}, so tests cross a window by moving the clock. Windows are fixed: the first request of a key starts a
 * window of `timeWindow` ms.
 *
 * Counters are per key across all routes of a service (a key's budget is shared by its endpoints); a service that
 * wants per-route budgets puts the route in its `keyGenerator`.
 *
 * Services declare limits per route (`config.rateLimit`) or as a hook from `app.rateLimit({...})`, with their own
 * `keyGenerator`, `max` and `errorResponseBuilder` (which throws an ApiError rendered in the service's body).
 */
export async function registerRateLimit(
  app: ServiceApp,
  options: { clock: Clock; redis: Redis | undefined; nameSpace: string; limitAuthFailures?: boolean },
): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    nameSpace: options.nameSpace,
    // A Redis outage must not take the APIs down: requests pass unlimited until it is back.
    skipOnError: true,
    store: options.redis ? redisStore(options.redis, options.nameSpace) : clockedMemoryStore(options.clock),
  });
  if (options.limitAuthFailures !== false) limitAuthenticationFailures(app, options);
}

/** Failed authentications (401 answers) one client address may get per minute; past them its requests are 429s. */
export const AUTH_FAILURES_PER_MINUTE = 30;

/**
 * Counts every 401 answer per client address (`request.ip`, after `TRUST_PROXY`) in fixed one-minute windows, in
 * Redis when configured (shared by every instance) or in memory; once an address has {@link AUTH_FAILURES_PER_MINUTE}
 * in its window, its requests are answered 429 `rate_limited` with `Retry-After` in the service's format until the
 * window ends, before any credential is looked up. Guessing keys, or a client stuck with a revoked one, cannot make
 * unbounded lookups on any service; the probes (`/healthz`, `/readyz`) are never refused. Loopback clients are
 * neither counted nor refused: behind a local reverse proxy without `TRUST_PROXY` every client would be 127.0.0.1,
 * and 30 bad keys from anyone would lock everyone out. A Redis outage lets requests through, as the rate limits do.
 */
function limitAuthenticationFailures(
  app: ServiceApp,
  options: { clock: Clock; redis: Redis | undefined; nameSpace: string },
): void {
  const counter = createFailureCounter({ ...options, prefix: `${options.nameSpace}auth-failures:` });
  app.addHook('onRequest', async (request) => {
    const url = request.routeOptions.url;
    if (url === '/healthz' || url === '/readyz' || isLoopbackAddress(request.ip)) return;
    const window = await counter.peek(request.ip).catch(() => undefined);
    if (window && window.count >= AUTH_FAILURES_PER_MINUTE) {
      const retryAfter = String(Math.max(1, Math.ceil(window.ttlMs / 1000)));
      throw platformError(
        'rate_limited',
        `Too many failed authentications from this address; retry in ${retryAfter} s.`,
        { headers: { 'retry-after': retryAfter } },
      );
    }
  });
  app.addHook('onResponse', async (request, reply) => {
    if (reply.statusCode === 401 && !isLoopbackAddress(request.ip))
      await counter.count(request.ip).catch(() => undefined);
  });
}

/**
 * A fixed-window counter of failures per key (one-minute windows): `count` adds one, `peek` reads the current
 * window (`undefined` when the key has none), `ttlMs` being what is left of it in milliseconds. For limits that
 * count failures only (failed sign-ins of one username), where a rate limit would also count the successes.
 */
export interface FailureCounter {
  count(key: string): Promise<void>;
  peek(key: string): Promise<{ count: number; ttlMs: number } | undefined>;
}

/**
 * A {@link FailureCounter}: in Redis under `prefix` when `redis` is given (shared by every instance; windows in
 * Redis time), otherwise in process memory on `clock` (tests move the clock across a window). Callers treat a
 * Redis error as "no limit" (`.catch(() => undefined)`), as the rate limits do.
 */
export function createFailureCounter(options: {
  clock: Clock;
  redis: Redis | undefined;
  prefix: string;
}): FailureCounter {
  return options.redis
    ? redisFailureCounter(options.redis, options.prefix)
    : memoryFailureCounter(options.clock);
}

/** {@link FailureCounter} in process memory on `clock` (one-minute windows; at most `maxKeys`, oldest dropped). */
function memoryFailureCounter(clock: Clock, maxKeys = 100_000): FailureCounter {
  const windows = new Map<string, { count: number; startMs: number }>();
  const current = (key: string) => {
    const w = windows.get(key);
    const now = clock.nowMs();
    return w && w.startMs <= now && now < w.startMs + 60_000 ? { w, now } : { w: undefined, now };
  };
  return {
    async count(key) {
      const { w, now } = current(key);
      if (w) {
        w.count += 1;
        return;
      }
      windows.delete(key);
      if (windows.size >= maxKeys) {
        const oldest = windows.keys().next().value;
        if (oldest !== undefined) windows.delete(oldest);
      }
      windows.set(key, { count: 1, startMs: now });
    },
    async peek(key) {
      const { w, now } = current(key);
      return w ? { count: w.count, ttlMs: w.startMs + 60_000 - now } : undefined;
    },
  };
}

/** {@link FailureCounter} in Redis under `prefix` (`INCR` with a one-minute `PEXPIRE`; `GET` and `PTTL` to read). */
function redisFailureCounter(redis: Redis, prefix: string): FailureCounter {
  return {
    async count(key) {
      await redis.eval(INCR_SCRIPT, 1, `${prefix}${key}`, '60000');
    },
    async peek(key) {
      const [[, count], [, ttl]] = (await redis
        .multi()
        .get(`${prefix}${key}`)
        .pttl(`${prefix}${key}`)
        .exec()) as [[unknown, string | null], [unknown, number]];
      return count === null ? undefined : { count: Number(count), ttlMs: Math.max(0, ttl) };
    },
  };
}

/**
 * An `onRequest` hook counting requests per minute in fixed windows per `bucket` (a credential id, a client
 * address), to put after the route's authentication hook. A request is counted by the first such hook of its route
 * only (@fastify/rate-limit runs one limit per request): a route with its own budget puts that hook instead. Past `max(request)` in a window the request is answered
 * with `exceeded(retryAfterSeconds, max, request)` (the service's 429 with `Retry-After`; at least 1 second).
 */
export function perMinuteLimit(
  app: ServiceApp,
  options: {
    max: (request: FastifyRequest) => number;
    bucket: (request: FastifyRequest) => string;
    exceeded: (retryAfterSeconds: number, max: number, request: FastifyRequest) => ApiError;
  },
) {
  return app.rateLimit({
    timeWindow: 60_000,
    max: options.max,
    keyGenerator: options.bucket,
    errorResponseBuilder: (request, context) =>
      options.exceeded(Math.max(1, Math.ceil(context.ttl / 1000)), context.max, request),
  });
}

/** Builds a store class (the plugin instantiates it) whose fixed windows follow `clock`. */
export function clockedMemoryStore(clock: Clock, maxKeys = 100_000) {
  return class ClockedMemoryStore implements FastifyRateLimitStore {
    private readonly windows = new Map<string, { count: number; startMs: number }>();

    incr(
      key: string,
      callback: (error: Error | null, result?: { current: number; ttl: number }) => void,
      timeWindow: number,
    ): void {
      const now = clock.nowMs();
      let w = this.windows.get(key);
      if (!w || w.startMs + timeWindow <= now || w.startMs > now) {
        if (!w && this.windows.size >= maxKeys) {
          // Drop the oldest key (Map keeps insertion order) so memory stays bounded.
          const oldest = this.windows.keys().next().value;
          if (oldest !== undefined) this.windows.delete(oldest);
        }
        w = { count: 0, startMs: now };
        this.windows.delete(key);
        this.windows.set(key, w);
      }
      w.count += 1;
      callback(null, { current: w.count, ttl: w.startMs + timeWindow - now });
    }

    child(): FastifyRateLimitStore {
      return this;
    }
  };
}

const INCR_SCRIPT = `
local current = redis.call('INCR', KEYS[1])
if current == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {current, ttl}`;

/** Builds a store class keeping fixed-window counters in Redis (`INCR` + `PEXPIRE`, atomic in one script). */
export function redisStore(redis: Redis, nameSpace: string) {
  return class RedisWindowStore implements FastifyRateLimitStore {
    incr(
      key: string,
      callback: (error: Error | null, result?: { current: number; ttl: number }) => void,
      timeWindow: number,
    ): void {
      redis.eval(INCR_SCRIPT, 1, `${nameSpace}${key}`, String(timeWindow)).then(
        (result) => {
          const [current, ttl] = result as [number, number];
          callback(null, { current, ttl });
        },
        (err: Error) => callback(err),
      );
    }

    child(): FastifyRateLimitStore {
      return this;
    }
  };
}
