import path from 'node:path';
import type { ServiceDefinition } from '../../platform/service.ts';
import { CardFingerprinter } from './card-fingerprint.ts';
import { SimulatedCardNetwork } from './card-network.ts';
import { registerCheckoutRoutes } from './checkout-routes.ts';
import { IdempotentRunner } from './idempotent-runner.ts';
import { registerOpsRoutes } from './ops-routes.ts';
import { PartyService } from './parties.ts';
import { readPaymentsConfig } from './payments-config.ts';
import { formatPaymentsError } from './payments-errors.ts';
import { registerPaymentsRoutes } from './payments-routes.ts';
import { PaymentService } from './payments-service.ts';

function cardPaymentId(payload: unknown): string {
  const id = (payload as { cardPaymentId?: unknown } | null)?.cardPaymentId;
  if (typeof id !== 'string') throw new Error('job payload needs a cardPaymentId');
  return id;
}

/**
 * The card-payments and compliance service (spec 001 section A; anchor: an agent-payments API, peer Stripe
 * PaymentIntents): parties with API and agent keys, compliance status, per-transaction limits, payment intents with
 * tax, a hosted checkout page, a simulated card network and voice sessions.
 */
export const paymentsService: ServiceDefinition = {
  name: 'payments',
  envPrefix: 'PAYMENTS',
  title: 'Card payments and compliance API',
  version: '1.0.0',
  description:
    'Payment intents paid through a hosted checkout page or a voice session, party compliance status and ' +
    'transaction limits. JSON:API documents; errors `{errors:[{status,code,title,detail,source,meta:{supportId}}]}`. ' +
    'Every POST accepts `Idempotency-Key` (records kept 48 h; replays carry `X-Idempotency-Replayed: true`).',
  defaultPort: 4101,
  migrations: { schema: 'payments', folder: path.join(import.meta.dirname, 'db', 'migrations') },
  formatError: formatPaymentsError,
  tags: [
    { name: 'payment-intents', description: 'Payment intents and their line items' },
    { name: 'checkout', description: 'Hosted checkout page and the payer-side payment call' },
    { name: 'card-payments', description: 'Card payment attempts' },
    { name: 'voice', description: 'Voice sessions and their simulation' },
    { name: 'parties', description: 'Parties (merchants and customer parties)' },
    { name: 'compliance', description: 'Party compliance status and sessions' },
    { name: 'limits', description: 'Per-transaction spending limit' },
    { name: 'credentials', description: 'Agent keys' },
  ],
  securitySchemes: {
    bearerAuth: { type: 'http', scheme: 'bearer', description: 'API key (sk_...) or agent key (ak_...)' },
  },
  validateEnv: (env) => {
    readPaymentsConfig(env);
  },
  setup(ctx) {
    const config = readPaymentsConfig(ctx.config.env);
    const parties = new PartyService(ctx.db, ctx.clock);
    const payments = new PaymentService(
      ctx.db,
      ctx.clock,
      config,
      new SimulatedCardNetwork(),
      parties,
      ctx.secrets,
      ctx.jobs,
      () => ctx.publicUrl,
    );
    const runner = new IdempotentRunner(ctx.db, ctx.idempotency, ctx.secrets);
    let unlisten: (() => Promise<void>) | undefined;
    return {
      async routes(app) {
        unlisten = await parties.listenForRevocations(ctx.notifier);
        await registerPaymentsRoutes(app, {
          limits: config,
          payments,
          parties,
          runner,
          cardFingerprints: new CardFingerprinter(ctx.secrets),
          now: () => ctx.clock.now(),
        });
        await registerCheckoutRoutes(app, { payments });
        await registerOpsRoutes(app, { payments, parties });
      },
      tasks: {
        'settle-card-payment': async (payload) => payments.settleCardPayment(cardPaymentId(payload)),
        'expire-intents': async () => {
          const n = await payments.expireDue();
          if (n > 0) ctx.logger.info({ expired: n }, 'payment intents expired');
        },
      },
      cron: [{ task: 'expire-intents', pattern: '* * * * *' }],
      async seed(tx) {
        const merchant = await parties.create(
          { kind: 'merchant', name: 'Demo Merchant', caseStatus: 'MET' },
          tx,
        );
        const customer = await parties.create(
          { kind: 'customer', name: 'Demo Customer', ownerPartyId: merchant.id, caseStatus: 'MET' },
          tx,
        );
        const key = await parties.issueKey(merchant.id, 'api', 'demo key (first start)', tx);
        return { merchantKey: key.key, merchantPartyId: merchant.id, customerPartyId: customer.id };
      },
      async stop() {
        await unlisten?.();
      },
    };
  },
};
