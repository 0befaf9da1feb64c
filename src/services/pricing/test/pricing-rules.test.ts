import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiError, ValidationError } from '../../../platform/errors.ts';
import { formatPricingError } from '../pricing-errors.ts';
import {
  characters,
  checkMultiplier,
  duplicateName,
  hasAtMostDecimals,
  mergeFeature,
  mergePlan,
  PRICING_LIMITS,
  validateFeatureCreate,
  validatePlanCreate,
  validatePlanPatch,
} from '../pricing-rules.ts';

/** Runs `fn`, expects a ValidationError, returns the failing fields. */
function failingFields(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ValidationError, String(err));
    assert.equal(err.status, 400);
    return err.issues.map((i) => i.field);
  }
  assert.fail('expected a ValidationError');
}

describe('pricing rules (no database)', () => {
  test('prices: at most 4 decimal places, exactly as sent', () => {
    for (const ok of [0, 1, 19.99, 0.0075, 1234.5678, 1_000_000_000])
      assert.ok(hasAtMostDecimals(ok, 4), `${ok}`);
    for (const bad of [0.1 + 0.2, 1.23456, 0.00001, 1e-7, Number.NaN, Number.POSITIVE_INFINITY])
      assert.ok(!hasAtMostDecimals(bad, 4), `${bad}`);
    assert.ok(hasAtMostDecimals(19.99, 2));
    assert.ok(!hasAtMostDecimals(19.999, 2));
  });

  test('a new plan gets its defaults; isFree follows basePrice unless given', () => {
    assert.deepEqual(validatePlanCreate({ name: '  Starter ', basePrice: 9 }), {
      name: 'Starter',
      description: '',
      basePrice: 9,
      isPopular: false,
      isVisible: true,
      isFree: false,
    });
    assert.equal(validatePlanCreate({ name: 'Free', basePrice: 0 }).isFree, true);
    assert.equal(validatePlanCreate({ name: 'Trial', basePrice: 0, isFree: false }).isFree, false);
  });

  test('a new plan: every failing field is reported', () => {
    assert.deepEqual(
      failingFields(() => validatePlanCreate({ name: '   ', basePrice: 1.23456 })),
      ['name', 'basePrice'],
    );
    assert.deepEqual(
      failingFields(() => validatePlanCreate({ name: 'x', basePrice: 10, isFree: true })),
      ['isFree'],
    );
    assert.deepEqual(
      failingFields(() => validatePlanCreate({ name: 'x', basePrice: -1 })),
      ['basePrice'],
    );
    assert.deepEqual(
      failingFields(() =>
        validatePlanCreate({ name: 'x'.repeat(PRICING_LIMITS.nameMaxLength + 1), basePrice: 1 }),
      ),
      ['name'],
    );
  });

  test('a plan patch: a free plan costs 0, blaming the field the patch set', () => {
    const free = validatePlanCreate({ name: 'Free', basePrice: 0 });
    assert.deepEqual(
      failingFields(() => mergePlan(free, validatePlanPatch({ basePrice: 5 }))),
      ['basePrice'],
    );
    assert.deepEqual(mergePlan(free, { basePrice: 5, isFree: false }), {
      ...free,
      basePrice: 5,
      isFree: false,
    });
    const paid = validatePlanCreate({ name: 'Pro', basePrice: 29 });
    assert.deepEqual(
      failingFields(() => mergePlan(paid, { isFree: true })),
      ['isFree'],
    );
    assert.deepEqual(mergePlan(paid, { name: undefined, isPopular: true }), { ...paid, isPopular: true });
  });

  test('features: countableData exactly when isCountable', () => {
    const countable = validateFeatureCreate({
      name: 'Seats',
      featureType: 'Limits',
      countableData: { unit: ' seat ', amount: 1 },
    });
    assert.equal(countable.isCountable, true);
    assert.deepEqual(countable.countableData, { unit: 'seat', amount: 1 });
    assert.equal(countable.basePrice, 0);
    const plain = validateFeatureCreate({ name: 'SSO', featureType: 'Standart' });
    assert.equal(plain.isCountable, false);
    assert.equal(plain.countableData, null);
    assert.deepEqual(
      failingFields(() => validateFeatureCreate({ name: 'x', featureType: 'Limits', isCountable: true })),
      ['countableData'],
    );
    assert.deepEqual(
      failingFields(() =>
        validateFeatureCreate({
          name: 'x',
          featureType: 'Limits',
          isCountable: false,
          countableData: { unit: 'seat', amount: 1 },
        }),
      ),
      ['countableData'],
    );
    assert.deepEqual(
      failingFields(() =>
        validateFeatureCreate({
          name: 'x',
          featureType: 'Limits',
          countableData: { unit: ' ', amount: 0.123456 },
        }),
      ),
      ['countableData/unit', 'countableData/amount'],
    );
  });

  test('feature patch: isCountable false alone clears countableData; countableData alone sets isCountable', () => {
    const seats = validateFeatureCreate({
      name: 'Seats',
      featureType: 'Limits',
      countableData: { unit: 'seat', amount: 1 },
    });
    assert.deepEqual(mergeFeature(seats, { isCountable: false }), {
      ...seats,
      isCountable: false,
      countableData: null,
    });
    const sso = validateFeatureCreate({ name: 'SSO', featureType: 'Standart' });
    assert.deepEqual(mergeFeature(sso, { countableData: { unit: 'org', amount: 1 } }), {
      ...sso,
      isCountable: true,
      countableData: { unit: 'org', amount: 1 },
    });
    assert.deepEqual(
      failingFields(() => mergeFeature(sso, { isCountable: true })),
      ['countableData'],
    );
  });

  test('multipliers: above 0, at most 1,000,000, at most 4 decimal places', () => {
    assert.equal(checkMultiplier(2), 2);
    assert.equal(checkMultiplier(0.5), 0.5);
    for (const bad of [0, -1, 1.00001, 1_000_001])
      assert.deepEqual(
        failingFields(() => checkMultiplier(bad)),
        ['multiplier'],
      );
  });

  test('duplicate names: default "<name> (Copy)", kept within the name limit; a given name is trimmed', () => {
    assert.equal(duplicateName('Pro', undefined), 'Pro (Copy)');
    assert.equal(duplicateName('Pro', '  Pro 2024 '), 'Pro 2024');
    const long = duplicateName('x'.repeat(PRICING_LIMITS.nameMaxLength), undefined);
    assert.equal(long.length, PRICING_LIMITS.nameMaxLength);
    assert.ok(long.endsWith(' (Copy)'));
    // Emoji are one character each, as the schema counts them, and never cut in half.
    const emoji = duplicateName('\u{1F600}'.repeat(PRICING_LIMITS.nameMaxLength), undefined);
    assert.equal(characters(emoji), PRICING_LIMITS.nameMaxLength);
    assert.doesNotMatch(emoji, /[\ud800-\udbff](?![\udc00-\udfff])/, 'no half of a pair');
    assert.deepEqual(
      failingFields(() => duplicateName('Pro', ' ')),
      ['name'],
    );
  });

  test('lengths are counted in characters (code points) as the request schema counts them', () => {
    const atLimit = '\u{1F600}'.repeat(PRICING_LIMITS.nameMaxLength); // twice as many UTF-16 units
    assert.doesNotThrow(() => validatePlanCreate({ name: atLimit, basePrice: 1 }));
    assert.deepEqual(
      failingFields(() => validatePlanCreate({ name: `${atLimit}\u{1F600}`, basePrice: 1 })),
      ['name'],
    );
  });

  test('the error body is {error, message} with the service names for platform codes', () => {
    assert.deepEqual(
      formatPricingError(new ValidationError([], 'Invalid request: body.name is required.')).body,
      {
        error: 'validation_error',
        message: 'Invalid request: body.name is required.',
      },
    );
    assert.deepEqual(formatPricingError(new ApiError(401, 'operator_unauthenticated', 'no')).body, {
      error: 'unauthorized',
      message: 'no',
    });
    assert.deepEqual(formatPricingError(new ApiError(500, 'internal', 'An internal error occurred.')).body, {
      error: 'internal_error',
      message: 'An internal error occurred.',
    });
    assert.deepEqual(formatPricingError(new ApiError(409, 'conflict', 'taken')).body, {
      error: 'conflict',
      message: 'taken',
    });
  });
});
