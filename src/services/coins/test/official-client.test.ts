import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Coingecko from '@coingecko/coingecko-typescript';
import { baseUrlOf, startTestPlatform, type TestPlatform } from '../../../../test/support/platform.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { PING_ANSWER } from '../coins-routes.ts';
import { coinsService } from '../index.ts';

/**
 * The official CoinGecko client (`@coingecko/coingecko-typescript`) pointed at our service (base URL `/api/v3`):
 * its own key header switched off, ours set as a default header.
 */
describe('coins: the official CoinGecko TypeScript client', () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  let platform: TestPlatform;
  let baseURL: string;

  const client = (headers: Record<string, string | null>, maxRetries = 2) =>
    new Coingecko({
      baseURL,
      maxRetries,
      timeout: 10_000,
      defaultHeaders: { 'x-cg-demo-api-key': null, ...headers },
    });

  const issueKey = async (rateLimitPerMinute: number) => {
    const res = await platform.app('coins').inject({
      method: 'POST',
      url: '/_ops/keys',
      headers: { authorization: platform.operatorAuth },
      payload: { tier: 'demo', rateLimitPerMinute },
    });
    return (res.json() as { key: string }).key;
  };

  before(async () => {
    platform = await startTestPlatform({ services: [coinsService], clock, listen: true });
    baseURL = `${baseUrlOf(platform.app('coins'))}/api/v3`;
  });
  after(async () => platform?.close());

  test('coins.list.get returns the real list, with platforms when asked', async () => {
    const cg = client({ 'x-coin-demo-api-key': platform.credentials('coins').demoKey as string });
    const plain = await cg.coins.list.get();
    assert.ok(plain.length > 4300);
    const withPlatforms = await cg.coins.list.get({ include_platform: true });
    const usdc = withPlatforms.find((c) => c.id === 'usd-coin');
    assert.equal(usdc?.platforms?.ethereum, '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48');
    assert.deepEqual(withPlatforms.find((c) => c.id === 'bitcoin')?.platforms, {});
    // What a client does with the list: find the coin id of a token contract address.
    const idOf = (address: string) => withPlatforms.find((c) => c.platforms?.ethereum === address)?.id;
    assert.equal(idOf('0x9f8f72aa9304c8b593d555f12ef6589cc3a579a2'), 'maker');
    assert.equal(idOf('0x7d1afa7b718fb893db30a3abc0cfc608aacfebb0'), 'matic-network');
    assert.equal(idOf('0x95ad61b0a150d79219dcf64e1e6cc01f0b64c4ce'), 'shiba-inu');
    assert.equal(idOf('0x7fc66500c84a76ad7e9c93437bfc5ac33e2ddae9'), 'aave');
  });

  test("ping.get answers CoinGecko's status message; it needs a key like every public route", async () => {
    const cg = client({ 'x-coin-demo-api-key': platform.credentials('coins').demoKey as string });
    assert.deepEqual(await cg.ping.get(), { gecko_says: PING_ANSWER });
    await assert.rejects(client({}, 0).ping.get(), (err: unknown) => {
      assert.ok(err instanceof Coingecko.AuthenticationError);
      assert.equal((err.error as { status: { error_code: number } }).status.error_code, 10002);
      return true;
    });
  });

  test('the paid-plan header works with the client too', async () => {
    const cg = client({ 'x-coin-pro-api-key': platform.credentials('coins').proKey as string });
    const inactive = await cg.coins.list.get({ status: 'inactive' });
    assert.ok(Array.isArray(inactive));
  });

  test('401 surfaces as AuthenticationError carrying our error body, and is not retried', async () => {
    let calls = 0;
    const cg = new Coingecko({
      baseURL,
      maxRetries: 2,
      defaultHeaders: { 'x-cg-demo-api-key': null, 'x-coin-demo-api-key': 'coin_demo_wrong' },
      fetch: async (url, init) => {
        calls++;
        return fetch(url, init);
      },
    });
    await assert.rejects(cg.coins.list.get(), (err: unknown) => {
      assert.ok(err instanceof Coingecko.AuthenticationError);
      assert.equal(err.status, 401);
      assert.deepEqual((err.error as { status: { error_code: number } }).status.error_code, 10010);
      return true;
    });
    assert.equal(calls, 1);
  });

  test('429 surfaces as RateLimitError with retry-after when retries are off', async () => {
    const key = await issueKey(1);
    const cg = client({ 'x-coin-demo-api-key': key }, 0);
    await cg.coins.list.get();
    await assert.rejects(cg.coins.list.get(), (err: unknown) => {
      assert.ok(err instanceof Coingecko.RateLimitError);
      assert.equal(err.status, 429);
      assert.ok(Number(err.headers?.get('retry-after')) >= 1);
      assert.equal((err.error as { status: { error_code: number } }).status.error_code, 429);
      return true;
    });
  });

  test('the client waits the retry-after it is given and succeeds once the window has passed', async () => {
    const key = await issueKey(1);
    const cg = client({ 'x-coin-demo-api-key': key }, 2);
    await cg.coins.list.get();
    // 59 s into the window: the 429 says retry-after: 1.
    clock.advance(59_000);
    const seen: string[] = [];
    const started = Date.now();
    const cgObserved = new Coingecko({
      baseURL,
      maxRetries: 2,
      defaultHeaders: { 'x-cg-demo-api-key': null, 'x-coin-demo-api-key': key },
      fetch: async (url, init) => {
        const res = await fetch(url, init);
        seen.push(`${res.status}:${res.headers.get('retry-after') ?? ''}`);
        // While the client sleeps, the window ends.
        if (res.status === 429) setTimeout(() => clock.advance(2_000), 100);
        return res;
      },
    });
    const list = await cgObserved.coins.list.get();
    assert.ok(list.length > 4300);
    assert.deepEqual(seen, ['429:1', '200:']);
    assert.ok(Date.now() - started >= 900, 'the client slept for retry-after');
  });
});
