import path from 'node:path';
import type { ServiceDefinition } from '../../platform/service.ts';
import { createKeyStore, issueKey } from './api-keys.ts';
import { CoinStore } from './coin-store.ts';
import { formatCoinError } from './coins-errors.ts';
import { mirrorUpstreamTask } from './coins-jobs.ts';
import { registerCoinRoutes } from './coins-routes.ts';
import { coins } from './db/schema.ts';
import { registerOpsRoutes } from './ops-routes.ts';
import { listPlatformMap } from './seed-data.ts';
import { SnapshotCache } from './snapshots.ts';
import { readUpstreamConfig, UpstreamMirror } from './upstream.ts';

/**
 * The coin-listing service (spec document 001, section D; anchor CoinGecko API v3): `GET /api/v3/coins/list`
 * and `GET /api/v3/ping`, with demo and paid-plan keys, tiered snapshot refresh, ETag and compression, per-key rate
 * limits, real coin data with token contract addresses from three token lists (seeded on a first start, brought to
 * an existing database once per version), and an optional upstream mirror.
 */
export const coinsService: ServiceDefinition = {
  name: 'coins',
  envPrefix: 'COINS',
  title: 'Coin listing API',
  version: '3.0.0',
  description:
    'CoinGecko-compatible coin list (`/api/v3/coins/list`). Demo keys in `x-coin-demo-api-key`, paid-plan keys in ' +
    '`x-coin-pro-api-key`. Errors: `{"status":{"error_code":n,"error_message":"..."}}`.',
  defaultPort: 4104,
  migrations: { schema: 'coins', folder: path.join(import.meta.dirname, 'db', 'migrations') },
  formatError: formatCoinError,
  tags: [
    { name: 'coins', description: 'Coin list' },
    { name: 'ping', description: 'Server status' },
  ],
  securitySchemes: {
    demoKey: {
      type: 'apiKey',
      in: 'header',
      name: 'x-coin-demo-api-key',
      description: 'Public tier (Demo plan) key',
    },
    proKey: { type: 'apiKey', in: 'header', name: 'x-coin-pro-api-key', description: 'Paid-plan key' },
    demoKeyQuery: { type: 'apiKey', in: 'query', name: 'x_coin_demo_api_key' },
    proKeyQuery: { type: 'apiKey', in: 'query', name: 'x_coin_pro_api_key' },
  },
  validateEnv: (env) => {
    readUpstreamConfig(env);
  },
  async setup(ctx) {
    const store = new CoinStore(ctx.db, ctx.clock);
    // The token lists' platform map reaches a database seeded before it (or before its current version) here, once;
    // a first start's seed (below) inserts it with the coins.
    const { map, digest } = listPlatformMap();
    const update = await store.applyListPlatforms({ digest, ...map.added });
    if (update.status === 'applied')
      ctx.logger.info({ inserted: update.inserted, updated: update.updated }, 'token-list platforms applied');
    const keys = createKeyStore(ctx);
    const snapshots = new SnapshotCache(store, ctx.clock);
    const upstream = readUpstreamConfig(ctx.config.env);
    const mirror = upstream
      ? new UpstreamMirror(upstream, ctx.outbound, store, ctx.db, ctx.clock)
      : undefined;
    return {
      async routes(app) {
        await registerCoinRoutes(app, { keys, snapshots, clock: ctx.clock });
        await registerOpsRoutes(app, { store, keys, mirror, db: ctx.db });
      },
      // The public tier's answers (with and without platforms) are built before the service says it is ready, so
      // the first request does not pay for reading, serializing and compressing 4,000+ coins.
      async warmUp() {
        await snapshots.get('public', { status: 'active', includePlatform: true });
        await snapshots.get('public', { status: 'active', includePlatform: false });
      },
      tasks: [mirrorUpstreamTask.with({ mirror, logger: ctx.logger })],
      cron: mirror ? [{ task: mirrorUpstreamTask, pattern: '*/15 * * * *' }] : [],
      async seed(tx) {
        const [existing] = await tx.select({ id: coins.id }).from(coins).limit(1);
        if (!existing) {
          const list = map.coins;
          const now = ctx.clock.now();
          for (let i = 0; i < list.length; i += 1000) {
            await tx
              .insert(coins)
              .values(
                list
                  .slice(i, i + 1000)
                  .map((c) => ({ ...c, status: 'active' as const, createdAt: now, updatedAt: now })),
              );
          }
          await store.recordListPlatforms(tx, digest);
        }
        const demo = await issueKey(keys, tx, { tier: 'demo', label: 'demo key (first start)' });
        const pro = await issueKey(keys, tx, { tier: 'pro', label: 'paid-plan key (first start)' });
        return { demoKey: demo.key, proKey: pro.key };
      },
    };
  },
};
