import rateLimit, { type FastifyRateLimitStore } from '@fastify/rate-limit';
import type { FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { Clock } from './clock.ts';
import type { ApiError } from './errors.ts';
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
  options: { clock: Clock; redis: Redis | undefined; nameSpace: string },
): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    nameSpace: options.nameSpace,
    // A Redis outage must not take the APIs down: requests pass unlimited until it is back.
    skipOnError: true,
    store: options.redis ? redisStore(options.redis, options.nameSpace) : clockedMemoryStore(options.clock),
  });
}

/**
 * An `onRequest` hook counting requests per minute in fixed windows per `bucket` (a credential id, a client
 * address), to put after the route's authentication hook. Past `max(request)` in a window the request is answered
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
