import type { ServiceApp } from '../../../platform/http.ts';
import { assertWithinLookback } from '../api-keys.ts';
import { notFound } from '../odds-errors.ts';
import { dayWindow, parseEventQuery, type RawEventQuery } from '../odds-query.ts';
import {
  EventParams,
  EventQuerySchema,
  EventsEnvelope,
  SnapshotQuerySchema,
  SportEventsParams,
} from '../odds-schemas.ts';
import { cacheKey, PreparedBody } from '../response-cache.ts';
import { errors, type OddsRouteContext, SPORT_IDS, security } from './context.ts';

/** Registers the event routes. */
export function registerEventRoutes(app: ServiceApp, ctx: OddsRouteContext) {
  const { onRequest, principal, cache, json, sendPrepared } = ctx;
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
      assertWithinLookback(principal(request), new Date(window.end.getTime() - 1), ctx.clock.now());
      const key = cacheKey(`sport:${sportID}:${date}`, request.query as Record<string, unknown>);
      const prepared = await cache.getOrCompute(key, ctx.feed.generation, async () => {
        const { deltaLastId, events } = await ctx.reader.eventsInWindow(sportID, window, q);
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
      const prepared = await cache.getOrCompute(key, ctx.feed.generation, async () => {
        const header = await ctx.reader.eventHeader(request.params.eventID);
        if (!header) throw notFound(`Event ${request.params.eventID} not found.`);
        const found = await ctx.reader.eventById(request.params.eventID, q);
        if (!found) throw notFound(`Event ${request.params.eventID} not found.`);
        const body = JSON.stringify({ meta: { delta_last_id: found.deltaLastId }, events: found.events });
        return new PreparedBody(Buffer.from(body), header.eventDate);
      });
      assertWithinLookback(principal(request), prepared.eventDate!, ctx.clock.now());
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
        const header = await ctx.reader.eventHeader(request.params.eventID);
        if (!header) throw notFound(`Event ${request.params.eventID} not found.`);
        const now = ctx.clock.now();
        assertWithinLookback(principal(request), header.eventDate, now);
        const provisional = kind === 'closing' && now.getTime() < header.eventDate.getTime();
        const found = await ctx.reader.eventById(
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
}
