import type { ServiceApp } from '../../../platform/http.ts';
import { assertWithinLookback } from '../api-keys.ts';
import { DELTA_DEFAULT_LIMIT } from '../catalog.ts';
import { MAX_MARKET_IDS } from '../odds-query.ts';
import {
  DeltaQuerySchema,
  DeltaResponse,
  HistoryQuery,
  LineHistoryResponse,
  LineParams,
} from '../odds-schemas.ts';
import { errors, idList, type OddsRouteContext, security } from './context.ts';

/** Registers the line-history and delta routes. */
export function registerMarketRoutes(app: ServiceApp, ctx: OddsRouteContext) {
  const { onRequest, principal } = ctx;
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
        response: { 200: LineHistoryResponse, ...errors },
      },
    },
    async (request) => {
      const line = await ctx.catalog.lineHeader(request.params.lineID);
      assertWithinLookback(principal(request), line.eventDate, ctx.clock.now());
      const history = await ctx.catalog.lineHistory(
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
      return ctx.catalog.delta({
        lastId: q.last_id,
        sportId: q.sport_id,
        eventId: q.event_id,
        affiliateIds: idList('affiliate_ids', q.affiliate_ids) ?? undefined,
        marketIds: idList('market_ids', q.market_ids, MAX_MARKET_IDS) ?? undefined,
        limit: q.limit ?? DELTA_DEFAULT_LIMIT, // the schema's default, bounds checked by the schema
      });
    },
  );
}
