/**
 * Webhooks of the tenant (v2): create, list, read, update, delete, rotate the secret, check connectivity.
 */
import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../../platform/http.ts';
import {
  ConnectivityBody,
  ConnectivityResponse,
  CreateWebhookBody,
  DeleteWebhookQuery,
  UpdateWebhookBody,
  WebhookParams,
  WebhookResponse,
  WebhookSchema,
  WebhookWithSecretResponse,
  withContext,
} from '../entity-events-schemas.ts';
import { toWebhookView } from '../webhooks.ts';
import { type EntityEventsRouteContext, errors, ok, security } from './context.ts';

/** Registers the webhook routes. */
export function registerWebhookRoutes(app: ServiceApp, ctx: EntityEventsRouteContext) {
  const { authenticate, authenticateKey, connectivityLimit, who } = ctx;
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
      reply.code(201).send(ok(request, await ctx.webhooks.create(who(request), request.body))),
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
    async (request) => ok(request, { webhooks: await ctx.webhooks.list(who(request)) }),
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
      ok(request, toWebhookView(await ctx.webhooks.getRow(who(request), request.params.webhook_id))),
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
      ok(request, await ctx.webhooks.update(who(request), request.params.webhook_id, request.body)),
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
        await ctx.webhooks.delete(who(request), request.params.webhook_id, request.query.force === true),
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
    async (request) => ok(request, await ctx.webhooks.rotateSecret(who(request), request.params.webhook_id)),
  );

  // check_connectivity takes "no body" for the basic check: no body, or an empty body sent with a JSON content type
  // (a client that sets Content-Type without a body), is the basic check; any other body is parsed as JSON as usual.
  app.post(
    '/v2/webhooks/:webhook_id/check_connectivity',
    {
      // One limit per request (the first rate-limit hook of a route runs, @fastify/rate-limit): this route counts
      // against its tenant's connectivity budget instead of the key's.
      onRequest: [authenticateKey, connectivityLimit],
      config: { optionalJsonBody: true },
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
      const outcomes = await ctx.delivery.checkConnectivity(
        who(request),
        request.params.webhook_id,
        simulation,
      );
      const extra = simulation ? { webhook_responses: outcomes } : { webhook_response: outcomes[0] };
      return ok(request, { webhook_id: request.params.webhook_id, events_sent: outcomes.length }, extra);
    },
  );
}
