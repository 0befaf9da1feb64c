import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The token lists the platform map is built from (npm data packages; see the service README, "Data"). */
export type TokenListName = 'metamask' | 'superchain' | 'yodl';

/** Where a list comes from: its npm package (pinned to an exact version in package.json) and its licence. */
export interface TokenListSource {
  name: TokenListName;
  package: string;
  license: string;
  description: string;
}

/** The chosen lists, in the order their entries are read (the order only breaks ties in reports, never matches). */
export const TOKEN_LIST_SOURCES: readonly TokenListSource[] = [
  {
    name: 'metamask',
    package: '@metamask/contract-metadata',
    license: 'ISC',
    description: "MetaMask's contract metadata: Ethereum mainnet tokens the wallet recognises",
  },
  {
    name: 'superchain',
    package: '@eth-optimism/tokenlist',
    license: 'MIT',
    description:
      "Optimism's Superchain Token List: Ethereum and the OP Stack chains (OP Mainnet, Base, Unichain, ...)",
  },
  {
    name: 'yodl',
    package: '@yodlpay/tokenlists',
    license: 'MIT',
    description:
      "Yodl's generated token list (Ethereum, OP Mainnet, BNB Smart Chain, Polygon, Base, Arbitrum), each entry with its CoinGecko id",
  },
];

/**
 * EVM chain id -> CoinGecko asset-platform id (the keys of `platforms` in `/coins/list?include_platform=true`, and
 * the `id` of CoinGecko's `/asset_platforms`, whose `chain_identifier` is the chain id). Chains not here (testnets,
 * and chains whose platform id we have not confirmed) are left out of the map.
 */
export const CHAIN_PLATFORMS: ReadonlyMap<number, string> = new Map([
  [1, 'ethereum'],
  [10, 'optimistic-ethereum'],
  [56, 'binance-smart-chain'],
  [100, 'xdai'],
  [130, 'unichain'],
  [137, 'polygon-pos'],
  [480, 'world-chain'],
  [1135, 'lisk'],
  [1750, 'metal-l2'],
  [1868, 'soneium'],
  [8453, 'base'],
  [34443, 'mode'],
  [42161, 'arbitrum-one'],
  [42220, 'celo'],
  [43114, 'avalanche'],
  [57073, 'ink'],
]);

/** One entry of a token list, normalised to the Token Lists standard's fields. */
export interface ListedToken {
  list: TokenListName;
  /** EIP-155 chain id. */
  chainId: number;
  /** The contract address as the list writes it (checksummed or not). */
  address: string;
  symbol: string;
  name: string;
  /** `fungible` for ERC-20 tokens; MetaMask's list also names NFT collections (`non-fungible`). */
  kind: 'fungible' | 'non-fungible';
  /** The CoinGecko coin id the list itself gives (Yodl's `coinGeckoId`, the standard's `extensions.coingeckoId`). */
  coingeckoId?: string;
}

/** A list entry that is not even shaped like a token (reported, never matched). */
export interface MalformedEntry {
  list: TokenListName;
  index: number;
  problem: string;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);

/**
 * Reads one Token Lists standard entry (`{chainId, address, symbol, name, extensions?}`; Yodl puts `coinGeckoId` at
 * the top level).
 */
function standardEntry(
  list: TokenListName,
  raw: unknown,
  index: number,
  malformed: MalformedEntry[],
): ListedToken | undefined {
  const t = (raw ?? {}) as Record<string, unknown>;
  const chainId = t.chainId;
  const address = str(t.address);
  const symbol = str(t.symbol);
  const name = str(t.name);
  if (!Number.isSafeInteger(chainId) || !address || !symbol || !name) {
    malformed.push({ list, index, problem: 'chainId, address, symbol and name are required' });
    return undefined;
  }
  const ext = (t.extensions ?? {}) as Record<string, unknown>;
  const coingeckoId = str(t.coinGeckoId) ?? str(t.coingeckoId) ?? str(ext.coingeckoId);
  return {
    list,
    chainId: chainId as number,
    address,
    symbol,
    name,
    kind: 'fungible',
    ...(coingeckoId ? { coingeckoId } : {}),
  };
}

/**
 * Normalises the three packages' data: MetaMask's `contract-map.json` (address -> `{name, symbol, erc20,
 * erc721}`, all on Ethereum), and the Token Lists documents of the Superchain list and Yodl's generated list.
 * Pure: the raw documents are arguments, so a test can feed its own.
 */
export function normaliseTokenLists(raw: { metamask: unknown; superchain: unknown; yodl: unknown }): {
  tokens: ListedToken[];
  malformed: MalformedEntry[];
} {
  const tokens: ListedToken[] = [];
  const malformed: MalformedEntry[] = [];
  const metamask = (raw.metamask ?? {}) as Record<string, unknown>;
  Object.entries(metamask).forEach(([address, value], index) => {
    const v = (value ?? {}) as Record<string, unknown>;
    const symbol = str(v.symbol);
    const name = str(v.name);
    if (!symbol || !name) {
      malformed.push({ list: 'metamask', index, problem: 'symbol and name are required' });
      return;
    }
    tokens.push({
      list: 'metamask',
      chainId: 1,
      address,
      symbol,
      name,
      kind: v.erc20 === true ? 'fungible' : 'non-fungible',
    });
  });
  for (const list of ['superchain', 'yodl'] as const) {
    const doc = (raw[list] ?? {}) as { tokens?: unknown };
    if (!Array.isArray(doc.tokens)) {
      malformed.push({ list, index: -1, problem: 'the document has no tokens array' });
      continue;
    }
    doc.tokens.forEach((entry, index) => {
      const token = standardEntry(list, entry, index, malformed);
      if (token) tokens.push(token);
    });
  }
  return { tokens, malformed };
}

/** The raw documents of the installed packages. */
export function readTokenListPackages(): { metamask: unknown; superchain: unknown; yodl: unknown } {
  return {
    metamask: require('@metamask/contract-metadata'),
    superchain: (require('@eth-optimism/tokenlist') as { default: unknown }).default,
    yodl: require('@yodlpay/tokenlists/dist/tokenlist-generated.json'),
  };
}
