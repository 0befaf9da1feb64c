/**
 * Part of `npm run bench -- media-buying` (issue 19): the text-message command and inbound handling.
 *
 * 1. `POST /api/v2/communications/messages` with the demo Seller Account key, a fresh requestId per request, at 50
 *    connections, against a bare Fastify POST route that parses the same JSON and answers the same bytes with 202.
 *    Target (2-core machine): >= 1,000 req/s.
 * 2. Inbound to queued reply: a signed carrier webhook (real HTTP) until the drafted reply is in the outbound queue
 *    (the inbound text `replied`, polled every 2 ms), one text at a time with the worker running, as p50/p99
 *    milliseconds, against the p50 of one sequential request to the bare route. Target: p50 < 200 ms.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type autocannon from 'autocannon';
import { eq } from 'drizzle-orm';
import Fastify from 'fastify';
import type { ManualClock } from '../src/platform/clock.ts';
import { signCarrierWebhook } from '../src/services/media-buying/communications/index.ts';
import { textInbound } from '../src/services/media-buying/db/schema.ts';
import type { TestPlatform } from '../test/support/platform.ts';
import { load, report } from './lib.ts';

const INBOUND_TEXTS = 200;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Runs both cases on a listening platform (started with its worker) whose seed made the demo line. */
export async function benchTexting(
  platform: TestPlatform,
  clock: ManualClock,
  durationSeconds: number,
): Promise<void> {
  const app = platform.app('media-buying');
  const running = platform.booted.services.get('media-buying')!;
  const demo = platform.credentials('media-buying') as { sellerApiKey: string; sellerLine: string };
  const addr = app.server.address();
  if (!addr || typeof addr !== 'object') throw new Error('not listening');
  const base = `http://127.0.0.1:${addr.port}`;
  const headers = { authorization: `Bearer ${demo.sellerApiKey}`, 'content-type': 'application/json' };
  const command = (requestId: string) =>
    JSON.stringify({
      requestId,
      line: demo.sellerLine,
      destination: '+12125550123',
      text: 'Your proposal is ready.',
    });
  const sample = await app.inject({
    method: 'POST',
    url: '/api/v2/communications/messages',
    headers,
    payload: command(randomUUID()),
  });
  if (sample.statusCode !== 202) throw new Error(`send failed: ${sample.statusCode} ${sample.body}`);

  const bare = Fastify({ logger: false });
  bare.post('/send', async (_request, reply) =>
    reply.code(202).header('content-type', 'application/json; charset=utf-8').send(sample.body),
  );
  await bare.listen({ port: 0, host: '127.0.0.1' });
  const bareAddr = bare.server.address();
  if (!bareAddr || typeof bareAddr !== 'object') throw new Error('bare not listening');
  const bareUrl = `http://127.0.0.1:${bareAddr.port}/send`;
  try {
    console.log(
      `# text command: 50 connections, ${durationSeconds} s per run, fresh requestId per request; ` +
        'baseline = bare Fastify POST route answering the same 202 JSON',
    );
    const requests: autocannon.Request[] = [
      {
        method: 'POST',
        headers,
        body: command(randomUUID()),
        setupRequest: path.join(import.meta.dirname, 'support', 'media-buying-fresh-request-id.cjs') as never,
      },
    ];
    const baseline = await load('baseline: bare POST route', bareUrl, { durationSeconds, requests });
    report(baseline);
    const result = await load(
      'media-buying: POST /api/v2/communications/messages',
      `${base}/api/v2/communications/messages`,
      {
        durationSeconds,
        requests,
      },
    );
    report(result, baseline);

    // Inbound to queued reply, one text at a time, with the worker picking the job up.
    const secret = running.ctx.secrets.deriveKey('media-buying:carrier-webhook');
    const db = running.ctx.db;
    const bareTimes: number[] = [];
    for (let i = 0; i < 50; i++) {
      const t0 = performance.now();
      await fetch(bareUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      }).then((r) => r.text());
      bareTimes.push(performance.now() - t0);
    }
    const times: number[] = [];
    for (let i = 0; i < INBOUND_TEXTS; i++) {
      // 60 replies per line per hour: move the clock an hour on every 50 texts.
      if (i > 0 && i % 50 === 0) clock.advance(61 * 60_000);
      const body = JSON.stringify({
        messageId: `bench-${i}-${randomUUID()}`,
        to: demo.sellerLine,
        from: `+1312555${String(1000 + i).slice(-4)}`,
        text: 'We want a video campaign in Chicago, $25,000 budget',
      });
      const timestamp = Math.floor(clock.nowMs() / 1000);
      const t0 = performance.now();
      const res = await fetch(`${base}/carrier/webhooks/inbound`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-carrier-timestamp': String(timestamp),
          'x-carrier-signature': signCarrierWebhook(secret, timestamp, body),
        },
        body,
      });
      const answer = (await res.json()) as { data: { inboundId: string } };
      for (;;) {
        const [row] = await db
          .select({ status: textInbound.status })
          .from(textInbound)
          .where(eq(textInbound.publicId, answer.data.inboundId));
        if (row && row.status !== 'queued' && row.status !== 'working') {
          if (row.status !== 'replied') throw new Error(`no reply: ${row.status}`);
          break;
        }
        await new Promise((r) => setTimeout(r, 2));
      }
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    bareTimes.sort((a, b) => a - b);
    const bareP50 = percentile(bareTimes, 50);
    console.log(
      `media-buying: inbound text -> reply queued, ${INBOUND_TEXTS} sequential texts: p50 ${percentile(times, 50).toFixed(1)} ms | ` +
        `p99 ${percentile(times, 99).toFixed(1)} ms | bare POST round trip p50 ${bareP50.toFixed(2)} ms | ` +
        `ratio p50 to bare ${(percentile(times, 50) / bareP50).toFixed(1)} (target p50 < 200 ms)`,
    );
  } finally {
    await bare.close();
  }
}
