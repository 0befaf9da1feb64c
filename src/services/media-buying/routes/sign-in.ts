/**
 * Signup, sign-in by emailed code and password reset (spec "Sign-in and signup": `POST /auth/magic-code`,
 * `POST /auth/verify-code`; the registration and reset paths are ours): the requests that send mail answer one
 * generic message whatever the account (`identity/identity-mail.ts`); the ones that complete a sign-in answer like
 * `POST /auth/password` (a session cookie, or `{requiresSignup: true, redirectUrl}`).
 */
import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../../platform/http.ts';
import { type Accounts, GENERIC_MESSAGES, type IdentityFlows } from '../identity/index.ts';
import { invalidSignInCode } from '../media-buying-errors.ts';
import { Email, Envelope, ErrorEnvelope } from '../media-buying-schemas.ts';
import { SignInResult } from './auth.ts';
import type { MediaBuyingRouteContext } from './context.ts';

const Generic = Envelope(
  Type.Object({ message: Type.String({ description: 'The same text whatever the state of the account.' }) }),
);
const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' });
const NewPassword = Type.String({
  minLength: 1,
  maxLength: 1024,
  description: 'At least 10 characters, strong (zxcvbn score 3 or more), not in a breached-password list.',
});
const Code = Type.String({ pattern: '^[0-9]{6}$', description: 'The six digits of the mail.' });

/** Registers the signup, code and password-reset routes. */
export function registerSignInRoutes(
  app: ServiceApp,
  ctx: MediaBuyingRouteContext,
  deps: { accounts: Accounts; identity: IdentityFlows },
): void {
  const { accounts, identity } = deps;

  app.post(
    '/auth/signup',
    {
      onRequest: ctx.anonymous,
      schema: {
        operationId: 'signUp',
        tags: ['auth'],
        summary: 'Register with email, password and name (a verification code is mailed)',
        description:
          'Always 202 with the same message, whether or not the email already has an account (an existing ' +
          'account gets a mail saying so). The password must meet the policy (422 otherwise); it takes effect when ' +
          'the mailed code is verified (`POST /auth/verify-code`), which then answers `{requiresSignup: true, ' +
          'redirectUrl}` to continue with account creation. Mail is limited per email and per client address (429).',
        security: [],
        body: Type.Object(
          { email: Email, password: NewPassword, name: Name },
          {
            additionalProperties: false,
            examples: [
              { email: 'ada@example.com', password: 'violet anchor tundra 42', name: 'Ada Lovelace' },
            ],
          },
        ),
        response: {
          202: Generic,
          400: ErrorEnvelope,
          403: ErrorEnvelope,
          422: ErrorEnvelope,
          429: ErrorEnvelope,
        },
      },
    },
    async (request, reply) => {
      await identity.mail.requestSignup(request.body, request.ip);
      return reply.code(202).send(ctx.ok({ message: GENERIC_MESSAGES.signup }));
    },
  );

  app.post(
    '/auth/magic-code',
    {
      onRequest: ctx.anonymous,
      schema: {
        operationId: 'requestMagicCode',
        tags: ['auth'],
        summary: 'Mail a six-digit sign-in code (the same answer whatever the account)',
        description:
          'Always 202 with the same message: a code is sent if an account exists. Nothing in the answer or its ' +
          'timing depends on the account (one background job decides). The code lives 10 minutes, works once and ' +
          'allows 5 attempts; a new code replaces the previous one. Mail is limited per email and per client ' +
          'address (429 with Retry-After).',
        security: [],
        body: Type.Object(
          { email: Email },
          { additionalProperties: false, examples: [{ email: 'ada@example.com' }] },
        ),
        response: { 202: Generic, 400: ErrorEnvelope, 403: ErrorEnvelope, 429: ErrorEnvelope },
      },
    },
    async (request, reply) => {
      await identity.mail.requestSignInCode(request.body.email, request.ip);
      return reply.code(202).send(ctx.ok({ message: GENERIC_MESSAGES.magicCode }));
    },
  );

  app.post(
    '/auth/verify-code',
    {
      onRequest: ctx.anonymous,
      schema: {
        operationId: 'verifyMagicCode',
        tags: ['auth'],
        summary: 'Sign in with the mailed code (also verifies the email)',
        description:
          'Opens a browser session, or answers `{requiresSignup: true, redirectUrl}` for an identity without an ' +
          'account yet. A wrong, used, expired or dead code (and an unknown email) is one 401; wrong codes count as ' +
          'failed sign-ins of the account and the client address, like passwords (429 with Retry-After). The code of ' +
          'a signup sets the password chosen at signup only when that same `password` is sent with it: whoever merely ' +
          'receives the code (someone else may have signed up with their email) verifies the email and signs in, and ' +
          'no password they did not choose is installed.',
        security: [],
        body: Type.Object(
          {
            email: Email,
            code: Code,
            password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
          },
          {
            additionalProperties: false,
            examples: [{ email: 'ada@example.com', code: '042917', password: 'violet anchor tundra 42' }],
          },
        ),
        response: {
          200: Envelope(SignInResult),
          400: ErrorEnvelope,
          401: ErrorEnvelope,
          403: ErrorEnvelope,
          429: ErrorEnvelope,
        },
      },
    },
    async (request, reply) => {
      const finished = await identity.codes.verifyAndFinish(
        request.body.email,
        request.body.code,
        request.body.password,
        request.ip,
        (tx, verified) => accounts.finishSignIn(tx, verified, 'magic_code', null),
      );
      if (finished === undefined) throw invalidSignInCode();
      return ctx.signedIn(reply, finished);
    },
  );

  app.post(
    '/auth/password-reset',
    {
      onRequest: ctx.anonymous,
      schema: {
        operationId: 'requestPasswordReset',
        tags: ['auth'],
        summary: 'Mail a password-reset link (the same answer whatever the account)',
        description:
          'Always 202 with the same message: a link is sent if an account exists. The link (`#token=mbp_...`) ' +
          'works once, for 30 minutes. Mail is limited per email and per client address (429).',
        security: [],
        body: Type.Object(
          { email: Email },
          { additionalProperties: false, examples: [{ email: 'ada@example.com' }] },
        ),
        response: { 202: Generic, 400: ErrorEnvelope, 403: ErrorEnvelope, 429: ErrorEnvelope },
      },
    },
    async (request, reply) => {
      await identity.mail.requestPasswordReset(request.body.email, request.ip);
      return reply.code(202).send(ctx.ok({ message: GENERIC_MESSAGES.passwordReset }));
    },
  );

  app.post(
    '/auth/password-reset/confirm',
    {
      onRequest: ctx.anonymous,
      schema: {
        operationId: 'confirmPasswordReset',
        tags: ['auth'],
        summary: 'Set a new password with the mailed link, and sign in',
        description:
          'The new password meets the signup policy (422 otherwise). The token works once; every other session ' +
          'of the account ends (on every instance) and a new one opens (or, without an account yet, ' +
          '`{requiresSignup: true, redirectUrl}`).',
        security: [],
        body: Type.Object(
          {
            token: Type.String({
              minLength: 1,
              maxLength: 200,
              description: 'The `mbp_...` token of the link.',
            }),
            password: NewPassword,
          },
          {
            additionalProperties: false,
            examples: [
              {
                token: 'mbp_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG',
                password: 'violet anchor tundra 42',
              },
            ],
          },
        ),
        response: {
          200: Envelope(SignInResult),
          400: ErrorEnvelope,
          401: ErrorEnvelope,
          403: ErrorEnvelope,
          422: ErrorEnvelope,
        },
      },
    },
    async (request, reply) => {
      const finished = await ctx.deps.db.transaction(async (tx) => {
        const reset = await identity.resets.confirm(tx, request.body.token, request.body.password);
        return accounts.finishSignIn(tx, reset, 'reset', null);
      });
      return ctx.signedIn(reply, finished);
    },
  );
}
