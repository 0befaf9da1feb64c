/**
 * TypeBox schemas of part 2's REST records (camelCase; AdCP 3.x shapes where the spec shows none) and of their
 * request bodies. Money is decimal major units with an ISO 4217 `currency`.
 */
import { type TSchema, Type } from '@sinclair/typebox';
import { Int4, StringEnum } from '../../../platform/schemas.ts';
import { CURRENCIES } from '../catalog/index.ts';
import {
  ACCOUNT_LINK_STATUSES,
  CAMPAIGN_STATUSES,
  CREATIVE_STATUSES,
  DELIVERY_TYPES,
  MEASUREMENT_KINDS,
  MEDIA_BUY_STATUSES,
  PRICING_MODELS,
  PRODUCT_STATUSES,
  SALES_AGENT_CAPABILITIES,
  STOREFRONT_STATUSES,
  TEST_COHORT_STATUSES,
} from '../db/schema.ts';

const Instant = Type.String({ format: 'date-time' });
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** An ISO 4217 code this service trades in. */
export const Currency = StringEnum(CURRENCIES as unknown as readonly [string, ...string[]], {
  description: 'ISO 4217',
});

/** A decimal amount in major units (at most the currency's decimals; checked by the service). */
export const Amount = Type.Number({ minimum: 0, maximum: 100_000_000_000 });

/** A short name. */
export const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' });

/** An id in a path or body. */
export const PublicId = Type.String({ minLength: 1, maxLength: 64 });

/** `take`/`skip` of an offset list capped at `cap`. */
export function PageQuerystring(cap: number, extra: Record<string, TSchema> = {}) {
  return Type.Object(
    {
      take: Type.Optional(
        Int4({ minimum: 1, maximum: cap, default: 50, description: `1-${cap}, default 50` }),
      ),
      skip: Type.Optional(Int4({ minimum: 0, default: 0 })),
      ...extra,
    },
    { additionalProperties: false },
  );
}

/** AdCP `format-id`. */
export const FormatIdSchema = Type.Object(
  {
    agentUrl: Type.String({ format: 'uri', maxLength: 500 }),
    id: Type.String({ minLength: 1, maxLength: 200 }),
  },
  { additionalProperties: false },
);

/** AdCP publisher property selector. */
export const PublisherPropertySchema = Type.Object(
  {
    publisherDomain: Type.String({ minLength: 1, maxLength: 253 }),
    selectionType: StringEnum(['all', 'by_id', 'by_tag'] as const),
    propertyIds: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 100 })),
    propertyTags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 100 })),
  },
  { additionalProperties: false },
);

/** AdCP pricing option (fixed or floor price, decimal major units). */
export const PricingOptionSchema = Type.Object(
  {
    pricingOptionId: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.:-]+$' }),
    pricingModel: StringEnum(PRICING_MODELS),
    currency: Currency,
    fixedPrice: Type.Optional(Amount),
    floorPrice: Type.Optional(Amount),
    minSpendPerPackage: Type.Optional(Amount),
  },
  { additionalProperties: false },
);

export const Storefront = Type.Object({
  id: Type.String({ description: '`sf_` + 32 hex' }),
  name: Type.String(),
  status: StringEnum(STOREFRONT_STATUSES),
  adapterMode: Type.Boolean(),
  currency: Type.String(),
  createdAt: Instant,
});

export const PricingRule = Type.Object({
  id: Type.String({ description: '`pr_` + 32 hex' }),
  salesAgentId: Type.String(),
  platformFeeBps: Type.Integer(),
  updatedAt: Instant,
});

export const SalesAgent = Type.Object({
  id: Type.String({ description: '`sa_` + 32 hex' }),
  storefrontId: Type.String(),
  name: Type.String(),
  agentUrl: Nullable(Type.String()),
  capabilities: Type.Array(StringEnum(SALES_AGENT_CAPABILITIES)),
  currency: Type.String(),
  pricingConfigured: Type.Boolean(),
  pricingRule: Nullable(PricingRule),
  createdAt: Instant,
});

const ProductFields = {
  productId: Type.String({ description: '`prd_` + 32 hex' }),
  storefrontId: Type.String(),
  name: Type.String(),
  description: Type.String(),
  deliveryType: StringEnum(DELIVERY_TYPES),
  channels: Type.Array(Type.String()),
  formatIds: Type.Array(FormatIdSchema),
  publisherProperties: Type.Array(PublisherPropertySchema),
  pricingOptions: Type.Array(PricingOptionSchema),
  status: StringEnum(PRODUCT_STATUSES),
  createdAt: Instant,
};

export const Product = Type.Object(ProductFields);

export const AdvertiserAccount = Type.Object({
  accountId: Type.String({ description: '`acc_` + 32 hex' }),
  name: Type.String(),
  advertiserId: Type.String(),
  storefrontId: Type.String(),
  sellerAccountId: Type.String({ description: "The storefront's Seller Account (`org_`)" }),
  status: StringEnum(ACCOUNT_LINK_STATUSES),
  operator: Type.String(),
  currency: Type.String(),
  balanceDue: Type.Number({
    description:
      'The outstanding balance (decimal major units): `payment_required` becomes `active` when it is cleared',
  }),
  revision: Type.Integer(),
  createdAt: Instant,
  updatedAt: Instant,
});

export const Campaign = Type.Object({
  id: Type.String({ description: '`cmp_` + 32 hex' }),
  advertiserId: Type.String(),
  name: Type.String(),
  status: StringEnum(CAMPAIGN_STATUSES),
  budget: Type.Object({
    total: Type.Number({ description: 'Decimal major units' }),
    currency: Type.String(),
  }),
  flightStart: Instant,
  flightEnd: Instant,
  createdAt: Instant,
});

export const Package = Type.Object({
  packageId: Type.String({ description: '`pkg_` + 32 hex' }),
  productId: Type.String(),
  pricingOptionId: Type.String(),
  budget: Type.Number(),
  impressions: Nullable(Type.Number()),
  paused: Type.Boolean(),
  canceled: Type.Boolean(),
});

export const MediaBuy = Type.Object({
  mediaBuyId: Type.String({ description: '`mb_` + 32 hex' }),
  name: Type.String(),
  status: StringEnum(MEDIA_BUY_STATUSES),
  advertiserId: Type.String(),
  campaignId: Type.String(),
  storefrontId: Type.String(),
  salesAgentId: Type.String(),
  sellerAccountId: Type.String({ description: 'The Seller Account persisted on the buy when it was made' }),
  accountId: Nullable(Type.String()),
  operator: Type.String({ description: 'The operator domain persisted on the buy' }),
  currency: Type.String(),
  totalBudget: Type.Number(),
  startTime: Instant,
  endTime: Instant,
  revision: Type.Integer(),
  confirmedAt: Nullable(Instant),
  createdAt: Instant,
  updatedAt: Instant,
  packages: Type.Array(Package),
});

export const Creative = Type.Object({
  creativeId: Type.String({ description: '`cr_` + 32 hex' }),
  advertiserId: Type.String(),
  name: Type.String(),
  formatId: FormatIdSchema,
  assets: Type.Record(Type.String(), Type.Unknown()),
  status: StringEnum(CREATIVE_STATUSES),
  createdAt: Instant,
  updatedAt: Instant,
});

export const TestCohort = Type.Object({
  id: Type.String({ description: '`tc_` + 32 hex' }),
  advertiserId: Type.String(),
  name: Type.String(),
  holdoutPercent: Type.Integer(),
  status: StringEnum(TEST_COHORT_STATUSES),
  createdAt: Instant,
});

export const HumanFeedback = Type.Object({
  id: Type.String({ description: '`hf_` + 32 hex' }),
  mediaBuyId: Nullable(Type.String()),
  authorId: Nullable(Type.String()),
  rating: Type.Integer(),
  comment: Type.String(),
  createdAt: Instant,
});

export const MeasurementRecord = Type.Object({
  id: Type.String({ description: '`me_` + 32 hex' }),
  kind: StringEnum(MEASUREMENT_KINDS),
  name: Type.String(),
  status: Type.String(),
  details: Type.Record(Type.String(), Type.Unknown()),
  createdAt: Instant,
});

export const AuditLogEntry = Type.Object({
  id: Type.String(),
  action: Type.String(),
  targetType: Type.String(),
  targetId: Nullable(Type.String()),
  actor: Type.Object({ userId: Nullable(Type.String()), kind: Type.String() }),
  metadata: Type.Record(Type.String(), Type.Unknown()),
  createdAt: Instant,
});

export const MetricRow = Type.Object({
  mediaBuyId: Type.String(),
  packageId: Type.String(),
  date: Type.String({ format: 'date', description: 'UTC day' }),
  impressions: Type.Integer(),
  clicks: Type.Integer(),
  spend: Type.Number({ description: 'Decimal major units' }),
  currency: Type.String(),
});

export const OperatorIdentity = Type.Object({
  domain: Type.String(),
  name: Type.String(),
  updatedAt: Instant,
});

export const BuyerSetup = Type.Object({
  complete: Type.Boolean(),
  operatorIdentity: Nullable(OperatorIdentity),
  reason: Nullable(StringEnum(['missing_operator_identity', 'platform_operator_not_allowed'] as const)),
  readinessCheck: Type.Literal('operator_identity'),
  setupStep: Type.Literal(1),
  setupPage: Type.Literal('buyer_setup'),
});

const Quote = Type.Object({
  pricingOptionId: Type.String(),
  pricingModel: Type.String(),
  price: Nullable(Type.Number()),
  priceType: StringEnum(['fixed', 'floor'] as const),
  currency: Type.String(),
  pricedForDay: Type.String({ format: 'date' }),
  expiresAt: Instant,
});

export const DiscoveryResult = Type.Object({
  discoveryId: Type.String({ description: '`dsc_` + 32 hex' }),
  advertiserId: Type.String(),
  productGroups: Type.Array(
    Type.Object({
      groupId: Type.String(),
      storefront: Type.Object({
        id: Type.String(),
        name: Nullable(Type.String()),
        currency: Nullable(Type.String()),
        sellerAccountId: Nullable(Type.String()),
      }),
      totalProducts: Type.Integer(),
      hasMoreProducts: Type.Boolean(),
      products: Type.Array(
        Type.Object({
          ...ProductFields,
          quoteId: Type.String({ description: "`dqt_` + 32 hex: this product's quotes in this session" }),
          available: Type.Boolean({
            description:
              'False when the product, or its storefront, was archived or replaced after the session started: it keeps its place and offers no quote',
          }),
          quotes: Type.Array(Quote),
        }),
      ),
    }),
  ),
  totalGroups: Type.Integer(),
  hasMoreGroups: Type.Boolean(),
  summary: Type.Object({
    totalProducts: Type.Integer(),
    pricedForDay: Type.String({ format: 'date' }),
    expiresAt: Instant,
  }),
});
