/**
 * The first start's demo data (README "Try it"): tenant `demo`, namespace `default`, user `demo` (admin of the
 * tenant) with a generated password, a few built-in agents, a team, a published workflow, an execution environment
 * with a runtime host and the demo credentials of every kind for `credentials.json`: the user's token, a host
 * credential, an environment key, an internal service token, and the attempt token of a claimed execution (the
 * first turn of a chat with the demo remote agent, waiting for that host to complete it).
 */
import type { Clock } from '../../platform/clock.ts';
import type { Tx } from '../../platform/database.ts';
import { randomToken } from '../../platform/ids.ts';
import type { AgentService } from './agents.ts';
import type { ChatService } from './chats.ts';
import type { HostProtocol } from './host-protocol.ts';
import type { IdentityService } from './identity.ts';
import type { OrchestrationService } from './orchestration.ts';
import type { TeamService } from './teams.ts';

/** The demo agents: a greeter (template), an extractor (JSON transform) and a calculator (tool use). */
export const DEMO_AGENTS = [
  {
    name: 'Greeter',
    description: 'Answers every message with a greeting (a template agent).',
    definition: { kind: 'template', template: 'Hello! You said: {{ message }}' },
  },
  {
    name: 'Ticket extractor',
    description: 'Turns an input into a ticket record (a JSON transform agent).',
    definition: {
      kind: 'json_transform',
      output: {
        title: '{{ input.title | trim }}',
        priority: '{{ input.priority }}',
        words: '{{ input.title | length }}',
      },
    },
  },
  {
    name: 'Calculator',
    description: 'Computes `input.expression` when the message says "calc" (a tool-using agent).',
    definition: {
      kind: 'tool_use',
      tools: ['calculator', 'clock'],
      calls: [
        { tool: 'calculator', args: { expression: '{{ input.expression }}' }, when: { contains: 'calc' } },
        { tool: 'clock' },
      ],
      answer: 'Result: {{ results.calculator.value }} (at {{ results.clock.now }})',
    },
  },
] as const;

/** Days the seeded demo token stays valid (longer than a login's; sign in for a fresh one). */
const DEMO_TOKEN_DAYS = 30;

/** What the seed uses. */
export interface SeedDeps {
  identity: IdentityService;
  agents: AgentService;
  teams: TeamService;
  orchestration: OrchestrationService;
  chats: ChatService;
  hosts: HostProtocol;
  clock: Clock;
  tenant: string;
  namespace: string;
}

/** Creates the demo data inside `tx` and returns the demo credentials. */
export async function seedDemo(tx: Tx, deps: SeedDeps): Promise<Record<string, unknown>> {
  const { identity } = deps;
  const scope = { tenant: deps.tenant, namespace: deps.namespace };
  await identity.createTenant({ id: scope.tenant, name: 'Demo tenant' }, tx);
  await identity.createNamespace(
    { tenant: scope.tenant, id: scope.namespace, name: 'Default namespace' },
    tx,
  );
  const password = randomToken(18);
  const user = await identity.createUser({ username: 'demo', password, displayName: 'Demo user' }, tx);
  await identity.grant({ userId: user.id, tenant: scope.tenant, namespace: '*', role: 'admin' }, tx);
  const ids: string[] = [];
  for (const agent of DEMO_AGENTS)
    ids.push((await deps.agents.create(scope, user.id, { ...agent, definition: agent.definition }, tx)).id);
  const [greeter, extractor] = ids as [string, string, string];
  const team = await deps.teams.create(
    scope,
    user.id,
    { name: 'Intake', description: 'Extracts a ticket, then greets with it.', members: [extractor, greeter] },
    tx,
  );
  const workflow = await deps.orchestration.create(
    scope,
    user.id,
    {
      name: 'Triage',
      description: 'Extracts a ticket; high priority goes through an approval, the rest is answered at once.',
      graph: {
        nodes: [
          { id: 'start', type: 'start' },
          { id: 'extract', type: 'agent', agentId: extractor },
          {
            id: 'urgent',
            type: 'condition',
            condition: { path: 'nodes.extract.priority', op: 'eq', value: 'high' },
          },
          { id: 'review', type: 'approval', title: 'Handle this high-priority ticket?' },
          { id: 'answer', type: 'agent', agentId: greeter, input: { message: '{{ nodes.extract.title }}' } },
          { id: 'merge', type: 'join' },
          { id: 'end', type: 'end', input: { ticket: '{{ nodes.extract }}' } },
          { id: 'declined', type: 'end', input: { declined: true } },
        ],
        edges: [
          { from: 'start', to: 'extract' },
          { from: 'extract', to: 'urgent' },
          { from: 'urgent', to: 'review', on: 'true' },
          { from: 'urgent', to: 'answer', on: 'false' },
          { from: 'review', to: 'merge', on: 'approved' },
          { from: 'review', to: 'declined', on: 'rejected' },
          { from: 'answer', to: 'merge' },
          { from: 'merge', to: 'end' },
        ],
      },
    },
    tx,
  );
  await deps.orchestration.publish(scope, workflow.id, user.id, 1, tx);

  const environment = await identity.createEnvironment({ ...scope, name: 'default' }, tx);
  const hostCredential = await identity.issueCredential(tx, {
    kind: 'host',
    environmentId: environment.id,
    label: 'demo host',
  });
  const environmentKey = await identity.issueCredential(tx, {
    kind: 'environment',
    environmentId: environment.id,
    label: 'demo environment key',
  });
  const internalToken = await identity.issueCredential(tx, {
    kind: 'internal',
    label: 'demo internal token',
  });
  const userToken = await identity.issueSession(
    user.id,
    new Date(deps.clock.nowMs() + DEMO_TOKEN_DAYS * 86_400_000),
    'demo token (first start)',
    tx,
  );
  // The host protocol end to end: a remote agent's chat turn waits for the demo host, which has claimed it.
  const remote = await deps.agents.create(
    scope,
    user.id,
    {
      name: 'Remote helper',
      description: 'Runs on a runtime host of the default environment.',
      definition: { kind: 'remote', environmentId: environment.id, instructions: { role: 'helper' } },
    },
    tx,
  );
  const chat = await deps.chats.create(scope, user.id, { agentId: remote.id, title: 'Remote demo' }, tx);
  await deps.chats.sendTurn(scope, user.id, chat.id, 'Hello, host!', tx);
  const asHost = {
    credentialId: hostCredential.row.id,
    kind: 'host' as const,
    userId: null,
    environmentId: environment.id,
    executionId: null,
    sessionId: null,
  };
  const host = await deps.hosts.register(asHost, { name: 'demo-host', capabilities: ['remote'] }, tx);
  const claimed = await deps.hosts.claim(
    { ...asHost, kind: 'environment', credentialId: environmentKey.row.id },
    { hostId: host.id, max: 1 },
    tx,
  );
  const attempt = claimed.executions[0]!;
  return {
    username: user.username,
    password,
    tenant: scope.tenant,
    namespace: scope.namespace,
    userToken: userToken.key,
    agentId: greeter,
    teamId: team.id,
    workflowId: workflow.id,
    environmentId: environment.id,
    hostId: host.id,
    hostCredential: hostCredential.key,
    environmentKey: environmentKey.key,
    environmentKeyHeader: 'X-Builder-Environment-Key',
    internalToken: internalToken.key,
    sessionId: attempt.sessionId,
    attemptToken: attempt.attemptToken,
  };
}
