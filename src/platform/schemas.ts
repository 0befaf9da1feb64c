import { FormatRegistry, type SchemaOptions, type TUnsafe, Type } from '@sinclair/typebox';

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

/**
 * True for an RFC 3339 `full-date` (`YYYY-MM-DD`) that exists: 2026-02-30 does not (`Date` would roll it over into
 * March, so the round trip must give the same text back). JSON Schema's `date` format.
 */
export function isCalendarDate(value: string): boolean {
  return (
    /^\d{4}-\d{2}-\d{2}$/.test(value) &&
    !Number.isNaN(Date.parse(value)) &&
    new Date(value).toISOString().startsWith(value)
  );
}

const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** The issue message for a value that is not {@link isRfc3339DateTime}. */
export const RFC3339_DATE_TIME_MESSAGE = 'must be an RFC 3339 date-time with an offset (Z or +hh:mm)';

/**
 * True for an RFC 3339 `date-time` with its offset (`Z` or `+hh:mm`) on a date that exists. Without an offset
 * `Date.parse` would read the server's local time, so such values are refused rather than guessed.
 */
export function isRfc3339DateTime(value: string): boolean {
  const m = DATE_TIME.exec(value);
  return m !== null && !Number.isNaN(Date.parse(value)) && isCalendarDate(m[1]!);
}

/** The instant of an RFC 3339 date-time ({@link isRfc3339DateTime}), or undefined when `value` is not one. */
export function parseRfc3339DateTime(value: string): Date | undefined {
  return isRfc3339DateTime(value) ? new Date(Date.parse(value)) : undefined;
}

// TypeBox's own checker (`Value.Check`) knows no string formats: the platform gives `date` and `date-time` the meaning
// above once per process, so every service's TypeBox schemas agree with each other.
FormatRegistry.Set('date', isCalendarDate);
FormatRegistry.Set('date-time', isRfc3339DateTime);
