import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type GatewayHarness, startGateway } from './support.ts';

/**
 * Spec E "Errors" (idempotency): a key belongs to one caller, in one tenant and namespace, on one route; the same
 * key and body replay the first answer, a changed body is a 409; two instances racing one key run the turn once.
 */
describe('agent-gateway Idempotency-Key scope and races', () => {
  let h: GatewayHarness;
  const demo = { 'x-platform-tenant': 'demo', 'x-platform-namespace': 'default' };
  const other = { 'x-platform-tenant': 'demo', 'x-platform-namespace': 'other' };
  let token: string;
  let greeter: string;
  let otherAgent: string;

  before(async () => {
    h = await startGateway({ env: { AGENT_GATEWAY_SCOPE_MODE: 'multi' } });
    assert.equal(
      (await h.ops('POST', '/_ops/tenants/demo/namespaces', { id: 'other', name: 'Other' })).statusCode,
      201,
    );
    // An admin of every namespace of the demo tenant.
    token = (await h.user('admin', { tenant: 'demo', namespace: '*' })).token;
    const agents = (await h.api(token, 'GET', '/api/v1/agents', undefined, demo)).json().agents;
    greeter = agents.find((a: { name: string }) => a.name === 'Greeter').id;
    const created = await h.api(
      token,
      'POST',
      '/api/v1/agents',
      { name: 'Echo', definition: { kind: 'template', template: 'echo {{ message }}' } },
      other,
    );
    assert.equal(created.statusCode, 201, created.body);
    otherAgent = created.json().agent.id;
  });
  after(() => h?.close());

  const startRun = (agentId: string, headers: Record<string, string>, key: string) =>
    h.api(
      token,
      'POST',
      '/api/v1/orchestration-runs',
      { target: { type: 'agent', id: agentId }, input: { message: 'x' } },
      { ...headers, 'idempotency-key': key },
    );

  test('the same key in another namespace is another key (no 409, no replay of the other scope)', async () => {
    const first = await startRun(greeter, demo, 'scope-key');
    assert.equal(first.statusCode, 201, first.body);
    const elsewhere = await startRun(otherAgent, other, 'scope-key');
    assert.equal(elsewhere.statusCode, 201, elsewhere.body);
    assert.equal(elsewhere.headers['idempotency-replayed'], undefined);
    assert.notEqual(elsewhere.json().run.id, first.json().run.id);
    const replay = await startRun(otherAgent, other, 'scope-key');
    assert.equal(replay.headers['idempotency-replayed'], 'true');
    assert.equal(replay.json().run.id, elsewhere.json().run.id);
  });

  test('the same key on another route is another key; on the same route for another chat it is a 409', async () => {
    await startRun(greeter, demo, 'route-key');
    const chat = await h.api(token, 'POST', '/api/v1/chats', { agentId: greeter, title: 'r' }, demo);
    const turn = (chatId: string) =>
      h.api(
        token,
        'POST',
        `/api/v1/chats/${chatId}/turns`,
        { message: 'hi' },
        { ...demo, 'idempotency-key': 'route-key' },
      );
    const sent = await turn(chat.json().chat.id);
    assert.equal(sent.statusCode, 201, sent.body);
    assert.equal(sent.headers['idempotency-replayed'], undefined);
    const chat2 = await h.api(token, 'POST', '/api/v1/chats', { agentId: greeter, title: 'r2' }, demo);
    const reused = await turn(chat2.json().chat.id);
    assert.equal(reused.statusCode, 409, reused.body);
    assert.equal(reused.json().code, 'idempotency_key_reused');
  });

  test('two instances racing one key run the turn once and answer the same turn', async () => {
    const b = (await h.platform.anotherInstance()).app('agent-gateway');
    const a = h.platform.app('agent-gateway');
    const chat = (
      await h.api(token, 'POST', '/api/v1/chats', { agentId: greeter, title: 'race' }, demo)
    ).json().chat;
    for (let round = 0; round < 5; round++) {
      const send = (app: typeof a) =>
        app.inject({
          method: 'POST',
          url: `/api/v1/chats/${chat.id}/turns`,
          headers: { authorization: `Bearer ${token}`, ...demo, 'idempotency-key': `race-${round}` },
          payload: { message: `round ${round}` },
        });
      const answers = await Promise.all([send(a), send(b), send(a), send(b)]);
      for (const res of answers) assert.equal(res.statusCode, 201, res.body);
      const turnIds = new Set(answers.map((res) => res.json().turn.id));
      assert.equal(turnIds.size, 1, 'one turn answered to every racer');
      assert.equal(answers.filter((res) => res.headers['idempotency-replayed'] !== 'true').length, 1);
    }
    const turns = await h.api(token, 'GET', `/api/v1/chats/${chat.id}/turns`, undefined, demo);
    assert.equal(turns.json().turns.length, 5, 'five keys, five turns');
  });
});
