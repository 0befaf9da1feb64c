/** `POST /api/auth/login`, `GET /api/auth/me`, `POST /api/auth/logout` (spec E, "E. Identities"). */
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { ApiError } from '../../../platform/errors.ts';
import type { ServiceApp } from '../../../platform/http.ts';
import type { FailureCounter } from '../../../platform/rate-limit.ts';
import { rateLimited } from '../agent-gateway-errors.ts';
import { ErrorBody, RoleSchema, UserSchema } from '../agent-gateway-schemas.ts';
import type { IdentityService } from '../identity.ts';
import { type GatewayRouteContext, SECURITY } from './context.ts';

/** `Cache-Control: no-store` on an answer that carries a secret (a token shown once): no cache keeps it. */
export function noStore(reply: FastifyReply): void {
  reply.header('cache-control', 'no-store');
}

/**
 * Registers the sign-in routes. Failed sign-ins (401) are counted per username in `failures` (one-minute windows);
 * a username with `loginFailuresPerMinute` failures in its window is answered 429 with `Retry-After` until the
 * window ends, whatever the password. Successful sign-ins are not counted. The platform also refuses a client
 * address after 30 failed authentications a minute (spraying many usernames).
 */
export function registerAuthRoutes(
  app: ServiceApp,
  ctx: GatewayRouteContext,
  deps: { identity: IdentityService; loginFailuresPerMinute: number; failures: FailureCounter },
): void {
  const bucket = (username: string) => `user:${username.toLowerCase()}`;
  app.post(
    '/api/auth/login',
    {
      schema: {
        operationId: 'login',
        tags: ['identity'],
        summary: 'Sign in: a bearer token for the product API',
        description:
          'Users are created by the operator. The token is opaque, shown once (`Cache-Control: no-store`), stored ' +
          'as its SHA-256, and expires (`expiresAt`). Wrong username and wrong password get the same 401. After ' +
          `${deps.loginFailuresPerMinute} failed attempts in a minute a username is refused (429 with Retry-After) ` +
          'until the minute ends; successful sign-ins are not counted.',
        security: [],
        body: Type.Object(
          {
            username: Type.String({ minLength: 1, maxLength: 100 }),
            password: Type.String({ minLength: 1, maxLength: 1000 }),
          },
          {
            additionalProperties: false,
            examples: [{ username: 'demo', password: 'correct horse battery staple' }],
          },
        ),
        response: {
          200: Type.Object({
            token: Type.String(),
            tokenType: Type.Literal('Bearer'),
            expiresAt: Type.String({ format: 'date-time' }),
            user: UserSchema,
          }),
          400: ErrorBody,
          401: ErrorBody,
          429: ErrorBody,
        },
      },
    },
    async (request, reply) => {
      const key = bucket(request.body.username);
      const window = await deps.failures.peek(key).catch(() => undefined);
      if (window && window.count >= deps.loginFailuresPerMinute)
        throw rateLimited('failed sign-ins of this username', Math.max(1, Math.ceil(window.ttlMs / 1000)));
      try {
        const { token, expiresAt, user } = await deps.identity.login(
          request.body.username,
          request.body.password,
        );
        noStore(reply);
        return { token, tokenType: 'Bearer' as const, expiresAt: expiresAt.toISOString(), user };
      } catch (err) {
        if (err instanceof ApiError && err.status === 401)
          await deps.failures.count(key).catch(() => undefined);
        throw err;
      }
    },
  );

  app.get(
    '/api/auth/me',
    {
      onRequest: ctx.auth.session.onRequest,
      schema: {
        operationId: 'getCurrentIdentity',
        tags: ['identity'],
        summary: 'The signed-in user and the scopes where they have a role',
        security: SECURITY.session,
        response: {
          200: Type.Object({
            user: UserSchema,
            scopes: Type.Array(
              Type.Object({ tenant: Type.String(), namespace: Type.String(), role: RoleSchema }),
            ),
          }),
          401: ErrorBody,
        },
      },
    },
    async (request) => {
      const principal = ctx.auth.session.principal(request);
      const user = await deps.identity.findUser(principal.userId!);
      return { user: user!, scopes: await deps.identity.scopesOf(principal.userId!) };
    },
  );
}

/**
 * `POST /api/auth/logout`, registered after every other route: the generated contract and fuzz suites call the
 * operations in document order with the seeded token, and a sign-out early in the document would end their token
 * before the later operations were reached.
 */
export function registerLogoutRoute(
  app: ServiceApp,
  ctx: GatewayRouteContext,
  identity: IdentityService,
): void {
  app.post(
    '/api/auth/logout',
    {
      onRequest: ctx.auth.session.onRequest,
      schema: {
        operationId: 'logout',
        tags: ['identity'],
        summary: 'Sign out: the token stops working at once, on every instance',
        security: SECURITY.session,
        response: { 204: Type.Null(), 401: ErrorBody },
      },
    },
    async (request, reply) => {
      await identity.logout(ctx.auth.session.principal(request).credentialId);
      return reply.code(204).send(null);
    },
  );
}
