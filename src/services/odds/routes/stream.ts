import type { WebSocket } from 'ws';
import { ApiError } from '../../../platform/errors.ts';
import type { ServiceApp } from '../../../platform/http.ts';
import { StreamRegistry } from '../../../platform/streams.ts';
import type { ChangeRecord } from '../change-feed.ts';
import { OddsErrorBody, StreamQuerySchema } from '../odds-schemas.ts';
import type { OddsRouteContext } from './context.ts';

/** The messages of the stream (JSON text frames). */
type StreamMessage =
  | { type: 'hello'; delta_last_id: number; filters: Record<string, unknown> }
  | { type: 'price' | 'status'; data: ChangeRecord }
  | { type: 'heartbeat'; ts: string };

/** Filters of one WebSocket subscriber (spec F, Updates: filters keyed on `event_id`). */
export interface StreamFilter {
  eventIds: Set<string> | null;
  sportId: number | null;
  marketIds: Set<number> | null;
  affiliateIds: Set<number> | null;
}

/**
 * True when `change` passes `filter`: event and sport always apply; market and sportsbook filters apply to price
 * changes (status and score changes of a selected event always pass, they have no market or sportsbook).
 */
export function matchesFilter(change: ChangeRecord, filter: StreamFilter): boolean {
  if (filter.eventIds && !filter.eventIds.has(change.event_id)) return false;
  if (filter.sportId !== null && change.sport_id !== filter.sportId) return false;
  if (change.kind === 'price') {
    if (filter.marketIds && !filter.marketIds.has(change.market_id ?? -1)) return false;
    if (filter.affiliateIds && !filter.affiliateIds.has(change.affiliate_id ?? -1)) return false;
  }
  return true;
}

const set = <T>(raw: string | undefined, map: (s: string) => T): Set<T> | null =>
  raw === undefined
    ? null
    : new Set(
        raw
          .split(',')
          .map((s) => map(s.trim()))
          .filter((s) => s !== ''),
      );

/**
 * `GET /api/v2/stream` (WebSocket): every committed price change (`{"type":"price","data":<change>}`) and status or
 * score change (`{"type":"status","data":<change>}`) that matches the query filters, from any instance (PostgreSQL
 * LISTEN/NOTIFY), in change-id order; `{"type":"heartbeat","ts":...}` every `heartbeatMs`. The first message is
 * `{"type":"hello","filters":...,"delta_last_id":...}`. Authenticated with `X-Odds-Key` (or `?key=`) and counted
 * against the key's requests per minute before the upgrade (401 / 429 instead of a socket). The platform's
 * StreamRegistry runs the socket: a client leaving more than 1 MiB unread is dropped, a key revoked on any instance
 * closes its streams with 1008, a shutdown closes them with 1001.
 */
export async function registerStreamRoute(app: ServiceApp, ctx: OddsRouteContext, heartbeatMs: number) {
  const streams = new StreamRegistry(app);
  await streams.registerWebSocket(app, { maxPayload: 4096 });
  const { onRequest, principal: principalOf, keys, feed } = ctx;
  app.route({
    method: 'GET',
    url: '/api/v2/stream',
    onRequest,
    // A plain GET (no upgrade) is answered 426; the route stays in the OpenAPI document (`websocket: true` hides it).
    handler: async () => {
      throw new ApiError(426, 'upgrade_required', 'This endpoint is a WebSocket: send Upgrade: websocket.', {
        headers: { upgrade: 'websocket', connection: 'Upgrade' },
      });
    },
    schema: {
      operationId: 'streamChanges',
      tags: ['stream'],
      summary: 'WebSocket stream of price and status changes',
      description:
        'Upgrade to WebSocket. Filters: `event_id` (comma-separated), `sport_id`, `market_ids`, `affiliate_ids`. ' +
        'Messages: `hello`, `price`, `status`, `heartbeat` (JSON text frames).',
      security: [{ oddsKey: [] }],
      querystring: StreamQuerySchema,
      response: { 400: OddsErrorBody, 401: OddsErrorBody, 426: OddsErrorBody, 429: OddsErrorBody },
    },
    wsHandler: (socket: WebSocket, request) => {
      const q = request.query as {
        event_id?: string;
        sport_id?: number;
        market_ids?: string;
        affiliate_ids?: string;
      };
      const filter: StreamFilter = {
        eventIds: set(q.event_id, String),
        sportId: q.sport_id ?? null,
        marketIds: set(q.market_ids, Number),
        affiliateIds: set(q.affiliate_ids, Number),
      };
      const principal = principalOf(request);
      const stream = streams.webSocket<StreamMessage>(
        socket,
        () => ({ type: 'heartbeat', ts: new Date().toISOString() }),
        {
          heartbeatMs: heartbeatMs,
          // A key revoked on any instance closes its streams at once (1008).
          watchCredential: (onRevoked) => keys.watch(principal.keyId, onRevoked),
        },
      );
      const unsubscribe = feed.subscribe((changes) => {
        for (const change of changes)
          if (matchesFilter(change, filter))
            stream.send({ type: change.kind === 'price' ? 'price' : 'status', data: change });
      });
      void stream.done.then(unsubscribe);
      stream.send({
        type: 'hello',
        // Every change after this id reaches this socket (read in the same tick as the subscription).
        delta_last_id: feed.deliveredUpTo,
        filters: {
          event_id: filter.eventIds ? [...filter.eventIds] : null,
          sport_id: filter.sportId,
          market_ids: filter.marketIds ? [...filter.marketIds] : null,
          affiliate_ids: filter.affiliateIds ? [...filter.affiliateIds] : null,
        },
      });
    },
  });
}
