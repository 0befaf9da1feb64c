/** The HTTP layer of the odds service: one plugin per resource, the WebSocket stream and the operator routes. */
import type { ServiceApp } from '../../../platform/http.ts';
import { type OddsRouteDeps, oddsRouteContext } from './context.ts';
import { registerEventRoutes } from './events.ts';
import { registerMarketRoutes } from './markets.ts';
import { registerReferenceRoutes } from './reference.ts';
import { registerStreamRoute } from './stream.ts';

export { registerOpsRoutes } from './ops.ts';
export { matchesFilter } from './stream.ts';

/**
 * The public API under `/api/v2` (spec F, "Events" and "Other paths mentioned"): events by sport and day, an event,
 * its openers and closing snapshots, teams, players, a line's market history, the delta feed, reference lists and
 * the WebSocket stream (heartbeats every `heartbeatMs`). Events answers are computed once per change-feed generation
 * and served from the cache until the next change.
 */
export async function registerOddsRoutes(
  app: ServiceApp,
  deps: OddsRouteDeps & { heartbeatMs: number },
): Promise<void> {
  const ctx = oddsRouteContext(app, deps);
  registerEventRoutes(app, ctx);
  registerMarketRoutes(app, ctx);
  registerReferenceRoutes(app, ctx);
  await registerStreamRoute(app, ctx, deps.heartbeatMs);
}
