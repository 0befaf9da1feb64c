import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startTestPlatform, type TestPlatform } from '../../../../test/support/platform.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { coinsService } from '../index.ts';

/** A CoinGecko-compatible upstream on 127.0.0.1 whose answers the test sets. */
function fakeUpstream() {
  const state = {
    active: [] as unknown,
    inactive: [] as unknown,
    status: 200,
    raw: undefined as string | undefined,
    requests: [] as { url: string; key: string | undefined }[],
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    state.requests.push({ url: req.url ?? '', key: req.headers['x-cg-pro-api-key'] as string | undefined });
    if (url.pathname !== '/api/v3/coins/list') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(state.status, { 'content-type': 'application/json' });
    res.end(
      state.raw ??
        JSON.stringify(url.searchParams.get('status') === 'inactive' ? state.inactive : state.active),
    );
  });
  return { server, state };
}

describe('coins: upstream mirror (COINS_UPSTREAM_URL)', () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const upstream = fakeUpstream();
  let platform: TestPlatform;

  const runs = async () =>
    (
      await platform.app('coins').inject({
        method: 'GET',
        url: '/_ops/upstream/runs',
        headers: { authorization: platform.operatorAuth },
      })
    ).json().runs as {
      status: string;
      inserted: number;
      updated: number;
      deactivated: number;
      error: string | null;
    }[];
  const counts = async () =>
    (
      await platform.app('coins').inject({
        method: 'GET',
        url: '/_ops/coins/counts',
        headers: { authorization: platform.operatorAuth },
      })
    ).json() as { active: number; inactive: number };
  const sync = async () => {
    const res = await platform.app('coins').inject({
      method: 'POST',
      url: '/_ops/upstream/sync',
      headers: { authorization: platform.operatorAuth },
    });
    assert.equal(res.statusCode, 202);
    await platform.runDueJobs();
  };

  before(async () => {
    await new Promise<void>((r) => upstream.server.listen(0, '127.0.0.1', r));
    const port = (upstream.server.address() as AddressInfo).port;
    platform = await startTestPlatform({
      services: [coinsService],
      clock,
      env: {
        COINS_UPSTREAM_URL: `http://127.0.0.1:${port}/api/v3`,
        COINS_UPSTREAM_KEY: 'upstream-secret',
        COINS_UPSTREAM_KEY_HEADER: 'x-cg-pro-api-key',
      },
    });
  });
  after(async () => {
    await platform?.close();
    upstream.server.close();
  });

  test('a run copies the active and inactive lists; coins the upstream dropped become inactive', async () => {
    upstream.state.active = [
      { id: 'bitcoin', symbol: 'btc', name: 'Bitcoin', platforms: {} },
      {
        id: 'usd-coin',
        symbol: 'usdc',
        name: 'USDC',
        platforms: { ethereum: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48' },
      },
      { id: 'brand-new', symbol: 'new', name: 'Brand New', platforms: {} },
    ];
    upstream.state.inactive = [{ id: 'old-dead-coin', symbol: 'odc', name: 'Old Dead', platforms: {} }];
    const before = await counts();
    await sync();
    const [run] = await runs();
    assert.equal(run?.status, 'succeeded', run?.error ?? '');
    assert.equal(run?.inserted, 2);
    assert.equal(run?.deactivated, before.active - 2);
    assert.deepEqual(await counts(), { active: 3, inactive: before.active + before.inactive - 2 + 1 - 0 });
    assert.ok(upstream.state.requests.every((r) => r.key === 'upstream-secret'));
    assert.ok(upstream.state.requests.some((r) => r.url.includes('include_platform=true')));
  });

  test('an upstream error or an invalid list changes nothing and is recorded', async () => {
    const before = await counts();
    upstream.state.status = 500;
    await sync();
    assert.equal((await runs())[0]?.status, 'failed');
    assert.match((await runs())[0]?.error ?? '', /HTTP 500/);

    upstream.state.status = 200;
    upstream.state.active = [{ id: 'bitcoin', symbol: 'btc' }];
    await sync();
    assert.equal((await runs())[0]?.status, 'failed');
    assert.match((await runs())[0]?.error ?? '', /invalid/);

    upstream.state.raw = 'not json';
    await sync();
    assert.match((await runs())[0]?.error ?? '', /not valid JSON/);
    upstream.state.raw = undefined;
    assert.deepEqual(await counts(), before);
  });

  test('without COINS_UPSTREAM_URL the sync route says so', async () => {
    const bare = await startTestPlatform({ services: [coinsService], clock });
    try {
      const res = await bare.app('coins').inject({
        method: 'POST',
        url: '/_ops/upstream/sync',
        headers: { authorization: bare.operatorAuth },
      });
      assert.equal(res.statusCode, 400);
      assert.match(res.json().status.error_message, /COINS_UPSTREAM_URL/);
    } finally {
      await bare.close();
    }
  });
});
