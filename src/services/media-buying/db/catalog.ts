/**
 * Tables of part 2 (spec 000, "Resources and fields"; record shapes the spec leaves out follow AdCP 3.x): what buyers
 * and sellers work with. Storefront side: sales agents, their pricing rules, products. Buyer side: the operator
 * identity of Buyer Setup step 1, advertiser accounts (the storefront account links of AdCP's `account`), campaigns,
 * media buys and their packages, creatives, daily delivery metrics, test cohorts, human feedback and the
 * measurement-engine records. Discovery sessions and the activation sandbox's enrolments, claims and provider
 * connections. Part 3 (MCP tools) mutates the same rows.
 *
 * Money is integer minor units of the row's ISO 4217 currency (`*_minor` bigint columns). These tables use their own
 * handle on the `media_buying` Postgres schema (the same schema as `schema.ts`, which re-exports this file), so the
 * two files can be loaded in either order.
 */
import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  date,
  index,
  integer,
  jsonb,
  pgSchema,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { advertisers, agentRegistrations, organizations, storefronts, users } from './schema.ts';

const mediaBuying = pgSchema('media_buying');
const id = () => bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity();
const ref = (name: string) => bigint(name, { mode: 'number' });
const at = (name: string) => timestamp(name, { withTimezone: true });
const minor = (name: string) => bigint(name, { mode: 'number' });

/** A sales agent's operations on live media buys (AdCP `update_media_buy` capabilities). */
export const SALES_AGENT_CAPABILITIES = [
  'update_budget',
  'update_flight',
  'pause',
  'resume',
  'cancel',
  'update_creatives',
] as const;
export type SalesAgentCapability = (typeof SALES_AGENT_CAPABILITIES)[number];

/** Sales agents (`sa_`) behind a storefront: the seller's AdCP agent that takes media buys. */
export const salesAgents = mediaBuying.table(
  'sales_agents',
  {
    id: id(),
    publicId: text('public_id').notNull().unique(),
    organizationId: ref('organization_id')
      .notNull()
      .references(() => organizations.id),
    storefrontId: ref('storefront_id')
      .notNull()
      .references(() => storefronts.id),
    name: text('name').notNull(),
    /** The agent's AdCP endpoint (informational; the ad-platform adapter does the delivery). */
    agentUrl: text('agent_url'),
    capabilities: jsonb('capabilities').$type<SalesAgentCapability[]>().notNull(),
    /** ISO 4217: the currency the agent takes budgets in. */
    currency: text('currency').notNull(),
    createdAt: at('created_at').notNull(),
    archivedAt: at('archived_at'),
  },
  (t) => [index('sales_agents_storefront_idx').on(t.storefrontId, t.id)],
);

/**
 * Pricing rules (`pr_`): the platform fee terms of one sales agent (at most one live rule per agent). A media buy on
 * an agent without one is `PRICING_NOT_CONFIGURED`.
 */
export const pricingRules = mediaBuying.table(
  'pricing_rules',
  {
    id: id(),
    publicId: text('public_id').notNull().unique(),
    organizationId: ref('organization_id')
      .notNull()
      .references(() => organizations.id),
    salesAgentId: ref('sales_agent_id')
      .notNull()
      .references(() => salesAgents.id),
    /** Platform fee in basis points of media spend (0-10,000). */
    platformFeeBps: integer('platform_fee_bps').notNull(),
    createdAt: at('created_at').notNull(),
    updatedAt: at('updated_at').notNull(),
  },
  (t) => [uniqueIndex('pricing_rules_agent_uq').on(t.salesAgentId)],
);

/** Product statuses: `active` products are discoverable; `archived` ones keep their history only. */
export const PRODUCT_STATUSES = ['active', 'archived'] as const;

/** AdCP `delivery-type`. */
export const DELIVERY_TYPES = ['guaranteed', 'non_guaranteed'] as const;

/** AdCP `pricing-model` values this service prices (fixed or floor price per unit). */
export const PRICING_MODELS = ['cpm', 'vcpm', 'cpc', 'cpcv', 'cpv', 'flat_rate'] as const;

/** An AdCP pricing option, camelCase; prices are decimal major units as in AdCP. */
export interface PricingOption {
  pricingOptionId: string;
  pricingModel: (typeof PRICING_MODELS)[number];
  currency: string;
  fixedPrice?: number;
  floorPrice?: number;
  minSpendPerPackage?: number;
}

/** An AdCP `format-id`: the creative agent's URL and the format's id there. */
export interface FormatId {
  agentUrl: string;
  id: string;
}

/** An AdCP publisher property selector (the publisher's domain and its property ids or tags). */
export interface PublisherProperty {
  publisherDomain: string;
  selectionType: 'all' | 'by_id' | 'by_tag';
  propertyIds?: string[];
  propertyTags?: string[];
}

/** Products (`prd_`) of a storefront, in AdCP's product shape. */
export const products = mediaBuying.table(
  'products',
  {
    id: id(),
    publicId: text('public_id').notNull().unique(),
    organizationId: ref('organization_id')
      .notNull()
      .references(() => organizations.id),
    storefrontId: ref('storefront_id')
      .notNull()
      .references(() => storefronts.id),
    /** The sales agent that sells it (null: the storefront's first agent). */
    salesAgentId: ref('sales_agent_id').references(() => salesAgents.id),
    name: text('name').notNull(),
    description: text('description').notNull(),
    deliveryType: text('delivery_type', { enum: DELIVERY_TYPES }).notNull(),
    channels: jsonb('channels').$type<string[]>().notNull(),
    formatIds: jsonb('format_ids').$type<FormatId[]>().notNull(),
    publisherProperties: jsonb('publisher_properties').$type<PublisherProperty[]>().notNull(),
    pricingOptions: jsonb('pricing_options').$type<PricingOption[]>().notNull(),
    status: text('status', { enum: PRODUCT_STATUSES }).notNull(),
    createdAt: at('created_at').notNull(),
    updatedAt: at('updated_at').notNull(),
  },
  (t) => [index('products_storefront_idx').on(t.storefrontId, t.status, t.id)],
);

/**
 * Buyer Setup step 1: the operator identity of a Buyer Account (AdCP `account.operator`: the domain of the entity
 * operating the buying). Until a Buyer Account has one that is not the platform's own domain, buying routes answer
 * `BUYER_SETUP_REQUIRED`.
 */
export const buyerOperatorIdentities = mediaBuying.table('buyer_operator_identities', {
  organizationId: ref('organization_id')
    .primaryKey()
    .references(() => organizations.id),
  /** Lower-cased domain name. */
  domain: text('domain').notNull(),
  /** The operator's legal or trading name. */
  name: text('name').notNull(),
  updatedAt: at('updated_at').notNull(),
});

/** Storefront account-link statuses (spec "Storefront account link"; equal to AdCP's `account-status`). */
export const ACCOUNT_LINK_STATUSES = [
  'pending_approval',
  'active',
  'payment_required',
  'suspended',
  'rejected',
  'closed',
] as const;
export type AccountLinkStatus = (typeof ACCOUNT_LINK_STATUSES)[number];

/**
 * Advertiser accounts (`acc_`): the account link of one advertiser of a Buyer Account on one storefront (AdCP
 * `account`; part 3's `sync_accounts` creates them, the seller decides them). Natural key: advertiser and storefront.
 */
export const advertiserAccounts = mediaBuying.table(
  'advertiser_accounts',
  {
    id: id(),
    publicId: text('public_id').notNull().unique(),
    organizationId: ref('organization_id')
      .notNull()
      .references(() => organizations.id),
    advertiserId: ref('advertiser_id')
      .notNull()
      .references(() => advertisers.id),
    storefrontId: ref('storefront_id')
      .notNull()
      .references(() => storefronts.id),
    /** The storefront's Seller Account at link time. */
    sellerOrganizationId: ref('seller_organization_id')
      .notNull()
      .references(() => organizations.id),
    name: text('name').notNull(),
    status: text('status', { enum: ACCOUNT_LINK_STATUSES }).notNull(),
    /** Operator domain of the Buyer Account when the link was requested. */
    operator: text('operator').notNull(),
    currency: text('currency').notNull(),
    /**
     * The outstanding balance the seller recorded (minor units of {@link currency}): `payment_required` moves back to
     * `active` when it is cleared (spec "Storefront account link").
     */
    balanceDueMinor: minor('balance_due_minor').notNull().default(0),
    revision: integer('revision').notNull().default(1),
    createdAt: at('created_at').notNull(),
    updatedAt: at('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('advertiser_accounts_link_uq').on(t.advertiserId, t.storefrontId),
    index('advertiser_accounts_org_idx').on(t.organizationId, t.id),
    index('advertiser_accounts_storefront_idx').on(t.storefrontId, t.id),
  ],
);

/** Campaign statuses (the spec shows none: ours). */
export const CAMPAIGN_STATUSES = ['active', 'paused', 'completed', 'archived'] as const;

/** Campaigns (`cmp_`) of an advertiser: a budget in one currency over a flight. */
export const campaigns = mediaBuying.table(
  'campaigns',
  {
    id: id(),
    publicId: text('public_id').notNull().unique(),
    organizationId: ref('organization_id')
      .notNull()
      .references(() => organizations.id),
    advertiserId: ref('advertiser_id')
      .notNull()
      .references(() => advertisers.id),
    name: text('name').notNull(),
    status: text('status', { enum: CAMPAIGN_STATUSES }).notNull(),
    currency: text('currency').notNull(),
    /** `budget.total` in minor units of {@link currency}. */
    budgetTotalMinor: minor('budget_total_minor').notNull(),
    flightStart: at('flight_start').notNull(),
    flightEnd: at('flight_end').notNull(),
    createdAt: at('created_at').notNull(),
    updatedAt: at('updated_at').notNull(),
  },
  (t) => [index('campaigns_org_idx').on(t.organizationId, t.id)],
);

/** AdCP `media-buy-status`. */
export const MEDIA_BUY_STATUSES = [
  'pending_creatives',
  'pending_start',
  'active',
  'paused',
  'completed',
  'rejected',
  'canceled',
] as const;
export type MediaBuyStatus = (typeof MEDIA_BUY_STATUSES)[number];

/**
 * Media buys (`mb_`, AdCP `media-buy`). The storefront's Seller Account and the buyer's operator domain are persisted
 * on the buy when it is made: later changes to either never rewrite a historical buy.
 */
export const mediaBuys = mediaBuying.table(
  'media_buys',
  {
    id: id(),
    publicId: text('public_id').notNull().unique(),
    organizationId: ref('organization_id')
      .notNull()
      .references(() => organizations.id),
    advertiserId: ref('advertiser_id')
      .notNull()
      .references(() => advertisers.id),
    campaignId: ref('campaign_id')
      .notNull()
      .references(() => campaigns.id),
    storefrontId: ref('storefront_id')
      .notNull()
      .references(() => storefronts.id),
    salesAgentId: ref('sales_agent_id')
      .notNull()
      .references(() => salesAgents.id),
    sellerOrganizationId: ref('seller_organization_id')
      .notNull()
      .references(() => organizations.id),
    advertiserAccountId: ref('advertiser_account_id').references(() => advertiserAccounts.id),
    operator: text('operator').notNull(),
    name: text('name').notNull(),
    status: text('status', { enum: MEDIA_BUY_STATUSES }).notNull(),
    currency: text('currency').notNull(),
    totalBudgetMinor: minor('total_budget_minor').notNull(),
    /** Platform fee of the pricing rule at creation (basis points). */
    platformFeeBps: integer('platform_fee_bps').notNull(),
    startTime: at('start_time').notNull(),
    endTime: at('end_time').notNull(),
    revision: integer('revision').notNull().default(1),
    confirmedAt: at('confirmed_at'),
    createdAt: at('created_at').notNull(),
    updatedAt: at('updated_at').notNull(),
  },
  (t) => [
    index('media_buys_org_idx').on(t.organizationId, t.id),
    index('media_buys_campaign_idx').on(t.campaignId),
    index('media_buys_live_idx').on(t.status, t.startTime),
  ],
);

/** Packages (`pkg_`, AdCP `package`) of a media buy: one product at one pricing option. */
export const packages = mediaBuying.table(
  'packages',
  {
    id: id(),
    publicId: text('public_id').notNull().unique(),
    mediaBuyId: ref('media_buy_id')
      .notNull()
      .references(() => mediaBuys.id),
    productId: ref('product_id')
      .notNull()
      .references(() => products.id),
    pricingOptionId: text('pricing_option_id').notNull(),
    budgetMinor: minor('budget_minor').notNull(),
    /** Impression goal (AdCP `impressions`), or null. */
    impressions: bigint('impressions', { mode: 'number' }),
    paused: boolean('paused').notNull().default(false),
    canceled: boolean('canceled').notNull().default(false),
    createdAt: at('created_at').notNull(),
  },
  (t) => [index('packages_buy_idx').on(t.mediaBuyId, t.id)],
);

/** AdCP creative statuses. */
export const CREATIVE_STATUSES = [
  'processing',
  'pending_review',
  'approved',
  'rejected',
  'archived',
] as const;

/** Creatives (`cr_`) of an advertiser (AdCP `creative-asset`). */
export const creatives = mediaBuying.table(
  'creatives',
  {
    id: id(),
    publicId: text('public_id').notNull().unique(),
    organizationId: ref('organization_id')
      .notNull()
      .references(() => organizations.id),
    advertiserId: ref('advertiser_id')
      .notNull()
      .references(() => advertisers.id),
    name: text('name').notNull(),
    formatId: jsonb('format_id').$type<FormatId>().notNull(),
    /** AdCP assets by role (`{image: {url, width, height}, click_url: {url}}`), camelCase. */
    assets: jsonb('assets').$type<Record<string, unknown>>().notNull(),
    status: text('status', { enum: CREATIVE_STATUSES }).notNull(),
    /**
     * The buyer's own id (AdCP `creative_id` of `sync_creatives`), unique per account (advertiser x storefront); null
     * for REST creatives.
     */
    buyerCreativeId: text('buyer_creative_id'),
    /**
     * The storefront a synced creative was sent to (with the advertiser, the AdCP account it belongs to: its review,
     * and `delete_missing`, are that account's); null for REST creatives.
     */
    storefrontId: ref('storefront_id').references(() => storefronts.id),
    createdAt: at('created_at').notNull(),
    updatedAt: at('updated_at').notNull(),
  },
  (t) => [
    index('creatives_org_idx').on(t.organizationId, t.id),
    uniqueIndex('creatives_buyer_id_uq').on(t.advertiserId, t.storefrontId, t.buyerCreativeId),
  ],
);

/** Daily delivery of one package (the ad-platform adapter's numbers), one row per package and UTC day. */
export const deliveryMetrics = mediaBuying.table(
  'delivery_metrics',
  {
    id: id(),
    organizationId: ref('organization_id')
      .notNull()
      .references(() => organizations.id),
    mediaBuyId: ref('media_buy_id')
      .notNull()
      .references(() => mediaBuys.id),
    packageId: ref('package_id')
      .notNull()
      .references(() => packages.id),
    day: date('day', { mode: 'string' }).notNull(),
    impressions: bigint('impressions', { mode: 'number' }).notNull(),
    clicks: bigint('clicks', { mode: 'number' }).notNull(),
    spendMinor: minor('spend_minor').notNull(),
    currency: text('currency').notNull(),
    createdAt: at('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('delivery_metrics_package_day_uq').on(t.packageId, t.day),
    index('delivery_metrics_org_idx').on(t.organizationId, t.day, t.id),
  ],
);

/** Test cohort statuses. */
export const TEST_COHORT_STATUSES = ['draft', 'running', 'concluded'] as const;

/** Test cohorts (`tc_`): a holdout experiment over media buys of an advertiser. */
export const testCohorts = mediaBuying.table(
  'test_cohorts',
  {
    id: id(),
    publicId: text('public_id').notNull().unique(),
    organizationId: ref('organization_id')
      .notNull()
      .references(() => organizations.id),
    advertiserId: ref('advertiser_id')
      .notNull()
      .references(() => advertisers.id),
    name: text('name').notNull(),
    /** Share of the audience held out, in percent (1-50). */
    holdoutPercent: integer('holdout_percent').notNull(),
    status: text('status', { enum: TEST_COHORT_STATUSES }).notNull(),
    createdAt: at('created_at').notNull(),
  },
  (t) => [index('test_cohorts_org_idx').on(t.organizationId, t.id)],
);

/** Human feedback (`hf_`): a person's rating of a media buy's outcome, read by the buying agents. */
export const humanFeedback = mediaBuying.table(
  'human_feedback',
  {
    id: id(),
    publicId: text('public_id').notNull().unique(),
    organizationId: ref('organization_id')
      .notNull()
      .references(() => organizations.id),
    mediaBuyId: ref('media_buy_id').references(() => mediaBuys.id),
    authorUserId: ref('author_user_id').references(() => users.id),
    /** 1 (poor) to 5 (excellent). */
    rating: integer('rating').notNull(),
    comment: text('comment').notNull(),
    createdAt: at('created_at').notNull(),
  },
  (t) => [index('human_feedback_org_idx').on(t.organizationId, t.id)],
);

/** Sub-lists of `/measurement-engine/*`: lift studies and conversion event sources. */
export const MEASUREMENT_KINDS = ['study', 'event_source'] as const;
export type MeasurementKind = (typeof MEASUREMENT_KINDS)[number];

/**
 * Measurement-engine records (`me_`): `study` (a brand or conversion lift study, `details.studyType`) and
 * `event_source` (a conversion event source, `details.eventTypes`). An alpha feature (`measurement-engine`).
 */
export const measurementRecords = mediaBuying.table(
  'measurement_records',
  {
    id: id(),
    publicId: text('public_id').notNull().unique(),
    organizationId: ref('organization_id')
      .notNull()
      .references(() => organizations.id),
    kind: text('kind', { enum: MEASUREMENT_KINDS }).notNull(),
    name: text('name').notNull(),
    status: text('status').notNull(),
    details: jsonb('details').$type<Record<string, unknown>>().notNull(),
    createdAt: at('created_at').notNull(),
  },
  (t) => [index('measurement_records_org_idx').on(t.organizationId, t.kind, t.id)],
);

/**
 * Discovery sessions (`dsc_`): a buyer's product discovery for one advertiser. The product groups (one per storefront)
 * and their quotes are fixed when the session starts; quotes are priced for `quoteDay` (UTC) and the session
 * expires at `expiresAt` (the end of that day).
 */
export const discoverySessions = mediaBuying.table(
  'discovery_sessions',
  {
    id: id(),
    publicId: text('public_id').notNull().unique(),
    organizationId: ref('organization_id')
      .notNull()
      .references(() => organizations.id),
    advertiserId: ref('advertiser_id')
      .notNull()
      .references(() => advertisers.id),
    quoteDay: date('quote_day', { mode: 'string' }).notNull(),
    /** The groups in order: the storefront (as it was at the start) and how many products it has in the session. */
    groups: jsonb('groups')
      .$type<
        {
          storefrontId: string;
          storefront: { id: string; name: string; currency: string; sellerAccountId: string };
          totalProducts: number;
        }[]
      >()
      .notNull(),
    createdAt: at('created_at').notNull(),
    expiresAt: at('expires_at').notNull(),
    /**
     * SHA-256 (hex) of the catalog the session was built from (storefront id, name, currency and Seller Account,
     * product ids and pricing options, in session order): an MCP `get_products` reuses the session of the same Buyer Account, advertiser
     * and UTC day while the live catalog has the same fingerprint. Null for sessions kept before it existed.
     */
    catalogFingerprint: text('catalog_fingerprint'),
  },
  (t) => [
    index('discovery_sessions_org_idx').on(t.organizationId, t.expiresAt),
    index('discovery_sessions_expires_idx').on(t.expiresAt),
    index('discovery_sessions_kept_idx').on(t.advertiserId, t.quoteDay),
  ],
);

/**
 * The catalog version: one row (`id` 1) that the database itself keeps current. A deferred constraint trigger on
 * `products`, `storefronts`, a change of an organization's `public_id` and the ad-platform simulator's faults
 * (`ad_platform_faults`; migration `0012_catalog_version_triggers`) bumps `version` once per writing transaction, at
 * its commit, so any such write by any instance or tool moves it, in the same transaction as the write; a catalog write
 * also clears `fingerprint`. `fingerprint` is the discovery fingerprint of the catalog (`Discovery`, "Kept sessions"):
 * null until the first reader after a catalog change computes it from the catalog read in the same statement as
 * `version`, and stores it only while `version` is unchanged. MCP `get_products` reads this row instead of the whole
 * catalog on every call; per-instance caches of discovery pages and of the simulator's discovery faults are keyed by
 * `version`.
 */
export const catalogVersions = mediaBuying.table(
  'catalog_versions',
  {
    id: integer('id').primaryKey().default(1),
    version: bigint('version', { mode: 'number' }).notNull().default(0),
    fingerprint: text('fingerprint'),
    /** The transaction (`txid_current()`) that bumped `version` last: a transaction bumps it once. */
    bumpedBy: bigint('bumped_by', { mode: 'number' }),
  },
  (t) => [check('catalog_versions_one_row', sql`${t.id} = 1`)],
);

/** A quote as fixed when a discovery session starts: one pricing option's price, in decimal major units. */
export interface DiscoveryQuoteOption {
  pricingOptionId: string;
  pricingModel: (typeof PRICING_MODELS)[number];
  price: number | null;
  priceType: 'fixed' | 'floor';
  currency: string;
}

/** A product as a discovery session saw it (the REST product view: camelCase, instants as ISO strings). */
export interface DiscoveryProductSnapshot {
  productId: string;
  storefrontId: string;
  name: string;
  description: string;
  deliveryType: (typeof DELIVERY_TYPES)[number];
  channels: string[];
  formatIds: FormatId[];
  publisherProperties: PublisherProperty[];
  pricingOptions: PricingOption[];
  status: (typeof PRODUCT_STATUSES)[number];
  createdAt: string;
}

/**
 * The quotes (`dqt_`) of a discovery session: one row per product it found, fixed for the session's UTC day (the
 * product and its storefront as they were at the start, and each pricing option's price). Pages are served from
 * these rows; part 3 refuses a quote id past its session's `expires_at` with `FX_QUOTE_EXPIRED`. Removed with the
 * session.
 */
export const discoveryQuotes = mediaBuying.table(
  'discovery_quotes',
  {
    id: id(),
    publicId: text('public_id').notNull().unique(),
    sessionId: ref('session_id')
      .notNull()
      .references(() => discoverySessions.id, { onDelete: 'cascade' }),
    groupIndex: integer('group_index').notNull(),
    position: integer('position').notNull(),
    productId: ref('product_id')
      .notNull()
      .references(() => products.id),
    /** The product's view when the session started (`productView`). */
    product: jsonb('product').$type<DiscoveryProductSnapshot>().notNull(),
    /** The storefront when the session started. */
    storefront: jsonb('storefront')
      .$type<{ id: string; name: string; currency: string; sellerAccountId: string }>()
      .notNull(),
    options: jsonb('options').$type<DiscoveryQuoteOption[]>().notNull(),
  },
  (t) => [uniqueIndex('discovery_quotes_page_idx').on(t.sessionId, t.groupIndex, t.position)],
);

/**
 * Anonymous agent enrolments (`are_`) of the activation sandbox: made by the anonymous registration, exchanged once
 * (the identity provider's signed assertion names `jti`) for an agent registration credential.
 */
export const activationEnrolments = mediaBuying.table('activation_enrolments', {
  id: id(),
  publicId: text('public_id').notNull().unique(),
  workloadId: text('workload_id').notNull(),
  agentName: text('agent_name').notNull(),
  /** The assertion's `jti`. */
  assertionId: text('assertion_id').notNull().unique(),
  createdAt: at('created_at').notNull(),
  assertionExpiresAt: at('assertion_expires_at').notNull(),
  exchangedAt: at('exchanged_at'),
  registrationId: ref('registration_id').references(() => agentRegistrations.id),
});

/** The claim code of an activation (SHA-256 of `mbc_...`, shown once at the exchange) and who claimed it. */
export const activationClaims = mediaBuying.table('activation_claims', {
  registrationId: ref('registration_id')
    .primaryKey()
    .references(() => agentRegistrations.id),
  codeHash: text('code_hash').notNull().unique(),
  claimedAt: at('claimed_at'),
});

/** Ad-platform (provider) accounts connected inside a sandbox, in connection order; binding keeps the first. */
export const activationProviderConnections = mediaBuying.table(
  'activation_provider_connections',
  {
    id: id(),
    registrationId: ref('registration_id')
      .notNull()
      .references(() => agentRegistrations.id),
    provider: text('provider').notNull(),
    providerAccountId: text('provider_account_id').notNull(),
    connectedAt: at('connected_at').notNull(),
  },
  (t) => [
    index('activation_provider_connections_idx').on(t.registrationId, t.id),
    uniqueIndex('activation_provider_connections_uq').on(t.registrationId, t.provider, t.providerAccountId),
  ],
);
