import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type GatewayHarness, startGateway } from './support.ts';

/** Spec E chats: create `{tenant, namespace, agentId, title}` -> `chat.id`, turns run the agent, PATCH with version. */
describe('agent-gateway chats and the built-in agents', () => {
  let h: GatewayHarness;
  let token: string;
  const byName: Record<string, string> = {};
  const api = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown, t = token) =>
    h.api(t, method, url, payload);

  before(async () => {
    h = await startGateway();
    token = h.demoToken;
    for (const a of (await api('GET', '/api/v1/agents')).json().agents) byName[a.name] = a.id;
  });
  after(() => h?.close());

  test('a defect met while an agent answers a turn records the turn failed (agent_error, no internals), never a 500', async () => {
    const chatId = (await api('POST', '/api/v1/chats', { agentId: byName.Greeter, title: 'Defect' })).json()
      .chat.id;
    const { AgentRuntime } = await import('../agent-runtime.ts');
    const execute = AgentRuntime.prototype.execute;
    AgentRuntime.prototype.execute = function (this: InstanceType<typeof AgentRuntime>, ...args) {
      if (args[1].message === 'trip the defect') throw new TypeError('cannot read properties of undefined');
      return execute.apply(this, args);
    };
    try {
      const turn = await api('POST', `/api/v1/chats/${chatId}/turns`, { message: 'trip the defect' });
      assert.equal(turn.statusCode, 201, turn.body);
      assert.equal(turn.json().turn.status, 'failed');
      assert.deepEqual(turn.json().turn.error, {
        code: 'agent_error',
        message: 'The agent failed with an unexpected error.',
      });
      assert.doesNotMatch(turn.body, /cannot read properties/);
      const next = await api('POST', `/api/v1/chats/${chatId}/turns`, { message: 'hello' });
      assert.equal(next.json().turn.status, 'completed');
      assert.equal(next.json().turn.seq, 2, 'the failed turn is recorded');
    } finally {
      AgentRuntime.prototype.execute = execute;
    }
  });

  test('a chat with the spec body; a turn runs the agent at once and is recorded', async () => {
    const created = await api('POST', '/api/v1/chats', {
      tenant: 'demo',
      namespace: 'default',
      agentId: byName.Greeter,
      title: 'Hi',
    });
    assert.equal(created.statusCode, 201, created.body);
    const chatId = created.json().chat.id;
    assert.match(chatId, /^cht_[0-9a-f]{32}$/);
    const turn = await api('POST', `/api/v1/chats/${chatId}/turns`, { message: 'good morning' });
    assert.equal(turn.statusCode, 201, turn.body);
    assert.equal(turn.json().turn.status, 'completed');
    assert.equal(turn.json().turn.reply.text, 'Hello! You said: good morning');
    assert.equal(turn.json().turn.seq, 1);
    await api('POST', `/api/v1/chats/${chatId}/turns`, { message: 'again' });
    const turns = (await api('GET', `/api/v1/chats/${chatId}/turns`)).json();
    assert.deepEqual(
      turns.turns.map((t: { seq: number; message: string }) => [t.seq, t.message]),
      [
        [1, 'good morning'],
        [2, 'again'],
      ],
    );
    assert.equal((await api('GET', `/api/v1/chats/${chatId}`)).json().chat.turnCount, 2);
    // The chat API takes `{message}` only (the runtime session protocol's payloads are refused).
    const sessionShaped = await api('POST', `/api/v1/chats/${chatId}/turns`, {
      events: [{ type: 'progress' }],
    });
    assert.equal(sessionShaped.statusCode, 400);
  });

  test('the tool-using agent calls its tools (a calculator) and a JSON transform agent answers data', async () => {
    const agent = await api('POST', '/api/v1/agents', {
      name: 'Math',
      definition: {
        kind: 'tool_use',
        tools: ['calculator', 'word_count', 'lookup'],
        calls: [
          { tool: 'calculator', args: { expression: '(2 + 3) * 4 ^ 2' } },
          { tool: 'word_count', args: { text: '{{ message }}' } },
          { tool: 'lookup', args: { key: 'capital' }, when: { contains: 'capital' } },
        ],
        answer:
          '{{ results.calculator.value }} / {{ results.word_count.words }} words / {{ results.lookup.value }}',
        table: { capital: 'Paris' },
      },
    });
    assert.equal(agent.statusCode, 201, agent.body);
    const chat = (await api('POST', '/api/v1/chats', { agentId: agent.json().agent.id, title: 'm' })).json()
      .chat;
    const withLookup = await api('POST', `/api/v1/chats/${chat.id}/turns`, { message: 'the capital please' });
    assert.equal(withLookup.json().turn.reply.text, '80 / 3 words / Paris');
    const without = await api('POST', `/api/v1/chats/${chat.id}/turns`, { message: 'just math' });
    assert.equal(without.json().turn.reply.text, '80 / 2 words / ');
    const tools = without.json().turn.reply.data.tools.map((t: { tool: string }) => t.tool);
    assert.deepEqual(tools, ['calculator', 'word_count'], 'the lookup ran only when asked');

    const extractor = byName['Ticket extractor']!;
    const notChat = await api('POST', '/api/v1/chats', { agentId: extractor, title: 'x' });
    assert.equal(notChat.statusCode, 400);
    assert.equal(notChat.json().code, 'agent_not_conversational');
    const chatAgents = (await api('GET', '/api/v1/chat-agents'))
      .json()
      .agents.map((a: { id: string }) => a.id);
    assert.ok(!chatAgents.includes(extractor));
    assert.ok(chatAgents.includes(byName.Greeter));
  });

  test('a bad definition is a 400 naming the field; a definition change makes a version, guarded by expectedVersion', async () => {
    const bad = await api('POST', '/api/v1/agents', {
      name: 'x',
      definition: { kind: 'template', template: 'Hi {{ 1+1 }}' },
    });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json().details.issues[0].field, /definition.template/);
    const unknownTool = await api('POST', '/api/v1/agents', {
      name: 'x',
      definition: { kind: 'tool_use', tools: ['calculator'], calls: [{ tool: 'clock' }], answer: 'x' },
    });
    assert.equal(unknownTool.statusCode, 400);
    const agent = (
      await api('POST', '/api/v1/agents', {
        name: 'Echo',
        definition: { kind: 'template', template: 'v1 {{ message }}' },
      })
    ).json().agent;
    const chat = (await api('POST', '/api/v1/chats', { agentId: agent.id, title: 'e' })).json().chat;
    const stale = await api('PATCH', `/api/v1/agents/${agent.id}/definition`, {
      expectedVersion: 2,
      definition: { kind: 'template', template: 'v2' },
    });
    assert.equal(stale.statusCode, 409);
    assert.equal(stale.json().details.currentVersion, 1);
    const updated = await api('PATCH', `/api/v1/agents/${agent.id}/definition`, {
      expectedVersion: 1,
      definition: { kind: 'template', template: 'v2 {{ message }}' },
    });
    assert.equal(updated.statusCode, 200, updated.body);
    assert.equal(updated.json().agent.version, 2);
    const turn = (await api('POST', `/api/v1/chats/${chat.id}/turns`, { message: 'x' })).json().turn;
    assert.equal(turn.reply.text, 'v2 x');
    assert.equal(turn.agentVersion, 2);
    const versions = (await api('GET', `/api/v1/agents/${agent.id}/versions`)).json().versions;
    assert.deepEqual(
      versions.map((v: { version: number }) => v.version),
      [2, 1],
    );
  });

  test('chat PATCH needs the current version (409 with it); archived chats take no turns', async () => {
    const chat = (await api('POST', '/api/v1/chats', { agentId: byName.Greeter, title: 'p' })).json().chat;
    const renamed = await api('PATCH', `/api/v1/chats/${chat.id}`, { version: 1, title: 'renamed' });
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.equal(renamed.json().chat.version, 2);
    const stale = await api('PATCH', `/api/v1/chats/${chat.id}`, { version: 1, title: 'again' });
    assert.equal(stale.statusCode, 409);
    assert.equal(stale.json().code, 'version_conflict');
    assert.equal(stale.json().details.currentVersion, 2);
    await api('PATCH', `/api/v1/chats/${chat.id}`, { version: 2, archived: true });
    const turn = await api('POST', `/api/v1/chats/${chat.id}/turns`, { message: 'x' });
    assert.equal(turn.statusCode, 409);
    assert.ok(
      !(await api('GET', '/api/v1/chats')).json().chats.some((c: { id: string }) => c.id === chat.id),
    );
  });

  test("another user's chat answers as a missing one (404), even in the same scope", async () => {
    const chat = (await api('POST', '/api/v1/chats', { agentId: byName.Greeter, title: 'private' })).json()
      .chat;
    const other = await h.user('admin');
    const missing = await api(
      'GET',
      '/api/v1/chats/cht_00000000000000000000000000000000',
      undefined,
      other.token,
    );
    for (const [method, url, payload] of [
      ['GET', `/api/v1/chats/${chat.id}`, undefined],
      ['GET', `/api/v1/chats/${chat.id}/turns`, undefined],
      ['POST', `/api/v1/chats/${chat.id}/turns`, { message: 'x' }],
      ['PATCH', `/api/v1/chats/${chat.id}`, { version: 1, title: 'x' }],
    ] as const) {
      const res = await api(method, url, payload, other.token);
      assert.equal(res.statusCode, 404, `${method} ${url}`);
      assert.equal(res.json().code, missing.json().code);
    }
    assert.ok(
      !(await api('GET', '/api/v1/chats', undefined, other.token))
        .json()
        .chats.some((c: { id: string }) => c.id === chat.id),
    );
  });

  test('an Idempotency-Key makes a turn retry safe: replayed once recorded; another body under the key is a 409', async () => {
    const chat = (await api('POST', '/api/v1/chats', { agentId: byName.Greeter, title: 'retry' })).json()
      .chat;
    const send = (message: string, key: string) =>
      h.api(token, 'POST', `/api/v1/chats/${chat.id}/turns`, { message }, { 'idempotency-key': key });
    const first = await send('once', 'turn-key-1');
    const retry = await send('once', 'turn-key-1');
    assert.equal(first.statusCode, 201, first.body);
    assert.equal(retry.statusCode, 201);
    assert.equal(
      retry.headers['idempotency-replayed'],
      'true',
      JSON.stringify([first.headers, retry.headers, first.body, retry.body]),
    );
    assert.deepEqual(retry.json(), first.json());
    assert.equal((await api('GET', `/api/v1/chats/${chat.id}`)).json().chat.turnCount, 1, 'recorded once');
    const changed = await send('twice', 'turn-key-1');
    assert.equal(changed.statusCode, 409);
    assert.equal(changed.json().code, 'idempotency_key_reused');
    const other = await h.user('editor');
    const otherChat = (
      await api('POST', '/api/v1/chats', { agentId: byName.Greeter, title: 'x' }, other.token)
    ).json().chat;
    const sameKeyOtherUser = await h.api(
      other.token,
      'POST',
      `/api/v1/chats/${otherChat.id}/turns`,
      { message: 'once' },
      { 'idempotency-key': 'turn-key-1' },
    );
    assert.equal(sameKeyOtherUser.statusCode, 201, 'keys are per user');
  });
});
