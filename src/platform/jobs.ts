import type { Static, TObject } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { type SQL, sql } from 'drizzle-orm';
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
// The platform's string formats (`date`, `date-time`) for payload schemas that use them.
import './schemas.ts';

/**
 * Background jobs on Graphile Worker, a PostgreSQL-native queue (docs/architecture.md, "Jobs").
 *
 * A job type is a {@link Task} made once, at module level, by {@link defineTask}: its full name
 * `<service>:<task>` (for example `coins:mirror-upstream`), the TypeBox schema of its payload and its handler.
 * Call sites enqueue through the task object ({@link Task.enqueue}, inside the caller's transaction: the job commits
 * or rolls back with the caller's state change), so no job name is written at a call site and a payload of the
 * wrong shape is a compile error. A service registers its tasks with their dependencies ({@link Task.with}) in its
 * module's `tasks`, and schedules them in `cron` by task object; the runtime refuses a task outside the service's
 * namespace and a name registered twice. Cron items run in the worker role; Graphile Worker's `known_crontabs` keeps
 * one run per tick across workers.
 */
/** A handler as Graphile Worker calls it: the stored payload (parsed JSON) and the job's helpers. */
export type JobHandler = (payload: unknown, helpers: JobHelpers) => Promise<void>;

/** A full task name: `<service>:<task>` (`deposits:publish`); `platform:` for the platform's own tasks. */
export type TaskName = `${string}:${string}`;

/** Options of one job (Graphile Worker's `add_job`). */
export interface AddJobOptions {
  /** When the job may run (default: now, in database time). */
  runAt?: Date;
  /**
   * De-duplication key within the task: stored as `<task name>:<jobKey>` (Graphile Worker's keys are global across
   * tasks, and a key reused by another task would replace that task's job). A second enqueue with the same key
   * replaces the pending job (`jobKeyMode` default `replace`).
   */
  jobKey?: string;
  jobKeyMode?: 'replace' | 'preserve_run_at' | 'unsafe_dedupe';
  /** Jobs of one queue run one at a time, in order. */
  queueName?: string;
  /** Attempts before the job is left failed (default 25, with exponential backoff). */
  maxAttempts?: number;
  priority?: number;
}

/**
 * A payload that does not match its task's schema. Thrown by {@link Task.enqueue} before anything is written (a
 * programming error), and by the worker for a stored job whose payload no longer matches (the job fails, is
 * retried with Graphile Worker's backoff, and keeps this message as its `last_error`; the handler never runs).
 */
export class JobPayloadError extends Error {
  constructor(
    /** The full task name. */
    readonly task: string,
    /** Each problem as `<JSON pointer> <message>` (`/quoteId Expected integer`). */
    readonly issues: readonly string[],
  ) {
    super(`payload of job ${task} does not match its schema: ${issues.join('; ')}`);
    this.name = 'JobPayloadError';
  }
}

/** What every task has, whatever its payload and dependencies: the part the runtime and cron need. */
export interface TaskInfo {
  readonly name: TaskName;
  readonly schema: TObject;
  /** The problems of `payload` against {@link schema}, as `<JSON pointer> <message>`; empty when it matches. */
  issues(payload: unknown): string[];
}

/** A task bound to its dependencies, ready for the runner (a service module's `tasks`). */
export interface TaskBinding {
  readonly task: TaskInfo;
  /**
   * Checks `payload` against the task's schema, then runs the handler with the bound dependencies.
   * @throws JobPayloadError when the payload does not match (logged on the job's logger; the handler does not run).
   */
  run: JobHandler;
}

/** A job type: its name, payload schema and handler (made by {@link defineTask}). */
export interface Task<S extends TObject, D = void> extends TaskInfo {
  readonly schema: S;
  /**
   * Adds a job of this task with `executor` (inside its transaction, or on its own with the pool-level handle):
   * Graphile Worker's `add_job`. The payload is checked as the worker will read it (after a JSON round trip).
   * @throws JobPayloadError when `payload` does not match the schema (nothing is written).
   */
  enqueue(executor: Executor, payload: Static<S>, options?: AddJobOptions): Promise<void>;
  /**
   * The `graphile_worker.add_job(...)` call of {@link enqueue} as an SQL expression, for a statement that adds the
   * job together with the row it is about (`with inserted as (insert ...) select <this> from inserted`): one round
   * trip instead of two. The payload is checked the same way.
   * @throws JobPayloadError when `payload` does not match the schema.
   */
  addJobCall(payload: Static<S>, options?: AddJobOptions): SQL;
  /** This task with the dependencies its handler needs (objects the service builds in `setup`). */
  with(deps: D): TaskBinding;
}

/** A recurring job: `pattern` is a five-field crontab pattern in UTC; `task` one of the module's tasks. */
export interface CronDefinition {
  task: TaskInfo;
  pattern: string;
  /** Unique name of this schedule (default: the task name; a service's own identifier is prefixed `<service>:`). */
  identifier?: string;
  /** The payload of each run (checked against the task's schema at boot); Graphile Worker adds `_cron`. */
  payload?: Record<string, unknown>;
}

const MAX_ISSUES = 5;

function payloadIssues(schema: TObject, payload: unknown): string[] {
  if (Value.Check(schema, payload)) return [];
  const issues: string[] = [];
  for (const error of Value.Errors(schema, payload)) {
    issues.push(`${error.path || '/'} ${error.message}`);
    if (issues.length === MAX_ISSUES) break;
  }
  return issues;
}

/**
 * Defines a job type.
 *
 * @param name the full name `<service>:<task>`, written here only: call sites use the returned object.
 * @param payloadSchema TypeBox object schema of the payload, as JSON (a `Date` or a `bigint` is not a payload
 *   value: send ISO strings or decimal strings). A scheduled task's schema must allow the `_cron` property
 *   Graphile Worker adds (TypeBox objects allow extra properties unless told otherwise).
 * @param handler runs one job: the payload (checked against the schema), the dependencies given to
 *   {@link Task.with}, and Graphile Worker's helpers. Throwing fails the job; Graphile Worker retries it with
 *   exponential backoff until `maxAttempts`.
 * @returns the task: `enqueue(executor, payload, options?)` and `with(deps)` for the service module's `tasks`.
 */
export function defineTask<S extends TObject, D = void>(
  name: TaskName,
  payloadSchema: S,
  handler: (payload: Static<S>, deps: D, helpers: JobHelpers) => Promise<void>,
): Task<S, D> {
  const task: Task<S, D> = {
    name,
    schema: payloadSchema,
    issues: (payload) => payloadIssues(payloadSchema, payload),
    addJobCall(payload, options = {}) {
      let json: string;
      try {
        json = JSON.stringify(payload);
      } catch (err) {
        throw new JobPayloadError(name, [`/ ${(err as Error).message}`]);
      }
      const issues = payloadIssues(payloadSchema, json === undefined ? undefined : JSON.parse(json));
      if (issues.length > 0) throw new JobPayloadError(name, issues);
      return sql`graphile_worker.add_job(
        identifier => ${name},
        payload => ${json}::json,
        queue_name => ${options.queueName ?? null},
        run_at => ${options.runAt ? options.runAt.toISOString() : null}::timestamptz,
        max_attempts => ${options.maxAttempts ?? null}::int,
        job_key => ${options.jobKey === undefined ? null : `${name}:${options.jobKey}`},
        priority => ${options.priority ?? null}::int,
        job_key_mode => ${options.jobKeyMode ?? 'replace'}
      )`;
    },
    async enqueue(executor, payload, options = {}) {
      await executor.execute(sql`select ${task.addJobCall(payload, options)}`);
    },
    with(deps) {
      return {
        task,
        async run(payload, helpers) {
          const issues = payloadIssues(payloadSchema, payload);
          if (issues.length > 0) {
            helpers.logger.error('job payload does not match its task schema: the handler was not run', {
              task: name,
              issues,
            });
            throw new JobPayloadError(name, issues);
          }
          await handler(payload as Static<S>, deps, helpers);
        },
      };
    },
  };
  return task;
}

/**
 * The handlers of `bindings` by full task name, as Graphile Worker's task list.
 * @throws Error naming the task when two bindings have the same name.
 */
export function taskHandlers(bindings: readonly TaskBinding[]): Record<string, JobHandler> {
  const handlers: Record<string, JobHandler> = {};
  for (const binding of bindings) {
    if (Object.hasOwn(handlers, binding.task.name))
      throw new Error(`job task ${binding.task.name} is registered twice`);
    handlers[binding.task.name] = binding.run;
  }
  return handlers;
}

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
 * Graphile Worker's batching (https://worker.graphile.org/docs/performance#batching), in part: the completions and
 * failures of one event-loop turn are written in one query each. Its local queue (fetching `concurrency + 1` jobs in
 * one query) stays off in 0.17.3, for two upstream faults: a graceful stop that finds jobs waiting in the local queue
 * throws while returning them ("Cannot background something when the queue is already released"), so they stay locked
 * for 4 hours and the stop logs errors (reproduced by `entity-events/test/worker-ctrl-c.test.ts`); and jobs of one
 * named queue run concurrently instead of in series (graphile/worker#621). Cost, measured with `npm run bench --
 * entity-events`: saturation 589 deliveries/s instead of 771 in the same run conditions; paced 500/s unchanged.
 * A worker killed outright leaves its running jobs locked (Graphile Worker frees them after 4 hours); services that
 * must not wait that long sweep their own state (entity-events).
 */
const JOB_BATCHING = {
  completeJobBatchDelay: 0,
  failJobBatchDelay: 0,
};

/**
 * Starts a worker that runs `tasks` (by full name, {@link taskHandlers}) and `cron` until `stop()`. Each cron item's
 * identifier is taken as given (default: the task name).
 */
export async function startWorker(options: {
  pool: pg.Pool;
  tasks: Record<string, JobHandler>;
  cron: readonly CronDefinition[];
  concurrency: number;
  logger: AppLogger;
}): Promise<{ stop(): Promise<void> }> {
  const cronItems: CronItem[] = options.cron.map((c) => ({
    task: c.task.name,
    match: c.pattern,
    identifier: c.identifier ?? c.task.name,
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
    preset: { worker: JOB_BATCHING },
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
