import { Type } from '@sinclair/typebox';
import { eq } from 'drizzle-orm';
import type { Clock } from '../../../platform/clock.ts';
import { registerCredentialRoutes } from '../../../platform/credential-routes.ts';
import type { Db } from '../../../platform/database.ts';
import type { ServiceApp } from '../../../platform/http.ts';
import { apiKeys } from '../db/schema.ts';
import type { DeliveryEngine } from '../delivery.ts';
import { responseContext } from '../entity-events-errors.ts';
import { ErrorBody, EventSchema, ResponseContextSchema, withContext } from '../entity-events-schemas.ts';
import type { EventStore } from '../events.ts';
import type { EntityEventSimulator } from '../simulator.ts';
import { createTenant, issueKey, type KeyStore } from '../tenants.ts';

const ops = { tags: ['operator'], security: [{ operatorToken: [] }] };
const errors = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody };

/**
 * Operator routes (`/_ops`, Bearer OPERATOR_TOKEN): tenants and keys, the event ingest (the outside world's data
 * feed), the delivery sweeper and the simulator.
 */
export async function registerOpsRoutes(
  app: ServiceApp,
  deps: {
    keys: KeyStore;
    db: Db;
    clock: Clock;
    events: EventStore;
    delivery: DeliveryEngine;
    simulator: EntityEventSimulator;
  },
) {
  const ok = <T extends object>(request: { id: string }, body: T) => ({
    ...body,
    response_context: responseContext(request, 'success'),
  });

  app.post(
    '/_ops/tenants',
    {
      schema: {
        ...ops,
        operationId: 'opsCreateTenant',
        summary:
          'Create a tenant (and a partner unless partner_id is given) with a first API key (shown once)',
        body: Type.Object(
          { name: Type.String({ minLength: 1, maxLength: 200 }), partner_id: Type.Optional(Type.String()) },
          { additionalProperties: false },
        ),
        response: {
          201: withContext({
            tenant_id: Type.String(),
            partner_id: Type.String(),
            api_key: Type.String(),
            key_id: Type.Integer(),
          }),
          ...errors,
        },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          ok(
            request,
            await deps.db.transaction((tx) =>
              createTenant(
                deps.keys,
                tx,
                { name: request.body.name, partnerId: request.body.partner_id },
                deps.clock.now(),
              ),
            ),
          ),
        ),
  );

  registerCredentialRoutes(app, {
    store: deps.keys,
    db: deps.db,
    attributes: { tenantId: Type.String() },
    issueFields: { tenantId: Type.String({ minLength: 1, maxLength: 100 }) },
    issue: (tx, body) => issueKey(deps.keys, tx, body),
    filters: {
      fields: { tenantId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) },
      where: async (query) =>
        query.tenantId === undefined ? undefined : eq(apiKeys.tenantId, query.tenantId),
    },
    errorBody: ErrorBody,
    envelope: {
      properties: { response_context: ResponseContextSchema },
      fields: (request) => ({ response_context: responseContext(request, 'success') }),
    },
  });

  app.post(
    '/_ops/events',
    {
      schema: {
        ...ops,
        operationId: 'opsIngestEvents',
        summary: 'Store a batch of events (all-or-nothing, at most 1,000) and fan them out to deliveries',
        description:
          'Each item: `entity_type` (business|prospect), `entity_id` (or `business_id`/`prospect_id`), ' +
          '`event_name` from the catalogue, `event_time` (RFC 3339), `data` with the fields its type needs.',
        body: Type.Object({ events: Type.Array(Type.Unknown()) }, { additionalProperties: false }),
        response: {
          201: withContext({ events: Type.Array(EventSchema), deliveries_created: Type.Integer() }),
          ...errors,
        },
      },
    },
    async (request, reply) =>
      reply.code(201).send(ok(request, await deps.events.ingest(request.body.events, 'operator'))),
  );

  app.post(
    '/_ops/deliveries/sweep',
    {
      schema: {
        ...ops,
        operationId: 'opsSweepDeliveries',
        summary: 'Queue every delivery due by the service clock (also runs every minute)',
        response: { 200: withContext({ queued: Type.Integer() }), ...errors },
      },
    },
    async (request) => ok(request, { queued: await deps.delivery.sweep() }),
  );

  app.get(
    '/_ops/deliveries/stats',
    {
      schema: {
        ...ops,
        operationId: 'opsDeliveryStats',
        summary: 'Delivery counts by status',
        response: {
          200: withContext({ counts: Type.Record(Type.String(), Type.Integer()) }),
          ...errors,
        },
      },
    },
    async (request) => ok(request, { counts: await deps.delivery.stats() }),
  );

  app.put(
    '/_ops/simulator',
    {
      schema: {
        ...ops,
        operationId: 'opsSetSimulatorRate',
        summary: 'Set the simulator rate for every instance (events per minute; 0 stops it)',
        body: Type.Object(
          { events_per_minute: Type.Number({ minimum: 0, maximum: 60000 }) },
          { additionalProperties: false },
        ),
        response: { 200: withContext({ events_per_minute: Type.Number() }), ...errors },
      },
    },
    async (request) =>
      ok(request, { events_per_minute: await deps.simulator.setRate(request.body.events_per_minute) }),
  );

  app.post(
    '/_ops/simulator/produce',
    {
      schema: {
        ...ops,
        operationId: 'opsSimulatorProduce',
        summary: 'Produce events now for random enrolled entities (through the normal ingest and fan-out)',
        body: Type.Object(
          { count: Type.Integer({ minimum: 1, maximum: 1000 }) },
          { additionalProperties: false },
        ),
        response: { 200: withContext({ produced: Type.Integer() }), ...errors },
      },
    },
    async (request) => ok(request, { produced: await deps.simulator.produce(request.body.count) }),
  );
}
