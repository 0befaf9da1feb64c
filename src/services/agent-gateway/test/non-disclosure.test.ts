import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type GatewayHarness, startGateway } from './support.ts';

interface OpenApiOperation {
  operationId: string;
  requestBody?: { content: { 'application/json': { example?: unknown; schema: { examples?: unknown[] } } } };
}

/**
 * Spec E "Errors": a 404 never reveals another scope's resource. Every `{id}` route of the OpenAPI document is
 * called by a user of another scope with the id of a resource that exists in the demo scope: each answers exactly
 * as for an id that exists nowhere.
 */
describe('agent-gateway 404 non-disclosure on every id route', () => {
  let h: GatewayHarness;
  const ids: Record<string, string> = {};
  const demo = { 'x-platform-tenant': 'demo', 'x-platform-namespace': 'default' };
  const acme = { 'x-platform-tenant': 'acme', 'x-platform-namespace': 'prod' };

  before(async () => {
    h = await startGateway({ env: { AGENT_GATEWAY_SCOPE_MODE: 'multi' } });
    await h.ops('POST', '/_ops/tenants', { id: 'acme', name: 'Acme' });
    await h.ops('POST', '/_ops/tenants/acme/namespaces', { id: 'prod', name: 'Prod' });
    const t = h.demoToken;
    const post = async (url: string, body: unknown) => {
      const res = await h.api(t, 'POST', url, body, demo);
      assert.ok(res.statusCode < 300, `${url}: ${res.body}`);
      return res.json();
    };
    const agents = (await h.api(t, 'GET', '/api/v1/agents', undefined, demo)).json().agents;
    ids.agents = agents.find((a: { conversational: boolean }) => a.conversational).id;
    ids.chats = (await post('/api/v1/chats', { agentId: ids.agents, title: 'c' })).chat.id;
    ids.teams = (await post('/api/v1/teams', { name: 't', members: [ids.agents] })).team.id;
    const def = await post('/api/v1/orchestration-definitions', {
      name: 'd',
      graph: {
        nodes: [
          { id: 's', type: 'start' },
          { id: 'g', type: 'approval' },
          { id: 'e', type: 'end' },
        ],
        edges: [
          { from: 's', to: 'g' },
          { from: 'g', to: 'e', on: 'approved' },
        ],
      },
    });
    ids['orchestration-definitions'] = def.definition.id;
    await post(`/api/v1/orchestration-definitions/${def.definition.id}/publish`, { expectedVersion: 1 });
    ids['orchestration-runs'] = (
      await post('/api/v1/orchestration-runs', { target: { type: 'orchestration', id: def.definition.id } })
    ).run.id;
    ids.approvals = (await h.api(t, 'GET', '/api/v1/approvals', undefined, demo)).json().approvals[0].id;
    ids.issues = (await post('/api/v1/issues', { title: 'i' })).issue.id;
    ids.automations = (
      await post('/api/v1/automations', {
        name: 'a',
        trigger: { type: 'schedule', cron: '0 * * * *' },
        target: { type: 'agent', id: ids.agents },
      })
    ).automation.id;
    // The seeded demo endpoint (part 2) and its first key.
    ids.endpoints = (await h.api(t, 'GET', '/api/v1/endpoints', undefined, demo)).json().endpoints[0].id;
  });
  after(() => h?.close());

  test('a user of another scope gets the 404 of a missing resource on every {id} route', async () => {
    const outsider = await h.user('admin', { tenant: 'acme', namespace: 'prod' });
    const doc = (await h.platform.app('agent-gateway').inject({ url: '/openapi.json' })).json() as {
      paths: Record<string, Record<string, OpenApiOperation>>;
    };
    const checked: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      if (!path.includes('{id}') || path.startsWith('/_ops')) continue;
      const family = path.split('/')[3]!;
      const existing = ids[family];
      assert.ok(existing, `a resource of ${family} for ${path}`);
      for (const [method, op] of Object.entries(operations)) {
        const media = op.requestBody?.content['application/json'];
        const example = media?.example ?? media?.schema.examples?.[0];
        const call = (id: string) =>
          h.api(
            outsider.token,
            method.toUpperCase() as 'GET',
            path.replace('{id}', id).replace('{keyId}', '1'),
            example,
            acme,
          );
        const foreign = await call(existing);
        const nowhere = await call(`${existing.slice(0, 4)}ffffffffffffffffffffffffffffffff`);
        assert.equal(foreign.statusCode, 404, `${op.operationId}: ${foreign.body}`);
        assert.equal(nowhere.statusCode, 404, `${op.operationId}: ${nowhere.body}`);
        assert.deepEqual(
          { ...(foreign.json() as object), message: undefined },
          { ...(nowhere.json() as object), message: undefined },
          op.operationId,
        );
        assert.ok(!foreign.body.includes('demo'), `${op.operationId} names no other scope`);
        checked.push(op.operationId);
      }
    }
    assert.ok(checked.length >= 25, `every id route was called (${checked.length})`);
    // The owner still sees them.
    assert.equal(
      (await h.api(h.demoToken, 'GET', `/api/v1/issues/${ids.issues}`, undefined, demo)).statusCode,
      200,
    );
  });
});
