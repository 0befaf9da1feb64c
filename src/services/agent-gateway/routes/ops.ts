/**
 * Operator routes (`/_ops`, Bearer OPERATOR_TOKEN): tenants, namespaces, users (create, read, disable, enable) and
 * their role bindings (grant, remove), execution environments, runtime hosts with their leases and claims, every
 * kind of credential (`/_ops/keys`, the platform's credential routes), and the runtime tick.
 */
import { Type } from '@sinclair/typebox';
import { eq } from 'drizzle-orm';
import { registerCredentialRoutes } from '../../../platform/credential-routes.ts';
import type { Db } from '../../../platform/database.ts';
import type { ServiceApp } from '../../../platform/http.ts';
import { StringEnum } from '../../../platform/schemas.ts';
import { notFound } from '../agent-gateway-errors.ts';
import { ErrorBody, RoleSchema, ScopeId, UserSchema } from '../agent-gateway-schemas.ts';
import { credentials } from '../db/schema.ts';
import type { HostProtocol } from '../host-protocol.ts';
import { type CredentialKind, type CredentialStore, type IdentityService, ROLES } from '../identity.ts';

const ops = { tags: ['operator'], security: [{ operatorToken: [] }] };
const errors = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody, 409: ErrorBody };
const KINDS = [
  'session',
  'host',
  'environment',
  'attempt',
  'internal',
] as const satisfies readonly CredentialKind[];

/** Registers the operator routes. */
export function registerOpsRoutes(
  app: ServiceApp,
  deps: {
    identity: IdentityService;
    hosts: HostProtocol;
    keys: CredentialStore;
    db: Db;
    tick: () => Promise<Record<string, number>>;
  },
): void {
  const Tenant = Type.Object({
    id: Type.String(),
    name: Type.String(),
    createdAt: Type.String({ format: 'date-time' }),
  });
  app.post(
    '/_ops/tenants',
    {
      schema: {
        ...ops,
        operationId: 'opsCreateTenant',
        summary: 'Create a tenant',
        body: Type.Object(
          { id: ScopeId, name: Type.String({ minLength: 1, maxLength: 200 }) },
          { additionalProperties: false, examples: [{ id: 'acme', name: 'Acme' }] },
        ),
        response: { 201: Tenant, ...errors },
      },
    },
    async (request, reply) => reply.code(201).send(await deps.identity.createTenant(request.body)),
  );

  app.post(
    '/_ops/tenants/:tenant/namespaces',
    {
      schema: {
        ...ops,
        operationId: 'opsCreateNamespace',
        summary: 'Create a namespace of a tenant',
        params: Type.Object({ tenant: ScopeId }),
        body: Type.Object(
          { id: ScopeId, name: Type.String({ minLength: 1, maxLength: 200 }) },
          { additionalProperties: false, examples: [{ id: 'prod', name: 'Production' }] },
        ),
        response: {
          201: Type.Object({
            tenant: Type.String(),
            id: Type.String(),
            name: Type.String(),
            createdAt: Type.String(),
          }),
          ...errors,
        },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(await deps.identity.createNamespace({ tenant: request.params.tenant, ...request.body })),
  );

  app.post(
    '/_ops/users',
    {
      schema: {
        ...ops,
        operationId: 'opsCreateUser',
        summary: 'Create a user (the password is stored as argon2id)',
        body: Type.Object(
          {
            username: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9._@-]+$' }),
            password: Type.String({ minLength: 12, maxLength: 1000 }),
            displayName: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
          },
          {
            additionalProperties: false,
            examples: [{ username: 'alice', password: 'a long passphrase here' }],
          },
        ),
        response: { 201: UserSchema, ...errors },
      },
    },
    async (request, reply) => reply.code(201).send(await deps.identity.createUser(request.body)),
  );

  app.put(
    '/_ops/role-bindings',
    {
      schema: {
        ...ops,
        operationId: 'opsGrantRole',
        summary:
          "Grant (or change) a user's role in a scope (`namespace` `*`: every namespace of the tenant)",
        body: Type.Object(
          {
            userId: Type.String({ minLength: 1, maxLength: 100 }),
            tenant: ScopeId,
            namespace: Type.Union([ScopeId, Type.Literal('*')]),
            role: StringEnum(ROLES),
          },
          {
            additionalProperties: false,
            examples: [
              {
                userId: 'usr_0123456789abcdef0123456789abcdef',
                tenant: 'demo',
                namespace: '*',
                role: 'editor',
              },
            ],
          },
        ),
        response: {
          200: Type.Object({
            userId: Type.String(),
            tenant: Type.String(),
            namespace: Type.String(),
            role: RoleSchema,
          }),
          ...errors,
        },
      },
    },
    async (request) => deps.identity.grant(request.body),
  );

  app.delete(
    '/_ops/role-bindings',
    {
      schema: {
        ...ops,
        operationId: 'opsRevokeRole',
        summary: "Remove a user's role binding in a scope (`namespace` `*`: the tenant-wide binding)",
        description: 'The role stops at once: every product request reads the bindings.',
        querystring: Type.Object(
          {
            userId: Type.String({ minLength: 1, maxLength: 100 }),
            tenant: ScopeId,
            namespace: Type.Union([ScopeId, Type.Literal('*')]),
          },
          { additionalProperties: false },
        ),
        response: { 204: Type.Null(), ...errors },
      },
    },
    async (request, reply) => {
      await deps.identity.revokeRole(request.query);
      return reply.code(204).send(null);
    },
  );

  const UserId = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });
  app.get(
    '/_ops/users/:id',
    {
      schema: {
        ...ops,
        operationId: 'opsGetUser',
        summary: 'A user and their role bindings',
        params: UserId,
        response: {
          200: Type.Object({
            user: UserSchema,
            roles: Type.Array(
              Type.Object({ tenant: Type.String(), namespace: Type.String(), role: RoleSchema }),
            ),
          }),
          ...errors,
        },
      },
    },
    async (request) => {
      const user = await deps.identity.findUser(request.params.id);
      if (!user) throw notFound('user', request.params.id);
      return { user, roles: await deps.identity.scopesOf(user.id) };
    },
  );

  app.post(
    '/_ops/users/:id/disable',
    {
      schema: {
        ...ops,
        operationId: 'opsDisableUser',
        summary: 'Disable a user: no sign-in, and every session token of the user stops at once',
        params: UserId,
        response: {
          200: Type.Object({ user: UserSchema, revokedTokens: Type.Integer() }),
          ...errors,
        },
      },
    },
    async (request) => {
      const { revokedTokens, ...user } = await deps.identity.disableUser(request.params.id);
      return { user, revokedTokens };
    },
  );

  app.post(
    '/_ops/users/:id/enable',
    {
      schema: {
        ...ops,
        operationId: 'opsEnableUser',
        summary: 'Enable a disabled user again (they sign in anew)',
        params: UserId,
        response: { 200: Type.Object({ user: UserSchema }), ...errors },
      },
    },
    async (request) => ({ user: await deps.identity.enableUser(request.params.id) }),
  );

  app.get(
    '/_ops/hosts',
    {
      schema: {
        ...ops,
        operationId: 'opsListHosts',
        summary: 'Runtime hosts with their lease and the executions they hold',
        description:
          '`live` is false once a host missed its lease (`leaseExpiresAt`); its claims go to the next host ' +
          'that claims in the environment. At most 500 hosts.',
        querystring: Type.Object(
          { environmentId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            hosts: Type.Array(
              Type.Object({
                id: Type.String(),
                environmentId: Type.String(),
                name: Type.String(),
                capabilities: Type.Array(Type.String()),
                registeredAt: Type.String({ format: 'date-time' }),
                lastHeartbeatAt: Type.String({ format: 'date-time' }),
                leaseExpiresAt: Type.String({ format: 'date-time' }),
                heartbeatIntervalSeconds: Type.Integer(),
                live: Type.Boolean(),
                claims: Type.Array(
                  Type.Object({
                    executionId: Type.String(),
                    attempt: Type.Integer(),
                    sessionId: Type.String(),
                    claimedAt: Type.String({ format: 'date-time' }),
                  }),
                ),
              }),
            ),
          }),
          401: ErrorBody,
          400: ErrorBody,
        },
      },
    },
    async (request) => ({ hosts: await deps.hosts.list(request.query.environmentId) }),
  );

  app.post(
    '/_ops/environments',
    {
      schema: {
        ...ops,
        operationId: 'opsCreateEnvironment',
        summary: 'Create an execution environment of a scope (remote runtime hosts work in one)',
        body: Type.Object(
          { tenant: ScopeId, namespace: ScopeId, name: Type.String({ minLength: 1, maxLength: 200 }) },
          {
            additionalProperties: false,
            examples: [{ tenant: 'demo', namespace: 'default', name: 'gpu-pool' }],
          },
        ),
        response: {
          201: Type.Object({
            id: Type.String(),
            tenant: Type.String(),
            namespace: Type.String(),
            name: Type.String(),
            createdAt: Type.String(),
          }),
          ...errors,
        },
      },
    },
    async (request, reply) => reply.code(201).send(await deps.identity.createEnvironment(request.body)),
  );

  registerCredentialRoutes(app, {
    store: deps.keys,
    db: deps.db,
    noun: 'credential',
    attributes: {
      kind: StringEnum(KINDS),
      userId: Type.Union([Type.String(), Type.Null()]),
      environmentId: Type.Union([Type.String(), Type.Null()]),
    },
    issueFields: {
      kind: StringEnum(['session', 'host', 'environment', 'internal'] as const),
      userId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
      environmentId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
      expiresInSeconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 31_536_000 })),
    },
    issue: (tx, body) => deps.identity.issueCredential(tx, body),
    filters: {
      fields: { kind: Type.Optional(StringEnum(KINDS)) },
      where: async (query) => (query.kind === undefined ? undefined : eq(credentials.kind, query.kind)),
    },
    errorBody: ErrorBody,
  });

  app.post(
    '/_ops/runtime/tick',
    {
      schema: {
        ...ops,
        operationId: 'opsRuntimeTick',
        summary: 'Run the minute sweep now: lost step claims re-queued, due timers and automations fired',
        response: { 200: Type.Record(Type.String(), Type.Integer()), 401: ErrorBody },
      },
    },
    async () => deps.tick(),
  );
}
