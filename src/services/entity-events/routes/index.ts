/** The HTTP layer of the entity-events service: one plugin per resource, and the operator routes. */
import type { ServiceApp } from '../../../platform/http.ts';
import { markRequestStart } from '../entity-events-errors.ts';
import { entityEventsRouteContext, type RouteDeps } from './context.ts';
import { registerDeliveryRoutes } from './deliveries.ts';
import { registerEntityRoutes } from './entities.ts';
import { registerLegacyWebhookRoutes } from './legacy.ts';
import { registerWebhookRoutes } from './webhooks.ts';

export { registerOpsRoutes } from './ops.ts';

/**
 * Public routes: `/v2` webhooks, enrollments, fetch-events and delivery logs, and the earlier `/v1` partner-level
 * webhook and enrollments. Every answer carries `response_context`. The tenant comes from the `api_key` header only.
 */
export function registerEntityEventsRoutes(app: ServiceApp, deps: RouteDeps): void {
  app.addHook('onRequest', async (request) => {
    markRequestStart(request);
  });
  const ctx = entityEventsRouteContext(app, deps);
  registerWebhookRoutes(app, ctx);
  registerDeliveryRoutes(app, ctx);
  registerEntityRoutes(app, ctx);
  registerLegacyWebhookRoutes(app, ctx);
}
