import { integer, jsonb, pgSchema, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

/** The platform's own tables (schema `platform`). Services never read them directly. */
export const platformSchema = pgSchema('platform');

/**
 * Idempotency records: one per (scope, key). `fingerprint` identifies the request (SHA-256 of method, path and
 * body); `response` is what was answered, replayed for a repeat until `expires_at`.
 */
export const idempotencyKeys = platformSchema.table(
  'idempotency_keys',
  {
    scope: text('scope').notNull(),
    key: text('key').notNull(),
    fingerprint: text('fingerprint').notNull(),
    responseStatus: integer('response_status'),
    response: jsonb('response'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.scope, t.key] })],
);

/**
 * The demo credentials each service's seed created on first start, encrypted with the platform secrets key
 * (AES-256-GCM), so every later start (and every instance sharing `SECRETS_KEY`) can print them again.
 */
export const seedState = platformSchema.table('seed_state', {
  service: text('service').primaryKey(),
  credentials: text('credentials').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
});
