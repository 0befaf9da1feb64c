import path from 'node:path';
import type { ServiceDefinition } from '../../platform/service.ts';
import { createKeyStore, issueKey } from './api-keys.ts';
import { OddsCatalog } from './catalog.ts';
import { createChangeFeed } from './change-feed.ts';
import { FeedSimulator, WARM_UP_DAYS } from './feed-simulator.ts';
import { IngestService } from './ingest.ts';
import { readOddsConfig } from './odds-config.ts';
import { formatOddsError } from './odds-errors.ts';
import { simulatorTickTask, upstreamSyncTask } from './odds-jobs.ts';
import { OddsReader } from './odds-reader.ts';
import { registerOddsRoutes, registerOpsRoutes } from './routes/index.ts';
import { seedReferenceData } from './seed-data.ts';
import { UpstreamSync } from './upstream.ts';

/**
 * The sports-odds service (spec document 002, section F; anchor TheRundown API v2): events with schedule, status,
 * scores and per-sportsbook markets under `/api/v2`, opening and closing snapshots, teams and players, market history,
 * a delta feed and a WebSocket stream, fed by a built-in simulator and an operator ingest. Keys (`X-Odds-Key`) carry a
 * plan (lookback and requests per minute).
 */
export const oddsService: ServiceDefinition = {
  name: 'odds',
  envPrefix: 'ODDS',
  title: 'Sports-odds API',
  version: '1.0.0',
  description:
    'Sporting events with market-based odds (moneyline, spread, total, player props and more), per-sportsbook lines ' +
    'and prices, scores and schedules, opening and closing snapshots, a delta feed and a WebSocket stream, under ' +
    "`/api/v2`. Send `X-Odds-Key: <API_KEY>` on every request; the key's plan sets the historical lookback and the " +
    'requests per minute (429 with Retry-After past it). Errors: `{error, message}`.',
  defaultPort: 4106,
  migrations: { schema: 'odds', folder: path.join(import.meta.dirname, 'db', 'migrations') },
  formatError: formatOddsError,
  tags: [
    { name: 'events', description: 'Events with markets, openers and closing snapshots' },
    { name: 'markets', description: 'Market history and the delta feed' },
    { name: 'teams', description: 'Teams and players' },
    { name: 'reference', description: 'Sports, sportsbooks (affiliates) and market definitions' },
    { name: 'stream', description: 'WebSocket stream of price and status changes' },
  ],
  securitySchemes: {
    oddsKey: {
      type: 'apiKey',
      in: 'header',
      name: 'X-Odds-Key',
      description: 'An odds API key (`odds_...`)',
    },
  },
  validateEnv: (env) => {
    readOddsConfig(env);
  },
  setup(ctx) {
    const config = readOddsConfig(ctx.config.env);
    const keys = createKeyStore(ctx);
    const feed = createChangeFeed(ctx.db, ctx.logger);
    const reader = new OddsReader(ctx.db, feed);
    const catalog = new OddsCatalog(ctx.db, ctx.clock);
    const ingest = new IngestService(ctx.db, ctx.clock, feed);
    const simulator = config.simulator
      ? new FeedSimulator(ctx.db, ctx.clock, feed, ctx.logger, config.seed, config.simSports)
      : undefined;
    const upstream = config.upstream
      ? new UpstreamSync(ctx.outbound, ingest, ctx.clock, config.upstream)
      : undefined;
    const jobDeps = { simulator, upstream, logger: ctx.logger };
    const stops: (() => Promise<void>)[] = [];
    let timer: NodeJS.Timeout | undefined;
    /** The simulator's first step in this process (the worker role), for `warmUp`. */
    let firstStep: Promise<void> = Promise.resolve();
    let feedStarted = false;
    const startFeed = async () => {
      if (feedStarted) return;
      feedStarted = true;
      stops.push(await feed.start(ctx.notifier));
    };

    return {
      async routes(app) {
        await startFeed();
        // Teams and markets added to the data files since this database was seeded (the worker's simulator does the
        // same in its first step).
        await ctx.db.transaction((tx) => seedReferenceData(tx));
        await registerOddsRoutes(app, {
          keys,
          reader,
          catalog,
          feed,
          clock: ctx.clock,
          heartbeatMs: config.heartbeatSeconds * 1000,
        });
        await registerOpsRoutes(app, { ingest, keys, simulator, upstream, db: ctx.db });
      },
      tasks: [simulatorTickTask.with(jobDeps), upstreamSyncTask.with(jobDeps)],
      cron: [
        ...(simulator ? [{ task: simulatorTickTask, pattern: '* * * * *' }] : []),
        ...(upstream ? [{ task: upstreamSyncTask, pattern: '* * * * *' }] : []),
      ],
      async seed(tx) {
        await seedReferenceData(tx);
        const key = await issueKey(keys, tx, { plan: 'pro', label: 'demo key (first start)' });
        return { apiKey: key.key, apiKeyHeader: 'X-Odds-Key', plan: key.record.plan };
      },
      async startBackground() {
        if (!simulator) return;
        await startFeed();
        let running = false;
        const step = async (days?: readonly number[]) => {
          if (running) return;
          running = true;
          await simulator
            .tick(days)
            .catch((err) => ctx.logger.error({ err }, 'simulator tick failed'))
            .finally(() => {
              running = false;
            });
        };
        // The first step covers today and tomorrow (the service is ready after it); yesterday follows with the next.
        firstStep = step(WARM_UP_DAYS);
        timer = setInterval(() => void step(), config.intervalSeconds * 1000);
        timer.unref();
      },
      // Today's games exist once the simulator's first step (run by this process's worker) is done.
      warmUp: () => firstStep,
      async stop() {
        if (timer) clearInterval(timer);
        for (const s of stops) await s().catch(() => undefined);
      },
    };
  },
};
