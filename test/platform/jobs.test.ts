import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { type Static, Type } from '@sinclair/typebox';
import { sql } from 'drizzle-orm';
import type pg from 'pg';
import { ManualClock } from '../../src/platform/clock.ts';
import { type Database, type Db, openDatabase } from '../../src/platform/database.ts';
import {
  defineTask,
  JobPayloadError,
  migrateJobs,
  runDueJobs,
  type Task,
  taskHandlers,
} from '../../src/platform/jobs.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { pruneIdempotencyTask } from '../../src/platform/runtime.ts';
import type { ServiceDefinition, ServiceModule } from '../../src/platform/service.ts';
import {
  createTestDatabase,
  startTestPlatform,
  type TestDatabase,
  type TestPlatform,
} from '../support/platform.ts';
import { waitUntil } from '../support/wait.ts';

const logger = createLogger('silent');

/** The jobs once one has a recorded failure (waits for the worker to write it). */
function failedJobs(pool: pg.Pool) {
  return waitUntil('the failure recorded on the job', async () => {
    const r = (await pool.query('select attempts, last_error from graphile_worker._private_jobs')).rows as {
      attempts: number;
      last_error: string | null;
    }[];
    return r[0]?.last_error ? r : undefined;
  });
}

// Graphile Worker may write a completion or a failure just after runOnce returns: the checks wait for it (bounded).

describe('platform: jobs (defineTask: typed, checked, transactional enqueue; runDueJobs)', () => {
  let database: TestDatabase;
  let db: Database;
  const runs: { task: string; payload: unknown }[] = [];
  const logLines: string[] = [];
  const capturingLogger = createLogger(
    'trace',
    new Writable({
      write(chunk, _encoding, done) {
        logLines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    }),
  );

  const RecordPayload = Type.Object({ n: Type.String(), at: Type.Optional(Type.Integer({ minimum: 0 })) });
  const record = defineTask('svc:record', RecordPayload, async (payload, deps: { runs: typeof runs }) => {
    // The handler's payload is the schema's static type.
    const typed: Static<typeof RecordPayload> = payload;
    deps.runs.push({ task: 'svc:record', payload: typed });
  });
  const failing = defineTask('svc:fail', Type.Object({}), async () => {
    throw new Error('boom');
  });
  const tasks = taskHandlers([record.with({ runs }), failing.with()]);

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

  test('a job enqueued in a transaction that rolls back never exists and never runs', async () => {
    runs.length = 0;
    await assert.rejects(
      db.db.transaction(async (tx) => {
        await record.enqueue(tx, { n: 'rolled-back' });
        throw new Error('rollback');
      }),
      /rollback/,
    );
    assert.equal(await pendingJobs(), 0);
    await runDueJobs(db.pool, tasks, logger);
    assert.deepEqual(runs, []);
  });

  test('a job enqueued in a committed transaction runs once via runDueJobs with its typed payload', async () => {
    runs.length = 0;
    await db.db.transaction(async (tx) => {
      await tx.execute(sql`select 1`);
      await record.enqueue(tx, { n: 'committed', at: 3 });
    });
    assert.equal(await pendingJobs(), 1);
    await runDueJobs(db.pool, tasks, logger);
    assert.deepEqual(runs, [{ task: 'svc:record', payload: { n: 'committed', at: 3 } }]);
    await waitUntil('the completed job to be removed', async () => (await pendingJobs()) === 0);
    await runDueJobs(db.pool, tasks, logger);
    assert.equal(runs.length, 1, 'it does not run twice');
  });

  test('enqueue with a payload that does not match the schema throws and writes nothing', async () => {
    await assert.rejects(
      // @ts-expect-error `n` must be a string: a wrong payload shape at a call site does not compile
      record.enqueue(db.db, { n: 5 }),
      (err: unknown) =>
        err instanceof JobPayloadError && err.task === 'svc:record' && /\/n/.test(err.issues.join(' ')),
    );
    // @ts-expect-error a missing required property does not compile either
    await assert.rejects(record.enqueue(db.db, {}), JobPayloadError);
    // Checked as the worker will read it: a negative `at` breaks the schema's minimum, a bigint is no JSON.
    await assert.rejects(record.enqueue(db.db, { n: 'x', at: -1 }), /svc:record.*\/at/);
    await assert.rejects(record.enqueue(db.db, { n: 'x', at: 1n as unknown as number }), JobPayloadError);
    // Inside a transaction the throw comes before the statement: the transaction's own writes are untouched.
    await db.db.transaction(async (tx) => {
      await assert.rejects(record.enqueue(tx, { n: 7 as unknown as string }), JobPayloadError);
      await record.enqueue(tx, { n: 'after-the-refusal' });
    });
    assert.equal(await pendingJobs(), 1, 'only the valid job was written');
    await db.pool.query('delete from graphile_worker._private_jobs');
  });

  test('a stored job whose payload no longer matches fails with a logged error; the handler never runs', async () => {
    runs.length = 0;
    logLines.length = 0;
    // As a job written before a deploy changed the schema: written under the task name, bypassing enqueue.
    await db.pool.query(`select graphile_worker.add_job('svc:record', '{"n": 42}'::json, max_attempts => 3)`);
    await runDueJobs(db.pool, tasks, capturingLogger);
    const rows = await failedJobs(db.pool);
    assert.deepEqual(runs, [], 'the handler did not run');
    assert.equal(rows.length, 1, 'the job is kept (retried with backoff, up to max_attempts)');
    assert.equal(rows[0]?.attempts, 1);
    assert.match(String(rows[0]?.last_error), /payload of job svc:record does not match its schema: \/n /);
    const logged = logLines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === 'job payload does not match its task schema: the handler was not run');
    assert.ok(logged, logLines.join('\n'));
    assert.equal(logged.level, 50, 'logged at error level');
    assert.equal(logged.task, 'svc:record');
    assert.match(String(logged.issues), /\/n /);
    await db.pool.query('delete from graphile_worker._private_jobs');
  });

  test('a job scheduled in the future is not due yet', async () => {
    runs.length = 0;
    await record.enqueue(db.db, { n: 'later' }, { runAt: new Date(Date.now() + 3_600_000) });
    await runDueJobs(db.pool, tasks, logger);
    assert.deepEqual(runs, []);
    assert.equal(await pendingJobs(), 1);
    await db.pool.query('delete from graphile_worker._private_jobs');
  });

  test('a second enqueue with the same jobKey replaces the pending job; the key is scoped to the task', async () => {
    runs.length = 0;
    await record.enqueue(db.db, { n: 'v1' }, { jobKey: 'dedupe-me' });
    await record.enqueue(db.db, { n: 'v2' }, { jobKey: 'dedupe-me' });
    assert.equal(await pendingJobs(), 1);
    const { rows } = await db.pool.query('select key from graphile_worker._private_jobs');
    assert.deepEqual(rows, [{ key: 'svc:record:dedupe-me' }]);
    // Another task's job with the same key is another job (Graphile Worker's keys are global: the prefix keeps them
    // apart).
    await failing.enqueue(db.db, {}, { jobKey: 'dedupe-me', runAt: new Date(Date.now() + 3_600_000) });
    assert.equal(await pendingJobs(), 2);
    await runDueJobs(db.pool, tasks, logger);
    assert.deepEqual(runs, [{ task: 'svc:record', payload: { n: 'v2' } }]);
    await db.pool.query('delete from graphile_worker._private_jobs');
  });

  test('a failing job is kept for retry with its error recorded', async () => {
    await failing.enqueue(db.db, {}, { maxAttempts: 3 });
    await runDueJobs(db.pool, tasks, logger);
    const rows = await failedJobs(db.pool);
    assert.equal(rows.length, 1, 'the failed job is kept for a retry');
    assert.equal(rows[0]?.attempts, 1);
    assert.match(String(rows[0]?.last_error), /boom/);
    await db.pool.query('delete from graphile_worker._private_jobs');
  });

  test('taskHandlers refuses a task name registered twice', () => {
    const again = defineTask('svc:record', Type.Object({}), async () => undefined);
    assert.throws(
      () => taskHandlers([record.with({ runs }), again.with()]),
      /svc:record is registered twice/,
    );
  });
});

describe('platform: jobs in a booted platform (task names are <service>:<task>)', () => {
  let platform: TestPlatform;
  let tmp: string;
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const seen: unknown[] = [];

  const PingPayload = Type.Object({
    chain: Type.Optional(Type.Boolean()),
    chained: Type.Optional(Type.Boolean()),
  });
  // A handler gets what the service built in `setup` as its dependencies, for example to enqueue a follow-up job.
  const pingTask: Task<typeof PingPayload, { db: Db }> = defineTask(
    'jobsvc:ping',
    PingPayload,
    async (payload, deps: { db: Db }) => {
      seen.push(payload);
      if (payload.chain) await pingTask.enqueue(deps.db, { chained: true });
    },
  );

  function serviceWith(
    tmpDir: string,
    module: (db: Db) => ServiceModule,
    name = 'jobsvc',
  ): ServiceDefinition {
    return {
      name,
      envPrefix: name.toUpperCase(),
      title: 'jobs test',
      description: 'jobs test',
      version: '0.0.1',
      defaultPort: 4999,
      migrations: { schema: name, folder: tmpDir },
      formatError: (error) => ({ body: { code: error.code } }),
      setup: (ctx) => module(ctx.db),
    };
  }

  before(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'platform-jobs-test-'));
    await fs.mkdir(path.join(tmp, 'meta'));
    await fs.writeFile(
      path.join(tmp, 'meta', '_journal.json'),
      JSON.stringify({ version: '7', dialect: 'postgresql', entries: [] }),
    );
    platform = await startTestPlatform({
      services: [serviceWith(tmp, (db) => ({ tasks: [pingTask.with({ db })] }))],
      clock,
    });
  });
  after(async () => {
    await platform?.close();
    await fs.rm(tmp, { recursive: true, force: true });
  });

  test('service tasks are registered under their <service>:<task> names, next to the platform tasks', () => {
    const names = Object.keys(platform.booted.tasks).sort();
    assert.deepEqual(names, ['jobsvc:ping', 'platform:prune-idempotency']);
  });

  test('a job enqueued through the task object runs the service handler via runDueJobs', async () => {
    seen.length = 0;
    const { db } = platform.booted.database;
    await db.transaction(async (tx) => {
      await pingTask.enqueue(tx, { chain: true });
    });
    await platform.runDueJobs();
    assert.deepEqual(seen, [{ chain: true }, { chained: true }]);
  });

  test('a job under the bare task name does not reach the service handler', async () => {
    seen.length = 0;
    const { pool } = platform.booted.database;
    await pool.query(`select graphile_worker.add_job('ping', '{"chain": false}'::json)`);
    await platform.runDueJobs();
    assert.deepEqual(seen, []);
    await pool.query('delete from graphile_worker._private_jobs');
  });

  test('boot refuses a task outside the service namespace, a name registered twice, and a bad schedule', async () => {
    const other = defineTask('othersvc:ping', PingPayload, async () => undefined);
    const strict = defineTask(
      'jobsvc:strict',
      Type.Object({ n: Type.Integer() }, { additionalProperties: false }),
      async () => undefined,
    );
    const cases: [ServiceDefinition, RegExp][] = [
      [
        serviceWith(tmp, () => ({ tasks: [other.with()] })),
        /task othersvc:ping of service jobsvc is not named jobsvc:<task>/,
      ],
      [
        serviceWith(tmp, (db) => ({ tasks: [pingTask.with({ db }), pingTask.with({ db })] })),
        /jobsvc:ping is registered twice/,
      ],
      [
        serviceWith(tmp, () => ({ cron: [{ task: pingTask, pattern: '* * * * *' }] })),
        /schedules jobsvc:ping, which the service does not register/,
      ],
      [
        serviceWith(tmp, () => ({
          tasks: [strict.with()],
          cron: [{ task: strict, pattern: '* * * * *', payload: { n: 1 } }],
        })),
        // Graphile Worker adds `_cron` to each scheduled run's payload: a schema that forbids it would fail every run.
        /cron payload of jobsvc:strict does not match its schema/,
      ],
    ];
    for (const [service, reason] of cases)
      await assert.rejects(startTestPlatform({ services: [service], clock }), reason);
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
    await pruneIdempotencyTask.enqueue(db, {});
    await platform.runDueJobs();
    assert.equal(await count(), 1, 'not yet expired');
    clock.advance(60_000);
    await pruneIdempotencyTask.enqueue(db, {});
    await platform.runDueJobs();
    assert.equal(await count(), 0);
  });
});
