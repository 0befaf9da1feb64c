import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ValidationError } from '../../../platform/errors.ts';
import { parseCoinList } from '../coin-list.ts';
import { NATIVE_COINS, seedCoinList, WELL_KNOWN_PLATFORMS } from '../seed-data.ts';

describe('coins: parseCoinList', () => {
  test('accepts CoinGecko entries, with or without platforms, dropping null and empty addresses', () => {
    const out = parseCoinList([
      { id: 'bitcoin', symbol: 'btc', name: 'Bitcoin', platforms: {} },
      {
        id: 'usd-coin',
        symbol: 'usdc',
        name: 'USDC',
        platforms: { ethereum: '0xa0b8', 'near-protocol': null, '': '' },
      },
      { id: 'x.y_z-1', symbol: 'XYZ', name: 'X Y Z' },
    ]);
    assert.deepEqual(out, [
      { id: 'bitcoin', symbol: 'btc', name: 'Bitcoin', platforms: {} },
      { id: 'usd-coin', symbol: 'usdc', name: 'USDC', platforms: { ethereum: '0xa0b8' } },
      { id: 'x.y_z-1', symbol: 'XYZ', name: 'X Y Z', platforms: {} },
    ]);
  });

  test('reports every problem at once, by index', () => {
    try {
      parseCoinList([
        { id: '', symbol: 'a', name: 'A' },
        { id: 'has space', symbol: 'b', name: 'B' },
        { id: 'ok', symbol: 'c', name: 'C' },
        { id: 'ok', symbol: 'd', name: 'D' },
        { id: 'e', symbol: 'e' },
        { id: 'f', symbol: 'f', name: 'F', platforms: [] },
        { id: 'g', symbol: 'g', name: 'G', platforms: { ethereum: 42 } },
        { id: 'h', symbol: 'h\u0000', name: 'H' },
        'not an object',
      ]);
      assert.fail('should have thrown');
    } catch (err) {
      assert.ok(err instanceof ValidationError);
      const fields = err.issues.map((i) => i.field);
      assert.deepEqual(fields, [
        '[0].id',
        '[1].id',
        '[3].id',
        '[4].name',
        '[5].platforms',
        '[6].platforms.ethereum',
        '[7].symbol',
        '[8]',
      ]);
      assert.match(err.message, /Nothing was imported/);
    }
  });

  test('a non-array is refused', () => {
    assert.throws(() => parseCoinList({ coins: [] }), ValidationError);
    assert.throws(() => parseCoinList(null), ValidationError);
  });
});

describe('coins: first-start data', () => {
  test('about 4,600 real ids (coinlist plus the ids the token lists name), lowercase symbols, unique ids', () => {
    const list = seedCoinList();
    assert.ok(list.length > 4500 && list.length < 5000, String(list.length));
    assert.equal(new Set(list.map((c) => c.id)).size, list.length);
    assert.ok(list.every((c) => c.symbol === c.symbol.toLowerCase()));
    assert.deepEqual(
      list.map((c) => c.id),
      list.map((c) => c.id).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
      'sorted by id',
    );
  });

  test('every reviewed address stays on its coin; each token family is on every platform we reviewed', () => {
    const list = seedCoinList();
    for (const [id, platforms] of Object.entries(WELL_KNOWN_PLATFORMS)) {
      const coin = list.find((c) => c.id === id);
      assert.ok(coin, `${id} is in the list`);
      for (const [platform, address] of Object.entries(platforms))
        assert.equal(coin.platforms[platform], address, `${id} on ${platform}`);
    }
    // Each token family is on every platform where it exists, under the id CoinGecko gives that copy.
    const onPlatforms = (symbol: string) =>
      new Set(list.filter((c) => c.symbol === symbol).flatMap((c) => Object.keys(c.platforms)));
    const evm = [
      'ethereum',
      'polygon-pos',
      'arbitrum-one',
      'base',
      'optimistic-ethereum',
      'binance-smart-chain',
    ];
    for (const symbol of ['usdc', 'dai', 'link', 'uni'])
      for (const p of evm) assert.ok(onPlatforms(symbol).has(p), `${symbol} on ${p}`);
    for (const p of evm.filter((p) => p !== 'binance-smart-chain'))
      assert.ok(onPlatforms('weth').has(p), `weth on ${p}`);
    for (const p of ['ethereum', 'polygon-pos', 'arbitrum-one', 'optimistic-ethereum', 'solana'])
      assert.ok(onPlatforms('wbtc').has(p), `wbtc on ${p}`);
    const usdt = new Set([...onPlatforms('usdt'), ...onPlatforms('bsc-usd')]);
    for (const p of [...evm, 'solana']) assert.ok(usdt.has(p), `usdt on ${p}`);
    const names = new Map(list.map((c) => [c.id, c.name]));
    assert.equal(names.get('usd-coin'), 'USDC');
    assert.equal(names.get('binancecoin'), 'BNB');
  });

  test('native coins keep platforms {}', () => {
    const list = seedCoinList();
    for (const id of NATIVE_COINS) assert.deepEqual(list.find((c) => c.id === id)?.platforms, {}, id);
  });
});
