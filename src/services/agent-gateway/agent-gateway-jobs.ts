/**
 * The gateway's background jobs (Graphile Worker): one job per agent step, one to resume a waiting step, and the
 * minute sweep (lost claims, due timers, due automations).
 */
import { Type } from '@sinclair/typebox';
import { defineTask } from '../../platform/jobs.ts';
import type { AppLogger } from '../../platform/logger.ts';
import type { RunEngine } from './run-engine.ts';

/** What the jobs need, built in the service's `setup`. */
export interface GatewayJobDeps {
  engine: RunEngine;
  /** The minute's other work (due automations), run after the engine's sweep. */
  tick: () => Promise<Record<string, number>>;
  logger: AppLogger;
}

const StepId = Type.String({ pattern: '^stp_[0-9a-f]{32}$' });

/** Claims and executes one pending agent step (job key: the step id). */
export const runStepTask = defineTask(
  'agent-gateway:run-step',
  Type.Object({ stepId: StepId }),
  async ({ stepId }, deps: GatewayJobDeps) => deps.engine.runStep(stepId),
);

/** Looks again at a waiting step whose timer, sub-run or remote execution may be done. */
export const resumeStepTask = defineTask(
  'agent-gateway:resume-step',
  Type.Object({ stepId: StepId }),
  async ({ stepId }, deps: GatewayJobDeps) => deps.engine.resumeStep(stepId),
);

/**
 * Every minute (cron): re-queues steps whose worker was lost, fires due timers and due automations, by the
 * injected clock.
 */
export const sweepTask = defineTask(
  'agent-gateway:sweep',
  Type.Object({}),
  async (_payload, deps: GatewayJobDeps) => {
    const counts = await deps.tick();
    if (Object.values(counts).some((n) => n > 0)) deps.logger.info(counts, 'agent-gateway sweep');
  },
);
