/**
 * The HTTP layer of the payments service (parse, authenticate, call the domain, format): one plugin per resource,
 * the hosted checkout page, OAuth and the operator routes. Merchant routes take `Authorization: Bearer <API key |
 * agent key | OAuth access token>`; the payer route `POST /v1/payment-intents/{intentId}/card-payments` is authenticated by the intent's client
 * secret instead. Every public POST honours `Idempotency-Key` (the operator routes do not take it).
 */
import type { ServiceApp } from '../../../platform/http.ts';
import { registerAgentKeyRoutes } from './agent-keys.ts';
import { type PaymentsRouteDeps, paymentsRouteContext } from './context.ts';
import { type OAuthRouteDeps, registerOAuthRoutes } from './oauth.ts';
import { registerPartyRoutes } from './parties.ts';
import { registerPaymentIntentRoutes } from './payment-intents.ts';
import { registerVoiceSessionRoutes } from './voice-sessions.ts';

export { registerCheckoutRoutes } from './checkout.ts';
export { registerOpsRoutes } from './ops.ts';

/** Registers the public API (and the OAuth token endpoint, metadata, JWKS, clients and signing-key operator routes). */
export async function registerPaymentsRoutes(
  app: ServiceApp,
  deps: PaymentsRouteDeps,
  oauth: OAuthRouteDeps,
): Promise<void> {
  const ctx = paymentsRouteContext(app, deps);
  registerPartyRoutes(app, ctx);
  registerAgentKeyRoutes(app, ctx);
  registerPaymentIntentRoutes(app, ctx);
  registerVoiceSessionRoutes(app, ctx);
  await registerOAuthRoutes(app, ctx, oauth);
}
