/**
 * Endpoint settings (spec 002 section E, "E. Bodies": slug, mode, input and output schemas, authentication type,
 * timeout, payload limit, readiness check) and the JSON Schemas of an endpoint.
 *
 * Allowed ranges (spec E, "Limits": chosen by us, documented in the README):
 * - `slug`: 1 to 63 characters `[a-z0-9-]`, starting and ending with a letter or digit, unique in its scope;
 * - `timeoutSeconds`: 1 to 3,600 (default 300), counted from acceptance by the injected clock;
 * - `maxPayloadBytes`: 1 to 1,048,576 (default 65,536), the UTF-8 JSON size of a job's `input` or a turn's `message`;
 * - schemas: JSON Schema draft 2020-12 documents (objects or booleans) of at most 65,536 bytes, compiled with ajv;
 *   a `$ref` / `$dynamicRef` that is not local (`#...`) is refused: schemas are never fetched; `$async` is refused
 *   anywhere (an asynchronous schema makes ajv answer a Promise, not a verdict); `pattern` and `patternProperties`
 *   run on RE2 (linear time; see {@link linearRegExp}).
 */

import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import type { RegExpEngine } from 'ajv/dist/types/index.js';
import { LRUCache } from 'lru-cache';
import { RE2JS } from 're2js';
import type { FieldIssue } from '../../../platform/errors.ts';
import type { EndpointSettingsRecord } from '../db/endpoints.ts';

/** An endpoint slug: 1-63 characters `[a-z0-9-]`, a letter or digit at both ends. */
export const SLUG_PATTERN = '^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$';
/** An endpoint's timeout in seconds, counted from acceptance by the injected clock. */
export const TIMEOUT_SECONDS = { min: 1, max: 3600, default: 300 } as const;
/** An endpoint's payload limit in bytes (the UTF-8 JSON of a job's `input` or a turn's `message`). */
export const MAX_PAYLOAD_BYTES = { min: 1, max: 1_048_576, default: 65_536 } as const;
/** The largest schema document an endpoint takes (its JSON, in bytes). */
export const MAX_SCHEMA_BYTES = 65_536;

/** The schema of a job's `input` when none is given: any JSON object. */
export const DEFAULT_JOB_INPUT_SCHEMA = { type: 'object' };
/** The schema of a conversation turn's `message` when none is given: a string. */
export const DEFAULT_CONVERSATION_INPUT_SCHEMA = { type: 'string' };

/**
 * A pattern of a user schema that RE2 cannot compile (lookaround, backreferences, an escape it does not know).
 * Thrown by {@link linearRegExp}; {@link validatorFor} reports it as a {@link SchemaCompileError} naming the pattern.
 */
export class UnsupportedPatternError extends Error {
  constructor(
    readonly pattern: string,
    reason: string,
  ) {
    super(
      `pattern '${pattern}' is not supported: patterns run on RE2 (no lookaround, no backreferences): ${reason}`,
    );
    this.name = 'UnsupportedPatternError';
  }
}

/**
 * A user schema ajv cannot compile: an unsupported `pattern` (`pattern` set, the message names it) or another
 * defect of the schema. Compiling happens when a schema is saved, published or rolled back to, and on the first
 * validation of a release in a process (a release saved before a rule existed may not compile).
 */
export class SchemaCompileError extends Error {
  constructor(
    message: string,
    readonly pattern?: string,
  ) {
    super(message);
    this.name = 'SchemaCompileError';
  }
}

/**
 * A JavaScript pattern in RE2's syntax: the escapes `\uXXXX` (a surrogate pair `\uD83D\uDE00` as its one code point)
 * and `\u{X...}` become RE2's `\x{X...}` (RE2 has no `\u`); every other character and escape is kept as it is (an
 * escaped backslash stays one, so `\\u0041` is still a backslash followed by `u0041`).
 */
export function re2Syntax(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    const next = pattern[i + 1];
    if (c !== '\\' || next === undefined) {
      out += c;
      continue;
    }
    if (next === 'u') {
      const rest = pattern.slice(i + 2);
      const braced = /^\{([0-9a-fA-F]{1,6})\}/.exec(rest);
      if (braced) {
        out += `\\x{${braced[1]}}`;
        i += 1 + braced[0].length;
        continue;
      }
      const hex = /^[0-9a-fA-F]{4}/.exec(rest);
      if (hex) {
        let codePoint = Number.parseInt(hex[0], 16);
        let length = 6;
        const low = /^\\u([dD][c-fC-F][0-9a-fA-F]{2})/.exec(rest.slice(4));
        if (codePoint >= 0xd800 && codePoint <= 0xdbff && low) {
          codePoint = 0x10000 + ((codePoint - 0xd800) << 10) + (Number.parseInt(low[1]!, 16) - 0xdc00);
          length = 12;
        }
        out += `\\x{${codePoint.toString(16).toUpperCase()}}`;
        i += length - 1;
        continue;
      }
    }
    out += c + next;
    i += 1;
  }
  return out;
}

/**
 * The regular-expression engine of user schemas (`pattern`, `patternProperties`): RE2's linear-time matching
 * (re2js, a pure-JavaScript port of RE2), never JavaScript's backtracking engine, so a catastrophic pattern such as
 * `^(a+)+$` written by an endpoint editor cannot stall validation (ReDoS). RE2 syntax is the common subset: a
 * pattern using lookaround or backreferences does not compile ({@link UnsupportedPatternError}), and the schema is
 * refused when saved (400). JavaScript's `\u` escapes are translated first ({@link re2Syntax}).
 * Ajv's `u` flag needs nothing: RE2 matches Unicode code points.
 */
export const linearRegExp: RegExpEngine = Object.assign(
  (pattern: string) => {
    let compiled: RE2JS;
    try {
      compiled = RE2JS.compile(re2Syntax(pattern));
    } catch (err) {
      throw new UnsupportedPatternError(pattern, (err as Error).message);
    }
    // Ajv keys each compiled pattern by its `toString()`: the pattern's own text, so two patterns never share one.
    return { test: (text: string) => compiled.test(text), toString: () => `re2:${pattern}` };
  },
  { code: 're2js' },
);

// One ajv per process: strict off so unknown keywords of user schemas are annotations (draft 2020-12 allows them),
// every error reported, formats not asserted (draft 2020-12's default: format is an annotation), patterns on RE2.
const ajv = new Ajv2020.default({
  allErrors: true,
  strict: false,
  validateFormats: false,
  code: { regExp: linearRegExp },
});

/**
 * Compiled validators by release id (releases are immutable) or schema text. An evicted validator's schema is
 * removed from ajv's own cache too (ajv keeps every compiled schema object otherwise).
 */
const compiled = new LRUCache<string, ValidateFunction>({
  max: 1000,
  dispose: (fn) => {
    if (typeof fn.schema === 'object' && fn.schema !== null) ajv.removeSchema(fn.schema);
  },
});

/** The number of schemas ajv holds compiled (for tests of the cache bound). */
export const ajvCachedSchemas = (): number =>
  (ajv as unknown as { _cache: Map<unknown, unknown> })._cache.size;

/** Keywords whose values are instances (data), not schemas: their contents are never references or `$async`. */
const INSTANCE_KEYWORDS = new Set(['const', 'enum', 'default', 'examples']);

/** The places of a remote `$ref` / `$dynamicRef` (not `#...`) in `schema`, as JSON Pointers. */
function remoteRefs(schema: unknown, at = ''): string[] {
  if (!schema || typeof schema !== 'object') return [];
  const found: string[] = [];
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    const here = `${at}/${key}`;
    if ((key === '$ref' || key === '$dynamicRef') && typeof value === 'string' && !value.startsWith('#'))
      found.push(here);
    else if (!INSTANCE_KEYWORDS.has(key)) found.push(...remoteRefs(value, here));
  }
  return found;
}

/** The places of an `$async` keyword in `schema`, as JSON Pointers. */
function asyncKeywords(schema: unknown, at = ''): string[] {
  if (!schema || typeof schema !== 'object') return [];
  const found: string[] = [];
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    const here = `${at}/${key}`;
    if (key === '$async') found.push(here);
    else if (!INSTANCE_KEYWORDS.has(key)) found.push(...asyncKeywords(value, here));
  }
  return found;
}

/**
 * Checks and compiles a user schema (draft 2020-12). Returns the issues (remote references, size, ajv's own
 * complaint), empty when it compiles.
 */
export function schemaIssues(schema: unknown, field: string): FieldIssue[] {
  if (typeof schema !== 'boolean' && (schema === null || typeof schema !== 'object' || Array.isArray(schema)))
    return [{ location: 'body', field, message: 'must be a JSON Schema (an object or a boolean)' }];
  if (Buffer.byteLength(JSON.stringify(schema)) > MAX_SCHEMA_BYTES)
    return [{ location: 'body', field, message: `must be at most ${MAX_SCHEMA_BYTES} bytes of JSON` }];
  const remote = remoteRefs(schema);
  if (remote.length > 0)
    return remote.map((pointer) => ({
      location: 'body',
      field: `${field}${pointer}`,
      message: 'remote $ref is refused: only references inside the schema (#...) are allowed',
    }));
  const asyncAt = asyncKeywords(schema);
  if (asyncAt.length > 0)
    return asyncAt.map((pointer) => ({
      location: 'body',
      field: `${field}${pointer}`,
      message: '$async is refused: endpoint schemas are validated synchronously',
    }));
  try {
    validatorFor(`schema:${JSON.stringify(schema)}`, schema as object);
    return [];
  } catch (err) {
    const message =
      err instanceof SchemaCompileError && err.pattern !== undefined
        ? err.message
        : `is not a valid draft 2020-12 schema: ${(err as Error).message}`;
    return [{ location: 'body', field, message: message.slice(0, 500) }];
  }
}

/** Schemas that did not compile, by cache key (compiling them again would fail again, at the same cost). */
const failed = new LRUCache<string, SchemaCompileError>({ max: 1000 });

/**
 * The compiled validator of `schema`, cached under `cacheKey`.
 * @throws SchemaCompileError when ajv cannot compile it (an unsupported pattern: `pattern` set), or when it is
 *   asynchronous (`$async`).
 */
export function validatorFor(cacheKey: string, schema: object | boolean): ValidateFunction {
  let fn = compiled.get(cacheKey);
  if (!fn) {
    const known = failed.get(cacheKey);
    if (known) throw known;
    // A `$id` would register the schema in the shared ajv under that id: compile a copy without it.
    const copy = typeof schema === 'object' ? { ...schema, $id: undefined } : schema;
    if (typeof copy === 'object') delete (copy as Record<string, unknown>).$id;
    try {
      fn = ajv.compile(copy);
    } catch (err) {
      // Ajv keeps the schema it failed to compile: forget it (each attempt compiles a new copy).
      ajv.removeSchema(copy);
      const error =
        err instanceof UnsupportedPatternError
          ? new SchemaCompileError(err.message, err.pattern)
          : new SchemaCompileError((err as Error).message);
      failed.set(cacheKey, error);
      throw error;
    }
    if ((fn as { $async?: boolean }).$async) {
      ajv.removeSchema(copy);
      throw new SchemaCompileError('an asynchronous ($async) schema is not allowed');
    }
    compiled.set(cacheKey, fn);
  }
  return fn;
}

/**
 * The issues of a release's (or a draft's) two schemas as {@link schemaIssues} finds them, each field named
 * `<prefix>.inputSchema` / `<prefix>.outputSchema`: empty when both compile. Publication and rollback check them, so
 * no release whose schemas do not compile (saved before a rule existed) goes live.
 */
export function settingsSchemaIssues(settings: EndpointSettingsRecord, prefix: string): FieldIssue[] {
  return [
    ...schemaIssues(settings.inputSchema, `${prefix}.inputSchema`),
    ...schemaIssues(settings.outputSchema, `${prefix}.outputSchema`),
  ].map((issue) => ({ ...issue, location: '' }));
}

/** Field issues of ajv errors, under `prefix` (`body.input`). */
export function ajvIssues(
  errors: ErrorObject[] | null | undefined,
  location: string,
  prefix: string,
): FieldIssue[] {
  return (errors ?? []).map((e) => {
    const extra =
      e.keyword === 'required'
        ? `.${(e.params as { missingProperty: string }).missingProperty}`
        : e.keyword === 'additionalProperties'
          ? `.${(e.params as { additionalProperty: string }).additionalProperty}`
          : '';
    const path = e.instancePath.split('/').slice(1).join('.');
    return {
      location,
      field: [prefix, path].filter(Boolean).join('.') + extra,
      message: e.message ?? 'is invalid',
    };
  });
}

/**
 * Validates `value` against a release's schema.
 * @returns the issues, empty when valid.
 */
export function validateAgainst(
  cacheKey: string,
  schema: object | boolean,
  value: unknown,
  location: string,
  prefix: string,
): FieldIssue[] {
  const fn = validatorFor(cacheKey, schema);
  return fn(value) ? [] : ajvIssues(fn.errors, location, prefix);
}

/** The settings a draft takes (all optional but mode and target on create). */
export interface SettingsInput {
  invocationMode?: 'job' | 'conversation';
  targetType?: 'agent' | 'team' | 'orchestration_revision';
  targetId?: string;
  targetRevision?: number | null;
  inputSchema?: Record<string, unknown> | boolean;
  outputSchema?: Record<string, unknown> | boolean;
  authPolicy?: { type: 'api_key' | 'platform' };
  timeoutSeconds?: number;
  maxPayloadBytes?: number;
}

/**
 * Settings after applying `change` to `base` (a new draft: `base` undefined, defaults filled in). A schema left out
 * when the mode changes follows the mode's default.
 */
export function mergeSettings(
  base: EndpointSettingsRecord | undefined,
  change: SettingsInput & { invocationMode: 'job' | 'conversation'; targetType: string; targetId: string },
): EndpointSettingsRecord;
export function mergeSettings(base: EndpointSettingsRecord, change: SettingsInput): EndpointSettingsRecord;
export function mergeSettings(
  base: EndpointSettingsRecord | undefined,
  change: SettingsInput,
): EndpointSettingsRecord {
  const mode = change.invocationMode ?? base!.invocationMode;
  const modeChanged = base !== undefined && mode !== base.invocationMode;
  const targetType = change.targetType ?? base!.targetType;
  return {
    invocationMode: mode,
    targetType,
    targetId: change.targetId ?? base!.targetId,
    targetRevision:
      targetType !== 'orchestration_revision'
        ? null
        : change.targetRevision !== undefined
          ? change.targetRevision
          : (base?.targetRevision ?? null),
    inputSchema:
      change.inputSchema ??
      (base && !modeChanged
        ? base.inputSchema
        : mode === 'job'
          ? DEFAULT_JOB_INPUT_SCHEMA
          : DEFAULT_CONVERSATION_INPUT_SCHEMA),
    outputSchema: change.outputSchema ?? base?.outputSchema ?? true,
    authPolicy: change.authPolicy ?? base?.authPolicy ?? { type: 'api_key' },
    timeoutSeconds: change.timeoutSeconds ?? base?.timeoutSeconds ?? TIMEOUT_SECONDS.default,
    maxPayloadBytes: change.maxPayloadBytes ?? base?.maxPayloadBytes ?? MAX_PAYLOAD_BYTES.default,
  };
}
