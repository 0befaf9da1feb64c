/**
 * The operator routes of a service's credentials, one verb and one shape in every service (tag `operator`, Bearer
 * OPERATOR_TOKEN checked by the platform):
 *
 * - `POST /_ops/keys` `{label?, ...service fields}` -> 201 `{id, hint, label, createdAt, revokedAt, ...attributes, key}`
 *   (the key is in this answer only; the database keeps its SHA-256);
 * - `GET /_ops/keys?include_revoked=true&<service filters>` -> 200 `{keys: [record...]}`, newest first (active keys
 *   only unless `include_revoked=true`);
 * - `POST /_ops/keys/{id}/revoke` -> 200 record (revoking a revoked key answers it again; effective on every instance
 *   at once); 404 `not_found` for an unknown id.
 */
import { type Static, type TObject, type TProperties, type TSchema, Type } from '@sinclair/typebox';
import type { SQL } from 'drizzle-orm';
import type { FastifyRequest } from 'fastify';
import type { CredentialStore, CredentialTable, IssuedCredential } from './credentials.ts';
import type { Db, Tx } from './database.ts';
import { platformError } from './errors.ts';
import type { ServiceApp } from './http.ts';

/** The fields every credential record has, in `GET /_ops/keys` and the other key routes. */
const RECORD_FIELDS = {
  id: Type.Integer({ minimum: 1 }),
  hint: Type.String({ description: 'The last four characters of the key.' }),
  label: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String({ format: 'date-time' }),
  revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  expiresAt: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
};

/** How a service plugs its credential store into the operator routes. */
export interface CredentialRoutesOptions<
  T extends CredentialTable,
  P,
  A,
  B extends TProperties,
  F extends TProperties,
> {
  store: CredentialStore<T, P, A>;
  db: Db;
  /** TypeBox properties of the service's attributes in a record (owner, tier, permission, rate limit). */
  attributes: TProperties;
  /** TypeBox properties of the service's fields of an issue request, beside `label`. */
  issueFields: B;
  /**
   * Issues the key described by a validated request body inside `tx` (usually `store.issue(tx, ...)` after checking
   * the owner exists).
   * @throws ApiError (in the service's own codes) for an owner that does not exist.
   */
  issue(tx: Tx, body: Static<TObject<B>> & { label?: string }): Promise<IssuedCredential<T, A>>;
  /** Filters of `GET /_ops/keys` beside `include_revoked`, and the SQL condition they make (may throw a 404). */
  filters?: { fields: F; where(query: Static<TObject<F>>): Promise<SQL | undefined> };
  /** The service's error body schema (for the OpenAPI document). */
  errorBody: TSchema;
  /**
   * Fields added to every success body, with their schema (entity-events adds its `response_context`, which every
   * answer of that service carries).
   */
  envelope?: { properties: TProperties; fields(request: FastifyRequest): object };
  /** What the service calls its keys in summaries (default "API key"). */
  noun?: string;
}

/** Registers `POST /_ops/keys`, `GET /_ops/keys` and `POST /_ops/keys/{id}/revoke` for `options.store`. */
export function registerCredentialRoutes<
  T extends CredentialTable,
  P,
  A,
  B extends TProperties,
  F extends TProperties,
>(app: ServiceApp, options: CredentialRoutesOptions<T, P, A, B, F>): void {
  const noun = options.noun ?? 'API key';
  const envelope = options.envelope;
  const present = (body: object, request: FastifyRequest) =>
    envelope ? { ...body, ...envelope.fields(request) } : body;
  const record = Type.Object({ ...RECORD_FIELDS, ...options.attributes });
  const withEnvelope = (properties: TProperties) => Type.Object({ ...properties, ...envelope?.properties });
  const issued = withEnvelope({
    ...RECORD_FIELDS,
    ...options.attributes,
    key: Type.String({ description: 'The key itself: shown in this answer only.' }),
  });
  const ops = { tags: ['operator'], security: [{ operatorToken: [] }] };
  const errors = { 400: options.errorBody, 401: options.errorBody, 404: options.errorBody };
  const notFound = (id: number) => platformError('not_found', `No ${noun} with id ${id}.`);

  app.post(
    '/_ops/keys',
    {
      schema: {
        ...ops,
        operationId: 'opsIssueKey',
        summary: `Issue ${article(noun)} ${noun} (shown once)`,
        description: 'The key is in the answer once (`Cache-Control: no-store`); only its SHA-256 is stored.',
        body: Type.Object(
          { label: Type.Optional(Type.String({ maxLength: 200 })), ...options.issueFields },
          { additionalProperties: false },
        ),
        response: { 201: issued, ...errors },
      },
    },
    async (request, reply) => {
      const body = request.body as Static<TObject<B>> & { label?: string };
      const result = await options.db.transaction((tx) => options.issue(tx, body));
      // A key shown once is kept by no cache.
      reply.header('cache-control', 'no-store');
      // The schema is built from the options, so the reply cannot be typed by it here.
      return reply.code(201).send(present({ ...result.record, key: result.key }, request) as never);
    },
  );

  app.get(
    '/_ops/keys',
    {
      schema: {
        ...ops,
        operationId: 'opsListKeys',
        summary: `List ${noun}s (never the keys themselves)`,
        description: `Newest first; revoked ${noun}s only with \`include_revoked=true\`.`,
        querystring: Type.Object(
          { include_revoked: Type.Optional(Type.Boolean()), ...(options.filters?.fields ?? {}) },
          { additionalProperties: false },
        ),
        response: { 200: withEnvelope({ keys: Type.Array(record) }), ...errors },
      },
    },
    async (request) => {
      const query = request.query as { include_revoked?: boolean } & Static<TObject<F>>;
      const where = options.filters ? await options.filters.where(query) : undefined;
      const rows = await options.store.list({ where, includeRevoked: query.include_revoked === true });
      const keys = await Promise.all(rows.map((row) => options.store.record(row)));
      return present({ keys }, request);
    },
  );

  app.post(
    '/_ops/keys/:id/revoke',
    {
      schema: {
        ...ops,
        operationId: 'opsRevokeKey',
        summary: `Revoke ${article(noun)} ${noun} (effective on every instance at once)`,
        params: Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) }),
        response: { 200: withEnvelope(record.properties), ...errors },
      },
    },
    async (request) => {
      const { id } = request.params as { id: number };
      const row = await options.store.revoke(id);
      if (!row) throw notFound(id);
      return present(await options.store.record(row), request);
    },
  );
}

function article(noun: string): string {
  return /^[aeiou]/i.test(noun) ? 'an' : 'a';
}
