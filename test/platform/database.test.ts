import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import {
  type Database,
  ensureDatabase,
  type MigrationSet,
  openDatabase,
  pingDatabase,
  runMigrations,
  withDatabaseName,
} from '../../src/platform/database.ts';
import { createTestDatabase, type TestDatabase, testServerUrl } from '../support/platform.ts';
import { waitUntil } from '../support/wait.ts';

/** Writes a drizzle-kit style migrations folder (journal + one .sql file per migration) into a temp dir. */
async function migrationFolder(dir: string, migrations: string[][]): Promise<string> {
  await fs.mkdir(path.join(dir, 'meta'), { recursive: true });
  const entries = migrations.map((_statements, idx) => ({
    idx,
    version: '7',
    when: 1_700_000_000_000 + idx * 1000,
    tag: `000${idx}_m${idx}`,
    breakpoints: true,
  }));
  await fs.writeFile(
    path.join(dir, 'meta', '_journal.json'),
    JSON.stringify({ version: '7', dialect: 'postgresql', entries }),
  );
  for (const [idx, statements] of migrations.entries()) {
    await fs.writeFile(
      path.join(dir, `000${idx}_m${idx}.sql`),
      statements.join('\n--> statement-breakpoint\n'),
    );
  }
  return dir;
}

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

describe('platform: database (migrations under an advisory lock, helpers)', () => {
  let tmp: string;
  const databases: TestDatabase[] = [];
  const opened: Database[] = [];

  async function freshDatabase(): Promise<Database> {
    const d = await createTestDatabase();
    databases.push(d);
    const handle = openDatabase(d.url);
    opened.push(handle);
    return handle;
  }

  let appSet: MigrationSet;
  let slowSet: MigrationSet;

  before(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'platform-db-test-'));
    appSet = {
      schema: 'app_one',
      folder: await migrationFolder(path.join(tmp, 'app_one'), [
        [
          'create table app_one.items (id int primary key, name text not null)',
          "insert into app_one.items values (1, 'seed')",
        ],
        ['alter table app_one.items add column note text'],
      ]),
    };
    slowSet = {
      schema: 'app_slow',
      folder: await migrationFolder(path.join(tmp, 'app_slow'), [
        [
          'create table app_slow.runs (id serial primary key, at timestamptz not null default now())',
          'select pg_sleep(0.3)',
          'insert into app_slow.runs default values',
        ],
      ]),
    };
  });
  after(async () => {
    for (const h of opened) await h.close().catch(() => undefined);
    for (const d of databases) await d.drop().catch(() => undefined);
    await fs.rm(tmp, { recursive: true, force: true });
  });

  test('runMigrations creates the schema, applies every migration, and records them', async () => {
    const { pool } = await freshDatabase();
    await runMigrations(pool, [appSet]);
    const cols = await pool.query(
      "select column_name from information_schema.columns where table_schema = 'app_one' and table_name = 'items' order by column_name",
    );
    assert.deepEqual(
      cols.rows.map((r) => r.column_name),
      ['id', 'name', 'note'],
    );
    const applied = await pool.query('select count(*)::int as n from app_one.__drizzle_migrations');
    assert.equal(applied.rows[0].n, 2);
  });

  test('runMigrations is idempotent: a second run applies nothing again', async () => {
    const { pool } = await freshDatabase();
    await runMigrations(pool, [appSet, slowSet]);
    await runMigrations(pool, [appSet, slowSet]);
    await runMigrations(pool, [appSet]);
    const items = await pool.query('select count(*)::int as n from app_one.items');
    assert.equal(items.rows[0].n, 1, 'the seed insert ran once');
    const runs = await pool.query('select count(*)::int as n from app_slow.runs');
    assert.equal(runs.rows[0].n, 1);
    const applied = await pool.query('select count(*)::int as n from app_one.__drizzle_migrations');
    assert.equal(applied.rows[0].n, 2);
  });

  test('two instances migrating at once both succeed and each migration runs once', async () => {
    const first = await freshDatabase();
    const d = databases[databases.length - 1]!;
    const second = openDatabase(d.url);
    opened.push(second);
    await Promise.all([
      runMigrations(first.pool, [slowSet, appSet]),
      runMigrations(second.pool, [slowSet, appSet]),
    ]);
    const runs = await first.pool.query('select count(*)::int as n from app_slow.runs');
    assert.equal(runs.rows[0].n, 1);
    const items = await first.pool.query('select count(*)::int as n from app_one.items');
    assert.equal(items.rows[0].n, 1);
  });

  test('runMigrations waits for the migration advisory lock held by another session', async () => {
    const { pool } = await freshDatabase();
    const holder = await pool.connect();
    try {
      await holder.query("select pg_advisory_lock(hashtext('api-suite:migrations'))");
      let done = false;
      const running = runMigrations(pool, [appSet]).then(() => {
        done = true;
      });
      // The positive sign that it waits: its session is seen blocked on the advisory lock (not a fixed sleep).
      await waitUntil('runMigrations to wait on the advisory lock', async () => {
        const { rows } = await pool.query(
          "select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted and database = (select oid from pg_database where datname = current_database())",
        );
        return rows[0].n > 0;
      });
      assert.equal(done, false, 'migrations must not run while another instance holds the lock');
      const exists = await pool.query("select to_regclass('app_one.items') as t");
      assert.equal(exists.rows[0].t, null);
      await holder.query("select pg_advisory_unlock(hashtext('api-suite:migrations'))");
      await withTimeout(running, 10_000, 'runMigrations after unlock');
      assert.equal(done, true);
    } finally {
      holder.release();
    }
  });

  test('a failing migration rejects and releases the lock for the next instance', async () => {
    const db1 = await freshDatabase();
    const bad: MigrationSet = {
      schema: 'app_bad',
      folder: await migrationFolder(path.join(tmp, 'app_bad'), [['select * from no_such_table']]),
    };
    await assert.rejects(runMigrations(db1.pool, [bad]), /no_such_table/);
    const other = openDatabase(databases[databases.length - 1]!.url, { max: 2 });
    opened.push(other);
    await withTimeout(runMigrations(other.pool, [appSet]), 10_000, 'runMigrations after a failed one');
    const applied = await other.pool.query('select count(*)::int as n from app_one.__drizzle_migrations');
    assert.equal(applied.rows[0].n, 2);
  });

  test('withDatabaseName replaces only the database of a URL', () => {
    assert.equal(
      withDatabaseName('postgres://u:p@h:5433/admin?sslmode=disable', 'new_db'),
      'postgres://u:p@h:5433/new_db?sslmode=disable',
    );
    assert.equal(withDatabaseName('postgres://h/', 'x y'), 'postgres://h/x%20y');
  });

  test('ensureDatabase creates a missing database and leaves an existing one alone', async () => {
    const admin = await testServerUrl();
    const name = `t_ensure_${Date.now().toString(36)}`;
    const drop = async () => {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`drop database if exists "${name}" with (force)`);
      await c.end();
    };
    try {
      await ensureDatabase(admin, name);
      const c = new pg.Client({ connectionString: withDatabaseName(admin, name) });
      await c.connect();
      await c.query('create table marker (id int)');
      await c.end();
      await ensureDatabase(admin, name);
      const again = openDatabase(withDatabaseName(admin, name));
      try {
        const r = await again.pool.query("select to_regclass('marker') as t");
        assert.equal(r.rows[0].t, 'marker', 'the existing database was kept');
      } finally {
        await again.close();
      }
    } finally {
      await drop();
    }
  });

  test('pingDatabase is true for a live pool and false for an unreachable one', async () => {
    const { pool } = await freshDatabase();
    assert.equal(await pingDatabase(pool), true);
    const dead = new pg.Pool({
      connectionString: 'postgres://postgres@127.0.0.1:1/none',
      connectionTimeoutMillis: 500,
    });
    dead.on('error', () => undefined);
    try {
      assert.equal(await pingDatabase(dead, 1000), false);
    } finally {
      await dead.end();
    }
  });

  test('int8 values are numbers when safe, strings beyond 2^53', async () => {
    const { pool } = await freshDatabase();
    const r = await pool.query('select 42::int8 as small, 9007199254740993::int8 as big');
    assert.equal(r.rows[0].small, 42);
    assert.equal(r.rows[0].big, '9007199254740993');
  });
});
