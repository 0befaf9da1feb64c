import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Type } from '@sinclair/typebox';
import { eq, sql } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { type Clock, systemClock } from './clock.ts';
import type { PlatformConfig } from './config.ts';
import { CredentialStore } from './credentials.ts';
import { SecretBox } from './crypto.ts';
import { type Database, openDatabase, pingDatabase, runMigrations } from './database.ts';
import { seedState } from './db/schema.ts';
import { type EmbeddedPostgresHandle, portIsFree, startEmbeddedPostgres } from './embedded-postgres.ts';
import { createServiceApp, type ServiceApp } from './http.ts';
import { IdempotencyStore } from './idempotency.ts';
import {
  type CronDefinition,
  defineTask,
  type JobHandler,
  migrateJobs,
  runDueJobs,
  startWorker,
  type TaskBinding,
  taskHandlers,
} from './jobs.ts';
import type { AppLogger } from './logger.ts';
import { Notifier } from './notifications.ts';
import { OutboundHttp } from './outbound-http.ts';
import { registerRateLimit } from './rate-limit.ts';
import type { ServiceContext, ServiceDefinition, ServiceModule } from './service.ts';

/** Folder of the platform's own migrations (schema `platform`). */
export const PLATFORM_MIGRATIONS = {
  schema: 'platform',
  folder: path.join(import.meta.dirname, 'db', 'migrations'),
};

/** One running service: its definition, context, module, HTTP app (api role) and demo credentials. */
export interface RunningService {
  definition: ServiceDefinition;
  ctx: ServiceContext;
  module: ServiceModule;
  app: ServiceApp | undefined;
  /** Demo credentials from the first start's seed; undefined when they cannot be decrypted here. */
  credentials: Record<string, unknown> | undefined;
  /** True when this boot seeded the demo data (the database's first start for this service). */
  seededNow: boolean;
  /** `done` once the module's `warmUp` settled (before that `/readyz` is 503). */
  warm: 'pending' | 'done';
}

export interface BootOptions {
  config: PlatformConfig;
  /** The services to run (already filtered by `config.services`). */
  services: readonly ServiceDefinition[];
  databaseUrl: string;
  operatorToken: string;
  secretsKey: Buffer;
  logger: AppLogger;
  clock?: Clock;
  /** Build HTTP apps (api role). */
  serveHttp: boolean;
  /** Bind the apps to their ports; false keeps them for `inject()` (tests). */
  listen: boolean;
  /** Run the Graphile Worker runner and background work (worker role). */
  runWorker: boolean;
  /** Replaces the outbound HTTP client (tests). */
  outbound?: OutboundHttp;
}

export interface BootedPlatform {
  services: Map<string, RunningService>;
  database: Database;
  /** Every task of the running services and the platform, by full name. */
  tasks: Record<string, JobHandler>;
  /** Runs every due job once and returns (tests). */
  runDueJobs(): Promise<void>;
  /** Settles when every service's `warmUp` has (the services are ready); `npm start` waits for it. */
  warmedUp: Promise<void>;
  /** Drains HTTP, stops the worker and background work, closes connections. Idempotent. */
  stop(): Promise<void>;
}

/** Platform job (hourly): deletes the expired records of the idempotency store. Payload `{}`. */
export const pruneIdempotencyTask = defineTask(
  'platform:prune-idempotency',
  Type.Object({}),
  async (_payload, deps: { idempotency: IdempotencyStore; logger: AppLogger }) => {
    const n = await deps.idempotency.prune();
    if (n > 0) deps.logger.info({ pruned: n }, 'expired idempotency records deleted');
  },
);

const PLATFORM_CRON: CronDefinition[] = [{ task: pruneIdempotencyTask, pattern: '17 * * * *' }];

/**
 * Checks a service module's tasks and schedules (before its seed runs): every task named `<service>:<task>` and
 * registered once, every schedule on one of the module's tasks with a payload its schema accepts (with the `_cron`
 * Graphile Worker adds). Returns the schedules with their final identifiers (`<service>:<identifier>`, default the
 * task name).
 * @throws Error with a one-line reason.
 */
function checkServiceJobs(service: string, module: ServiceModule): CronDefinition[] {
  const names = new Set<string>();
  for (const { task } of module.tasks ?? []) {
    if (!task.name.startsWith(`${service}:`) || task.name.length === service.length + 1)
      throw new Error(`job task ${task.name} of service ${service} is not named ${service}:<task>`);
    if (names.has(task.name)) throw new Error(`job task ${task.name} is registered twice`);
    names.add(task.name);
  }
  return (module.cron ?? []).map((c) => {
    if (!names.has(c.task.name))
      throw new Error(
        `cron of service ${service} schedules ${c.task.name}, which the service does not register`,
      );
    const issues = c.task.issues({
      ...(c.payload ?? {}),
      _cron: { ts: new Date().toISOString(), backfilled: false },
    });
    if (issues.length > 0)
      throw new Error(`cron payload of ${c.task.name} does not match its schema: ${issues.join('; ')}`);
    return { ...c, identifier: c.identifier === undefined ? c.task.name : `${service}:${c.identifier}` };
  });
}

/**
 * Boots services on a database: migrations (platform, each service, Graphile Worker), each service's setup and
 * seed, its HTTP app (api role), and the worker (worker role).
 *
 * @throws Error with a one-line reason (migration failure, port in use, seed failure).
 */
export async function bootServices(options: BootOptions): Promise<BootedPlatform> {
  const { config, logger } = options;
  const clock = options.clock ?? systemClock;
  const database = openDatabase(options.databaseUrl, { max: 20 });
  const secrets = new SecretBox(options.secretsKey);
  const notifier = new Notifier(options.databaseUrl, logger);
  const outbound = options.outbound ?? new OutboundHttp({ allowPrivate: config.outboundAllowPrivate });
  const redis = config.redisUrl
    ? new Redis(config.redisUrl, { maxRetriesPerRequest: 2, lazyConnect: false })
    : undefined;
  redis?.on('error', (err) => logger.warn({ err: err.message }, 'redis error'));
  const idempotency = new IdempotencyStore(database.db, clock);

  const running = new Map<string, RunningService>();
  const credentialStores: CredentialStore<never, unknown, unknown>[] = [];
  const unlisteners: (() => Promise<void>)[] = [];
  let worker: { stop(): Promise<void> } | undefined;
  let stopped: Promise<void> | undefined;

  const stop = () => {
    stopped ??= (async () => {
      await Promise.all([...running.values()].map((s) => s.app?.close().catch(() => undefined)));
      await worker?.stop().catch((err) => logger.error({ err }, 'worker stop failed'));
      for (const s of running.values())
        await s.module.stop?.().catch((err) => logger.error({ err }, 'service stop failed'));
      for (const unlisten of unlisteners) await unlisten().catch(() => undefined);
      await notifier.close();
      if (!options.outbound) await outbound.close().catch(() => undefined);
      redis?.disconnect();
      await database.close().catch(() => undefined);
    })();
    return stopped;
  };

  try {
    await runMigrations(database.pool, [PLATFORM_MIGRATIONS, ...options.services.map((s) => s.migrations)]);
    await migrateJobs(database.pool, logger);

    const bindings: TaskBinding[] = [pruneIdempotencyTask.with({ idempotency, logger })];
    const cron: CronDefinition[] = [...PLATFORM_CRON];

    for (const definition of options.services) {
      const serviceLogger = logger.child({ service: definition.name });
      const ctx: ServiceContext = {
        name: definition.name,
        config,
        publicUrl: config.publicUrls[definition.name] ?? `http://127.0.0.1:${definition.defaultPort}`,
        db: database.db,
        pool: database.pool,
        clock,
        logger: serviceLogger,
        notifier,
        secrets,
        idempotency,
        outbound,
        redis,
        credentialStore: (storeOptions) => {
          const store = new CredentialStore({
            ...storeOptions,
            service: definition.name,
            db: database.db,
            clock,
            logger: serviceLogger,
          });
          credentialStores.push(store as unknown as CredentialStore<never, unknown, unknown>);
          return store;
        },
      };
      const module = await definition.setup(ctx);
      cron.push(...checkServiceJobs(definition.name, module));
      bindings.push(...(module.tasks ?? []));
      const { credentials, seededNow } = await seedOnce(
        database,
        definition.name,
        module,
        secrets,
        clock,
        serviceLogger,
      );
      running.set(definition.name, {
        definition,
        ctx,
        module,
        app: undefined,
        credentials,
        seededNow,
        warm: 'pending',
      });
    }

    const tasks = taskHandlers(bindings);

    if (options.serveHttp) {
      // Revocations reach every instance that answers requests before its first request.
      for (const store of credentialStores) unlisteners.push(await store.listen(notifier));
      for (const service of running.values()) {
        const { definition, ctx } = service;
        const app = await createServiceApp({
          name: definition.name,
          title: definition.title,
          version: definition.version,
          description: definition.description,
          publicUrl: ctx.publicUrl,
          formatError: definition.formatError,
          errorFormats: definition.errorFormats,
          operatorToken: options.operatorToken,
          logger, // createServiceApp binds `service` itself (ctx.logger has it already: it would appear twice)
          tags: definition.tags,
          securitySchemes: definition.securitySchemes,
          bodyLimit: definition.bodyLimit,
          trustProxy: options.config.trustProxy,
          ready: async () => service.warm === 'done' && (await pingDatabase(database.pool)),
        });
        await registerRateLimit(app, {
          clock,
          redis,
          nameSpace: `api-suite:${definition.name}:`,
          limitAuthFailures: definition.platformAuthFailureLimit !== false,
        });
        await service.module.routes?.(app);
        await app.ready();
        service.app = app;
      }
      if (options.listen) {
        for (const service of running.values()) {
          const port = config.ports[service.definition.name];
          try {
            await service.app!.listen({ port, host: config.host });
          } catch (err) {
            const code = (err as NodeJS.ErrnoException).code;
            throw new Error(
              code === 'EADDRINUSE'
                ? `cannot listen on ${config.host}:${port} for ${service.definition.name}: address already in use`
                : `cannot listen on ${config.host}:${port} for ${service.definition.name}: ${(err as Error).message}`,
            );
          }
        }
      }
    }

    if (options.runWorker) {
      worker = await startWorker({
        pool: database.pool,
        tasks,
        cron,
        concurrency: config.workerConcurrency,
        logger,
      });
      for (const service of running.values()) await service.module.startBackground?.();
    }

    const warmedUp = Promise.all(
      [...running.values()].map(async (service) => {
        try {
          await service.module.warmUp?.();
        } catch (err) {
          service.ctx.logger.error({ err }, 'warm-up failed');
        } finally {
          service.warm = 'done';
        }
      }),
    ).then(() => undefined);

    return {
      warmedUp,
      services: running,
      database,
      tasks,
      runDueJobs: () => runDueJobs(database.pool, tasks, logger),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function seedOnce(
  database: Database,
  service: string,
  module: ServiceModule,
  secrets: SecretBox,
  clock: Clock,
  logger: AppLogger,
): Promise<{ credentials: Record<string, unknown> | undefined; seededNow: boolean }> {
  const seed = module.seed;
  if (!seed) return { credentials: {}, seededNow: false };
  return database.db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`api-suite:seed:${service}`}))`);
    const [existing] = await tx.select().from(seedState).where(eq(seedState.service, service));
    if (existing) {
      try {
        const credentials = JSON.parse(secrets.decrypt(existing.credentials, `seed:${service}`));
        return { credentials: credentials as Record<string, unknown>, seededNow: false };
      } catch {
        logger.warn('demo credentials were created with another SECRETS_KEY and cannot be shown here');
        return { credentials: undefined, seededNow: false };
      }
    }
    const credentials = await seed(tx);
    await tx.insert(seedState).values({
      service,
      credentials: secrets.encrypt(JSON.stringify(credentials), `seed:${service}`),
      createdAt: clock.now(),
    });
    logger.info('demo data seeded');
    return { credentials, seededNow: true };
  });
}

/** Reads a secret file of DATA_DIR, or creates it (mode 0600) with `generate()`. */
async function readOrCreateSecret(file: string, generate: () => string): Promise<string> {
  try {
    const value = (await fs.readFile(file, 'utf8')).trim();
    if (value) return value;
  } catch {
    // created below
  }
  const value = generate();
  await fs.writeFile(file, `${value}\n`, { mode: 0o600 });
  await fs.chmod(file, 0o600);
  return value;
}

/** The platform as `npm start` runs it: DATA_DIR, database (embedded or external), services, banner. */
export interface StartedPlatform {
  booted: BootedPlatform;
  operatorToken: string;
  /** `{ "<service>": { baseUrl, docsUrl?, ...credentials } }`, as written to `DATA_DIR/credentials.json`. */
  credentials: Record<string, Record<string, unknown>>;
  embedded: EmbeddedPostgresHandle | undefined;
  /** True when this start created the demo credentials (a service seeded its data now). */
  firstStart: boolean;
  /** Stops everything in order: HTTP drained, workers, connections, then embedded PostgreSQL. */
  stop(): Promise<void>;
}

/**
 * Starts the platform (docs/architecture.md, "Runtime"): DATA_DIR with the operator token and secrets key (generated
 * on first start, mode 0600), the database (`DATABASE_URL`, or embedded PostgreSQL under DATA_DIR), every enabled
 * service, and `DATA_DIR/credentials.json` (mode 0600).
 *
 * @throws Error with a one-line reason: a port in use, the database unreachable, a failed migration.
 */
export async function startPlatform(
  config: PlatformConfig,
  services: readonly ServiceDefinition[],
  logger: AppLogger,
  options: { runWorker?: boolean } = {},
): Promise<StartedPlatform> {
  const serveHttp = config.role !== 'worker';
  const runWorker = config.role !== 'api' && options.runWorker !== false;
  if (serveHttp) {
    for (const name of config.services) {
      const port = config.ports[name]!;
      if (!(await portIsFree(port, config.host))) {
        throw new Error(`cannot listen on ${config.host}:${port} for ${name}: address already in use`);
      }
    }
  }

  await fs.mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  const operatorToken =
    config.operatorToken ??
    (await readOrCreateSecret(
      path.join(config.dataDir, 'operator-token'),
      () => `op_${randomBytes(24).toString('base64url')}`,
    ));
  const secretsKey =
    config.secretsKey ??
    Buffer.from(
      await readOrCreateSecret(path.join(config.dataDir, 'secrets.key'), () =>
        randomBytes(32).toString('base64'),
      ),
      'base64',
    );

  let embedded: EmbeddedPostgresHandle | undefined;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    const pgLogger = logger.child({ component: 'postgres' });
    embedded = await startEmbeddedPostgres(config.dataDir, (line) => pgLogger.debug(line));
    databaseUrl = embedded.url;
    logger.info({ port: embedded.port }, 'embedded PostgreSQL started');
  }

  let booted: BootedPlatform;
  try {
    booted = await bootServices({
      config,
      services,
      databaseUrl,
      operatorToken,
      secretsKey,
      logger,
      serveHttp,
      listen: true,
      runWorker,
    });
  } catch (err) {
    await embedded?.stop();
    throw err;
  }

  // The banner means ready: every service's warm-up (caches built, the first simulator step) is done, so the
  // README's requests answer with data as soon as it is printed.
  await booted.warmedUp;

  const credentials: Record<string, Record<string, unknown>> = {};
  for (const [name, s] of booted.services) {
    const baseUrl = config.publicUrls[name]!;
    credentials[name] = { baseUrl, docsUrl: `${baseUrl}/docs`, ...(s.credentials ?? {}) };
  }
  const credentialsFile = path.join(config.dataDir, 'credentials.json');
  await fs.writeFile(credentialsFile, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  await fs.chmod(credentialsFile, 0o600);

  let stopping: Promise<void> | undefined;
  return {
    booted,
    operatorToken,
    credentials,
    embedded,
    firstStart: [...booted.services.values()].some((s) => s.seededNow),
    stop() {
      stopping ??= (async () => {
        await booted.stop();
        await embedded?.stop();
      })();
      return stopping;
    },
  };
}

/**
 * Whether the start banner prints the operator token and the demo keys: when asked (`--show-credentials`), or on an
 * interactive first start (a terminal, and this start created them). Otherwise the banner points to the files that
 * hold them, so a service manager's or a container's log never carries a secret.
 */
export function bannerShowsSecrets(options: {
  asked: boolean;
  interactive: boolean;
  firstStart: boolean;
}): boolean {
  return options.asked || (options.interactive && options.firstStart);
}

/**
 * The start banner: role, database, where the operator token and the demo credentials are, each service's base URL
 * and docs, and (only when `showSecrets`, {@link bannerShowsSecrets}) the operator token and the demo credentials.
 */
export function formatBanner(
  started: StartedPlatform,
  config: PlatformConfig,
  options: { showSecrets: boolean },
): string {
  const lines: string[] = [];
  const credentialsFile = path.join(config.dataDir, 'credentials.json');
  lines.push('');
  lines.push(`api-suite is running (role: ${config.role})`);
  lines.push(
    `  database: ${started.embedded ? `embedded PostgreSQL on 127.0.0.1:${started.embedded.port} (data in ${config.dataDir}/pg)` : 'DATABASE_URL'}`,
  );
  if (options.showSecrets) lines.push(`  operator token: ${started.operatorToken}`);
  else
    lines.push(
      `  operator token: ${config.operatorToken ? 'as set in OPERATOR_TOKEN' : `in ${path.join(config.dataDir, 'operator-token')}`}`,
    );
  lines.push(`  credentials: ${credentialsFile}`);
  if (!options.showSecrets)
    lines.push('  (demo keys are in that file; `npm start -- --show-credentials` prints them here)');
  lines.push('');
  for (const [name, creds] of Object.entries(started.credentials)) {
    const { baseUrl, docsUrl, ...rest } = creds;
    lines.push(`  ${name}`);
    if (config.role !== 'worker') {
      lines.push(`    base URL: ${String(baseUrl)}`);
      lines.push(`    docs:     ${String(docsUrl)}`);
    }
    if (options.showSecrets)
      for (const [k, v] of Object.entries(rest))
        lines.push(`    ${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  }
  lines.push('');
  lines.push('Press Ctrl-C to stop.');
  lines.push('');
  return lines.join('\n');
}
