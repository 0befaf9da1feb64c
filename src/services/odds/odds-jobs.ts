import { Type } from '@sinclair/typebox';
import { defineTask } from '../../platform/jobs.ts';
import type { AppLogger } from '../../platform/logger.ts';
import type { FeedSimulator } from './feed-simulator.ts';
import type { UpstreamSync } from './upstream.ts';

/** What the odds jobs need, built in the service's `setup` (each feed only when it is on). */
export interface OddsJobDeps {
  simulator: FeedSimulator | undefined;
  upstream: UpstreamSync | undefined;
  logger: AppLogger;
}

/** Every minute when the simulator is on (cron): one simulator step ({@link FeedSimulator.tick}). */
export const simulatorTickTask = defineTask(
  'odds:simulator-tick',
  Type.Object({}),
  async (_payload, { simulator }: OddsJobDeps) => {
    if (simulator) await simulator.tick();
  },
);

/** Every minute when an upstream is configured (cron): one upstream sync ({@link UpstreamSync.sync}). */
export const upstreamSyncTask = defineTask(
  'odds:upstream-sync',
  Type.Object({}),
  async (_payload, { upstream, logger }: OddsJobDeps) => {
    if (!upstream) return;
    const result = await upstream.sync();
    if (result.changes > 0) logger.info(result, 'upstream sync');
  },
);
