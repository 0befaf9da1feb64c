import type { Redis } from 'ioredis';
import type pg from 'pg';
import type { Clock } from './clock.ts';
import type { PlatformConfig } from './config.ts';
import type { CredentialStore, CredentialStoreOptions, CredentialTable } from './credentials.ts';
import type { SecretBox } from './crypto.ts';
import type { Db, MigrationSet, Tx } from './database.ts';
import type { ErrorFormatter, ServiceApp } from './http.ts';
import type { IdempotencyStore } from './idempotency.ts';
import type { CronDefinition, TaskBinding } from './jobs.ts';
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
  notifier: Notifier;
  /** AES-256-GCM for secrets that must be read back. */
  secrets: SecretBox;
  idempotency: IdempotencyStore;
  outbound: OutboundHttp;
  /** Shared Redis when `REDIS_URL` is set. */
  redis: Redis | undefined;
  /**
   * Creates a credential store of this service (the credential kit, `credentials.ts`) on the service's database and
   * clock. The runtime subscribes it to revocations (and to resynchronisation) before the service serves requests,
   * and unsubscribes it at stop.
   */
  credentialStore<T extends CredentialTable, P, A>(
    options: Omit<CredentialStoreOptions<T, P, A>, 'service' | 'db' | 'clock' | 'logger'>,
  ): CredentialStore<T, P, A>;
}

/** What a service's `setup` returns: its routes, jobs, seed and shutdown. */
export interface ServiceModule {
  /** Registers the service's routes (and rate limits) on its Fastify instance. HTTP layer only. */
  routes?(app: ServiceApp): Promise<void> | void;
  /**
   * The service's job tasks with their dependencies (`[publishTask.with(deps)]`, jobs.ts `defineTask`). Each name
   * must be `<service>:<task>` of this service, and appear once.
   */
  tasks?: readonly TaskBinding[];
  /** Recurring jobs, each naming one of {@link tasks} by task object. */
  cron?: readonly CronDefinition[];
  /**
   * Creates the demo data of a first start inside `tx` and returns the demo credentials (plaintext keys, ids) for
   * the banner and `credentials.json`. Runs once per database: the platform stores the answer (encrypted).
   */
  seed?(tx: Tx): Promise<Record<string, unknown>>;
  /** Starts in-process background work of the worker role (feeds, simulators). */
  startBackground?(): Promise<void>;
  /**
   * What the first answers need, done once at start after `routes` and `startBackground` (a cache built, a
   * simulator's first step): until it settles `/readyz` answers 503 and `npm start` holds its banner, so the banner
   * means the README's requests answer with data. A failure is logged and the service is ready anyway (it answers as
   * it would later).
   */
  warmUp?(): Promise<void>;
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
  /** The service's error body (the default of its routes). */
  formatError: ErrorFormatter;
  /** Error bodies of URL prefixes (MCP errors under `/mcp/`, a legacy flat body): see `ServiceAppOptions`. */
  errorFormats?: readonly { prefix: string; format: ErrorFormatter }[];
  tags?: { name: string; description: string }[];
  securitySchemes?: Record<string, unknown>;
  bodyLimit?: number;
  /**
   * `false` when the service counts failed authentications per client address itself (its own budget, e.g.
   * deposits' anonymous limit); otherwise the platform refuses an address past 30 failures a minute (`rate-limit.ts`).
   */
  platformAuthFailureLimit?: false;
  /**
   * Tables (`schema.table`) that a refused request writes by design: counters of failed attempts, such as a sign-in
   * throttle that counts wrong passwords. The fuzz suite's rule "a refused request changes nothing" leaves them out;
   * list nothing else here.
   */
  refusalCounters?: readonly string[];
  /** Validates the service's own variables; throws ConfigError with a one-line reason. */
  validateEnv?(env: Readonly<Record<string, string | undefined>>): void;
  setup(ctx: ServiceContext): Promise<ServiceModule> | ServiceModule;
}
