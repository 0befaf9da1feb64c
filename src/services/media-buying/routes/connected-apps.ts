/**
 * Connected apps (spec "Resources and fields", connected-app listing; "Authentication" rule 2): the signed-in user's
 * MCP connectors, and disconnecting one (its access and refresh credentials are invalidated at once, on every
 * instance). Interactive session only: a key or token never lists or ends a person's connections.
 */
import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../../platform/http.ts';
import { Int4 } from '../../../platform/schemas.ts';
import { Envelope, idErrors, ListEnvelope, security } from '../media-buying-schemas.ts';
import type { MediaBuyingRouteContext } from './context.ts';

/** Largest `take` of the connected-app list. */
const CONNECTED_APPS_MAX_TAKE = 100;

const ConnectedApp = Type.Object({
  id: Type.String({ description: 'The connection (grant): `mcg_` + 32 hex.' }),
  appName: Type.String({ description: "The connector's name, as its OAuth client registered it." }),
  clientId: Type.String({ description: "The connector's OAuth `client_id`." }),
  resource: Type.Union([Type.String(), Type.Null()], {
    description:
      'The exact MCP resource URI the connection is bound to (RFC 8707); null for a connection authorized before ' +
      'resource binding, which must authorize again (its credentials are refused).',
  }),
  scope: Type.String(),
  firstConnectedAt: Type.String({ format: 'date-time', description: 'When you first approved it.' }),
  lastRefreshedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When it last refreshed its credentials; null when it never has.',
  }),
});

/** Registers `GET /api/v2/connected-apps` and `DELETE /api/v2/connected-apps/{connectionId}`. */
export function registerConnectedAppRoutes(app: ServiceApp, ctx: MediaBuyingRouteContext): void {
  const { db, credentials, organizations } = ctx.deps;
  // A person's own connections, whatever organization is active; disconnecting is allowed with outstanding terms
  // (it only takes access away, like signing out).
  const guard = ctx.authenticated({ interactive: true, organization: false, termsExempt: true });

  app.get(
    '/api/v2/connected-apps',
    {
      onRequest: guard,
      schema: {
        operationId: 'listConnectedApps',
        tags: ['credentials'],
        summary: 'Your connected apps (MCP connectors), most recently connected first (interactive session)',
        description:
          'Every active connection: the app name, the MCP resource it is bound to, when it was first connected and ' +
          'when it last refreshed its credentials. Signing out of the browser does not disconnect them.',
        security,
        querystring: Type.Object(
          {
            take: Type.Optional(Int4({ minimum: 1, maximum: CONNECTED_APPS_MAX_TAKE, default: 50 })),
            skip: Type.Optional(Int4({ minimum: 0, default: 0 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: ListEnvelope(ConnectedApp), ...idErrors },
      },
    },
    async (request) => {
      const take = request.query.take ?? 50;
      const skip = request.query.skip ?? 0;
      const page = await credentials.connectedApps.list(ctx.caller(request).user!.id, { skip, take });
      return ctx.list(page.items, { skip, take, total: page.total });
    },
  );

  app.delete(
    '/api/v2/connected-apps/:connectionId',
    {
      onRequest: guard,
      schema: {
        operationId: 'disconnectConnectedApp',
        tags: ['credentials'],
        summary: 'Disconnect an app: its access and refresh credentials stop at once (interactive session)',
        description:
          'Revokes the connection and every access (`mcp_at_`) and refresh (`mcp_rt_`) credential issued under it, ' +
          'in one transaction, effective on every instance when it commits. 404 for an unknown id, another ' +
          "user's connection, or one already disconnected. The app must be authorized again to reconnect.",
        security,
        params: Type.Object({ connectionId: Type.String({ minLength: 1, maxLength: 64 }) }),
        response: {
          200: Envelope(
            Type.Object({
              id: Type.String(),
              disconnected: Type.Literal(true),
              accessTokensRevoked: Type.Integer({ minimum: 0 }),
              refreshTokensRevoked: Type.Integer({ minimum: 0 }),
            }),
          ),
          ...idErrors,
        },
      },
    },
    async (request) => {
      const caller = ctx.caller(request);
      const done = await db.transaction(async (tx) => {
        const result = await credentials.connectedApps.disconnect(
          tx,
          caller.user!.id,
          request.params.connectionId,
        );
        await organizations.audit(
          tx,
          caller.organization?.id ?? null,
          { userId: caller.user!.id, kind: caller.kind },
          'connected_app.disconnected',
          'mcp_grant',
          result.id,
          {
            accessTokensRevoked: result.accessTokensRevoked,
            refreshTokensRevoked: result.refreshTokensRevoked,
          },
        );
        return result;
      });
      return ctx.ok({ ...done, disconnected: true as const });
    },
  );
}
