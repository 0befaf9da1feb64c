import { sql } from 'drizzle-orm';
import {
  type CronItem,
  type JobHelpers,
  Logger,
  parseCronItems,
  type Runner,
  run,
  runOnce,
  runMigrations as runWorkerMigrations,
  type TaskList,
} from 'graphile-worker';
import type pg from 'pg';
import type { Executor } from './database.ts';
import type { AppLogger } from './logger.ts';

/**
 * Background jobs on Graphile Worker (DESIGN.md: PostgreSQL-native queue).
 *
 * Task names are namespaced by service: `<service>:<task>` (for example `coins:mirror-upstream`). A job is added
 * through {@link JobQueue.add} with the caller's executor, so it commits or rolls back with the caller's state
 * change. Cron items run in the worker role; Graphile Worker's `known_crontabs` keeps one run per tick across workers.
 */
export type JobHandler = (payload: unknown, helpers: JobHelpers) => Promise<void>;

/** A recurring job: `pattern` is a five-field crontab pattern in UTC, `task` a full task name. */
export interface CronDefinition {
  task: string;
  pattern: string;
  /** Unique name of this schedule (default: the task name). */
  identifier?: string;
  payload?: Record<string, unknown>;
}

/** Options of one job (Graphile Worker's `add_job`). */
export interface AddJobOptions {
  /** When the job may run (default: now, in database time). */
  runAt?: Date;
  /** De-duplication key: a second add with the same key replaces the pending job (`jobKeyMode` default `replace`). */
  jobKey?: string;
  jobKeyMode?: 'replace' | 'preserve_run_at' | 'unsafe_dedupe';
  /** Jobs of one queue run one at a time, in order. */
  queueName?: string;
  /** Attempts before the job is left failed (default 25, with exponential backoff). */
  maxAttempts?: number;
  priority?: number;
}

export interface JobQueue {
  /** Adds a job inside `executor`'s transaction (or on its own when `executor` is the pool-level handle). */
  add(
    executor: Executor,
    task: string,
    payload: Record<string, unknown>,
    options?: AddJobOptions,
  ): Promise<void>;
}

export const jobQueue: JobQueue = {
  async add(executor, task, payload, options = {}) {
    await executor.execute(sql`select graphile_worker.add_job(
      identifier => ${task},
      payload => ${JSON.stringify(payload)}::json,
      queue_name => ${options.queueName ?? null},
      run_at => ${options.runAt ? options.runAt.toISOString() : null}::timestamptz,
      max_attempts => ${options.maxAttempts ?? null}::int,
      job_key => ${options.jobKey ?? null},
      priority => ${options.priority ?? null}::int,
      job_key_mode => ${options.jobKeyMode ?? 'replace'}
    )`);
  },
};

function graphileLogger(logger: AppLogger): Logger {
  return new Logger((scope) => (level, message, meta) => {
    const fields = { component: 'worker', ...scope, ...(meta ?? {}) };
    if (level === 'error') logger.error(fields, message);
    else if (level === 'warning') logger.warn(fields, message);
    else if (level === 'info') logger.info(fields, message);
    else logger.debug(fields, message);
  });
}

/** Installs or upgrades Graphile Worker's own schema (`graphile_worker`). */
export async function migrateJobs(pool: pg.Pool, logger: AppLogger): Promise<void> {
  await runWorkerMigrations({ pgPool: pool, logger: graphileLogger(logger) });
}

/**
 * Graphile Worker's batching (https://worker.graphile.org/docs/performance#batching): the pool fetches and locks up to
 * `concurrency + 1` due jobs in one query and hands them to its workers without a round trip each (a job locked in a
 * local queue goes back to the database after 60 s unworked or when the worker stops), and the completions and
 * failures of one event-loop turn are written in one query each. A worker killed outright leaves its jobs locked
 * exactly as one without batching does (Graphile Worker frees them after 4 hours); services that must not wait that
 * long sweep their own state (entity-events).
 */
const JOB_BATCHING = (concurrency: number) => ({
  localQueue: { size: concurrency + 1, ttl: 60_000 },
  completeJobBatchDelay: 0,
  failJobBatchDelay: 0,
});

/** Starts a worker that runs `tasks` and `cron` until `stop()`. */
export async function startWorker(options: {
  pool: pg.Pool;
  tasks: Record<string, JobHandler>;
  cron: readonly CronDefinition[];
  concurrency: number;
  logger: AppLogger;
}): Promise<{ stop(): Promise<void> }> {
  const cronItems: CronItem[] = options.cron.map((c) => ({
    task: c.task,
    match: c.pattern,
    identifier: c.identifier ?? c.task,
    payload: c.payload ?? {},
    options: { backfillPeriod: 0 },
  }));
  const runner: Runner = await run({
    pgPool: options.pool,
    taskList: options.tasks as TaskList,
    parsedCronItems: parseCronItems(cronItems),
    concurrency: options.concurrency,
    noHandleSignals: true,
    pollInterval: 2000,
    logger: graphileLogger(options.logger),
    preset: { worker: JOB_BATCHING(options.concurrency) },
  });
  return {
    stop: async () => {
      await runner.stop();
    },
  };
}

/** Runs every job that is due now, then returns (tests and one-shot tools). */
export async function runDueJobs(
  pool: pg.Pool,
  tasks: Record<string, JobHandler>,
  logger: AppLogger,
): Promise<void> {
  await runOnce({ pgPool: pool, taskList: tasks as TaskList, logger: graphileLogger(logger) });
}
