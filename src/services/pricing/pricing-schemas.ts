import { Type } from '@sinclair/typebox';
import { StringEnum } from '../../platform/schemas.ts';
import { PERMISSIONS } from './api-keys.ts';
import { FEATURE_TYPES, PRICING_LIMITS } from './pricing-rules.ts';

/** `{error, message}`: every error of the service (spec B; names in pricing-errors.ts). */
export const PricingErrorBody = Type.Object(
  {
    error: Type.String({
      description:
        'Short stable name: `validation_error`, `feature_limit_reached`, `bad_request`, `unauthorized`, `forbidden`, ' +
        '`not_found`, `conflict`, `rate_limited`, `internal_error`',
      examples: ['not_found'],
    }),
    message: Type.String({
      description: 'What went wrong, for people; names the field of a validation error',
      examples: ['Plan 42 not found.'],
    }),
  },
  { $id: 'PricingError', description: 'Error body' },
);

const Id = (description: string) =>
  Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description });

const Timestamp = (description: string) => Type.String({ format: 'date-time', description });

const Price = (description: string) =>
  Type.Number({
    minimum: 0,
    maximum: PRICING_LIMITS.maxPrice,
    description: `${description} In the project's units, at most ${PRICING_LIMITS.priceDecimals} decimal places.`,
  });

const Multiplier = Type.Number({
  exclusiveMinimum: 0,
  maximum: PRICING_LIMITS.maxMultiplier,
  description: `Scales the feature's base amount (2 means twice). Above 0, at most ${PRICING_LIMITS.multiplierDecimals} decimal places.`,
  examples: [5],
});

const Name = (description: string) =>
  Type.String({ minLength: 1, maxLength: PRICING_LIMITS.nameMaxLength, description });

const Description = Type.String({ maxLength: PRICING_LIMITS.descriptionMaxLength });

const FeatureTypeSchema = StringEnum(FEATURE_TYPES, {
  description: '`Standart` (sic, as the anchor spells it), `Limits` or `Usage Based`',
});

export const CountableDataSchema = Type.Object(
  {
    unit: Type.String({
      minLength: 1,
      maxLength: PRICING_LIMITS.unitMaxLength,
      description: 'What is counted (`seat`, `GB`, `request`)',
      examples: ['seat'],
    }),
    amount: Type.Number({
      minimum: 0,
      maximum: PRICING_LIMITS.maxCountableAmount,
      description: 'Units at multiplier 1; a plan offers `amount * multiplier`',
      examples: [1],
    }),
  },
  { additionalProperties: false, description: 'The quantity behind a countable feature' },
);

export const FeatureSchema = Type.Object(
  {
    id: Type.Integer({ description: 'Feature id' }),
    name: Type.String(),
    description: Type.String(),
    basePrice: Type.Number({ description: "Price of one multiple of the feature, in the project's units" }),
    featureType: FeatureTypeSchema,
    isCountable: Type.Boolean(),
    countableData: Type.Union([CountableDataSchema, Type.Null()], {
      description: '`{unit, amount}` when isCountable, otherwise null',
    }),
    createdAt: Timestamp('ISO 8601'),
    updatedAt: Timestamp('ISO 8601'),
  },
  { description: 'A feature of the project' },
);

export const PlanFeatureSchema = Type.Object(
  {
    id: Type.Integer({ description: 'Association id (a duplicate gets new ones)' }),
    multiplier: Type.Number({ description: 'For example 2 means twice the base amount' }),
    feature: FeatureSchema,
  },
  { description: 'A feature on a plan' },
);

export const PlanSchema = Type.Object(
  {
    id: Type.Integer({ description: 'Plan id' }),
    name: Type.String(),
    description: Type.String(),
    basePrice: Type.Number({ description: "Monthly base price, in the project's units" }),
    isPopular: Type.Boolean({ description: 'Marked Popular' }),
    isVisible: Type.Boolean({ description: 'Shown on the pricing page' }),
    isFree: Type.Boolean(),
    planFeatures: Type.Array(PlanFeatureSchema, { description: 'Ordered by association id' }),
    createdAt: Timestamp('ISO 8601'),
    updatedAt: Timestamp('ISO 8601'),
  },
  { description: 'A pricing plan' },
);

export const PlanListResponse = Type.Object({
  plans: Type.Array(PlanSchema, { description: 'Ordered by id (creation order)' }),
});

export const FeatureListResponse = Type.Object({
  features: Type.Array(FeatureSchema, { description: 'Ordered by id (creation order)' }),
});

export const SuccessResponse = Type.Object({
  success: Type.Boolean({ description: 'true when deleted' }),
});

export const SlugParams = Type.Object({
  slug: Type.String({ minLength: 1, maxLength: 200, description: "The project's URL-friendly identifier" }),
});

export const PlanParams = Type.Object({
  slug: SlugParams.properties.slug,
  planId: Id('Plan id'),
});

export const FeatureParams = Type.Object({
  slug: SlugParams.properties.slug,
  featureId: Id('Feature id'),
});

export const PlanFeatureParams = Type.Object({
  slug: SlugParams.properties.slug,
  planId: Id('Plan id'),
  featureId: Id('Feature id (not the association id)'),
});

export const CreatePlanBody = Type.Object(
  {
    name: Name('Plan name'),
    description: Type.Optional(Description),
    basePrice: Price('Monthly base price.'),
    isPopular: Type.Optional(Type.Boolean({ description: 'Default false' })),
    isVisible: Type.Optional(Type.Boolean({ description: 'Default true' })),
    isFree: Type.Optional(
      Type.Boolean({ description: 'Default: basePrice is 0. A free plan must have basePrice 0.' }),
    ),
  },
  { additionalProperties: false },
);

export const UpdatePlanBody = Type.Object(
  {
    name: Type.Optional(Name('Plan name')),
    description: Type.Optional(Description),
    basePrice: Type.Optional(Price('Monthly base price.')),
    isPopular: Type.Optional(Type.Boolean()),
    isVisible: Type.Optional(Type.Boolean()),
    isFree: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const DuplicatePlanBody = Type.Object(
  {
    name: Type.Optional(Name('Name of the copy; default: the original name followed by " (Copy)"')),
  },
  { additionalProperties: false },
);

export const CreateFeatureBody = Type.Object(
  {
    name: Name('Feature name'),
    description: Type.Optional(Description),
    basePrice: Type.Optional(Price('Price of one multiple of the feature; default 0.')),
    featureType: FeatureTypeSchema,
    isCountable: Type.Optional(
      Type.Boolean({ description: 'Default: whether countableData is given. True needs countableData.' }),
    ),
    countableData: Type.Optional(Type.Union([CountableDataSchema, Type.Null()])),
  },
  { additionalProperties: false },
);

export const UpdateFeatureBody = Type.Object(
  {
    name: Type.Optional(Name('Feature name')),
    description: Type.Optional(Description),
    basePrice: Type.Optional(Price('Price of one multiple of the feature.')),
    featureType: Type.Optional(FeatureTypeSchema),
    isCountable: Type.Optional(
      Type.Boolean({ description: 'false alone also clears countableData; true needs countableData' }),
    ),
    countableData: Type.Optional(
      Type.Union([CountableDataSchema, Type.Null()], {
        description: 'Setting it alone sets isCountable to whether it is non-null',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const AddPlanFeatureBody = Type.Object(
  {
    featureId: Id('A feature of the same project'),
    multiplier: Type.Optional({ ...Multiplier, description: `${Multiplier.description} Default 1.` }),
  },
  { additionalProperties: false },
);

export const UpdatePlanFeatureBody = Type.Object({ multiplier: Multiplier }, { additionalProperties: false });

// Operator API

export const PermissionSchema = StringEnum(PERMISSIONS, {
  description: '`read`: read-only calls; `read_write`: every call',
});

export const CreateProjectBody = Type.Object(
  {
    slug: Type.String({
      minLength: 1,
      maxLength: PRICING_LIMITS.projectSlugMaxLength,
      description: 'Lowercase letters and digits in groups joined by single hyphens; never changes',
      examples: ['acme'],
    }),
    name: Type.String({ minLength: 1, maxLength: PRICING_LIMITS.nameMaxLength, examples: ['Acme Cloud'] }),
  },
  { additionalProperties: false },
);

export const ProjectSchema = Type.Object({
  id: Type.Integer(),
  slug: Type.String(),
  name: Type.String(),
  plans: Type.Integer(),
  features: Type.Integer(),
  activeKeys: Type.Integer(),
  createdAt: Timestamp('ISO 8601'),
  updatedAt: Timestamp('ISO 8601'),
});

/** A project's slug in operator requests. */
export const ProjectSlugSchema = Type.String({ minLength: 1, maxLength: 200 });
