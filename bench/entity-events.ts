/**
 * `npm run bench -- entity-events` (export `benchEntityEvents`): N events fanned out to M enrollments, all received
 * by a local receiver running in its own process. Events are stored through the operator API in paced batches for
 * `durationSeconds`; the worker (Graphile Worker, WORKER_CONCURRENCY 16) delivers each one with a signed POST.
 * Prints deliveries per second, p50/p99 from "event stored" (events.stored_at) to "delivery received" (receiver
 * wall clock), and the ratio of deliveries/s to plain HTTP POSTs sent from one process to the same receiver (same
 * concurrency, same body size) in the same run. Targets: >= 500 deliveries/s, p50 < 100 ms.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { Agent, request } from 'undici';
import { entityEventsService } from '../src/services/entity-events/index.ts';
import { startTestPlatform } from '../test/support/platform.ts';

const WEBHOOKS = 5;
const ENROLLMENTS_PER_WEBHOOK = 2;
const ENTITIES = 200;
const BATCH = 5;
const BATCH_EVERY_MS = 100;
const CONCURRENCY = 16;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function startReceiver() {
  const child = spawn(
    process.execPath,
    [path.join(import.meta.dirname, 'support', 'entity-events-receiver.mjs')],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const port = await new Promise<number>((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).once('line', (l) => resolve(Number(l)));
    child.once('error', reject);
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    async stats(): Promise<{ count: number; arrivals: [string, number][] }> {
      const res = await request(`${url}/stats`);
      return (await res.body.json()) as { count: number; arrivals: [string, number][] };
    },
    stop: () => child.kill('SIGTERM'),
  };
}

/** Plain POSTs from one process, `CONCURRENCY` at a time, for `seconds`: requests per second. */
async function baselinePosts(url: string, body: string, seconds: number): Promise<number> {
  const agent = new Agent({ connections: CONCURRENCY });
  const deadline = performance.now() + seconds * 1000;
  let n = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) {
        const res = await request(url, {
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json' },
          dispatcher: agent,
        });
        await res.body.dump();
        n++;
      }
    }),
  );
  const rate = n / ((performance.now() - started) / 1000);
  await agent.close();
  return rate;
}

export async function benchEntityEvents(durationSeconds: number): Promise<void> {
  const receiver = await startReceiver();
  const platform = await startTestPlatform({
    services: [entityEventsService],
    runWorker: true,
    env: { WORKER_CONCURRENCY: String(CONCURRENCY), ENTITY_EVENTS_SIMULATOR_EVENTS_PER_MINUTE: '0' },
  });
  try {
    const app = platform.app('entity-events');
    const key = platform.credentials('entity-events').apiKey as string;
    const entityIds = Array.from({ length: ENTITIES }, (_, i) => `bench-${i}`);
    for (let w = 0; w < WEBHOOKS; w++) {
      const hook = await app.inject({
        method: 'POST',
        url: '/v2/webhooks',
        headers: { api_key: key },
        payload: { name: `bench-${w}`, webhook_url: `${receiver.url}/hook` },
      });
      for (let e = 0; e < ENROLLMENTS_PER_WEBHOOK; e++) {
        const res = await app.inject({
          method: 'POST',
          url: '/v2/businesses/events/enrollments',
          headers: { api_key: key },
          payload: {
            enrollment_key: `bench-${w}-${e}`,
            webhook_id: hook.json().webhook_id,
            event_types: ['new_product'],
            business_ids: entityIds,
          },
        });
        if (res.statusCode !== 201) throw new Error(res.body);
      }
    }
    const M = WEBHOOKS * ENROLLMENTS_PER_WEBHOOK;
    const sampleBody = JSON.stringify({
      webhook_id: 'wh_00000000000000000000000000000000',
      tenant_id: 'tn_00000000000000000000000000000000',
      partner_id: 'pt_00000000000000000000000000000000',
      event_id: 'ev_00000000000000000000000000000000',
      event_name: 'new_product',
      enrollment_key: 'bench-0-0',
      enrollment_id: 'en_00000000000000000000000000000000',
      entity_type: 'business',
      business_id: 'bench-0',
      event_time: new Date().toISOString(),
      data: { product_name: 'bench-0' },
    });

    const baseline = await baselinePosts(
      `${receiver.url}/baseline`,
      sampleBody,
      Math.min(5, durationSeconds),
    );
    await receiver.stats();
    console.log(
      `# ${M} enrollments (${WEBHOOKS} webhooks) on ${ENTITIES} entities; worker concurrency ${CONCURRENCY}; ` +
        'receiver in its own process',
    );
    console.log(
      `baseline: plain POSTs from one process (${CONCURRENCY} concurrent)`.padEnd(60),
      `${baseline.toFixed(0).padStart(7)} req/s`,
    );

    let seq = 0;
    /** Stores `batch` events every `everyMs` for `seconds`, waits for every delivery, and reports. */
    const phase = async (label: string, batch: number, everyMs: number, seconds: number) => {
      const ids: string[] = [];
      const started = Date.now();
      let next = performance.now();
      while (Date.now() - started < seconds * 1000) {
        const events = Array.from({ length: batch }, () => {
          const n = seq++;
          return {
            entity_type: 'business',
            entity_id: entityIds[n % ENTITIES],
            event_name: 'new_product',
            event_time: new Date().toISOString(),
            data: { product_name: `p${n}` },
          };
        });
        const res = await app.inject({
          method: 'POST',
          url: '/_ops/events',
          headers: { authorization: platform.operatorAuth },
          payload: { events },
        });
        if (res.statusCode !== 201) throw new Error(res.body);
        for (const e of res.json().events as { event_id: string }[]) ids.push(e.event_id);
        next += everyMs;
        const wait = next - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
      const expected = ids.length * M;
      const arrivals: [string, number][] = [];
      const waitUntil = Date.now() + 180_000;
      while (arrivals.length < expected && Date.now() < waitUntil) {
        arrivals.push(...(await receiver.stats()).arrivals);
        if (arrivals.length < expected) await new Promise((r) => setTimeout(r, 50));
      }
      const { rows } = await platform.booted.database.pool.query<{ id: string; ms: string }>(
        `select id, (extract(epoch from stored_at) * 1000)::bigint as ms from entity_events.events
          where id in (select json_array_elements_text($1::json))`,
        [JSON.stringify(ids)],
      );
      const storedAt = new Map(rows.map((r) => [r.id, Number(r.ms)]));
      const latencies = arrivals.map(([id, at]) => at - (storedAt.get(id) ?? at)).sort((a, b) => a - b);
      const firstStored = Math.min(...storedAt.values());
      const lastReceived = Math.max(...arrivals.map(([, at]) => at));
      const rate = arrivals.length / ((lastReceived - firstStored) / 1000);
      console.log(
        `${label}: ${ids.length} events x ${M} enrollments`.padEnd(60),
        `${rate.toFixed(0).padStart(7)} deliveries/s | received ${arrivals.length}/${expected} | ` +
          `stored->received p50 ${percentile(latencies, 50)} ms p99 ${percentile(latencies, 99)} ms | ` +
          `ratio to baseline ${(rate / baseline).toFixed(3)}`,
      );
    };
    // Throughput: events stored as fast as one client can (batches of 100), deliveries drained by the worker.
    await phase('saturation (batches of 100, back to back)', 100, 0, Math.max(2, durationSeconds / 2));
    // Latency at the target rate: 500 deliveries/s offered (5 events every 100 ms x 10 enrollments).
    await phase(
      `paced ${(BATCH * M * 1000) / BATCH_EVERY_MS} deliveries/s offered`,
      BATCH,
      BATCH_EVERY_MS,
      durationSeconds,
    );
  } finally {
    await platform.close();
    receiver.stop();
  }
}
