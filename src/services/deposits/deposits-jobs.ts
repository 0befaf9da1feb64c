import { Type } from '@sinclair/typebox';
import { defineTask } from '../../platform/jobs.ts';
import type { AppLogger } from '../../platform/logger.ts';
import type { DepositService } from './deposit-service.ts';

/** What the deposit jobs need, built in the service's `setup`. */
export interface DepositJobDeps {
  deposits: DepositService;
  logger: AppLogger;
}

/** The payload of the per-vault jobs: the quote's row id. */
const QuoteJob = Type.Object({ quoteId: Type.Integer({ minimum: 1 }) });

/** Makes the destination deposit of a FUNDING_DETECTED vault ({@link DepositService.publish}). */
export const publishTask = defineTask(
  'deposits:publish',
  QuoteJob,
  async ({ quoteId }, deps: DepositJobDeps) => deps.deposits.publish(quoteId),
);

/** Returns what a closed vault holds beyond what it owes to its refund address ({@link DepositService.settleRefund}). */
export const settleRefundTask = defineTask(
  'deposits:settle-refund',
  QuoteJob,
  async ({ quoteId }, deps: DepositJobDeps) => deps.deposits.settleRefund(quoteId),
);

/** Every minute (cron): expires every PENDING vault past its deadline ({@link DepositService.expireDue}). */
export const expireDueTask = defineTask(
  'deposits:expire-due',
  Type.Object({}),
  async (_payload, deps: DepositJobDeps) => {
    const n = await deps.deposits.expireDue();
    if (n > 0) deps.logger.info({ expired: n }, 'deposit addresses expired');
  },
);
