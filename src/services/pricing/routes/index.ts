/** The HTTP layer of the pricing service: one plugin per resource, and the operator routes. */
import type { ServiceApp } from '../../../platform/http.ts';
import type { KeyStore } from '../api-keys.ts';
import type { PricingCatalog } from '../catalog.ts';
import { pricingRouteContext } from './context.ts';
import { registerFeatureRoutes } from './features.ts';
import { registerPlanFeatureRoutes } from './plan-features.ts';
import { registerPlanRoutes } from './plans.ts';

export { registerOpsRoutes } from './ops.ts';

/**
 * The public API under `/api/v1/projects/{slug}`: the three operations of spec B (`GET /plans`,
 * `POST /plans/{planId}/duplicate`, `DELETE /features/{featureId}`) and the anchor's plan, feature and assignment
 * operations.
 */
export function registerPricingRoutes(
  app: ServiceApp,
  deps: { keys: KeyStore; catalog: PricingCatalog },
): void {
  const ctx = pricingRouteContext(app, deps);
  registerPlanRoutes(app, ctx);
  registerPlanFeatureRoutes(app, ctx);
  registerFeatureRoutes(app, ctx);
}
