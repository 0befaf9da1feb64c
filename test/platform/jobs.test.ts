import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { ManualClock } from '../../src/platform/clock.ts';
import { type Database, openDatabase } from '../../src/platform/database.ts';
import { type JobHandler, jobQueue, migrateJobs, runDueJobs } from '../../src/platform/jobs.ts';
import { createLogger } from '../../src/platform/logger.ts';
import type { ServiceDefinition } from '../../src/platform/service.ts';
import {
  createTestDatabase,
  startTestPlatform,
  type TestDatabase,
  type TestPlatform,
} from '../../src/platform/testing.ts';

const logger = createLogger('silent');

describe('platform: jobs (transactional enqueue, runDueJobs)', () => {
  let database: TestDatabase;
  let db: Database;
  const runs: { task: string; payload: unknown }[] = [];
  const tasks: Record<string, JobHandler> = {
    'svc:record': async (payload) => {
      runs.push({ task: 'svc:record', payload });
    },
  };

  before(async () => {
    database = await createTestDatabase();
    db = openDatabase(database.url);
    await migrateJobs(db.pool, logger);
  });
  after(async () => {
    await db?.close();
    await database?.drop();
  });

  async function pendingJobs(): Promise<number> {
    const r = await db.pool.query('select count(*)::int as n from graphile_worker.jobs');
    return r.rows[0].n as number;
  }

  test('a job added in a transaction that rolls back never exists and never runs', async () => {
    runs.length = 0;
    await assert.rejects(
      db.db.transaction(async (tx) => {
        await jobQueue.add(tx, 'svc:record', { n: 'rolled-back' });
        throw new Error('rollback');
      }),
      /rollback/,
    );
    assert.equal(await pendingJobs(), 0);
    await runDueJobs(db.pool, tasks, logger);
    assert.deepEqual(runs, []);
  });

  test('a job added in a committed transaction runs once via runDueJobs with its payload', async () => {
    runs.length = 0;
    await db.db.transaction(async (tx) => {
      await tx.execute(sql`select 1`);
      await jobQueue.add(tx, 'svc:record', { n: 'committed' });
    });
    assert.equal(await pendingJobs(), 1);
    await runDueJobs(db.pool, tasks, logger);
    assert.deepEqual(runs, [{ task: 'svc:record', payload: { n: 'committed' } }]);
    // The completion may be written just after runOnce resolves: poll briefly.
    const deadline = Date.now() + 5000;
    while ((await pendingJobs()) !== 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal(await pendingJobs(), 0, 'a completed job is removed');
    await runDueJobs(db.pool, tasks, logger);
    assert.equal(runs.length, 1, 'it does not run twice');
  });

  test('a job scheduled in the future is not due yet', async () => {
    runs.length = 0;
    await jobQueue.add(db.db, 'svc:record', { n: 'later' }, { runAt: new Date(Date.now() + 3_600_000) });
    await runDueJobs(db.pool, tasks, logger);
    assert.deepEqual(runs, []);
    assert.equal(await pendingJobs(), 1);
    await db.pool.query('delete from graphile_worker._private_jobs');
  });

  test('a second add with the same jobKey replaces the pending job', async () => {
    runs.length = 0;
    await jobQueue.add(db.db, 'svc:record', { v: 1 }, { jobKey: 'dedupe-me' });
    await jobQueue.add(db.db, 'svc:record', { v: 2 }, { jobKey: 'dedupe-me' });
    assert.equal(await pendingJobs(), 1);
    await runDueJobs(db.pool, tasks, logger);
    assert.deepEqual(runs, [{ task: 'svc:record', payload: { v: 2 } }]);
  });

  test('a failing job is kept for retry with its error recorded', async () => {
    await jobQueue.add(db.db, 'svc:fail', {}, { maxAttempts: 3 });
    await runDueJobs(
      db.pool,
      {
        'svc:fail': async () => {
          throw new Error('boom');
        },
      },
      logger,
    );
    // Graphile Worker may record the failure just after runOnce resolves: poll briefly for it.
    let rows: { attempts: number; last_error: string | null }[] = [];
    const deadline = Date.now() + 5000;
    do {
      rows = (await db.pool.query('select attempts, last_error from graphile_worker._private_jobs')).rows;
      if (rows[0]?.last_error) break;
      await new Promise((r) => setTimeout(r, 20));
    } while (Date.now() < deadline);
    assert.equal(rows.length, 1, 'the failed job is kept for a retry');
    assert.equal(rows[0]?.attempts, 1);
    assert.match(String(rows[0]?.last_error), /boom/);
    await db.pool.query('delete from graphile_worker._private_jobs');
  });
});

describe('platform: jobs in a booted platform (task names are <service>:<task>)', () => {
  let platform: TestPlatform;
  let tmp: string;
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const seen: unknown[] = [];

  before(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'platform-jobs-test-'));
    await fs.mkdir(path.join(tmp, 'meta'));
    await fs.writeFile(
      path.join(tmp, 'meta', '_journal.json'),
      JSON.stringify({ version: '7', dialect: 'postgresql', entries: [] }),
    );
    const service: ServiceDefinition = {
      name: 'jobsvc',
      envPrefix: 'JOBSVC',
      title: 'jobs test',
      description: 'jobs test',
      version: '0.0.1',
      defaultPort: 4999,
      migrations: { schema: 'jobsvc', folder: tmp },
      formatError: (error) => ({ body: { code: error.code } }),
      setup: (ctx) => ({
        tasks: {
          ping: async (payload) => {
            seen.push(payload);
            // A handler can use the service's context, for example to enqueue a follow-up job.
            if ((payload as { chain?: boolean }).chain)
              await ctx.jobs.add(ctx.db, 'jobsvc:ping', { chained: true });
          },
        },
      }),
    };
    platform = await startTestPlatform({ services: [service], clock });
  });
  after(async () => {
    await platform?.close();
    await fs.rm(tmp, { recursive: true, force: true });
  });

  test('service tasks are registered under <service>:<task>, next to the platform tasks', () => {
    const names = Object.keys(platform.booted.tasks).sort();
    assert.deepEqual(names, ['jobsvc:ping', 'platform:prune-idempotency']);
  });

  test('a job named <service>:<task> runs the service handler via runDueJobs', async () => {
    seen.length = 0;
    const { db } = platform.booted.database;
    await db.transaction(async (tx) => {
      await platform.booted.services.get('jobsvc')!.ctx.jobs.add(tx, 'jobsvc:ping', { chain: true });
    });
    await platform.runDueJobs();
    assert.deepEqual(seen, [{ chain: true }, { chained: true }]);
  });

  test('a job under the bare task name does not reach the service handler', async () => {
    seen.length = 0;
    const { db, pool } = platform.booted.database;
    await jobQueue.add(db, 'ping', { bare: true });
    await platform.runDueJobs();
    assert.deepEqual(seen, []);
    await pool.query('delete from graphile_worker._private_jobs');
  });

  test('platform:prune-idempotency deletes expired idempotency records (clock-driven)', async () => {
    const { db, pool } = platform.booted.database;
    const store = platform.booted.services.get('jobsvc')!.ctx.idempotency;
    await store.run({ scope: 'jobs', key: 'k1', fingerprint: 'f', ttlMs: 60_000 }, async () => ({
      status: 200,
      body: {},
    }));
    const count = async () =>
      (await pool.query("select count(*)::int as n from platform.idempotency_keys where scope = 'jobs'"))
        .rows[0].n;
    await jobQueue.add(db, 'platform:prune-idempotency', {});
    await platform.runDueJobs();
    assert.equal(await count(), 1, 'not yet expired');
    clock.advance(60_000);
    await jobQueue.add(db, 'platform:prune-idempotency', {});
    await platform.runDueJobs();
    assert.equal(await count(), 0);
  });
});
