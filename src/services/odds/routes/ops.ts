import { Type } from '@sinclair/typebox';
import { registerCredentialRoutes } from '../../../platform/credential-routes.ts';
import type { Db } from '../../../platform/database.ts';
import { ApiError } from '../../../platform/errors.ts';
import type { ServiceApp } from '../../../platform/http.ts';
import { StringEnum } from '../../../platform/schemas.ts';
import { issueKey, type KeyStore, PLAN_NAMES } from '../api-keys.ts';
import type { FeedSimulator } from '../feed-simulator.ts';
import type { IngestEvent, IngestService } from '../ingest.ts';
import { notFound } from '../odds-errors.ts';
import { IngestBody, IngestResponse, OddsErrorBody } from '../odds-schemas.ts';
import type { UpstreamSync } from '../upstream.ts';

const ops = { tags: ['operator'], security: [{ operatorToken: [] }] };
const errors = { 400: OddsErrorBody, 401: OddsErrorBody, 404: OddsErrorBody };

/** Operator routes: ingest events, drive the simulator, issue and revoke keys. */
export async function registerOpsRoutes(
  app: ServiceApp,
  deps: {
    ingest: IngestService;
    keys: KeyStore;
    db: Db;
    simulator: FeedSimulator | undefined;
    upstream: UpstreamSync | undefined;
  },
) {
  app.post(
    '/_ops/ingest',
    {
      schema: {
        ...ops,
        operationId: 'opsIngestEvents',
        summary: "Load events in the service's own shape (all-or-nothing)",
        description:
          'Body `{events: [...]}` in the shape of `events[]` answers (ids inside markets ignored; prices keyed by ' +
          'sportsbook id, each `{price, is_main_line?, closed?}`). Everything is validated first; one broken rule ' +
          'rejects the whole request with every issue listed. Differences to the stored data go to the change log.',
        body: IngestBody,
        response: { 200: IngestResponse, ...errors },
      },
    },
    async (request) => {
      const result = await deps.ingest.ingest(request.body.events as IngestEvent[]);
      return { events: result.events, changes: result.changes, delta_last_id: result.lastId };
    },
  );

  app.post(
    '/_ops/simulator/tick',
    {
      schema: {
        ...ops,
        operationId: 'opsSimulatorTick',
        summary: 'Run one simulator step at the current time',
        description:
          'Schedules, moves and re-prices the simulated games around now. 404 when the simulator is off.',
        response: { 200: IngestResponse, ...errors },
      },
    },
    async () => {
      if (!deps.simulator) throw notFound('The simulator is off (ODDS_SIMULATOR=off).');
      const result = await deps.simulator.tick();
      return { events: result.events, changes: result.changes, delta_last_id: result.lastId };
    },
  );

  app.post(
    '/_ops/upstream/sync',
    {
      schema: {
        ...ops,
        operationId: 'opsUpstreamSync',
        summary: 'Run the upstream sync now',
        description:
          "Reads today's and tomorrow's events of the configured sports from ODDS_UPSTREAM_URL and loads them " +
          'like the ingest route. 404 when no upstream is configured; 502 when the upstream fails.',
        response: {
          200: Type.Object({
            fetched: Type.Integer(),
            events: Type.Integer(),
            changes: Type.Integer(),
            delta_last_id: Type.Integer(),
          }),
          502: OddsErrorBody,
          ...errors,
        },
      },
    },
    async () => {
      if (!deps.upstream) throw notFound('No upstream is configured (ODDS_UPSTREAM_URL).');
      let result: Awaited<ReturnType<UpstreamSync['sync']>>;
      try {
        result = await deps.upstream.sync();
      } catch (err) {
        if (err instanceof ApiError) throw err;
        throw new ApiError(502, 'upstream_failed', `The upstream sync failed: ${(err as Error).message}.`);
      }
      return {
        fetched: result.fetched,
        events: result.events,
        changes: result.changes,
        delta_last_id: result.lastId,
      };
    },
  );

  registerCredentialRoutes(app, {
    store: deps.keys,
    db: deps.db,
    attributes: { plan: Type.String(), lookbackDays: Type.Integer(), rateLimitPerMinute: Type.Integer() },
    issueFields: {
      plan: StringEnum(PLAN_NAMES),
      rateLimitPerMinute: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    },
    issue: (tx, body) => issueKey(deps.keys, tx, body),
    errorBody: OddsErrorBody,
  });
}
