/** The HTTP layer of the media-buying service: one plugin per resource, and the operator routes. */
import type { ServiceApp } from '../../../platform/http.ts';
import { createAdmission } from '../admission/index.ts';
import type { CarrierSimulator, Texting } from '../communications/index.ts';
import type { Accounts, IdentityFlows } from '../identity/index.ts';
import type { Mailer } from '../mail/index.ts';
import type { McpOAuth, McpTransport } from '../mcp/index.ts';
import type { OidcSimulator, SsoClient } from '../sso/index.ts';
import { registerActivationRoutes } from './activation.ts';
import { registerAdmissionRoutes } from './admission.ts';
import { registerAdmissionOpsRoutes } from './admission-ops.ts';
import { registerAdvertiserRoutes } from './advertisers.ts';
import { registerAuthRoutes } from './auth.ts';
import { registerBuyerAgentRoutes } from './buyer-agents.ts';
import { registerBuyerRecordRoutes } from './buyer-records.ts';
import { registerBuyingOpsRoutes } from './buying-ops.ts';
import { registerCarrierWebhookRoutes } from './carrier-webhooks.ts';
import { registerCommunicationRoutes } from './communications.ts';
import { registerCommunicationOpsRoutes } from './communications-ops.ts';
import { registerConnectedAppRoutes } from './connected-apps.ts';
import { type MediaBuyingRouteDeps, mediaBuyingRouteContext } from './context.ts';
import { registerKeyRoutes } from './keys.ts';
import { registerM2mRoutes } from './m2m.ts';
import { registerMcpRoutes } from './mcp.ts';
import { registerMcpOAuthRoutes } from './mcp-oauth.ts';
import { registerOAuthSignInRoutes } from './oauth-sign-in.ts';
import { registerOidcSimulatorRoutes } from './oidc-simulator.ts';
import { registerOpsRoutes } from './ops.ts';
import { registerOrganizationRoutes } from './organizations.ts';
import { registerPageRoutes } from './pages.ts';
import { recordRoutes } from './route-table.ts';
import { registerSignInRoutes } from './sign-in.ts';
import { registerSignupRoutes } from './signup.ts';
import { registerStorefrontRoutes } from './storefront.ts';

export type { MediaBuyingRouteDeps } from './context.ts';

/** Registers every route of the service. */
export function registerMediaBuyingRoutes(
  app: ServiceApp,
  deps: MediaBuyingRouteDeps & {
    accounts: Accounts;
    mailer: Mailer;
    identity: IdentityFlows;
    sso: { client: SsoClient; simulator: OidcSimulator | undefined };
    texting: { texting: Texting; simulator: CarrierSimulator | undefined; webhookSecret: Buffer };
    /** Part 3: the MCP endpoints' transport. */
    mcp: McpTransport;
    /** Part 3: the OAuth authorization server of MCP connectors. */
    mcpOAuth: McpOAuth;
  },
): void {
  recordRoutes(app);
  const ctx = mediaBuyingRouteContext(app, deps);
  registerAuthRoutes(app, ctx, deps.accounts);
  registerOrganizationRoutes(app, ctx);
  registerKeyRoutes(app, ctx);
  registerM2mRoutes(app, ctx);
  registerMcpOAuthRoutes(app, ctx, deps.mcpOAuth);
  registerBuyerAgentRoutes(app, ctx);
  registerConnectedAppRoutes(app, ctx);
  registerAdvertiserRoutes(app, ctx);
  registerBuyerRecordRoutes(app, ctx);
  registerActivationRoutes(app, ctx);
  registerStorefrontRoutes(app, ctx);
  registerOpsRoutes(app, ctx, { accounts: deps.accounts, mailer: deps.mailer });
  registerBuyingOpsRoutes(app, ctx, deps.desk);
  const admission = createAdmission(deps);
  registerAdmissionRoutes(app, ctx, admission);
  registerAdmissionOpsRoutes(app, admission);
  registerSignInRoutes(app, ctx, deps);
  registerOAuthSignInRoutes(app, ctx, { ...deps, sso: deps.sso.client });
  registerSignupRoutes(app, ctx, deps);
  if (deps.sso.simulator) registerOidcSimulatorRoutes(app, ctx, deps.sso.simulator);
  registerPageRoutes(app, ctx);
  registerCommunicationRoutes(app, ctx, deps.texting.texting);
  registerCommunicationOpsRoutes(app, ctx, deps.texting);
  registerMcpRoutes(app, {
    transport: deps.mcp,
    publicUrl: deps.publicUrl,
    requestsPerMinute: () => deps.config.requestsPerMinute,
  });
  registerCarrierWebhookRoutes(app, {
    ...deps.texting,
    clock: deps.clock,
    secret: deps.texting.webhookSecret,
  });
}
