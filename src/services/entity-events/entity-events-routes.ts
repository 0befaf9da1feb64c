import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { ServiceApp } from '../../platform/http.ts';
import { parsePage } from '../../platform/pagination.ts';
import type { EntityType } from './catalogue.ts';
import type { DeliveryEngine } from './delivery.ts';
import type { EnrollmentService } from './enrollments.ts';
import { markRequestStart, responseContext } from './entity-events-errors.ts';
import {
  AttemptSchema,
  ConnectivityBody,
  ConnectivityResponse,
  CreateWebhookBody,
  DeleteWebhookQuery,
  DeliveryListQuery,
  DeliveryParams,
  DeliverySchema,
  EnrollmentParams,
  EnrollmentResponse,
  EnrollmentSchema,
  ErrorBody,
  EventSchema,
  enrollmentBody,
  fetchEventsBody,
  LegacyWebhookBody,
  PageQuery,
  PageSchema,
  UpdateWebhookBody,
  updateEnrollmentBody,
  v1EnrollmentBody,
  WebhookParams,
  WebhookResponse,
  WebhookSchema,
  WebhookWithSecretResponse,
  withContext,
} from './entity-events-schemas.ts';
import type { EventStore } from './events.ts';
import { API_KEY_HEADER, type TenantDirectory, type TenantPrincipal } from './tenants.ts';
import { toWebhookView, type WebhookService } from './webhooks.ts';

declare module 'fastify' {
  interface FastifyRequest {
    entityEventsTenant?: TenantPrincipal;
  }
}

export interface RouteDeps {
  tenants: TenantDirectory;
  webhooks: WebhookService;
  enrollments: EnrollmentService;
  events: EventStore;
  delivery: DeliveryEngine;
}

const security = [{ apiKey: [] }];
const errors = {
  400: ErrorBody,
  401: ErrorBody,
  404: ErrorBody,
  409: ErrorBody,
  422: ErrorBody,
  429: ErrorBody,
};

const who = (request: FastifyRequest): TenantPrincipal => {
  if (!request.entityEventsTenant) throw new Error('route without authentication');
  return request.entityEventsTenant;
};
const ok = <T extends object>(request: FastifyRequest, body: T, extra: Record<string, unknown> = {}) => ({
  ...body,
  response_context: responseContext(request, 'success', extra),
});
const pageOut = (p: { limit: number; offset: number; total: number; hasMore: boolean }) => ({
  limit: p.limit,
  offset: p.offset,
  total: p.total,
  has_more: p.hasMore,
});

/**
 * Public routes: `/v2` webhooks, enrollments, fetch-events and delivery logs, and the earlier `/v1` partner-level
 * webhook and enrollments. Every answer carries `response_context`. The tenant comes from the `api_key` header only.
 */
export async function registerEntityEventsRoutes(app: ServiceApp, deps: RouteDeps) {
  app.addHook('onRequest', async (request) => {
    markRequestStart(request);
  });
  const authenticate = async (request: FastifyRequest) => {
    const header = request.headers[API_KEY_HEADER];
    request.entityEventsTenant = await deps.tenants.authenticate(Array.isArray(header) ? header[0] : header);
  };

  // ---- webhooks -------------------------------------------------------------------------------------------
  app.post(
    '/v2/webhooks',
    {
      onRequest: authenticate,
      schema: {
        operationId: 'createWebhook',
        tags: ['webhooks'],
        summary: 'Create a webhook (answers its secret once)',
        description:
          'Names are unique within the tenant (409 `webhook_name_taken`); at most 10 webhooks per tenant (422 ' +
          '`webhook_limit_reached`). `headers` are `Header-Name: value` strings sent with every delivery.',
        security,
        body: CreateWebhookBody,
        response: { 201: WebhookWithSecretResponse, ...errors },
      },
    },
    async (request, reply) =>
      reply.code(201).send(ok(request, await deps.webhooks.create(who(request), request.body))),
  );

  app.get(
    '/v2/webhooks',
    {
      onRequest: authenticate,
      schema: {
        operationId: 'listWebhooks',
        tags: ['webhooks'],
        summary: 'List webhooks, including the read-only legacy partner webhook (`legacy: true`)',
        security,
        response: { 200: withContext({ webhooks: Type.Array(WebhookSchema) }), ...errors },
      },
    },
    async (request) => ok(request, { webhooks: await deps.webhooks.list(who(request)) }),
  );

  app.get(
    '/v2/webhooks/:webhook_id',
    {
      onRequest: authenticate,
      schema: {
        operationId: 'getWebhook',
        tags: ['webhooks'],
        summary: 'Read a webhook (never its secret)',
        security,
        params: WebhookParams,
        response: { 200: WebhookResponse, ...errors },
      },
    },
    async (request) =>
      ok(request, toWebhookView(await deps.webhooks.getRow(who(request), request.params.webhook_id))),
  );

  app.patch(
    '/v2/webhooks/:webhook_id',
    {
      onRequest: authenticate,
      schema: {
        operationId: 'updateWebhook',
        tags: ['webhooks'],
        summary: 'Update a webhook; `status: disabled` keeps the destination and stops deliveries',
        security,
        params: WebhookParams,
        body: UpdateWebhookBody,
        response: { 200: WebhookResponse, ...errors },
      },
    },
    async (request) =>
      ok(request, await deps.webhooks.update(who(request), request.params.webhook_id, request.body)),
  );

  app.delete(
    '/v2/webhooks/:webhook_id',
    {
      onRequest: authenticate,
      schema: {
        operationId: 'deleteWebhook',
        tags: ['webhooks'],
        summary: 'Delete a webhook; `force=true` pauses the active enrollments that reference it',
        description: 'Without `force`, 409 `webhook_in_use` while active enrollments reference the webhook.',
        security,
        params: WebhookParams,
        querystring: DeleteWebhookQuery,
        response: {
          200: withContext({ webhook_id: Type.String(), affected_enrollment_ids: Type.Array(Type.String()) }),
          ...errors,
        },
      },
    },
    async (request) =>
      ok(
        request,
        await deps.webhooks.delete(who(request), request.params.webhook_id, request.query.force === true),
      ),
  );

  app.post(
    '/v2/webhooks/:webhook_id/rotate_secret',
    {
      onRequest: authenticate,
      schema: {
        operationId: 'rotateWebhookSecret',
        tags: ['webhooks'],
        summary: 'Issue a new secret for this webhook only',
        security,
        params: WebhookParams,
        response: { 200: WebhookWithSecretResponse, ...errors },
      },
    },
    async (request) => ok(request, await deps.webhooks.rotateSecret(who(request), request.params.webhook_id)),
  );

  // check_connectivity takes "no body" for the basic check: in this scope an empty JSON body (a client that sets
  // Content-Type without a body) is accepted as no body; any other body is parsed as JSON as usual.
  await app.register(async (plugin) => {
    const scoped = plugin as unknown as ServiceApp;
    scoped.removeContentTypeParser('application/json');
    scoped.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, text, done) => {
      const raw = typeof text === 'string' ? text : text.toString('utf8');
      if (raw.trim() === '') return done(null, undefined);
      try {
        done(null, JSON.parse(raw));
      } catch {
        done(Object.assign(new Error('Body is not valid JSON'), { statusCode: 400 }), undefined);
      }
    });
    scoped.post(
      '/v2/webhooks/:webhook_id/check_connectivity',
      {
        onRequest: authenticate,
        // "No body" is the basic check: treat an absent body as {} before validation.
        preValidation: async (request) => {
          if (request.body === undefined || request.body === null) request.body = {};
        },
        schema: {
          operationId: 'checkWebhookConnectivity',
          tags: ['webhooks'],
          summary: 'Send a signed test event (or 1-10 simulated events) now and report the receiver outcome',
          description:
            'The receiver outcome is in `response_context.webhook_response` (one test event) or ' +
            '`response_context.webhook_responses` (simulation): status code, duration, error.',
          security,
          params: WebhookParams,
          body: ConnectivityBody,
          response: { 200: ConnectivityResponse, ...errors },
        },
      },
      async (request) => {
        const simulation = request.body?.simulation;
        const outcomes = await deps.delivery.checkConnectivity(
          who(request),
          request.params.webhook_id,
          simulation,
        );
        const extra = simulation ? { webhook_responses: outcomes } : { webhook_response: outcomes[0] };
        return ok(request, { webhook_id: request.params.webhook_id, events_sent: outcomes.length }, extra);
      },
    );
  });

  app.get(
    '/v2/webhooks/:webhook_id/deliveries',
    {
      onRequest: authenticate,
      schema: {
        operationId: 'listWebhookDeliveries',
        tags: ['deliveries'],
        summary: 'Deliveries to a webhook, newest first',
        security,
        params: WebhookParams,
        querystring: DeliveryListQuery,
        response: {
          200: withContext({ deliveries: Type.Array(DeliverySchema), page: PageSchema }),
          ...errors,
        },
      },
    },
    async (request) => {
      const page = parsePage(request.query);
      const r = await deps.delivery.list(who(request), request.params.webhook_id, page, request.query.status);
      return ok(request, { deliveries: r.items, page: pageOut(r.page) });
    },
  );

  app.get(
    '/v2/webhooks/:webhook_id/deliveries/:delivery_id',
    {
      onRequest: authenticate,
      schema: {
        operationId: 'getWebhookDelivery',
        tags: ['deliveries'],
        summary: 'A delivery with its attempt log (time, status code, duration, error, next attempt)',
        security,
        params: DeliveryParams,
        response: {
          200: withContext({ ...DeliverySchema.properties, attempts: Type.Array(AttemptSchema) }),
          ...errors,
        },
      },
    },
    async (request) =>
      ok(
        request,
        await deps.delivery.get(who(request), request.params.webhook_id, request.params.delivery_id),
      ),
  );

  app.post(
    '/v2/webhooks/:webhook_id/deliveries/:delivery_id/replay',
    {
      onRequest: authenticate,
      schema: {
        operationId: 'replayWebhookDelivery',
        tags: ['deliveries'],
        summary: 'Replay a failed or cancelled delivery now (fresh retry schedule)',
        security,
        params: DeliveryParams,
        response: { 202: withContext(DeliverySchema.properties), ...errors },
      },
    },
    async (request, reply) =>
      reply
        .code(202)
        .send(
          ok(
            request,
            await deps.delivery.replay(who(request), request.params.webhook_id, request.params.delivery_id),
          ),
        ),
  );

  // ---- enrollments and fetch-events, per entity type -----------------------------------------------------
  for (const entity of ['business', 'prospect'] as const satisfies readonly EntityType[]) {
    const plural = entity === 'business' ? 'businesses' : 'prospects';
    const Entity = entity === 'business' ? 'Business' : 'Prospect';
    const idsKey = `${entity}_ids`;
    const base = `/v2/${plural}/events/enrollments`;

    app.post(
      base,
      {
        onRequest: authenticate,
        schema: {
          operationId: `create${Entity}Enrollment`,
          tags: ['enrollments'],
          summary: `Enroll ${plural} (up to 1,000 ids per request) for event types, delivered to a webhook`,
          description:
            '`webhook_id` missing, of another scope or not active: 422; unknown: 404. Event types are checked ' +
            'against the catalogue of this entity type (400 `unknown_event_type`).',
          security,
          body: enrollmentBody(entity),
          response: { 201: EnrollmentResponse, ...errors },
        },
      },
      async (request, reply) => {
        const body = request.body as Record<string, unknown> & {
          enrollment_key: string;
          event_types: string[];
        };
        const created = await deps.enrollments.create(who(request), entity, {
          enrollment_key: body.enrollment_key,
          webhook_id: body.webhook_id,
          event_types: body.event_types,
          ids: body[idsKey],
        });
        return reply.code(201).send(ok(request, created));
      },
    );

    app.get(
      base,
      {
        onRequest: authenticate,
        schema: {
          operationId: `list${Entity}Enrollments`,
          tags: ['enrollments'],
          summary: `List ${entity} enrollments (oldest first, paged)`,
          security,
          querystring: PageQuery,
          response: {
            200: withContext({ enrollments: Type.Array(EnrollmentSchema), page: PageSchema }),
            ...errors,
          },
        },
      },
      async (request) => {
        const r = await deps.enrollments.list(who(request), entity, parsePage(request.query));
        return ok(request, { enrollments: r.items, page: pageOut(r.page) });
      },
    );

    app.get(
      `${base}/:enrollment_id`,
      {
        onRequest: authenticate,
        schema: {
          operationId: `get${Entity}Enrollment`,
          tags: ['enrollments'],
          summary: `Read a ${entity} enrollment`,
          security,
          params: EnrollmentParams,
          response: { 200: EnrollmentResponse, ...errors },
        },
      },
      async (request) =>
        ok(request, await deps.enrollments.get(who(request), entity, request.params.enrollment_id)),
    );

    app.patch(
      `${base}/:enrollment_id`,
      {
        onRequest: authenticate,
        schema: {
          operationId: `update${Entity}Enrollment`,
          tags: ['enrollments'],
          summary: `Update a ${entity} enrollment (webhook, key, event types, entity list)`,
          description:
            `\`${idsKey}\` replaces the list; \`add_${idsKey}\` / \`remove_${idsKey}\` change it (each at most ` +
            '1,000). Re-pointing a paused enrollment at an active webhook makes it active again.',
          security,
          params: EnrollmentParams,
          body: updateEnrollmentBody(entity),
          response: { 200: EnrollmentResponse, ...errors },
        },
      },
      async (request) => {
        const body = request.body as Record<string, unknown> & {
          enrollment_key?: string;
          event_types?: string[];
        };
        return ok(
          request,
          await deps.enrollments.update(who(request), entity, request.params.enrollment_id, {
            enrollment_key: body.enrollment_key,
            webhook_id: body.webhook_id,
            event_types: body.event_types,
            ids: body[idsKey],
            addIds: body[`add_${idsKey}`],
            removeIds: body[`remove_${idsKey}`],
          }),
        );
      },
    );

    app.delete(
      `${base}/:enrollment_id`,
      {
        onRequest: authenticate,
        schema: {
          operationId: `delete${Entity}Enrollment`,
          tags: ['enrollments'],
          summary: `Delete a ${entity} enrollment`,
          security,
          params: EnrollmentParams,
          response: { 200: withContext({ enrollment_id: Type.String() }), ...errors },
        },
      },
      async (request) =>
        ok(request, await deps.enrollments.delete(who(request), entity, request.params.enrollment_id)),
    );

    app.post(
      `/v2/${plural}/events`,
      {
        onRequest: authenticate,
        schema: {
          operationId: `fetch${Entity}Events`,
          tags: ['events'],
          summary: `Fetch stored ${entity} events for up to 40 ids, filtered by type and time, newest first`,
          security,
          body: fetchEventsBody(entity),
          response: { 200: withContext({ events: Type.Array(EventSchema), page: PageSchema }), ...errors },
        },
      },
      async (request) => {
        const body = request.body as Record<string, unknown> & {
          event_types?: string[];
          from?: string;
          to?: string;
          limit?: number;
          offset?: number;
        };
        const page = parsePage({ limit: body.limit, offset: body.offset }, { defaultLimit: 50 });
        const r = await deps.events.fetch(
          entity,
          {
            ids: body[idsKey],
            idsField: idsKey,
            event_types: body.event_types,
            from: body.from,
            to: body.to,
          },
          page,
        );
        return ok(request, { events: r.items, page: pageOut(r.page) });
      },
    );

    // ---- v1 (earlier version): enrollments without webhook_id, delivered to the legacy partner webhook ----
    app.post(
      `/v1/${plural}/events/enrollments`,
      {
        onRequest: authenticate,
        schema: {
          operationId: `createV1${Entity}Enrollment`,
          tags: ['v1'],
          summary: `v1: enroll ${plural}; delivered to the partner-level legacy webhook`,
          security,
          body: v1EnrollmentBody(entity),
          response: { 201: EnrollmentResponse, ...errors },
        },
      },
      async (request, reply) => {
        const body = request.body as Record<string, unknown> & {
          enrollment_key: string;
          event_types: string[];
        };
        const created = await deps.enrollments.create(
          who(request),
          entity,
          { enrollment_key: body.enrollment_key, event_types: body.event_types, ids: body[idsKey] },
          'v1',
        );
        return reply.code(201).send(ok(request, created));
      },
    );
  }

  app.post(
    '/v1/webhooks',
    {
      onRequest: authenticate,
      schema: {
        operationId: 'registerV1Webhook',
        tags: ['v1'],
        summary: 'v1: register the single partner-level webhook (overrides the previous one, new secret)',
        security,
        body: LegacyWebhookBody,
        response: { 201: WebhookWithSecretResponse, ...errors },
      },
    },
    async (request, reply) =>
      reply.code(201).send(ok(request, await deps.webhooks.registerLegacy(who(request), request.body))),
  );

  app.get(
    '/v1/webhooks',
    {
      onRequest: authenticate,
      schema: {
        operationId: 'getV1Webhook',
        tags: ['v1'],
        summary: 'v1: the partner-level webhook (never its secret)',
        security,
        response: { 200: withContext({ webhook: Type.Union([WebhookSchema, Type.Null()]) }), ...errors },
      },
    },
    async (request) => ok(request, { webhook: (await deps.webhooks.getLegacy(who(request))) ?? null }),
  );
}
