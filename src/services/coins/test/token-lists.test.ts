import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { coverageMarkdown } from '../platform-coverage.ts';
import { buildPlatformMap, symbolKey } from '../platform-map.ts';
import {
  baseCoinList,
  listPlatformMap,
  NATIVE_COINS,
  platformExceptions,
  seedCoinList,
} from '../seed-data.ts';
import { CHAIN_PLATFORMS, normaliseTokenLists, readTokenListPackages } from '../token-lists.ts';

/** The platform map built from the installed token lists: the data a first start seeds. */
describe('coins: the platform map of the real token lists', () => {
  const { map } = listPlatformMap();
  const byId = new Map(seedCoinList().map((c) => [c.id, c]));

  test('maker, matic-network, shiba-inu and aave carry their real Ethereum contract addresses', () => {
    assert.equal(byId.get('maker')?.platforms.ethereum, '0x9f8f72aa9304c8b593d555f12ef6589cc3a579a2');
    assert.equal(byId.get('matic-network')?.platforms.ethereum, '0x7d1afa7b718fb893db30a3abc0cfc608aacfebb0');
    assert.equal(byId.get('shiba-inu')?.platforms.ethereum, '0x95ad61b0a150d79219dcf64e1e6cc01f0b64c4ce');
    assert.equal(byId.get('aave')?.platforms.ethereum, '0x7fc66500c84a76ad7e9c93437bfc5ac33e2ddae9');
    // Several chains: AAVE's bridged copies that CoinGecko lists under aave.
    assert.equal(byId.get('aave')?.platforms['polygon-pos'], '0xd6df932a45c0f255f85145f286ea0b292b21c90b');
    assert.equal(
      byId.get('aave')?.platforms['optimistic-ethereum'],
      '0x76fb31fb4af56892a25e32cfc43de717950c9278',
    );
  });

  test('an ambiguous symbol is not mapped: AMP (two coins have the symbol, neither is Amp)', () => {
    const amp = '0xff20817765cb7f73d4bde2e66e067e58d11095c2';
    const unreviewed = buildPlatformMap({
      base: baseCoinList(),
      entries: normaliseTokenLists(readTokenListPackages()).tokens,
      exceptions: [],
      nativeCoins: NATIVE_COINS,
    });
    const o = unreviewed.outcomes.find((x) => x.token.platform === 'ethereum' && x.token.address === amp);
    assert.equal(o?.status === 'unmatched' && o.reason, 'ambiguous-symbol');
    for (const coin of seedCoinList())
      assert.ok(!Object.values(coin.platforms).includes(amp), `${coin.id} does not hold AMP's address`);
    assert.deepEqual(byId.get('universe')?.platforms, {}, 'uni is shared by uniswap and universe');
  });

  test('the review is complete: no token is left ambiguous or with a differing name, and every exception is used', () => {
    const undecided = map.outcomes.filter(
      (o) => o.status === 'unmatched' && (o.reason === 'ambiguous-symbol' || o.reason === 'name-differs'),
    );
    assert.deepEqual(
      undecided.map((o) => `${o.token.platform} ${o.token.address} ${o.token.entries[0]?.symbol}`),
      [],
      'add each to platform-exceptions.json with a coin id or null and a reason',
    );
    assert.deepEqual(map.unusedExceptions, []);
    for (const e of platformExceptions()) {
      const o = map.outcomes.find((x) => x.token.chainId === e.chainId && x.token.address === e.address);
      assert.ok(o, `${e.chainId}:${e.address}`);
      assert.ok(
        o.token.entries.some((entry) => symbolKey(entry.symbol) === symbolKey(e.symbol)),
        `${e.address} is listed as ${e.symbol}`,
      );
      assert.equal(o.status === 'matched' ? o.coinId : null, e.coinId, `${e.address} follows its exception`);
    }
  });

  test('the installed lists are well formed, addresses are lowercase EVM addresses on known platforms', () => {
    assert.deepEqual(normaliseTokenLists(readTokenListPackages()).malformed, []);
    const platforms = new Set([...CHAIN_PLATFORMS.values(), 'solana']);
    for (const coin of byId.values())
      for (const [platform, address] of Object.entries(coin.platforms)) {
        assert.ok(platforms.has(platform), `${coin.id}: platform ${platform}`);
        if (platform !== 'solana') assert.match(address, /^0x[0-9a-f]{40}$/, `${coin.id} on ${platform}`);
      }
    const owners = new Map<string, string>();
    for (const coin of byId.values())
      for (const [platform, address] of Object.entries(coin.platforms)) {
        const key = `${platform} ${address}`;
        assert.equal(owners.get(key), undefined, `${key} belongs to ${owners.get(key)} and ${coin.id}`);
        owners.set(key, coin.id);
      }
  });

  test('the coverage in the service README is what the coverage script computes', () => {
    const readme = readFileSync(path.join(import.meta.dirname, '..', 'README.md'), 'utf8');
    const found = /<!-- coverage:start -->\n([\s\S]*?)\n<!-- coverage:end -->/.exec(readme);
    assert.ok(found, 'the README has the coverage markers');
    assert.equal(found[1], coverageMarkdown(map));
  });
});
