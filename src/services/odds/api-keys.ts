import { desc, eq } from 'drizzle-orm';
import { revokeApiKey } from '../../platform/api-keys.ts';
import type { Clock } from '../../platform/clock.ts';
import { hashApiKey, issueApiKey } from '../../platform/crypto.ts';
import type { Db, Executor } from '../../platform/database.ts';
import { KeyCache } from '../../platform/key-cache.ts';
import type { Notifier } from '../../platform/notifications.ts';
import { apiKeys } from './db/schema.ts';
import { keyInvalid, keyMissing, lookbackExceeded, notFound } from './odds-errors.ts';

/** Plans of odds keys (spec F: "historical access and lookback depend on the plan"; values are this service's). */
export const PLANS = {
  free: { lookbackDays: 7, requestsPerMinute: 60 },
  starter: { lookbackDays: 30, requestsPerMinute: 300 },
  pro: { lookbackDays: 365, requestsPerMinute: 1200 },
  enterprise: { lookbackDays: 3650, requestsPerMinute: 6000 },
} as const;
export type Plan = keyof typeof PLANS;
export const PLAN_NAMES = Object.keys(PLANS) as Plan[];

/** Key prefix: `odds_` + 43 URL-safe base64 characters. */
export const KEY_PREFIX = 'odds_';
const KEY_PATTERN = /^odds_[A-Za-z0-9_-]{43}$/;

/** An authenticated caller. */
export interface OddsPrincipal {
  keyId: number;
  plan: Plan;
  lookbackDays: number;
  rateLimitPerMinute: number;
}

/** A key as the operator API shows it (never the key itself). Times ISO 8601. */
export interface KeyRecord {
  id: number;
  plan: Plan;
  hint: string;
  label: string | null;
  lookbackDays: number;
  rateLimitPerMinute: number;
  createdAt: string;
  revokedAt: string | null;
}

type Lookup = OddsPrincipal | 'invalid';

/**
 * Issues, revokes and authenticates `X-Odds-Key` keys. Stored as SHA-256 hashes; lookups cached per instance
 * ({@link KeyCache}); a revocation reaches every instance through NOTIFY `odds_api_key_revoked`.
 */
export class OddsKeyService {
  private readonly cache: KeyCache<Lookup>;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {
    this.cache = new KeyCache<Lookup>('odds_api_key_revoked', clock);
  }

  /** Subscribes to revocations made on other instances; returns the unsubscribe function. */
  listenForRevocations(notifier: Notifier): Promise<() => Promise<void>> {
    return this.cache.listen(notifier);
  }

  /**
   * Issues a key on `plan`; the plaintext `key` is returned this once.
   * @param rateLimitPerMinute overrides the plan's requests per minute (operators, benchmarks).
   */
  async issue(
    input: { plan: Plan; label?: string | null; rateLimitPerMinute?: number | null },
    executor: Executor = this.db,
  ): Promise<KeyRecord & { key: string }> {
    const issued = issueApiKey(KEY_PREFIX);
    const [row] = await executor
      .insert(apiKeys)
      .values({
        keyHash: issued.hash,
        hint: issued.hint,
        label: input.label ?? null,
        plan: input.plan,
        rateLimitPerMinute: input.rateLimitPerMinute ?? null,
        createdAt: this.clock.now(),
      })
      .returning();
    return { ...toRecord(row!), key: issued.plaintext };
  }

  /** Revokes key `id` on every instance. @throws ApiError 404 when there is no such key. */
  async revoke(id: number): Promise<KeyRecord> {
    const revoked = await revokeApiKey(this.db, apiKeys, id, { now: this.clock.now(), cache: this.cache });
    if (!revoked) throw notFound(`No API key with id ${id}.`);
    return toRecord(revoked.row);
  }

  /** Every key, newest first. */
  async list(): Promise<KeyRecord[]> {
    const rows = await this.db.select().from(apiKeys).orderBy(desc(apiKeys.id));
    return rows.map(toRecord);
  }

  /**
   * Resolves the caller from the `X-Odds-Key` header value.
   * @throws ApiError 401 `unauthorized` when missing, malformed, unknown or revoked.
   */
  async authenticate(presented: string | undefined): Promise<OddsPrincipal> {
    if (!presented) throw keyMissing();
    if (!KEY_PATTERN.test(presented)) throw keyInvalid();
    const found = await this.cache.get(hashApiKey(presented), (hash) => this.lookup(hash));
    if (found === 'invalid') throw keyInvalid();
    return found;
  }

  private async lookup(hash: string): Promise<Lookup> {
    const [row] = await this.db.select().from(apiKeys).where(eq(apiKeys.keyHash, hash)).limit(1);
    if (!row || row.revokedAt) return 'invalid';
    return {
      keyId: row.id,
      plan: row.plan,
      lookbackDays: PLANS[row.plan].lookbackDays,
      rateLimitPerMinute: row.rateLimitPerMinute ?? PLANS[row.plan].requestsPerMinute,
    };
  }
}

/**
 * The plan's lookback rule: data dated before the start of the UTC day `lookbackDays` before `now` is refused.
 * @param instant the date of the data asked for (an event's start, the start of a requested day).
 * @throws ApiError 403 `plan_lookback`.
 */
export function assertWithinLookback(principal: OddsPrincipal, instant: Date, now: Date): void {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const earliest = today - principal.lookbackDays * 86_400_000;
  if (instant.getTime() < earliest) {
    throw lookbackExceeded(
      principal.plan,
      principal.lookbackDays,
      new Date(earliest).toISOString().slice(0, 10),
    );
  }
}

function toRecord(row: typeof apiKeys.$inferSelect): KeyRecord {
  return {
    id: row.id,
    plan: row.plan,
    hint: row.hint,
    label: row.label,
    lookbackDays: PLANS[row.plan].lookbackDays,
    rateLimitPerMinute: row.rateLimitPerMinute ?? PLANS[row.plan].requestsPerMinute,
    createdAt: row.createdAt.toISOString(),
    revokedAt: row.revokedAt ? row.revokedAt.toISOString() : null,
  };
}
