import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CoinEntry } from '../coin-list.ts';
import {
  buildPlatformMap,
  coverage,
  nameKey,
  type PlatformException,
  type TokenOutcome,
} from '../platform-map.ts';
import { type ListedToken, normaliseTokenLists } from '../token-lists.ts';

/** The matching rule on small, hand-made inputs: each rule and each refusal, one at a time. */
const coin = (
  id: string,
  symbol: string,
  name: string,
  platforms: Record<string, string> = {},
): CoinEntry => ({
  id,
  symbol,
  name,
  platforms,
});
const token = (
  over: Partial<ListedToken> & { address: string; symbol: string; name: string },
): ListedToken => ({
  list: 'superchain',
  chainId: 1,
  kind: 'fungible',
  ...over,
});
const A = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
const MIXED = '0xAbCdEf0000000000000000000000000000000001';

const BASE: CoinEntry[] = [
  coin('maker', 'mkr', 'Maker'),
  coin('aave', 'aave', 'Aave'),
  coin('uniswap', 'uni', 'Uniswap', { ethereum: A(100) }),
  coin('universe', 'uni', 'Universe'),
  coin('havven', 'snx', 'Synthetix'),
  coin('ethereum', 'eth', 'Ethereum'),
];
const NATIVE = new Set(['ethereum']);

function build(entries: ListedToken[], exceptions: PlatformException[] = [], base = BASE) {
  return buildPlatformMap({ base, entries, exceptions, nativeCoins: NATIVE });
}
function outcomeOf(map: ReturnType<typeof build>, address: string, chainId = 1): TokenOutcome {
  const o = map.outcomes.find(
    (x) => x.token.address === address.toLowerCase() && x.token.chainId === chainId,
  );
  assert.ok(o, `an outcome for ${address}`);
  return o;
}
const platformsOf = (map: ReturnType<typeof build>, id: string) =>
  map.coins.find((c) => c.id === id)?.platforms;

describe('coins: platform map, the matching rule', () => {
  test('a unique symbol and name match maps the token, address lowercased, on the chain’s CoinGecko platform', () => {
    const map = build([
      token({ address: MIXED, symbol: 'MKR', name: 'Maker' }),
      token({ chainId: 10, address: A(2), symbol: 'AAVE', name: 'Aave Token' }),
    ]);
    assert.deepEqual(platformsOf(map, 'maker'), { ethereum: MIXED.toLowerCase() });
    assert.deepEqual(platformsOf(map, 'aave'), { 'optimistic-ethereum': A(2) });
    assert.equal((outcomeOf(map, MIXED) as { rule: string }).rule, 'symbol-name');
  });

  test('the name comparison ignores case, accents, punctuation and the word "token"', () => {
    assert.equal(nameKey('SHIBA INU'), nameKey('Shiba Inu'));
    assert.equal(nameKey('Aave Token'), nameKey('Aave'));
    assert.equal(nameKey('Pokémon-Coin'), nameKey('pokemon coin'));
    assert.notEqual(nameKey('Synthetix Network'), nameKey('Synthetix'));
  });

  test('a symbol several coins share is never guessed: no name match, or several, leaves the token unmapped', () => {
    const map = build([token({ address: A(3), symbol: 'UNI', name: 'Unicorn' })]);
    const o = outcomeOf(map, A(3));
    assert.equal(o.status, 'unmatched');
    assert.equal((o as { reason: string }).reason, 'ambiguous-symbol');
    assert.deepEqual(platformsOf(map, 'universe'), {});
    assert.deepEqual(platformsOf(map, 'uniswap'), { ethereum: A(100) });
  });

  test('one coin with the symbol but another name is left to review, not guessed', () => {
    const map = build([token({ address: A(4), symbol: 'SNX', name: 'Synthetix Network Token' })]);
    assert.equal((outcomeOf(map, A(4)) as { reason: string }).reason, 'name-differs');
    assert.deepEqual(platformsOf(map, 'havven'), {});
  });

  test("a list's own CoinGecko id wins over symbol and name, and creates the coin the base list lacks", () => {
    const map = build([
      token({
        list: 'yodl',
        address: A(5),
        symbol: 'SNX',
        name: 'Synthetix Network Token',
        coingeckoId: 'havven',
      }),
      token({ list: 'yodl', address: A(6), symbol: 'SHIB', name: 'Shiba  Inu ', coingeckoId: 'shiba-inu' }),
    ]);
    assert.deepEqual(platformsOf(map, 'havven'), { ethereum: A(5) });
    assert.deepEqual(
      map.coins.find((c) => c.id === 'shiba-inu'),
      coin('shiba-inu', 'shib', 'Shiba Inu', { ethereum: A(6) }),
    );
    assert.deepEqual(
      map.added.newCoins.map((c) => c.id),
      ['shiba-inu'],
    );
  });

  test('the same token in several lists is one token: the strongest evidence of any entry decides', () => {
    const map = build([
      token({ list: 'metamask', address: A(7), symbol: 'SNX', name: 'Synthetix Network Token' }),
      token({ list: 'yodl', address: A(7), symbol: 'SNX', name: 'Synthetix', coingeckoId: 'havven' }),
    ]);
    assert.equal(map.outcomes.length, 1);
    assert.equal(map.outcomes[0]?.token.entries.length, 2);
    assert.equal((map.outcomes[0] as { rule: string }).rule, 'listed-id');
    const c = coverage(map);
    assert.equal(c.tokens.matched, 1);
    assert.equal(c.byList.metamask.matched, 1);
    assert.equal(c.byList.yodl.matched, 1);
  });

  test('a reviewed exception maps a token, or refuses it with its reason; exceptions are keyed by chain and address', () => {
    const exceptions: PlatformException[] = [
      { chainId: 1, address: A(8), coinId: 'havven', reason: 'same project', symbol: 'SNX' },
      { chainId: 1, address: A(9), coinId: null, reason: 'another project', symbol: 'MKR' },
    ];
    const map = build(
      [
        token({ address: A(8), symbol: 'SNX', name: 'Synthetix Network Token' }),
        token({ address: A(9), symbol: 'MKR', name: 'Maker' }),
        token({ chainId: 10, address: A(9), symbol: 'MKR', name: 'Maker' }),
      ],
      exceptions,
    );
    assert.deepEqual(platformsOf(map, 'havven'), { ethereum: A(8) });
    assert.deepEqual(outcomeOf(map, A(9)), {
      token: outcomeOf(map, A(9)).token,
      status: 'unmatched',
      reason: 'refused-by-review',
      detail: 'another project',
    });
    // The exception is for chain 1 only: the same address on OP Mainnet follows the other rules.
    assert.deepEqual(platformsOf(map, 'maker'), { 'optimistic-ethereum': A(9) });
    assert.deepEqual(map.unusedExceptions, []);
  });

  test('an exception that matches no token is reported; one naming an unknown coin or contradicting a reviewed address throws', () => {
    const stale: PlatformException = {
      chainId: 1,
      address: A(10),
      symbol: 'MKR',
      coinId: 'maker',
      reason: 'x',
    };
    assert.deepEqual(build([], [stale]).unusedExceptions, [stale]);
    assert.throws(
      () =>
        build(
          [token({ address: A(11), symbol: 'X', name: 'X' })],
          [{ ...stale, address: A(11), coinId: 'nope' }],
        ),
      /names unknown coin nope/,
    );
    assert.throws(
      () =>
        build(
          [token({ address: A(100), symbol: 'UNI', name: 'Uniswap' })],
          [{ ...stale, address: A(100), coinId: null }],
        ),
      /contradicts the reviewed uniswap/,
    );
  });

  test('reviewed addresses win: a list address for a reviewed coin and platform is dropped, the reviewed one stays', () => {
    const map = build([
      token({ address: A(12), symbol: 'UNI', name: 'Uniswap', coingeckoId: 'uniswap' }),
      token({ address: A(100), symbol: 'UNI', name: 'Uni (old name)' }),
    ]);
    assert.deepEqual(platformsOf(map, 'uniswap'), { ethereum: A(100) });
    assert.equal((outcomeOf(map, A(12)) as { reason: string }).reason, 'conflicts-with-reviewed');
    assert.equal((outcomeOf(map, A(100)) as { rule: string }).rule, 'reviewed');
    assert.deepEqual(map.added.platforms, {});
  });

  test('one address per coin and platform: the strongest rule wins alone, equally strong matches cancel out', () => {
    const stronger = build([
      token({ address: A(13), symbol: 'MKR', name: 'Maker' }),
      token({ list: 'yodl', address: A(14), symbol: 'MKR', name: 'Maker', coingeckoId: 'maker' }),
    ]);
    assert.deepEqual(platformsOf(stronger, 'maker'), { ethereum: A(14) });
    assert.equal((outcomeOf(stronger, A(13)) as { reason: string }).reason, 'conflicting-matches');
    const tie = build([
      token({ address: A(15), symbol: 'MKR', name: 'Maker' }),
      token({ address: A(16), symbol: 'MKR', name: 'Maker' }),
    ]);
    assert.deepEqual(platformsOf(tie, 'maker'), {});
    assert.equal((outcomeOf(tie, A(15)) as { reason: string }).reason, 'conflicting-matches');
    assert.equal((outcomeOf(tie, A(16)) as { reason: string }).reason, 'conflicting-matches');
  });

  test('lists naming two coin ids for one token: none is used', () => {
    const map = build([
      token({ list: 'yodl', address: A(17), symbol: 'MKR', name: 'Maker', coingeckoId: 'maker' }),
      token({ list: 'metamask', address: A(17), symbol: 'AAVE', name: 'Aave', coingeckoId: 'aave' }),
    ]);
    assert.equal((outcomeOf(map, A(17)) as { reason: string }).reason, 'conflicting-matches');
  });

  test('native coins get no address; testnets, NFTs and the native placeholder are out of scope', () => {
    const map = build([
      token({ chainId: 10, address: A(18), symbol: 'ETH', name: 'Ethereum' }),
      token({ chainId: 11155111, address: A(19), symbol: 'MKR', name: 'Maker' }),
      token({ list: 'metamask', address: A(20), symbol: 'MKR', name: 'Maker', kind: 'non-fungible' }),
      token({ address: `0x${'e'.repeat(40)}`, symbol: 'ETH', name: 'Ether', coingeckoId: 'ethereum' }),
      token({ address: '0x1234', symbol: 'MKR', name: 'Maker' }),
    ]);
    assert.deepEqual(platformsOf(map, 'ethereum'), {});
    assert.equal((outcomeOf(map, A(18), 10) as { reason: string }).reason, 'native-coin');
    assert.deepEqual(
      map.outOfScope.map((o) => o.reason),
      ['chain-without-platform', 'non-fungible', 'not-a-contract-address', 'not-a-contract-address'],
    );
    assert.deepEqual(platformsOf(map, 'maker'), {});
    assert.equal(coverage(map).tokens.inScope, 1);
  });

  test('deterministic: the same entries in another order give the same map', () => {
    const entries = [
      token({ address: A(21), symbol: 'MKR', name: 'Maker' }),
      token({ list: 'yodl', address: A(22), symbol: 'SHIB', name: 'Shiba Inu', coingeckoId: 'shiba-inu' }),
      token({ chainId: 8453, address: A(23), symbol: 'AAVE', name: 'Aave' }),
      token({ address: A(24), symbol: 'UNI', name: 'Unicorn' }),
    ];
    const a = build(entries);
    const b = build([...entries].reverse());
    assert.deepEqual(a.coins, b.coins);
    assert.deepEqual(a.added, b.added);
    assert.deepEqual(coverage(a), coverage(b));
  });
});

describe('coins: token list documents', () => {
  test("MetaMask's map (Ethereum, NFTs marked) and Token Lists documents are normalised; malformed entries are reported", () => {
    const { tokens, malformed } = normaliseTokenLists({
      metamask: {
        [MIXED]: { name: 'Maker', symbol: 'MKR', erc20: true },
        [A(1)]: { name: 'Apes', symbol: 'APE', erc721: true },
        [A(2)]: { name: 'no symbol' },
      },
      superchain: {
        tokens: [
          {
            chainId: 10,
            address: A(3),
            symbol: 'OP',
            name: 'Optimism',
            extensions: { coingeckoId: 'optimism' },
          },
          { chainId: '10', address: A(4), symbol: 'X', name: 'X' },
        ],
      },
      yodl: {
        tokens: [
          {
            chainId: 56,
            address: A(5),
            symbol: 'CAKE',
            name: 'PancakeSwap',
            coinGeckoId: 'pancakeswap-token',
          },
        ],
      },
    });
    assert.deepEqual(tokens, [
      { list: 'metamask', chainId: 1, address: MIXED, symbol: 'MKR', name: 'Maker', kind: 'fungible' },
      { list: 'metamask', chainId: 1, address: A(1), symbol: 'APE', name: 'Apes', kind: 'non-fungible' },
      {
        list: 'superchain',
        chainId: 10,
        address: A(3),
        symbol: 'OP',
        name: 'Optimism',
        kind: 'fungible',
        coingeckoId: 'optimism',
      },
      {
        list: 'yodl',
        chainId: 56,
        address: A(5),
        symbol: 'CAKE',
        name: 'PancakeSwap',
        kind: 'fungible',
        coingeckoId: 'pancakeswap-token',
      },
    ]);
    assert.deepEqual(
      malformed.map((m) => `${m.list}[${m.index}]`),
      ['metamask[2]', 'superchain[1]'],
    );
    assert.deepEqual(normaliseTokenLists({ metamask: {}, superchain: {}, yodl: null }).malformed.length, 2);
  });
});
