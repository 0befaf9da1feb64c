import { Type } from '@sinclair/typebox';
import { registerCredentialRoutes } from '../../platform/credential-routes.ts';
import type { Db } from '../../platform/database.ts';
import { ApiError } from '../../platform/errors.ts';
import type { ServiceApp } from '../../platform/http.ts';
import { issueKey, type KeyStore } from './api-keys.ts';
import { parseCoinList } from './coin-list.ts';
import type { CoinStore } from './coin-store.ts';
import { mirrorUpstreamTask } from './coins-jobs.ts';
import {
  CoinErrorBody,
  CountsSchema,
  ImportBody,
  ImportQuery,
  ImportResultSchema,
  StatusBody,
  StatusResult,
  SyncRunSchema,
  Tier,
} from './coins-schemas.ts';
import type { UpstreamMirror } from './upstream.ts';

const errors = { 400: CoinErrorBody, 401: CoinErrorBody, 404: CoinErrorBody };
const ops = { tags: ['operator'], security: [{ operatorToken: [] }] };

/**
 * Operator routes (`/_ops/*`, bearer OPERATOR_TOKEN checked by the platform): coins, keys (the platform's
 * `/_ops/keys` routes), upstream mirror.
 */
export async function registerOpsRoutes(
  app: ServiceApp,
  deps: {
    store: CoinStore;
    keys: KeyStore;
    mirror: UpstreamMirror | undefined;
    db: Db;
  },
) {
  app.post(
    '/_ops/coins/import',
    {
      bodyLimit: 64 * 1024 * 1024,
      schema: {
        ...ops,
        operationId: 'opsImportCoins',
        summary: 'Import a coin list (CoinGecko format)',
        description:
          'Body: the JSON array `/coins/list?include_platform=true` returns. Validated whole; an invalid list ' +
          "changes nothing. Applied in one transaction. Readers see it at their tier's next snapshot refresh.",
        querystring: ImportQuery,
        body: ImportBody,
        response: { 200: ImportResultSchema, ...errors },
      },
    },
    async (request) => {
      const mode = request.query.mode ?? 'merge';
      const status = request.query.status ?? 'active';
      if (mode === 'replace' && status !== 'active') {
        throw new ApiError(400, 'bad_request', 'mode=replace applies to a list of active coins only.');
      }
      const entries = parseCoinList(request.body);
      return deps.store.importCoins(entries, { mode, status });
    },
  );

  app.put(
    '/_ops/coins/status',
    {
      schema: {
        ...ops,
        operationId: 'opsSetCoinStatus',
        summary: 'Mark coins active or inactive',
        body: StatusBody,
        response: { 200: StatusResult, ...errors },
      },
    },
    async (request) => ({ changed: await deps.store.setStatus(request.body.ids, request.body.status) }),
  );

  app.get(
    '/_ops/coins/counts',
    {
      schema: {
        ...ops,
        operationId: 'opsCoinCounts',
        summary: 'Count coins by status',
        response: { 200: CountsSchema, 401: CoinErrorBody },
      },
    },
    async () => deps.store.counts(),
  );

  registerCredentialRoutes(app, {
    store: deps.keys,
    db: deps.db,
    attributes: { tier: Tier, rateLimitPerMinute: Type.Integer() },
    issueFields: {
      tier: Tier,
      rateLimitPerMinute: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: 1_000_000,
          description: 'Requests per minute; default 30 (demo) or 500 (pro).',
        }),
      ),
    },
    issue: (tx, body) => issueKey(deps.keys, tx, body),
    errorBody: CoinErrorBody,
    noun: 'API key',
  });

  app.post(
    '/_ops/upstream/sync',
    {
      schema: {
        ...ops,
        operationId: 'opsSyncUpstream',
        summary: 'Queue an upstream mirror run now',
        description:
          'Needs COINS_UPSTREAM_URL. The run happens in the worker; read its outcome from GET /_ops/upstream/runs.',
        response: { 202: Type.Object({ queued: Type.Boolean() }), ...errors },
      },
    },
    async (_request, reply) => {
      if (!deps.mirror)
        throw new ApiError(400, 'bad_request', 'No upstream is configured (set COINS_UPSTREAM_URL).');
      await mirrorUpstreamTask.enqueue(deps.db, {}, { jobKey: 'manual' });
      return reply.code(202).send({ queued: true });
    },
  );

  app.get(
    '/_ops/upstream/runs',
    {
      schema: {
        ...ops,
        operationId: 'opsListUpstreamRuns',
        summary: 'Recent upstream mirror runs',
        response: { 200: Type.Object({ runs: Type.Array(SyncRunSchema) }), ...errors },
      },
    },
    async () => {
      if (!deps.mirror)
        throw new ApiError(400, 'bad_request', 'No upstream is configured (set COINS_UPSTREAM_URL).');
      return { runs: await deps.mirror.recentRuns() };
    },
  );
}
