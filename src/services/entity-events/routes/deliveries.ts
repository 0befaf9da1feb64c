/**
 * The delivery log of a webhook: list, read one with its attempts, replay.
 */
import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../../platform/http.ts';
import { parsePage } from '../../../platform/pagination.ts';
import {
  AttemptSchema,
  DeliveryListQuery,
  DeliveryParams,
  DeliverySchema,
  PageSchema,
  WebhookParams,
  withContext,
} from '../entity-events-schemas.ts';
import { type EntityEventsRouteContext, errors, ok, pageOut, security } from './context.ts';

/** Registers the delivery routes. */
export function registerDeliveryRoutes(app: ServiceApp, ctx: EntityEventsRouteContext) {
  const { authenticate, who } = ctx;
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
      const r = await ctx.delivery.list(who(request), request.params.webhook_id, page, request.query.status);
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
        await ctx.delivery.get(who(request), request.params.webhook_id, request.params.delivery_id),
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
            await ctx.delivery.replay(who(request), request.params.webhook_id, request.params.delivery_id),
          ),
        ),
  );
}
