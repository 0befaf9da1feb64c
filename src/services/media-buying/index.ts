import path from 'node:path';
import { Type } from '@sinclair/typebox';
import { defineTask } from '../../platform/jobs.ts';
import type { ServiceDefinition } from '../../platform/service.ts';
import { ActivationSandbox, anonymousCleanupTask } from './activation/index.ts';
import { CreativeDesk, MediaBuyDesk, SimulatedBuyingPlatform } from './buying/index.ts';
import {
  BuyerLists,
  Catalog,
  DeliveryRunner,
  Discovery,
  DiscoveryPages,
  platformDomainsOf,
  SimulatedAdPlatform,
  simulateDeliveryTask,
} from './catalog/index.ts';
import {
  CarrierSimulator,
  DeterministicDraftingAgent,
  draftReplyTask,
  OpenAiDraftingAgent,
  readTextingConfig,
  sendTextTask,
  Texting,
  textRetentionTask,
  textSendSweepTask,
} from './communications/index.ts';
import { createMediaBuyingCredentials } from './credentials/index.ts';
import { Accounts, createIdentityFlows, type IdentityFlows } from './identity/index.ts';
import { Mailer, sendMailTask } from './mail/index.ts';
import { createMcp, createMcpOAuth, McpIdempotency, type McpSessions } from './mcp/index.ts';
import { readMediaBuyingConfig, uiOriginOf } from './media-buying-config.ts';
import { formatMediaBuyingError } from './media-buying-errors.ts';
import { Organizations } from './organizations/index.ts';
import { registerMediaBuyingRoutes } from './routes/index.ts';
import { seedDemo } from './seed.ts';
import { createSso } from './sso/index.ts';

/** Every hour: deletes sign-in throttle windows that ended, and sign-in states and codes expired a day ago. */
const pruneThrottleTask = defineTask(
  'media-buying:prune-sign-in-throttle',
  Type.Object({}),
  async (_payload, deps: { accounts: Accounts; identity: IdentityFlows }) => {
    await deps.accounts.pruneThrottle();
    await deps.identity.prune();
  },
);

/**
 * Every hour: deletes discovery sessions (and their quotes) expired a week ago, anonymous activation enrolments
 * never exchanged whose assertion expired a day ago, and MCP sessions ended or expired a day ago.
 */
const pruneCatalogTask = defineTask(
  'media-buying:prune-discovery-and-enrolments',
  Type.Object({}),
  async (_payload, deps: { discovery: Discovery; sandbox: ActivationSandbox; mcpSessions: McpSessions }) => {
    await deps.discovery.prune();
    await deps.sandbox.pruneEnrolments();
    await deps.mcpSessions.prune();
  },
);

/**
 * The media-buying service (spec document 000; anchor: an agentic media-buying platform on AdCP 3.x): organizations
 * (Buyer and Seller Accounts) and their people, the built-in identity provider (passwords, sessions), every kind of
 * credential (user, organization-owned and legacy keys, widget tokens, M2M applications with JWT access tokens,
 * buyer-agent identities, agent registration tokens), advertisers, and the operator API. Every REST answer is the
 * envelope `{data, error}`.
 */
export const mediaBuyingService: ServiceDefinition = {
  name: 'media-buying',
  envPrefix: 'MEDIA_BUYING',
  title: 'Media-buying API',
  version: '2.0.0',
  description:
    'Buyers (advertisers) and sellers (media companies with storefronts) plan and place media buys. REST under ' +
    '`/api/v2`; every answer is the envelope `{data, error, meta?}`. Authenticate with `Authorization: Bearer ' +
    '<credential>` (a user API key `mbu_...`, an M2M access token, ...) or, in a browser, the session cookie of ' +
    '`POST /auth/password`.',
  defaultPort: 4100,
  migrations: { schema: 'media_buying', folder: path.join(import.meta.dirname, 'db', 'migrations') },
  formatError: formatMediaBuyingError,
  tags: [
    { name: 'auth', description: 'Sign-in, sign-out and the current user' },
    { name: 'signup', description: 'Signup: the advertiser preview form, invitations and their acceptance' },
    { name: 'organizations', description: 'Your organizations, their members and the Terms of Service' },
    {
      name: 'credentials',
      description: 'User API keys, organization keys, widget tokens, M2M applications, buyer agents',
    },
    { name: 'oauth', description: 'The OAuth 2.0 token endpoint, its metadata and signing keys' },
    { name: 'buyer', description: 'Buyer Account resources' },
    {
      name: 'activation',
      description:
        'The zero-spend activation sandbox: anonymous agent registration, the probe, binding and claim',
    },
    {
      name: 'storefront',
      description: 'Seller Account storefronts, sales agents, pricing rules, products, account links',
    },
    {
      name: 'communications',
      description: 'Text messages from the agent phone lines of a Seller Account (SMS and RCS)',
    },
    {
      name: 'carrier',
      description: 'Webhooks the SMS carrier calls (signed with HMAC-SHA256, see the README)',
    },
    {
      name: 'pages',
      description: 'The pages of the service (server-rendered HTML) and their style sheet, icon and scripts',
    },
    {
      name: 'sso simulator',
      description: 'The built-in OpenID Connect provider simulator of SSO (`/_sim/oidc`)',
    },
  ],
  securitySchemes: {
    bearerAuth: {
      type: 'http',
      scheme: 'bearer',
      description:
        'A user API key (`mbu_...`), widget token (`wgt_...`), organization-owned key (`mbo_...`), legacy key ' +
        '(`lgc_...`), buyer-agent credential (`mba_...`), agent registration credential (`mbr_...` / `mbt_...`) or ' +
        'an M2M access token (JWT from `POST /oauth/token`).',
    },
    sessionCookie: {
      type: 'apiKey',
      in: 'cookie',
      name: 'mb_session',
      description:
        'The browser session of `POST /auth/password` (state-changing requests only from the UI origin).',
    },
  },
  // Failed sign-ins are counted per account and per client address, shared by every instance.
  refusalCounters: ['media_buying.sign_in_throttle'],
  validateEnv(env) {
    readMediaBuyingConfig(env);
    readTextingConfig(env);
  },
  async setup(ctx) {
    const config = readMediaBuyingConfig(ctx.config.env);
    const credentials = createMediaBuyingCredentials(ctx);
    // Losing access to an organization ends the user's MCP connections there (spec "Authentication" rule 2).
    const organizations = new Organizations(ctx.db, ctx.clock, {
      accessLost: (tx, who) => credentials.connectedApps.endConnections(tx, who),
    });
    const accounts = new Accounts(ctx.db, ctx.clock, credentials.stores, config.sessionHours * 3600);
    const mailer = new Mailer(ctx.db, ctx.clock, ctx.secrets, {
      smtpUrl: config.smtpUrl,
      from: config.mailFrom,
      logger: ctx.logger,
    });
    const unlistenKeys = await credentials.signingKeys.listen(ctx.notifier);
    const flows = { db: ctx.db, clock: ctx.clock, secrets: ctx.secrets, logger: ctx.logger, accounts };
    const publicUrl = () => ctx.publicUrl;
    const uiOrigin = uiOriginOf(config, publicUrl);
    const identity = createIdentityFlows({ ...flows, organizations, mailer, uiOrigin, publicUrl });
    const sso = createSso({
      ...flows,
      outbound: ctx.outbound,
      states: identity.states,
      config,
      publicUrl,
      uiOrigin,
    });
    // The platform's own domains (never a buyer's operator identity, nor any subdomain of them): its public host, its
    // UI host, their registrable domains (the apex under the Public Suffix List) and the configured parent domain.
    const platformDomains = () =>
      platformDomainsOf([new URL(publicUrl()).hostname, new URL(uiOrigin()).hostname], config.cookieDomain);
    const catalog = new Catalog(ctx.db, ctx.clock, organizations, platformDomains);
    const discovery = new Discovery(ctx.db, ctx.clock, catalog);
    const lists = new BuyerLists(ctx.db);
    const delivery = new DeliveryRunner(ctx.db, ctx.clock, new SimulatedAdPlatform());
    // Part 3: the ad platform behind its adapter (the simulator; a real platform's adapter is configured here).
    const adPlatform = new SimulatedBuyingPlatform();
    const desk = new MediaBuyDesk(ctx.db, ctx.clock, catalog, organizations, adPlatform);
    const sandbox = new ActivationSandbox(ctx.db, ctx.clock, credentials.signingKeys, publicUrl);
    const mcp = createMcp({
      db: ctx.db,
      clock: ctx.clock,
      credentials,
      discoveryPages: new DiscoveryPages(ctx.db, ctx.clock, catalog, discovery),
      adPlatform,
      lists,
      publicUrl,
      logger: ctx.logger,
      catalog,
      desk,
      creatives: new CreativeDesk(ctx.clock, organizations, adPlatform),
      idempotency: new McpIdempotency(ctx.idempotency),
    });
    const textingConfig = readTextingConfig(ctx.config.env);
    // The carrier: the built-in simulator (a real carrier adapter is configured here, behind the same interface).
    const carrier = new CarrierSimulator(textingConfig.simulatorLatencyMs);
    const texting = new Texting({
      db: ctx.db,
      clock: ctx.clock,
      secrets: ctx.secrets,
      config: textingConfig,
      carrier,
      // The deterministic drafting agent, or the OpenAI-compatible model when configured (checked the same way).
      agent: textingConfig.draftingModel
        ? new OpenAiDraftingAgent({ ...textingConfig.draftingModel, outbound: ctx.outbound })
        : new DeterministicDraftingAgent(),
      logger: ctx.logger,
    });
    const mcpOAuth = createMcpOAuth({
      db: ctx.db,
      clock: ctx.clock,
      secrets: ctx.secrets,
      outbound: ctx.outbound,
      allowLoopbackHttp: ctx.config.outboundAllowPrivate,
      stores: credentials.stores,
      publicUrl,
    });
    const webhookSecret = textingConfig.webhookSecret
      ? Buffer.from(textingConfig.webhookSecret, 'utf8')
      : ctx.secrets.deriveKey('media-buying:carrier-webhook');
    return {
      routes(app) {
        registerMediaBuyingRoutes(app, {
          db: ctx.db,
          clock: ctx.clock,
          config,
          publicUrl,
          uiOrigin,
          stores: credentials.stores,
          credentials,
          organizations,
          accounts,
          mailer,
          identity,
          sso,
          catalog,
          discovery,
          lists,
          sandbox,
          delivery,
          desk,
          texting: { texting, simulator: carrier, webhookSecret },
          mcp: mcp.transport,
          mcpOAuth,
        });
      },
      tasks: [
        sendMailTask.with({ mailer }),
        pruneThrottleTask.with({ accounts, identity }),
        ...identity.tasks,
        simulateDeliveryTask.with({ delivery }),
        anonymousCleanupTask.with({ sandbox }),
        pruneCatalogTask.with({ discovery, sandbox, mcpSessions: mcp.sessions }),
        sendTextTask.with({ texting }),
        draftReplyTask.with({ texting }),
        textRetentionTask.with({ texting }),
        textSendSweepTask.with({ texting }),
      ],
      cron: [
        { task: pruneThrottleTask, pattern: '43 * * * *' },
        { task: simulateDeliveryTask, pattern: '7 * * * *' },
        { task: pruneCatalogTask, pattern: '47 * * * *' },
        { task: textRetentionTask, pattern: '7 * * * *' },
        { task: textSendSweepTask, pattern: '* * * * *' },
      ],
      seed: (tx) =>
        seedDemo(tx, {
          organizations,
          accounts,
          credentials,
          catalog,
          texting,
          now: ctx.clock.now(),
          publicUrl: ctx.publicUrl,
        }),
      async stop() {
        mailer.close();
        await mcp.transport.close();
        await unlistenKeys();
      },
    };
  },
};
