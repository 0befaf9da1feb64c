/**
 * The sign-in round trips (spec "Sign-in and signup"): the hosted sign-in of the built-in identity provider
 * (`GET /auth/url` -> `GET /auth/authorize` -> `POST /auth/token`) and SSO through an OpenID Connect provider
 * (`GET /auth/sso/url` -> the provider -> `POST /auth/sso/callback`). `signup_experience` is routing metadata kept
 * server-side across the round trip (it grants nothing); the four legacy endpoints answer
 * `SIGNUP_EXPERIENCE_STATE_UNAVAILABLE` as the flat 503 `{error, message, retryable: true}`, every other error in the
 * envelope (`identity/sign-in-states.ts` has the cases).
 */
import { Type } from '@sinclair/typebox';
import { clientBucket } from '../../../platform/addresses.ts';
import type { ServiceApp } from '../../../platform/http.ts';
import { perMinuteLimit } from '../../../platform/rate-limit.ts';
import { StringEnum } from '../../../platform/schemas.ts';
import {
  type Accounts,
  BROWSER_BINDING_COOKIE,
  browserBinding,
  type IdentityFlows,
  SIGNUP_EXPERIENCES,
  STATE_SECONDS,
} from '../identity/index.ts';
import { formatLegacyAuthError, rateLimited } from '../media-buying-errors.ts';
import { Email, Envelope, ErrorEnvelope } from '../media-buying-schemas.ts';
import type { SsoClient } from '../sso/index.ts';
import { renderHostedSignInPage, roundTripPageHeaders } from '../ui/index.ts';
import { SignInResult } from './auth.ts';
import type { MediaBuyingRouteContext } from './context.ts';

/** The flat 503 of the four legacy auth endpoints (spec "Errors"). */
const LegacyAuthError = Type.Object(
  {
    error: Type.Literal('SIGNUP_EXPERIENCE_STATE_UNAVAILABLE'),
    message: Type.String(),
    retryable: Type.Literal(true),
  },
  { description: 'Restart sign-in; never rebuild the state.' },
);

/** A 503 of the legacy endpoints: the flat body for a routing-intent flow, else `SERVICE_UNAVAILABLE` enveloped. */
const Unavailable = Type.Union([LegacyAuthError, ErrorEnvelope]);

const UrlQuery = Type.Object(
  {
    signup_experience: Type.Optional(
      StringEnum(SIGNUP_EXPERIENCES, {
        description:
          'Routing metadata only (which signup form to show): it grants nothing and is never inferred.',
      }),
    ),
  },
  { additionalProperties: false },
);

const UrlAnswer = Envelope(
  Type.Object({
    url: Type.String({ description: 'Send the browser here.' }),
    expiresAt: Type.String({ format: 'date-time', description: 'When the round trip must be completed by.' }),
  }),
);

const Completion = Type.Object(
  {
    code: Type.String({ minLength: 1, maxLength: 4096, description: 'The `code` of the callback.' }),
    state: Type.String({
      minLength: 1,
      maxLength: 512,
      description: 'The `state` of the callback, as received.',
    }),
  },
  { additionalProperties: false },
);

const AuthorizationQuery = Type.Object({
  response_type: Type.String({ maxLength: 50 }),
  client_id: Type.String({ maxLength: 200 }),
  redirect_uri: Type.String({ maxLength: 2000 }),
  state: Type.String({ maxLength: 512 }),
  code_challenge: Type.String({ maxLength: 128 }),
  code_challenge_method: Type.String({ maxLength: 20 }),
});

const html = { description: 'HTML page', type: 'string' } as const;

/** The answers of a round trip's completion (`POST /auth/token`, `POST /auth/sso/callback`). */
const completionAnswers = {
  200: Envelope(SignInResult),
  400: ErrorEnvelope,
  401: ErrorEnvelope,
  403: ErrorEnvelope,
  422: ErrorEnvelope,
  503: Unavailable,
};

/** Sign-in round trips one client address may start per minute (each stores a state). */
export const SIGN_IN_STARTS_PER_MINUTE = 100;

/**
 * Round-trip completions one client address may send per minute: a refused callback consumes nothing, and an SSO
 * callback calls the provider's token endpoint, so retries are bounded.
 */
export const SIGN_IN_COMPLETIONS_PER_MINUTE = 30;

/** Registers the hosted sign-in and SSO routes. */
export function registerOAuthSignInRoutes(
  app: ServiceApp,
  ctx: MediaBuyingRouteContext,
  deps: { accounts: Accounts; identity: IdentityFlows; sso: SsoClient },
): void {
  const { identity, sso } = deps;

  /** Each start stores a state: at most {@link SIGN_IN_STARTS_PER_MINUTE} per client address and minute. */
  const startLimit = perMinuteLimit(app, {
    max: () => SIGN_IN_STARTS_PER_MINUTE,
    bucket: (request) => `sign-in-start:${clientBucket(request.ip)}`,
    exceeded: (retryAfterSeconds, max) =>
      rateLimited(
        `More than ${max} sign-ins started per minute from this address; retry later.`,
        retryAfterSeconds,
      ),
  });

  /** Each completion may call the provider: at most {@link SIGN_IN_COMPLETIONS_PER_MINUTE} per client address. */
  const completionLimit = perMinuteLimit(app, {
    max: () => SIGN_IN_COMPLETIONS_PER_MINUTE,
    bucket: (request) => `sign-in-completion:${clientBucket(request.ip)}`,
    exceeded: (retryAfterSeconds, max) =>
      rateLimited(
        `More than ${max} sign-in completions per minute from this address; retry later.`,
        retryAfterSeconds,
      ),
  });

  app.get(
    '/auth/url',
    {
      onRequest: startLimit,
      config: { errorFormat: formatLegacyAuthError },
      schema: {
        operationId: 'getSignInUrl',
        tags: ['auth'],
        summary: 'Start the hosted sign-in: the URL of the sign-in page',
        description:
          "The built-in identity provider's hosted sign-in page (an OAuth 2.0 authorization endpoint for the " +
          'first-party UI, PKCE S256). It redirects to `<UI origin>/sign-in/callback?code&state`, which the UI ' +
          'posts to `POST /auth/token` within 10 minutes. With `signup_experience`, a state that cannot be stored ' +
          'is a flat 503 `SIGNUP_EXPERIENCE_STATE_UNAVAILABLE`.',
        security: [],
        querystring: UrlQuery,
        response: { 200: UrlAnswer, 400: ErrorEnvelope, 429: ErrorEnvelope, 503: Unavailable },
      },
    },
    async (request, reply) => {
      ctx.noStore(reply);
      const binding = browserBinding(ctx.cookieOf(request, BROWSER_BINDING_COOKIE));
      const started = await identity.hosted.start(request.query.signup_experience ?? null, binding);
      ctx.setFlowCookie(reply, BROWSER_BINDING_COOKIE, binding, STATE_SECONDS);
      return ctx.ok({ url: started.url, expiresAt: started.expiresAt.toISOString() });
    },
  );

  app.get(
    '/auth/authorize',
    {
      schema: {
        operationId: 'getHostedSignInPage',
        tags: ['auth'],
        summary: 'The hosted sign-in page (authorization endpoint of the first-party UI)',
        description:
          'RFC 6749 section 4.1.1 with PKCE (RFC 7636): the first-party client, its registered redirect URI and an ' +
          'S256 challenge, as `GET /auth/url` builds them. A bad request is a 400 and is never redirected.',
        security: [],
        querystring: AuthorizationQuery,
        produces: ['text/html'],
        response: { 200: html, 400: ErrorEnvelope },
      },
    },
    async (request, reply) => {
      identity.hosted.checkRequest(request.query);
      return reply
        .headers(roundTripPageHeaders(new URL(identity.hosted.redirectUri).origin))
        .type('text/html; charset=utf-8')
        .send(renderHostedSignInPage(request.query));
    },
  );

  app.post(
    '/auth/authorize',
    {
      onRequest: ctx.servicePage,
      config: { formBody: true },
      schema: {
        operationId: 'authorizeHostedSignIn',
        tags: ['auth'],
        summary: 'Sign in on the hosted page: the authorization code',
        description:
          'The authorization request and the email and password. A form post is answered 303 to ' +
          '`redirect_uri?code=...&state=...`; a JSON post gets `{redirectUrl}`. Wrong email or password: 401; ' +
          'unverified email: 403; too many failures (shared with `POST /auth/password`): 429.',
        security: [],
        body: Type.Object(
          {
            ...AuthorizationQuery.properties,
            email: Email,
            password: Type.String({ minLength: 1, maxLength: 1024 }),
          },
          {
            additionalProperties: false,
            examples: [
              {
                response_type: 'code',
                client_id: 'media-buying-web',
                redirect_uri: 'http://127.0.0.1:4100/sign-in/callback',
                state: 'mbst_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG',
                code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
                code_challenge_method: 'S256',
                email: 'ada@example.com',
                password: 'violet anchor tundra 42',
              },
            ],
          },
        ),
        response: {
          200: Envelope(Type.Object({ redirectUrl: Type.String() })),
          303: { description: 'To the redirect URI with `code` and `state` (form posts).', type: 'null' },
          400: ErrorEnvelope,
          401: ErrorEnvelope,
          403: ErrorEnvelope,
          429: ErrorEnvelope,
        },
      },
    },
    async (request, reply) => {
      const { email, password, ...authorization } = request.body;
      const redirectUrl = await identity.hosted.authorize(authorization, { email, password }, request.ip);
      ctx.noStore(reply);
      if (/^application\/x-www-form-urlencoded/i.test(request.headers['content-type'] ?? ''))
        return reply.code(303).header('location', redirectUrl).send(null);
      return ctx.ok({ redirectUrl });
    },
  );

  app.post(
    '/auth/token',
    {
      onRequest: [...ctx.anonymous, completionLimit],
      config: { errorFormat: formatLegacyAuthError },
      schema: {
        operationId: 'completeSignIn',
        tags: ['auth'],
        summary: 'Complete the hosted sign-in with the callback code and state',
        description:
          'Opens a browser session, or answers `{requiresSignup: true, redirectUrl}` (the signup data then carries ' +
          "the round trip's `signup_experience`). The state is one-time and lives 10 minutes. For a flow started " +
          'with `signup_experience`, a state that is unavailable, expired, malformed or for the wrong flow is a ' +
          'flat 503 `SIGNUP_EXPERIENCE_STATE_UNAVAILABLE` (restart sign-in); otherwise a bad state is a 422.',
        security: [],
        body: Type.Object(Completion.properties, {
          additionalProperties: false,
          examples: [
            {
              code: 'mbac_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG',
              state: 'mbst_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG',
            },
          ],
        }),
        response: completionAnswers,
      },
    },
    async (request, reply) => {
      ctx.noStore(reply);
      const binding = ctx.cookieOf(request, BROWSER_BINDING_COOKIE);
      return ctx.signedIn(
        reply,
        await identity.hosted.complete(request.body.code, request.body.state, binding),
      );
    },
  );

  app.get(
    '/auth/sso/url',
    {
      onRequest: startLimit,
      config: { errorFormat: formatLegacyAuthError },
      schema: {
        operationId: 'getSsoUrl',
        tags: ['auth'],
        summary: "Start SSO: the OpenID Connect provider's authorization URL",
        description:
          'Authorization code flow with PKCE S256, `state` and `nonce` kept server-side. The provider redirects to ' +
          '`<UI origin>/sign-in/sso/callback?code&state&iss`, which the UI posts to `POST /auth/sso/callback` ' +
          'within 10 minutes. The provider is the built-in simulator (`/_sim/oidc`) unless ' +
          '`MEDIA_BUYING_OIDC_ISSUER` names another. 503 `SERVICE_UNAVAILABLE` when the provider cannot be ' +
          'reached; with `signup_experience`, a state that cannot be stored is a flat 503.',
        security: [],
        querystring: UrlQuery,
        response: { 200: UrlAnswer, 400: ErrorEnvelope, 429: ErrorEnvelope, 503: Unavailable },
      },
    },
    async (request, reply) => {
      ctx.noStore(reply);
      const binding = browserBinding(ctx.cookieOf(request, BROWSER_BINDING_COOKIE));
      const started = await sso.start(request.query.signup_experience ?? null, binding);
      ctx.setFlowCookie(reply, BROWSER_BINDING_COOKIE, binding, STATE_SECONDS);
      return ctx.ok({ url: started.url, expiresAt: started.expiresAt.toISOString() });
    },
  );

  app.post(
    '/auth/sso/callback',
    {
      onRequest: [...ctx.anonymous, completionLimit],
      config: { errorFormat: formatLegacyAuthError },
      schema: {
        operationId: 'completeSsoSignIn',
        tags: ['auth'],
        summary: 'Complete SSO with the callback code and state',
        description:
          'The code is exchanged at the provider and its ID token validated (issuer, audience, expiry, nonce, the ' +
          "provider's signature). The SSO identity is linked to an account by an earlier link, or only by an email " +
          'the provider marks verified (403 otherwise). Opens a session or answers `{requiresSignup: true, ' +
          'redirectUrl}`. State failures as `POST /auth/token`.',
        security: [],
        body: Type.Object(
          {
            ...Completion.properties,
            iss: Type.Optional(
              Type.String({
                maxLength: 2000,
                description: 'The `iss` of the callback (RFC 9207), when present.',
              }),
            ),
          },
          {
            additionalProperties: false,
            examples: [
              {
                code: 'v1.abc.def.ghi',
                state: 'mbst_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG',
                iss: 'http://127.0.0.1:4100/_sim/oidc',
              },
            ],
          },
        ),
        response: completionAnswers,
      },
    },
    async (request, reply) => {
      ctx.noStore(reply);
      return ctx.signedIn(
        reply,
        await sso.complete({ ...request.body, binding: ctx.cookieOf(request, BROWSER_BINDING_COOKIE) }),
      );
    },
  );
}
