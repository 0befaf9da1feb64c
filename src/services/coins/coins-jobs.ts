import { Type } from '@sinclair/typebox';
import { defineTask } from '../../platform/jobs.ts';
import type { AppLogger } from '../../platform/logger.ts';
import type { UpstreamMirror } from './upstream.ts';

/** What the coin jobs need, built in the service's `setup` (`mirror` only when an upstream is configured). */
export interface CoinJobDeps {
  mirror: UpstreamMirror | undefined;
  logger: AppLogger;
}

/**
 * One upstream mirror run ({@link UpstreamMirror.run}): every 15 minutes (cron, when an upstream is configured) and
 * on `POST /_ops/upstream/sync`. Nothing to do without an upstream.
 */
export const mirrorUpstreamTask = defineTask(
  'coins:mirror-upstream',
  Type.Object({}),
  async (_payload, { mirror, logger }: CoinJobDeps) => {
    if (!mirror) return;
    const run = await mirror.run();
    if (run.status === 'failed') logger.warn({ run }, 'upstream mirror failed');
    else logger.info({ run }, 'upstream mirror done');
  },
);
