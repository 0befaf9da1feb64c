import negotiate from '@fastify/accept-negotiator';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { defineAuthentication } from '../../platform/auth.ts';
import type { Clock } from '../../platform/clock.ts';
import type { ServiceApp } from '../../platform/http.ts';
import { perMinuteLimit } from '../../platform/rate-limit.ts';
import type { KeyPrincipal, KeyStore } from './api-keys.ts';
import {
  keyInvalid,
  keyMissing,
  keyRevoked,
  planRestricted,
  rateLimited,
  wrongKeyHeader,
} from './coins-errors.ts';
import { CoinErrorBody, CoinListQuery, CoinListResponse, PingResponse } from './coins-schemas.ts';
import type { SnapshotBody, SnapshotCache } from './snapshots.ts';

const ENCODINGS = ['br', 'gzip', 'identity'] as const;

/** The keys a public route takes: a demo or paid-plan key, in its header or the query. */
const COIN_KEY_SECURITY: Record<string, string[]>[] = [
  { demoKey: [] },
  { proKey: [] },
  { demoKeyQuery: [] },
  { proKeyQuery: [] },
];

function single(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return undefined;
}

/**
 * The caller of the coin list, from its demo key (`x-coin-demo-api-key` header or `x_coin_demo_api_key` query) or
 * paid-plan key (`x-coin-pro-api-key` / `x_coin_pro_api_key`; it wins when both are sent).
 * @throws ApiError 401: key missing (10002), unknown (10010), revoked (10011), or sent in the other tier's header.
 */
export function coinsAuthentication(keys: KeyStore) {
  return defineAuthentication<KeyPrincipal>(async (request) => {
    const q = request.query as Record<string, unknown>;
    const demo = single(request.headers['x-coin-demo-api-key']) ?? single(q.x_coin_demo_api_key);
    const pro = single(request.headers['x-coin-pro-api-key']) ?? single(q.x_coin_pro_api_key);
    const presented = pro ?? demo;
    if (presented === undefined || presented === '') throw keyMissing();
    const found = await keys.resolve(presented);
    if (found.status === 'revoked') throw keyRevoked();
    if (found.status !== 'active') throw keyInvalid();
    const headerTier = pro !== undefined ? 'pro' : 'demo';
    if (found.principal.tier !== headerTier) throw wrongKeyHeader(found.principal.tier);
    return found.principal;
  });
}

/**
 * The public API: `GET /api/v3/coins/list` (and its `HEAD`). Authentication and the per-key rate limit run in
 * `onRequest`, before validation, so a keyless or over-limit request is answered 401/429 whatever its query.
 */
export async function registerCoinRoutes(
  app: ServiceApp,
  deps: { keys: KeyStore; snapshots: SnapshotCache; clock: Clock },
) {
  const auth = coinsAuthentication(deps.keys);
  const limit = perMinuteLimit(app, {
    max: (request) => auth.optionalPrincipal(request)?.rateLimitPerMinute ?? 1,
    bucket: (request) => `key:${auth.optionalPrincipal(request)?.keyId ?? 'none'}`,
    exceeded: (retryAfterSeconds) => rateLimited(retryAfterSeconds),
  });

  app.get(
    '/api/v3/coins/list',
    {
      onRequest: [auth.onRequest, limit],
      schema: {
        operationId: 'coinsList',
        tags: ['coins'],
        summary: 'Coins list (ID map)',
        description:
          'All supported coins with id, symbol and name, sorted by id; with `include_platform=true` also the token ' +
          'contract address per platform (`{}` for native coins). No pagination. The public tier (demo key) sees a ' +
          'snapshot refreshed every 30 minutes, paid tiers every 5 minutes. Supports `ETag`/`If-None-Match` and ' +
          'gzip/br. Inactive coins (`status=inactive`) need a paid-plan key.',
        security: COIN_KEY_SECURITY,
        querystring: CoinListQuery,
        response: {
          200: CoinListResponse,
          304: { type: 'null', description: 'Not modified (If-None-Match matched the ETag)' },
          400: CoinErrorBody,
          401: CoinErrorBody,
          429: CoinErrorBody,
        },
      },
    },
    async (request, reply) => {
      const principal = auth.principal(request);
      const status = request.query.status ?? 'active';
      if (status === 'inactive' && principal.tier !== 'pro') throw planRestricted('Listing inactive coins');
      const body = await deps.snapshots.get(principal.tier === 'pro' ? 'paid' : 'public', {
        status,
        includePlatform: request.query.include_platform === 'true',
      });
      return sendSnapshot(request, reply, body, deps.clock.nowMs());
    },
  );

  app.get(
    '/api/v3/ping',
    {
      onRequest: [auth.onRequest, limit],
      schema: {
        operationId: 'ping',
        tags: ['ping'],
        summary: 'Check the API server status',
        description:
          'CoinGecko\'s `GET /ping`: `{"gecko_says": "(V3) To the Moon!"}` while the service answers. Takes the same ' +
          "keys as the coin list and counts against the key's rate limit.",
        security: COIN_KEY_SECURITY,
        response: { 200: PingResponse, 401: CoinErrorBody, 429: CoinErrorBody },
      },
    },
    async () => ({ gecko_says: PING_ANSWER }),
  );
}

/** What `GET /api/v3/ping` answers, word for word as CoinGecko does (its clients may compare it). */
export const PING_ANSWER = '(V3) To the Moon!';

function sendSnapshot(request: FastifyRequest, reply: FastifyReply, body: SnapshotBody, nowMs: number) {
  const maxAge = Math.max(0, Math.floor((body.refreshAt.getTime() - nowMs) / 1000));
  reply.header('etag', body.etag);
  reply.header('vary', 'Accept-Encoding');
  reply.header('cache-control', `public, max-age=${Math.min(maxAge, 1800)}`);
  reply.header('last-modified', body.takenAt.toUTCString());
  const inm = request.headers['if-none-match'];
  if (typeof inm === 'string' && inm.split(',').some((t) => t.trim().replace(/^W\//, '') === body.etag)) {
    return reply.code(304).send();
  }
  const accept = request.headers['accept-encoding'];
  const encoding =
    typeof accept === 'string' ? (negotiate(accept, [...ENCODINGS]) ?? 'identity') : 'identity';
  reply.type('application/json; charset=utf-8');
  if (encoding === 'br') return reply.header('content-encoding', 'br').send(body.br);
  if (encoding === 'gzip') return reply.header('content-encoding', 'gzip').send(body.gzip);
  return reply.send(body.identity);
}
