/**
 * Endpoint management (spec 002 section E: `GET, POST /api/v1/endpoints`): drafts, publication with `version`,
 * releases and their history, rollback, disable and enable, readiness, endpoint API keys, and the platform bearer
 * tokens of a scope. User bearer token: viewers read, editors change endpoints, admins handle keys and tokens.
 */
import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../../platform/http.ts';
import { Int4, StringEnum } from '../../../platform/schemas.ts';
import {
  ErrorBody,
  IdParam,
  ListOf,
  PageQuery,
  productErrors,
  ScopeFields,
  ScopeHeaders,
  Version,
} from '../agent-gateway-schemas.ts';
import {
  type EndpointKeyService,
  type EndpointService,
  KEY_EXPIRY_SECONDS,
  MAX_PAYLOAD_BYTES,
  OVERLAP_SECONDS,
  SLUG_PATTERN,
  TIMEOUT_SECONDS,
} from '../endpoints/index.ts';
import { type GatewayRouteContext, SECURITY } from './context.ts';
import { listAnswer, pageOf } from './paging.ts';

const tags = ['endpoints'];
const security = SECURITY.session;

const JsonSchemaDoc = Type.Union([Type.Object({}, { additionalProperties: true }), Type.Boolean()], {
  description:
    'A JSON Schema (draft 2020-12). Only local references (`#...`) are allowed: a remote `$ref` is refused.',
});
const Mode = StringEnum(['job', 'conversation'] as const);
const TargetType = StringEnum(['agent', 'team', 'orchestration_revision'] as const);
const AuthPolicy = Type.Object(
  { type: StringEnum(['api_key', 'platform'] as const) },
  { additionalProperties: false },
);
const settingsFields = {
  invocationMode: Mode,
  targetType: TargetType,
  targetId: Type.String({ minLength: 1, maxLength: 100 }),
  targetRevision: Type.Optional(
    Type.Union([
      Int4({ minimum: 1, description: 'A workflow revision (default: the published one at publication).' }),
      Type.Null(),
    ]),
  ),
  inputSchema: Type.Optional(JsonSchemaDoc),
  outputSchema: Type.Optional(JsonSchemaDoc),
  authPolicy: Type.Optional(AuthPolicy),
  timeoutSeconds: Type.Optional(
    Type.Integer({ minimum: TIMEOUT_SECONDS.min, maximum: TIMEOUT_SECONDS.max, description: 'Default 300.' }),
  ),
  maxPayloadBytes: Type.Optional(
    Type.Integer({
      minimum: MAX_PAYLOAD_BYTES.min,
      maximum: MAX_PAYLOAD_BYTES.max,
      description: 'The largest `input` (job) or `message` (turn), in bytes of UTF-8 JSON. Default 65,536.',
    }),
  ),
};

const SettingsSchema = Type.Object({
  invocationMode: Mode,
  targetType: TargetType,
  targetId: Type.String(),
  targetRevision: Type.Union([Type.Integer(), Type.Null()]),
  inputSchema: Type.Unknown(),
  outputSchema: Type.Unknown(),
  authPolicy: Type.Object({ type: Type.String() }),
  timeoutSeconds: Type.Integer(),
  maxPayloadBytes: Type.Integer(),
});
const ReleaseSchema = Type.Object({
  id: Type.String(),
  number: Type.Integer(),
  settings: SettingsSchema,
  publishedBy: Type.Union([Type.String(), Type.Null()]),
  publishedAt: Type.String({ format: 'date-time' }),
});
const EndpointSchema = Type.Object({
  id: Type.String(),
  tenant: Type.String(),
  namespace: Type.String(),
  slug: Type.String(),
  status: StringEnum(['draft', 'published', 'disabled'] as const),
  version: Type.Integer(),
  draft: SettingsSchema,
  currentRelease: Type.Union([ReleaseSchema, Type.Null()]),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});
const KeySchema = Type.Object({
  id: Type.Integer(),
  hint: Type.String(),
  label: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String({ format: 'date-time' }),
  expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  rotatedFrom: Type.Union([Type.Integer(), Type.Null()]),
});
const EndpointAnswer = Type.Object({ endpoint: EndpointSchema });
const VersionBody = Type.Object(
  { ...ScopeFields, version: Version },
  { additionalProperties: false, examples: [{ version: 1 }] },
);
const KeyParams = Type.Object({ id: IdParam.properties.id, keyId: Int4({ minimum: 1 }) });
const Expiry = Type.Optional(
  Type.Integer({
    minimum: KEY_EXPIRY_SECONDS.min,
    maximum: KEY_EXPIRY_SECONDS.max,
    description: 'Seconds until the credential stops working (default: never).',
  }),
);
const Label = Type.Optional(Type.String({ minLength: 1, maxLength: 200 }));

/** Registers the endpoint management routes. */
export function registerEndpointRoutes(
  app: ServiceApp,
  ctx: GatewayRouteContext,
  deps: { endpoints: EndpointService; keys: EndpointKeyService },
): void {
  const { endpoints, keys } = deps;

  app.get(
    '/api/v1/endpoints',
    {
      ...ctx.user('viewer'),
      schema: {
        operationId: 'listEndpoints',
        tags,
        summary: 'The endpoints of the scope, by slug',
        security,
        headers: ScopeHeaders,
        querystring: Type.Object({ ...PageQuery, ...ScopeFields }, { additionalProperties: false }),
        response: { 200: ListOf('endpoints', EndpointSchema), ...productErrors },
      },
    },
    async (request) => {
      const caller = ctx.caller(request);
      const page = pageOf(request.query);
      return listAnswer('endpoints', page, await endpoints.list(caller.scope, page));
    },
  );

  app.post(
    '/api/v1/endpoints',
    {
      ...ctx.user('editor'),
      schema: {
        operationId: 'createEndpoint',
        tags,
        summary: 'Create a draft endpoint (not live until published)',
        description:
          'Settings: `slug` (unique in the scope, `[a-z0-9-]`, 1-63), `invocationMode` `job` | `conversation`, the ' +
          'target (`targetType` `agent` | `team` | `orchestration_revision`, `targetId`, `targetRevision`), ' +
          '`inputSchema` and `outputSchema` (JSON Schema 2020-12; a remote `$ref` is refused), `authPolicy.type` ' +
          '`api_key` | `platform`, `timeoutSeconds` (1-3600, default 300), `maxPayloadBytes` (1-1,048,576, default ' +
          "65,536). A job's `input` defaults to any object, a conversation `message` to any string.",
        security,
        headers: ScopeHeaders,
        body: Type.Object(
          {
            ...ScopeFields,
            slug: Type.String({ pattern: SLUG_PATTERN, minLength: 1, maxLength: 63 }),
            ...settingsFields,
          },
          {
            additionalProperties: false,
            examples: [
              {
                slug: 'summarize',
                invocationMode: 'job',
                targetType: 'agent',
                targetId: 'agt_0123456789abcdef0123456789abcdef',
                inputSchema: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
              },
            ],
          },
        ),
        response: { 201: EndpointAnswer, ...productErrors },
      },
    },
    async (request, reply) => {
      const caller = ctx.caller(request);
      const { tenant: _t, namespace: _n, ...input } = request.body;
      return reply.code(201).send({ endpoint: await endpoints.create(caller.scope, caller.userId, input) });
    },
  );

  app.get(
    '/api/v1/endpoints/:id',
    {
      ...ctx.user('viewer'),
      schema: {
        operationId: 'getEndpoint',
        tags,
        summary: 'One endpoint: its draft and its current release',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        response: { 200: EndpointAnswer, ...productErrors },
      },
    },
    async (request) => ({ endpoint: await endpoints.get(ctx.caller(request).scope, request.params.id) }),
  );

  app.patch(
    '/api/v1/endpoints/:id',
    {
      ...ctx.user('editor'),
      schema: {
        operationId: 'updateEndpointDraft',
        tags,
        summary: 'Change the draft settings at `version` (the live release changes at the next publication)',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        body: Type.Object(
          {
            ...ScopeFields,
            version: Version,
            invocationMode: Type.Optional(Mode),
            targetType: Type.Optional(TargetType),
            targetId: Type.Optional(settingsFields.targetId),
            targetRevision: settingsFields.targetRevision,
            inputSchema: settingsFields.inputSchema,
            outputSchema: settingsFields.outputSchema,
            authPolicy: settingsFields.authPolicy,
            timeoutSeconds: settingsFields.timeoutSeconds,
            maxPayloadBytes: settingsFields.maxPayloadBytes,
          },
          { additionalProperties: false, examples: [{ version: 1, timeoutSeconds: 60 }] },
        ),
        response: { 200: EndpointAnswer, ...productErrors },
      },
    },
    async (request) => {
      const { tenant: _t, namespace: _n, ...input } = request.body;
      return { endpoint: await endpoints.updateDraft(ctx.caller(request).scope, request.params.id, input) };
    },
  );

  app.post(
    '/api/v1/endpoints/:id/publish',
    {
      ...ctx.user('editor'),
      schema: {
        operationId: 'publishEndpoint',
        tags,
        summary: 'Publish the draft at `version` as a new immutable release (the endpoint goes live on it)',
        description:
          'Runs the readiness check first (409 `not_ready` with `details.checks`); a draft schema that does not ' +
          'compile (a `pattern` RE2 does not support) is 400 `endpoint_schema_unsupported`. A workflow target is pinned to ' +
          'its revision. Earlier releases are kept (rollback).',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        body: VersionBody,
        response: { 200: EndpointAnswer, ...productErrors },
      },
    },
    async (request) => {
      const caller = ctx.caller(request);
      return {
        endpoint: await endpoints.publish(
          caller.scope,
          request.params.id,
          caller.userId,
          request.body.version,
        ),
      };
    },
  );

  app.post(
    '/api/v1/endpoints/:id/rollback',
    {
      ...ctx.user('editor'),
      schema: {
        operationId: 'rollbackEndpoint',
        tags,
        summary: 'Point the endpoint at an earlier release (restores nothing else)',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        body: Type.Object(
          { ...ScopeFields, version: Version, releaseNumber: Int4({ minimum: 1 }) },
          { additionalProperties: false, examples: [{ version: 3, releaseNumber: 1 }] },
        ),
        response: { 200: EndpointAnswer, ...productErrors },
      },
    },
    async (request) => {
      const caller = ctx.caller(request);
      return {
        endpoint: await endpoints.rollback(caller.scope, request.params.id, caller.userId, request.body),
      };
    },
  );

  for (const [action, enabled] of [
    ['disable', false],
    ['enable', true],
  ] as const)
    app.post(
      `/api/v1/endpoints/:id/${action}`,
      {
        ...ctx.user('editor'),
        schema: {
          operationId: `${action}Endpoint`,
          tags,
          summary: enabled
            ? 'Enable a disabled endpoint again'
            : 'Disable the endpoint: no new invocations (those accepted finish)',
          security,
          headers: ScopeHeaders,
          params: IdParam,
          body: VersionBody,
          response: { 200: EndpointAnswer, ...productErrors },
        },
      },
      async (request) => {
        const caller = ctx.caller(request);
        return {
          endpoint: await endpoints.setEnabled(
            caller.scope,
            request.params.id,
            caller.userId,
            request.body.version,
            enabled,
          ),
        };
      },
    );

  app.get(
    '/api/v1/endpoints/:id/releases',
    {
      ...ctx.user('viewer'),
      schema: {
        operationId: 'listEndpointReleases',
        tags,
        summary: 'The release history: every release (newest first) and every move (oldest first)',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        response: {
          200: Type.Object({
            currentReleaseId: Type.Union([Type.String(), Type.Null()]),
            releases: Type.Array(ReleaseSchema),
            history: Type.Array(
              Type.Object({
                action: Type.String(),
                releaseNumber: Type.Union([Type.Integer(), Type.Null()]),
                userId: Type.Union([Type.String(), Type.Null()]),
                at: Type.String({ format: 'date-time' }),
              }),
            ),
          }),
          ...productErrors,
        },
      },
    },
    async (request) => endpoints.releases(ctx.caller(request).scope, request.params.id),
  );

  app.get(
    '/api/v1/endpoints/:id/readiness',
    {
      ...ctx.user('viewer'),
      schema: {
        operationId: 'getEndpointReadiness',
        tags,
        summary: 'The readiness check: live, target present, mode fits the target',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        response: {
          200: Type.Object({
            ready: Type.Boolean(),
            checks: Type.Array(
              Type.Object({ name: Type.String(), ok: Type.Boolean(), message: Type.String() }),
            ),
          }),
          ...productErrors,
        },
      },
    },
    async (request) => endpoints.readiness(ctx.caller(request).scope, request.params.id),
  );

  const keyTags = ['endpoint keys'];
  app.get(
    '/api/v1/endpoints/:id/keys',
    {
      ...ctx.user('admin'),
      schema: {
        operationId: 'listEndpointKeys',
        tags: keyTags,
        summary: 'The API keys of an endpoint (never the secrets)',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        response: { 200: Type.Object({ apiKeys: Type.Array(KeySchema) }), ...productErrors },
      },
    },
    async (request) => ({ apiKeys: await keys.listKeys(ctx.caller(request).scope, request.params.id) }),
  );

  app.post(
    '/api/v1/endpoints/:id/keys',
    {
      ...ctx.user('admin'),
      schema: {
        operationId: 'issueEndpointKey',
        tags: keyTags,
        summary: 'Issue an API key of this endpoint (`X-API-Key`), shown once',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        body: Type.Object(
          { ...ScopeFields, label: Label, expiresInSeconds: Expiry },
          { additionalProperties: false, examples: [{ label: 'billing app' }] },
        ),
        response: { 201: Type.Object({ key: Type.String(), apiKey: KeySchema }), ...productErrors },
      },
    },
    async (request, reply) => {
      const caller = ctx.caller(request);
      return reply
        .code(201)
        .send(await keys.issueKey(caller.scope, request.params.id, caller.userId, request.body));
    },
  );

  app.post(
    '/api/v1/endpoints/:id/keys/:keyId/rotate',
    {
      ...ctx.user('admin'),
      schema: {
        operationId: 'rotateEndpointKey',
        tags: keyTags,
        summary: 'Rotate a key: a new key now, the old one valid for the overlap (both work meanwhile)',
        description:
          `\`overlapSeconds\` ${OVERLAP_SECONDS.min}-${OVERLAP_SECONDS.max}, default ${OVERLAP_SECONDS.default}. The new ` +
          "key expires after `expiresInSeconds`, else after the old key's own period, else never. A key is rotated " +
          'once: 409 `invalid_state` for a revoked, expired or already rotated key.',
        security,
        headers: ScopeHeaders,
        params: KeyParams,
        body: Type.Object(
          {
            ...ScopeFields,
            overlapSeconds: Type.Optional(
              Type.Integer({ minimum: OVERLAP_SECONDS.min, maximum: OVERLAP_SECONDS.max }),
            ),
            expiresInSeconds: Expiry,
          },
          { additionalProperties: false, examples: [{ overlapSeconds: 3600 }] },
        ),
        response: {
          201: Type.Object({ key: Type.String(), apiKey: KeySchema, previous: KeySchema }),
          ...productErrors,
        },
      },
    },
    async (request, reply) => {
      const caller = ctx.caller(request);
      return reply
        .code(201)
        .send(
          await keys.rotateKey(
            caller.scope,
            request.params.id,
            request.params.keyId,
            caller.userId,
            request.body,
          ),
        );
    },
  );

  app.delete(
    '/api/v1/endpoints/:id/keys/:keyId',
    {
      ...ctx.user('admin'),
      schema: {
        operationId: 'revokeEndpointKey',
        tags: keyTags,
        summary: 'Revoke a key at once (on every instance)',
        security,
        headers: ScopeHeaders,
        params: KeyParams,
        response: { 200: Type.Object({ apiKey: KeySchema }), ...productErrors },
      },
    },
    async (request) => ({
      apiKey: await keys.revokeKey(ctx.caller(request).scope, request.params.id, request.params.keyId),
    }),
  );

  const opsRecord = Type.Object({
    id: Type.Integer(),
    hint: Type.String(),
    label: Type.Union([Type.String(), Type.Null()]),
    createdAt: Type.String({ format: 'date-time' }),
    revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    expiresAt: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
    kind: StringEnum(['endpoint_key', 'platform_token'] as const),
    endpointId: Type.Union([Type.String(), Type.Null()]),
    rotatedFrom: Type.Union([Type.Integer(), Type.Null()]),
  });
  const ops = { tags: ['operator'], security: [{ operatorToken: [] }] };
  app.get(
    '/_ops/endpoint-keys',
    {
      schema: {
        ...ops,
        operationId: 'opsListEndpointKeys',
        summary: 'List endpoint API keys and platform tokens (never the secrets)',
        querystring: Type.Object(
          { include_revoked: Type.Optional(Type.Boolean()) },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ keys: Type.Array(opsRecord) }), 400: ErrorBody, 401: ErrorBody },
      },
    },
    async (request) => ({ keys: await keys.listAll(request.query.include_revoked === true) }),
  );
  app.post(
    '/_ops/endpoint-keys/:id/revoke',
    {
      schema: {
        ...ops,
        operationId: 'opsRevokeEndpointKey',
        summary: 'Revoke an endpoint API key or platform token (effective on every instance at once)',
        params: Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) }),
        response: { 200: opsRecord, 400: ErrorBody, 401: ErrorBody, 404: ErrorBody },
      },
    },
    async (request) => keys.revokeAny(request.params.id),
  );

  app.post(
    '/api/v1/platform-tokens',
    {
      ...ctx.user('admin'),
      schema: {
        operationId: 'issuePlatformToken',
        tags: keyTags,
        summary: 'Issue a platform bearer token of the scope (invokes its `platform` endpoints), shown once',
        security,
        headers: ScopeHeaders,
        body: Type.Object(
          { ...ScopeFields, label: Label, expiresInSeconds: Expiry },
          { additionalProperties: false, examples: [{ label: 'internal portal' }] },
        ),
        response: { 201: Type.Object({ token: Type.String(), platformToken: KeySchema }), ...productErrors },
      },
    },
    async (request, reply) => {
      const caller = ctx.caller(request);
      return reply.code(201).send(await keys.issuePlatformToken(caller.scope, caller.userId, request.body));
    },
  );

  app.delete(
    '/api/v1/platform-tokens/:keyId',
    {
      ...ctx.user('admin'),
      schema: {
        operationId: 'revokePlatformToken',
        tags: keyTags,
        summary: 'Revoke a platform token of the scope',
        security,
        headers: ScopeHeaders,
        params: Type.Object({ keyId: Int4({ minimum: 1 }) }),
        response: { 200: Type.Object({ platformToken: KeySchema }), ...productErrors },
      },
    },
    async (request) => ({
      platformToken: await keys.revokePlatformToken(ctx.caller(request).scope, request.params.keyId),
    }),
  );
}
