import path from 'node:path';
import type { ServiceDefinition } from '../../platform/service.ts';
import { createKeyStore, issueKey } from './api-keys.ts';
import { SimulatedChain } from './chain.ts';
import { DepositService } from './deposit-service.ts';
import { readDepositsConfig } from './deposits-config.ts';
import { formatDepositError } from './deposits-errors.ts';
import { expireDueTask, publishTask, settleRefundTask } from './deposits-jobs.ts';
import { registerDepositRoutes } from './deposits-routes.ts';
import { registerOpsRoutes } from './ops-routes.ts';

/**
 * The stablecoin deposit-address service (spec document 001, section C; anchor: a stablecoin "fast deposit"
 * gateway): quotes CREATE2 vault addresses and runs each vault through funding, publication, expiry and refunds on
 * a simulated chain.
 */
export const depositsService: ServiceDefinition = {
  name: 'deposits',
  envPrefix: 'DEPOSITS',
  title: 'Stablecoin deposit-address API',
  version: '1.0.0',
  description:
    'Quotes deposit addresses (vaults) that fund a destination-chain deposit from a source-chain stablecoin ' +
    'amount. Errors: `{statusCode, message, error, validationErrors?, details?}`.',
  defaultPort: 4103,
  migrations: { schema: 'deposits', folder: path.join(import.meta.dirname, 'db', 'migrations') },
  formatError: formatDepositError,
  // Failed keys count against the caller's address in the anonymous budget (DEPOSITS_ANONYMOUS_RATE_LIMIT, 120 a
  // minute by default), as the v1 rules say; the platform's own failure limit would cut in first.
  platformAuthFailureLimit: false,
  tags: [{ name: 'deposit-addresses', description: 'Quoted deposit addresses and their state' }],
  securitySchemes: {
    apiKey: {
      type: 'apiKey',
      in: 'header',
      name: 'x-api-key',
      description: 'Optional; must be valid for v1 when sent',
    },
  },
  validateEnv: (env) => {
    readDepositsConfig(env);
  },
  setup(ctx) {
    const config = readDepositsConfig(ctx.config.env);
    const chain = new SimulatedChain(ctx.db);
    const keys = createKeyStore(ctx);
    const deposits = new DepositService(ctx.db, ctx.clock, config, chain);
    const jobDeps = { deposits, logger: ctx.logger };
    return {
      async routes(app) {
        await registerDepositRoutes(app, { deposits, keys, config });
        await registerOpsRoutes(app, { deposits, keys, chain, db: ctx.db });
      },
      tasks: [publishTask.with(jobDeps), settleRefundTask.with(jobDeps), expireDueTask.with(jobDeps)],
      cron: [{ task: expireDueTask, pattern: '* * * * *' }],
      async seed(tx) {
        const key = await issueKey(keys, tx, { label: 'demo key (first start)' });
        return { apiKey: key.key, apiKeyHeader: 'x-api-key', sourceChains: config.sourceChains.join(',') };
      },
    };
  },
};
