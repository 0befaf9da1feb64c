/**
 * `npm run bench -- coins`: `/api/v3/coins/list` with and without platforms at 50 connections, against a bare
 * Fastify route serving the same bytes in the same run (the ratio). Targets (2-core machine): ratio >= 0.8, and
 * >= 1,000 req/s for the full list with platforms.
 */
import { ManualClock } from '../src/platform/clock.ts';
import { coinsService } from '../src/services/coins/index.ts';
import { startTestPlatform } from '../test/support/platform.ts';
import { bareServer, type LoadResult, load, report } from './lib.ts';

export async function benchCoins(durationSeconds: number): Promise<void> {
  // A fixed clock: the whole run stays inside one snapshot period, as a real client would see most of the time.
  const platform = await startTestPlatform({
    services: [coinsService],
    clock: new ManualClock(Date.UTC(2026, 0, 1, 0, 1)),
    listen: true,
  });
  try {
    const app = platform.app('coins');
    const issued = await app.inject({
      method: 'POST',
      url: '/_ops/keys',
      headers: { authorization: platform.operatorAuth },
      payload: { tier: 'pro', label: 'bench', rateLimitPerMinute: 1_000_000 },
    });
    const key = (issued.json() as { key: string }).key;
    const addr = app.server.address();
    if (!addr || typeof addr !== 'object') throw new Error('not listening');
    const base = `http://127.0.0.1:${addr.port}`;

    const cases = [
      { label: 'list (no platforms)', query: '', encoding: 'identity' },
      { label: 'list include_platform=true', query: '?include_platform=true', encoding: 'identity' },
      { label: 'list include_platform=true, br', query: '?include_platform=true', encoding: 'br' },
      { label: 'list include_platform=true, gzip', query: '?include_platform=true', encoding: 'gzip' },
    ];

    // Capture the exact bytes and headers each case answers, for the baseline.
    const captured = [];
    for (const c of cases) {
      const res = await app.inject({
        method: 'GET',
        url: `/api/v3/coins/list${c.query}`,
        headers: { 'x-coin-pro-api-key': key, 'accept-encoding': c.encoding },
      });
      if (res.statusCode !== 200) throw new Error(`${c.label}: HTTP ${res.statusCode}`);
      const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
      if (res.headers['content-encoding'])
        headers['content-encoding'] = String(res.headers['content-encoding']);
      captured.push({ ...c, body: res.rawPayload, headers, path: `/case${captured.length}` });
      console.log(`# ${c.label}: ${res.rawPayload.length} bytes`);
    }
    const bare = await bareServer(captured.map((c) => ({ path: c.path, body: c.body, headers: c.headers })));
    try {
      console.log(
        `# 50 connections, ${durationSeconds} s per run; baseline = bare Fastify route serving the same bytes`,
      );
      for (const c of captured) {
        const headers = { 'x-coin-pro-api-key': key, 'accept-encoding': c.encoding };
        const baseline: LoadResult = await load(`baseline: ${c.label}`, `${bare.url}${c.path}`, {
          durationSeconds,
          headers,
        });
        const ours = await load(`coins: ${c.label}`, `${base}/api/v3/coins/list${c.query}`, {
          durationSeconds,
          headers,
        });
        report(baseline);
        report(ours, baseline);
      }
    } finally {
      await bare.close();
    }
  } finally {
    await platform.close();
  }
}
