import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  foreignKey,
  index,
  integer,
  jsonb,
  numeric,
  pgSchema,
  text,
  timestamp,
  unique,
} from 'drizzle-orm/pg-core';
import { credentialColumns } from '../../../platform/db/columns.ts';

/**
 * Tables of the pricing-plan service (schema `pricing`, spec document 001, section B).
 *
 * Money (`base_price`) is `numeric(14,4)`: an exact decimal in the project's own units with up to four decimal places
 * (per-unit prices of usage-based features are often fractions of a cent), read back as a JS number. Multipliers are
 * `numeric(12,4)`. Every plan, feature and association carries its `project_id`; associations reference
 * `(plan_id, project_id)` and `(feature_id, project_id)`, so the database itself refuses a plan of one project holding a
 * feature of another.
 */
export const pricingSchema = pgSchema('pricing');

/**
 * A project: the tenant. `slug` is its URL-friendly identifier (`^[a-z0-9]+(-[a-z0-9]+)*$`), unique, immutable.
 * `catalogVersion` goes up by one in every transaction that changes the project's plans, features or assignments
 * (it is also the row those transactions lock), so a cached `GET /plans` answer is valid while it is unchanged.
 */
export const projects = pricingSchema.table(
  'projects',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    slug: text('slug').notNull().unique(),
    name: text('name').notNull(),
    catalogVersion: bigint('catalog_version', { mode: 'number' }).notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [check('projects_slug_check', sql`${t.slug} ~ '^[a-z0-9]+(-[a-z0-9]+)*$'`)],
);

/**
 * API keys of a project (`Authorization: Bearer cpk_...`). `permission` is `read` or `read_write`. Only the SHA-256 of
 * the key is stored. `rateLimitPerMinute` overrides the default of 100 requests per minute (benchmarks).
 */
export const apiKeys = pricingSchema.table(
  'api_keys',
  {
    ...credentialColumns(),
    projectId: bigint('project_id', { mode: 'number' })
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    permission: text('permission', { enum: ['read', 'read_write'] }).notNull(),
    rateLimitPerMinute: integer('rate_limit_per_minute'),
  },
  (t) => [
    check('api_keys_permission_check', sql`${t.permission} in ('read', 'read_write')`),
    index('api_keys_project_idx').on(t.projectId),
  ],
);

/**
 * The quantity behind a countable feature: `amount` units of `unit` at multiplier 1 (a plan with multiplier 5 offers
 * `5 * amount`). Stored as JSON in `features.countable_data`.
 */
export interface CountableData {
  unit: string;
  amount: number;
}

/**
 * A feature of a project (at most 50 per project). `featureType` is `Standart`, `Limits` or `Usage Based` (spelled as
 * the anchor returns them). `countableData` is set exactly when `isCountable` is true.
 */
export const features = pricingSchema.table(
  'features',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    projectId: bigint('project_id', { mode: 'number' })
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    description: text('description').notNull().default(''),
    basePrice: numeric('base_price', { precision: 14, scale: 4, mode: 'number' }).notNull(),
    featureType: text('feature_type', { enum: ['Standart', 'Limits', 'Usage Based'] }).notNull(),
    isCountable: boolean('is_countable').notNull(),
    countableData: jsonb('countable_data').$type<CountableData>(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    unique('features_id_project_uq').on(t.id, t.projectId),
    index('features_project_idx').on(t.projectId, t.id),
    check('features_type_check', sql`${t.featureType} in ('Standart', 'Limits', 'Usage Based')`),
    check('features_base_price_check', sql`${t.basePrice} >= 0`),
    check('features_countable_check', sql`${t.isCountable} = (${t.countableData} is not null)`),
  ],
);

/** A plan of a project. A free plan (`isFree`) costs nothing: its `basePrice` is 0. */
export const plans = pricingSchema.table(
  'plans',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    projectId: bigint('project_id', { mode: 'number' })
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    description: text('description').notNull().default(''),
    basePrice: numeric('base_price', { precision: 14, scale: 4, mode: 'number' }).notNull(),
    isPopular: boolean('is_popular').notNull().default(false),
    isVisible: boolean('is_visible').notNull().default(true),
    isFree: boolean('is_free').notNull().default(false),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    unique('plans_id_project_uq').on(t.id, t.projectId),
    index('plans_project_idx').on(t.projectId, t.id),
    check('plans_base_price_check', sql`${t.basePrice} >= 0`),
    check('plans_free_price_check', sql`not ${t.isFree} or ${t.basePrice} = 0`),
  ],
);

/**
 * A feature assigned to a plan (the spec's `planFeatures[]` entry): `id` is the association id, `multiplier` scales
 * the feature's base amount (2 means twice). A feature is on a plan at most once. Deleting a plan or a feature deletes
 * its associations (the service deletes them explicitly; the cascade is the safety net).
 */
export const planFeatures = pricingSchema.table(
  'plan_features',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    projectId: bigint('project_id', { mode: 'number' }).notNull(),
    planId: bigint('plan_id', { mode: 'number' }).notNull(),
    featureId: bigint('feature_id', { mode: 'number' }).notNull(),
    multiplier: numeric('multiplier', { precision: 12, scale: 4, mode: 'number' }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    foreignKey({
      name: 'plan_features_plan_fk',
      columns: [t.planId, t.projectId],
      foreignColumns: [plans.id, plans.projectId],
    }).onDelete('cascade'),
    foreignKey({
      name: 'plan_features_feature_fk',
      columns: [t.featureId, t.projectId],
      foreignColumns: [features.id, features.projectId],
    }).onDelete('cascade'),
    unique('plan_features_plan_feature_uq').on(t.planId, t.featureId),
    index('plan_features_feature_idx').on(t.featureId),
    check('plan_features_multiplier_check', sql`${t.multiplier} > 0`),
  ],
);
