/**
 * The delivery log of a webhook: list, read one with its attempts, replay one, recover the failed ones of a window.
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
  RecoverBody,
  RecoverResponse,
  WebhookParams,
  withContext,
} from '../entity-events-schemas.ts';
import { type EntityEventsRouteContext, errors, ok, pageOut, security } from './context.ts';

/** Registers the delivery routes. */
export function registerDeliveryRoutes(app: ServiceApp, ctx: EntityEventsRouteContext) {
  const { authenticate, authenticateKey, recoverLimit, who } = ctx;
  app.get(
    '/v2/webhooks/:webhook_id/deliveries',
    {
      onRequest: authenticate,
      schema: {
        operationId: 'listWebhookDeliveries',
        tags: ['deliveries'],
        summary: 'Deliveries to a webhook, newest first',
        description:
          'Every POST of a delivery carries its `delivery_id` as `X-Delivery-Id` (the same on each attempt): ' +
          'receivers de-duplicate on it.',
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
        description:
          'Attempts are `succeeded` or `failed`; while the delivery is `in_flight` its current attempt is listed ' +
          'last as `in_progress`, and one whose worker crashed is logged `interrupted` when the delivery is put back.',
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
        summary: 'Replay a failed or cancelled delivery now, as a new delivery (fresh retry schedule)',
        description:
          'The answer is the new delivery: its own `delivery_id` (sent as `X-Delivery-Id`) and `replay_of` (sent as ' +
          '`X-Replay-Of`). A delivery is replayed once (409 `delivery_already_replayed` names its replay).',
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

  app.post(
    '/v2/webhooks/:webhook_id/recover',
    {
      // One limit per request (the first rate-limit hook of a route runs): recover counts against its tenant's
      // budget of recover calls instead of the key's.
      onRequest: [authenticateKey, recoverLimit],
      schema: {
        operationId: 'recoverWebhookDeliveries',
        tags: ['deliveries'],
        summary: 'Re-send the failed and cancelled deliveries of a time window (at most 1,000 per call)',
        description:
          'Svix-style recovery: each `failed` or `cancelled` delivery created from `since` (at most 14 days ago) to ' +
          '`until` (default now) that was not replayed before is replayed as a new delivery, due now, oldest first. ' +
          'At most 1,000 per call; `remaining` counts the rest (call again with the same window). Calling again ' +
          'never re-sends a delivery twice (a delivery is replayed once). Deliveries whose enrollment no longer ' +
          'sends the event to this webhook are `skipped`. The webhook must be active (422 `webhook_not_active`). ' +
          'At most 5 calls a minute per tenant.',
        security,
        params: WebhookParams,
        body: RecoverBody,
        response: { 202: RecoverResponse, ...errors },
      },
    },
    async (request, reply) => {
      const r = await ctx.delivery.recover(who(request), request.params.webhook_id, request.body);
      return reply.code(202).send(ok(request, { webhook_id: request.params.webhook_id, ...r }));
    },
  );
}
