import { sql } from 'drizzle-orm';
import {
  type AnyPgColumn,
  bigint,
  boolean,
  index,
  integer,
  jsonb,
  pgSchema,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { credentialColumns } from '../../../platform/db/columns.ts';

/** Tables of the entity-events webhook service (spec 002, section G), Postgres schema `entity_events`. */
export const entityEventsSchema = pgSchema('entity_events');

const ts = (name: string) => timestamp(name, { withTimezone: true });

/** A partner (the data provider's customer account). Owns the single legacy (v1) partner-level webhook. */
export const partners = entityEventsSchema.table('partners', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  createdAt: ts('created_at').notNull(),
});

/** A tenant of a partner: the scope of v2 webhooks and of every enrollment. */
export const tenants = entityEventsSchema.table('tenants', {
  id: text('id').primaryKey(),
  partnerId: text('partner_id')
    .notNull()
    .references(() => partners.id),
  name: text('name').notNull(),
  createdAt: ts('created_at').notNull(),
});

/** Management API keys (header `api_key`); only the SHA-256 of the key is stored. */
export const apiKeys = entityEventsSchema.table(
  'api_keys',
  {
    ...credentialColumns(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
  },
  (t) => [index('api_keys_tenant_idx').on(t.tenantId)],
);

/**
 * Webhooks. v2 webhooks belong to a tenant (`tenantId`, `legacy = false`); the v1 partner-level webhook has
 * `legacy = true`, no tenant, one per partner. `secretSealed` is the signing secret sealed with SecretBox (aad =
 * webhook id). Deletion is soft (`deletedAt`) so paused enrollments keep pointing at the id they had.
 * `status`: `active` | `disabled`; `disabledReason` is `caller`, `gone` (the receiver answered 410) or `failing`
 * (every attempt failed for 5 days), `disabledAt` when. `failingSince`: the first failed attempt since the last
 * success (null while the webhook is healthy); re-enabling clears it.
 */
export const webhooks = entityEventsSchema.table(
  'webhooks',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').references(() => tenants.id),
    partnerId: text('partner_id')
      .notNull()
      .references(() => partners.id),
    legacy: boolean('legacy').notNull().default(false),
    name: text('name').notNull(),
    description: text('description'),
    webhookUrl: text('webhook_url').notNull(),
    headers: text('headers').array().notNull().default(sql`'{}'::text[]`),
    payloadFormat: text('payload_format', { enum: ['json', 'stringified_json'] }).notNull(),
    status: text('status', { enum: ['active', 'disabled'] }).notNull(),
    disabledReason: text('disabled_reason'),
    disabledAt: ts('disabled_at'),
    failingSince: ts('failing_since'),
    secretSealed: text('secret_sealed').notNull(),
    createdAt: ts('created_at').notNull(),
    lastModifiedTime: ts('last_modified_time').notNull(),
    deletedAt: ts('deleted_at'),
  },
  (t) => [
    uniqueIndex('webhooks_tenant_name_uq')
      .on(t.tenantId, t.name)
      .where(sql`${t.legacy} = false and ${t.deletedAt} is null`),
    uniqueIndex('webhooks_partner_legacy_uq')
      .on(t.partnerId)
      .where(sql`${t.legacy} = true and ${t.deletedAt} is null`),
  ],
);

/**
 * Enrollments: which events of which entities go where. `apiVersion` `v2` enrollments name a webhook; `v1` ones
 * have none and deliver to the partner's legacy webhook. `status`: `active` | `paused`.
 */
export const enrollments = entityEventsSchema.table(
  'enrollments',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    entityType: text('entity_type', { enum: ['business', 'prospect'] }).notNull(),
    apiVersion: text('api_version', { enum: ['v1', 'v2'] }).notNull(),
    enrollmentKey: text('enrollment_key').notNull(),
    webhookId: text('webhook_id'),
    status: text('status', { enum: ['active', 'paused'] }).notNull(),
    eventTypes: text('event_types').array().notNull(),
    createdAt: ts('created_at').notNull(),
    lastModifiedTime: ts('last_modified_time').notNull(),
  },
  (t) => [
    index('enrollments_tenant_idx').on(t.tenantId, t.entityType, t.createdAt),
    index('enrollments_webhook_idx').on(t.webhookId),
  ],
);

/** The entity ids of an enrollment (no cap on the total; at most 1,000 added per request). */
export const enrollmentEntities = entityEventsSchema.table(
  'enrollment_entities',
  {
    enrollmentId: text('enrollment_id')
      .notNull()
      .references(() => enrollments.id, { onDelete: 'cascade' }),
    entityId: text('entity_id').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.enrollmentId, t.entityId] }),
    index('enrollment_entities_entity_idx').on(t.entityId),
  ],
);

/** The event store: business and prospect events (global data, not tenant-scoped). */
export const events = entityEventsSchema.table(
  'events',
  {
    id: text('id').primaryKey(),
    entityType: text('entity_type', { enum: ['business', 'prospect'] }).notNull(),
    entityId: text('entity_id').notNull(),
    eventName: text('event_name').notNull(),
    eventTime: ts('event_time').notNull(),
    data: jsonb('data').notNull(),
    source: text('source', { enum: ['operator', 'simulator'] }).notNull(),
    storedAt: ts('stored_at').notNull(),
  },
  (t) => [index('events_entity_idx').on(t.entityType, t.entityId, t.eventTime)],
);

/**
 * One delivery of one event to one enrollment's webhook. `status`: `pending` (waiting for its next attempt at
 * `nextAttemptAt`), `in_flight` (claimed by a worker at `claimedAt`), `succeeded`, `failed` (attempts exhausted, or
 * the receiver answered 410), `cancelled` (webhook disabled or deleted, or enrollment paused before the attempt).
 * The fan-out makes one per (event, enrollment); a replay (one, or a recover) is a new delivery whose `replayOf` is
 * the delivery it replays, and a delivery is replayed at most once (the unique index is the recover's natural key).
 */
export const deliveries = entityEventsSchema.table(
  'deliveries',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    eventId: text('event_id')
      .notNull()
      .references(() => events.id),
    enrollmentId: text('enrollment_id').notNull(),
    webhookId: text('webhook_id').notNull(),
    status: text('status', {
      enum: ['pending', 'in_flight', 'succeeded', 'failed', 'cancelled'],
    }).notNull(),
    attemptCount: integer('attempt_count').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at'),
    claimedAt: ts('claimed_at'),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    createdAt: ts('created_at').notNull(),
    completedAt: ts('completed_at'),
    replayOf: text('replay_of').references((): AnyPgColumn => deliveries.id),
  },
  (t) => [
    uniqueIndex('deliveries_event_enrollment_uq')
      .on(t.eventId, t.enrollmentId)
      .where(sql`${t.replayOf} is null`),
    // Partial: the fan-out's deliveries (no replay_of) get no entry, so the delivery path maintains no extra index.
    uniqueIndex('deliveries_replay_of_uq').on(t.replayOf).where(sql`${t.replayOf} is not null`),
    index('deliveries_webhook_idx').on(t.webhookId, t.createdAt),
    index('deliveries_due_idx').on(t.nextAttemptAt).where(sql`${t.status} in ('pending', 'in_flight')`),
  ],
);

/**
 * The attempt log of a delivery: one row per POST (time, status code, duration, error, next attempt), written with
 * its outcome (`succeeded`, `failed`); `attemptedAt` is when the worker claimed the delivery, before the POST. The
 * attempt in progress is the delivery's claim (`in_flight`, `claimedAt`) and is shown from it; when its worker
 * vanishes, the sweeper writes it here as `interrupted` (no outcome is known: the receiver may or may not have got
 * it; `durationMs` and `statusCode` null). The column's default, `in_progress`, names a row without an outcome.
 */
export const deliveryAttempts = entityEventsSchema.table(
  'delivery_attempts',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    deliveryId: text('delivery_id')
      .notNull()
      .references(() => deliveries.id),
    attemptNumber: integer('attempt_number').notNull(),
    attemptedAt: ts('attempted_at').notNull(),
    status: text('status', { enum: ['in_progress', 'succeeded', 'failed', 'interrupted'] })
      .notNull()
      .default('in_progress'),
    statusCode: integer('status_code'),
    durationMs: integer('duration_ms'),
    error: text('error'),
    nextAttemptAt: ts('next_attempt_at'),
  },
  (t) => [index('delivery_attempts_delivery_idx').on(t.deliveryId, t.attemptNumber)],
);

/** Runtime settings shared by every instance (for example the simulator's rate). */
export const settings = entityEventsSchema.table('settings', {
  name: text('name').primaryKey(),
  value: jsonb('value').notNull(),
});
