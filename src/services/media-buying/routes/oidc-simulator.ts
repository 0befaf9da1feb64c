/**
 * The HTTP face of the built-in OpenID Connect provider simulator (`sso/oidc-simulator.ts`), served under
 * `/_sim/oidc` only while it is the SSO provider (no `MEDIA_BUYING_OIDC_ISSUER`): discovery, JWKS, the authorization
 * page and its form, the token endpoint; and the operator route that gives a client's secret (to use the simulator
 * from another service or instance). The token endpoint answers OAuth's errors (`{error, error_description}`, RFC
 * 6749 section 5.2), which OAuth clients read; the pages and documents answer the service's envelope.
 */
import { Type } from '@sinclair/typebox';
import { type ApiError, invalidRequest } from '../../../platform/errors.ts';
import type { ServiceApp } from '../../../platform/http.ts';
import { ErrorEnvelope } from '../media-buying-schemas.ts';
import {
  type AuthorizationParams,
  LOGIN_PATTERN,
  type OidcSimulator,
  SIMULATOR_EMAIL_DOMAIN,
  SIMULATOR_PATH,
  SIMULATOR_PEOPLE,
} from '../sso/index.ts';
import { renderSimulatorPage, roundTripPageHeaders } from '../ui/index.ts';
import type { MediaBuyingRouteContext } from './context.ts';

const tags = ['sso simulator'];
const OAuthError = Type.Object({ error: Type.String(), error_description: Type.Optional(Type.String()) });
const Json = Type.Record(Type.String(), Type.Unknown());

const bounded = (maxLength: number) => Type.Optional(Type.String({ maxLength }));
const AuthorizationFields = {
  response_type: bounded(50),
  client_id: bounded(200),
  redirect_uri: bounded(2000),
  scope: bounded(500),
  state: bounded(512),
  nonce: bounded(512),
  code_challenge: bounded(128),
  code_challenge_method: bounded(20),
};

/** Errors of the simulator in OAuth's form. */
function simulatorErrorFormat(error: ApiError): { body: unknown } {
  const code =
    error.status === 401 ? 'invalid_client' : error.status >= 500 ? 'server_error' : 'invalid_request';
  return { body: { error: code, error_description: error.message } };
}

/** The authorization request of a query or form, without the person fields. */
function authorizationParams(source: Record<string, string | undefined>): AuthorizationParams {
  const out: AuthorizationParams = {};
  for (const name of Object.keys(AuthorizationFields) as (keyof AuthorizationParams)[])
    if (source[name] !== undefined) out[name] = source[name];
  return out;
}

/** Registers the simulator routes. */
export function registerOidcSimulatorRoutes(
  app: ServiceApp,
  ctx: MediaBuyingRouteContext,
  simulator: OidcSimulator,
): void {
  app.get(
    `${SIMULATOR_PATH}/.well-known/openid-configuration`,
    {
      schema: {
        operationId: 'simOidcDiscovery',
        tags,
        summary: 'Simulator: OpenID provider metadata',
        security: [],
        response: { 200: Json },
      },
    },
    async () => simulator.discovery(),
  );

  app.get(
    `${SIMULATOR_PATH}/jwks`,
    {
      schema: {
        operationId: 'simOidcJwks',
        tags,
        summary: "Simulator: the ID tokens' signing keys",
        security: [],
        response: { 200: Type.Object({ keys: Type.Array(Json) }) },
      },
    },
    async () => simulator.jwks(),
  );

  app.get(
    `${SIMULATOR_PATH}/authorize`,
    {
      schema: {
        operationId: 'simOidcAuthorizePage',
        tags,
        summary: 'Simulator: the authorization page (choose a test identity)',
        description: `Only people at ${SIMULATOR_EMAIL_DOMAIN}. A bad request is a 400 and is never redirected.`,
        security: [],
        querystring: Type.Object(AuthorizationFields),
        produces: ['text/html'],
        response: { 200: { description: 'HTML page', type: 'string' }, 400: ErrorEnvelope },
      },
    },
    async (request, reply) => {
      const params = authorizationParams(request.query);
      const problem = simulator.authorizationProblem(params);
      if (problem) throw invalidRequest([{ location: 'query', ...problem }]);
      return reply
        .headers(roundTripPageHeaders(new URL(params.redirect_uri!).origin))
        .type('text/html; charset=utf-8')
        .send(renderSimulatorPage(params, SIMULATOR_PEOPLE, SIMULATOR_EMAIL_DOMAIN));
    },
  );

  app.post(
    `${SIMULATOR_PATH}/authorize`,
    {
      // Posted from the simulator's own page (the service's origin): a form on another site cannot sign anyone in.
      onRequest: ctx.servicePage,
      config: { formBody: true },
      schema: {
        operationId: 'simOidcAuthorize',
        tags,
        summary: 'Simulator: sign the chosen person in (303 to the redirect URI with code, state and iss)',
        security: [],
        body: Type.Object(
          {
            ...AuthorizationFields,
            login: Type.String({ maxLength: 64, description: `The part before @${SIMULATOR_EMAIL_DOMAIN}.` }),
            name: Type.String({ minLength: 1, maxLength: 200 }),
            email_verified: Type.Optional(Type.String({ maxLength: 5 })),
          },
          {
            additionalProperties: false,
            examples: [
              {
                response_type: 'code',
                client_id: 'media-buying',
                redirect_uri: 'http://127.0.0.1:4100/sign-in/sso/callback',
                scope: 'openid email profile',
                state: 'mbst_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG',
                nonce: 'n-0S6_WzA2Mj',
                code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
                code_challenge_method: 'S256',
                login: 'ada',
                name: 'Ada Lovelace',
                email_verified: 'true',
              },
            ],
          },
        ),
        response: {
          303: { description: 'To the redirect URI with `code`, `state` and `iss`.', type: 'null' },
          400: ErrorEnvelope,
        },
      },
    },
    async (request, reply) => {
      const params = authorizationParams(request.body);
      const problem =
        simulator.authorizationProblem(params) ??
        (LOGIN_PATTERN.test(request.body.login)
          ? undefined
          : { field: 'login', message: 'must be 1-64 of a-z, 0-9, ".", "_", "-"' });
      if (problem) throw invalidRequest([{ location: 'body', ...problem }]);
      const location = simulator.authorize(params, {
        login: request.body.login,
        name: request.body.name,
        emailVerified: request.body.email_verified === 'true' || request.body.email_verified === 'on',
      });
      return reply.code(303).header('location', location).header('cache-control', 'no-store').send(null);
    },
  );

  app.post(
    `${SIMULATOR_PATH}/token`,
    {
      config: { errorFormat: simulatorErrorFormat, formBody: true },
      schema: {
        operationId: 'simOidcToken',
        tags,
        summary: 'Simulator: token endpoint (authorization code grant, PKCE S256)',
        description:
          'Client authentication by HTTP Basic or `client_secret_post`. Errors as RFC 6749 section 5.2.',
        security: [],
        body: Type.Object(
          {
            grant_type: Type.String({ maxLength: 100 }),
            code: Type.Optional(Type.String({ maxLength: 4096 })),
            redirect_uri: Type.Optional(Type.String({ maxLength: 2000 })),
            code_verifier: Type.Optional(Type.String({ maxLength: 128 })),
            client_id: Type.Optional(Type.String({ maxLength: 200 })),
            client_secret: Type.Optional(Type.String({ maxLength: 200 })),
          },
          {
            additionalProperties: true,
            examples: [
              {
                grant_type: 'authorization_code',
                code: 'v1.abc.def.ghi',
                redirect_uri: 'http://127.0.0.1:4100/sign-in/sso/callback',
                code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
              },
            ],
          },
        ),
        response: {
          200: Type.Object({
            access_token: Type.String(),
            token_type: Type.Literal('Bearer'),
            expires_in: Type.Integer(),
            scope: Type.String(),
            id_token: Type.String(),
          }),
          400: OAuthError,
          401: OAuthError,
        },
      },
    },
    async (request, reply) => {
      const form = Object.fromEntries(
        Object.entries(request.body).map(([k, v]) => [k, typeof v === 'string' ? v : undefined]),
      );
      const answer = await simulator.token(form, request.headers.authorization);
      // The answer is one of the declared ones (the simulator's token answer or an OAuth error).
      return reply
        .code(answer.status as 200)
        .headers(answer.headers)
        .send(answer.body as never);
    },
  );

  app.post(
    '/_ops/oidc-simulator/clients',
    {
      schema: {
        tags: ['operator'],
        security: [{ operatorToken: [] }],
        operationId: 'opsOidcSimulatorClient',
        summary: 'The OIDC simulator: the issuer and the client secret of a client id (to use it elsewhere)',
        body: Type.Object(
          { clientId: Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9._:-]+$' }) },
          { additionalProperties: false, examples: [{ clientId: 'another-service' }] },
        ),
        response: {
          200: Type.Object({ issuer: Type.String(), clientId: Type.String(), clientSecret: Type.String() }),
          400: ErrorEnvelope,
          401: ErrorEnvelope,
        },
      },
    },
    async (request) => ({
      issuer: simulator.issuer(),
      clientId: request.body.clientId,
      clientSecret: simulator.clientSecret(request.body.clientId),
    }),
  );
}
