import { fillPlaceholders, type SQL, sql } from 'drizzle-orm';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import { PgDialect } from 'drizzle-orm/pg-core';
import pg from 'pg';

/** Drizzle over node-postgres; `Db` is the handle services query with, `Tx` the one inside `db.transaction`. */
export type Db = NodePgDatabase<Record<string, never>>;
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
/** Either a database handle or a transaction: functions that can run inside the caller's transaction take this. */
export type Executor = Db | Tx;

/** A pool and its Drizzle handle. `close()` ends every connection. */
export interface Database {
  pool: pg.Pool;
  db: Db;
  close(): Promise<void>;
}

// Serve int8 (bigint) as a JS number when it is safe; money in minor units stays far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v: string) => {
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : (v as unknown as number);
});

/**
 * Opens a pool to `url`.
 * @param max pool size (connections), default 20.
 */
export function openDatabase(
  url: string,
  options: { max?: number; applicationName?: string } = {},
): Database {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 20,
    application_name: options.applicationName ?? 'api-suite',
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
  });
  const db = drizzle(pool) as Db;
  return {
    pool,
    db,
    close: () => pool.end(),
  };
}

/** The migrations of one Postgres schema: Drizzle's journal table lives inside that schema. */
export interface MigrationSet {
  /** Postgres schema name, for example `coins` or `platform`. */
  schema: string;
  /** Absolute path of the folder drizzle-kit generated (with `meta/_journal.json`). */
  folder: string;
}

const MIGRATION_LOCK = 'api-suite:migrations';

/**
 * Applies migration sets in order, holding a PostgreSQL advisory lock so several instances starting together
 * migrate once. Each set records applied migrations in `<schema>.__drizzle_migrations`.
 */
export async function runMigrations(pool: pg.Pool, sets: readonly MigrationSet[]): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('select pg_advisory_lock(hashtext($1))', [MIGRATION_LOCK]);
    const db = drizzle(client);
    for (const set of sets) {
      await db.execute(sql.raw(`create schema if not exists "${set.schema.replace(/"/g, '')}"`));
      await migrate(db, {
        migrationsFolder: set.folder,
        migrationsSchema: set.schema,
        migrationsTable: '__drizzle_migrations',
      });
    }
  } finally {
    await client.query('select pg_advisory_unlock(hashtext($1))', [MIGRATION_LOCK]).catch(() => undefined);
    client.release();
  }
}

/** Creates database `name` on the server of `adminUrl` if it does not exist. */
export async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const exists = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (exists.rowCount === 0) await client.query(`create database "${name.replace(/"/g, '')}"`);
  } finally {
    await client.end();
  }
}

/** Returns `url` with its database name replaced by `name`. */
export function withDatabaseName(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(name)}`;
  return u.toString();
}

/** `select 1` with a timeout: true when the database answers. */
export async function pingDatabase(pool: pg.Pool, timeoutMs = 2000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const result = await Promise.race([
      pool.query('select 1 as ok'),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
      }),
    ]);
    return result.rows[0]?.ok === 1;
  } catch {
    return false;
  } finally {
    if (timer) clearTimeout(timer);
  }
}

const dialect = new PgDialect();

/**
 * One SQL statement built once from Drizzle SQL (parameters as `sql.placeholder(name)`) and run as a named prepared
 * statement on the connection of any executor: the pool, or the client of a transaction. Drizzle's own `.prepare()`
 * binds a statement to the handle it was built on (the pool), so a statement inside a transaction would be built anew
 * on every request, and it maps every row through its column decoders; this skips both, for hot paths measured by the
 * benchmarks. Rows come back as node-postgres parses them (column names as selected: alias them; `timestamptz` as
 * `Date`, `int8` as a number when safe, `jsonb` parsed).
 *
 * It reads the client of a Drizzle handle (`session.client` of drizzle-orm 0.45's node-postgres session): every use
 * is covered by a service test, which fails if an upgrade moves it.
 */
export class NamedStatement<Row> {
  private readonly text: string;
  private readonly params: unknown[];

  /** @param name the statement's name on each connection (unique per text: node-postgres refuses one name for two texts). */
  constructor(
    readonly name: string,
    query: SQL,
  ) {
    const built = dialect.sqlToQuery(query);
    this.text = built.sql;
    this.params = built.params;
  }

  /**
   * Runs the statement with `values` for its placeholders on `executor`'s connection (inside its transaction, if any).
   * @throws Error when a placeholder has no value; the driver's errors as they are.
   */
  async rows(executor: Executor, values: Record<string, unknown> = {}): Promise<Row[]> {
    const client = (executor as unknown as { session: { client: pg.Pool | pg.PoolClient } }).session.client;
    const result = await client.query({
      name: this.name,
      text: this.text,
      values: fillPlaceholders(this.params, values),
    });
    return result.rows as Row[];
  }
}
