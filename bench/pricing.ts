/**
 * `npm run bench -- pricing`: `GET /api/v1/projects/demo/plans` (the demo project's plans with their features) at 50
 * connections, against a bare Fastify route answering the same bytes in the same run. Target (2-core machine):
 * >= 2,000 req/s.
 */
import { ManualClock } from '../src/platform/clock.ts';
import { pricingService } from '../src/services/pricing/index.ts';
import { startTestPlatform } from '../test/support/platform.ts';
import { bareServer, load, report } from './lib.ts';

export async function benchPricing(durationSeconds: number): Promise<void> {
  const platform = await startTestPlatform({
    services: [pricingService],
    clock: new ManualClock(Date.UTC(2026, 0, 1)),
    listen: true,
  });
  try {
    const app = platform.app('pricing');
    const issued = await app.inject({
      method: 'POST',
      url: '/_ops/keys',
      headers: { authorization: platform.operatorAuth },
      payload: { projectSlug: 'demo', permission: 'read', label: 'bench', rateLimitPerMinute: 1_000_000 },
    });
    if (issued.statusCode !== 201)
      throw new Error(`issuing a key failed: ${issued.statusCode} ${issued.body}`);
    const key = (issued.json() as { key: string }).key;
    const addr = app.server.address();
    if (!addr || typeof addr !== 'object') throw new Error('not listening');
    const path = '/api/v1/projects/demo/plans';
    const headers = { authorization: `Bearer ${key}` };
    const sample = await app.inject({ method: 'GET', url: path, headers });
    if (sample.statusCode !== 200) throw new Error(`GET /plans failed: ${sample.statusCode} ${sample.body}`);
    const plans = (sample.json() as { plans: { planFeatures: unknown[] }[] }).plans;
    const bare = await bareServer([
      { path: '/plans', body: sample.body, headers: { 'content-type': 'application/json; charset=utf-8' } },
    ]);
    try {
      console.log(
        `# 50 connections, ${durationSeconds} s per run; ${plans.length} plans, ` +
          `${plans.reduce((n, p) => n + p.planFeatures.length, 0)} plan features, ${sample.body.length} bytes; ` +
          'baseline = bare Fastify route answering the same JSON',
      );
      const baseline = await load('baseline: bare JSON route', `${bare.url}/plans`, { durationSeconds });
      report(baseline);
      const result = await load(
        'pricing: GET /plans (demo project)',
        `http://127.0.0.1:${addr.port}${path}`,
        {
          durationSeconds,
          headers,
        },
      );
      report(result, baseline);
    } finally {
      await bare.close();
    }
  } finally {
    await platform.close();
  }
}
