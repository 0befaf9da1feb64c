import negotiate from '@fastify/accept-negotiator';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../platform/clock.ts';
import type { ServiceApp } from '../../platform/http.ts';
import { assertWithinLookback, type OddsKeyService, type OddsPrincipal } from './api-keys.ts';
import { DELTA_DEFAULT_LIMIT, type OddsCatalog } from './catalog.ts';
import type { ChangeFeed } from './change-feed.ts';
import { invalid, notFound, rateLimited } from './odds-errors.ts';
import { dayWindow, MAX_MARKET_IDS, parseEventQuery, type RawEventQuery } from './odds-query.ts';
import type { OddsReader } from './odds-reader.ts';
import {
  ChangeSchema,
  DeltaQuerySchema,
  DeltaResponse,
  EventParams,
  EventQuerySchema,
  EventsEnvelope,
  HistoryQuery,
  LineParams,
  OddsErrorBody,
  PlayerParams,
  PlayerRecordSchema,
  SnapshotQuerySchema,
  SportEventsParams,
  SportParams,
  TeamParams,
  TeamRecordSchema,
} from './odds-schemas.ts';
import { SPORTS } from './reference-data.ts';
import { cacheKey, ENCODINGS, type Encoding, PreparedBody, ResponseCache } from './response-cache.ts';

declare module 'fastify' {
  interface FastifyRequest {
    oddsPrincipal?: OddsPrincipal;
  }
}

/** Dependencies of the public routes. */
export interface OddsRouteDeps {
  keys: OddsKeyService;
  reader: OddsReader;
  catalog: OddsCatalog;
  feed: ChangeFeed;
  clock: Clock;
}

const errors = {
  400: OddsErrorBody,
  401: OddsErrorBody,
  403: OddsErrorBody,
  404: OddsErrorBody,
  429: OddsErrorBody,
};
const security = [{ oddsKey: [] }];
const SPORT_IDS = new Set(SPORTS.map((s) => s.id));

function idList(field: string, raw: string | undefined, max?: number): number[] | null {
  if (raw === undefined) return null;
  const ids = [...new Set(raw.split(',').map((s) => Number(s.trim())))];
  if (max !== undefined && ids.length > max)
    throw invalid('query', field, `accepts at most ${max} ids (got ${ids.length})`);
  return ids;
}

/**
 * Authenticates `X-Odds-Key` (401) and applies the key's plan rate (429 with Retry-After); both run in `onRequest`,
 * before validation. Returns the hooks for the routes of this service (also used by the WebSocket route).
 */
export function accessHooks(app: ServiceApp, keys: OddsKeyService) {
  const authenticate = async (request: FastifyRequest) => {
    const header = request.headers['x-odds-key'];
    let presented = typeof header === 'string' ? header : undefined;
    if (presented === undefined && request.url.startsWith('/api/v2/stream')) {
      const key = new URL(request.url, 'http://x').searchParams.get('key');
      presented = key ?? undefined;
    }
    request.oddsPrincipal = await keys.authenticate(presented);
  };
  const limit = app.rateLimit({
    timeWindow: 60_000,
    max: (request: FastifyRequest) => request.oddsPrincipal?.rateLimitPerMinute ?? 1,
    keyGenerator: (request: FastifyRequest) => `key:${request.oddsPrincipal?.keyId ?? 'none'}`,
    errorResponseBuilder: (request, context) =>
      rateLimited(
        request.oddsPrincipal?.rateLimitPerMinute ?? context.max,
        Math.max(1, Math.ceil(context.ttl / 1000)),
      ),
  });
  return [authenticate, limit];
}

/**
 * The public API under `/api/v2` (spec F, "Events" and "Other paths mentioned"): events by sport and day, an event,
 * its openers and closing snapshots, teams, players, a line's market history, the delta feed and reference lists.
 * Events answers are computed once per change-feed generation and served from the cache until the next change.
 */
export async function registerOddsRoutes(app: ServiceApp, deps: OddsRouteDeps) {
  const onRequest = accessHooks(app, deps.keys);
  const cache = new ResponseCache<PreparedBody>((body) => body.size);
  const json = (reply: FastifyReply, body: string) =>
    reply.type('application/json; charset=utf-8').send(body);
  /**
   * Sends a prepared answer in the coding the client prefers among br, gzip and identity (br first on a tie), each
   * compressed once per answer (`Vary: Accept-Encoding`).
   */
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
  const principal = (request: FastifyRequest) => request.oddsPrincipal!;

  app.get(
    '/api/v2/sports/:sportID/events/:date',
    {
      onRequest,
      schema: {
        operationId: 'getSportEventsByDate',
        tags: ['events'],
        summary: 'Events of a sport on a day, with markets',
        description:
          'Every event of the sport starting on `date` (the day starts at midnight UTC plus `offset` minutes), with ' +
          "markets and per-sportsbook prices filtered by the shared query parameters. Dates before the plan's " +
          'lookback are a 403.',
        security,
        params: SportEventsParams,
        querystring: EventQuerySchema,
        response: { 200: EventsEnvelope, ...errors },
      },
    },
    async (request, reply) => {
      const { sportID, date } = request.params;
      const q = parseEventQuery(request.query as RawEventQuery);
      const window = dayWindow(date, q.offsetMinutes);
      if (!SPORT_IDS.has(sportID)) throw notFound(`Sport ${sportID} not found.`);
      assertWithinLookback(principal(request), new Date(window.end.getTime() - 1), deps.clock.now());
      const key = cacheKey(`sport:${sportID}:${date}`, request.query as Record<string, unknown>);
      const prepared = await cache.getOrCompute(key, deps.feed.generation, async () => {
        const { deltaLastId, events } = await deps.reader.eventsInWindow(sportID, window, q);
        return new PreparedBody(
          Buffer.from(JSON.stringify({ meta: { delta_last_id: deltaLastId }, events })),
        );
      });
      return sendPrepared(request, reply, prepared);
    },
  );

  app.get(
    '/api/v2/events/:eventID',
    {
      onRequest,
      schema: {
        operationId: 'getEvent',
        tags: ['events'],
        summary: 'One event by canonical event_id',
        description: 'The event with its current markets, still in the `events` array; 404 when unknown.',
        security,
        params: EventParams,
        querystring: EventQuerySchema,
        response: { 200: EventsEnvelope, ...errors },
      },
    },
    async (request, reply) => {
      const q = parseEventQuery(request.query as RawEventQuery);
      const key = cacheKey(`event:${request.params.eventID}`, request.query as Record<string, unknown>);
      const prepared = await cache.getOrCompute(key, deps.feed.generation, async () => {
        const header = await deps.reader.eventHeader(request.params.eventID);
        if (!header) throw notFound(`Event ${request.params.eventID} not found.`);
        const found = await deps.reader.eventById(request.params.eventID, q);
        if (!found) throw notFound(`Event ${request.params.eventID} not found.`);
        const body = JSON.stringify({ meta: { delta_last_id: found.deltaLastId }, events: found.events });
        return new PreparedBody(Buffer.from(body), header.eventDate);
      });
      assertWithinLookback(principal(request), prepared.eventDate!, deps.clock.now());
      return sendPrepared(request, reply, prepared);
    },
  );

  for (const kind of ['openers', 'closing'] as const) {
    app.get(
      `/api/v2/events/:eventID/${kind}`,
      {
        onRequest,
        schema: {
          operationId: kind === 'openers' ? 'getEventOpeners' : 'getEventClosing',
          tags: ['events'],
          summary:
            kind === 'openers'
              ? 'Opening prices: the earliest recorded price per line per sportsbook'
              : 'Closing prices: the latest price at or before the scheduled start',
          description:
            kind === 'openers'
              ? 'Available once recorded (before, during or after the event). `hide_closed=true` excludes lines that ' +
                'are currently closed.'
              : 'Before the start the snapshot is provisional (`meta.provisional: true`, the latest prices so far). ' +
                'Every market, period markets included, uses the event start as the cutoff. Omit `hide_closed` for a ' +
                'completed snapshot.',
          security,
          params: EventParams,
          querystring: SnapshotQuerySchema,
          response: { 200: EventsEnvelope, ...errors },
        },
      },
      async (request, reply) => {
        const q = parseEventQuery(request.query as RawEventQuery);
        const header = await deps.reader.eventHeader(request.params.eventID);
        if (!header) throw notFound(`Event ${request.params.eventID} not found.`);
        const now = deps.clock.now();
        assertWithinLookback(principal(request), header.eventDate, now);
        const provisional = kind === 'closing' && now.getTime() < header.eventDate.getTime();
        const found = await deps.reader.eventById(
          request.params.eventID,
          q,
          kind === 'openers'
            ? { kind: 'openers' }
            : { kind: 'closing', cutoff: provisional ? now : header.eventDate },
        );
        if (!found) throw notFound(`Event ${request.params.eventID} not found.`);
        const meta =
          kind === 'closing'
            ? { delta_last_id: found.deltaLastId, provisional }
            : { delta_last_id: found.deltaLastId };
        return json(reply, JSON.stringify({ meta, events: found.events }));
      },
    );
  }

  app.get(
    '/api/v2/lines/:lineID/history',
    {
      onRequest,
      schema: {
        operationId: 'getLineHistory',
        tags: ['markets'],
        summary: 'Market history of a line: every price change at every sportsbook',
        description:
          "Oldest first; `affiliate_ids` narrows to some sportsbooks. Subject to the plan's lookback.",
        security,
        params: LineParams,
        querystring: HistoryQuery,
        response: {
          200: Type.Object({
            meta: Type.Object({ line_id: Type.Integer(), event_id: Type.String() }),
            history: Type.Array(ChangeSchema),
          }),
          ...errors,
        },
      },
    },
    async (request) => {
      const line = await deps.catalog.lineHeader(request.params.lineID);
      assertWithinLookback(principal(request), line.eventDate, deps.clock.now());
      const history = await deps.catalog.lineHistory(
        request.params.lineID,
        idList('affiliate_ids', request.query.affiliate_ids),
      );
      return { meta: { line_id: request.params.lineID, event_id: line.eventId }, history };
    },
  );

  app.get(
    '/api/v2/markets/delta',
    {
      onRequest,
      schema: {
        operationId: 'getMarketsDelta',
        tags: ['markets'],
        summary: 'Delta feed: changes after a cursor',
        description:
          'Price changes (and status/score changes, `kind: event`) after `last_id` (the `meta.delta_last_id` of an ' +
          'events answer or of the previous delta answer), oldest first. A cursor older than 30 minutes is a 400 ' +
          '`stale_cursor`, one never issued a 400 `unknown_cursor`: re-bootstrap from the events endpoint.',
        security,
        querystring: DeltaQuerySchema,
        response: { 200: DeltaResponse, ...errors },
      },
    },
    async (request) => {
      const q = request.query;
      return deps.catalog.delta({
        lastId: q.last_id,
        sportId: q.sport_id,
        eventId: q.event_id,
        affiliateIds: idList('affiliate_ids', q.affiliate_ids) ?? undefined,
        marketIds: idList('market_ids', q.market_ids, MAX_MARKET_IDS) ?? undefined,
        limit: q.limit ?? DELTA_DEFAULT_LIMIT, // the schema's default, bounds checked by the schema
      });
    },
  );

  app.get(
    '/api/v2/teams/:teamID',
    {
      onRequest,
      schema: {
        operationId: 'getTeam',
        tags: ['teams'],
        summary: 'A team',
        security,
        params: TeamParams,
        response: { 200: Type.Object({ team: TeamRecordSchema }), ...errors },
      },
    },
    async (request) => ({ team: await deps.catalog.team(request.params.teamID) }),
  );

  app.get(
    '/api/v2/teams/:teamID/players',
    {
      onRequest,
      schema: {
        operationId: 'listTeamPlayers',
        tags: ['teams'],
        summary: 'The players of a team',
        description: '`player_id` is the `participant.id` of TYPE_PLAYER participants (player props).',
        security,
        params: TeamParams,
        response: { 200: Type.Object({ players: Type.Array(PlayerRecordSchema) }), ...errors },
      },
    },
    async (request) => ({ players: await deps.catalog.teamPlayers(request.params.teamID) }),
  );

  app.get(
    '/api/v2/players/:playerID',
    {
      onRequest,
      schema: {
        operationId: 'getPlayer',
        tags: ['teams'],
        summary: 'A player',
        security,
        params: PlayerParams,
        response: { 200: Type.Object({ player: PlayerRecordSchema }), ...errors },
      },
    },
    async (request) => ({ player: await deps.catalog.player(request.params.playerID) }),
  );

  app.get(
    '/api/v2/sports/:sportID/teams',
    {
      onRequest,
      schema: {
        operationId: 'listSportTeams',
        tags: ['teams'],
        summary: 'The teams of a sport',
        security,
        params: SportParams,
        response: { 200: Type.Object({ teams: Type.Array(TeamRecordSchema) }), ...errors },
      },
    },
    async (request) => ({ teams: await deps.catalog.sportTeams(request.params.sportID) }),
  );

  app.get(
    '/api/v2/sports',
    {
      onRequest,
      schema: {
        operationId: 'listSports',
        tags: ['reference'],
        summary: 'Sports and their ids',
        security,
        response: {
          200: Type.Object({
            sports: Type.Array(
              Type.Object({
                sport_id: Type.Integer(),
                sport_name: Type.String(),
                abbreviation: Type.String(),
              }),
            ),
          }),
          ...errors,
        },
      },
    },
    async () => ({ sports: await deps.catalog.sports() }),
  );

  app.get(
    '/api/v2/affiliates',
    {
      onRequest,
      schema: {
        operationId: 'listAffiliates',
        tags: ['reference'],
        summary: 'Sportsbooks (affiliates) and their ids',
        security,
        response: {
          200: Type.Object({
            affiliates: Type.Array(
              Type.Object({
                affiliate_id: Type.Integer(),
                affiliate_name: Type.String(),
                affiliate_url: Type.String(),
              }),
            ),
          }),
          ...errors,
        },
      },
    },
    async () => ({ affiliates: await deps.catalog.sportsbooks() }),
  );

  app.get(
    '/api/v2/markets',
    {
      onRequest,
      schema: {
        operationId: 'listMarkets',
        tags: ['reference'],
        summary: 'Market definitions and their ids',
        security,
        response: {
          200: Type.Object({
            markets: Type.Array(
              Type.Object({ id: Type.Integer(), name: Type.String(), description: Type.String() }),
            ),
          }),
          ...errors,
        },
      },
    },
    async () => ({ markets: await deps.catalog.markets() }),
  );
}
