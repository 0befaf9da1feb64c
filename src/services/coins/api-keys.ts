import { and, desc, eq, isNull } from 'drizzle-orm';
import { revokeApiKey } from '../../platform/api-keys.ts';
import type { Clock } from '../../platform/clock.ts';
import { hashApiKey, issueApiKey } from '../../platform/crypto.ts';
import type { Db, Executor } from '../../platform/database.ts';
import { ApiError } from '../../platform/errors.ts';
import { KeyCache } from '../../platform/key-cache.ts';
import type { Notifier } from '../../platform/notifications.ts';
import { keyInvalid, keyMissing, keyRevoked, wrongKeyHeader } from './coins-errors.ts';
import { apiKeys } from './db/schema.ts';

export type Tier = 'demo' | 'pro';

/**
 * Requests per minute per key, by tier, unless the key has its own `rateLimitPerMinute`.
 * Demo 30/min is CoinGecko's Demo plan; 500/min is its entry paid plan (Analyst).
 */
export const DEFAULT_RATE_LIMITS: Record<Tier, number> = { demo: 30, pro: 500 };

/** Key prefixes: a key says its tier at a glance (`coin_demo_...`, `coin_pro_...`). */
export const KEY_PREFIX: Record<Tier, string> = { demo: 'coin_demo_', pro: 'coin_pro_' };

/** An authenticated caller. */
export interface KeyPrincipal {
  keyId: number;
  tier: Tier;
  rateLimitPerMinute: number;
}

/** A key as the operator API lists it (never the key itself). */
export interface KeyRecord {
  id: number;
  tier: Tier;
  hint: string;
  label: string | null;
  rateLimitPerMinute: number;
  createdAt: string;
  revokedAt: string | null;
}

type Lookup = KeyPrincipal | 'revoked' | 'unknown';

/**
 * Issues, revokes and authenticates API keys. Keys are stored as SHA-256 hashes; the plaintext is returned once by
 * {@link ApiKeyService.issue}. Lookups are cached per instance ({@link KeyCache}, 60 s); a revocation clears the
 * entry on every instance at once (PostgreSQL NOTIFY on `coins_api_key_revoked`).
 */
export class ApiKeyService {
  private readonly cache: KeyCache<Lookup>;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {
    this.cache = new KeyCache<Lookup>('coins_api_key_revoked', clock);
  }

  /** Subscribes to revocations made by other instances. */
  async listenForRevocations(notifier: Notifier): Promise<() => Promise<void>> {
    return this.cache.listen(notifier);
  }

  /**
   * Creates a key. Returns its record and the plaintext `key`, shown this once.
   * @param rateLimitPerMinute requests per minute for this key (1..1,000,000); default by tier.
   */
  async issue(
    input: { tier: Tier; label?: string | null; rateLimitPerMinute?: number | null },
    executor: Executor = this.db,
  ): Promise<KeyRecord & { key: string }> {
    const issued = issueApiKey(KEY_PREFIX[input.tier]);
    const [row] = await executor
      .insert(apiKeys)
      .values({
        tier: input.tier,
        keyHash: issued.hash,
        hint: issued.hint,
        label: input.label ?? null,
        rateLimitPerMinute: input.rateLimitPerMinute ?? null,
        createdAt: this.clock.now(),
      })
      .returning();
    return { ...toRecord(row!), key: issued.plaintext };
  }

  /**
   * Revokes a key; later requests with it get 401 (code 10011) on every instance.
   * @throws ApiError 404 `key_not_found`.
   */
  async revoke(id: number): Promise<KeyRecord> {
    const revoked = await revokeApiKey(this.db, apiKeys, id, { now: this.clock.now(), cache: this.cache });
    if (!revoked) throw new ApiError(404, 'key_not_found', `No API key with id ${id}.`);
    return toRecord(revoked.row);
  }

  /** Every key, newest first. */
  async list(options: { includeRevoked: boolean }): Promise<KeyRecord[]> {
    const rows = await this.db
      .select()
      .from(apiKeys)
      .where(options.includeRevoked ? undefined : isNull(apiKeys.revokedAt))
      .orderBy(desc(apiKeys.id));
    return rows.map(toRecord);
  }

  /**
   * Resolves the caller from the demo and pro key values of a request (header or query form).
   * @throws ApiError 401: key missing (10002), unknown (10010), revoked (10011), or sent in the other tier's header.
   */
  async authenticate(demoKey: string | undefined, proKey: string | undefined): Promise<KeyPrincipal> {
    const presented = proKey ?? demoKey;
    const headerTier: Tier = proKey !== undefined ? 'pro' : 'demo';
    if (presented === undefined || presented === '') throw keyMissing();
    const principal = await this.cache.get(hashApiKey(presented), (hash) => this.lookup(hash));
    if (principal === 'unknown') throw keyInvalid();
    if (principal === 'revoked') throw keyRevoked();
    if (principal.tier !== headerTier) throw wrongKeyHeader(principal.tier);
    return principal;
  }

  private async lookup(hash: string): Promise<Lookup> {
    const [row] = await this.db
      .select()
      .from(apiKeys)
      .where(and(eq(apiKeys.keyHash, hash)))
      .limit(1);
    if (!row) return 'unknown';
    if (row.revokedAt) return 'revoked';
    return {
      keyId: row.id,
      tier: row.tier,
      rateLimitPerMinute: row.rateLimitPerMinute ?? DEFAULT_RATE_LIMITS[row.tier],
    };
  }
}

function toRecord(row: typeof apiKeys.$inferSelect): KeyRecord {
  return {
    id: row.id,
    tier: row.tier,
    hint: row.hint,
    label: row.label,
    rateLimitPerMinute: row.rateLimitPerMinute ?? DEFAULT_RATE_LIMITS[row.tier],
    createdAt: row.createdAt.toISOString(),
    revokedAt: row.revokedAt ? row.revokedAt.toISOString() : null,
  };
}
