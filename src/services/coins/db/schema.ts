import { sql } from 'drizzle-orm';
import { bigint, check, index, integer, jsonb, pgSchema, text, timestamp } from 'drizzle-orm/pg-core';
import { credentialColumns } from '../../../platform/db/columns.ts';

/** Tables of the coin-listing service (schema `coins`). */
export const coinsSchema = pgSchema('coins');

/**
 * One coin as CoinGecko lists it: `id` (the coin id other endpoints take), `symbol`, `name`, and `platforms`
 * (platform id -> token contract address; `{}` for native coins). `status` is `active` or `inactive`.
 */
export const coins = coinsSchema.table(
  'coins',
  {
    id: text('id').primaryKey(),
    symbol: text('symbol').notNull(),
    name: text('name').notNull(),
    platforms: jsonb('platforms').$type<Record<string, string>>().notNull().default({}),
    status: text('status', { enum: ['active', 'inactive'] })
      .notNull()
      .default('active'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    check('coins_status_check', sql`${t.status} in ('active', 'inactive')`),
    index('coins_status_idx').on(t.status),
  ],
);

/**
 * API keys. `tier` is `demo` (public tier, header `x-coin-demo-api-key`) or `pro` (paid tier, header
 * `x-coin-pro-api-key`). Only the SHA-256 of the key is stored. `rateLimitPerMinute` overrides the tier's default.
 */
export const apiKeys = coinsSchema.table(
  'api_keys',
  {
    ...credentialColumns(),
    tier: text('tier', { enum: ['demo', 'pro'] }).notNull(),
    rateLimitPerMinute: integer('rate_limit_per_minute'),
  },
  (t) => [check('api_keys_tier_check', sql`${t.tier} in ('demo', 'pro')`)],
);

/** One run of the upstream mirror job: what it fetched and changed, or why it failed. */
export const upstreamSyncs = coinsSchema.table('upstream_syncs', {
  id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
  startedAt: timestamp('started_at', { withTimezone: true }).notNull(),
  finishedAt: timestamp('finished_at', { withTimezone: true }),
  status: text('status', { enum: ['running', 'succeeded', 'failed'] }).notNull(),
  inserted: integer('inserted').notNull().default(0),
  updated: integer('updated').notNull().default(0),
  deactivated: integer('deactivated').notNull().default(0),
  error: text('error'),
});

/**
 * Data updates applied to this database after its first start, one row per kind (`token-list-platforms`: the
 * platform map of the token lists), with the SHA-256 digest of the data applied: a start whose data has another
 * digest applies it once (see `CoinStore.applyListPlatforms`).
 */
export const seedUpdates = coinsSchema.table('seed_updates', {
  name: text('name').primaryKey(),
  digest: text('digest').notNull(),
  appliedAt: timestamp('applied_at', { withTimezone: true }).notNull(),
});
