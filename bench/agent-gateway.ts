/**
 * `npm run bench -- agent-gateway`: two loads of the agent-orchestration gateway.
 *
 * 1. Chat turns: `POST /api/v1/chats/{id}/turns` with the demo Greeter (a template agent: the turn runs in the
 *    request and is recorded) at 50 connections over 50 chats, against a bare Fastify route in the same run.
 *    Target (2-core machine): >= 500 turns/s.
 * 2. Workflow runs to completion: a published 5-node workflow (start -> three agents -> end, three agent steps as
 *    Graphile Worker jobs, WORKER_CONCURRENCY 8) started over HTTP by 4 clients for `durationSeconds`; each run's
 *    latency from the POST to `completed` (read every 5 ms). Target: p50 < 250 ms.
 */
import path from 'node:path';
import { Agent, request } from 'undici';
import { agentGatewayService } from '../src/services/agent-gateway/index.ts';
import { startTestPlatform } from '../test/support/platform.ts';
import { benchAgentGatewayInvocations } from './agent-gateway-invocations.ts';
import { bareServer, load, report } from './lib.ts';

const CHATS = 50;
const RUN_CLIENTS = 4;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export async function benchAgentGateway(durationSeconds: number): Promise<void> {
  const platform = await startTestPlatform({
    services: [agentGatewayService],
    listen: true,
    runWorker: true,
  });
  try {
    const app = platform.app('agent-gateway');
    const addr = app.server.address();
    if (!addr || typeof addr !== 'object') throw new Error('not listening');
    const base = `http://127.0.0.1:${addr.port}`;
    const token = platform.credentials('agent-gateway').userToken as string;
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const call = async (method: 'GET' | 'POST', url: string, payload?: unknown) => {
      const res = await app.inject({
        method,
        url,
        headers,
        ...(payload ? { payload: payload as object } : {}),
      });
      if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
      return res.json();
    };
    const agents = (await call('GET', '/api/v1/agents')).agents as { id: string; name: string }[];
    const greeter = agents.find((a) => a.name === 'Greeter')!.id;
    const chatIds: string[] = [];
    for (let i = 0; i < CHATS; i++)
      chatIds.push((await call('POST', '/api/v1/chats', { agentId: greeter, title: `bench ${i}` })).chat.id);
    process.env.AGENT_GATEWAY_BENCH_CHAT_IDS = chatIds.join(',');
    const sample = await app.inject({
      method: 'POST',
      url: `/api/v1/chats/${chatIds[0]}/turns`,
      headers,
      payload: { message: 'hello' },
    });
    const bare = await bareServer([
      { path: '/turn', body: sample.body, headers: { 'content-type': 'application/json; charset=utf-8' } },
    ]);
    try {
      console.log(
        `# chat turns: 50 connections over ${CHATS} chats, ${durationSeconds} s per run; baseline = bare Fastify route answering the same JSON`,
      );
      const baseline = await load('baseline: bare JSON route', `${bare.url}/turn`, { durationSeconds });
      report(baseline);
      const turns = await load('agent-gateway: POST chat turn (template agent)', base, {
        durationSeconds,
        headers,
        requests: [
          {
            method: 'POST',
            body: JSON.stringify({ message: 'hello' }),
            setupRequest: path.join(import.meta.dirname, 'support', 'agent-gateway-rotate-chat.cjs') as never,
          },
        ],
      });
      report(turns, baseline);
    } finally {
      await bare.close();
    }

    const upper = (
      await call('POST', '/api/v1/agents', {
        name: 'Upper',
        definition: { kind: 'template', template: '{{ input.text | upper }}' },
      })
    ).agent.id;
    const wrap = (
      await call('POST', '/api/v1/agents', {
        name: 'Wrap',
        definition: { kind: 'json_transform', output: { text: '[{{ input.text }}]' } },
      })
    ).agent.id;
    const def = (
      await call('POST', '/api/v1/orchestration-definitions', {
        name: 'Bench pipeline',
        graph: {
          nodes: [
            { id: 'start', type: 'start' },
            { id: 'greet', type: 'agent', agentId: greeter },
            { id: 'shout', type: 'agent', agentId: upper },
            { id: 'wrap', type: 'agent', agentId: wrap },
            { id: 'end', type: 'end' },
          ],
          edges: [
            { from: 'start', to: 'greet' },
            { from: 'greet', to: 'shout' },
            { from: 'shout', to: 'wrap' },
            { from: 'wrap', to: 'end' },
          ],
        },
      })
    ).definition.id;
    await call('POST', `/api/v1/orchestration-definitions/${def}/publish`, { expectedVersion: 1 });
    const pool = platform.booted.database.pool;
    const dispatcher = new Agent({ connections: RUN_CLIENTS });
    const latencies: number[] = [];
    let failed = 0;
    const body = JSON.stringify({
      target: { type: 'orchestration', id: def },
      input: { message: 'bench', text: 'bench' },
    });
    const deadline = performance.now() + durationSeconds * 1000;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: RUN_CLIENTS }, async () => {
        while (performance.now() < deadline) {
          const t0 = performance.now();
          const res = await request(`${base}/api/v1/orchestration-runs`, {
            method: 'POST',
            headers,
            body,
            dispatcher,
          });
          const { run } = (await res.body.json()) as { run: { id: string } };
          for (;;) {
            const { rows } = await pool.query('select status from agent_gateway.runs where id = $1', [
              run.id,
            ]);
            const status = rows[0]?.status;
            if (status === 'completed' || status === 'failed') {
              if (status === 'failed') failed += 1;
              break;
            }
            await new Promise((r) => setTimeout(r, 5));
          }
          latencies.push(performance.now() - t0);
        }
      }),
    );
    const elapsed = (performance.now() - started) / 1000;
    await dispatcher.close();
    latencies.sort((a, b) => a - b);
    console.log(
      `# workflow runs: a published 5-node workflow (3 agent steps as jobs), ${RUN_CLIENTS} clients, ${durationSeconds} s`,
    );
    console.log(
      `${'agent-gateway: 5-node workflow run to completion'.padEnd(48)} ${(latencies.length / elapsed).toFixed(1).padStart(7)} runs/s | p50 ${percentile(latencies, 50).toFixed(1)} ms | p99 ${percentile(latencies, 99).toFixed(1)} ms | runs ${latencies.length}${failed ? ` | failed ${failed}` : ''}`,
    );
  } finally {
    await platform.close();
  }
  // 3-5: invocations of an endpoint (agent-gateway-invocations.ts), on a platform of their own.
  await benchAgentGatewayInvocations(durationSeconds);
}
