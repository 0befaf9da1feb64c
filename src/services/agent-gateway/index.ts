import path from 'node:path';
import { createFailureCounter } from '../../platform/rate-limit.ts';
import type { ServiceDefinition } from '../../platform/service.ts';
import { readAgentGatewayConfig } from './agent-gateway-config.ts';
import { formatAgentGatewayError } from './agent-gateway-errors.ts';
import { resumeStepTask, runStepTask, sweepTask } from './agent-gateway-jobs.ts';
import { AgentRuntime } from './agent-runtime.ts';
import { AgentService } from './agents.ts';
import { ApprovalService } from './approvals.ts';
import { AutomationService } from './automations.ts';
import { ChatService } from './chats.ts';
import { HostProtocol } from './host-protocol.ts';
import { createCredentialStore, IdentityService } from './identity.ts';
import { readInvocationConfig, setupEndpointsAndInvocations } from './invocations/index.ts';
import { IssueService } from './issues.ts';
import { OpenAiModelAdapter } from './model-adapter.ts';
import { OrchestrationService } from './orchestration.ts';
import {
  INVOCATION_SECURITY_SCHEMES,
  registerGatewayRoutes,
  registerOpsRoutes,
  registerPart2Routes,
  SECURITY_SCHEMES,
} from './routes/index.ts';
import { RunEngine } from './run-engine.ts';
import { seedDemo } from './seed.ts';
import { TeamService } from './teams.ts';

/**
 * The agent-orchestration gateway (spec 002, section E; anchor: the preview "service" layer of an agent
 * framework): users, scopes and the other identities of the spec, agents, chats, issues, teams, workflows,
 * automations and the agent runtime under `/api/v1`, errors `{error, code, message}`.
 */
export const agentGatewayService: ServiceDefinition = {
  name: 'agent-gateway',
  envPrefix: 'AGENT_GATEWAY',
  title: 'Agent-orchestration gateway',
  version: '0.1.0',
  description:
    'Agents, chats, issues, teams, workflows and automations under `/api/v1` (preview). Sign in with ' +
    '`POST /api/auth/login` and send `Authorization: Bearer <token>`; scope with `X-Platform-Tenant` and ' +
    '`X-Platform-Namespace`. Errors: `{error, code, message, details?}`.',
  defaultPort: 4105,
  migrations: { schema: 'agent_gateway', folder: path.join(import.meta.dirname, 'db', 'migrations') },
  formatError: formatAgentGatewayError,
  tags: [
    { name: 'identity', description: 'Sign-in and the current identity' },
    { name: 'agents', description: 'The agent catalog and versioned definitions' },
    { name: 'chats', description: 'Conversations of a user with an agent' },
    { name: 'teams', description: 'Member agents that hand work on to each other' },
    { name: 'workflows', description: 'Orchestration definitions and their published revisions' },
    { name: 'runs', description: 'Runs of agents, teams and workflows: graph, events, signals' },
    { name: 'approvals', description: 'Approval requests of approval nodes' },
    { name: 'issues', description: 'Work items worked by agents and teams, accepted or rejected' },
    { name: 'inbox', description: 'What waits for the caller' },
    { name: 'automations', description: 'Cron schedules and event triggers that start runs' },
    {
      name: 'runtime hosts',
      description: 'Remote runtime hosts: registration, heartbeat, claims (host credential, environment key)',
    },
    {
      name: 'runtime sessions',
      description: 'The runtime session event protocol of a claimed attempt (attempt token)',
    },
    { name: 'internal', description: 'Trusted component traffic (internal service token)' },
    { name: 'endpoints', description: 'Endpoints: drafts, releases, rollback, disable, readiness' },
    { name: 'endpoint keys', description: 'Endpoint API keys and platform bearer tokens' },
    { name: 'invocations', description: '`/invoke/v1`: jobs, conversations, status views, event streams' },
  ],
  securitySchemes: { ...SECURITY_SCHEMES, ...INVOCATION_SECURITY_SCHEMES },
  validateEnv: (env) => {
    readAgentGatewayConfig(env);
    readInvocationConfig(env);
  },
  setup(ctx) {
    const config = readAgentGatewayConfig(ctx.config.env);
    const keys = createCredentialStore(ctx);
    const identity = new IdentityService(ctx.db, ctx.clock, keys, config.sessionTtlSeconds);
    const runtime = new AgentRuntime(
      { clock: ctx.clock, outbound: ctx.outbound, fetchTimeoutMs: config.toolTimeoutMs },
      config.model ? new OpenAiModelAdapter({ ...config.model, outbound: ctx.outbound }) : undefined,
      config.turnTimeoutMs,
    );
    const agents = new AgentService(ctx.db, ctx.clock, runtime);
    const teams = new TeamService(ctx.db, ctx.clock);
    const hosts = new HostProtocol(
      ctx.db,
      ctx.clock,
      keys,
      config.hostLeaseSeconds,
      config.attemptTokenSeconds,
    );
    const chats = new ChatService(
      ctx.db,
      ctx.clock,
      agents,
      runtime,
      (tx, input) => hosts.queueForTurn(tx, input),
      ctx.logger,
    );
    let orchestration: OrchestrationService | undefined;
    const engine = new RunEngine(
      ctx.db,
      ctx.clock,
      runtime,
      {
        agent: async (scope, id, executor) => agents.row(scope, id, executor).catch(() => undefined),
        teamMembers: (scope, id, executor) => teams.members(scope, id, executor),
        publishedRevision: (scope, id, executor) => orchestration!.publishedRevision(scope, id, executor),
        queueExecution: (tx, input) => hosts.queueForStep(tx, input),
        endAttempts: (tx, ids) => hosts.endAttempts(tx, ids),
      },
      config.stepLeaseSeconds,
      ctx.logger,
    );
    orchestration = new OrchestrationService(ctx.db, ctx.clock, engine);
    const approvals = new ApprovalService(ctx.db);
    const automations = new AutomationService(ctx.db, ctx.clock, orchestration, ctx.logger);
    const issues = new IssueService(ctx.db, ctx.clock, orchestration, (tx, scope, type, data) =>
      automations.onEvent(tx, scope, type, data, 0),
    );
    engine.onFinished((tx, run) => issues.onRunFinished(tx, run));
    engine.onFinished((tx, run) => automations.onRunFinished(tx, run));
    const fireEvent = async (scope: { tenant: string; namespace: string }, type: string, data: unknown) => {
      await identity.requireScope(scope);
      return ctx.db.transaction((tx) => automations.onEvent(tx, scope, type, data, 0));
    };
    const tick = async () => ({ ...(await engine.sweep()), firedAutomations: await automations.fireDue() });
    const jobDeps = { engine, tick, logger: ctx.logger };
    const part2 = setupEndpointsAndInvocations(ctx, { keys, agents, orchestration: orchestration!, engine });
    return {
      routes(app) {
        registerGatewayRoutes(app, {
          config,
          keys,
          identity,
          agents,
          chats,
          teams,
          orchestration: orchestration!,
          engine,
          approvals,
          issues,
          automations,
          hosts,
          fireEvent,
          idempotency: ctx.idempotency,
          loginFailures: createFailureCounter({
            clock: ctx.clock,
            redis: ctx.redis,
            prefix: 'api-suite:agent-gateway:login-failures:',
          }),
          registerMore: (app, routeContext) => registerPart2Routes(app, routeContext, part2),
        });
        registerOpsRoutes(app, { identity, hosts, keys, db: ctx.db, tick });
      },
      tasks: [
        runStepTask.with(jobDeps),
        resumeStepTask.with(jobDeps),
        sweepTask.with(jobDeps),
        ...part2.tasks,
      ],
      cron: [{ task: sweepTask, pattern: '* * * * *' }, ...part2.cron],
      stop: () => part2.stop(),
      seed: async (tx) => ({
        ...(await seedDemo(tx, {
          identity,
          agents,
          teams,
          orchestration: orchestration!,
          chats,
          hosts,
          clock: ctx.clock,
          tenant: config.tenant,
          namespace: config.namespace,
        })),
        ...(await part2.seed(tx, { tenant: config.tenant, namespace: config.namespace })),
      }),
    };
  },
};
