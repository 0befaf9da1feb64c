import type { FieldIssue } from '../../platform/errors.ts';
import type { CountableData } from './db/schema.ts';
import { invalidFields } from './pricing-errors.ts';

/**
 * The rules of plan and feature values (spec B and its anchor), checked before anything is written. The
 * request schemas (pricing-schemas.ts) use the same limits; these functions also check what a JSON Schema cannot
 * (decimal places, blank names, fields that must agree), and they are what the domain relies on.
 */
export const PRICING_LIMITS = {
  /** Features per project (anchor: the 51st create is a 400). */
  maxFeaturesPerProject: 50,
  /** Plan and feature names, characters after trimming. */
  nameMaxLength: 200,
  descriptionMaxLength: 2000,
  /** Largest price, in the project's units. */
  maxPrice: 1_000_000_000,
  /** Decimal places of a price (numeric(14,4)). */
  priceDecimals: 4,
  maxMultiplier: 1_000_000,
  /** Decimal places of a multiplier (numeric(12,4)). */
  multiplierDecimals: 4,
  unitMaxLength: 50,
  maxCountableAmount: 1_000_000_000_000,
  countableAmountDecimals: 4,
  projectSlugMaxLength: 64,
} as const;

/** The feature types, spelled as the anchor returns them (`Standart`, sic). */
export const FEATURE_TYPES = ['Standart', 'Limits', 'Usage Based'] as const;
export type FeatureType = (typeof FEATURE_TYPES)[number];

/** A project slug: lowercase letters and digits in groups joined by single hyphens (`acme`, `acme-cloud-2`). */
export const PROJECT_SLUG_PATTERN = '^[a-z0-9]+(-[a-z0-9]+)*$';

/** The fields of a plan other than its features, as stored. Money in the project's units. */
export interface PlanValues {
  name: string;
  description: string;
  basePrice: number;
  isPopular: boolean;
  isVisible: boolean;
  isFree: boolean;
}

/** A plan to create: `name` and `basePrice` are required; `isFree` defaults to `basePrice === 0`. */
export interface PlanCreateInput {
  name: string;
  description?: string;
  basePrice: number;
  isPopular?: boolean;
  isVisible?: boolean;
  isFree?: boolean;
}

/** A partial plan update (PATCH): only the fields present change. */
export type PlanPatch = Partial<PlanValues>;

/** The fields of a feature, as stored. */
export interface FeatureValues {
  name: string;
  description: string;
  basePrice: number;
  featureType: FeatureType;
  isCountable: boolean;
  countableData: CountableData | null;
}

/**
 * A feature to create: `name` and `featureType` are required; `basePrice` defaults to 0, `isCountable` to whether
 * `countableData` is given.
 */
export interface FeatureCreateInput {
  name: string;
  description?: string;
  basePrice?: number;
  featureType: FeatureType;
  isCountable?: boolean;
  countableData?: CountableData | null;
}

/** A partial feature update (PATCH). */
export type FeaturePatch = Partial<FeatureValues>;

/** True when `value` is finite with at most `decimals` decimal places (`19.99` yes, `0.1 + 0.2` no). */
export function hasAtMostDecimals(value: number, decimals: number): boolean {
  if (!Number.isFinite(value)) return false;
  // For |x| in [1e-6, 1e21) String() gives plain decimal notation; smaller non-zero values have more decimals anyway.
  const text = String(Math.abs(value));
  if (text.includes('e')) return value === 0;
  const dot = text.indexOf('.');
  return dot === -1 || text.length - dot - 1 <= decimals;
}

class Issues {
  readonly list: FieldIssue[] = [];

  add(field: string, message: string): void {
    this.list.push({ location: 'body', field, message });
  }

  /** Trims a name; records an issue when blank or too long (in characters: code points, as the schema counts). */
  name(field: string, value: string): string {
    const trimmed = value.trim();
    if (trimmed === '') this.add(field, 'must not be blank');
    else if (characters(trimmed) > PRICING_LIMITS.nameMaxLength)
      this.add(field, `must be at most ${PRICING_LIMITS.nameMaxLength} characters`);
    return trimmed;
  }

  description(field: string, value: string): string {
    const trimmed = value.trim();
    if (characters(trimmed) > PRICING_LIMITS.descriptionMaxLength)
      this.add(field, `must be at most ${PRICING_LIMITS.descriptionMaxLength} characters`);
    return trimmed;
  }

  /** A decimal in [min, max] (or (min, max] when `exclusiveMin`) with at most `decimals` places. */
  decimal(
    field: string,
    value: number,
    rule: { min: number; exclusiveMin?: boolean; max: number; decimals: number },
  ): number {
    if (!Number.isFinite(value)) this.add(field, 'must be a number');
    else if (rule.exclusiveMin ? value <= rule.min : value < rule.min)
      this.add(field, `must be ${rule.exclusiveMin ? '>' : '>='} ${rule.min}`);
    else if (value > rule.max) this.add(field, `must be <= ${rule.max}`);
    else if (!hasAtMostDecimals(value, rule.decimals))
      this.add(field, `must have at most ${rule.decimals} decimal places`);
    return value;
  }

  price(field: string, value: number): number {
    return this.decimal(field, value, {
      min: 0,
      max: PRICING_LIMITS.maxPrice,
      decimals: PRICING_LIMITS.priceDecimals,
    });
  }

  countable(field: string, value: CountableData | null): CountableData | null {
    if (value === null) return null;
    const unit = value.unit.trim();
    if (unit === '') this.add(`${field}/unit`, 'must not be blank');
    else if (characters(unit) > PRICING_LIMITS.unitMaxLength)
      this.add(`${field}/unit`, `must be at most ${PRICING_LIMITS.unitMaxLength} characters`);
    const amount = this.decimal(`${field}/amount`, value.amount, {
      min: 0,
      max: PRICING_LIMITS.maxCountableAmount,
      decimals: PRICING_LIMITS.countableAmountDecimals,
    });
    return { unit, amount };
  }

  throwIfAny(): void {
    if (this.list.length > 0) throw invalidFields(this.list);
  }
}

/**
 * Validates a multiplier: greater than 0, at most 1,000,000, at most 4 decimal places.
 * @throws ValidationError 400 naming `field`.
 */
export function checkMultiplier(value: number, field = 'multiplier'): number {
  const issues = new Issues();
  issues.decimal(field, value, {
    min: 0,
    exclusiveMin: true,
    max: PRICING_LIMITS.maxMultiplier,
    decimals: PRICING_LIMITS.multiplierDecimals,
  });
  issues.throwIfAny();
  return value;
}

/**
 * Validates a new plan and fills its defaults (description `''`, not popular, visible, `isFree` = `basePrice === 0`).
 * A free plan must cost 0.
 * @throws ValidationError 400 listing every failing field.
 */
export function validatePlanCreate(input: PlanCreateInput): PlanValues {
  const issues = new Issues();
  const values: PlanValues = {
    name: issues.name('name', input.name),
    description: issues.description('description', input.description ?? ''),
    basePrice: issues.price('basePrice', input.basePrice),
    isPopular: input.isPopular ?? false,
    isVisible: input.isVisible ?? true,
    isFree: input.isFree ?? input.basePrice === 0,
  };
  if (values.isFree && values.basePrice > 0)
    issues.add('isFree', 'must be false when basePrice is above 0 (a free plan costs 0)');
  issues.throwIfAny();
  return values;
}

/**
 * Validates the fields of a plan update on their own (before the plan is read).
 * @throws ValidationError 400 listing every failing field.
 */
export function validatePlanPatch(patch: PlanPatch): PlanPatch {
  const issues = new Issues();
  const out: PlanPatch = { ...patch };
  if (patch.name !== undefined) out.name = issues.name('name', patch.name);
  if (patch.description !== undefined) out.description = issues.description('description', patch.description);
  if (patch.basePrice !== undefined) out.basePrice = issues.price('basePrice', patch.basePrice);
  issues.throwIfAny();
  return out;
}

/**
 * Applies a validated patch to a plan and checks the fields that must agree (a free plan costs 0).
 * @throws ValidationError 400 naming the field the patch set (`basePrice` or `isFree`).
 */
export function mergePlan(existing: PlanValues, patch: PlanPatch): PlanValues {
  const merged: PlanValues = { ...existing, ...stripUndefined(patch) };
  if (merged.isFree && merged.basePrice > 0) {
    const issues = new Issues();
    if (patch.basePrice !== undefined && patch.isFree === undefined)
      issues.add('basePrice', 'must be 0 while the plan is free (set isFree to false to charge)');
    else issues.add('isFree', 'must be false when basePrice is above 0 (a free plan costs 0)');
    issues.throwIfAny();
  }
  return merged;
}

/**
 * The name of a duplicate: the caller's `name` (trimmed, validated), or the original name followed by ` (Copy)`
 * (the original is shortened so the result fits the name limit).
 * @throws ValidationError 400 when `name` is given and blank or too long.
 */
export function duplicateName(originalName: string, name: string | undefined): string {
  if (name !== undefined) {
    const issues = new Issues();
    const trimmed = issues.name('name', name);
    issues.throwIfAny();
    return trimmed;
  }
  const suffix = ' (Copy)';
  // Cut by code points, so a name of emoji is never cut inside a surrogate pair.
  const kept = [...originalName].slice(0, PRICING_LIMITS.nameMaxLength - suffix.length).join('');
  return `${kept}${suffix}`;
}

/**
 * The length of `text` in characters as JSON Schema's `maxLength` counts them (Unicode code points: an emoji is one,
 * where `String.length` counts two UTF-16 units), so the schema and the domain agree on every limit.
 */
export function characters(text: string): number {
  let n = 0;
  for (const _ of text) n += 1;
  return n;
}

function checkCountableAgreement(issues: Issues, values: FeatureValues): void {
  if (values.isCountable && values.countableData === null)
    issues.add('countableData', 'is required when isCountable is true');
  if (!values.isCountable && values.countableData !== null)
    issues.add('countableData', 'must be null when isCountable is false');
}

/**
 * Validates a new feature and fills its defaults (description `''`, basePrice 0, `isCountable` = whether
 * `countableData` is given). `countableData` is required exactly when `isCountable` is true.
 * @throws ValidationError 400 listing every failing field.
 */
export function validateFeatureCreate(input: FeatureCreateInput): FeatureValues {
  const issues = new Issues();
  const countableData = issues.countable('countableData', input.countableData ?? null);
  const values: FeatureValues = {
    name: issues.name('name', input.name),
    description: issues.description('description', input.description ?? ''),
    basePrice: issues.price('basePrice', input.basePrice ?? 0),
    featureType: input.featureType,
    isCountable: input.isCountable ?? countableData !== null,
    countableData,
  };
  checkCountableAgreement(issues, values);
  issues.throwIfAny();
  return values;
}

/**
 * Validates the fields of a feature update on their own (before the feature is read).
 * @throws ValidationError 400 listing every failing field.
 */
export function validateFeaturePatch(patch: FeaturePatch): FeaturePatch {
  const issues = new Issues();
  const out: FeaturePatch = { ...patch };
  if (patch.name !== undefined) out.name = issues.name('name', patch.name);
  if (patch.description !== undefined) out.description = issues.description('description', patch.description);
  if (patch.basePrice !== undefined) out.basePrice = issues.price('basePrice', patch.basePrice);
  if (patch.countableData !== undefined)
    out.countableData = issues.countable('countableData', patch.countableData);
  issues.throwIfAny();
  return out;
}

/**
 * Applies a validated patch to a feature. Setting `isCountable: false` alone clears `countableData`; setting
 * `countableData` alone sets `isCountable` to whether it is non-null. The two must then agree.
 * @throws ValidationError 400 when they do not (for example `isCountable: true` on a feature without countableData).
 */
export function mergeFeature(existing: FeatureValues, patch: FeaturePatch): FeatureValues {
  const merged: FeatureValues = { ...existing, ...stripUndefined(patch) };
  if (patch.isCountable === undefined && patch.countableData !== undefined)
    merged.isCountable = patch.countableData !== null;
  if (patch.countableData === undefined && patch.isCountable === false) merged.countableData = null;
  const issues = new Issues();
  checkCountableAgreement(issues, merged);
  issues.throwIfAny();
  return merged;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
