/**
 * Reading a running service through its OpenAPI document, for the tests generated from it (the authentication
 * contract, the fuzz suite): its operations, where its credentials go, and the demo credentials its first start
 * seeded.
 */
import assert from 'node:assert/strict';
import type { TestPlatform } from './platform.ts';

/** A JSON Schema as the OpenAPI document carries it. */
export type JsonSchema = Record<string, unknown>;

/**
 * A security scheme of the document (`http` bearer or basic, an API key in a header or the query, or `oauth2`, whose
 * tokens travel as bearer credentials).
 */
export type Scheme =
  | { type: 'http'; scheme: string }
  | { type: 'apiKey'; in: 'header' | 'query'; name: string };

/** An operation parameter (path, query or header). */
export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: JsonSchema;
}

/** One operation of the document, with what the tests read of it. */
export interface Operation {
  method: string;
  /** The OpenAPI path, parameters in braces (`/v1/parties/{partyId}`). */
  path: string;
  operationId: string;
  parameters: Parameter[];
  /** The JSON schema of the request body, when the operation takes one. */
  body: JsonSchema | undefined;
  bodyRequired: boolean;
  /** The first non-empty security requirement's scheme name, if any. */
  scheme: string | undefined;
  /** True when one of the requirements is `{}` (anonymous callers allowed). */
  anonymousAllowed: boolean;
  /** Response schemas by status code (`"400"`), as declared. */
  responses: Record<string, JsonSchema | undefined>;
  /** True when one of the declared responses is an HTML page (`text/html`), as a hosted page's errors are. */
  htmlResponses: boolean;
}

interface RawOperation {
  operationId?: string;
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema: JsonSchema }> };
  responses?: Record<string, { content?: Record<string, { schema: JsonSchema }> }>;
}

/** The parts of a service's OpenAPI 3.1 document read here. */
export interface OpenApi {
  paths: Record<string, Record<string, RawOperation>>;
  components: { securitySchemes: Record<string, Scheme> };
}

const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);

/** Every operation of `doc`. */
export function operationsOf(doc: OpenApi): Operation[] {
  const out: Operation[] = [];
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(operations)) {
      if (!METHODS.has(method)) continue;
      const requirements = op.security ?? [];
      const named = requirements.find((r) => Object.keys(r).length > 0);
      const responses: Record<string, JsonSchema | undefined> = {};
      for (const [status, response] of Object.entries(op.responses ?? {}))
        responses[status] = response.content?.['application/json']?.schema;
      out.push({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId ?? `${method} ${path}`,
        parameters: op.parameters ?? [],
        body: op.requestBody?.content['application/json']?.schema,
        bodyRequired: op.requestBody?.required === true,
        scheme: named ? Object.keys(named)[0] : undefined,
        anonymousAllowed: requirements.length === 0 || requirements.some((r) => Object.keys(r).length === 0),
        responses,
        htmlResponses: Object.values(op.responses ?? {}).some((r) => r.content?.['text/html'] !== undefined),
      });
    }
  }
  return out;
}

/** The OpenAPI document of a service of `platform`. */
export async function openApiOf(platform: TestPlatform, service: string): Promise<OpenApi> {
  const res = await platform.app(service).inject({ method: 'GET', url: '/openapi.json' });
  assert.equal(res.statusCode, 200);
  return res.json() as OpenApi;
}

/**
 * The service's error body schema: what its `POST /_ops/keys` declares for a 400 (every service registers the
 * platform's key routes, answered in the service's default error format).
 */
export function errorBodySchemaOf(doc: OpenApi): JsonSchema {
  const schema = doc.paths['/_ops/keys']?.post?.responses?.['400']?.content?.['application/json']?.schema;
  assert.ok(schema, 'POST /_ops/keys declares its 400 body');
  return schema;
}

/** True for an `http` `basic` scheme (its credential is `user:password`). */
export function isBasicScheme(scheme: Scheme): boolean {
  return scheme.type === 'http' && scheme.scheme.toLowerCase() === 'basic';
}

/**
 * `url` and headers carrying `value` where `scheme` says (an `undefined` value sends nothing): `Authorization: Basic`
 * with `value` (`user:password`) in base64 for a basic scheme, `Authorization: Bearer` for other `http` schemes.
 */
export function withCredential(scheme: Scheme, url: string, value: string | undefined) {
  if (value === undefined) return { url, headers: {} as Record<string, string> };
  if (isBasicScheme(scheme))
    return { url, headers: { authorization: `Basic ${Buffer.from(value, 'utf8').toString('base64')}` } };
  if (scheme.type === 'http') return { url, headers: { authorization: `Bearer ${value}` } };
  if (scheme.in === 'query') {
    const sep = url.includes('?') ? '&' : '?';
    return { url: `${url}${sep}${scheme.name}=${encodeURIComponent(value)}`, headers: {} };
  }
  return { url, headers: { [scheme.name]: value } };
}

/**
 * The plaintext keys a first start seeded (credentials whose last four characters are a listed key's hint), each with
 * the operator route that revokes it. Keys are listed by `GET /_ops/keys` and by any other operator listing
 * `GET /_ops/<name>-keys` of the service's OpenAPI document (a service with a second key table, such as the agent
 * gateway's endpoint credentials); each revokes at `<listing>/{id}/revoke`.
 */
export async function seededKeys(
  platform: TestPlatform,
  name: string,
): Promise<{ key: string; id: number; revokeUrl: string }[]> {
  const app = platform.app(name);
  const doc = (await app.inject({ url: '/openapi.json' })).json() as {
    paths: Record<string, { get?: unknown }>;
  };
  const listings = [
    '/_ops/keys',
    ...Object.keys(doc.paths).filter((p) => /^\/_ops\/[a-z-]+-keys$/.test(p) && doc.paths[p]!.get),
  ];
  const out: { key: string; id: number; revokeUrl: string }[] = [];
  for (const listing of listings) {
    const listed = await app.inject({
      method: 'GET',
      url: listing,
      headers: { authorization: platform.operatorAuth },
    });
    assert.equal(listed.statusCode, 200, `${name}: GET ${listing} ${listed.body}`);
    const records = (listed.json() as { keys: { id: number; hint: string }[] }).keys;
    for (const value of Object.values(platform.credentials(name))) {
      if (typeof value !== 'string' || value.length < 40) continue;
      const record = records.find((r) => r.hint === value.slice(-4));
      if (record) out.push({ key: value, id: record.id, revokeUrl: `${listing}/${record.id}/revoke` });
    }
  }
  return out;
}

/**
 * The `user:password` credentials of basic schemes a first start seeded: each pair of seeded values `<name>Id` and
 * `<name>Secret` (an OAuth client's `oauthClientId` and `oauthClientSecret`) whose secret is one of `keys` (so the
 * operator key routes revoke it).
 */
export function seededBasicCredentials(
  platform: TestPlatform,
  name: string,
  keys: readonly { key: string; id: number }[],
): { value: string; id: number }[] {
  const seeded = platform.credentials(name);
  const out: { value: string; id: number }[] = [];
  for (const [field, secret] of Object.entries(seeded)) {
    const base = /^(.*)Secret$/.exec(field)?.[1];
    const user = base === undefined ? undefined : seeded[`${base}Id`];
    const key = keys.find((k) => k.key === secret);
    if (typeof user === 'string' && key) out.push({ value: `${user}:${key.key}`, id: key.id });
  }
  return out;
}
