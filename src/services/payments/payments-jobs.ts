import { Type } from '@sinclair/typebox';
import { defineTask } from '../../platform/jobs.ts';
import type { AppLogger } from '../../platform/logger.ts';
import type { PaymentService } from './payments-service.ts';

/** What the payment jobs need, built in the service's `setup`. */
export interface PaymentJobDeps {
  payments: PaymentService;
  logger: AppLogger;
}

/**
 * Settles a pending card payment with the network's final answer ({@link PaymentService.settleCardPayment}).
 * Payload: the card payment id only (never card data).
 */
export const settleCardPaymentTask = defineTask(
  'payments:settle-card-payment',
  Type.Object({ cardPaymentId: Type.String({ pattern: '^cpy_[0-9a-f]{32}$' }) }),
  async ({ cardPaymentId }, deps: PaymentJobDeps) => deps.payments.settleCardPayment(cardPaymentId),
);

/** Every minute (cron): expires every open intent past `expiresAt` ({@link PaymentService.expireDue}). */
export const expireIntentsTask = defineTask(
  'payments:expire-intents',
  Type.Object({}),
  async (_payload, deps: PaymentJobDeps) => {
    const n = await deps.payments.expireDue();
    if (n > 0) deps.logger.info({ expired: n }, 'payment intents expired');
  },
);
