import { describeIssues, type FieldIssue, ValidationError } from '../../platform/errors.ts';

/** A coin entry in CoinGecko's `/coins/list?include_platform=true` format. */
export interface CoinEntry {
  id: string;
  symbol: string;
  name: string;
  /** Platform id -> token contract address; `{}` for native coins. */
  platforms: Record<string, string>;
}

const MAX_ID = 200;
const MAX_TEXT = 200;
const MAX_ADDRESS = 200;
// A coin id is CoinGecko's URL-safe slug: letters, digits, '-', '.', '_' (no spaces, no slashes).
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** True when `s` contains a C0 control character or DEL. */
function hasControl(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

type AddIssue = (field: string, message: string) => void;

/** One entry at `at` (`[12]`), or undefined when it is invalid (its issues reported through `add`). */
function parseEntry(raw: unknown, at: string, add: AddIssue, seen: Set<string>): CoinEntry | undefined {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    add(at, 'must be an object with id, symbol and name');
    return undefined;
  }
  const entry = raw as Record<string, unknown>;
  const text = (key: 'id' | 'symbol' | 'name', max: number): string | undefined => {
    const v = entry[key];
    if (typeof v !== 'string' || v.length === 0) {
      add(`${at}.${key}`, 'is required and must be a non-empty string');
      return undefined;
    }
    if (v.length > max || hasControl(v)) {
      add(`${at}.${key}`, `must be at most ${max} characters without control characters`);
      return undefined;
    }
    return v;
  };
  const id = text('id', MAX_ID);
  const symbol = text('symbol', MAX_TEXT);
  const name = text('name', MAX_TEXT);
  if (id !== undefined) {
    if (!ID_PATTERN.test(id)) add(`${at}.id`, 'must contain only letters, digits, ".", "_" and "-"');
    else if (seen.has(id)) add(`${at}.id`, `duplicates coin id "${id}"`);
    seen.add(id);
  }
  const platforms = parsePlatforms(entry.platforms, at, add);
  return id !== undefined && symbol !== undefined && name !== undefined
    ? { id, symbol, name, platforms }
    : undefined;
}

/** The `platforms` of an entry (platform id -> contract address); null and empty addresses are dropped. */
function parsePlatforms(raw: unknown, at: string, add: AddIssue): Record<string, string> {
  const platforms: Record<string, string> = {};
  if (raw === undefined || raw === null) return platforms;
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    add(`${at}.platforms`, 'must be an object of platform id -> contract address');
    return platforms;
  }
  for (const [platform, address] of Object.entries(raw as Record<string, unknown>)) {
    if (address === null || address === '') continue;
    if (platform.length === 0 || platform.length > MAX_ID || !ID_PATTERN.test(platform)) {
      add(`${at}.platforms`, `platform id "${platform.slice(0, 40)}" is not a valid platform id`);
    } else if (typeof address !== 'string' || address.length > MAX_ADDRESS || hasControl(address)) {
      add(
        `${at}.platforms.${platform}`,
        `must be a contract address string of at most ${MAX_ADDRESS} characters`,
      );
    } else {
      platforms[platform] = address;
    }
  }
  return platforms;
}

/**
 * Validates a whole coin list (an array of {@link CoinEntry}; `platforms` optional, `null` values dropped as
 * CoinGecko sometimes sends them). Reports every problem at once (up to 50), so one bad file changes nothing.
 *
 * @returns the entries, normalised (`platforms` always an object).
 * @throws ValidationError listing each bad entry by index (`[12].symbol is required`), duplicate ids included.
 */
export function parseCoinList(input: unknown): CoinEntry[] {
  const issues: FieldIssue[] = [];
  const add = (field: string, message: string) => {
    if (issues.length < 50) issues.push({ location: 'body', field, message });
  };
  if (!Array.isArray(input)) {
    throw new ValidationError(
      [{ location: 'body', field: '', message: 'must be a JSON array of coins' }],
      'The coin list must be a JSON array.',
    );
  }
  const seen = new Set<string>();
  const out: CoinEntry[] = [];
  input.forEach((raw, i) => {
    const entry = parseEntry(raw, `[${i}]`, add, seen);
    if (entry) out.push(entry);
  });
  if (issues.length > 0) {
    throw new ValidationError(
      issues,
      `The coin list is invalid: ${describeIssues(issues, { withLocation: false })}. Nothing was imported.`,
    );
  }
  return out;
}
