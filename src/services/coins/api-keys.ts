import type { ServiceContext } from '../../platform/service.ts';
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
  /** Requests per minute allowed for this key. */
  rateLimitPerMinute: number;
}

/** The coins-specific fields of a key in operator records. */
export interface KeyAttributes {
  tier: Tier;
  rateLimitPerMinute: number;
}

/**
 * The demo and paid-plan keys of the coin list, on the platform credential kit: SHA-256 at rest, shown once,
 * lookups cached per instance, revocations effective on every instance at once.
 */
export function createKeyStore(ctx: ServiceContext) {
  return ctx.credentialStore<typeof apiKeys, KeyPrincipal, KeyAttributes>({
    table: apiKeys,
    prefixes: [KEY_PREFIX.demo, KEY_PREFIX.pro],
    principal: (row) => ({
      keyId: row.id,
      tier: row.tier,
      rateLimitPerMinute: row.rateLimitPerMinute ?? DEFAULT_RATE_LIMITS[row.tier],
    }),
    attributes: (row) => ({
      tier: row.tier,
      rateLimitPerMinute: row.rateLimitPerMinute ?? DEFAULT_RATE_LIMITS[row.tier],
    }),
  });
}

/** The key store of the coins service. */
export type KeyStore = ReturnType<typeof createKeyStore>;

/**
 * Issues a key of `tier`; the plaintext `key` is in the answer once.
 * @param rateLimitPerMinute requests per minute for this key (1..1,000,000); default by tier.
 */
export function issueKey(
  keys: KeyStore,
  executor: Parameters<KeyStore['issue']>[0],
  input: { tier: Tier; label?: string | null; rateLimitPerMinute?: number | null },
) {
  return keys.issue(executor, {
    prefix: KEY_PREFIX[input.tier],
    label: input.label,
    values: { tier: input.tier, rateLimitPerMinute: input.rateLimitPerMinute ?? null },
  });
}
