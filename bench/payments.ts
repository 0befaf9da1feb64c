/**
 * `npm run bench -- payments`: creating payment intents with three line items (`POST /v1/payment-intents`), and
 * reading them (`GET /v1/payment-intents/{id}`, rotating over 500 intents), at 50 connections, against a bare Fastify
 * route answering the same intent JSON in the same run. Target (2-core machine): >= 800 creates/s.
 */
import path from 'node:path';
import { ManualClock } from '../src/platform/clock.ts';
import { paymentsService } from '../src/services/payments/index.ts';
import { startTestPlatform } from '../test/support/platform.ts';
import { bareServer, load, report } from './lib.ts';

export async function benchPayments(durationSeconds: number): Promise<void> {
  const platform = await startTestPlatform({
    services: [paymentsService],
    clock: new ManualClock(Date.UTC(2026, 0, 1)),
    listen: true,
    env: { PAYMENTS_KEY_RATE_LIMIT: '100000000' },
  });
  try {
    const app = platform.app('payments');
    const seeded = platform.credentials('payments') as { merchantKey: string; customerPartyId: string };
    const addr = app.server.address();
    if (!addr || typeof addr !== 'object') throw new Error('not listening');
    const base = `http://127.0.0.1:${addr.port}`;
    const headers = { authorization: `Bearer ${seeded.merchantKey}`, 'content-type': 'application/json' };
    const body = JSON.stringify({
      data: {
        type: 'paymentIntent',
        attributes: {
          description: 'Bench order',
          taxMode: 'exclusive',
          lineItems: [
            {
              referenceId: 'sku-1',
              description: 'Notebook',
              quantity: 2,
              unitAmount: 1250,
              taxCode: 'txcd_99999999',
            },
            { description: 'E-book', quantity: 1, unitAmount: 999, taxCode: 'txcd_10000000' },
            { description: 'Shipping', quantity: 1, unitAmount: 499 },
          ],
        },
        relationships: { customerParty: { data: { type: 'party', id: seeded.customerPartyId } } },
      },
    });
    const ids: string[] = [];
    let sampleBody = '';
    for (let i = 0; i < 500; i++) {
      const res = await app.inject({ method: 'POST', url: '/v1/payment-intents', headers, payload: body });
      if (res.statusCode !== 201) throw new Error(`create failed: ${res.statusCode} ${res.body}`);
      ids.push((res.json() as { data: { id: string } }).data.id);
      sampleBody = res.body;
    }
    process.env.PAYMENTS_BENCH_INTENT_IDS = ids.join(',');
    const bare = await bareServer([
      { path: '/intent', body: sampleBody, headers: { 'content-type': 'application/json; charset=utf-8' } },
    ]);
    try {
      console.log(
        `# 50 connections, ${durationSeconds} s per run; intents with 3 line items (${sampleBody.length} bytes); ` +
          'baseline = bare Fastify route answering the same JSON',
      );
      const baseline = await load('baseline: bare JSON route', `${bare.url}/intent`, { durationSeconds });
      report(baseline);
      const creates = await load('payments: create intent (3 line items)', `${base}/v1/payment-intents`, {
        durationSeconds,
        method: 'POST',
        headers,
        body,
      });
      report(creates, baseline);
      const reads = await load('payments: read intent', `${base}/v1/payment-intents/${ids[0]}`, {
        durationSeconds,
        headers: { authorization: headers.authorization },
        requests: [
          {
            method: 'GET',
            setupRequest: path.join(import.meta.dirname, 'support', 'payments-rotate-intent.cjs') as never,
          },
        ],
      });
      report(reads, baseline);
      const { rows } = await platform.booted.database.pool.query(
        'select count(*)::int as n from payments.payment_intents',
      );
      console.log(`# intents stored: ${rows[0].n}`);
    } finally {
      await bare.close();
    }
  } finally {
    await platform.close();
  }
}
