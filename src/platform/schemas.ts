import {
  FormatRegistry,
  type IntegerOptions,
  type SchemaOptions,
  type TInteger,
  type TUnsafe,
  Type,
} from '@sinclair/typebox';

/** The largest value of a PostgreSQL `integer` (int4) column, 2^31 - 1. */
export const INT4_MAX = 2_147_483_647;

/**
 * An integer a PostgreSQL `integer` (int4) column holds: from `minimum` (default 0) to `maximum` (default
 * {@link INT4_MAX}). Request schemas must bound every number (`storable-input.ts`); this is the usual bound of ids,
 * counts and offsets.
 */
export function Int4(options: IntegerOptions = {}): TInteger {
  return Type.Integer({ minimum: 0, maximum: INT4_MAX, ...options });
}

/**
 * A string restricted to `values`, as JSON Schema `{type: "string", enum: [...]}` (one clear validation message,
 * "must be one of ...", where a TypeBox union of literals gives one message per literal).
 */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: SchemaOptions = {},
): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ ...options, type: 'string', enum: [...values] });
}

/** The first instant the platform's date formats accept: 0001-01-01T00:00:00Z (PostgreSQL has no year 0). */
export const EARLIEST_INSTANT_MS = new Date('0001-01-01T00:00:00Z').getTime();

/** The last instant the platform's date formats accept: 9999-12-31T23:59:59.999Z (four-digit years only). */
export const LATEST_INSTANT_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * True for an RFC 3339 `full-date` (`YYYY-MM-DD`) that exists, in years 0001 to 9999: 2026-02-30 does not (`Date`
 * would roll it over into March, so the round trip must give the same text back), nor 0000-01-01 (PostgreSQL has no
 * year 0). JSON Schema's `date` format.
 */
export function isCalendarDate(value: string): boolean {
  return (
    /^\d{4}-\d{2}-\d{2}$/.test(value) &&
    !value.startsWith('0000') &&
    !Number.isNaN(Date.parse(value)) &&
    new Date(value).toISOString().startsWith(value)
  );
}

const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** The issue message for a value that is not {@link isRfc3339DateTime}. */
export const RFC3339_DATE_TIME_MESSAGE = 'must be an RFC 3339 date-time with an offset (Z or +hh:mm)';

/**
 * True for an RFC 3339 `date-time` with its offset (`Z` or `+hh:mm`) on a date that exists, at an instant from
 * {@link EARLIEST_INSTANT_MS} to {@link LATEST_INSTANT_MS} (so its UTC form is a four-digit year PostgreSQL and
 * `Date.prototype.toISOString` agree on). Without an offset `Date.parse` would read the server's local time, so such
 * values are refused rather than guessed.
 */
export function isRfc3339DateTime(value: string): boolean {
  const m = DATE_TIME.exec(value);
  if (m === null || !isCalendarDate(m[1]!)) return false;
  const instant = Date.parse(value);
  return !Number.isNaN(instant) && instant >= EARLIEST_INSTANT_MS && instant <= LATEST_INSTANT_MS;
}

/** The instant of an RFC 3339 date-time ({@link isRfc3339DateTime}), or undefined when `value` is not one. */
export function parseRfc3339DateTime(value: string): Date | undefined {
  return isRfc3339DateTime(value) ? new Date(Date.parse(value)) : undefined;
}

// TypeBox's own checker (`Value.Check`) knows no string formats: the platform gives `date` and `date-time` the meaning
// above once per process, so every service's TypeBox schemas agree with each other.
FormatRegistry.Set('date', isCalendarDate);
FormatRegistry.Set('date-time', isRfc3339DateTime);
