/**
 * The service as the OAuth authorization server of MCP connectors (issue 18; spec "Authentication", rules 1-4), and
 * of M2M applications (one issuer, one token endpoint):
 *
 * | route                                              | what                                                       |
 * | -------------------------------------------------- | ---------------------------------------------------------- |
 * | `GET /.well-known/oauth-authorization-server`      | RFC 8414 metadata (MCP connectors and M2M)                  |
 * | `GET /.well-known/oauth-protected-resource<path>`  | RFC 9728 metadata of each MCP endpoint (storefront: active) |
 * | `POST /oauth/register`                             | dynamic client registration (RFC 7591)                      |
 * | `GET /oauth/authorize`                             | the code flow with PKCE S256 and `resource`; consent page   |
 * | `POST /oauth/authorize`                            | the consent form's decision (session cookie, UI origin)     |
 * | `POST /oauth/token`                                | `authorization_code`, `refresh_token`, `client_credentials` |
 * | `POST /oauth/revoke`                               | revocation (RFC 7009)                                       |
 *
 * OAuth endpoints answer in OAuth's formats (RFC 6749 section 5.2, RFC 7591 section 3.2.2), never cached. The
 * authorization endpoint answers with pages and redirects: a signed-out user goes to the sign-in page and comes back.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { ServiceApp } from '../../../platform/http.ts';
import { perMinuteLimit } from '../../../platform/rate-limit.ts';
import { M2M_PERMISSIONS } from '../credentials/index.ts';
import {
  liveResourceOfPath,
  MCP_ENDPOINTS,
  type McpOAuth,
  type McpScope,
  mcpAuthorizationServerMetadata,
  protectedResourceMetadata,
  protectedResourceMetadataPath,
  RegistrationError,
  SCOPE_DESCRIPTIONS,
} from '../mcp/index.ts';
import { notFound, rateLimited } from '../media-buying-errors.ts';
import { ErrorEnvelope, security } from '../media-buying-schemas.ts';
import {
  PAGE_HEADERS,
  renderAuthorizationErrorPage,
  renderConsentPage,
  roundTripPageHeaders,
} from '../ui/index.ts';
import type { MediaBuyingRouteContext } from './context.ts';
import { clientCredentialsGrant, oauthErrorFormat } from './m2m.ts';

const tags = ['oauth'];

/** The OAuth error answer (RFC 6749 section 5.2, RFC 7591 section 3.2.2). */
const OAuthError = Type.Object({
  error: Type.String(),
  error_description: Type.Optional(Type.String()),
});

const Json = Type.Record(Type.String(), Type.Unknown());
const page = { description: 'HTML page', type: 'string' } as const;

/** Registration requests per minute per client address. */
const REGISTRATIONS_PER_MINUTE = 30;
/**
 * Authorization requests per minute per client address: the endpoint is open and may fetch a client ID metadata
 * document (up to 5 s each), so it is bounded like registration, with room for a person's retries.
 */
const AUTHORIZATIONS_PER_MINUTE = 120;

/** Registers the OAuth routes of MCP connectors (module comment). */
export function registerMcpOAuthRoutes(app: ServiceApp, ctx: MediaBuyingRouteContext, oauth: McpOAuth): void {
  const { db, publicUrl } = ctx.deps;
  const m2m = ctx.deps.credentials.m2m;

  const sendPage = (reply: FastifyReply, html: string, status: number, redirectOrigin?: string) =>
    reply
      .code(status)
      .headers(redirectOrigin ? roundTripPageHeaders(redirectOrigin) : PAGE_HEADERS)
      .type('text/html; charset=utf-8')
      .send(html);

  app.get(
    '/.well-known/oauth-authorization-server',
    {
      schema: {
        operationId: 'getAuthorizationServerMetadata',
        tags,
        summary: 'OAuth 2.0 authorization server metadata (RFC 8414)',
        description:
          'One authorization server for MCP connectors (code flow with PKCE S256, refresh, dynamic registration, ' +
          'client ID metadata documents, revocation) and M2M applications (client credentials).',
        security: [],
        response: { 200: Json },
      },
    },
    async () => {
      const mcp = mcpAuthorizationServerMetadata(m2m.issuer);
      return {
        ...mcp,
        jwks_uri: `${m2m.issuer}/.well-known/jwks.json`,
        grant_types_supported: [...mcp.grant_types_supported, 'client_credentials'],
        token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
        scopes_supported: [...mcp.scopes_supported, ...M2M_PERMISSIONS],
        service_documentation: `${m2m.issuer}/docs`,
      };
    },
  );

  for (const endpoint of MCP_ENDPOINTS) {
    const withStorefront = endpoint.path.includes(':storefrontId');
    app.get(
      protectedResourceMetadataPath(endpoint.path),
      {
        schema: {
          operationId: withStorefront
            ? 'getStorefrontMcpProtectedResourceMetadata'
            : `getMcpProtectedResourceMetadata${endpoint.audience[0]!.toUpperCase()}${endpoint.audience.slice(1)}`,
          tags,
          summary: `OAuth protected-resource metadata of ${endpoint.path} (RFC 9728)`,
          description: withStorefront ? 'Only for an active storefront; 404 otherwise.' : undefined,
          security: [],
          ...(withStorefront
            ? { params: Type.Object({ storefrontId: Type.String({ maxLength: 64 }) }) }
            : {}),
          response: { 200: Json, 400: ErrorEnvelope, 404: ErrorEnvelope },
        },
      },
      async (request) => {
        const params = request.params as { storefrontId?: string };
        const path = endpoint.path.replace(':storefrontId', params.storefrontId ?? '');
        const resource = await liveResourceOfPath(db, path);
        if (!resource) throw notFound('MCP resource', path);
        return protectedResourceMetadata(publicUrl(), resource.target, resource.name);
      },
    );
  }

  const registrationLimit = perMinuteLimit(app, {
    max: () => REGISTRATIONS_PER_MINUTE,
    bucket: (request) => `oauth-register:${request.ip}`,
    exceeded: (retryAfterSeconds) =>
      rateLimited('Too many client registrations from this address; retry later.', retryAfterSeconds),
  });

  const authorizationLimit = perMinuteLimit(app, {
    max: () => AUTHORIZATIONS_PER_MINUTE,
    bucket: (request) => `oauth-authorize:${request.ip}`,
    exceeded: (retryAfterSeconds) =>
      rateLimited('Too many authorization requests from this address; retry later.', retryAfterSeconds),
  });

  app.post(
    '/oauth/register',
    {
      onRequest: [registrationLimit],
      config: { errorFormat: registrationErrorFormat },
      schema: {
        operationId: 'registerOAuthClient',
        tags,
        summary: 'Dynamic client registration of an MCP connector (RFC 7591)',
        description:
          'Public clients only (`token_endpoint_auth_method` `none`, PKCE); redirect URIs are https URLs or http on ' +
          'a loopback host. Clients may instead use a client ID metadata document URL as `client_id` without ' +
          'registering.',
        security: [],
        body: Type.Object(
          {
            redirect_uris: Type.Array(Type.String({ maxLength: 2000 }), { minItems: 1, maxItems: 10 }),
            client_name: Type.Optional(Type.String({ maxLength: 200 })),
          },
          {
            additionalProperties: true,
            examples: [{ client_name: 'My assistant', redirect_uris: ['http://127.0.0.1:33418/callback'] }],
          },
        ),
        response: { 201: Json, 400: OAuthError, 429: OAuthError },
      },
    },
    async (request, reply) => {
      ctx.noStore(reply);
      try {
        return reply
          .code(201)
          .send({ ...(await oauth.clients.register(request.body as Record<string, unknown>)) });
      } catch (err) {
        if (err instanceof RegistrationError)
          return reply.code(400).send({ error: err.code, error_description: err.message });
        throw err;
      }
    },
  );

  app.get(
    '/oauth/authorize',
    {
      onRequest: [authorizationLimit],
      schema: {
        operationId: 'authorizeMcpConnector',
        tags,
        summary: 'Authorization endpoint of MCP connectors (code flow, PKCE S256, resource indicator)',
        description:
          'Signed out: 303 to the sign-in page, which comes back here. Signed in: the consent page (the app, the ' +
          'resource, what the scope lets it do, the organization the connector will act in). `scope`: `adcp:read` ' +
          '(always granted) and `adcp:write` (the mutating tools, on endpoints that have them); absent, everything ' +
          'the resource offers. Errors that can go back to the app are ' +
          'redirected to its redirect URI (`error`, `state`, `iss`) once the user is signed in (RFC 9700 section ' +
          '4.11.2: never an open redirector); an unknown client or redirect URI is shown.',
        security: [],
        querystring: Type.Object(
          {
            response_type: Type.Optional(Type.String({ maxLength: 50 })),
            client_id: Type.Optional(Type.String({ maxLength: 2000 })),
            redirect_uri: Type.Optional(Type.String({ maxLength: 2000 })),
            code_challenge: Type.Optional(Type.String({ maxLength: 200 })),
            code_challenge_method: Type.Optional(Type.String({ maxLength: 20 })),
            resource: Type.Optional(Type.String({ maxLength: 2000 })),
            scope: Type.Optional(Type.String({ maxLength: 500 })),
            state: Type.Optional(Type.String({ maxLength: 1000 })),
          },
          { additionalProperties: true },
        ),
        produces: ['text/html'],
        response: {
          200: page,
          303: { description: 'To the sign-in page, or back to the app with an error.', type: 'null' },
          // An error page (text/html) for a request that cannot go back to the app; the envelope for malformed input.
          400: ErrorEnvelope,
          429: ErrorEnvelope,
        },
      },
    },
    async (request, reply) => {
      const checked = await oauth.authorization.check(request.query);
      if (checked.kind === 'error_page')
        return sendPage(reply, renderAuthorizationErrorPage(checked.message), 400);
      // The user signs in before any error goes back to the redirect URI: open registration lets anyone list any
      // redirect URI, so redirecting a signed-out visitor would make this an open redirector (RFC 9700 section 4.11.2).
      const caller = await ctx.sessionCaller(request);
      if (caller === null)
        return reply
          .code(303)
          .headers(PAGE_HEADERS)
          .header('location', `/sign-in?next=${encodeURIComponent(request.url)}`)
          .send(null);
      if (checked.kind === 'redirect')
        return reply.code(303).headers(PAGE_HEADERS).header('location', checked.location).send(null);
      const { request: authorization, client, resource } = checked;
      const organizations = await oauth.authorization.organizationsFor(caller.user!.id, resource);
      const html = renderConsentPage({
        app: {
          name: client.name,
          clientId: client.clientId,
          clientUri: client.clientUri,
          redirectHost: new URL(authorization.redirectUri).host,
        },
        resource: { name: resource.name, uri: authorization.resource },
        scopes: authorization.scope
          .split(' ')
          .map((scope) => ({ scope, description: SCOPE_DESCRIPTIONS[scope as McpScope] })),
        user: { name: caller.user!.name, email: caller.user!.email },
        organizations,
        consent: await oauth.authorization.consentToken(authorization, caller.credentialId),
      });
      return sendPage(reply, html, 200, new URL(authorization.redirectUri).origin);
    },
  );

  app.post(
    '/oauth/authorize',
    {
      // The consent page is served by this service (its own origin), so its post comes from there; the UI origin is
      // accepted too, any other origin refused (the session-bound consent token is the CSRF defence).
      onRequest: ctx.authenticated({
        interactive: true,
        organization: false,
        termsExempt: true,
        serviceForm: true,
      }),
      config: { formBody: true },
      schema: {
        operationId: 'decideMcpConnectorConsent',
        tags,
        summary: "The consent page's decision: allow (a grant and a one-time code) or deny",
        description:
          "Posted by the consent page with the browser session, from this service's own origin (which serves the " +
          'page) or the UI origin, with an `Origin` header (spec rule 4: any other origin is 403); the consent ' +
          'token binds it to the request shown and to the session. 303 back to the app with `code` or `error`.',
        security,
        body: Type.Object(
          {
            consent: Type.String({ maxLength: 8000 }),
            decision: Type.Union([Type.Literal('approve'), Type.Literal('deny')]),
            organization: Type.Optional(Type.String({ maxLength: 64 })),
          },
          { additionalProperties: false },
        ),
        produces: ['text/html'],
        response: {
          303: { description: 'Back to the app.', type: 'null' },
          // An error page (text/html) for a refused consent; the envelope for malformed input.
          400: ErrorEnvelope,
          401: ErrorEnvelope,
          403: ErrorEnvelope,
        },
      },
    },
    async (request, reply) => {
      const caller = ctx.caller(request);
      const outcome = await db.transaction((tx) =>
        oauth.authorization.decide(tx, {
          userId: caller.user!.id,
          sessionId: caller.credentialId,
          consent: request.body.consent,
          decision: request.body.decision,
          organizationId: request.body.organization,
        }),
      );
      if (outcome.kind === 'error_page')
        return sendPage(reply, renderAuthorizationErrorPage(outcome.message), 400);
      return reply.code(303).headers(PAGE_HEADERS).header('location', outcome.location).send(null);
    },
  );

  app.post(
    '/oauth/token',
    {
      config: { formBody: true, errorFormat: oauthErrorFormat },
      schema: {
        operationId: 'issueOAuthToken',
        tags,
        summary: 'OAuth 2.0 token endpoint (authorization code, refresh token, client credentials)',
        description:
          'MCP connectors (public clients, `client_id` in the body): `authorization_code` with `code_verifier` ' +
          '(PKCE S256), `redirect_uri` and `resource` (RFC 8707) as in the authorization request; `refresh_token` ' +
          'with the same `resource` (rotating: each use returns a new refresh token) and optionally `scope`, within ' +
          "the presented token's scope (a refresh narrows or keeps it, never widens: `invalid_scope`). Access " +
          'tokens `mcp_at_` live an hour and carry the scope of their token answer. M2M applications: `client_credentials` with HTTP Basic or `client_secret_post`. Errors in RFC ' +
          '6749 section 5.2 form (`invalid_grant` for every grant failure).',
        security: [],
        body: Type.Object(
          {
            grant_type: Type.String({ maxLength: 100 }),
            client_id: Type.Optional(Type.String({ maxLength: 2000 })),
            client_secret: Type.Optional(Type.String({ maxLength: 200 })),
            code: Type.Optional(Type.String({ maxLength: 200 })),
            code_verifier: Type.Optional(Type.String({ maxLength: 200 })),
            redirect_uri: Type.Optional(Type.String({ maxLength: 2000 })),
            refresh_token: Type.Optional(Type.String({ maxLength: 200 })),
            scope: Type.Optional(Type.String({ maxLength: 500 })),
            resource: Type.Optional(Type.String({ maxLength: 2000 })),
          },
          { additionalProperties: true },
        ),
        response: {
          200: Type.Object({
            access_token: Type.String(),
            token_type: Type.Literal('Bearer'),
            expires_in: Type.Integer(),
            refresh_token: Type.Optional(Type.String()),
            scope: Type.String(),
          }),
          400: OAuthError,
          401: OAuthError,
        },
      },
    },
    async (request, reply) => {
      ctx.noStore(reply);
      const body = request.body;
      if (body.grant_type === 'client_credentials')
        return clientCredentialsGrant(ctx, body, request.headers.authorization, reply);
      let answer: Awaited<ReturnType<typeof oauth.tokens.refresh>>;
      if (body.grant_type === 'authorization_code')
        answer = await oauth.tokens.exchangeCode({
          clientId: body.client_id,
          code: body.code,
          codeVerifier: body.code_verifier,
          redirectUri: body.redirect_uri,
          resource: body.resource,
        });
      else if (body.grant_type === 'refresh_token')
        answer = await oauth.tokens.refresh({
          clientId: body.client_id,
          refreshToken: body.refresh_token,
          resource: body.resource,
          scope: body.scope,
        });
      else
        return reply.code(400).send({
          error: 'unsupported_grant_type',
          error_description: 'Grant types: authorization_code, refresh_token, client_credentials.',
        });
      if ('error' in answer) return reply.code(400).send(answer);
      return answer;
    },
  );

  app.post(
    '/oauth/revoke',
    {
      config: { formBody: true, errorFormat: oauthErrorFormat },
      schema: {
        operationId: 'revokeOAuthToken',
        tags,
        summary: 'Token revocation of MCP connectors (RFC 7009)',
        description:
          'A public client revokes its `mcp_at_` or `mcp_rt_` (a refresh token with the access tokens of its ' +
          'lineage). Unknown tokens, or tokens of another client, answer 200 too and change nothing.',
        security: [],
        body: Type.Object(
          {
            token: Type.String({ maxLength: 200 }),
            token_type_hint: Type.Optional(Type.String({ maxLength: 50 })),
            client_id: Type.String({ maxLength: 2000 }),
          },
          { additionalProperties: true },
        ),
        response: { 200: Type.Null(), 400: OAuthError },
      },
    },
    async (request, reply) => {
      ctx.noStore(reply);
      await oauth.tokens.revoke({ clientId: request.body.client_id, token: request.body.token });
      return reply.code(200).send(null);
    },
  );
}

/** Errors of the registration endpoint in RFC 7591's form (section 3.2.2). */
function registrationErrorFormat(error: { status: number; message: string }): { body: unknown } {
  if (error.status === 429)
    return { body: { error: 'temporarily_unavailable', error_description: error.message } };
  if (error.status >= 500) return { body: { error: 'server_error', error_description: error.message } };
  return { body: { error: 'invalid_client_metadata', error_description: error.message } };
}
