/**
 * The malformed-input contract of every operation of every service, generated from each service's OpenAPI document
 * (so services added later are covered with no code here). Requests are built with fast-check from the operation's
 * own parameter and body schemas, then broken: wrong types, missing and extra fields, boundary and overflow numbers,
 * NUL characters, lone surrogates, huge strings and bodies, deeply nested JSON, path traversal and SQL metacharacters.
 * Each is sent with a valid credential (so it reaches validation and the domain), and every answer must hold:
 *
 * - no 5xx;
 * - an error (4xx) is in the service's documented error body (the schema its OpenAPI document declares) and carries
 *   no stack trace or source path;
 * - an error changes nothing: the service's tables (and the platform's) are as they were before the request.
 *
 * The seed is fixed (`FUZZ_SEED`, default below) and the count bounded (`FUZZ_RUNS` requests per operation), so a run
 * is repeatable; a failure names the request to replay. `FUZZ_VERBOSE=1` prints, per operation, how many answers of
 * each status it got (to see how deep the requests reach) and any request slower than a second.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import pg from 'pg';
import { ManualClock } from '../src/platform/clock.ts';
import type { ServiceApp } from '../src/platform/http.ts';
import { implementedServices } from '../src/services/index.ts';
import { changedTables, dataFingerprint, schemasOf } from './support/fingerprint.ts';
import {
  errorBodySchemaOf,
  type JsonSchema,
  type OpenApi,
  type Operation,
  openApiOf,
  operationsOf,
  type Parameter,
  seededKeys,
  withCredential,
} from './support/openapi.ts';
import { startTestPlatform, type TestPlatform } from './support/platform.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20261124);
const RUNS = Number(process.env.FUZZ_RUNS ?? 40);
/** Set to print, per operation, how many answers of each status the fuzz received. */
const VERBOSE = process.env.FUZZ_VERBOSE === '1';

/** A request to send. `payload` is the raw body text (JSON or not). */
interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string;
}

// ---- values --------------------------------------------------------------------------------------------------

/** Placeholder strings replaced by raw JSON text after `JSON.stringify` (numbers JSON.stringify cannot write). */
const RAW = {
  '"\u0001raw:1e309"': '1e309',
  '"\u0001raw:big"': '99999999999999999999',
  '"\u0001raw:-0"': '-0',
};

/** Nesting of the deep values: far past any sane limit, short of a huge body. */
const DEEP = 5000;
const deepArrayText = `${'['.repeat(DEEP)}${']'.repeat(DEEP)}`;

/** Strings no column can take, or whose dates PostgreSQL or a four-digit year cannot hold. */
const UNSTORABLE_STRINGS = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '9999-12-31',
  '0000-01-01',
  '0000-01-01T00:00:00Z',
  '9999-12-31T23:59:59.999Z',
  '+010000-01-01T00:00:00Z',
];

/** Numbers past the columns they may reach (int4, 2^53, bigint, double), and ones JSON.parse turns into Infinity. */
const OVERFLOWING_NUMBERS = [
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 40,
  2 ** 53 + 2,
  -(2 ** 63),
  1e308,
  '\u0001raw:1e309',
  '\u0001raw:big',
];

/** Values that break a field: wrong types, NUL, lone surrogates, overflowing and boundary numbers, odd dates. */
const badValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    ...UNSTORABLE_STRINGS,
    ...OVERFLOWING_NUMBERS,
    '',
    ' ',
    -1,
    0,
    1.5,
    '\u0001raw:-0',
    '+10000-01-01T00:00:00Z',
    "'; drop table x; --",
    '../../../etc/passwd',
    '%00',
    '<script>alert(1)</script>',
    null,
    true,
    [],
    {},
    { __proto__: { polluted: true } },
  ),
  fc.constant('x'.repeat(100_000)),
  fc.constant('\u{1F600}'.repeat(1000)),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.integer(),
  fc.double(),
  fc.jsonValue({ maxDepth: 3 }),
);

/** Path and query values that break a parameter. */
const badParam: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    '%00',
    'a%00b',
    '%ED%A0%80',
    '%ZZ',
    '0',
    '-1',
    '2147483648',
    '-2147483649',
    '9223372036854775808',
    '99999999999999999999',
    '1e309',
    '1e3',
    '0x2',
    '+2',
    '1.5',
    'NaN',
    'Infinity',
    'true',
    '9999-12-31',
    '0000-01-01',
    '10000-01-01',
    '0000-01-01T00:00:00Z',
    '..%2F..%2Fetc%2Fpasswd',
    '..',
    '%2e%2e%2f',
    "1'%20OR%20'1'%3D'1",
    '%27%3B%20drop%20table%20x%3B--',
    '%F0%9F%98%80',
    '%C0%AF',
    '%0d%0aSet-Cookie:%20x',
  ),
  fc.constant('x'.repeat(3000)),
  fc.string({ maxLength: 30 }).map(encodeURIComponent),
  fc.integer().map(String),
);

/**
 * A value shaped like `schema` (roughly: fast-check builds it from the schema's own types, bounds and patterns, and
 * its examples), preferring for a field named `name` the values of that name the service has served (a webhook URL it
 * accepted, an id that exists), so that shaped bodies often pass the service's own rules and reach its storage.
 */
function shapedValue(
  schema: JsonSchema | undefined,
  known: KnownValues | undefined,
  name = '',
  depth = 0,
): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return fc.jsonValue({ maxDepth: 2 });
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  if ('const' in schema) return fc.constant(schema.const);
  const served = known?.named(name, schema) ?? [];
  const examples = [...(Array.isArray(schema.examples) ? (schema.examples as unknown[]) : []), ...served];
  if (examples.length > 0 && schema.type !== 'object' && schema.type !== 'array')
    return fc.oneof(
      { weight: 2, arbitrary: fc.constantFrom(...examples) },
      { weight: 1, arbitrary: shapedValue({ ...schema, examples: undefined }, undefined, name, depth) },
    );
  const variants = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (variants) return fc.oneof(...variants.map((v) => shapedValue(v, known, name, depth + 1)));
  const type = schema.type;
  if (Array.isArray(type))
    return fc.oneof(...type.map((t) => shapedValue({ ...schema, type: t }, known, name, depth)));
  if (type === 'array') {
    const maxItems = Math.min(typeof schema.maxItems === 'number' ? schema.maxItems : 4, 4);
    const minItems = Math.min(typeof schema.minItems === 'number' ? schema.minItems : 0, maxItems);
    return fc.array(shapedValue(schema.items as JsonSchema | undefined, known, name, depth + 1), {
      minLength: minItems,
      maxLength: maxItems,
    });
  }
  if (type === 'object') return shapedObject(schema, examples, known, depth);
  return shapedScalar(schema);
}

/** An object shaped like `schema`: its properties shaped (their examples include the object's), or an example. */
function shapedObject(
  schema: JsonSchema,
  examples: unknown[],
  known: KnownValues | undefined,
  depth: number,
): fc.Arbitrary<unknown> {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = (schema.required ?? []) as string[];
  const objectExamples = examples.filter((e): e is Record<string, unknown> => !!e && typeof e === 'object');
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [property, propertySchema] of Object.entries(properties)) {
    // The example's own value of a property counts as one of its examples.
    const own = objectExamples.filter((e) => property in e).map((e) => e[property]);
    const withExamples = own.length
      ? { ...propertySchema, examples: [...((propertySchema.examples as unknown[]) ?? []), ...own] }
      : propertySchema;
    model[property] = shapedValue(withExamples, known, property, depth + 1);
  }
  const generated = fc.record(model, { requiredKeys: required.filter((r) => r in model) });
  return objectExamples.length > 0
    ? fc.oneof(fc.constantFrom(...objectExamples), { weight: 2, arbitrary: generated })
    : generated;
}

/** A null, boolean, number or string shaped like `schema` (its bounds, formats and patterns). */
function shapedScalar(schema: JsonSchema): fc.Arbitrary<unknown> {
  switch (schema.type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer': {
      const min = typeof schema.minimum === 'number' ? schema.minimum : -(2 ** 31);
      const max = typeof schema.maximum === 'number' ? schema.maximum : 2 ** 31;
      return fc.oneof(
        fc.integer({ min: Math.max(min, -(2 ** 31)), max: Math.min(max, 2 ** 31) }),
        fc.constantFrom(min, max),
      );
    }
    case 'number': {
      const min = typeof schema.minimum === 'number' ? schema.minimum : -1e12;
      const max = typeof schema.maximum === 'number' ? schema.maximum : 1e12;
      return fc.oneof(fc.double({ min, max, noNaN: true }), fc.constantFrom(min, max));
    }
    case 'string':
      return stringOf(schema);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function stringOf(schema: JsonSchema): fc.Arbitrary<string> {
  if (schema.format === 'date-time')
    return fc
      .date({
        min: new Date('1900-01-01T00:00:00Z'),
        max: new Date('2100-01-01T00:00:00Z'),
        noInvalidDate: true,
      })
      .map((d) => d.toISOString());
  if (schema.format === 'date')
    return fc
      .date({
        min: new Date('1900-01-01T00:00:00Z'),
        max: new Date('2100-01-01T00:00:00Z'),
        noInvalidDate: true,
      })
      .map((d) => d.toISOString().slice(0, 10));
  if (typeof schema.pattern === 'string') {
    const maxLength = typeof schema.maxLength === 'number' ? schema.maxLength : Number.POSITIVE_INFINITY;
    return fc
      .stringMatching(new RegExp(schema.pattern))
      .filter((s) => s.length <= maxLength && s.length >= ((schema.minLength as number | undefined) ?? 0));
  }
  return fc.string({
    minLength: (schema.minLength as number | undefined) ?? 0,
    maxLength: Math.min((schema.maxLength as number | undefined) ?? 40, 40),
  });
}

/** Every place in `value` (JSON pointer segments), the root included. */
function placesOf(value: unknown, at: (string | number)[] = [], out: (string | number)[][] = []) {
  out.push(at);
  if (Array.isArray(value)) for (const [i, v] of value.entries()) placesOf(v, [...at, i], out);
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) placesOf(v, [...at, k], out);
  return out;
}

/** `value` with the place `pick` (modulo the number of places) replaced (or, for `delete`, removed). */
function broken(value: unknown, pick: number, replacement: unknown, remove: boolean): unknown {
  const copy = structuredClone(value);
  const places = placesOf(copy);
  const place = places[pick % places.length]!;
  if (place.length === 0) return remove ? undefined : replacement;
  let parent = copy as Record<string | number, unknown>;
  for (const segment of place.slice(0, -1)) parent = parent[segment] as Record<string | number, unknown>;
  const last = place[place.length - 1]!;
  if (remove && !Array.isArray(parent)) delete parent[last];
  else parent[last] = replacement;
  return copy;
}

/** JSON text of `value`, with the RAW placeholders turned into the numbers they stand for. */
function jsonText(value: unknown): string {
  let text = JSON.stringify(value) ?? 'null';
  for (const [placeholder, raw] of Object.entries(RAW)) text = text.replaceAll(placeholder, raw);
  return text;
}

/** `value` with every leaf of the kind of `sample` (strings, or numbers) replaced by `replacement`. */
function poisoned(value: unknown, sample: unknown, replacement: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => poisoned(v, sample, replacement));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, poisoned(v, sample, replacement)]));
  return typeof value === typeof sample ? replacement : value;
}

/** Values a column cannot take, by the kind of leaf they replace (all of a body's strings, or all its numbers). */
const poisons = fc.oneof(
  fc.constantFrom<unknown>(...UNSTORABLE_STRINGS, 'x'.repeat(100_000)).map((bad) => ({ sample: '', bad })),
  fc.constantFrom<unknown>(...OVERFLOWING_NUMBERS, 0.5).map((bad) => ({ sample: 0, bad })),
);

/**
 * Request bodies for `schema`: `good`, shaped values (from the schema, its examples and served values); `bad`, shaped
 * values with one place broken, with every string (or every number) replaced by a value a column cannot store, with
 * an extra field, and bodies that are wrong as a whole.
 */
function bodyOf(
  schema: JsonSchema,
  known: KnownValues,
): { good: fc.Arbitrary<string>; bad: fc.Arbitrary<string | undefined> } {
  const shaped = shapedValue(schema, known);
  const bad = fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .tuple(shaped, fc.nat(), badValue, fc.boolean())
        .map(([value, pick, bad, remove]) => jsonText(broken(value, pick, bad, remove && pick % 3 === 0))),
    },
    {
      weight: 4,
      arbitrary: fc
        .tuple(shaped, poisons)
        .map(([value, { sample, bad }]) => jsonText(poisoned(value, sample, bad))),
    },
    {
      weight: 1,
      arbitrary: shaped.map((value) =>
        jsonText(value && typeof value === 'object' ? { ...value, unexpectedField: 'x' } : value),
      ),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        undefined,
        '',
        'null',
        '{',
        'not json',
        '{"a":1,"a":2}',
        '{"__proto__":{"polluted":true}}',
        deepArrayText,
        `{"data":${'{"a":'.repeat(DEEP)}1${'}'.repeat(DEEP)}}`,
        JSON.stringify({ data: 'x'.repeat(1_100_000) }),
      ),
    },
  );
  return { good: shaped.map(jsonText), bad };
}

/**
 * A request for `op`: a plausible base (path parameters of resources that exist, a few shaped query parameters, a
 * shaped body), then one part broken: a path parameter, a query parameter (or an unexpected one), or the body; one
 * request in ten is left as it is. Breaking one part at a time lets the break reach the service's own code instead of
 * being refused for another, shallower reason.
 */
function requestOf(
  op: Operation,
  known: KnownValues,
): fc.Arbitrary<{ path: string; query: string; body: string | undefined }> {
  const pathParams = op.parameters.filter((p) => p.in === 'path');
  const queryParams = op.parameters.filter((p) => p.in === 'query');
  const fill = (values: string[]) => {
    let path = op.path;
    pathParams.forEach((p, i) => {
      path = path.replace(`{${p.name}}`, values[i]!);
    });
    return path;
  };
  const goodParam = (p: Parameter): fc.Arbitrary<string> => {
    const real = known.matching(p.name, p.schema, op.path);
    const shaped = shapedValue(p.schema, known, p.name).map((v) =>
      encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v)),
    );
    return real.length > 0
      ? fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...real).map(encodeURIComponent) }, shaped)
      : shaped;
  };
  const goodPath = fc.tuple(...pathParams.map(goodParam));
  const goodQuery = fc.tuple(
    ...queryParams.map((p) =>
      fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: goodParam(p) }),
    ),
  );
  const queryText = (values: (string | undefined)[], extra?: string) => {
    const parts: string[] = [];
    queryParams.forEach((p, i) => {
      if (values[i] !== undefined) parts.push(`${encodeURIComponent(p.name)}=${values[i]}`);
    });
    if (extra !== undefined) parts.push(`unexpected_param=${extra}`);
    return parts.join('&');
  };
  const body = op.body ? bodyOf(op.body, known) : undefined;
  const goodBody = body ? body.good : fc.constant(undefined);
  const breakPath = fc
    .tuple(goodPath, fc.nat(), badParam)
    .map(([values, i, bad]) => fill(values.map((v, j) => (j === i % values.length ? bad : v))));
  const breakQuery = fc
    .tuple(goodQuery, fc.nat(), badParam, fc.boolean())
    .map(([values, i, bad, extra]) =>
      extra || queryParams.length === 0
        ? queryText(values, bad)
        : queryText(values.map((v, j) => (j === i % values.length ? bad : v))),
    );
  const request = (
    path: fc.Arbitrary<string>,
    query: fc.Arbitrary<string>,
    b: fc.Arbitrary<string | undefined>,
  ) => fc.record({ path, query, body: b });
  const goodPathText = goodPath.map(fill);
  const goodQueryText = goodQuery.map((values) => queryText(values));
  return fc.oneof(
    { weight: 1, arbitrary: request(goodPathText, goodQueryText, goodBody) },
    { weight: pathParams.length > 0 ? 3 : 0, arbitrary: request(breakPath, goodQueryText, goodBody) },
    { weight: 3, arbitrary: request(goodPathText, breakQuery, goodBody) },
    { weight: body ? 9 : 0, arbitrary: request(goodPathText, goodQueryText, body?.bad ?? goodBody) },
  );
}

/**
 * Values the service has served (ids, slugs, keys of its lists and seeded records), by property name and by the
 * operation path that served them, to fill path parameters with resources that exist.
 */
class KnownValues {
  private readonly byName = new Map<string, Set<string>>();
  private readonly bySource = new Map<string, Map<string, Set<string>>>();

  private add(source: string, name: string, value: unknown, level: number): void {
    if (typeof value !== 'string' && typeof value !== 'number') return;
    if (typeof value === 'string' && (value.length === 0 || value.length > 200)) return;
    const maps: Map<string, Set<string>>[] = [this.byName];
    // By source only the record's own fields (of the body, or of the items of its list), not nested records'.
    if (level <= 2) maps.push(this.bySourceOf(source));
    for (const map of maps) {
      const set = map.get(name) ?? new Set<string>();
      map.set(name, set);
      set.add(String(value));
    }
  }

  private bySourceOf(source: string): Map<string, Set<string>> {
    const map = this.bySource.get(source) ?? new Map<string, Set<string>>();
    this.bySource.set(source, map);
    return map;
  }

  /** Every scalar of `body` (served by the operation at `source`), under its property name. */
  addAll(source: string, body: unknown, name = '', level = 0): void {
    if (Array.isArray(body)) for (const item of body) this.addAll(source, item, name, level);
    else if (body && typeof body === 'object')
      for (const [key, value] of Object.entries(body)) this.addAll(source, value, key, level + 1);
    else this.add(source, name, body, level);
  }

  /** Served values of the field `name` that `schema` accepts (typed as the schema wants), at most 10. */
  named(name: string, schema: JsonSchema): unknown[] {
    if (!name) return [];
    const check = compiled(schema);
    const out: unknown[] = [];
    for (const v of this.byName.get(name) ?? []) {
      if (check(v)) out.push(v);
      else if (/^-?\d+(\.\d+)?$/.test(v) && check(Number(v))) out.push(Number(v));
      if (out.length >= 10) break;
    }
    return out;
  }

  /**
   * Known values for the path parameter `name` of `path` that `schema` accepts, at most 20: first the `name` or `id`
   * values the collection before it served (`/plans` for `/plans/{planId}`), then values of that name anywhere,
   * then any value.
   */
  matching(name: string, schema: JsonSchema, path = ''): string[] {
    const check = compiled(schema);
    const accepts = (v: string) => check(v) || (/^-?\d+$/.test(v) && check(Number(v)));
    const collection = path.slice(0, Math.max(0, path.indexOf(`/{${name}}`)));
    const fromCollection = this.bySource.get(collection);
    for (const candidates of [fromCollection?.get(name), fromCollection?.get('id'), this.byName.get(name)]) {
      const own = [...(candidates ?? [])].filter(accepts);
      if (own.length > 0) return own.slice(0, 20);
    }
    const any = new Set<string>();
    for (const values of this.byName.values()) for (const v of values) if (accepts(v)) any.add(v);
    return [...any].slice(0, 20);
  }
}

/**
 * Reads what the service serves, for {@link KnownValues}: its seeded credentials' fields, then every GET operation
 * twice (the second round fills path parameters with what the first found).
 */
async function harvest(
  app: ServiceApp,
  ops: Operation[],
  seeded: Record<string, unknown>,
  credentialFor: (op: Operation, url: string) => { url: string; headers: Record<string, string> },
): Promise<KnownValues> {
  const known = new KnownValues();
  // The seeded ids and names, not the keys or passwords: a secret sent as a path parameter would be logged as part of
  // the path.
  known.addAll(
    '',
    Object.fromEntries(
      Object.entries(seeded).filter(([name]) => !/(key|token|secret|password)$/i.test(name)),
    ),
  );
  for (let round = 0; round < 2; round++) {
    for (const op of ops.filter((o) => o.method === 'GET')) {
      let path = op.path;
      for (const p of op.parameters.filter((x) => x.in === 'path')) {
        const value = known.matching(p.name, p.schema, op.path)[0];
        if (value === undefined) break;
        path = path.replace(`{${p.name}}`, encodeURIComponent(value));
      }
      if (path.includes('{')) continue;
      const { url, headers } = credentialFor(op, path);
      const res = await app.inject({ method: 'GET', url, headers });
      if (res.statusCode === 200 && res.headers['content-type']?.toString().includes('json'))
        known.addAll(op.path, res.json());
    }
  }
  return known;
}

// ---- checks --------------------------------------------------------------------------------------------------

const STACK_TRACE = /\n\s+at |node_modules|\.ts:\d+|\/src\/|\bat [\w.<>]+ \(/;

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);

/** A request of `op` from generated parts, with its credential, an idempotency key and the body's content type. */
function requestFor(
  op: Operation,
  parts: { path: string; query: string; body: string | undefined },
  credentialOf: (url: string) => { url: string; headers: Record<string, string> },
  serial: number,
): FuzzRequest {
  const target = `${parts.path}${parts.query ? `?${parts.query}` : ''}`;
  const { url, headers } = credentialOf(target);
  const request: FuzzRequest = { method: op.method, url, headers: { ...headers } };
  if (op.parameters.some((p) => p.in === 'header' && p.name === 'idempotency-key'))
    request.headers['idempotency-key'] = `fuzz-${serial}`;
  if (parts.body !== undefined) {
    request.headers['content-type'] = 'application/json';
    request.payload = parts.body;
  }
  return request;
}

function describeExchange(request: FuzzRequest, res: { statusCode: number; body: string }): string {
  return `${request.method} ${request.url} ${request.payload?.slice(0, 200) ?? ''} -> ${res.statusCode} ${res.body.slice(0, 300)}`;
}

/**
 * What is wrong with the answer `res` to `request`, or undefined: a 5xx; an error with internals (a stack trace, a
 * source path); an error that is not JSON or not in the body the operation (or else the service) documents.
 */
function problemWith(
  op: Operation,
  request: FuzzRequest,
  res: { statusCode: number; body: string; headers: Record<string, unknown> },
  errorBody: ValidateFunction,
): string | undefined {
  if (res.statusCode >= 500) return `5xx: ${describeExchange(request, res)}`;
  if (res.statusCode < 400) return undefined;
  if (STACK_TRACE.test(res.body)) return `internals in an error: ${describeExchange(request, res)}`;
  if (op.htmlResponses && String(res.headers['content-type']).startsWith('text/html')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(res.body);
  } catch {
    return `an error that is not JSON: ${describeExchange(request, res)}`;
  }
  const declared = op.responses[String(res.statusCode)];
  const check = declared ? compiled(declared) : errorBody;
  if (!check(parsed))
    return `error body not as documented (${ajv.errorsText(check.errors)}): ${describeExchange(request, res)}`;
  return undefined;
}

const compiledSchemas = new WeakMap<object, ValidateFunction>();
function compiled(schema: JsonSchema): ValidateFunction {
  let validate = compiledSchemas.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiledSchemas.set(schema, validate);
  }
  return validate;
}

describe('fuzz: malformed requests to every operation of every service (from its OpenAPI document)', () => {
  for (const service of implementedServices) {
    test(`${service.name}: no 5xx, errors in the documented body without internals, nothing written by a refused request`, async () => {
      const clock = new ManualClock(new Date('2026-11-24T12:00:00Z'));
      const platform: TestPlatform = await startTestPlatform({ services: [service], clock });
      const client = new pg.Client({ connectionString: platform.database.url });
      await client.connect();
      try {
        const app = platform.app(service.name);
        const doc: OpenApi = await openApiOf(platform, service.name);
        const errorBody = compiled(errorBodySchemaOf(doc));
        const keys = await seededKeys(platform, service.name);
        assert.ok(keys.length > 0, 'the first start seeded a key');
        const schemas = schemasOf(service.name);
        const failures: string[] = [];
        let sent = 0;

        const send = async (request: FuzzRequest) => {
          const started = performance.now();
          let res = await app.inject({ ...request, method: request.method as 'GET' });
          if (VERBOSE && performance.now() - started > 1000)
            console.log('slow', Math.round(performance.now() - started), describeExchange(request, res));
          if (res.statusCode === 429) {
            // A rate limit reached by the fuzz itself: the next window, and the same request again.
            clock.advance(61_000);
            res = await app.inject({ ...request, method: request.method as 'GET' });
          }
          sent += 1;
          return res;
        };

        // The key each operation is called with: the first seeded key it does not refuse (a read-only key gets 403
        // on writes); the operator token on operator routes. The probe sends a body that cannot be parsed, so it is
        // refused after authentication and before any handler runs (it changes nothing).
        const keyOf = new Map<string, string>();
        const credentialFor = (op: Operation, url: string, key = keyOf.get(op.operationId)) => {
          const scheme = op.scheme ? doc.components.securitySchemes[op.scheme] : undefined;
          const credential =
            op.scheme === 'operatorToken' ? platform.operatorAuth.slice(7) : (key ?? keys[0]!.key);
          return scheme ? withCredential(scheme, url, credential) : { url, headers: {} };
        };
        // DELETE operations after the others and operator routes last: they may delete what the others read, or
        // revoke the keys the others are called with.
        const rank = (op: Operation) => (op.path.startsWith('/_ops/') ? 2 : op.method === 'DELETE' ? 1 : 0);
        const operations = operationsOf(doc).sort((a, b) => rank(a) - rank(b));
        const known = await harvest(app, operations, platform.credentials(service.name), credentialFor);
        for (const op of operations) {
          const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
            const schema = op.parameters.find((p) => p.name === name)?.schema ?? {};
            return encodeURIComponent(known.matching(name, schema, op.path)[0] ?? 'x');
          });
          for (const { key } of keys) {
            const { url, headers } = credentialFor(op, path, key);
            const res = await app.inject({
              method: op.method as 'GET',
              url,
              ...(op.method === 'GET'
                ? { headers }
                : { headers: { ...headers, 'content-type': 'application/json' }, payload: '{' }),
            });
            keyOf.set(op.operationId, key);
            if (res.statusCode !== 401 && res.statusCode !== 403) break;
          }
        }
        let fingerprint = await dataFingerprint(client, schemas, service.refusalCounters);
        for (const op of operations) {
          const statuses = new Map<number, number>();
          const property = fc.asyncProperty(requestOf(op, known), async (parts) => {
            const request = requestFor(op, parts, (url) => credentialFor(op, url), sent);
            const res = await send(request);
            if (VERBOSE) statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
            if (res.statusCode < 300 && res.headers['content-type']?.toString().includes('json'))
              known.addAll(op.path, res.json());
            const problem = problemWith(op, request, res, errorBody);
            if (problem) assert.fail(problem);
            if (res.statusCode >= 400) {
              const after = await dataFingerprint(client, schemas, service.refusalCounters);
              if (after !== fingerprint) {
                const changed = changedTables(fingerprint, after).join(', ');
                assert.fail(`a refused request changed ${changed}: ${describeExchange(request, res)}`);
              }
            } else {
              fingerprint = await dataFingerprint(client, schemas, service.refusalCounters);
            }
          });
          const details = await fc.check(property, { seed: SEED, numRuns: RUNS, endOnFailure: true });
          if (VERBOSE) console.log(op.method, op.path, JSON.stringify(Object.fromEntries(statuses)));
          if (details.failed) {
            failures.push(`${op.operationId}: ${String(details.errorInstance).split('\n')[0]}`);
            fingerprint = await dataFingerprint(client, schemas, service.refusalCounters);
          }
        }
        assert.ok(sent >= operations.length, 'every operation was called');
        assert.deepEqual(failures, []);
      } finally {
        await client.end();
        await platform.close();
      }
    });
  }
});
