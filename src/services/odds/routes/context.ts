/**
 * What the public route plugins of the odds service share, built once per app: `X-Odds-Key` authentication and the
 * plan's rate limit (the WebSocket route's too), the events answers' cache and their content coding, error schemas.
 */
import negotiate from '@fastify/accept-negotiator';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { defineAuthentication, firstHeader } from '../../../platform/auth.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { ServiceApp } from '../../../platform/http.ts';
import { perMinuteLimit } from '../../../platform/rate-limit.ts';
import type { KeyStore, OddsPrincipal } from '../api-keys.ts';
import type { OddsCatalog } from '../catalog.ts';
import type { OddsChangeFeed } from '../change-feed.ts';
import { invalid, keyInvalid, keyMissing, rateLimited } from '../odds-errors.ts';
import type { OddsReader } from '../odds-reader.ts';
import { OddsErrorBody } from '../odds-schemas.ts';
import { SPORTS } from '../reference-data.ts';
import { ENCODINGS, type Encoding, type PreparedBody, ResponseCache } from '../response-cache.ts';

/** Dependencies of the public routes. */
export interface OddsRouteDeps {
  keys: KeyStore;
  reader: OddsReader;
  catalog: OddsCatalog;
  feed: OddsChangeFeed;
  clock: Clock;
}

/** Error answers of the public routes. */
export const errors = {
  400: OddsErrorBody,
  401: OddsErrorBody,
  403: OddsErrorBody,
  404: OddsErrorBody,
  429: OddsErrorBody,
};
/** The security requirement of every public route. */
export const security = [{ oddsKey: [] }];
/** The sport ids of the reference data. */
export const SPORT_IDS = new Set(SPORTS.map((s) => s.id));

/** A comma-separated id list of the query (`null` when absent). @throws ApiError 400 past `max` ids. */
export function idList(field: string, raw: string | undefined, max?: number): number[] | null {
  if (raw === undefined) return null;
  const ids = [...new Set(raw.split(',').map((s) => Number(s.trim())))];
  if (max !== undefined && ids.length > max)
    throw invalid('query', field, `accepts at most ${max} ids (got ${ids.length})`);
  return ids;
}

/**
 * The caller: `X-Odds-Key` (on the WebSocket route also `?key=`, since browsers cannot set headers on an upgrade).
 * @throws ApiError 401 `unauthorized` when missing, unknown or revoked.
 */
function oddsAuthentication(keys: KeyStore) {
  return defineAuthentication<OddsPrincipal>(async (request) => {
    let presented = firstHeader(request.headers['x-odds-key']);
    if (presented === undefined && request.url.startsWith('/api/v2/stream')) {
      presented = new URL(request.url, 'http://x').searchParams.get('key') ?? undefined;
    }
    if (!presented) throw keyMissing();
    const found = await keys.resolve(presented);
    if (found.status !== 'active') throw keyInvalid();
    return found.principal;
  });
}

/**
 * The shared context, built once per app: `onRequest`, the hooks of every public route (the WebSocket route too):
 * authentication of `X-Odds-Key` (401) and the key's plan rate (429 with Retry-After), before validation;
 * `principal`, the caller; `cache`, the events answers computed once per change-feed generation; `json` and
 * `sendPrepared`, which send JSON text and a prepared answer in the coding the client prefers among br, gzip and
 * identity (br first on a tie; each compressed once per answer, `Vary: Accept-Encoding`).
 */
export function oddsRouteContext(app: ServiceApp, deps: OddsRouteDeps) {
  const auth = oddsAuthentication(deps.keys);
  const limit = perMinuteLimit(app, {
    max: (request) => auth.optionalPrincipal(request)?.rateLimitPerMinute ?? 1,
    bucket: (request) => `key:${auth.optionalPrincipal(request)?.keyId ?? 'none'}`,
    exceeded: (retryAfterSeconds, max) => rateLimited(max, retryAfterSeconds),
  });
  const sendPrepared = async (request: FastifyRequest, reply: FastifyReply, prepared: PreparedBody) => {
    reply.type('application/json; charset=utf-8').header('vary', 'accept-encoding');
    const accept = request.headers['accept-encoding'];
    const encoding =
      typeof accept === 'string'
        ? ((negotiate(accept, [...ENCODINGS]) as Encoding | null) ?? 'identity')
        : 'identity';
    if (encoding === 'identity') return reply.send(prepared.identity);
    return reply.header('content-encoding', encoding).send(await prepared.encoded(encoding));
  };
  return {
    ...deps,
    onRequest: [auth.onRequest, limit],
    principal: (request: FastifyRequest) => auth.principal(request),
    cache: new ResponseCache<PreparedBody>((body) => body.size),
    json: (reply: FastifyReply, body: string) => reply.type('application/json; charset=utf-8').send(body),
    sendPrepared,
  };
}

/** The shared context of the odds route plugins ({@link oddsRouteContext}). */
export type OddsRouteContext = ReturnType<typeof oddsRouteContext>;
