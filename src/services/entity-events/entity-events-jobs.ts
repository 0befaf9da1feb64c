import { Type } from '@sinclair/typebox';
import { type SQL, sql } from 'drizzle-orm';
import { defineTask } from '../../platform/jobs.ts';
import type { AppLogger } from '../../platform/logger.ts';
import type { DeliveryEngine } from './delivery.ts';

/** What the entity-events jobs need, built in the service's `setup`. */
export interface EntityEventsJobDeps {
  delivery: DeliveryEngine;
  logger: AppLogger;
}

/**
 * One attempt of one delivery row ({@link DeliveryEngine.deliver}). Job key: the delivery id (one job per delivery;
 * the sweeper re-queuing it replaces the job). Also added in bulk by `fanOut` (events.ts) in SQL, under this task's
 * name and key scheme.
 */
export const deliverTask = defineTask(
  'entity-events:deliver',
  Type.Object({ deliveryId: Type.String({ pattern: '^dl_[0-9a-f]{32}$' }) }),
  async ({ deliveryId }, deps: EntityEventsJobDeps) => deps.delivery.deliver(deliveryId),
);

/**
 * SQL: a `select` adding one {@link deliverTask} job per row of `rows` (a CTE or table with an `id` column of delivery
 * ids) with Graphile Worker's `add_jobs`, under the task's name, key scheme (`entity-events:deliver:<delivery id>`) and
 * payload `{deliveryId}`, due now; its one column `n` counts the jobs. Built in SQL so a statement that creates
 * deliveries adds their jobs in the same round trip; the payloads are checked by the worker only.
 */
export function addDeliverJobs(rows: SQL): SQL {
  return sql`select count(*)::int as n from graphile_worker.add_jobs(
      array(select row(${deliverTask.name}, json_build_object('deliveryId', r.id), null, null, 5,
                       ${`${deliverTask.name}:`} || r.id, null, null)::graphile_worker.job_spec from ${rows} r))`;
}

/** Every minute (cron): queues every due delivery and puts back lost claims ({@link DeliveryEngine.sweep}). */
export const sweepDueTask = defineTask(
  'entity-events:sweep-due',
  Type.Object({}),
  async (_payload, deps: EntityEventsJobDeps) => {
    const n = await deps.delivery.sweep();
    if (n > 0) deps.logger.info({ queued: n }, 'due deliveries queued');
  },
);
