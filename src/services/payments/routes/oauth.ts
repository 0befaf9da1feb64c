/**
 * The OAuth 2.0 routes of the payments service (README "OAuth access tokens"):
 * - `POST /oauth/token`: the token endpoint, `client_credentials` only (RFC 6749 section 4.4), client authentication
 *   by HTTP Basic or `client_secret_post` (section 2.3.1), answers and errors in OAuth's own JSON (sections 5.1, 5.2)
 *   with `Cache-Control: no-store`;
 * - `GET /.well-known/oauth-authorization-server` (RFC 8414), `GET /.well-known/jwks.json` (RFC 7517) and
 *   `GET /.well-known/oauth-protected-resource` (RFC 9728);
 * - the merchant's clients, JSON:API like the rest of `/v1` (API keys only): register, list, read, revoke;
 * - operator routes: list and rotate the signing keys.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { basicCredentials } from '../../../platform/auth.ts';
import { ApiError } from '../../../platform/errors.ts';
import type { ServiceApp } from '../../../platform/http.ts';
import { perMinuteLimit } from '../../../platform/rate-limit.ts';
import type { SigningKeyRecord as KeyRecord, SigningKeys } from '../../../platform/signing-keys.ts';
import type { AuthenticatedClient, OAuthClientRecord, OAuthClients } from '../oauth-clients.ts';
import {
  formatOAuthError,
  invalidClient,
  invalidRequest,
  invalidScope,
  NO_STORE,
  unsupportedGrantType,
} from '../oauth-errors.ts';
import {
  AuthorizationServerMetadata,
  ClientParams,
  CreateOAuthClientBody,
  JwkSet,
  OAuthClientDocument,
  OAuthClientListDocument,
  OAuthErrorBody,
  ProtectedResourceMetadata,
  RegisteredOAuthClientDocument,
  SigningKeyRecord,
  TokenRequestBody,
  TokenResponse,
} from '../oauth-schemas.ts';
import { isScope, parseScopeList, SCOPE_NAMES, type Scope } from '../oauth-scopes.ts';
import type { TokenIssuer } from '../oauth-tokens.ts';
import { ErrorBody, IdempotencyHeaders, PageQuery } from '../payments-schemas.ts';
import { bearer, errors, type PaymentsRouteContext, pagedDocument } from './context.ts';

/** What the OAuth routes need besides the shared route context. */
export interface OAuthRouteDeps {
  clients: OAuthClients;
  signingKeys: SigningKeys;
  tokens: TokenIssuer;
  /** Token requests per minute per client address. */
  tokenRateLimit: number;
  /** The payments public URL: the issuer, and the base of the endpoints in the metadata. */
  publicUrl: () => string;
  /** The external issuer, when one is configured (listed in the protected resource metadata). */
  externalIssuer: string | undefined;
}

const FORM = 'application/x-www-form-urlencoded';
/** Largest token request body, in bytes. */
const TOKEN_BODY_LIMIT = 16 * 1024;

/** The JSON:API resource of a client (`clientSecret` added once, at registration). */
function clientResource(client: OAuthClientRecord) {
  return {
    type: 'oauthClient' as const,
    id: client.clientId,
    attributes: {
      clientId: client.clientId,
      name: client.name,
      scopes: client.scopes,
      grantTypes: ['client_credentials' as const],
      tokenEndpointAuthMethods: ['client_secret_basic' as const, 'client_secret_post' as const],
      secretHint: client.secretHint,
      createdAt: client.createdAt.toISOString(),
      revokedAt: client.revokedAt ? client.revokedAt.toISOString() : null,
    },
  };
}

function keyRecord(key: KeyRecord) {
  return {
    kid: key.kid,
    alg: key.alg,
    status: key.status,
    createdAt: key.createdAt.toISOString(),
    retiredAt: key.retiredAt ? key.retiredAt.toISOString() : null,
    publishedUntil: key.publishedUntil ? key.publishedUntil.toISOString() : null,
  };
}

/**
 * The scopes of a token request: the requested ones, each registered for the client (RFC 6749 section 3.3), or all
 * of the client's when `scope` is absent.
 * @throws ApiError 400 `invalid_scope` for a malformed list, an unknown scope or one the client was not registered for.
 */
function grantedScopes(client: AuthenticatedClient, scope: string | undefined): Scope[] {
  if (scope === undefined) return client.scopes;
  const requested = parseScopeList(scope);
  if (!requested) throw invalidScope('scope must be scope names separated by single spaces.');
  const allowed = new Set<string>(client.scopes);
  const refused = requested.filter((s) => !isScope(s) || !allowed.has(s));
  if (refused.length > 0)
    throw invalidScope(`The client may not be granted: ${refused.join(' ').slice(0, 300)}.`);
  return requested as Scope[];
}

/** Registers the token endpoint, the metadata and JWKS, the client routes and the signing-key operator routes. */
export async function registerOAuthRoutes(app: ServiceApp, ctx: PaymentsRouteContext, deps: OAuthRouteDeps) {
  const { clients, signingKeys, tokens } = deps;
  const tokenLimit = perMinuteLimit(app, {
    max: () => deps.tokenRateLimit,
    bucket: (request) => `token:${request.ip}`,
    exceeded: (retryAfterSeconds, max) =>
      new ApiError(429, 'rate_limited', `Too many token requests: at most ${max} per minute.`, {
        headers: { 'retry-after': String(retryAfterSeconds) },
      }),
  });
  const authenticatedClients = new WeakMap<FastifyRequest, AuthenticatedClient>();

  /**
   * Client authentication, after the body is parsed and before it is validated (a request without a valid client is
   * a 401 whatever its body): HTTP Basic, or `client_id` and `client_secret` in the form, never both (RFC 6749
   * section 2.3).
   */
  const authenticateClient = async (request: FastifyRequest) => {
    const header = request.headers.authorization;
    const basic = basicCredentials(Array.isArray(header) ? header[0] : header);
    if (basic === 'malformed')
      throw invalidClient('Authenticate the client with HTTP Basic or client_secret_post.');
    const form =
      request.body && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : {};
    const postedSecret = typeof form.client_secret === 'string' ? form.client_secret : undefined;
    const postedId = typeof form.client_id === 'string' ? form.client_id : undefined;
    if (basic && postedSecret !== undefined)
      throw invalidRequest(
        'Use one client authentication method: HTTP Basic or client_secret_post, not both.',
      );
    if (basic && postedId !== undefined && postedId !== basic.id)
      throw invalidClient('client_id differs from the client of the Authorization header.');
    const credentials =
      basic ??
      (postedId !== undefined && postedSecret !== undefined
        ? { id: postedId, secret: postedSecret }
        : undefined);
    if (!credentials)
      throw invalidClient('Client authentication is required (HTTP Basic or client_secret_post).');
    const client = await clients.authenticate(credentials.id, credentials.secret);
    if (!client) throw invalidClient('The client is unknown, revoked, or its secret is wrong.');
    authenticatedClients.set(request, client);
  };

  await app.register(async (plugin) => {
    const scope = plugin as unknown as ServiceApp;
    scope.post(
      '/oauth/token',
      {
        // The platform's form parser (a repeated parameter becomes a list, which the body schema refuses:
        // RFC 6749 section 3.2, parameters "MUST NOT be included more than once").
        config: { errorFormat: formatOAuthError, formBody: true },
        bodyLimit: TOKEN_BODY_LIMIT,
        onRequest: tokenLimit,
        preValidation: authenticateClient,
        schema: {
          operationId: 'requestAccessToken',
          tags: ['oauth'],
          summary: 'Token endpoint: an access token for the client_credentials grant (RFC 6749 section 4.4)',
          description:
            'Form-encoded (`application/x-www-form-urlencoded`). The client authenticates with HTTP Basic ' +
            '(`client_id:client_secret`, RFC 6749 section 2.3.1) or `client_secret_post` (`client_id` and ' +
            '`client_secret` in the form), never both. `scope` is optional (default: every scope of the client). ' +
            'The answer and the errors are OAuth JSON (not JSON:API), with `Cache-Control: no-store`. The token is a ' +
            'JWT (RFC 9068) signed ES256; send it as `Authorization: Bearer <token>`.',
          security: [{ oauthClient: [] }],
          consumes: [FORM],
          body: TokenRequestBody,
          response: {
            200: TokenResponse,
            400: OAuthErrorBody,
            401: OAuthErrorBody,
            413: OAuthErrorBody,
            415: OAuthErrorBody,
            429: OAuthErrorBody,
          },
        },
      },
      async (request, reply) => {
        reply.headers(NO_STORE);
        const type = String(request.headers['content-type'] ?? '').toLowerCase();
        if (!type.startsWith(FORM))
          throw invalidRequest('The token request must be application/x-www-form-urlencoded.');
        const client = authenticatedClients.get(request);
        if (!client) throw invalidClient('Client authentication is required.');
        const body = request.body;
        if (body.grant_type !== 'client_credentials') throw unsupportedGrantType(body.grant_type);
        const scopes = grantedScopes(client, body.scope);
        const issued = await tokens.issue(client, scopes);
        return {
          access_token: issued.accessToken,
          token_type: 'Bearer' as const,
          expires_in: issued.expiresIn,
          scope: issued.scopes.join(' '),
        };
      },
    );
  });

  app.get(
    '/.well-known/oauth-authorization-server',
    {
      schema: {
        operationId: 'getAuthorizationServerMetadata',
        tags: ['oauth'],
        summary: 'OAuth authorization server metadata (RFC 8414)',
        security: [],
        response: { 200: AuthorizationServerMetadata },
      },
    },
    async () => {
      const base = deps.publicUrl();
      return {
        issuer: base,
        token_endpoint: `${base}/oauth/token`,
        jwks_uri: `${base}/.well-known/jwks.json`,
        scopes_supported: SCOPE_NAMES,
        // No authorization endpoint: client_credentials is the only grant.
        response_types_supported: [],
        grant_types_supported: ['client_credentials'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        service_documentation: `${base}/docs`,
      };
    },
  );

  app.get(
    '/.well-known/oauth-protected-resource',
    {
      schema: {
        operationId: 'getProtectedResourceMetadata',
        tags: ['oauth'],
        summary:
          'OAuth protected resource metadata (RFC 9728): the issuers whose access tokens this API accepts',
        security: [],
        response: { 200: ProtectedResourceMetadata },
      },
    },
    async () => {
      const base = deps.publicUrl();
      return {
        resource: base,
        authorization_servers: [base, ...(deps.externalIssuer ? [deps.externalIssuer] : [])],
        scopes_supported: SCOPE_NAMES,
        bearer_methods_supported: ['header'],
        resource_documentation: `${base}/docs`,
      };
    },
  );

  app.get(
    '/.well-known/jwks.json',
    {
      schema: {
        operationId: 'getJwks',
        tags: ['oauth'],
        summary: 'The public keys that sign this service’s access tokens (JWK set, RFC 7517)',
        description:
          'The active key and every retired key until all tokens it signed have expired. Match a token’s `kid`; ' +
          'fetch again when a token names a `kid` not seen yet (after a rotation).',
        security: [],
        response: { 200: JwkSet },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return signingKeys.jwks();
    },
  );

  const { merchant, apiKeyOnly, post } = ctx;
  app.post(
    '/v1/oauth-clients',
    {
      onRequest: merchant,
      schema: {
        operationId: 'createOAuthClient',
        tags: ['oauth'],
        summary: 'Register an OAuth client for the caller’s party (secret shown once; API keys only)',
        description:
          'A confidential client for the client_credentials grant. Its tokens act for the caller’s party with at ' +
          'most the scopes given here (default all), which never exceed what an agent key may do.',
        security: bearer,
        headers: IdempotencyHeaders,
        body: CreateOAuthClientBody,
        response: { 201: RegisteredOAuthClientDocument, ...errors },
      },
    },
    async (request, reply) => {
      const principal = apiKeyOnly(request);
      const { name, scopes } = request.body.data.attributes;
      // The answer holds the secret: the idempotency record keeps it sealed (`clientSecret`), never in clear.
      return post(request, reply, principal.partyId, async (tx) => {
        const { client, clientSecret } = await clients.register(tx, principal.partyId, {
          name: name ?? null,
          scopes: scopes ?? SCOPE_NAMES,
        });
        const resource = clientResource(client);
        return {
          status: 201,
          body: { data: { ...resource, attributes: { ...resource.attributes, clientSecret } } },
        };
      });
    },
  );

  app.get(
    '/v1/oauth-clients',
    {
      onRequest: merchant,
      schema: {
        operationId: 'listOAuthClients',
        tags: ['oauth'],
        summary: 'List the caller’s OAuth clients, newest first, revoked ones too (API keys only)',
        security: bearer,
        querystring: PageQuery,
        response: { 200: OAuthClientListDocument, ...errors },
      },
    },
    async (request) => {
      const principal = apiKeyOnly(request);
      const number = request.query['page[number]'] ?? 1;
      const size = request.query['page[size]'] ?? 20;
      const { rows, total } = await clients.list(principal.partyId, size, (number - 1) * size);
      return pagedDocument(rows.map(clientResource), { number, size, total }, '/v1/oauth-clients');
    },
  );

  app.get(
    '/v1/oauth-clients/:clientId',
    {
      onRequest: merchant,
      schema: {
        operationId: 'getOAuthClient',
        tags: ['oauth'],
        summary: 'Read one of the caller’s OAuth clients (API keys only)',
        security: bearer,
        params: ClientParams,
        response: { 200: OAuthClientDocument, ...errors },
      },
    },
    async (request) => {
      const principal = apiKeyOnly(request);
      return { data: clientResource(await clients.get(principal.partyId, request.params.clientId)) };
    },
  );

  app.post(
    '/v1/oauth-clients/:clientId/revoke',
    {
      onRequest: merchant,
      schema: {
        operationId: 'revokeOAuthClient',
        tags: ['oauth'],
        summary:
          'Revoke one of the caller’s OAuth clients: its access tokens are refused at once (API keys only)',
        description:
          'Every instance refuses the client’s tokens when the revocation commits (PostgreSQL NOTIFY), and the ' +
          'client can get no new ones. Revoking a revoked client answers 204 again.',
        security: bearer,
        headers: IdempotencyHeaders,
        params: ClientParams,
        response: { 204: { type: 'null' }, ...errors },
      },
    },
    async (request, reply) => {
      const principal = apiKeyOnly(request);
      const sent = await post(request, reply, principal.partyId, async (tx) => {
        await clients.revoke(request.params.clientId, principal.partyId, tx);
        return { status: 204, body: null };
      });
      // Committed: forget what this instance cached meanwhile (others do on the NOTIFY).
      clients.forgetStates();
      return sent;
    },
  );

  const ops = { tags: ['operator'], security: [{ operatorToken: [] }] };
  app.get(
    '/_ops/oauth/signing-keys',
    {
      schema: {
        ...ops,
        operationId: 'opsListSigningKeys',
        summary: 'List the OAuth signing keys (active, retired and still published, expired), newest first',
        response: { 200: Type.Object({ keys: Type.Array(SigningKeyRecord) }), 401: ErrorBody },
      },
    },
    async () => ({ keys: (await signingKeys.list()).map(keyRecord) }),
  );

  app.post(
    '/_ops/oauth/signing-keys/rotate',
    {
      schema: {
        ...ops,
        operationId: 'opsRotateSigningKey',
        summary: 'Rotate the OAuth signing key: a new key signs from now on; the old one stays published',
        description:
          'The retired key loses its private half and stays in the JWKS until every token it signed has expired ' +
          '(its retirement + the longest token lifetime it signed + 30 s leeway). Every instance switches at once.',
        response: { 201: Type.Object({ key: SigningKeyRecord }), 401: ErrorBody },
      },
    },
    async (_request, reply) => reply.code(201).send({ key: keyRecord(await signingKeys.rotate()) }),
  );
}
