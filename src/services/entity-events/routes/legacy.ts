/**
 * The earlier version's single partner-level webhook (`/v1/webhooks`).
 */
import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../../platform/http.ts';
import {
  LegacyWebhookBody,
  WebhookSchema,
  WebhookWithSecretResponse,
  withContext,
} from '../entity-events-schemas.ts';
import { type EntityEventsRouteContext, errors, ok, security } from './context.ts';

/** Registers the v1 webhook routes. */
export function registerLegacyWebhookRoutes(app: ServiceApp, ctx: EntityEventsRouteContext) {
  const { authenticate, who } = ctx;

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
      reply.code(201).send(ok(request, await ctx.webhooks.registerLegacy(who(request), request.body))),
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
    async (request) => ok(request, { webhook: (await ctx.webhooks.getLegacy(who(request))) ?? null }),
  );
}
