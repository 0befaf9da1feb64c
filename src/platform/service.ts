import type { Redis } from 'ioredis';
import type pg from 'pg';
import type { Clock } from './clock.ts';
import type { PlatformConfig } from './config.ts';
import type { SecretBox } from './crypto.ts';
import type { Db, MigrationSet, Tx } from './database.ts';
import type { ErrorFormatter, ServiceApp } from './http.ts';
import type { IdempotencyStore } from './idempotency.ts';
import type { CronDefinition, JobHandler, JobQueue } from './jobs.ts';
import type { AppLogger } from './logger.ts';
import type { Notifier } from './notifications.ts';
import type { OutboundHttp } from './outbound-http.ts';

/**
 * Everything the platform hands a service. Services reach the outside world only through this (and their own
 * simulators/adapters), so tests can swap the clock, the database and outbound HTTP.
 */
export interface ServiceContext {
  /** The service's folder name (`coins`). */
  name: string;
  config: PlatformConfig;
  /** The service's public base URL, no trailing slash (`http://127.0.0.1:4104`). */
  publicUrl: string;
  db: Db;
  pool: pg.Pool;
  clock: Clock;
  logger: AppLogger;
  /** Adds Graphile Worker jobs; task names are `<service>:<task>`. */
  jobs: JobQueue;
  notifier: Notifier;
  /** AES-256-GCM for secrets that must be read back. */
  secrets: SecretBox;
  idempotency: IdempotencyStore;
  outbound: OutboundHttp;
  /** Shared Redis when `REDIS_URL` is set. */
  redis: Redis | undefined;
}

/** What a service's `setup` returns: its routes, jobs, seed and shutdown. */
export interface ServiceModule {
  /** Registers the service's routes (and rate limits) on its Fastify instance. HTTP layer only. */
  routes?(app: ServiceApp): Promise<void> | void;
  /** Job handlers by short name; registered as `<service>:<name>`. */
  tasks?: Record<string, JobHandler>;
  /** Recurring jobs; `task` is a short name of this service. */
  cron?: CronDefinition[];
  /**
   * Creates the demo data of a first start inside `tx` and returns the demo credentials (plaintext keys, ids) for
   * the banner and `credentials.json`. Runs once per database: the platform stores the answer (encrypted).
   */
  seed?(tx: Tx): Promise<Record<string, unknown>>;
  /** Starts in-process background work of the worker role (feeds, simulators). */
  startBackground?(): Promise<void>;
  /** Stops background work and releases resources. */
  stop?(): Promise<void>;
}

/** A service as the platform knows it: identity, port, schema, migrations, error style, and its setup. */
export interface ServiceDefinition {
  /** Folder name under `src/services/` and key in `credentials.json`. */
  name: string;
  /** Prefix of the service's variables: `<PREFIX>_PORT`, `<PREFIX>_PUBLIC_URL`. */
  envPrefix: string;
  title: string;
  description: string;
  version: string;
  defaultPort: number;
  migrations: MigrationSet;
  formatError: ErrorFormatter;
  tags?: { name: string; description: string }[];
  securitySchemes?: Record<string, unknown>;
  bodyLimit?: number;
  /** Validates the service's own variables; throws ConfigError with a one-line reason. */
  validateEnv?(env: Readonly<Record<string, string | undefined>>): void;
  setup(ctx: ServiceContext): Promise<ServiceModule> | ServiceModule;
}
