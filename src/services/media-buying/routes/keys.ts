/**
 * User API keys, widget tokens and organization-owned keys (spec "Credentials and activation";
 * "Authentication": user API key and organization-owned key rows).
 */
import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../../platform/http.ts';
import { forbidden } from '../media-buying-errors.ts';
import { Envelope, ErrorEnvelope, idErrors, security, UserApiKeyRecord } from '../media-buying-schemas.ts';
import type { MediaBuyingRouteContext } from './context.ts';

const KeyIdParams = Type.Object({ keyId: Type.String({ minLength: 1, maxLength: 64 }) });

const OrgKeyRecord = Type.Object({
  id: Type.String({ description: '`key_` + 32 hex' }),
  label: Type.Union([Type.String(), Type.Null()]),
  maskedKey: Type.String(),
  permissions: Type.Array(Type.String()),
  createdAt: Type.String({ format: 'date-time' }),
});

/** Registers the user API key, widget token and organization key routes. */
export function registerKeyRoutes(app: ServiceApp, ctx: MediaBuyingRouteContext): void {
  const { db, credentials, organizations } = ctx.deps;
  const keys = credentials.keys;

  app.post(
    '/api/v2/user-api-keys',
    {
      onRequest: ctx.authenticated({ interactive: true }),
      // The label is optional, so the body is too.
      config: { optionalJsonBody: true },
      schema: {
        operationId: 'createUserApiKey',
        tags: ['credentials'],
        summary: 'Create a user API key (shown once)',
        description:
          'From an interactive session only (no key or token creates a credential). The key has `platform:access` ' +
          '(the only permission of new keys: it acts with your live access), is bound to your active organization, ' +
          'and is shown in full in this answer only.',
        security,
        body: Type.Object(
          { label: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) },
          { additionalProperties: false, examples: [{ label: 'reporting script' }] },
        ),
        response: {
          201: Envelope(
            Type.Object({ key: Type.String({ description: 'Shown this once.' }), record: UserApiKeyRecord }),
          ),
          ...idErrors,
        },
      },
    },
    async (request, reply) => {
      const caller = ctx.caller(request);
      const created = await db.transaction(async (tx) => {
        const result = await keys.createUserKey(tx, {
          userId: caller.user!.id,
          organizationId: caller.organization!.id,
          organizationPublicId: caller.organization!.publicId,
          label: request.body.label ?? null,
        });
        await organizations.audit(
          tx,
          caller.organization!.id,
          { userId: caller.user!.id, kind: caller.kind },
          'user_api_key.created',
          'user_api_key',
          result.record.id,
          {},
        );
        return result;
      });
      return reply.code(201).send(ctx.ok(created));
    },
  );

  app.get(
    '/api/v2/user-api-keys',
    {
      onRequest: ctx.authenticated({ user: true, organization: false }),
      schema: {
        operationId: 'listUserApiKeys',
        tags: ['credentials'],
        summary: 'Your API keys, masked',
        security,
        querystring: Type.Object(
          { includeRevoked: Type.Optional(Type.Boolean()) },
          { additionalProperties: false },
        ),
        response: { 200: Envelope(Type.Array(UserApiKeyRecord)), ...idErrors },
      },
    },
    async (request) =>
      ctx.ok(
        await keys.listUserKeys(ctx.caller(request).user!.id, {
          includeRevoked: request.query.includeRevoked,
        }),
      ),
  );

  app.delete(
    '/api/v2/user-api-keys/:keyId',
    {
      onRequest: ctx.authenticated({ user: true, organization: false }),
      schema: {
        operationId: 'revokeUserApiKey',
        tags: ['credentials'],
        summary: 'Revoke one of your API keys',
        description: 'Effective on every instance at once. A key may revoke itself.',
        security,
        params: KeyIdParams,
        response: { 200: Envelope(UserApiKeyRecord), ...idErrors },
      },
    },
    async (request) => {
      const caller = ctx.caller(request);
      const revoked = await db.transaction(async (tx) => {
        // A session revokes any of the user's keys; a key only itself (a leaked key cannot revoke its owner's others).
        const record = await keys.revokeUserKey(tx, caller.user!.id, request.params.keyId, {
          onlyKeyId: caller.interactive
            ? undefined
            : caller.kind === 'user_api_key'
              ? caller.credentialId
              : -1,
        });
        await organizations.audit(
          tx,
          caller.organization?.id ?? null,
          { userId: caller.user!.id, kind: caller.kind },
          'user_api_key.revoked',
          'user_api_key',
          record.id,
          {},
        );
        return record;
      });
      return ctx.ok(revoked);
    },
  );

  app.get(
    '/api/v2/user-api-keys/widget-token',
    {
      onRequest: ctx.authenticated({ interactive: true, alpha: 'embedded-widgets' }),
      schema: {
        operationId: 'getWidgetToken',
        tags: ['credentials'],
        summary: 'A short-lived widget token for you in your active organization',
        description:
          'Needs an interactive session and the organization opted into the `embedded-widgets` alpha. The token ' +
          'lives 10 minutes and acts as you, in the organization active now.',
        security,
        response: {
          200: Envelope(
            Type.Object({ token: Type.String(), expiresAt: Type.String({ format: 'date-time' }) }),
          ),
          ...idErrors,
        },
      },
    },
    async (request, reply) => {
      const caller = ctx.caller(request);
      // A GET that issues a credential: a navigation from another site (which carries the Lax session cookie) is
      // refused, as the origin rule refuses its POSTs.
      const site = request.headers['sec-fetch-site'];
      if (site !== undefined && site !== 'same-origin' && site !== 'none')
        throw forbidden('A widget token is issued only to pages of this site.', {
          reason: 'origin_not_allowed',
        });
      reply.header('cache-control', 'no-store');
      return ctx.ok(
        await db.transaction((tx) =>
          keys.issueWidgetToken(tx, { userId: caller.user!.id, organizationId: caller.organization!.id }),
        ),
      );
    },
  );

  app.get(
    '/api/v2/org-api-keys',
    {
      onRequest: ctx.authenticated({ admin: true }),
      schema: {
        operationId: 'listOrgApiKeys',
        tags: ['credentials'],
        summary: "The organization's own keys (administrators, interactive session)",
        security,
        response: { 200: Envelope(Type.Array(OrgKeyRecord)), ...idErrors },
      },
    },
    async (request) => ctx.ok(await keys.listOrgKeys(ctx.caller(request).organization!.id)),
  );

  app.delete(
    '/api/v2/org-api-keys/:keyId',
    {
      onRequest: ctx.authenticated({ admin: true }),
      schema: {
        operationId: 'revokeOrgApiKey',
        tags: ['credentials'],
        summary: "Revoke one of the organization's own keys (administrators, interactive session)",
        security,
        params: KeyIdParams,
        response: {
          200: Envelope(Type.Object({ id: Type.String(), revoked: Type.Literal(true) })),
          ...idErrors,
          409: ErrorEnvelope,
        },
      },
    },
    async (request) => {
      const caller = ctx.caller(request);
      await db.transaction(async (tx) => {
        await keys.revokeOrgKey(tx, caller.organization!.id, request.params.keyId);
        await organizations.audit(
          tx,
          caller.organization!.id,
          { userId: caller.user!.id, kind: caller.kind },
          'org_api_key.revoked',
          'org_api_key',
          request.params.keyId,
          {},
        );
      });
      return ctx.ok({ id: request.params.keyId, revoked: true as const });
    },
  );
}
