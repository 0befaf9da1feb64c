import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import zlib from 'node:zlib';
import { startTestPlatform, type TestPlatform } from '../../../../test/support/platform.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { coinsService } from '../index.ts';

// 2026-01-01T00:00:00Z: aligned to both refresh periods, so the tests know where the boundaries are.
const START = Date.UTC(2026, 0, 1, 0, 0, 0);
const MINUTE = 60_000;

describe('coins: /api/v3/coins/list', () => {
  const clock = new ManualClock(START);
  let platform: TestPlatform;
  let demoKey: string;
  let proKey: string;

  const list = (query: string, headers: Record<string, string> = {}) =>
    platform.app('coins').inject({ method: 'GET', url: `/api/v3/coins/list${query}`, headers });

  const issueKey = async (tier: 'demo' | 'pro', rateLimitPerMinute?: number) => {
    const res = await platform.app('coins').inject({
      method: 'POST',
      url: '/_ops/keys',
      headers: { authorization: platform.operatorAuth },
      payload: { tier, ...(rateLimitPerMinute ? { rateLimitPerMinute } : {}) },
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as { id: number; key: string; tier: string; hint: string };
  };

  const importCoins = (coins: unknown, query = '') =>
    platform.app('coins').inject({
      method: 'POST',
      url: `/_ops/coins/import${query}`,
      headers: { authorization: platform.operatorAuth },
      payload: coins as object,
    });

  before(async () => {
    platform = await startTestPlatform({ services: [coinsService], clock });
    const creds = platform.credentials('coins');
    demoKey = creds.demoKey as string;
    proKey = creds.proKey as string;
  });
  after(async () => platform?.close());

  describe('data of the first start', () => {
    test('real coin ids, lowercase symbols, sorted by id, no platforms by default', async () => {
      const res = await list('', { 'x-coin-demo-api-key': demoKey });
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      const coins = res.json() as { id: string; symbol: string; name: string; platforms?: unknown }[];
      assert.ok(coins.length > 4300, `expected the ~4,400 coinlist ids, got ${coins.length}`);
      const ids = coins.map((c) => c.id);
      assert.deepEqual(ids, [...ids].sort());
      assert.deepEqual(
        coins.find((c) => c.id === 'bitcoin'),
        { id: 'bitcoin', symbol: 'btc', name: 'Bitcoin' },
      );
      assert.ok(coins.every((c) => c.symbol === c.symbol.toLowerCase()));
      assert.ok(coins.every((c) => !('platforms' in c)));
    });

    test('include_platform=true: token contract addresses per platform, {} for native coins', async () => {
      const res = await list('?include_platform=true', { 'x-coin-demo-api-key': demoKey });
      assert.equal(res.statusCode, 200);
      const coins = res.json() as { id: string; platforms: Record<string, string> }[];
      const byId = new Map(coins.map((c) => [c.id, c]));
      assert.deepEqual(byId.get('bitcoin')?.platforms, {});
      assert.deepEqual(byId.get('ethereum')?.platforms, {});
      assert.equal(byId.get('usd-coin')?.platforms.ethereum, '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48');
      assert.equal(byId.get('usd-coin')?.platforms.solana, 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v');
      assert.equal(byId.get('tether')?.platforms.ethereum, '0xdac17f958d2ee523a2206206994597c13d831ec7');
      assert.equal(
        byId.get('l2-standard-bridged-weth-base')?.platforms.base,
        '0x4200000000000000000000000000000000000006',
        'bridged copies are coins of their own, as in CoinGecko',
      );
      // The token lists' addresses (the issue: mapping a token address to a coin id works for these).
      const onEthereum = new Map<string, string>();
      for (const coin of coins) if (coin.platforms.ethereum) onEthereum.set(coin.platforms.ethereum, coin.id);
      assert.equal(onEthereum.get('0x9f8f72aa9304c8b593d555f12ef6589cc3a579a2'), 'maker');
      assert.equal(onEthereum.get('0x7d1afa7b718fb893db30a3abc0cfc608aacfebb0'), 'matic-network');
      assert.equal(onEthereum.get('0x95ad61b0a150d79219dcf64e1e6cc01f0b64c4ce'), 'shiba-inu');
      assert.equal(onEthereum.get('0x7fc66500c84a76ad7e9c93437bfc5ac33e2ddae9'), 'aave');
      assert.ok(coins.filter((c) => Object.keys(c.platforms).length > 0).length > 400);
      for (const coin of coins) {
        for (const [platform, address] of Object.entries(coin.platforms)) {
          if (platform === 'solana') assert.match(address, /^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
          else assert.match(address, /^0x[0-9a-f]{40}$/, `${coin.id} on ${platform}`);
        }
      }
      assert.ok(coins.every((c) => typeof c.platforms === 'object' && c.platforms !== null));
    });
  });

  describe('keys and errors', () => {
    test('no key: 401 with error_code 10002 in the CoinGecko body', async () => {
      const res = await list('');
      assert.equal(res.statusCode, 401);
      const body = res.json();
      assert.equal(body.status.error_code, 10002);
      assert.match(body.status.error_message, /API Key Missing/);
    });

    test('unknown key: 401 with its own code', async () => {
      const res = await list('', { 'x-coin-demo-api-key': 'coin_demo_not-a-real-key' });
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().status.error_code, 10010);
    });

    test('revoked key: 401 with its own code, at once', async () => {
      const key = await issueKey('demo');
      assert.equal((await list('', { 'x-coin-demo-api-key': key.key })).statusCode, 200);
      const revoke = await platform.app('coins').inject({
        method: 'POST',
        url: `/_ops/keys/${key.id}/revoke`,
        headers: { authorization: platform.operatorAuth },
      });
      assert.equal(revoke.statusCode, 200);
      assert.ok(revoke.json().revokedAt);
      const res = await list('', { 'x-coin-demo-api-key': key.key });
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().status.error_code, 10011);
    });

    test("a key in the other tier's header is refused", async () => {
      assert.equal((await list('', { 'x-coin-demo-api-key': proKey })).statusCode, 401);
      assert.equal((await list('', { 'x-coin-pro-api-key': demoKey })).statusCode, 401);
      assert.equal((await list('', { 'x-coin-pro-api-key': proKey })).statusCode, 200);
    });

    test('the key may come as a query parameter', async () => {
      const res = await list(`?x_coin_demo_api_key=${encodeURIComponent(demoKey)}`);
      assert.equal(res.statusCode, 200);
    });

    test('include_platform accepts true/false only', async () => {
      for (const bad of ['1', 'yes', 'TRUE', '']) {
        const res = await list(`?include_platform=${bad}`, { 'x-coin-demo-api-key': demoKey });
        assert.equal(res.statusCode, 400, `include_platform=${bad}`);
        assert.equal(res.json().status.error_code, 400);
        assert.match(res.json().status.error_message, /include_platform/);
      }
      assert.equal(
        (await list('?include_platform=false', { 'x-coin-demo-api-key': demoKey })).statusCode,
        200,
      );
    });

    test('status=inactive needs a paid-plan key; a bad status is a 400', async () => {
      const demo = await list('?status=inactive', { 'x-coin-demo-api-key': demoKey });
      assert.equal(demo.statusCode, 401);
      assert.equal(demo.json().status.error_code, 10005);
      assert.equal((await list('?status=inactive', { 'x-coin-pro-api-key': proKey })).statusCode, 200);
      assert.equal((await list('?status=deleted', { 'x-coin-pro-api-key': proKey })).statusCode, 400);
    });

    test('unknown paths are 404 in the CoinGecko body; the list has no pagination parameters', async () => {
      const res = await platform.app('coins').inject({ method: 'GET', url: '/api/v3/coins/nope' });
      assert.equal(res.statusCode, 404);
      assert.equal(res.json().status.error_code, 404);
      const paged = await list('?page=2&per_page=1', { 'x-coin-demo-api-key': demoKey });
      assert.equal(paged.statusCode, 200);
      assert.ok((paged.json() as unknown[]).length > 4000);
    });

    test('HEAD answers the headers of GET without a body', async () => {
      const res = await platform.app('coins').inject({
        method: 'HEAD',
        url: '/api/v3/coins/list',
        headers: { 'x-coin-demo-api-key': demoKey },
      });
      assert.equal(res.statusCode, 200);
      assert.equal(res.body, '');
      assert.ok(res.headers.etag);
    });
  });

  describe('caching and encoding', () => {
    test('ETag and If-None-Match give 304', async () => {
      const first = await list('?include_platform=true', { 'x-coin-demo-api-key': demoKey });
      const etag = String(first.headers.etag);
      assert.match(etag, /^"[A-Za-z0-9_-]{27}"$/);
      const again = await list('?include_platform=true', {
        'x-coin-demo-api-key': demoKey,
        'if-none-match': etag,
      });
      assert.equal(again.statusCode, 304);
      assert.equal(again.body, '');
      const other = await list('?include_platform=true', {
        'x-coin-demo-api-key': demoKey,
        'if-none-match': '"x"',
      });
      assert.equal(other.statusCode, 200);
      const without = await list('', { 'x-coin-demo-api-key': demoKey });
      assert.notEqual(without.headers.etag, etag, 'each variant has its own ETag');
    });

    test('gzip and br are negotiated and decode to the identity bytes', async () => {
      const plain = await list('?include_platform=true', { 'x-coin-demo-api-key': demoKey });
      const gz = await list('?include_platform=true', {
        'x-coin-demo-api-key': demoKey,
        'accept-encoding': 'gzip',
      });
      assert.equal(gz.headers['content-encoding'], 'gzip');
      assert.equal(zlib.gunzipSync(gz.rawPayload).toString('utf8'), plain.body);
      const br = await list('?include_platform=true', {
        'x-coin-demo-api-key': demoKey,
        'accept-encoding': 'gzip, deflate, br',
      });
      assert.equal(br.headers['content-encoding'], 'br');
      assert.equal(zlib.brotliDecompressSync(br.rawPayload).toString('utf8'), plain.body);
      assert.ok(br.rawPayload.length < plain.rawPayload.length / 3);
      assert.equal(br.headers.vary, 'Accept-Encoding');
      const none = await list('', { 'x-coin-demo-api-key': demoKey, 'accept-encoding': 'identity' });
      assert.equal(none.headers['content-encoding'], undefined);
    });

    test('an imported coin reaches paid keys at the next 5-minute refresh and demo keys at the next 30-minute one', async () => {
      clock.set(START + 60 * MINUTE);
      const has = async (headers: Record<string, string>) =>
        (await list('', headers)).json().some((c: { id: string }) => c.id === 'zz-fresh-coin');
      assert.equal(await has({ 'x-coin-demo-api-key': demoKey }), false);
      assert.equal(await has({ 'x-coin-pro-api-key': proKey }), false);

      clock.advance(MINUTE);
      const imported = await importCoins([
        { id: 'zz-fresh-coin', symbol: 'zzf', name: 'Fresh Coin', platforms: {} },
      ]);
      assert.equal(imported.statusCode, 200, imported.body);
      assert.deepEqual(imported.json(), { inserted: 1, updated: 0, unchanged: 0, deactivated: 0 });

      // Same periods: neither tier sees it yet.
      assert.equal(await has({ 'x-coin-demo-api-key': demoKey }), false);
      assert.equal(await has({ 'x-coin-pro-api-key': proKey }), false);

      clock.set(START + 65 * MINUTE); // next paid period
      assert.equal(await has({ 'x-coin-pro-api-key': proKey }), true);
      assert.equal(await has({ 'x-coin-demo-api-key': demoKey }), false);

      clock.set(START + 89 * MINUTE + 59_000); // still the public period that began at 60
      assert.equal(await has({ 'x-coin-demo-api-key': demoKey }), false);

      clock.set(START + 90 * MINUTE); // next public period
      assert.equal(await has({ 'x-coin-demo-api-key': demoKey }), true);
    });

    test('cache-control tells how long the snapshot stays', async () => {
      clock.set(START + 120 * MINUTE + 10 * MINUTE);
      const demo = await list('', { 'x-coin-demo-api-key': demoKey });
      assert.equal(demo.headers['cache-control'], 'public, max-age=1200');
      const pro = await list('', { 'x-coin-pro-api-key': proKey });
      assert.equal(pro.headers['cache-control'], 'public, max-age=300');
    });
  });

  describe('rate limits', () => {
    test('per key: 429 in the CoinGecko body with retry-after, then allowed again after the window', async () => {
      clock.set(START + 200 * MINUTE);
      const key = await issueKey('demo', 3);
      const other = await issueKey('demo', 3);
      for (let i = 0; i < 3; i++)
        assert.equal((await list('', { 'x-coin-demo-api-key': key.key })).statusCode, 200);
      const limited = await list('', { 'x-coin-demo-api-key': key.key });
      assert.equal(limited.statusCode, 429);
      assert.equal(limited.json().status.error_code, 429);
      assert.match(limited.json().status.error_message, /exceeded the Rate Limit/);
      assert.equal(limited.headers['retry-after'], '60');
      assert.equal(
        (await list('', { 'x-coin-demo-api-key': other.key })).statusCode,
        200,
        'keys are counted apart',
      );
      clock.advance(30_000);
      const later = await list('', { 'x-coin-demo-api-key': key.key });
      assert.equal(later.statusCode, 429);
      assert.equal(later.headers['retry-after'], '30');
      clock.advance(30_000);
      assert.equal((await list('', { 'x-coin-demo-api-key': key.key })).statusCode, 200);
    });

    test('tier defaults: demo 30 per minute', async () => {
      clock.set(START + 300 * MINUTE);
      const key = await issueKey('demo');
      assert.equal(key.tier, 'demo');
      let ok = 0;
      for (let i = 0; i < 31; i++)
        if ((await list('', { 'x-coin-demo-api-key': key.key })).statusCode === 200) ok++;
      assert.equal(ok, 30);
    });

    test('tier defaults: pro 500 per minute', async () => {
      clock.set(START + 310 * MINUTE);
      const key = await issueKey('pro');
      assert.equal(key.tier, 'pro');
      let ok = 0;
      let limited: Awaited<ReturnType<typeof list>> | undefined;
      for (let i = 0; i < 501; i++) {
        const res = await list('', { 'x-coin-pro-api-key': key.key });
        if (res.statusCode === 200) ok++;
        else limited = res;
      }
      assert.equal(ok, 500);
      assert.equal(limited?.statusCode, 429);
      assert.equal(limited?.headers['retry-after'], '60');
    });
  });

  describe('operator API', () => {
    const ops = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) =>
      platform.app('coins').inject({
        method,
        url,
        headers: { authorization: platform.operatorAuth },
        payload: payload as object,
      });

    test('operator routes need the operator token', async () => {
      const res = await platform.app('coins').inject({ method: 'GET', url: '/_ops/keys' });
      assert.equal(res.statusCode, 401);
      assert.ok(res.json().status.error_message);
      const wrong = await platform
        .app('coins')
        .inject({ method: 'GET', url: '/_ops/keys', headers: { authorization: 'Bearer nope' } });
      assert.equal(wrong.statusCode, 401);
    });

    test('issued keys are shown once and stored hashed', async () => {
      const issued = await issueKey('pro');
      assert.match(issued.key, /^coin_pro_[A-Za-z0-9_-]{43}$/);
      assert.equal(issued.hint, issued.key.slice(-4));
      const listed = await ops('GET', '/_ops/keys');
      assert.ok(!listed.body.includes(issued.key));
      const rows = await platform.booted.database.pool.query('select key_hash from coins.api_keys');
      assert.ok(rows.rows.every((r: { key_hash: string }) => /^[0-9a-f]{64}$/.test(r.key_hash)));
      assert.ok(!JSON.stringify(rows.rows).includes(issued.key));
    });

    test('a bad coin list changes nothing and reports every problem', async () => {
      const before = await ops('GET', '/_ops/coins/counts');
      const res = await importCoins([
        { id: 'ok-coin-1', symbol: 'ok1', name: 'OK 1' },
        { id: 'bad coin', symbol: 'b', name: 'Bad' },
        { id: 'ok-coin-1', symbol: 'dup', name: 'Duplicate' },
        { id: 'no-name', symbol: 'nn' },
      ]);
      assert.equal(res.statusCode, 400);
      const msg = res.json().status.error_message as string;
      assert.match(msg, /Nothing was imported/);
      assert.match(msg, /\[1\]\.id/);
      assert.match(
        msg,
        /\[1\]\.id must contain only .*; \[2\]\.id duplicates coin id "ok-coin-1"; \[3\]\.name is required/,
        'the bad id, the duplicate and the missing name are all named',
      );
      const after = await ops('GET', '/_ops/coins/counts');
      assert.deepEqual(after.json(), before.json());
      const notArray = await importCoins({ id: 'x' });
      assert.equal(notArray.statusCode, 400);
    });

    test('replace marks missing active coins inactive; status can be set per coin', async () => {
      clock.set(START + 400 * MINUTE);
      const before = (await ops('GET', '/_ops/coins/counts')).json() as { active: number; inactive: number };
      const merged = await importCoins([
        {
          id: 'zz-replace-a',
          symbol: 'rpa',
          name: 'Replace A',
          platforms: { ethereum: `0x${'a'.repeat(40)}` },
        },
      ]);
      assert.equal(merged.json().inserted, 1);
      const again = await importCoins([
        {
          id: 'zz-replace-a',
          symbol: 'rpa',
          name: 'Replace A',
          platforms: { ethereum: `0x${'a'.repeat(40)}` },
        },
      ]);
      assert.deepEqual(again.json(), { inserted: 0, updated: 0, unchanged: 1, deactivated: 0 });

      const status = await ops('PUT', '/_ops/coins/status', { ids: ['zz-replace-a'], status: 'inactive' });
      assert.deepEqual(status.json(), { changed: 1 });
      const unknown = await ops('PUT', '/_ops/coins/status', { ids: ['no-such-coin'], status: 'inactive' });
      assert.equal(unknown.statusCode, 404);

      clock.set(START + 405 * MINUTE);
      const inactive = (await list('?status=inactive', { 'x-coin-pro-api-key': proKey })).json() as {
        id: string;
      }[];
      assert.ok(inactive.some((c) => c.id === 'zz-replace-a'));
      const active = (await list('', { 'x-coin-pro-api-key': proKey })).json() as { id: string }[];
      assert.ok(!active.some((c) => c.id === 'zz-replace-a'));

      const replaced = await importCoins(
        [
          { id: 'bitcoin', symbol: 'btc', name: 'Bitcoin', platforms: {} },
          { id: 'ethereum', symbol: 'eth', name: 'Ethereum', platforms: {} },
        ],
        '?mode=replace',
      );
      assert.equal(replaced.statusCode, 200);
      const counts = (await ops('GET', '/_ops/coins/counts')).json() as { active: number; inactive: number };
      assert.equal(counts.active, 2);
      assert.equal(counts.active + counts.inactive, before.active + before.inactive + 1);
      assert.equal(replaced.json().deactivated, before.active - 2 + 0);
      clock.set(START + 410 * MINUTE);
      const activeNow = (await list('', { 'x-coin-pro-api-key': proKey })).json() as { id: string }[];
      assert.deepEqual(
        activeNow.map((c) => c.id),
        ['bitcoin', 'ethereum'],
      );
    });
  });

  test('the OpenAPI document is 3.1 and describes the list, its keys and its errors', async () => {
    const res = await platform.app('coins').inject({ method: 'GET', url: '/openapi.json' });
    const doc = res.json();
    assert.equal(doc.openapi, '3.1.0');
    const op = doc.paths['/api/v3/coins/list'].get;
    assert.equal(op.operationId, 'coinsList');
    assert.ok(op.responses['401'] && op.responses['429']);
    assert.equal(doc.components.securitySchemes.demoKey.name, 'x-coin-demo-api-key');
    assert.equal(doc.components.securitySchemes.proKey.name, 'x-coin-pro-api-key');
  });
});
