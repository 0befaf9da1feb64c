import type { Executor } from '../../platform/database.ts';
import type { ServiceContext } from '../../platform/service.ts';
import { apiKeys } from './db/schema.ts';
import { lookbackExceeded } from './odds-errors.ts';

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

/** An authenticated caller. */
export interface OddsPrincipal {
  keyId: number;
  plan: Plan;
  lookbackDays: number;
  rateLimitPerMinute: number;
}

/** The odds-specific fields of a key in operator records. */
export interface KeyAttributes {
  plan: Plan;
  lookbackDays: number;
  rateLimitPerMinute: number;
}

/**
 * The `X-Odds-Key` keys, on the platform credential kit: SHA-256 at rest, shown once, lookups cached per instance,
 * revocations effective on every instance at once (and closing the key's open streams).
 */
export function createKeyStore(ctx: ServiceContext) {
  const attributes = (row: typeof apiKeys.$inferSelect): KeyAttributes => ({
    plan: row.plan,
    lookbackDays: PLANS[row.plan].lookbackDays,
    rateLimitPerMinute: row.rateLimitPerMinute ?? PLANS[row.plan].requestsPerMinute,
  });
  return ctx.credentialStore<typeof apiKeys, OddsPrincipal, KeyAttributes>({
    table: apiKeys,
    prefixes: [KEY_PREFIX],
    principal: (row) => ({ keyId: row.id, ...attributes(row) }),
    attributes,
  });
}

/** The key store of the odds service. */
export type KeyStore = ReturnType<typeof createKeyStore>;

/**
 * Issues a key on `plan`; the plaintext `key` is in the answer once.
 * @param rateLimitPerMinute overrides the plan's requests per minute (operators, benchmarks).
 */
export function issueKey(
  keys: KeyStore,
  executor: Executor,
  input: { plan: Plan; label?: string | null; rateLimitPerMinute?: number | null },
) {
  return keys.issue(executor, {
    label: input.label,
    values: { plan: input.plan, rateLimitPerMinute: input.rateLimitPerMinute ?? null },
  });
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
