import { bigint, integer, jsonb, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The columns every credential table has (the platform credential kit, `src/platform/credentials.ts`): a numeric
 * identity `id`, the SHA-256 of the secret (`key_hash`, unique), its last four characters (`hint`), an optional
 * `label`, and `created_at` / `revoked_at` (null while active). Spread into a service's table next to its own
 * columns (owner, tier, permissions):
 *
 * ```ts
 * export const apiKeys = mySchema.table('api_keys', { ...credentialColumns(), tier: text('tier').notNull() });
 * ```
 *
 * Short-lived credentials add {@link expiringCredentialColumns} (`expires_at`).
 */
export function credentialColumns() {
  return {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    keyHash: text('key_hash').notNull().unique(),
    hint: text('hint').notNull(),
    label: text('label'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  };
}

/** {@link credentialColumns} plus `expires_at` (a credential past it resolves as `expired`). */
export function expiringCredentialColumns() {
  return { ...credentialColumns(), expiresAt: timestamp('expires_at', { withTimezone: true }) };
}

/**
 * The columns of a signing-key table (`signing-keys.ts`): the key id (`kid`, primary key), algorithm, public JWK, the
 * private JWK sealed with the platform SecretBox (null once retired), the longest token lifetime any instance signed
 * with it, and when it was made and retired.
 */
export function signingKeyColumns() {
  return {
    kid: text('kid').primaryKey(),
    alg: text('alg').notNull(),
    publicJwk: jsonb('public_jwk').$type<Record<string, unknown>>().notNull(),
    privateJwkSealed: text('private_jwk_sealed'),
    maxTokenTtlSeconds: integer('max_token_ttl_seconds').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    retiredAt: timestamp('retired_at', { withTimezone: true }),
  };
}
