import { Type } from '@sinclair/typebox';
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

/** Every minute (cron): queues every due delivery and puts back lost claims ({@link DeliveryEngine.sweep}). */
export const sweepDueTask = defineTask(
  'entity-events:sweep-due',
  Type.Object({}),
  async (_payload, deps: EntityEventsJobDeps) => {
    const n = await deps.delivery.sweep();
    if (n > 0) deps.logger.info({ queued: n }, 'due deliveries queued');
  },
);
