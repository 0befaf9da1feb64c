import { sql } from 'drizzle-orm';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
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
