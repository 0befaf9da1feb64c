/**
 * Buyer routes of part 2 (spec "Lists and discovery", "Errors"): the offset lists (`take`/`skip`, capped per endpoint:
 * `LIST_CAPS`), Buyer Setup step 1, campaigns, media buys, test cohorts, human feedback, measurement-engine records
 * and product discovery. Buying routes (campaigns, media buys, discovery) answer 409 `BUYER_SETUP_REQUIRED` until the
 * Buyer Account's operator identity is set.
 */
import { type TSchema, Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { ServiceApp } from '../../../platform/http.ts';
import { Int4 } from '../../../platform/schemas.ts';
import {
  type Acting,
  advertiserAccountView,
  campaignView,
  DEFAULT_TAKE,
  humanFeedbackView,
  LIST_CAPS,
  measurementView,
  mediaBuyView,
  NEW_DISCOVERY,
  packageView,
  testCohortView,
} from '../catalog/index.ts';
import type { Caller } from '../credentials/index.ts';
import { MEASUREMENT_KINDS, type MeasurementKind } from '../db/schema.ts';
import { Envelope, idErrors, ListEnvelope, security } from '../media-buying-schemas.ts';
import {
  AdvertiserAccount,
  Amount,
  AuditLogEntry,
  BuyerSetup,
  Campaign,
  Creative,
  Currency,
  DiscoveryResult,
  HumanFeedback,
  MeasurementRecord,
  MediaBuy,
  MetricRow,
  Name,
  OperatorIdentity,
  PageQuerystring,
  PublicId,
  TestCohort,
} from './catalog-schemas.ts';
import type { MediaBuyingRouteContext } from './context.ts';

const buyingErrors = { ...idErrors, 409: idErrors[404], 422: idErrors[404] };

/** The organization, user and credential kind of a caller, for the domain's audit log. */
export function actingOf(caller: Caller): Acting {
  return { organizationId: caller.organization!.id, userId: caller.user?.id ?? null, kind: caller.kind };
}

/** Registers the buyer routes of part 2. */
export function registerBuyerRecordRoutes(app: ServiceApp, ctx: MediaBuyingRouteContext): void {
  const { db, catalog, discovery, lists } = ctx.deps;
  const read = ctx.authenticated({ needs: { fn: 'buyer', level: 'read' } });
  const write = ctx.authenticated({ needs: { fn: 'buyer', level: 'write' } });
  const page = (request: FastifyRequest) => {
    const q = request.query as { take?: number; skip?: number };
    return {
      organizationId: ctx.caller(request).organization?.id ?? null,
      take: q.take ?? DEFAULT_TAKE,
      skip: q.skip ?? 0,
    };
  };
  const answer = <T>(p: { take: number; skip: number }, result: { items: T[]; total: number }) =>
    ctx.list(result.items, { skip: p.skip, take: p.take, total: result.total });

  const list = <T extends TSchema>(
    url: string,
    operationId: string,
    summary: string,
    item: T,
    cap: number,
    run: (
      request: FastifyRequest,
      p: ReturnType<typeof page>,
    ) => Promise<{ items: unknown[]; total: number }>,
    options: { extra?: Record<string, TSchema>; alpha?: string } = {},
  ) => {
    app.get(
      url,
      {
        onRequest: options.alpha
          ? ctx.authenticated({ needs: { fn: 'buyer', level: 'read' }, alpha: options.alpha })
          : read,
        schema: {
          operationId,
          tags: ['buyer'],
          summary: `${summary} (take 1-${cap}, default ${DEFAULT_TAKE})`,
          security,
          querystring: PageQuerystring(cap, options.extra),
          response: { 200: ListEnvelope(item), ...idErrors },
        },
      },
      async (request) => {
        const p = page(request);
        return answer(p, await run(request, p));
      },
    );
  };

  list(
    '/api/v2/buyer/audit-logs',
    'listAuditLogs',
    'Audit log of every mutation in your account, newest first',
    AuditLogEntry,
    LIST_CAPS.auditLogs,
    (_r, p) => lists.auditLogs(p),
  );
  list(
    '/api/v2/buyer/reporting/metrics',
    'listDeliveryMetrics',
    'Daily delivery per package (impressions, clicks, spend), newest day first',
    MetricRow,
    LIST_CAPS.metrics,
    (r, p) => lists.metrics({ ...p, mediaBuyId: (r.query as { mediaBuyId?: string }).mediaBuyId ?? null }),
    { extra: { mediaBuyId: Type.Optional(PublicId) } },
  );
  list(
    '/api/v2/buyer/creatives',
    'listCreatives',
    'Creatives, in creation order',
    Creative,
    LIST_CAPS.creatives,
    (_r, p) => lists.creatives(p),
  );
  list(
    '/api/v2/buyer/test-cohorts',
    'listTestCohorts',
    'Test cohorts, in creation order',
    TestCohort,
    LIST_CAPS.testCohorts,
    (_r, p) => lists.testCohorts(p),
  );
  list(
    '/api/v2/buyer/human-feedback',
    'listHumanFeedback',
    'Human feedback, in creation order',
    HumanFeedback,
    LIST_CAPS.humanFeedback,
    (_r, p) => lists.humanFeedback(p),
  );
  const measurementPath = { study: 'studies', event_source: 'event-sources' } as const satisfies Record<
    MeasurementKind,
    string
  >;
  for (const kind of MEASUREMENT_KINDS) {
    const name = kind === 'study' ? 'Studies' : 'EventSources';
    const one = kind === 'study' ? 'Study' : 'EventSource';
    list(
      `/api/v2/buyer/measurement-engine/${measurementPath[kind]}`,
      `listMeasurement${name}`,
      `Measurement-engine ${kind === 'study' ? 'lift studies' : 'conversion event sources'} (alpha: measurement-engine)`,
      MeasurementRecord,
      LIST_CAPS.measurement,
      (_r, p) => lists.measurement({ ...p, kind }),
      { alpha: 'measurement-engine' },
    );
    app.post(
      `/api/v2/buyer/measurement-engine/${measurementPath[kind]}`,
      {
        onRequest: ctx.authenticated({ needs: { fn: 'buyer', level: 'write' }, alpha: 'measurement-engine' }),
        schema: {
          operationId: `createMeasurement${one}`,
          tags: ['buyer'],
          summary: `Create a measurement-engine ${kind === 'study' ? 'lift study' : 'event source'} (alpha: measurement-engine)`,
          security,
          body: Type.Object(
            {
              name: Name,
              details: Type.Optional(
                Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 1000 }), {
                  maxProperties: 20,
                }),
              ),
            },
            { additionalProperties: false, examples: [{ name: 'Q1 brand lift' }] },
          ),
          response: { 201: Envelope(MeasurementRecord), ...idErrors },
        },
      },
      async (request, reply) => {
        const acting = actingOf(ctx.caller(request));
        const row = await db.transaction((tx) =>
          catalog.createMeasurement(tx, acting, kind, {
            name: request.body.name.trim(),
            details: request.body.details ?? {},
          }),
        );
        return reply.code(201).send(ctx.ok(measurementView(row)));
      },
    );
  }
  list(
    '/api/v2/buyer/advertiser-accounts',
    'listAdvertiserAccounts',
    'Advertiser accounts (storefront account links), in creation order',
    AdvertiserAccount,
    LIST_CAPS.advertiserAccounts,
    (_r, p) => lists.advertiserAccounts(p),
  );
  app.post(
    '/api/v2/buyer/advertiser-accounts',
    {
      onRequest: write,
      schema: {
        operationId: 'requestAdvertiserAccount',
        tags: ['buyer'],
        summary:
          'Request an account link of an advertiser with a storefront (pending_approval until the seller decides); an existing link is answered unchanged (200)',
        security,
        body: Type.Object(
          { advertiserId: PublicId, storefrontId: PublicId, name: Type.Optional(Name) },
          {
            additionalProperties: false,
            examples: [
              {
                advertiserId: 'adv_00000000000000000000000000000000',
                storefrontId: 'sf_00000000000000000000000000000000',
              },
            ],
          },
        ),
        response: {
          200: Envelope(AdvertiserAccount),
          201: Envelope(AdvertiserAccount),
          ...buyingErrors,
        },
      },
    },
    async (request, reply) => {
      const acting = actingOf(ctx.caller(request));
      const b = request.body;
      const { row, action } = await db.transaction((tx) =>
        catalog.requestAccountLink(tx, acting, {
          advertiserId: b.advertiserId,
          storefrontId: b.storefrontId,
          name: b.name?.trim(),
        }),
      );
      return reply
        .code(action === 'created' ? 201 : 200)
        .send(ctx.ok(advertiserAccountView(row, await catalog.accountLinkRefs(row.id))));
    },
  );
  list(
    '/api/v2/buyer/media-buys',
    'listMediaBuys',
    'Media buys with their packages and persisted seller account, in creation order',
    MediaBuy,
    LIST_CAPS.mediaBuys,
    (_r, p) => lists.mediaBuys(p),
  );
  list(
    '/api/v2/buyer/campaigns',
    'listCampaigns',
    'Campaigns, in creation order',
    Campaign,
    LIST_CAPS.campaigns,
    (_r, p) => lists.campaigns(p),
  );

  app.get(
    '/api/v2/buyer/advertisers/:advertiserId/campaigns',
    {
      onRequest: read,
      schema: {
        operationId: 'listAdvertiserCampaigns',
        tags: ['buyer'],
        summary: 'The campaigns of one advertiser (a nested advertiser route)',
        security,
        params: Type.Object({ advertiserId: PublicId }),
        response: { 200: Envelope(Type.Array(Campaign)), ...idErrors },
      },
    },
    async (request) => {
      const orgId = ctx.caller(request).organization!.id;
      const advertiser = await catalog.advertiser(orgId, request.params.advertiserId);
      const rows = await catalog.campaignsOf(orgId, advertiser.id);
      return ctx.ok(rows.map((r) => campaignView(r, advertiser.publicId)));
    },
  );

  // ------------------------------------------------------------------ Buyer Setup step 1

  const setupView = async (orgId: number) => {
    const identity = await catalog.operatorIdentity(orgId);
    const reason = !identity
      ? ('missing_operator_identity' as const)
      : catalog.isPlatformDomain(identity.domain)
        ? ('platform_operator_not_allowed' as const)
        : null;
    return {
      complete: reason === null,
      operatorIdentity: identity
        ? { domain: identity.domain, name: identity.name, updatedAt: identity.updatedAt.toISOString() }
        : null,
      reason,
      readinessCheck: 'operator_identity' as const,
      setupStep: 1 as const,
      setupPage: 'buyer_setup' as const,
    };
  };

  app.get(
    '/api/v2/buyer/setup',
    {
      onRequest: read,
      schema: {
        operationId: 'getBuyerSetup',
        tags: ['buyer'],
        summary: 'Buyer Setup: step 1 (operator identity) and whether buying routes are open',
        security,
        response: { 200: Envelope(BuyerSetup), ...idErrors },
      },
    },
    async (request) => ctx.ok(await setupView(ctx.caller(request).organization!.id)),
  );

  app.put(
    '/api/v2/buyer/setup/operator-identity',
    {
      onRequest: ctx.authenticated({ needs: { fn: 'buyer', level: 'admin' } }),
      schema: {
        operationId: 'setBuyerOperatorIdentity',
        tags: ['buyer'],
        summary:
          "Buyer Setup step 1: the operator identity of your Buyer Account (an administrator's; never the platform's domain)",
        security,
        body: Type.Object(
          {
            domain: Type.String({
              minLength: 3,
              maxLength: 253,
              pattern: '^([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63}$',
              description: 'The domain of the entity operating the buying (AdCP account.operator)',
            }),
            name: Name,
          },
          {
            additionalProperties: false,
            examples: [{ domain: 'agency.example', name: 'Example Agency Ltd' }],
          },
        ),
        response: { 200: Envelope(OperatorIdentity), ...idErrors, 422: idErrors[404] },
      },
    },
    async (request) => {
      const acting = actingOf(ctx.caller(request));
      const row = await db.transaction((tx) =>
        catalog.setOperatorIdentity(tx, acting, {
          domain: request.body.domain,
          name: request.body.name.trim(),
        }),
      );
      return ctx.ok({ domain: row.domain, name: row.name, updatedAt: row.updatedAt.toISOString() });
    },
  );

  // ------------------------------------------------------------------ campaigns and media buys

  app.post(
    '/api/v2/buyer/campaigns',
    {
      onRequest: write,
      schema: {
        operationId: 'createCampaign',
        tags: ['buyer'],
        summary: 'Create a campaign (budget.total in decimal major units of budget.currency)',
        security,
        body: Type.Object(
          {
            advertiserId: PublicId,
            name: Name,
            budget: Type.Object({ total: Amount, currency: Currency }, { additionalProperties: false }),
            flightStart: Type.String({ format: 'date-time' }),
            flightEnd: Type.String({ format: 'date-time' }),
          },
          {
            additionalProperties: false,
            examples: [
              {
                advertiserId: 'adv_00000000000000000000000000000000',
                name: 'Spring launch',
                budget: { total: 25000, currency: 'USD' },
                flightStart: '2026-12-01T00:00:00Z',
                flightEnd: '2026-12-31T00:00:00Z',
              },
            ],
          },
        ),
        response: { 201: Envelope(Campaign), ...buyingErrors },
      },
    },
    async (request, reply) => {
      const acting = actingOf(ctx.caller(request));
      const b = request.body;
      const { campaign, advertiserPublicId } = await db.transaction((tx) =>
        catalog.createCampaign(tx, acting, {
          advertiserId: b.advertiserId,
          name: b.name.trim(),
          budget: b.budget,
          flightStart: new Date(b.flightStart),
          flightEnd: new Date(b.flightEnd),
        }),
      );
      return reply.code(201).send(ctx.ok(campaignView(campaign, advertiserPublicId)));
    },
  );

  app.post(
    '/api/v2/buyer/media-buys',
    {
      onRequest: write,
      schema: {
        operationId: 'createMediaBuy',
        tags: ['buyer'],
        summary: 'Create a media buy: packages of products of one storefront, within the campaign budget',
        security,
        body: Type.Object(
          {
            campaignId: PublicId,
            name: Type.Optional(Name),
            startTime: Type.Optional(Type.String({ format: 'date-time' })),
            endTime: Type.Optional(Type.String({ format: 'date-time' })),
            packages: Type.Array(
              Type.Object(
                {
                  productId: PublicId,
                  pricingOptionId: Type.String({ minLength: 1, maxLength: 100 }),
                  budget: Amount,
                  impressions: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000_000 })),
                },
                { additionalProperties: false },
              ),
              { minItems: 1, maxItems: 50 },
            ),
          },
          {
            additionalProperties: false,
            examples: [
              {
                campaignId: 'cmp_00000000000000000000000000000000',
                packages: [
                  {
                    productId: 'prd_00000000000000000000000000000000',
                    pricingOptionId: 'cpm_usd',
                    budget: 1000,
                  },
                ],
              },
            ],
          },
        ),
        response: { 201: Envelope(MediaBuy), ...buyingErrors },
      },
    },
    async (request, reply) => {
      const caller = ctx.caller(request);
      const b = request.body;
      const created = await db.transaction(async (tx) =>
        catalog.createMediaBuy(
          tx,
          actingOf(caller),
          {
            campaignId: b.campaignId,
            name: b.name?.trim(),
            startTime: b.startTime ? new Date(b.startTime) : undefined,
            endTime: b.endTime ? new Date(b.endTime) : undefined,
            packages: b.packages,
          },
          // The campaign may fund buys in other currencies (made over MCP): they count at the ad platform's rate.
          { fxRate: await ctx.deps.desk.fxSourceFor(tx, b.packages[0]?.productId ?? '') },
        ),
      );
      return reply
        .code(201)
        .send(ctx.ok(await mediaBuyAnswer(caller.organization!.id, created.buy.publicId)));
    },
  );

  const mediaBuyAnswer = async (orgId: number, publicId: string) => {
    const found = await catalog.mediaBuy(orgId, publicId);
    return mediaBuyView(
      found.buy,
      found,
      found.packages.map((p) => packageView(p.pkg, p.productId, found.buy.currency)),
    );
  };

  app.get(
    '/api/v2/buyer/media-buys/:mediaBuyId',
    {
      onRequest: read,
      schema: {
        operationId: 'getMediaBuy',
        tags: ['buyer'],
        summary: 'One media buy with its packages and the seller account persisted on it',
        security,
        params: Type.Object({ mediaBuyId: PublicId }),
        response: { 200: Envelope(MediaBuy), ...idErrors },
      },
    },
    async (request) =>
      ctx.ok(await mediaBuyAnswer(ctx.caller(request).organization!.id, request.params.mediaBuyId)),
  );

  app.post(
    '/api/v2/buyer/test-cohorts',
    {
      onRequest: write,
      schema: {
        operationId: 'createTestCohort',
        tags: ['buyer'],
        summary: 'Create a test cohort (a holdout experiment) of an advertiser',
        security,
        body: Type.Object(
          { advertiserId: PublicId, name: Name, holdoutPercent: Int4({ minimum: 1, maximum: 50 }) },
          {
            additionalProperties: false,
            examples: [
              {
                advertiserId: 'adv_00000000000000000000000000000000',
                name: 'Holdout 10%',
                holdoutPercent: 10,
              },
            ],
          },
        ),
        response: { 201: Envelope(TestCohort), ...idErrors },
      },
    },
    async (request, reply) => {
      const acting = actingOf(ctx.caller(request));
      const { cohort, advertiserPublicId } = await db.transaction((tx) =>
        catalog.createTestCohort(tx, acting, { ...request.body, name: request.body.name.trim() }),
      );
      return reply.code(201).send(ctx.ok(testCohortView(cohort, advertiserPublicId)));
    },
  );

  app.post(
    '/api/v2/buyer/human-feedback',
    {
      onRequest: write,
      schema: {
        operationId: 'createHumanFeedback',
        tags: ['buyer'],
        summary: "Record a person's feedback (rating 1-5), optionally on a media buy",
        security,
        body: Type.Object(
          {
            mediaBuyId: Type.Optional(PublicId),
            rating: Int4({ minimum: 1, maximum: 5 }),
            comment: Type.String({ maxLength: 5000 }),
          },
          { additionalProperties: false, examples: [{ rating: 4, comment: 'Good reach, weak clicks.' }] },
        ),
        response: { 201: Envelope(HumanFeedback), ...idErrors },
      },
    },
    async (request, reply) => {
      const caller = ctx.caller(request);
      const row = await db.transaction((tx) =>
        catalog.createHumanFeedback(tx, actingOf(caller), request.body),
      );
      return reply.code(201).send(
        ctx.ok(
          humanFeedbackView(row, {
            mediaBuyId: request.body.mediaBuyId ?? null,
            authorId: caller.user?.publicId ?? null,
          }),
        ),
      );
    },
  );

  // ------------------------------------------------------------------ discovery

  app.post(
    '/api/v2/buyer/discovery/:discoveryId/discover-products',
    {
      onRequest: read,
      schema: {
        operationId: 'discoverProducts',
        tags: ['buyer'],
        summary: `Discover products grouped by storefront; \`${NEW_DISCOVERY}\` as discoveryId starts a session (quotes priced for the UTC day)`,
        security,
        params: Type.Object({ discoveryId: PublicId }),
        body: Type.Object(
          {
            advertiserId: PublicId,
            groupLimit: Type.Optional(Int4({ minimum: 1, maximum: 50, default: 10 })),
            groupOffset: Type.Optional(Int4({ minimum: 0, maximum: 100_000, default: 0 })),
            productsPerGroup: Type.Optional(Int4({ minimum: 1, maximum: 50, default: 10 })),
            productOffset: Type.Optional(Int4({ minimum: 0, maximum: 100_000, default: 0 })),
          },
          {
            additionalProperties: false,
            examples: [{ advertiserId: 'adv_00000000000000000000000000000000', groupLimit: 5 }],
          },
        ),
        response: { 200: Envelope(DiscoveryResult), ...buyingErrors },
      },
    },
    async (request) => {
      const b = request.body;
      const result = await discovery.discover(
        ctx.caller(request).organization!.id,
        request.params.discoveryId,
        {
          advertiserId: b.advertiserId,
          groupLimit: b.groupLimit ?? 10,
          groupOffset: b.groupOffset ?? 0,
          productsPerGroup: b.productsPerGroup ?? 10,
          productOffset: b.productOffset ?? 0,
        },
      );
      return ctx.ok(result);
    },
  );
}
