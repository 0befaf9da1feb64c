import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { CoinEntry } from './coin-list.ts';
import { buildPlatformMap, type PlatformException, type PlatformMap } from './platform-map.ts';
import { normaliseTokenLists, readTokenListPackages } from './token-lists.ts';

const require = createRequire(import.meta.url);

/**
 * Token contract addresses we keep ourselves (the `coinlist` package has none), under CoinGecko's coin and platform
 * ids, EVM addresses lowercase and Solana base58, as CoinGecko returns them. Native coins (bitcoin, ethereum,
 * solana, ...) have no entry: their `platforms` is `{}`.
 *
 * As in CoinGecko's own list, a bridged copy of a token is its own coin: WETH on Base is
 * `l2-standard-bridged-weth-base`, not a platform of `weth`; USDT on BNB Smart Chain is
 * `binance-bridged-usdt-bnb-smart-chain`. So each token family below is present on every platform where it
 * exists, under the coin id CoinGecko gives that copy (checked against CoinGecko payloads in public code; see the
 * service README).
 */
export const WELL_KNOWN_PLATFORMS: Record<string, Record<string, string>> = {
  'usd-coin': {
    ethereum: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48',
    'polygon-pos': '0x3c499c542cef5e3811e1192ce70d8cc03d5c3359',
    'arbitrum-one': '0xaf88d065e77c8cc2239327c5edb3a432268e5831',
    base: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913',
    'optimistic-ethereum': '0x0b2c639c533813f4aa9d7837caf62653d097ff85',
    solana: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
  },
  'binance-bridged-usdc-bnb-smart-chain': {
    'binance-smart-chain': '0x8ac76a51cc950d9822d68b83fe1ad97b32cd580d',
  },
  tether: {
    ethereum: '0xdac17f958d2ee523a2206206994597c13d831ec7',
    'polygon-pos': '0xc2132d05d31c914a87c6611c10748aeb04b58e8f',
    'arbitrum-one': '0xfd086bc7cd5c481dcc9c85ebe478a1c0b69fcbb9',
    'optimistic-ethereum': '0x94b008aa00579c1307b0ef2c499ad98a8ce58e58',
    solana: 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB',
  },
  'binance-bridged-usdt-bnb-smart-chain': {
    'binance-smart-chain': '0x55d398326f99059ff775485246999027b3197955',
  },
  'l2-standard-bridged-usdt-base': {
    base: '0xfde4c96c8593536e31f229ea8f37b2ada2699bb2',
  },
  dai: {
    ethereum: '0x6b175474e89094c44da98b954eedeac495271d0f',
  },
  'polygon-pos-bridged-dai-polygon-pos': { 'polygon-pos': '0x8f3cf7ad23cd3cadbd9735aff958023239c6a063' },
  'makerdao-arbitrum-bridged-dai-arbitrum-one': {
    'arbitrum-one': '0xda10009cbd5d07dd0cecc66161fc93d7c9000da1',
  },
  'makerdao-optimism-bridged-dai-optimism': {
    'optimistic-ethereum': '0xda10009cbd5d07dd0cecc66161fc93d7c9000da1',
  },
  'l2-standard-bridged-dai-base': { base: '0x50c5725949a6f0c72e6c4a641f24049a917db0cb' },
  'binance-peg-dai': { 'binance-smart-chain': '0x1af3f329e8be154074d8769d1ffa4ee058b1dbc3' },
  weth: {
    ethereum: '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2',
  },
  'polygon-pos-bridged-weth-polygon-pos': { 'polygon-pos': '0x7ceb23fd6bc0add59e62ac25578270cff1b9f619' },
  'arbitrum-bridged-weth-arbitrum-one': { 'arbitrum-one': '0x82af49447d8a07e3bd95bd0d56f35241523fbab1' },
  'l2-standard-bridged-weth-optimism': {
    'optimistic-ethereum': '0x4200000000000000000000000000000000000006',
  },
  'l2-standard-bridged-weth-base': { base: '0x4200000000000000000000000000000000000006' },
  'wrapped-bitcoin': {
    ethereum: '0x2260fac5e5542a773aa44fbcfedf7c193bc2c599',
    solana: '5XZw2LKTyrfvfiskJ78AMpackRjPcyCif1WhUsPDuVqQ',
  },
  'polygon-bridged-wbtc-polygon-pos': { 'polygon-pos': '0x1bfd67037b42cf73acf2047067bd4f2c47d9bfd6' },
  'arbitrum-bridged-wbtc-arbitrum-one': { 'arbitrum-one': '0x2f2a2543b76a4166549f7aab2e75bef0aefc5b0f' },
  'optimism-bridged-wbtc-optimism': { 'optimistic-ethereum': '0x68f180fcce6836688e9084f035309e29bf0a2095' },
  chainlink: {
    ethereum: '0x514910771af9ca656af840dff83e8264ecf986ca',
    'polygon-pos': '0x53e0bca35ec356bd5dddfebbd1fc0fd03fabad39',
    'arbitrum-one': '0xf97f4df75117a78c1a5a0dbb814af92458539fb4',
    'optimistic-ethereum': '0x350a791bfc2c21f9ed5d10980dad2e2638ffa7f6',
    'binance-smart-chain': '0xf8a0bf9cf54bb92f17374d9e9a321e6a111a51bd',
    base: '0x88fb150bdc53a65fe94dea0c9ba0a6daf8c6e196',
  },
  uniswap: {
    ethereum: '0x1f9840a85d5af5bf1d1762f925bdaddc4201f984',
    'polygon-pos': '0xb33eaad8d922b1083446dc23f610c2567fb5180f',
    'arbitrum-one': '0xfa7f8980b0f1e64a2062791cc3b0871572f1f7f0',
    'optimistic-ethereum': '0x6fd9d7ad17242c41f7131d257212c54a0e816691',
    'binance-smart-chain': '0xbf5140a22578168fd562dccf235e5d43a02ce9b1',
    base: '0xc3de830ea07524a0761646a6a4e4be0e114a3c83',
  },
};

/**
 * Coins the `coinlist` package predates or names differently today, with CoinGecko's current ids, symbols and
 * names: the bridged token copies above, the native coins of their platforms, and renames ("USD Coin" is now
 * "USDC", "Binance Coin" is "BNB"). An entry here replaces the package's entry of the same id.
 */
export const CURRENT_COINS: Omit<CoinEntry, 'platforms'>[] = [
  { id: 'usd-coin', symbol: 'usdc', name: 'USDC' },
  { id: 'binancecoin', symbol: 'bnb', name: 'BNB' },
  { id: 'weth', symbol: 'weth', name: 'WETH' },
  { id: 'dai', symbol: 'dai', name: 'Dai' },
  { id: 'uniswap', symbol: 'uni', name: 'Uniswap' },
  { id: 'solana', symbol: 'sol', name: 'Solana' },
  { id: 'avalanche-2', symbol: 'avax', name: 'Avalanche' },
  { id: 'matic-network', symbol: 'matic', name: 'MATIC (migrated to POL)' },
  { id: 'polygon-ecosystem-token', symbol: 'pol', name: 'POL (ex-MATIC)' },
  { id: 'arbitrum', symbol: 'arb', name: 'Arbitrum' },
  { id: 'optimism', symbol: 'op', name: 'Optimism' },
  {
    id: 'binance-bridged-usdc-bnb-smart-chain',
    symbol: 'usdc',
    name: 'Binance Bridged USDC (BNB Smart Chain)',
  },
  {
    id: 'binance-bridged-usdt-bnb-smart-chain',
    symbol: 'bsc-usd',
    name: 'Binance Bridged USDT (BNB Smart Chain)',
  },
  { id: 'l2-standard-bridged-usdt-base', symbol: 'usdt', name: 'L2 Standard Bridged USDT (Base)' },
  { id: 'polygon-pos-bridged-dai-polygon-pos', symbol: 'dai', name: 'Polygon PoS Bridged DAI (Polygon POS)' },
  {
    id: 'makerdao-arbitrum-bridged-dai-arbitrum-one',
    symbol: 'dai',
    name: 'MakerDAO Arbitrum Bridged DAI (Arbitrum One)',
  },
  {
    id: 'makerdao-optimism-bridged-dai-optimism',
    symbol: 'dai',
    name: 'MakerDAO Optimism Bridged DAI (Optimism)',
  },
  { id: 'l2-standard-bridged-dai-base', symbol: 'dai', name: 'L2 Standard Bridged DAI (Base)' },
  { id: 'binance-peg-dai', symbol: 'dai', name: 'Binance-Peg DAI' },
  {
    id: 'polygon-pos-bridged-weth-polygon-pos',
    symbol: 'weth',
    name: 'Polygon PoS Bridged WETH (Polygon POS)',
  },
  { id: 'arbitrum-bridged-weth-arbitrum-one', symbol: 'weth', name: 'Arbitrum Bridged WETH (Arbitrum One)' },
  { id: 'l2-standard-bridged-weth-optimism', symbol: 'weth', name: 'L2 Standard Bridged WETH (Optimism)' },
  { id: 'l2-standard-bridged-weth-base', symbol: 'weth', name: 'L2 Standard Bridged WETH (Base)' },
  { id: 'polygon-bridged-wbtc-polygon-pos', symbol: 'wbtc', name: 'Polygon Bridged WBTC (Polygon POS)' },
  { id: 'arbitrum-bridged-wbtc-arbitrum-one', symbol: 'wbtc', name: 'Arbitrum Bridged WBTC (Arbitrum One)' },
  { id: 'optimism-bridged-wbtc-optimism', symbol: 'wbtc', name: 'Optimism Bridged WBTC (Optimism)' },
];

/**
 * Coins that are a chain's own native coin: CoinGecko lists them with `platforms: {}`, and the token lists never
 * give them an address (a bridged or wrapped copy is a coin of its own).
 */
export const NATIVE_COINS: ReadonlySet<string> = new Set([
  'bitcoin',
  'ethereum',
  'solana',
  'binancecoin',
  'avalanche-2',
]);

/**
 * The coin list before the token lists: the ~4,400 real CoinGecko ids of the `coinlist` package (MIT; symbols
 * lowercased, as the API returns them), updated with {@link CURRENT_COINS}, with {@link WELL_KNOWN_PLATFORMS}
 * applied. Sorted by id.
 */
export function baseCoinList(): CoinEntry[] {
  const raw = require('coinlist/src/coins.json') as { id: string; symbol: string; name: string }[];
  const byId = new Map<string, CoinEntry>();
  for (const c of raw)
    byId.set(c.id, { id: c.id, symbol: c.symbol.toLowerCase(), name: c.name, platforms: {} });
  for (const c of CURRENT_COINS) byId.set(c.id, { ...c, platforms: {} });
  for (const [id, platforms] of Object.entries(WELL_KNOWN_PLATFORMS)) {
    const coin = byId.get(id);
    if (coin) coin.platforms = { ...platforms };
  }
  return [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * The reviewed exceptions of the platform map (`platform-exceptions.json`: `{chainId, address, symbol, coinId,
 * reason}` each).
 * @throws Error naming the first malformed entry (a file we ship: a test reads it too).
 */
export function platformExceptions(): PlatformException[] {
  const raw = require('./platform-exceptions.json') as unknown;
  if (!Array.isArray(raw)) throw new Error('platform-exceptions.json must be an array');
  return raw.map((e: Record<string, unknown>, i) => {
    const ok =
      Number.isSafeInteger(e.chainId) &&
      typeof e.address === 'string' &&
      /^0x[0-9a-f]{40}$/.test(e.address) &&
      typeof e.symbol === 'string' &&
      (e.coinId === null || typeof e.coinId === 'string') &&
      typeof e.reason === 'string' &&
      e.reason.length > 0;
    if (!ok)
      throw new Error(
        `platform-exceptions.json [${i}] needs chainId, a lowercase address, symbol, coinId and reason`,
      );
    return e as unknown as PlatformException;
  });
}

let cached: { map: PlatformMap; digest: string } | undefined;

/**
 * The platform map of the installed token lists (`token-lists.ts`) over {@link baseCoinList}, with the reviewed
 * exceptions (`platform-map.ts` states the rule), and a SHA-256 digest of what the lists add (the seed update
 * records it). Built once per process (about 50 ms).
 */
export function listPlatformMap(): { map: PlatformMap; digest: string } {
  if (!cached) {
    const map = buildPlatformMap({
      base: baseCoinList(),
      entries: normaliseTokenLists(readTokenListPackages()).tokens,
      exceptions: platformExceptions(),
      nativeCoins: NATIVE_COINS,
    });
    cached = { map, digest: createHash('sha256').update(JSON.stringify(map.added)).digest('hex') };
  }
  return cached;
}

/**
 * The first start's coin list: {@link baseCoinList} with the token lists' platforms merged in and the coins the
 * lists name by CoinGecko id added ({@link listPlatformMap}). Sorted by id.
 */
export function seedCoinList(): CoinEntry[] {
  return listPlatformMap().map.coins;
}
