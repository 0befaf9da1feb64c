/** The HTTP layer of the gateway: one plugin per resource, and the operator routes. */
import type { ServiceApp } from '../../../platform/http.ts';
import type { AgentGatewayConfig } from '../agent-gateway-config.ts';
import type { AgentService } from '../agents.ts';
import type { ChatService } from '../chats.ts';
import type { CredentialStore, IdentityService } from '../identity.ts';
import { registerAgentRoutes } from './agents.ts';
import { registerAuthRoutes } from './auth.ts';
import { registerChatRoutes } from './chats.ts';
import { gatewayRouteContext } from './context.ts';

export { SECURITY_SCHEMES } from './context.ts';
export { registerOpsRoutes } from './ops.ts';

/** What the public routes call. */
export interface GatewayRouteDeps {
  config: AgentGatewayConfig;
  keys: CredentialStore;
  identity: IdentityService;
  agents: AgentService;
  chats: ChatService;
}

/** Registers the public API: identities, agents, chats. */
export function registerGatewayRoutes(app: ServiceApp, deps: GatewayRouteDeps): void {
  const ctx = gatewayRouteContext(deps);
  registerAuthRoutes(app, ctx, {
    identity: deps.identity,
    loginAttemptsPerMinute: deps.config.loginAttemptsPerMinute,
  });
  registerAgentRoutes(app, ctx, deps.agents);
  registerChatRoutes(app, ctx, deps.chats);
}
