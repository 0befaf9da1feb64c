import type { CoinEntry } from './coin-list.ts';
import { CHAIN_PLATFORMS, type ListedToken, type TokenListName } from './token-lists.ts';

/**
 * A reviewed decision about one token (chain + contract address), kept in `platform-exceptions.json`: the coin it
 * belongs to, or `null` when it must stay unmapped. `reason` says what was checked.
 */
export interface PlatformException {
  chainId: number;
  address: string;
  /** The symbol the lists give the token (for the reader; the chain and address identify it). */
  symbol: string;
  coinId: string | null;
  reason: string;
}

/**
 * How a token found its coin, strongest first: an address we reviewed ourselves (the base list's platforms,
 * `seed-data.ts`), a reviewed exception, the CoinGecko id a list gives, or the one coin whose symbol and name match.
 */
export type MatchRule = 'reviewed' | 'exception' | 'listed-id' | 'symbol-name';

/** Why a token in scope has no coin. */
export type UnmatchedReason =
  /** An exception says the token stays unmapped (its coin is not in our list, or not the candidate). */
  | 'refused-by-review'
  /** No coin has the token's symbol. */
  | 'no-coin-with-symbol'
  /** Several coins have the symbol and the name picks none or several of them: never guessed. */
  | 'ambiguous-symbol'
  /** One coin has the symbol but another name: left to review (the exceptions table), never guessed. */
  | 'name-differs'
  /** The coin already has another reviewed address on this platform. */
  | 'conflicts-with-reviewed'
  /** The coin is a chain's native coin (bitcoin, ethereum, ...), whose `platforms` stays `{}` as on CoinGecko. */
  | 'native-coin'
  /** The lists give this token several coins, or this coin several addresses on the platform, by equally strong rules. */
  | 'conflicting-matches';

/** Why a list entry is not a token of a platform we map (not counted in the coverage). */
export type OutOfScopeReason =
  /** A testnet or a chain without a CoinGecko platform id in `CHAIN_PLATFORMS`. */
  | 'chain-without-platform'
  /** An NFT collection (MetaMask's list names some). */
  | 'non-fungible'
  /** Not a 20-byte hex address, or the 0xeeee.../0x0000... placeholder some lists use for the native coin. */
  | 'not-a-contract-address';

/** One token: a contract address on a platform, with the list entries that name it. */
export interface Token {
  chainId: number;
  platform: string;
  /** Lowercase, as CoinGecko returns EVM addresses. */
  address: string;
  entries: ListedToken[];
}

/** What became of one token. */
export type TokenOutcome =
  | { token: Token; status: 'matched'; coinId: string; rule: MatchRule }
  | { token: Token; status: 'unmatched'; reason: UnmatchedReason; detail: string };

/** The platform map: the coin list with the lists' addresses merged in, what the lists added, and every outcome. */
export interface PlatformMap {
  /** Every coin (the base list plus coins created from listed ids), sorted by id, platforms merged. */
  coins: CoinEntry[];
  /** What the lists add to the base list: coins new to it, and platform -> address per coin id. */
  added: { newCoins: CoinEntry[]; platforms: Record<string, Record<string, string>> };
  /** One outcome per token in scope, ordered by platform then address. */
  outcomes: TokenOutcome[];
  /** List entries outside the scope, with the reason. */
  outOfScope: { entry: ListedToken; reason: OutOfScopeReason }[];
  /** Exceptions that match no token (stale review data). */
  unusedExceptions: PlatformException[];
}

const RANK: Record<MatchRule, number> = { reviewed: 4, exception: 3, 'listed-id': 2, 'symbol-name': 1 };
const EVM_ADDRESS = /^0x[0-9a-f]{40}$/;
const PLACEHOLDERS = new Set([`0x${'e'.repeat(40)}`, `0x${'0'.repeat(40)}`]);
const COIN_ID = /^[a-z0-9][a-z0-9._-]*$/;

/** The symbol as CoinGecko's list writes it: lowercase. */
export function symbolKey(symbol: string): string {
  return symbol.normalize('NFKC').trim().toLowerCase();
}

/**
 * A name reduced for comparison: accents and case dropped, the word "token" dropped ("Aave Token" = "Aave"), and
 * everything but letters and digits removed ("SHIBA INU" = "Shiba Inu").
 */
export function nameKey(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/\btoken\b/g, '')
    .replace(/[^\p{L}\p{N}]/gu, '');
}

const pairKey = (a: string | number, b: string) => `${a}\u0000${b}`;
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const byId = (a: CoinEntry, b: CoinEntry) => compare(a.id, b.id);
const sortKeys = (o: Record<string, string>) =>
  Object.fromEntries(Object.entries(o).sort(([a], [b]) => compare(a, b)));

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** Groups the entries in scope into tokens (one per platform and address); the others are out of scope. */
function collectTokens(entries: readonly ListedToken[]): {
  tokens: Token[];
  outOfScope: PlatformMap['outOfScope'];
} {
  const tokens = new Map<string, Token>();
  const outOfScope: PlatformMap['outOfScope'] = [];
  for (const entry of entries) {
    const platform = CHAIN_PLATFORMS.get(entry.chainId);
    const address = entry.address.toLowerCase();
    if (!platform) outOfScope.push({ entry, reason: 'chain-without-platform' });
    else if (entry.kind !== 'fungible') outOfScope.push({ entry, reason: 'non-fungible' });
    else if (!EVM_ADDRESS.test(address) || PLACEHOLDERS.has(address))
      outOfScope.push({ entry, reason: 'not-a-contract-address' });
    else {
      const key = pairKey(platform, address);
      const token = tokens.get(key);
      if (token) token.entries.push(entry);
      else tokens.set(key, { chainId: entry.chainId, platform, address, entries: [entry] });
    }
  }
  const sorted = [...tokens.values()].sort(
    (a, b) => compare(a.platform, b.platform) || compare(a.address, b.address),
  );
  return { tokens: sorted, outOfScope };
}

/**
 * Coins created from ids the lists give that the base list lacks (never for a token an exception decides): symbol
 * lowercased, name with runs of spaces collapsed, from the first entry naming the id (tokens in platform/address
 * order, entries in list order).
 */
function newCoinsFromListedIds(
  tokens: readonly Token[],
  known: ReadonlyMap<string, CoinEntry>,
  hasException: (t: Token) => boolean,
): Map<string, CoinEntry> {
  const created = new Map<string, CoinEntry>();
  for (const token of tokens) {
    if (hasException(token)) continue;
    for (const entry of token.entries) {
      const id = entry.coingeckoId;
      if (!id || known.has(id) || created.has(id) || !COIN_ID.test(id)) continue;
      created.set(id, {
        id,
        symbol: symbolKey(entry.symbol),
        name: entry.name.replace(/\s+/g, ' ').trim(),
        platforms: {},
      });
    }
  }
  return created;
}

type Candidate = { token: Token; coinId: string; rule: MatchRule };
type Decide = { candidate: Candidate } | { reason: UnmatchedReason; detail: string };

/** The symbol and name evidence of a token's entries. */
function bySymbolAndName(token: Token, bySymbol: ReadonlyMap<string, CoinEntry[]>): Decide {
  const coins = new Set<string>();
  const failures: { reason: UnmatchedReason; detail: string }[] = [];
  for (const entry of token.entries) {
    const symbol = symbolKey(entry.symbol);
    const sameSymbol = bySymbol.get(symbol) ?? [];
    const sameName = sameSymbol.filter((c) => nameKey(c.name) === nameKey(entry.name));
    if (sameName.length === 1) coins.add(sameName[0]!.id);
    else if (sameSymbol.length === 0)
      failures.push({ reason: 'no-coin-with-symbol', detail: `no coin has symbol "${symbol}"` });
    else if (sameSymbol.length === 1 && sameName.length === 0)
      failures.push({ reason: 'name-differs', detail: `${sameSymbol[0]!.id} is "${sameSymbol[0]!.name}"` });
    else {
      const ids = sameSymbol.map((c) => c.id).sort();
      failures.push({
        reason: 'ambiguous-symbol',
        detail: `${ids.length} coins have symbol "${symbol}" (${ids.slice(0, 5).join(', ')}${ids.length > 5 ? ', ...' : ''})`,
      });
    }
  }
  if (coins.size === 1) return { candidate: { token, coinId: [...coins][0]!, rule: 'symbol-name' } };
  if (coins.size > 1)
    return { reason: 'ambiguous-symbol', detail: `the entries match ${[...coins].sort().join(' and ')}` };
  // The most useful reason to a reviewer: a single candidate first, then an ambiguous symbol.
  const order: UnmatchedReason[] = ['name-differs', 'ambiguous-symbol', 'no-coin-with-symbol'];
  failures.sort((a, b) => order.indexOf(a.reason) - order.indexOf(b.reason));
  return failures[0]!;
}

/**
 * One token's coin by the strongest evidence: the reviewed address, an exception, a listed id, symbol and name.
 * @throws Error when an exception contradicts a reviewed address or names an unknown coin.
 */
function decideToken(
  token: Token,
  ctx: {
    reviewed: string | undefined;
    exception: PlatformException | undefined;
    all: ReadonlyMap<string, CoinEntry>;
    bySymbol: ReadonlyMap<string, CoinEntry[]>;
  },
): Decide {
  const { reviewed, exception } = ctx;
  const at = `platform exception ${token.chainId}:${token.address}`;
  if (exception && reviewed !== undefined && exception.coinId !== reviewed)
    throw new Error(`${at} contradicts the reviewed ${reviewed}`);
  if (reviewed !== undefined) return { candidate: { token, coinId: reviewed, rule: 'reviewed' } };
  if (exception) {
    if (exception.coinId === null) return { reason: 'refused-by-review', detail: exception.reason };
    if (!ctx.all.has(exception.coinId)) throw new Error(`${at} names unknown coin ${exception.coinId}`);
    return { candidate: { token, coinId: exception.coinId, rule: 'exception' } };
  }
  const listed = [
    ...new Set(
      token.entries.flatMap((e) => (e.coingeckoId && ctx.all.has(e.coingeckoId) ? [e.coingeckoId] : [])),
    ),
  ];
  if (listed.length > 1)
    return { reason: 'conflicting-matches', detail: `the lists name ${listed.sort().join(' and ')}` };
  if (listed.length === 1) return { candidate: { token, coinId: listed[0]!, rule: 'listed-id' } };
  return bySymbolAndName(token, ctx.bySymbol);
}

/**
 * Keeps, per coin and platform, the tokens whose address the strongest rule names alone; the others are
 * `conflicting-matches` (a coin has one address per platform).
 */
function onePerCoinAndPlatform(
  candidates: Candidate[],
  lose: (c: Candidate, detail: string) => void,
): Candidate[] {
  const groups = new Map<string, Candidate[]>();
  for (const c of candidates) push(groups, pairKey(c.coinId, c.token.platform), c);
  const kept: Candidate[] = [];
  for (const group of groups.values()) {
    const best = Math.max(...group.map((c) => RANK[c.rule]));
    const strongest = group.filter((c) => RANK[c.rule] === best);
    for (const c of group) {
      if (strongest.length === 1 && strongest[0] === c) kept.push(c);
      else
        lose(
          c,
          `${c.coinId} on ${c.token.platform} would have ${group.length} addresses (${group
            .map((x) => `${x.token.address} by ${x.rule}`)
            .sort()
            .join(', ')})`,
        );
    }
  }
  return kept;
}

/**
 * Builds the platform map (the service README, "Data", states the rule). The list entries on a chain of
 * {@link CHAIN_PLATFORMS} with a contract address form tokens (platform + lowercased address; the same token in
 * several lists is one token). Each token's coin is, by the strongest evidence:
 * 1. `reviewed`: the coin a base-list platform (our reviewed addresses) gives that address;
 * 2. `exception`: a reviewed exception for that chain and address (a coin id, or `null`: stays unmapped);
 * 3. `listed-id`: the CoinGecko id a list gives (a coin missing from `base` is created from the entry);
 * 4. `symbol-name`: the one coin whose symbol and name ({@link symbolKey}, {@link nameKey}) match an entry's.
 * Evidence of one strength naming two coins, or a symbol that several coins share without a single name match, is
 * never guessed: the token stays unmapped. A native coin (`nativeCoins`) gets no address. A coin has one address per platform: the reviewed address stays, and
 * among the lists' tokens the strongest rule wins when it names one token; otherwise none is used. Deterministic:
 * the same inputs give the same map whatever their order.
 *
 * @param base the coin list before the token lists (ids, symbols, names, reviewed platforms).
 * @throws Error when an exception names a coin id that is neither in `base` nor created from a listed id, or
 *   contradicts a reviewed address.
 */
export function buildPlatformMap(input: {
  base: readonly CoinEntry[];
  entries: readonly ListedToken[];
  exceptions: readonly PlatformException[];
  nativeCoins: ReadonlySet<string>;
}): PlatformMap {
  const known = new Map(input.base.map((c) => [c.id, c]));
  const reviewedByCoin = new Map<string, string>();
  const reviewedByAddress = new Map<string, string>();
  for (const coin of input.base)
    for (const [platform, address] of Object.entries(coin.platforms)) {
      reviewedByCoin.set(pairKey(coin.id, platform), address.toLowerCase());
      reviewedByAddress.set(pairKey(platform, address.toLowerCase()), coin.id);
    }
  const exceptions = new Map<string, PlatformException>();
  for (const e of input.exceptions) exceptions.set(pairKey(e.chainId, e.address.toLowerCase()), e);
  const exceptionOf = (t: Token) => exceptions.get(pairKey(t.chainId, t.address));

  const { tokens, outOfScope } = collectTokens(input.entries);
  const created = newCoinsFromListedIds(tokens, known, (t) => exceptionOf(t) !== undefined);
  const all = new Map([...known, ...created]);
  const bySymbol = new Map<string, CoinEntry[]>();
  for (const coin of all.values()) push(bySymbol, symbolKey(coin.symbol), coin);

  const outcomes = new Map<Token, TokenOutcome>();
  const fail = (token: Token, reason: UnmatchedReason, detail: string) =>
    outcomes.set(token, { token, status: 'unmatched', reason, detail });
  const used = new Set<PlatformException>();
  const candidates: Candidate[] = [];
  for (const token of tokens) {
    const exception = exceptionOf(token);
    if (exception) used.add(exception);
    const decided = decideToken(token, {
      reviewed: reviewedByAddress.get(pairKey(token.platform, token.address)),
      exception,
      all,
      bySymbol,
    });
    if ('candidate' in decided) candidates.push(decided.candidate);
    else fail(token, decided.reason, decided.detail);
  }

  // A coin keeps its reviewed address on a platform; list tokens for the same coin and platform are dropped.
  const open: Candidate[] = [];
  for (const c of candidates) {
    const reviewed = reviewedByCoin.get(pairKey(c.coinId, c.token.platform));
    if (input.nativeCoins.has(c.coinId))
      fail(c.token, 'native-coin', `${c.coinId} is a native coin (by rule ${c.rule}); its platforms stay {}`);
    else if (reviewed === undefined || reviewed === c.token.address) open.push(c);
    else
      fail(
        c.token,
        'conflicts-with-reviewed',
        `${c.coinId} on ${c.token.platform} is reviewed as ${reviewed} (by rule ${c.rule})`,
      );
  }
  const winners = onePerCoinAndPlatform(open, (c, detail) => fail(c.token, 'conflicting-matches', detail));

  const added: Record<string, Record<string, string>> = {};
  for (const c of winners) {
    outcomes.set(c.token, { token: c.token, status: 'matched', coinId: c.coinId, rule: c.rule });
    if (c.rule === 'reviewed') continue;
    const platforms = added[c.coinId] ?? {};
    platforms[c.token.platform] = c.token.address;
    added[c.coinId] = platforms;
  }
  const newCoins = [...created.values()]
    .filter((c) => added[c.id] !== undefined)
    .map((c) => ({ ...c, platforms: sortKeys(added[c.id]!) }))
    .sort(byId);
  const coins = [
    ...input.base.map((c) =>
      added[c.id] ? { ...c, platforms: sortKeys({ ...added[c.id], ...c.platforms }) } : c,
    ),
    ...newCoins,
  ].sort(byId);
  const sortedAdded: Record<string, Record<string, string>> = {};
  for (const id of Object.keys(added).sort()) sortedAdded[id] = sortKeys(added[id]!);
  return {
    coins,
    added: { newCoins, platforms: sortedAdded },
    outcomes: tokens.map((t) => outcomes.get(t)!),
    outOfScope,
    unusedExceptions: input.exceptions.filter((e) => !used.has(e)),
  };
}

/** Counts of one list's entries (or of all tokens) as the coverage report prints them. */
export interface CoverageCounts {
  /** Entries (per list) or distinct tokens (total) in scope: a mapped chain, a contract address. */
  inScope: number;
  matched: number;
  matchedBy: Partial<Record<MatchRule, number>>;
  unmatched: Partial<Record<UnmatchedReason, number>>;
}

const bump = <K extends string>(o: Partial<Record<K, number>>, k: K) => {
  o[k] = (o[k] ?? 0) + 1;
};

/**
 * The coverage of the lists: distinct tokens in scope, matched (by rule) and unmatched (by reason); per list, its
 * entries in scope and how many of them belong to a matched token; and the entries out of scope, by reason.
 */
export function coverage(map: PlatformMap): {
  tokens: CoverageCounts;
  byList: Record<TokenListName, CoverageCounts & { entries: number }>;
  outOfScope: Partial<Record<OutOfScopeReason, number>>;
} {
  const empty = () => ({ entries: 0, inScope: 0, matched: 0, matchedBy: {}, unmatched: {} });
  const tokens: CoverageCounts = { inScope: 0, matched: 0, matchedBy: {}, unmatched: {} };
  const byList: Record<TokenListName, CoverageCounts & { entries: number }> = {
    metamask: empty(),
    superchain: empty(),
    yodl: empty(),
  };
  const outOfScope: Partial<Record<OutOfScopeReason, number>> = {};
  for (const { entry, reason } of map.outOfScope) {
    byList[entry.list].entries++;
    bump(outOfScope, reason);
  }
  for (const o of map.outcomes) {
    for (const e of o.token.entries) byList[e.list].entries++;
    for (const c of [tokens, ...o.token.entries.map((e) => byList[e.list])]) {
      c.inScope++;
      if (o.status === 'matched') {
        c.matched++;
        bump(c.matchedBy, o.rule);
      } else bump(c.unmatched, o.reason);
    }
  }
  return { tokens, byList, outOfScope };
}
