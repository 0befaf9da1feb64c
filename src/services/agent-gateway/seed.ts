/**
 * The first start's demo data (README "Try it"): tenant `demo`, namespace `default`, user `demo` (admin of the
 * tenant) with a generated password, a few built-in agents, and the demo credentials for `credentials.json`.
 */
import type { Clock } from '../../platform/clock.ts';
import type { Tx } from '../../platform/database.ts';
import { randomToken } from '../../platform/ids.ts';
import type { AgentService } from './agents.ts';
import type { IdentityService } from './identity.ts';

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
    description: 'Computes what follows "calc" in a message (a tool-using agent).',
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

/** Creates the demo data inside `tx` and returns the demo credentials. */
export async function seedDemo(
  tx: Tx,
  deps: { identity: IdentityService; agents: AgentService; clock: Clock; tenant: string; namespace: string },
): Promise<Record<string, unknown>> {
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
  const agentIds: string[] = [];
  for (const agent of DEMO_AGENTS)
    agentIds.push(
      (await deps.agents.create(scope, user.id, { ...agent, definition: agent.definition }, tx)).id,
    );
  const token = await identity.issueSession(
    user.id,
    new Date(deps.clock.nowMs() + DEMO_TOKEN_DAYS * 86_400_000),
    'demo token (first start)',
    tx,
  );
  return {
    username: user.username,
    password,
    tenant: scope.tenant,
    namespace: scope.namespace,
    userToken: token.key,
    agentId: agentIds[0],
  };
}
