/**
 * `npm run bench -- deposits`: new quotes (every request distinct) and repeats of one pending quote, at 50
 * connections, against a bare Fastify JSON route in the same run. Targets (2-core machine): new quotes >= 800 req/s,
 * repeats >= 2,000 req/s.
 */
import path from 'node:path';
import { ManualClock } from '../src/platform/clock.ts';
import { depositsService } from '../src/services/deposits/index.ts';
import { startTestPlatform } from '../test/support/platform.ts';
import { bareServer, load, report } from './lib.ts';

export async function benchDeposits(durationSeconds: number): Promise<void> {
  const platform = await startTestPlatform({
    services: [depositsService],
    clock: new ManualClock(Date.UTC(2026, 0, 1)),
    listen: true,
  });
  try {
    const app = platform.app('deposits');
    const issued = await app.inject({
      method: 'POST',
      url: '/_ops/keys',
      headers: { authorization: platform.operatorAuth },
      payload: { label: 'bench', rateLimitPerMinute: 1_000_000 },
    });
    const key = (issued.json() as { key: string }).key;
    const addr = app.server.address();
    if (!addr || typeof addr !== 'object') throw new Error('not listening');
    const url = `http://127.0.0.1:${addr.port}/v1/stablecoin-gateway/deposit-addresses`;
    const request = {
      sourceChainId: 8453,
      amount: '25000000',
      recipient: '0x1111111111111111111111111111111111111111',
      depositor: '0x2222222222222222222222222222222222222222',
    };
    const headers = { 'content-type': 'application/json', 'x-api-key': key };
    const sample = await app.inject({
      method: 'POST',
      url: '/v1/stablecoin-gateway/deposit-addresses',
      payload: request,
      headers,
    });
    const bare = await bareServer([
      { path: '/quote', body: sample.body, headers: { 'content-type': 'application/json; charset=utf-8' } },
    ]);
    try {
      console.log(
        `# 50 connections, ${durationSeconds} s per run; baseline = bare Fastify route answering the same JSON`,
      );
      const baseline = await load('baseline: bare JSON route', `${bare.url}/quote`, { durationSeconds });
      report(baseline);
      const fresh = await load('deposits: new quotes', url, {
        durationSeconds,
        requests: [
          {
            method: 'POST',
            headers,
            body: JSON.stringify(request),
            setupRequest: path.join(import.meta.dirname, 'support', 'unique-deposit-request.cjs') as never,
          },
        ],
      });
      report(fresh, baseline);
      const repeats = await load('deposits: repeats of a pending quote', url, {
        durationSeconds,
        method: 'POST',
        headers,
        body: JSON.stringify(request),
      });
      report(repeats, baseline);
      const { rows } = await platform.booted.database.pool.query(
        'select count(*)::int as n from deposits.quotes',
      );
      console.log(`# quotes stored: ${rows[0].n}`);
    } finally {
      await bare.close();
    }
  } finally {
    await platform.close();
  }
}
