/** The HTTP layer of the gateway: one plugin per resource, and the operator routes. */
import type { ServiceApp } from '../../../platform/http.ts';
import type { IdempotencyStore } from '../../../platform/idempotency.ts';
import type { FailureCounter } from '../../../platform/rate-limit.ts';
import type { AgentGatewayConfig } from '../agent-gateway-config.ts';
import type { AgentService } from '../agents.ts';
import type { ApprovalService } from '../approvals.ts';
import type { AutomationService } from '../automations.ts';
import type { ChatService } from '../chats.ts';
import type { HostProtocol } from '../host-protocol.ts';
import type { CredentialStore, IdentityService } from '../identity.ts';
import type { IssueService } from '../issues.ts';
import type { OrchestrationService } from '../orchestration.ts';
import type { RunEngine } from '../run-engine.ts';
import type { TeamService } from '../teams.ts';
import { registerAgentRoutes } from './agents.ts';
import { registerAuthRoutes, registerLogoutRoute } from './auth.ts';
import { registerAutomationRoutes } from './automations.ts';
import { registerChatRoutes } from './chats.ts';
import { type GatewayRouteContext, gatewayRouteContext } from './context.ts';
import { registerIssueRoutes } from './issues.ts';
import { registerOrchestrationRoutes } from './orchestration.ts';
import { registerRuntimeRoutes } from './runtime.ts';
import { registerTeamRoutes } from './teams.ts';

export { SECURITY_SCHEMES } from './context.ts';
export { INVOCATION_SECURITY_SCHEMES, registerPart2Routes } from './invocations.ts';
export { registerOpsRoutes } from './ops.ts';

/** What the public routes call. */
export interface GatewayRouteDeps {
  config: AgentGatewayConfig;
  keys: CredentialStore;
  identity: IdentityService;
  agents: AgentService;
  chats: ChatService;
  teams: TeamService;
  orchestration: OrchestrationService;
  engine: RunEngine;
  approvals: ApprovalService;
  issues: IssueService;
  automations: AutomationService;
  hosts: HostProtocol;
  fireEvent: Parameters<typeof registerRuntimeRoutes>[2]['fireEvent'];
  idempotency: IdempotencyStore;
  /** Failed sign-ins per username (platform `createFailureCounter`). */
  loginFailures: FailureCounter;
  /** Routes of other parts (endpoints, invocations), registered before the sign-out route. */
  registerMore?: (app: ServiceApp, ctx: GatewayRouteContext) => void;
}

/** Registers the public API: identities, agents, chats, teams, workflows, runs, approvals. */
export function registerGatewayRoutes(app: ServiceApp, deps: GatewayRouteDeps): void {
  const ctx = gatewayRouteContext(deps);
  registerAuthRoutes(app, ctx, {
    identity: deps.identity,
    loginFailuresPerMinute: deps.config.loginFailuresPerMinute,
    failures: deps.loginFailures,
  });
  registerAgentRoutes(app, ctx, deps.agents);
  registerChatRoutes(app, ctx, deps.chats, deps.idempotency);
  registerTeamRoutes(app, ctx, deps.teams);
  registerIssueRoutes(app, ctx, deps.issues);
  registerOrchestrationRoutes(app, ctx, deps);
  registerAutomationRoutes(app, ctx, deps.automations);
  registerRuntimeRoutes(app, ctx, deps);
  deps.registerMore?.(app, ctx);
  registerLogoutRoute(app, ctx, deps.identity);
}
