import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { type GatewayHarness, startGateway } from './support.ts';

/**
 * The optional model adapter (the official `openai` client) against a local OpenAI-compatible fake on 127.0.0.1:
 * chat completions with the chat's history, an error status, and the timeout.
 */
describe('agent-gateway model agents (OpenAI-compatible adapter)', () => {
  let h: GatewayHarness;
  let server: http.Server;
  const requests: { model: string; messages: { role: string; content: string }[]; temperature?: number }[] =
    [];
  const held: http.ServerResponse[] = [];

  before(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        const parsed = JSON.parse(body);
        requests.push(parsed);
        const last = parsed.messages.at(-1).content as string;
        if (last === 'slow') {
          held.push(res);
          return;
        }
        if (last === 'break') {
          res.writeHead(400, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: 'bad', type: 'invalid_request_error' } }));
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'chatcmpl-1',
            object: 'chat.completion',
            created: 1,
            model: parsed.model,
            choices: [
              {
                index: 0,
                message: { role: 'assistant', content: `echo: ${last} (${parsed.messages.length} messages)` },
                finish_reason: 'stop',
              },
            ],
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    h = await startGateway({
      env: {
        AGENT_GATEWAY_MODEL_BASE_URL: `http://127.0.0.1:${port}/v1`,
        AGENT_GATEWAY_MODEL_API_KEY: 'sk-test-not-a-secret-0000',
        AGENT_GATEWAY_MODEL_TIMEOUT_MS: '300',
      },
    });
  });
  after(async () => {
    for (const res of held) res.destroy();
    await h?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  test('a model agent answers chat turns through the adapter, with the chat history and its settings', async () => {
    const agent = await h.api(h.demoToken, 'POST', '/api/v1/agents', {
      name: 'Model',
      definition: { kind: 'model', model: 'fake-1', systemPrompt: 'Be brief.', temperature: 0.5 },
    });
    assert.equal(agent.statusCode, 201, agent.body);
    const chat = (
      await h.api(h.demoToken, 'POST', '/api/v1/chats', { agentId: agent.json().agent.id, title: 'm' })
    ).json().chat;
    const first = await h.api(h.demoToken, 'POST', `/api/v1/chats/${chat.id}/turns`, { message: 'hello' });
    assert.equal(first.json().turn.reply.text, 'echo: hello (2 messages)');
    const second = await h.api(h.demoToken, 'POST', `/api/v1/chats/${chat.id}/turns`, { message: 'again' });
    assert.equal(
      second.json().turn.reply.text,
      'echo: again (4 messages)',
      'system, then the earlier turn, then this one',
    );
    const sent = requests.at(-1)!;
    assert.equal(sent.model, 'fake-1');
    assert.equal(sent.temperature, 0.5);
    assert.deepEqual(
      sent.messages.map((m) => m.role),
      ['system', 'user', 'assistant', 'user'],
    );

    const broken = await h.api(h.demoToken, 'POST', `/api/v1/chats/${chat.id}/turns`, { message: 'break' });
    assert.equal(broken.json().turn.status, 'failed');
    assert.deepEqual(broken.json().turn.error, {
      code: 'model_failed',
      message: 'The model answered HTTP 400.',
    });
    const slow = await h.api(h.demoToken, 'POST', `/api/v1/chats/${chat.id}/turns`, { message: 'slow' });
    assert.equal(slow.json().turn.status, 'failed');
    assert.equal(slow.json().turn.error.code, 'model_timeout');
  });
});
