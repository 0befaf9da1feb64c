/**
 * Storefront REST for sellers (`/api/v2/storefront/...`): the Seller Account's storefronts, their sales agents and
 * pricing rules, products, and decisions on the account links buyers request (spec "Storefront account link"). Reads
 * need seller read, changes seller write; another organization's ids answer 404.
 */
import { Type } from '@sinclair/typebox';
import { and, asc, count, eq, sql } from 'drizzle-orm';
import type { ServiceApp } from '../../../platform/http.ts';
import { Int4, StringEnum } from '../../../platform/schemas.ts';
import {
  ACCOUNT_LINK_DECISIONS,
  type AccountLinkDecision,
  advertiserAccountView,
  DEFAULT_TAKE,
  LIST_CAPS,
  productView,
  salesAgentView,
  storefrontView,
} from '../catalog/index.ts';
import {
  DELIVERY_TYPES,
  products,
  SALES_AGENT_CAPABILITIES,
  STOREFRONT_STATUSES,
  storefronts,
} from '../db/schema.ts';
import { notFound } from '../media-buying-errors.ts';
import { Envelope, ErrorEnvelope, idErrors, ListEnvelope, security } from '../media-buying-schemas.ts';
import { actingOf } from './buyer-records.ts';
import {
  AdvertiserAccount,
  Currency,
  FormatIdSchema,
  Name,
  PageQuerystring,
  PricingOptionSchema,
  PricingRule,
  Product,
  PublicId,
  PublisherPropertySchema,
  SalesAgent,
  Storefront,
} from './catalog-schemas.ts';
import type { MediaBuyingRouteContext } from './context.ts';

const StorefrontParams = Type.Object({ storefrontId: PublicId });
const AgentParams = Type.Object({ salesAgentId: PublicId });
const writeErrors = { ...idErrors, 409: ErrorEnvelope, 422: ErrorEnvelope };

/** Registers the storefront routes. */
export function registerStorefrontRoutes(app: ServiceApp, ctx: MediaBuyingRouteContext): void {
  const { db, catalog, organizations, lists } = ctx.deps;
  const read = ctx.authenticated({ needs: { fn: 'seller', level: 'read' } });
  const write = ctx.authenticated({ needs: { fn: 'seller', level: 'write' } });

  app.get(
    '/api/v2/storefront/storefronts',
    {
      onRequest: read,
      schema: {
        operationId: 'listStorefronts',
        tags: ['storefront'],
        summary: 'The storefronts of your Seller Account, in creation order',
        security,
        response: { 200: Envelope(Type.Array(Storefront)), ...idErrors },
      },
    },
    async (request) => {
      const rows = await db
        .select()
        .from(storefronts)
        .where(eq(storefronts.organizationId, ctx.caller(request).organization!.id))
        .orderBy(asc(storefronts.id));
      return ctx.ok(rows.map(storefrontView));
    },
  );

  app.post(
    '/api/v2/storefront/storefronts',
    {
      onRequest: write,
      schema: {
        operationId: 'createStorefront',
        tags: ['storefront'],
        summary: 'Create a storefront (active) in one currency',
        security,
        body: Type.Object(
          { name: Name, currency: Currency },
          { additionalProperties: false, examples: [{ name: 'Sports network', currency: 'USD' }] },
        ),
        response: { 201: Envelope(Storefront), ...writeErrors },
      },
    },
    async (request, reply) => {
      const acting = actingOf(ctx.caller(request));
      const row = await db.transaction((tx) =>
        organizations.createStorefront(
          tx,
          acting.organizationId,
          { name: request.body.name.trim(), currency: request.body.currency },
          acting,
        ),
      );
      return reply.code(201).send(ctx.ok(storefrontView(row)));
    },
  );

  app.get(
    '/api/v2/storefront/storefronts/:storefrontId',
    {
      onRequest: read,
      schema: {
        operationId: 'getStorefront',
        tags: ['storefront'],
        summary: 'One storefront',
        security,
        params: StorefrontParams,
        response: { 200: Envelope(Storefront), ...idErrors },
      },
    },
    async (request) =>
      ctx.ok(
        storefrontView(
          await catalog.storefront(ctx.caller(request).organization!.id, request.params.storefrontId),
        ),
      ),
  );

  app.patch(
    '/api/v2/storefront/storefronts/:storefrontId',
    {
      onRequest: write,
      schema: {
        operationId: 'updateStorefront',
        tags: ['storefront'],
        summary: 'Rename a storefront, set adapter mode, or archive / replace it (replaced is final)',
        security,
        params: StorefrontParams,
        body: Type.Object(
          {
            name: Type.Optional(Name),
            status: Type.Optional(StringEnum(STOREFRONT_STATUSES)),
            adapterMode: Type.Optional(Type.Boolean()),
          },
          { additionalProperties: false, minProperties: 1, examples: [{ status: 'archived' }] },
        ),
        response: { 200: Envelope(Storefront), ...writeErrors },
      },
    },
    async (request) => {
      const acting = actingOf(ctx.caller(request));
      const row = await db.transaction((tx) =>
        catalog.updateStorefront(tx, acting, request.params.storefrontId, {
          ...request.body,
          ...(request.body.name ? { name: request.body.name.trim() } : {}),
        }),
      );
      return ctx.ok(storefrontView(row));
    },
  );

  app.get(
    '/api/v2/storefront/storefronts/:storefrontId/sales-agents',
    {
      onRequest: read,
      schema: {
        operationId: 'listSalesAgents',
        tags: ['storefront'],
        summary: 'The sales agents of a storefront, with their capabilities and pricing rules',
        security,
        params: StorefrontParams,
        response: { 200: Envelope(Type.Array(SalesAgent)), ...idErrors },
      },
    },
    async (request) => {
      const rows = await catalog.salesAgentsOf(
        ctx.caller(request).organization!.id,
        request.params.storefrontId,
      );
      return ctx.ok(rows.map((r) => salesAgentView(r.agent, request.params.storefrontId, r.rule)));
    },
  );

  app.post(
    '/api/v2/storefront/storefronts/:storefrontId/sales-agents',
    {
      onRequest: write,
      schema: {
        operationId: 'createSalesAgent',
        tags: ['storefront'],
        summary:
          'Add a sales agent behind a storefront (declared capabilities; currency default the storefront’s)',
        security,
        params: StorefrontParams,
        body: Type.Object(
          {
            name: Name,
            agentUrl: Type.Optional(Type.String({ format: 'uri', maxLength: 500 })),
            capabilities: Type.Array(StringEnum(SALES_AGENT_CAPABILITIES), { maxItems: 10 }),
            currency: Type.Optional(Currency),
          },
          {
            additionalProperties: false,
            examples: [{ name: 'Display agent', capabilities: ['pause', 'update_budget'] }],
          },
        ),
        response: { 201: Envelope(SalesAgent), ...writeErrors },
      },
    },
    async (request, reply) => {
      const acting = actingOf(ctx.caller(request));
      const { agent, storefrontPublicId } = await db.transaction((tx) =>
        catalog.createSalesAgent(tx, acting, request.params.storefrontId, {
          ...request.body,
          name: request.body.name.trim(),
        }),
      );
      return reply.code(201).send(ctx.ok(salesAgentView(agent, storefrontPublicId, null)));
    },
  );

  app.get(
    '/api/v2/storefront/sales-agents/:salesAgentId/pricing-rule',
    {
      onRequest: read,
      schema: {
        operationId: 'getPricingRule',
        tags: ['storefront'],
        summary: "A sales agent's pricing rule (404 when none is configured)",
        security,
        params: AgentParams,
        response: { 200: Envelope(PricingRule), ...idErrors },
      },
    },
    async (request) => {
      const rule = await catalog.pricingRuleOf(
        ctx.caller(request).organization!.id,
        request.params.salesAgentId,
      );
      if (!rule) throw notFound('Pricing rule of sales agent', request.params.salesAgentId);
      return ctx.ok({
        id: rule.publicId,
        salesAgentId: request.params.salesAgentId,
        platformFeeBps: rule.platformFeeBps,
        updatedAt: rule.updatedAt.toISOString(),
      });
    },
  );

  app.put(
    '/api/v2/storefront/sales-agents/:salesAgentId/pricing-rule',
    {
      onRequest: write,
      schema: {
        operationId: 'setPricingRule',
        tags: ['storefront'],
        summary: "Set a sales agent's pricing rule: the platform fee in basis points of media spend",
        security,
        params: AgentParams,
        body: Type.Object(
          { platformFeeBps: Int4({ minimum: 0, maximum: 10_000 }) },
          { additionalProperties: false, examples: [{ platformFeeBps: 1500 }] },
        ),
        response: { 200: Envelope(PricingRule), ...writeErrors },
      },
    },
    async (request) => {
      const acting = actingOf(ctx.caller(request));
      const rule = await db.transaction((tx) =>
        catalog.setPricingRule(tx, acting, request.params.salesAgentId, request.body.platformFeeBps),
      );
      return ctx.ok({
        id: rule.publicId,
        salesAgentId: request.params.salesAgentId,
        platformFeeBps: rule.platformFeeBps,
        updatedAt: rule.updatedAt.toISOString(),
      });
    },
  );

  app.get(
    '/api/v2/storefront/storefronts/:storefrontId/products',
    {
      onRequest: read,
      schema: {
        operationId: 'listStorefrontProducts',
        tags: ['storefront'],
        summary: `The products of a storefront, in creation order (take 1-${LIST_CAPS.storefrontProducts})`,
        security,
        params: StorefrontParams,
        querystring: PageQuerystring(LIST_CAPS.storefrontProducts),
        response: { 200: ListEnvelope(Product), ...idErrors },
      },
    },
    async (request) => {
      const sf = await catalog.storefront(ctx.caller(request).organization!.id, request.params.storefrontId);
      const take = request.query.take ?? DEFAULT_TAKE;
      const skip = request.query.skip ?? 0;
      const rows = await db
        .select({ row: products, total: sql<number>`count(*) over ()`.mapWith(Number) })
        .from(products)
        .where(eq(products.storefrontId, sf.id))
        .orderBy(asc(products.id))
        .limit(take)
        .offset(skip);
      const total =
        rows[0]?.total ??
        (skip === 0
          ? 0
          : (
              await db
                .select({ n: count() })
                .from(products)
                .where(and(eq(products.storefrontId, sf.id)))
            )[0]!.n);
      return ctx.list(
        rows.map((r) => productView(r.row, sf.publicId)),
        { skip, take, total },
      );
    },
  );

  app.post(
    '/api/v2/storefront/storefronts/:storefrontId/products',
    {
      onRequest: write,
      schema: {
        operationId: 'createProduct',
        tags: ['storefront'],
        summary:
          "Add a product (AdCP product: formats, pricing options in the storefront's currency, delivery type, publisher properties)",
        security,
        params: StorefrontParams,
        body: Type.Object(
          {
            name: Name,
            description: Type.String({ minLength: 1, maxLength: 5000 }),
            deliveryType: StringEnum(DELIVERY_TYPES),
            channels: Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: 20 }),
            formatIds: Type.Array(FormatIdSchema, { minItems: 1, maxItems: 50 }),
            publisherProperties: Type.Array(PublisherPropertySchema, { minItems: 1, maxItems: 50 }),
            pricingOptions: Type.Array(PricingOptionSchema, { minItems: 1, maxItems: 20 }),
            salesAgentId: Type.Optional(PublicId),
          },
          {
            additionalProperties: false,
            examples: [
              {
                name: 'Homepage takeover',
                description: 'The homepage for a day',
                deliveryType: 'guaranteed',
                channels: ['display'],
                formatIds: [{ agentUrl: 'https://creative.adcontextprotocol.org', id: 'display_300x250' }],
                publisherProperties: [{ publisherDomain: 'news.example', selectionType: 'all' }],
                pricingOptions: [
                  { pricingOptionId: 'cpm_usd', pricingModel: 'cpm', currency: 'USD', fixedPrice: 12.5 },
                ],
              },
            ],
          },
        ),
        response: { 201: Envelope(Product), ...writeErrors },
      },
    },
    async (request, reply) => {
      const acting = actingOf(ctx.caller(request));
      const { product, storefrontPublicId } = await db.transaction((tx) =>
        catalog.createProduct(tx, acting, request.params.storefrontId, {
          ...request.body,
          name: request.body.name.trim(),
        }),
      );
      return reply.code(201).send(ctx.ok(productView(product, storefrontPublicId)));
    },
  );

  app.get(
    '/api/v2/storefront/account-links',
    {
      onRequest: read,
      schema: {
        operationId: 'listAccountLinks',
        tags: ['storefront'],
        summary: `Account links buyers requested on your storefronts, in creation order (take 1-${LIST_CAPS.accountLinks})`,
        security,
        querystring: PageQuerystring(LIST_CAPS.accountLinks),
        response: { 200: ListEnvelope(AdvertiserAccount), ...idErrors },
      },
    },
    async (request) => {
      const take = request.query.take ?? DEFAULT_TAKE;
      const skip = request.query.skip ?? 0;
      const result = await lists.accountLinks({
        organizationId: ctx.caller(request).organization!.id,
        take,
        skip,
      });
      return ctx.list(result.items, { skip, take, total: result.total });
    },
  );

  app.post(
    '/api/v2/storefront/account-links/:accountId/decision',
    {
      onRequest: write,
      schema: {
        operationId: 'decideAccountLink',
        tags: ['storefront'],
        summary:
          'Decide an account link: approve / reject (pending_approval), suspend, reactivate, require_payment, mark_paid, close',
        security,
        params: Type.Object({ accountId: PublicId }),
        body: Type.Object(
          {
            decision: StringEnum(Object.keys(ACCOUNT_LINK_DECISIONS) as AccountLinkDecision[]),
            balanceDue: Type.Optional(
              Type.Number({
                minimum: 0,
                maximum: 100_000_000_000,
                description:
                  'With `require_payment` (required there): the outstanding balance, decimal major units',
              }),
            ),
          },
          { additionalProperties: false, examples: [{ decision: 'approve' }] },
        ),
        response: { 200: Envelope(AdvertiserAccount), ...writeErrors },
      },
    },
    async (request) => {
      const acting = actingOf(ctx.caller(request));
      const { row } = await db.transaction((tx) =>
        catalog.decideAccountLink(
          tx,
          acting,
          request.params.accountId,
          request.body.decision,
          request.body.balanceDue,
        ),
      );
      return ctx.ok(advertiserAccountView(row, await catalog.accountLinkRefs(row.id)));
    },
  );

  app.post(
    '/api/v2/storefront/account-links/:accountId/payments',
    {
      onRequest: write,
      schema: {
        operationId: 'recordAccountLinkPayment',
        tags: ['storefront'],
        summary:
          'Record a payment on an account link: the balance goes down; payment_required becomes active when it is cleared',
        security,
        params: Type.Object({ accountId: PublicId }),
        body: Type.Object(
          {
            amount: Type.Number({ minimum: 0, maximum: 100_000_000_000, description: 'Decimal major units' }),
          },
          { additionalProperties: false, examples: [{ amount: 250 }] },
        ),
        response: { 200: Envelope(AdvertiserAccount), ...writeErrors },
      },
    },
    async (request) => {
      const acting = actingOf(ctx.caller(request));
      const row = await db.transaction((tx) =>
        catalog.recordAccountPayment(tx, acting, request.params.accountId, request.body.amount),
      );
      return ctx.ok(advertiserAccountView(row, await catalog.accountLinkRefs(row.id)));
    },
  );
}
