/**
 * M2M applications (`/api/v2/m2m-applications`: organization administrators, interactive session), the
 * client-credentials grant of the token endpoint ({@link clientCredentialsGrant}; the endpoint itself and the RFC 8414
 * metadata are served by `mcp-oauth.ts`, one authorization server for both) and the JWKS (RFC 7517). The OAuth
 * answers are in OAuth's own formats (RFC 6749 section 5), which OAuth clients read, not in the REST envelope.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { basicCredentials } from '../../../platform/auth.ts';
import type { ServiceApp } from '../../../platform/http.ts';
import { StringEnum } from '../../../platform/schemas.ts';
import { M2M_PERMISSIONS } from '../credentials/index.ts';
import { Envelope, ErrorEnvelope, idErrors, security } from '../media-buying-schemas.ts';
import type { MediaBuyingRouteContext } from './context.ts';

const Permission = StringEnum(M2M_PERMISSIONS);

const Application = Type.Object({
  id: Type.String({ description: '`m2m_` + 32 hex' }),
  name: Type.String(),
  clientId: Type.String(),
  permissions: Type.Array(Permission),
  secrets: Type.Array(
    Type.Object({
      id: Type.Integer(),
      hint: Type.String({ description: 'The last four characters of the secret.' }),
      createdAt: Type.String({ format: 'date-time' }),
      expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    }),
  ),
  createdAt: Type.String({ format: 'date-time' }),
});

const Created = Type.Object({
  application: Application,
  clientSecret: Type.String({ description: 'Shown in this answer only.' }),
  tokenEndpoint: Type.String(),
  resource: Type.String({ description: 'The resource indicator (RFC 8707) to request tokens for.' }),
});

const AppParams = Type.Object({ applicationId: Type.String({ minLength: 1, maxLength: 64 }) });

/** Registers the M2M application routes and the OAuth endpoints. */
export function registerM2mRoutes(app: ServiceApp, ctx: MediaBuyingRouteContext): void {
  const { db, credentials, organizations } = ctx.deps;
  const m2m = credentials.m2m;
  const admin = ctx.authenticated({ admin: true });
  const actor = (request: Parameters<typeof ctx.caller>[0]) => {
    const caller = ctx.caller(request);
    return { caller, actor: { userId: caller.user!.id, kind: caller.kind } };
  };

  app.post(
    '/api/v2/m2m-applications',
    {
      onRequest: admin,
      schema: {
        operationId: 'createM2mApplication',
        tags: ['credentials'],
        summary: 'Create an M2M application (client secret shown once)',
        description:
          'For a backend that needs OAuth client credentials. The answer holds the client secret (this once), the ' +
          'token endpoint and the resource indicator. Tokens live 10 minutes.',
        security,
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 100 }),
            permissions: Type.Optional(Type.Array(Permission, { minItems: 1, maxItems: 4 })),
          },
          {
            additionalProperties: false,
            examples: [{ name: 'reporting backend', permissions: ['platform:read'] }],
          },
        ),
        response: { 201: Envelope(Created), ...idErrors },
      },
    },
    async (request, reply) => {
      const { caller, actor: who } = actor(request);
      const created = await db.transaction(async (tx) => {
        const result = await m2m.create(tx, {
          organizationId: caller.organization!.id,
          name: request.body.name,
          permissions: request.body.permissions ?? ['platform:read'],
          createdByUserId: caller.user!.id,
        });
        await organizations.audit(
          tx,
          caller.organization!.id,
          who,
          'm2m_application.created',
          'm2m_application',
          result.application.id,
          {},
        );
        return result;
      });
      return reply
        .code(201)
        .send(ctx.ok({ ...created, tokenEndpoint: m2m.tokenEndpoint, resource: m2m.resource }));
    },
  );

  app.get(
    '/api/v2/m2m-applications',
    {
      onRequest: admin,
      schema: {
        operationId: 'listM2mApplications',
        tags: ['credentials'],
        summary: "The organization's M2M applications",
        security,
        response: { 200: Envelope(Type.Array(Application)), ...idErrors },
      },
    },
    async (request) => ctx.ok(await m2m.list(ctx.caller(request).organization!.id)),
  );

  app.get(
    '/api/v2/m2m-applications/:applicationId',
    {
      onRequest: admin,
      schema: {
        operationId: 'getM2mApplication',
        tags: ['credentials'],
        summary: 'One M2M application',
        security,
        params: AppParams,
        response: { 200: Envelope(Application), ...idErrors },
      },
    },
    async (request) =>
      ctx.ok(await m2m.get(ctx.caller(request).organization!.id, request.params.applicationId)),
  );

  app.patch(
    '/api/v2/m2m-applications/:applicationId',
    {
      onRequest: admin,
      schema: {
        operationId: 'updateM2mApplication',
        tags: ['credentials'],
        summary: 'Rename an M2M application or change its permissions',
        security,
        params: AppParams,
        body: Type.Object(
          {
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
            permissions: Type.Optional(Type.Array(Permission, { minItems: 1, maxItems: 4 })),
          },
          { additionalProperties: false, minProperties: 1, examples: [{ name: 'nightly reports' }] },
        ),
        response: { 200: Envelope(Application), ...idErrors },
      },
    },
    async (request) => {
      const { caller, actor: who } = actor(request);
      return ctx.ok(
        await db.transaction(async (tx) => {
          const updated = await m2m.update(
            tx,
            caller.organization!.id,
            request.params.applicationId,
            request.body,
          );
          await organizations.audit(
            tx,
            caller.organization!.id,
            who,
            'm2m_application.updated',
            'm2m_application',
            updated.id,
            {},
          );
          return updated;
        }),
      );
    },
  );

  app.delete(
    '/api/v2/m2m-applications/:applicationId',
    {
      onRequest: admin,
      schema: {
        operationId: 'deleteM2mApplication',
        tags: ['credentials'],
        summary: 'Delete an M2M application (its tokens are refused at once)',
        security,
        params: AppParams,
        response: {
          200: Envelope(Type.Object({ id: Type.String(), deleted: Type.Literal(true) })),
          ...idErrors,
        },
      },
    },
    async (request) => {
      const { caller, actor: who } = actor(request);
      await db.transaction(async (tx) => {
        await m2m.delete(tx, caller.organization!.id, request.params.applicationId);
        await organizations.audit(
          tx,
          caller.organization!.id,
          who,
          'm2m_application.deleted',
          'm2m_application',
          request.params.applicationId,
          {},
        );
      });
      return ctx.ok({ id: request.params.applicationId, deleted: true as const });
    },
  );

  app.post(
    '/api/v2/m2m-applications/:applicationId/secrets',
    {
      onRequest: admin,
      config: { optionalJsonBody: true },
      schema: {
        operationId: 'addM2mClientSecret',
        tags: ['credentials'],
        summary: 'Add a client secret for a rotation (at most two valid at once; shown once)',
        security,
        params: AppParams,
        response: {
          201: Envelope(
            Type.Object({ application: Application, clientSecret: Type.String(), secretId: Type.Integer() }),
          ),
          ...idErrors,
          409: ErrorEnvelope,
        },
      },
    },
    async (request, reply) => {
      const { caller, actor: who } = actor(request);
      const added = await db.transaction(async (tx) => {
        const result = await m2m.addSecret(tx, caller.organization!.id, request.params.applicationId);
        await organizations.audit(
          tx,
          caller.organization!.id,
          who,
          'm2m_application.secret_added',
          'm2m_application',
          result.application.id,
          { secretId: result.secretId },
        );
        return result;
      });
      return reply.code(201).send(ctx.ok(added));
    },
  );

  app.delete(
    '/api/v2/m2m-applications/:applicationId/secrets/:secretId',
    {
      onRequest: admin,
      schema: {
        operationId: 'deleteM2mClientSecret',
        tags: ['credentials'],
        summary: 'Delete a client secret (the end of a rotation)',
        security,
        params: Type.Object({
          applicationId: Type.String({ minLength: 1, maxLength: 64 }),
          secretId: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
        }),
        response: {
          200: Envelope(Type.Object({ secretId: Type.Integer(), deleted: Type.Literal(true) })),
          ...idErrors,
        },
      },
    },
    async (request) => {
      const { caller, actor: who } = actor(request);
      await db.transaction(async (tx) => {
        await m2m.deleteSecret(
          tx,
          caller.organization!.id,
          request.params.applicationId,
          request.params.secretId,
        );
        await organizations.audit(
          tx,
          caller.organization!.id,
          who,
          'm2m_application.secret_deleted',
          'm2m_application',
          request.params.applicationId,
          { secretId: request.params.secretId },
        );
      });
      return ctx.ok({ secretId: request.params.secretId, deleted: true as const });
    },
  );

  app.get(
    '/.well-known/jwks.json',
    {
      schema: {
        operationId: 'getJwks',
        tags: ['oauth'],
        summary: "The keys that sign the service's tokens (RFC 7517)",
        security: [],
        response: { 200: Type.Object({ keys: Type.Array(Type.Record(Type.String(), Type.Unknown())) }) },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return credentials.signingKeys.jwks();
    },
  );
}

/** The fields of a token request the client-credentials grant reads. */
export interface ClientCredentialsRequest {
  client_id?: string;
  client_secret?: string;
  scope?: string;
  resource?: string;
}

/**
 * The client-credentials grant of `POST /oauth/token` (RFC 6749 section 4.4) for M2M applications: client
 * authentication by HTTP Basic (`client_secret_basic`) or in the body (`client_secret_post`), one way only; `resource`
 * (RFC 8707), when sent, must be the REST API's resource indicator. `routes/mcp-oauth.ts` serves the endpoint.
 * @returns the token answer, or sends the RFC 6749 section 5.2 error.
 */
export async function clientCredentialsGrant(
  ctx: MediaBuyingRouteContext,
  body: ClientCredentialsRequest,
  authorization: string | undefined,
  reply: FastifyReply,
) {
  const m2m = ctx.deps.credentials.m2m;
  const basic = basicCredentials(authorization);
  if (basic === 'malformed' || (basic && body.client_secret !== undefined))
    return reply.code(400).send({
      error: 'invalid_request',
      error_description:
        'Authenticate the client one way: HTTP Basic or client_id and client_secret in the body.',
    });
  const clientId = basic?.id ?? body.client_id;
  const clientSecret = basic?.secret ?? body.client_secret;
  if (!clientId || !clientSecret) return invalidClient(reply);
  const result = await m2m.issueToken({ clientId, clientSecret, scope: body.scope, resource: body.resource });
  if ('error' in result) {
    if (result.error === 'invalid_client') return invalidClient(reply);
    return reply.code(400).send({
      error: result.error,
      error_description:
        result.error === 'invalid_scope'
          ? "The requested scope is not among the application's permissions."
          : `Tokens are issued for the resource ${m2m.resource} only.`,
    });
  }
  return result;
}

/** 401 `invalid_client` with the Basic challenge (RFC 6749 section 5.2). */
function invalidClient(reply: FastifyReply) {
  return reply
    .code(401)
    .header('www-authenticate', 'Basic realm="oauth", charset="UTF-8"')
    .send({ error: 'invalid_client', error_description: 'Client authentication failed.' });
}

/** Errors of the token endpoint in OAuth's form (`invalid_request` for a malformed request). */
export function oauthErrorFormat(error: { status: number; message: string }): { body: unknown } {
  if (error.status === 401) return { body: { error: 'invalid_client', error_description: error.message } };
  if (error.status >= 500) return { body: { error: 'server_error', error_description: error.message } };
  if (error.status === 429)
    return { body: { error: 'temporarily_unavailable', error_description: error.message } };
  return { body: { error: 'invalid_request', error_description: error.message } };
}
