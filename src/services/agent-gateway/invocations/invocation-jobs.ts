/**
 * The background jobs of invocations (Graphile Worker): the dispatch drain of submitted jobs (one job per shard, key
 * `shard:<n>`), one dispatch per other accepted invocation (job key `invocation:<id>`; a no-op once the invocation
 * moved on), a timeout job at the deadline of an invocation left
 * running (job key `timeout:<id>`), and the minute's invocation sweep (timeouts by the
 * injected clock, event retention, and a dispatch queued again for an invocation still `accepted` a minute after
 * acceptance: a worker that died mid-dispatch leaves its job locked until Graphile Worker's stale-lock recovery).
 */
import { Type } from '@sinclair/typebox';
import { defineTask } from '../../../platform/jobs.ts';
import type { AppLogger } from '../../../platform/logger.ts';
import type { InvocationService } from './invocations.ts';

/** What the jobs need. */
export interface InvocationJobDeps {
  invocations: InvocationService;
  logger: AppLogger;
}

/**
 * Shards of the dispatch drain: a submitted job lands in shard `(hashtext(id) & 2147483647) % DISPATCH_SHARDS`, and
 * each shard has one drain job at a time (job key `shard:<n>`), so at most this many drains run at once.
 */
export const DISPATCH_SHARDS = 4;

/**
 * The dispatch drain of one shard: dispatches its accepted jobs, oldest first
 * ({@link InvocationService.drainDispatches}). Queued by a job submission only when the shard's drain is not already
 * waiting (`agent_gateway.ensure_invocation_drain`, migration 0006), so most submissions write nothing to the job queue.
 */
export const drainDispatchesTask = defineTask(
  'agent-gateway:drain-dispatches',
  Type.Object({ shard: Type.Integer({ minimum: 0, maximum: DISPATCH_SHARDS - 1 }) }),
  async ({ shard }, deps: InvocationJobDeps) =>
    deps.invocations.drainDispatches(shard, (err, invocationId) =>
      deps.logger.warn(
        { err, invocationId },
        'agent-gateway: dispatch failed in the drain; queued on its own job',
      ),
    ),
);

/**
 * Starts the run of one accepted invocation: conversation turns, a job accepted on the slow path (`runKnown`), a
 * dispatch the drain could not finish, and the sweep's redispatch.
 */
export const dispatchInvocationTask = defineTask(
  'agent-gateway:dispatch-invocation',
  Type.Object({ invocationId: Type.String({ pattern: '^inv_[0-9a-f]{32}$' }) }),
  async ({ invocationId }, deps: InvocationJobDeps) => deps.invocations.dispatch(invocationId),
);

/**
 * At an invocation's deadline (queued by the dispatch of a job left running, and at a turn's acceptance): a live
 * invocation whose deadline passed on the injected clock ends `timed_out` and its run is cancelled; a no-op once it
 * ended.
 */
export const invocationTimeoutTask = defineTask(
  'agent-gateway:invocation-timeout',
  Type.Object({ invocationId: Type.String({ pattern: '^inv_[0-9a-f]{32}$' }) }),
  async ({ invocationId }, deps: InvocationJobDeps) => {
    await deps.invocations.timeOutIfDue(invocationId);
  },
);

/**
 * Every minute (cron): invocations past their timeout end `timed_out` (a backstop), runs left going by an ended
 * invocation are cancelled; old events are pruned.
 */
export const invocationSweepTask = defineTask(
  'agent-gateway:invocation-sweep',
  Type.Object({}),
  async (_payload, deps: InvocationJobDeps) => {
    const counts = await deps.invocations.sweep();
    if (counts.timedOut > 0 || counts.prunedEvents > 0 || counts.stoppedRuns > 0)
      deps.logger.info(counts, 'agent-gateway invocation sweep');
  },
);
