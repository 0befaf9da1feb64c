import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { waitUntil } from '../../../../test/support/wait.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { type GatewayHarness, startGateway } from './support.ts';

/**
 * Work that waits on the outside world: `fetch_url` through the platform's SSRF guard, the deadline of a turn or
 * step (a tool that hangs ends it with a clean error), and the renewal of a running step's claim (a long step is
 * never taken from a live worker).
 */

/** A local server that holds every request until `release()`. */
async function holdingServer() {
  const held: http.ServerResponse[] = [];
  const server = http.createServer((_req, res) => {
    held.push(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/slow`,
    held,
    release(body: string) {
      for (const res of held.splice(0)) res.end(body);
    },
    async close() {
      for (const res of held.splice(0)) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const fetcher = (url: string) => ({
  kind: 'tool_use',
  tools: ['fetch_url'],
  calls: [{ tool: 'fetch_url', args: { url } }],
  answer: '{{ results.fetch_url.body }}',
});

describe('agent-gateway turn deadline and fetch_url refusals', () => {
  let h: GatewayHarness;
  let slow: Awaited<ReturnType<typeof holdingServer>>;
  before(async () => {
    slow = await holdingServer();
    h = await startGateway({
      env: { AGENT_GATEWAY_TURN_TIMEOUT_MS: '300', AGENT_GATEWAY_TOOL_TIMEOUT_MS: '60000' },
    });
  });
  after(async () => {
    await slow?.close(); // first: the calls it holds end now, not at their own timeout
    await h?.close();
  });

  const chatWith = async (definition: unknown) => {
    const agent = await h.api(h.demoToken, 'POST', '/api/v1/agents', { name: 'Fetcher', definition });
    assert.equal(agent.statusCode, 201, agent.body);
    const chat = await h.api(h.demoToken, 'POST', '/api/v1/chats', {
      agentId: agent.json().agent.id,
      title: 'fetch',
    });
    return { agentId: agent.json().agent.id as string, chatId: chat.json().chat.id as string };
  };

  test('a tool call that hangs ends the turn at the deadline with turn_timeout, recorded as failed', async () => {
    const { chatId, agentId } = await chatWith(fetcher(slow.url));
    const turn = await h.api(h.demoToken, 'POST', `/api/v1/chats/${chatId}/turns`, { message: 'go' });
    assert.equal(turn.statusCode, 201, turn.body);
    assert.equal(turn.json().turn.status, 'failed');
    assert.equal(turn.json().turn.error.code, 'turn_timeout');
    assert.match(turn.json().turn.error.message, /within 300 ms/);
    assert.ok(slow.held.length >= 1, 'the call did reach the hanging server');
    // A run step of the same agent fails the same way.
    const run = await h.api(h.demoToken, 'POST', '/api/v1/orchestration-runs', {
      target: { type: 'agent', id: agentId },
    });
    const runId = run.json().run.id;
    await h.drive(async () => {
      const r = (await h.api(h.demoToken, 'GET', `/api/v1/orchestration-runs/${runId}`)).json().run;
      return r.status === 'failed' || r.status === 'completed';
    });
    const failed = (await h.api(h.demoToken, 'GET', `/api/v1/orchestration-runs/${runId}`)).json().run;
    assert.equal(failed.status, 'failed');
    assert.equal(failed.error.code, 'turn_timeout');
  });

  test('fetch_url reaches public addresses only: a metadata address is refused with a clear message', async () => {
    const { chatId } = await chatWith(fetcher('http://169.254.169.254/latest/meta-data/'));
    const turn = await h.api(h.demoToken, 'POST', `/api/v1/chats/${chatId}/turns`, { message: 'go' });
    assert.equal(turn.statusCode, 201, turn.body);
    const call = turn.json().turn.reply.data.tools[0];
    assert.equal(call.error.code, 'fetch_blocked_address');
    assert.match(call.error.message, /public addresses only: Destination is a cloud metadata address/);
  });
});

describe('agent-gateway fetch_url without OUTBOUND_ALLOW_PRIVATE', () => {
  let h: GatewayHarness;
  before(async () => {
    h = await startGateway({ env: { OUTBOUND_ALLOW_PRIVATE: 'false' } });
  });
  after(() => h?.close());

  test('loopback and private addresses are refused; nothing is fetched', async () => {
    const agent = await h.api(h.demoToken, 'POST', '/api/v1/agents', {
      name: 'Fetcher',
      definition: fetcher('http://127.0.0.1:9/'),
    });
    const chat = await h.api(h.demoToken, 'POST', '/api/v1/chats', {
      agentId: agent.json().agent.id,
      title: 'ssrf',
    });
    const turn = await h.api(h.demoToken, 'POST', `/api/v1/chats/${chat.json().chat.id}/turns`, {
      message: 'go',
    });
    const call = turn.json().turn.reply.data.tools[0];
    assert.equal(call.error.code, 'fetch_blocked_address', turn.body);
    assert.match(call.error.message, /public addresses only/);
  });
});

describe('agent-gateway step claim renewal', () => {
  const clock = new ManualClock(new Date('2026-11-24T12:00:00Z'));
  let h: GatewayHarness;
  let slow: Awaited<ReturnType<typeof holdingServer>>;
  before(async () => {
    slow = await holdingServer();
    h = await startGateway({ clock, env: { AGENT_GATEWAY_STEP_LEASE_SECONDS: '10' } });
  });
  after(async () => {
    await slow?.close(); // first: the calls it holds end now, not at their own timeout
    await h?.close();
  });

  test('a step that runs longer than the lease keeps its claim while its worker lives', async () => {
    const agent = await h.api(h.demoToken, 'POST', '/api/v1/agents', {
      name: 'Long fetch',
      definition: fetcher(slow.url),
    });
    const run = await h.api(h.demoToken, 'POST', '/api/v1/orchestration-runs', {
      target: { type: 'agent', id: agent.json().agent.id },
    });
    const runId = run.json().run.id as string;
    const pool = h.platform.booted.database.pool;
    const step = async () =>
      (
        await pool.query(
          `select status, attempt, claimed_at from agent_gateway.run_steps where run_id = $1 and node_type = 'agent'`,
          [runId],
        )
      ).rows[0] as { status: string; attempt: number; claimed_at: Date };
    const working = h.platform.runDueJobs();
    await waitUntil('the step waits on the hanging server', () => slow.held.length >= 1);
    assert.equal((await step()).status, 'running');
    for (let i = 0; i < 3; i++) {
      clock.advance(9_000);
      const now = clock.nowMs();
      // The worker renews its claim (every quarter of the lease) to the clock's now.
      await waitUntil('the claim is renewed', async () => (await step()).claimed_at.getTime() === now, {
        timeoutMs: 15_000,
      });
    }
    // 27 s after the claim, with a 10 s lease: the sweep leaves a renewed claim alone.
    const tick = await h.ops('POST', '/_ops/runtime/tick');
    assert.equal(tick.json().reclaimedSteps, 0, tick.body);
    slow.release('finally');
    await working;
    await h.drive(
      async () =>
        (await h.api(h.demoToken, 'GET', `/api/v1/orchestration-runs/${runId}`)).json().run.status ===
        'completed',
    );
    const done = await step();
    assert.deepEqual([done.status, done.attempt], ['completed', 1], 'one attempt, never taken over');
    // Once the worker is done, nothing renews the claim any more.
    const settled = done.claimed_at.getTime();
    clock.advance(60_000);
    assert.equal((await step()).claimed_at.getTime(), settled);
  });
});
