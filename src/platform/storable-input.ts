/**
 * What every service's storage can hold, checked once for every request before any service code runs, so that input
 * PostgreSQL (or the code before it) cannot take is a 400 in the service's own format and never a 500:
 *
 * - text: no NUL character (U+0000: PostgreSQL `text` and `jsonb` refuse it) and no unpaired UTF-16 surrogate (not a
 *   Unicode scalar value: it has no UTF-8 form, so `jsonb` refuses it and `text` would store U+FFFD instead), in
 *   path parameters, query values, JSON strings and JSON object keys;
 * - JSON depth: at most {@link MAX_JSON_DEPTH} nested arrays and objects (deeper input overflows the stack of
 *   recursive code: validation, serialization, drivers);
 * - numbers: every integer and number a request schema accepts has a declared `minimum` and `maximum`, checked when
 *   the route is registered ({@link unboundedNumbersOf}), so an out-of-range value (`2147483648` for an `integer`
 *   column, `99999999999999999999`) is a validation error against the route's own bounds; a query or path value
 *   that becomes Infinity (`1e309`) is refused after validation ({@link nonFiniteIssue});
 * - dates: the platform's `date` and `date-time` formats take years 0001 to 9999 only (`schemas.ts`).
 *
 * Pure functions; `http.ts` applies them.
 */
import type { FieldIssue } from './errors.ts';

/** The deepest JSON a request body may nest (arrays and objects; a scalar at the top is depth 0). */
export const MAX_JSON_DEPTH = 64;

/** The largest integer bound a request schema may declare: beyond it a JSON number is no longer exact. */
export const MAX_INTEGER_BOUND = Number.MAX_SAFE_INTEGER;

const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Why `text` cannot be stored, or undefined when it can: it holds a NUL character or an unpaired surrogate.
 * @returns the issue message (`must not contain ...`).
 */
export function unstorableTextReason(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not contain a NUL character (U+0000)';
  if (UNPAIRED_SURROGATE.test(text))
    return 'must not contain an unpaired UTF-16 surrogate (not valid Unicode text)';
  return undefined;
}

/**
 * The first place of a parsed JSON `value` that storage cannot take: a string or an object key with NUL or an
 * unpaired surrogate, or nesting deeper than `maxDepth`. Walks without recursion (the input may be deep).
 * @param location the issue's location (`body`, `query`, `params`).
 * @returns the issue (its `field` a JSON-pointer-like path, `items/0/name`), or undefined when all is storable.
 */
export function unstorableIssue(
  value: unknown,
  location: string,
  maxDepth = MAX_JSON_DEPTH,
): FieldIssue | undefined {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path: '', depth: 0 }];
  while (stack.length > 0) {
    const { value: current, path, depth } = stack.pop()!;
    if (typeof current === 'string') {
      const reason = unstorableTextReason(current);
      if (reason) return { location, field: path, message: reason };
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (depth >= maxDepth) {
      return {
        location,
        field: path,
        message: `must not nest arrays and objects over ${maxDepth} levels deep`,
      };
    }
    const entries = Array.isArray(current) ? current.entries() : Object.entries(current);
    for (const [key, child] of entries) {
      const childPath = path ? `${path}/${key}` : String(key);
      if (typeof key === 'string') {
        const reason = unstorableTextReason(key);
        if (reason) return { location, field: childPath, message: `has a key that ${reason}` };
      }
      stack.push({ value: child, path: childPath, depth: depth + 1 });
    }
  }
  return undefined;
}

/**
 * The first non-finite number (Infinity, -Infinity, NaN) among the values of `values` (a validated query or path
 * parameter object, whose values Ajv coerced from text: `?n=1e309` becomes Infinity and passes `maximum`), or
 * undefined.
 */
export function nonFiniteIssue(values: unknown, location: string): FieldIssue | undefined {
  if (!values || typeof values !== 'object') return undefined;
  for (const [name, value] of Object.entries(values)) {
    const items: unknown[] = Array.isArray(value) ? value : [value];
    if (items.some((item) => typeof item === 'number' && !Number.isFinite(item)))
      return { location, field: name, message: 'must be a finite number' };
  }
  return undefined;
}

/** An integer written in decimal digits, with an optional minus sign and no leading zeros (`0`, `42`, `-7`). */
const CANONICAL_INTEGER = /^-?(0|[1-9][0-9]*)$/;

/**
 * The names of the top-level properties of a params or querystring `schema` that are integers (or arrays of
 * integers): their text must be {@link nonCanonicalIntegerIssue canonical}.
 */
export function integerPropertiesOf(schema: unknown): string[] {
  const properties = (schema as Schema | undefined)?.properties as Record<string, Schema> | undefined;
  const isInteger = (s: Schema | undefined): boolean =>
    !!s &&
    ([s.type].flat().includes('integer') ||
      isInteger(s.items as Schema | undefined) ||
      [s.anyOf, s.oneOf].some((v) => Array.isArray(v) && v.some((x) => isInteger(x as Schema))));
  return Object.entries(properties ?? {})
    .filter(([, property]) => isInteger(property))
    .map(([name]) => name);
}

/**
 * The first of `names` in raw (not yet coerced) path or query `values` whose text is not a canonical decimal integer
 * (`0x2`, `+2`, `1e3`, `02`, ` 2` would all be read as a number by coercion), or undefined. Values that are not
 * numbers at all are left to the schema's own message.
 */
export function nonCanonicalIntegerIssue(
  values: unknown,
  names: readonly string[],
  location: string,
): FieldIssue | undefined {
  if (!values || typeof values !== 'object') return undefined;
  const record = values as Record<string, unknown>;
  for (const name of names) {
    const items = [record[name]].flat();
    const bad = items.some(
      (v) =>
        typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v)) && !CANONICAL_INTEGER.test(v),
    );
    if (bad)
      return {
        location,
        field: name,
        message: 'must be an integer in decimal digits (no sign other than -, exponent, or leading zeros)',
      };
  }
  return undefined;
}

/** A JSON Schema as a route declares it (TypeBox output or a plain object). */
type Schema = Record<string, unknown>;

/**
 * Every place of a request `schema` where an `integer` or `number` has no finite `minimum` (or
 * `exclusiveMinimum`) and `maximum` (or `exclusiveMaximum`), or an integer bound past {@link MAX_INTEGER_BOUND}.
 * Follows `properties`, `items`, `prefixItems`, `additionalProperties`, `patternProperties`, `anyOf`, `oneOf`,
 * `allOf`, `not`, `if`/`then`/`else`.
 * @param at the place of `schema` itself, for the messages (`body`, `querystring`).
 * @returns one line per place (`body/amount: an integer without a maximum`), empty when every number is bounded.
 */
export function unboundedNumbersOf(schema: unknown, at: string): string[] {
  const out: string[] = [];
  const seen = new Set<unknown>();
  const pending: { node: unknown; path: string }[] = [{ node: schema, path: at }];
  while (pending.length > 0) {
    const { node, path } = pending.pop()!;
    if (!node || typeof node !== 'object' || seen.has(node)) continue;
    seen.add(node);
    out.push(...numberProblems(node as Schema, path));
    pending.push(...subschemasOf(node as Schema, path));
  }
  return out.sort();
}

/** What is missing from the bounds of `s` when it is an integer or number schema. */
function numberProblems(s: Schema, path: string): string[] {
  const types = Array.isArray(s.type) ? s.type : [s.type];
  const numeric = types.find((t) => t === 'integer' || t === 'number');
  if (!numeric) return [];
  const out: string[] = [];
  const low = finite(s.minimum) ?? finite(s.exclusiveMinimum);
  const high = finite(s.maximum) ?? finite(s.exclusiveMaximum);
  const what = numeric === 'integer' ? 'an integer' : 'a number';
  if (low === undefined) out.push(`${path}: ${what} without a minimum`);
  if (high === undefined) out.push(`${path}: ${what} without a maximum`);
  const past = (bound: number | undefined) => bound !== undefined && Math.abs(bound) > MAX_INTEGER_BOUND;
  if (numeric === 'integer' && (past(low) || past(high)))
    out.push(`${path}: an integer bound past Number.MAX_SAFE_INTEGER`);
  return out;
}

/** The subschemas of `s` a value may be checked against, with their places. */
function subschemasOf(s: Schema, path: string): { node: unknown; path: string }[] {
  const out: { node: unknown; path: string }[] = [];
  for (const keyword of ['properties', 'patternProperties'] as const)
    for (const [key, child] of Object.entries((s[keyword] as Schema | undefined) ?? {}))
      out.push({ node: child, path: `${path}/${key}` });
  if (typeof s.additionalProperties === 'object')
    out.push({ node: s.additionalProperties, path: `${path}/*` });
  for (const keyword of ['items', 'prefixItems'] as const) {
    const value = s[keyword];
    if (Array.isArray(value))
      for (const [i, child] of value.entries()) out.push({ node: child, path: `${path}/${i}` });
    else if (value !== undefined) out.push({ node: value, path: `${path}/*` });
  }
  for (const keyword of ['anyOf', 'oneOf', 'allOf'] as const) {
    const variants = s[keyword];
    if (Array.isArray(variants)) for (const child of variants) out.push({ node: child, path });
  }
  for (const keyword of ['not', 'if', 'then', 'else'] as const) out.push({ node: s[keyword], path });
  return out;
}

function finite(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
