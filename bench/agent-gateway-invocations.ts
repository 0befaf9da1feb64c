/**
 * `npm run bench -- agent-gateway` (second part): invocations of the seeded demo endpoint (a job endpoint over a
 * deterministic JSON-transform agent, `api_key` authentication), each against a bare Fastify route answering the same
 * JSON in the same run (the ratio):
 *
 * 1. Submission to `completed` seen on the SSE stream: `RUN_CLIENTS` clients each submit a job, open its `eventsUrl`
 *    and read until the `completed` frame; p50 / p99 of that latency, after a 2 s warm-up. Target: p50 < 150 ms.
 * 2. Idempotent replays: one `Idempotency-Key` and body at 50 connections (the stored first answer). Target:
 *    >= 2,000 req/s.
 * 3. Job submissions with a fresh key each (accepted, recorded, dispatch queued) at 50 connections. Target:
 *    >= 800 req/s.
 */
import path from 'node:path';
import { Agent, request } from 'undici';
import { agentGatewayService } from '../src/services/agent-gateway/index.ts';
import { startTestPlatform } from '../test/support/platform.ts';
import { bareServer, load, report } from './lib.ts';

const RUN_CLIENTS = 4;
/** Untimed jobs first: the first requests of a fresh process pay for connections and JIT compilation. */
const WARM_UP_SECONDS = 2;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Runs the three invocation loads for `durationSeconds` each. */
export async function benchAgentGatewayInvocations(durationSeconds: number): Promise<void> {
  const platform = await startTestPlatform({
    services: [agentGatewayService],
    listen: true,
    runWorker: true,
    // The per-credential limit (6,000 a minute by default) would cap one key's load.
    env: { AGENT_GATEWAY_INVOKE_PER_MINUTE: '1000000' },
  });
  try {
    const app = platform.app('agent-gateway');
    const addr = app.server.address();
    if (!addr || typeof addr !== 'object') throw new Error('not listening');
    const base = `http://127.0.0.1:${addr.port}`;
    const seeded = platform.credentials('agent-gateway');
    const url = `${base}/invoke/v1/endpoints/${seeded.endpointSlug as string}/jobs`;
    const headers = { 'x-api-key': seeded.endpointApiKey as string, 'content-type': 'application/json' };
    const body = JSON.stringify({ title: 'Bench', input: seeded.endpointSampleInput });

    // 1. Submission to completed, seen on the stream (after a warm-up of WARM_UP_SECONDS: connections, JIT).
    const dispatcher = new Agent({ connections: RUN_CLIENTS * 2 });
    let failed = 0;
    let n = 0;
    const clients = async (seconds: number, latencies: number[]) => {
      const deadline = performance.now() + seconds * 1000;
      await Promise.all(
        Array.from({ length: RUN_CLIENTS }, async () => {
          while (performance.now() < deadline) {
            const t0 = performance.now();
            n += 1;
            const ack = await request(url, {
              method: 'POST',
              headers: { ...headers, 'idempotency-key': `latency-${n}-${Date.now()}` },
              body,
              dispatcher,
            });
            const { eventsUrl } = (await ack.body.json()) as { eventsUrl: string };
            const stream = await request(`${base}${eventsUrl}`, {
              headers: { 'x-api-key': headers['x-api-key'], accept: 'text/event-stream' },
              dispatcher,
            });
            let text = '';
            for await (const chunk of stream.body) {
              text += chunk.toString();
              if (/"status":"(completed|failed|cancelled|timed_out)"/.test(text)) break;
            }
            stream.body.destroy();
            if (!text.includes('"status":"completed"')) failed += 1;
            latencies.push(performance.now() - t0);
          }
        }),
      );
    };
    await clients(WARM_UP_SECONDS, []);
    failed = 0;
    const latencies: number[] = [];
    const started = performance.now();
    await clients(durationSeconds, latencies);
    const elapsed = (performance.now() - started) / 1000;
    await dispatcher.close();
    latencies.sort((a, b) => a - b);
    console.log(
      `# invocations: the seeded demo endpoint; submission to \`completed\` on the SSE stream, ${RUN_CLIENTS} clients, ${durationSeconds} s`,
    );
    console.log(
      `${'agent-gateway: job submit -> completed (SSE)'.padEnd(48)} ${(latencies.length / elapsed).toFixed(1).padStart(7)} jobs/s | p50 ${percentile(latencies, 50).toFixed(1)} ms | p99 ${percentile(latencies, 99).toFixed(1)} ms | jobs ${latencies.length}${failed ? ` | not completed ${failed}` : ''}`,
    );

    // 2 and 3 against a bare route answering the acknowledgement.
    const sample = await request(url, {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': 'bench-replay' },
      body,
    });
    const sampleBody = await sample.body.text();
    const bare = await bareServer([
      { path: '/ack', body: sampleBody, headers: { 'content-type': 'application/json; charset=utf-8' } },
    ]);
    try {
      console.log(
        `# job submissions and replays: 50 connections, ${durationSeconds} s; baseline = bare route`,
      );
      const baseline = await load('baseline: bare JSON route', `${bare.url}/ack`, { durationSeconds });
      report(baseline);
      const replays = await load('agent-gateway: idempotent replay (same key+body)', url, {
        durationSeconds,
        method: 'POST',
        headers: { ...headers, 'idempotency-key': 'bench-replay' },
        body,
      });
      report(replays, baseline);
      const submissions = await load('agent-gateway: job submission (fresh keys)', url, {
        durationSeconds,
        headers,
        requests: [
          {
            method: 'POST',
            body,
            setupRequest: path.join(import.meta.dirname, 'support', 'agent-gateway-fresh-key.cjs') as never,
          },
        ],
      });
      report(submissions, baseline);
    } finally {
      await bare.close();
    }
  } finally {
    await platform.close();
  }
}
