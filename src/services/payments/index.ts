import path from 'node:path';
import type { ServiceDefinition } from '../../platform/service.ts';
import { CardFingerprinter } from './card-fingerprint.ts';
import { SimulatedCardNetwork } from './card-network.ts';
import { IdempotentRunner } from './idempotent-runner.ts';
import { createCredentialStore, PartyService } from './parties.ts';
import { PaymentResources } from './payment-resources.ts';
import { PaymentStore } from './payment-store.ts';
import { readPaymentsConfig } from './payments-config.ts';
import { formatPaymentsError } from './payments-errors.ts';
import { expireIntentsTask, settleCardPaymentTask } from './payments-jobs.ts';
import { PaymentService } from './payments-service.ts';
import { registerCheckoutRoutes, registerOpsRoutes, registerPaymentsRoutes } from './routes/index.ts';

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
    const keys = createCredentialStore(ctx);
    const parties = new PartyService(ctx.db, ctx.clock, keys);
    const payments = new PaymentService({
      store: new PaymentStore(ctx.db),
      clock: ctx.clock,
      config,
      network: new SimulatedCardNetwork(),
      parties,
      secrets: ctx.secrets,
    });
    const resources = new PaymentResources({ secrets: ctx.secrets, publicUrl: () => ctx.publicUrl });
    const jobDeps = { payments, logger: ctx.logger };
    const runner = new IdempotentRunner(ctx.db, ctx.idempotency, ctx.secrets);
    return {
      async routes(app) {
        await registerPaymentsRoutes(app, {
          limits: config,
          payments,
          resources,
          parties,
          keys,
          runner,
          cardFingerprints: new CardFingerprinter(ctx.secrets),
          now: () => ctx.clock.now(),
        });
        await registerCheckoutRoutes(app, { payments });
        await registerOpsRoutes(app, { payments, parties, keys, db: ctx.db });
      },
      tasks: [settleCardPaymentTask.with(jobDeps), expireIntentsTask.with(jobDeps)],
      cron: [{ task: expireIntentsTask, pattern: '* * * * *' }],
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
    };
  },
};
