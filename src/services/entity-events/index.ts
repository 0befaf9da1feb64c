import path from 'node:path';
import type { ServiceDefinition } from '../../platform/service.ts';
import { DeliveryEngine } from './delivery.ts';
import { EnrollmentService } from './enrollments.ts';
import { readEntityEventsConfig } from './entity-events-config.ts';
import { formatEntityEventsError } from './entity-events-errors.ts';
import { deliverTask, sweepDueTask } from './entity-events-jobs.ts';
import { EventStore } from './events.ts';
import { registerEntityEventsRoutes, registerOpsRoutes } from './routes/index.ts';
import { EntityEventSimulator } from './simulator.ts';
import { API_KEY_HEADER, createKeyStore, createTenant } from './tenants.ts';
import { WebhookService } from './webhooks.ts';

/**
 * The entity-events webhook service (spec 002, section G; anchor: a business-data provider's v2 events API):
 * tenant-scoped webhooks and enrollments, an event store fed by the operator API and a simulator, signed webhook
 * delivery with retries and an attempt log, fetch-events, and the earlier v1 partner-level webhook.
 */
export const entityEventsService: ServiceDefinition = {
  name: 'entity-events',
  envPrefix: 'ENTITY_EVENTS',
  title: 'Entity-events webhook API',
  version: '2.0.0',
  description:
    'Delivers business and prospect events by signed webhook to tenant-scoped destinations according to ' +
    'enrollments, and serves the events on demand. Every answer carries `response_context`; errors add ' +
    '`error: {code, message, details?}`. Management calls authenticate with the `api_key` header. Every delivery ' +
    'POST carries `X-Timestamp` and `X-Signature` (HMAC-SHA256 of `<timestamp>.<raw body>`) and `X-Delivery-Id`, ' +
    'the same on every attempt of one delivery: the de-duplication key of at-least-once delivery (not signed; ' +
    '`event_id` + `enrollment_id` in the signed body identify the event across replays). A replay carries ' +
    '`X-Replay-Of`.',
  defaultPort: 4107,
  migrations: { schema: 'entity_events', folder: path.join(import.meta.dirname, 'db', 'migrations') },
  formatError: formatEntityEventsError,
  tags: [
    { name: 'webhooks', description: 'Webhook destinations of the tenant (v2)' },
    { name: 'enrollments', description: 'Which events of which entities go to which webhook' },
    { name: 'events', description: 'Fetch stored events on demand' },
    { name: 'deliveries', description: 'Delivery attempt log, replay and recovery' },
    { name: 'v1', description: 'The earlier version: one partner-level webhook' },
  ],
  securitySchemes: {
    apiKey: { type: 'apiKey', in: 'header', name: API_KEY_HEADER, description: 'Tenant API key' },
  },
  validateEnv: (env) => {
    readEntityEventsConfig(env);
  },
  setup(ctx) {
    const config = readEntityEventsConfig(ctx.config.env);
    const keys = createKeyStore(ctx);
    const webhooks = new WebhookService(ctx.db, ctx.clock, ctx.secrets);
    const enrollments = new EnrollmentService(ctx.db, ctx.clock);
    const events = new EventStore(ctx.db, ctx.clock);
    const delivery = new DeliveryEngine(ctx.db, ctx.clock, ctx.outbound, webhooks, config.deliveryTimeoutMs);
    const jobDeps = { delivery, logger: ctx.logger };
    const simulator = new EntityEventSimulator(
      ctx.db,
      ctx.clock,
      events,
      ctx.logger,
      config.simulatorEventsPerMinute,
    );
    return {
      async routes(app) {
        await registerEntityEventsRoutes(app, { keys, webhooks, enrollments, events, delivery });
        await registerOpsRoutes(app, { keys, db: ctx.db, clock: ctx.clock, events, delivery, simulator });
      },
      tasks: [deliverTask.with(jobDeps), sweepDueTask.with(jobDeps)],
      cron: [{ task: sweepDueTask, pattern: '* * * * *' }],
      async seed(tx) {
        const created = await createTenant(
          keys,
          tx,
          { name: 'Demo tenant', partnerName: 'Demo partner' },
          ctx.clock.now(),
        );
        return {
          apiKey: created.api_key,
          apiKeyHeader: API_KEY_HEADER,
          tenantId: created.tenant_id,
          partnerId: created.partner_id,
        };
      },
      async startBackground() {
        await simulator.start();
      },
      async stop() {
        await simulator.stop();
      },
    };
  },
};
