/**
 * Test support: a fresh database per test file and the platform booted on it, the way `npm start` boots it.
 *
 * The server is `TEST_DATABASE_URL` when set (CI sets it to the machine's PostgreSQL); otherwise one embedded
 * PostgreSQL is started in a temporary directory for this process and stopped when it exits. Each call of
 * {@link createTestDatabase} creates its own database on that server and drops it afterwards; a database for booted
 * services is a copy of a template migrated once per server and migration content ({@link migratedTemplate}), so test
 * files do not each run every migration.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pg from 'pg';
import type { Clock } from '../../src/platform/clock.ts';
import { loadConfig, type PlatformConfig } from '../../src/platform/config.ts';
import { openDatabase, runMigrations, withDatabaseName } from '../../src/platform/database.ts';
import { type EmbeddedPostgresHandle, startEmbeddedPostgres } from '../../src/platform/embedded-postgres.ts';
import { createServiceApp, type ServiceApp, type ServiceAppOptions } from '../../src/platform/http.ts';
import { migrateJobs } from '../../src/platform/jobs.ts';
import { createLogger } from '../../src/platform/logger.ts';
import type { OutboundHttp } from '../../src/platform/outbound-http.ts';
import { type BootedPlatform, bootServices, PLATFORM_MIGRATIONS } from '../../src/platform/runtime.ts';
import type { ServiceDefinition } from '../../src/platform/service.ts';

let embedded: Promise<EmbeddedPostgresHandle> | undefined;

/** The admin URL of the test server (starting embedded PostgreSQL on first use when TEST_DATABASE_URL is unset). */
export async function testServerUrl(): Promise<string> {
  const url = process.env.TEST_DATABASE_URL;
  if (url) return url;
  embedded ??= (async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'api-suite-testdb-'));
    // The server is signalled to stop when this process exits (startEmbeddedPostgres installs that hook).
    return startEmbeddedPostgres(dir);
  })();
  return (await embedded).url;
}

/** A database created for one test file. */
export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** SHA-256 over every file under `folder` (names and contents, in name order). */
function hashFolder(hash: ReturnType<typeof createHash>, folder: string): void {
  for (const entry of readdirSync(folder).sort()) {
    const full = path.join(folder, entry);
    hash.update(entry);
    if (statSync(full).isDirectory()) hashFolder(hash, full);
    else hash.update(readFileSync(full));
  }
}

const templates = new Map<string, Promise<string>>();

/**
 * The templates of `existing` (name and label, from `pg_database`) that the template labelled `label` replaces: this
 * checkout's older templates of the same services (the same label), those of checkouts that no longer exist
 * (`exists(path)` false: a removed worktree, an earlier CI clone), and those labelled before labels named their
 * checkout. Other checkouts' templates, and databases not labelled as test templates, are kept.
 */
export function staleTemplates<T extends { label: string | null }>(
  existing: readonly T[],
  label: string,
  exists: (path: string) => boolean,
): T[] {
  return existing.filter(({ label: other }) => {
    if (other === null) return false;
    if (other === label || other.startsWith('api-suite test template: ')) return true;
    const owner = /^api-suite test template of (.+): [^:]*$/.exec(other)?.[1];
    return owner !== undefined && !exists(owner);
  });
}

/**
 * The name of a template database on the server of `admin` holding every migration of the platform, of `services`
 * and of Graphile Worker: `tpl_<hash>`, the hash covering this checkout's path, the migration files, the services and
 * Graphile Worker's version, so a changed migration makes a new template. Made once per server: test processes
 * starting together take an advisory lock, and the first builds it under another name and renames it when complete;
 * it is marked a template that accepts no connections (so copies never find it in use), and this checkout's older
 * templates of the same services are dropped, as are those of checkouts that no longer exist (other checkouts'
 * templates are left alone).
 */
async function migratedTemplate(admin: string, services: readonly ServiceDefinition[]): Promise<string> {
  const sets = [PLATFORM_MIGRATIONS, ...services.map((s) => s.migrations)];
  // The checkout is part of the name and label: checkouts sharing one server (worktrees, CI beside a developer) each
  // have their own templates and drop only their own older ones.
  const checkout = path.resolve(import.meta.dirname, '..', '..');
  const hash = createHash('sha256');
  hash.update(`${checkout}\0`);
  hash.update(String(createRequire(import.meta.url)('graphile-worker/package.json').version));
  for (const set of sets) {
    hash.update(`\0${set.schema}\0`);
    hashFolder(hash, set.folder);
  }
  const name = `tpl_${hash.digest('hex').slice(0, 24)}`;
  const label = `api-suite test template of ${checkout}: ${services.map((s) => s.name).join(', ') || 'platform'}`;
  let made = templates.get(`${admin} ${name}`);
  if (!made) {
    made = (async () => {
      const client = new pg.Client({ connectionString: admin });
      await client.connect();
      try {
        await client.query('select pg_advisory_lock(hashtext($1))', [`api-suite:test-template:${name}`]);
        const found = await client.query('select 1 from pg_database where datname = $1', [name]);
        if (found.rowCount === 0) {
          const building = `${name}_build`;
          await client.query(`drop database if exists "${building}" with (force)`);
          await client.query(`create database "${building}"`);
          const database = openDatabase(withDatabaseName(admin, building), { max: 2 });
          try {
            await runMigrations(database.pool, sets);
            await migrateJobs(database.pool, createLogger('silent'));
          } finally {
            await database.close();
          }
          await client.query(`alter database "${building}" rename to "${name}"`);
          await client.query(`alter database "${name}" with is_template true allow_connections false`);
          await client.query(`comment on database "${name}" is ${client.escapeLiteral(label)}`);
          // Of no more use: this checkout's templates of the same services made from older migrations, and the
          // templates of checkouts that are gone (a removed worktree, an earlier CI clone).
          const existing = await client.query<{ datname: string; label: string | null }>(
            `select d.datname, shobj_description(d.oid, 'pg_database') as label from pg_database d
              where d.datname like 'tpl\\_%' and d.datname <> $1`,
            [name],
          );
          const stale = staleTemplates(existing.rows, label, existsSync);
          for (const { datname } of stale) {
            // Best effort: a template another run is still copying stays until a later run.
            await client
              .query(`alter database "${datname}" with is_template false`)
              .then(() => client.query(`drop database if exists "${datname}"`))
              .catch(() => undefined);
          }
        }
        return name;
      } finally {
        await client.end();
      }
    })();
    templates.set(`${admin} ${name}`, made);
  }
  return made;
}

/**
 * Creates a database `t_<random>` on the test server: empty, or, with `migrated`, already holding the migrations of
 * the platform, of those services and of Graphile Worker (a copy of {@link migratedTemplate}; booting on it finds
 * nothing to migrate).
 */
export async function createTestDatabase(
  options: { migrated?: readonly ServiceDefinition[] } = {},
): Promise<TestDatabase> {
  const admin = await testServerUrl();
  const name = `t_${randomBytes(6).toString('hex')}`;
  const template = options.migrated ? await migratedTemplate(admin, options.migrated) : undefined;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`create database "${name}"${template ? ` template "${template}"` : ''}`);
  } finally {
    await client.end();
  }
  return {
    url: withDatabaseName(admin, name),
    name,
    async drop() {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`drop database if exists "${name}" with (force)`);
      await c.end();
    },
  };
}

export const TEST_OPERATOR_TOKEN = 'test-operator-token-0123456789';

/** A booted platform on a fresh database, for `inject()` or real HTTP. */
export interface TestPlatform {
  booted: BootedPlatform;
  config: PlatformConfig;
  database: TestDatabase;
  /** The HTTP app of a service. */
  app(name: string): ServiceApp;
  /** Demo credentials the service's seed returned. */
  credentials(name: string): Record<string, unknown>;
  /** `Authorization` header value for operator routes. */
  operatorAuth: string;
  /** Runs every due job once. */
  runDueJobs(): Promise<void>;
  /**
   * Boots another instance of the same services on the same database, secrets key, operator token and clock (as a
   * second `npm start -- --role api` would): for rules that must hold across instances. Stopped by `close()` too.
   */
  anotherInstance(): Promise<{ app(name: string): ServiceApp }>;
  close(): Promise<void>;
}

/**
 * Boots `services` on a fresh database with `clock`.
 * @param env extra environment (service settings such as COINS_UPSTREAM_URL).
 * @param listen bind each app to a free port on 127.0.0.1 (for real HTTP clients); default false (`inject()`).
 * @param logLines when given, the platform logs at level `trace` and every JSON log line is appended there (to check
 *   what a service logs); otherwise at level `debug` into a buffer (also printed when `TEST_LOG_LEVEL` is set).
 *   Either way `close()` fails when a log line holds the operator token or a seeded demo key: no test run logs a
 *   secret.
 */
export async function startTestPlatform(options: {
  services: ServiceDefinition[];
  clock?: Clock;
  env?: Record<string, string>;
  listen?: boolean;
  outbound?: OutboundHttp;
  runWorker?: boolean;
  logLines?: string[];
}): Promise<TestPlatform> {
  const database = await createTestDatabase({ migrated: options.services });
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'api-suite-test-'));
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    OUTBOUND_ALLOW_PRIVATE: 'true',
    ...(options.env ?? {}),
  };
  const config = loadConfig(
    env,
    {},
    options.services.map((s) => ({ name: s.name, envPrefix: s.envPrefix, defaultPort: s.defaultPort })),
  );
  for (const s of options.services) s.validateEnv?.(env);
  const lines = options.logLines ?? [];
  const echo = options.logLines === undefined && process.env.TEST_LOG_LEVEL !== undefined;
  const logger = createLogger(
    options.logLines ? 'trace' : 'debug',
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        if (echo) process.stdout.write(chunk);
        done();
      },
    }),
  );
  const secretsKey = randomBytes(32);
  const boot = (runWorker: boolean) =>
    bootServices({
      config,
      services: options.services,
      databaseUrl: database.url,
      operatorToken: TEST_OPERATOR_TOKEN,
      secretsKey,
      logger,
      clock: options.clock,
      serveHttp: true,
      listen: false,
      runWorker,
      outbound: options.outbound,
    });
  const others: BootedPlatform[] = [];
  let booted: BootedPlatform;
  try {
    booted = await boot(options.runWorker ?? false);
  } catch (err) {
    await database.drop().catch(() => undefined);
    throw err;
  }
  // As `npm start` does before its banner: the services are ready (their warm-ups done).
  await booted.warmedUp;
  if (options.listen) {
    for (const s of booted.services.values()) {
      await s.app!.listen({ port: 0, host: '127.0.0.1' });
      const addr = s.app!.server.address();
      if (addr && typeof addr === 'object') s.ctx.publicUrl = `http://127.0.0.1:${addr.port}`;
    }
  }
  return {
    booted,
    config,
    database,
    app: (name) => {
      const app = booted.services.get(name)?.app;
      if (!app) throw new Error(`service ${name} is not running`);
      return app;
    },
    credentials: (name) => booted.services.get(name)?.credentials ?? {},
    operatorAuth: `Bearer ${TEST_OPERATOR_TOKEN}`,
    runDueJobs: () => booted.runDueJobs(),
    async anotherInstance() {
      const other = await boot(false);
      others.push(other);
      await other.warmedUp;
      return {
        app: (name) => {
          const app = other.services.get(name)?.app;
          if (!app) throw new Error(`service ${name} is not running`);
          return app;
        },
      };
    },
    async close() {
      for (const other of others) await other.stop();
      await booted.stop();
      await database.drop().catch(() => undefined);
      await fs.rm(dataDir, { recursive: true, force: true });
      assertNoSecretLogged(lines, [TEST_OPERATOR_TOKEN, ...seededSecrets(booted)]);
    },
  };
}

/** The demo secrets the services seeded (values named `...key`, `...token`, `...secret` or `...password`, 20 characters or more). */
function seededSecrets(booted: BootedPlatform): string[] {
  const out: string[] = [];
  for (const s of booted.services.values())
    for (const [name, value] of Object.entries(s.credentials ?? {}))
      if (typeof value === 'string' && /(key|token|secret|password)$/i.test(name) && value.length >= 20)
        out.push(value);
  return out;
}

/**
 * Fails when one of `lines` holds one of `secrets` (naming the line's message and the secret's first characters only).
 * @throws AssertionError listing the offending log messages.
 */
function assertNoSecretLogged(lines: readonly string[], secrets: readonly string[]): void {
  const leaks: string[] = [];
  for (const line of lines)
    for (const secret of secrets)
      if (line.includes(secret))
        leaks.push(`${secret.slice(0, 6)}... in "${/"msg":"([^"]*)"/.exec(line)?.[1]}"`);
  assert.deepEqual(leaks, [], 'no log line holds the operator token or a seeded key');
}

/** The address a listening app answers on (`http://127.0.0.1:<port>`). */
export function baseUrlOf(app: ServiceApp): string {
  const addr = app.server.address();
  if (!addr || typeof addr !== 'object') throw new Error('app is not listening');
  return `http://127.0.0.1:${addr.port}`;
}

/**
 * A bare service app for platform tests (no service, no database): `createServiceApp` with a test name, a
 * `{code, message}` error body, {@link TEST_OPERATOR_TOKEN}, a silent logger and a ready probe that says yes;
 * `overrides` replace any of them.
 */
export function bareServiceApp(overrides: Partial<ServiceAppOptions> = {}): Promise<ServiceApp> {
  return createServiceApp({
    name: 'platform-test',
    title: 'Platform test service',
    version: '1.0.0',
    description: 'test',
    publicUrl: 'http://127.0.0.1:9999',
    formatError: (error) => ({ body: { code: error.code, message: error.message } }),
    operatorToken: TEST_OPERATOR_TOKEN,
    logger: createLogger('silent'),
    ready: async () => true,
    ...overrides,
  });
}
