import path from 'node:path';
import type { ServiceDefinition } from '../../platform/service.ts';
import { SigningKeys } from '../../platform/signing-keys.ts';
import { CardFingerprinter } from './card-fingerprint.ts';
import { SimulatedCardNetwork } from './card-network.ts';
import { oauthSigningKeys } from './db/schema.ts';
import { IdempotentRunner } from './idempotent-runner.ts';
import { createClientSecretStore, OAuthClients } from './oauth-clients.ts';
import { SCOPE_NAMES, SCOPES } from './oauth-scopes.ts';
import { bearerCredentials, TOKEN_LEEWAY_SECONDS, TokenIssuer } from './oauth-tokens.ts';
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
    {
      name: 'oauth',
      description:
        'OAuth 2.0: the token endpoint (client_credentials), its metadata and keys, and the merchant’s OAuth clients',
    },
  ],
  securitySchemes: {
    bearerAuth: {
      type: 'http',
      scheme: 'bearer',
      description:
        'API key (sk_...), agent key (ak_...) or OAuth access token (a JWT from POST /oauth/token, or from the ' +
        'configured external issuer)',
    },
    oauth2: {
      type: 'oauth2',
      description:
        'OAuth 2.0 access tokens (RFC 9068 JWTs) of the client_credentials grant, sent as Authorization: Bearer. ' +
        'A token acts for its client’s merchant party with its scopes, never more than an agent key may do.',
      flows: { clientCredentials: { tokenUrl: '/oauth/token', scopes: { ...SCOPES } } },
    },
    oauthClient: {
      type: 'http',
      scheme: 'basic',
      description:
        'OAuth client authentication at the token endpoint (RFC 6749 section 2.3.1): client_id:client_secret; ' +
        'client_secret_post (both in the form) is accepted too',
    },
  },
  validateEnv: (env) => {
    readPaymentsConfig(env);
  },
  async setup(ctx) {
    const config = readPaymentsConfig(ctx.config.env);
    const keys = createCredentialStore(ctx);
    const parties = new PartyService(ctx.db, ctx.clock, keys);
    const clients = new OAuthClients(ctx.db, ctx.clock, createClientSecretStore(ctx));
    const unlistenClients = await clients.listen(ctx.notifier, ctx.name);
    const signingKeys = new SigningKeys(ctx.db, ctx.clock, ctx.secrets, {
      service: ctx.name,
      table: oauthSigningKeys,
      // Keys sealed before the signing keys moved to the platform used this associated data.
      sealPrefix: 'payments:oauth-signing-key',
      tokenTtlSeconds: config.oauth.accessTokenTtlSeconds,
      leewaySeconds: TOKEN_LEEWAY_SECONDS,
    });
    const unlistenKeys = await signingKeys.listen(ctx.notifier);
    const publicUrl = () => ctx.publicUrl;
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
        await registerPaymentsRoutes(
          app,
          {
            limits: config,
            payments,
            resources,
            parties,
            credentials: bearerCredentials({
              keys,
              clients,
              signingKeys,
              parties,
              clock: ctx.clock,
              outbound: ctx.outbound,
              logger: ctx.logger,
              publicUrl,
              external: config.oauth.external,
            }),
            runner,
            cardFingerprints: new CardFingerprinter(ctx.secrets),
            now: () => ctx.clock.now(),
          },
          {
            clients,
            signingKeys,
            tokens: new TokenIssuer(signingKeys, ctx.clock, {
              issuer: publicUrl,
              ttlSeconds: config.oauth.accessTokenTtlSeconds,
            }),
            tokenRateLimit: config.oauth.tokenRateLimit,
            publicUrl,
            externalIssuer: config.oauth.external?.issuer,
          },
        );
        await registerCheckoutRoutes(app, { payments });
        await registerOpsRoutes(app, { payments, parties, keys, db: ctx.db });
      },
      async stop() {
        await unlistenClients();
        await unlistenKeys();
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
        const oauth = await clients.register(tx, merchant.id, {
          name: 'demo OAuth client (first start)',
          scopes: SCOPE_NAMES,
        });
        return {
          merchantKey: key.key,
          merchantPartyId: merchant.id,
          customerPartyId: customer.id,
          oauthClientId: oauth.client.clientId,
          oauthClientSecret: oauth.clientSecret,
        };
      },
    };
  },
};
