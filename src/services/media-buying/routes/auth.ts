/**
 * Sign-in with a password, sign-out and the current user (spec "Sign-in and signup": `POST /auth/password`,
 * `GET /auth/me`).
 */
import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../../platform/http.ts';
import { StringEnum } from '../../../platform/schemas.ts';
import type { Caller } from '../credentials/index.ts';
import { MEMBERSHIP_ROLES } from '../db/schema.ts';
import type { Accounts, SignInOutcome } from '../identity/index.ts';
import { forbidden, invalidSignIn } from '../media-buying-errors.ts';
import {
  Email,
  Envelope,
  ErrorEnvelope,
  MembershipRecord,
  OrganizationRecord,
  security,
  UserRecord,
} from '../media-buying-schemas.ts';
import type { Organizations } from '../organizations/index.ts';
import type { MediaBuyingRouteContext } from './context.ts';

/** The answer of a sign-in: signed in (a session cookie is set), or an interrupted signup to resume. */
export const SignInResult = Type.Union([
  Type.Object({
    requiresSignup: Type.Literal(false),
    user: UserRecord,
    organization: Type.Union([OrganizationRecord, Type.Null()]),
  }),
  Type.Object({
    requiresSignup: Type.Literal(true),
    redirectUrl: Type.String({
      description: 'The signup path with a pending flag and the opaque signup-recovery token (ten minutes).',
    }),
  }),
]);

/** The access of the caller, per function, as `GET /auth/me` shows it. */
const AccessRecord = Type.Object({
  buyer: Type.Optional(StringEnum(['read', 'write', 'admin'] as const)),
  seller: Type.Optional(StringEnum(['read', 'write', 'admin'] as const)),
});

/** `GET /auth/me`. */
const Me = Type.Object({
  user: UserRecord,
  organization: Type.Union([OrganizationRecord, Type.Null()]),
  role: Type.Union([StringEnum(MEMBERSHIP_ROLES), Type.Null()]),
  access: AccessRecord,
  memberships: Type.Array(MembershipRecord),
  credential: Type.Object({
    kind: Type.String({ description: '`session`, `user_api_key` or `widget_token`.' }),
    interactive: Type.Boolean(),
  }),
  outstandingTermsVersion: Type.Union([Type.String(), Type.Null()]),
  featureFlags: Type.Object(
    {
      productBrandCutover: Type.Boolean(),
      productBrandWordmarkUrl: Type.Union([Type.String(), Type.Null()]),
    },
    { description: 'Presentation metadata only: they grant nothing.' },
  ),
});

/** The sign-in answer of an outcome (the session cookie is set by the caller for `user`). */
export async function signInAnswer(outcome: SignInOutcome, organizations: Organizations) {
  if (outcome.kind === 'requires_signup')
    return {
      requiresSignup: true as const,
      redirectUrl: `/signup?pending=true&token=${encodeURIComponent(outcome.recoveryToken)}`,
    };
  const active = outcome.user.activeOrganizationId;
  return {
    requiresSignup: false as const,
    user: userView(outcome.user),
    organization: active === null ? null : organizations.view(await organizations.byId(active)),
  };
}

/** The public record of a user row. */
export function userView(user: { publicId: string; email: string; name: string; createdAt: Date }) {
  return { id: user.publicId, email: user.email, name: user.name, createdAt: user.createdAt.toISOString() };
}

/** Registers `POST /auth/password`, `POST /auth/sign-out` and `GET /auth/me`. */
export function registerAuthRoutes(app: ServiceApp, ctx: MediaBuyingRouteContext, accounts: Accounts): void {
  const { organizations, config, db } = ctx.deps;

  app.post(
    '/auth/password',
    {
      onRequest: ctx.anonymous,
      schema: {
        operationId: 'signInWithPassword',
        tags: ['auth'],
        summary: 'Sign in with email and password',
        description:
          'Opens a browser session (cookie `mb_session`: HttpOnly, SameSite=Lax). An identity that has no platform ' +
          'account yet gets `{requiresSignup: true, redirectUrl}` (an interrupted signup). Wrong email or password: ' +
          '401; too many failures for the account or the client address: 429 with Retry-After.',
        security: [],
        body: Type.Object(
          { email: Email, password: Type.String({ minLength: 1, maxLength: 1024 }) },
          {
            additionalProperties: false,
            examples: [{ email: 'ada@example.com', password: 'correct horse battery staple' }],
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
      const outcome = await accounts.signInWithPassword(
        request.body.email,
        request.body.password,
        request.ip,
      );
      if (outcome === undefined) throw invalidSignIn();
      if (outcome === 'unverified')
        throw forbidden('Verify your email first: sign in with the code sent to it.', {
          reason: 'email_not_verified',
        });
      if (outcome.kind === 'user') {
        if (outcome.user.disabledAt) throw invalidSignIn();
        const session = await db.transaction((tx) => accounts.openSession(tx, outcome.user.id, 'password'));
        ctx.setSessionCookie(reply, session.secret, session.maxAgeSeconds);
      }
      return ctx.ok(await signInAnswer(outcome, organizations));
    },
  );

  app.post(
    '/auth/sign-out',
    {
      onRequest: ctx.authenticated({ interactive: true, organization: false, termsExempt: true }),
      config: { optionalJsonBody: true },
      schema: {
        operationId: 'signOut',
        tags: ['auth'],
        summary: 'End this browser session',
        description:
          'The session cookie stops working at once, on every instance. MCP connections stay (rule 2).',
        security,
        response: {
          200: Envelope(Type.Object({ signedOut: Type.Literal(true) })),
          401: ErrorEnvelope,
          403: ErrorEnvelope,
        },
      },
    },
    async (request, reply) => {
      await accounts.endSession(ctx.caller(request).credentialId);
      ctx.clearSessionCookie(reply);
      return ctx.ok({ signedOut: true as const });
    },
  );

  app.get(
    '/auth/me',
    {
      onRequest: ctx.authenticated({ user: true, organization: false }),
      schema: {
        operationId: 'getCurrentUser',
        tags: ['auth'],
        summary: 'The current user, organization, access and feature flags',
        security,
        response: { 200: Envelope(Me), 401: ErrorEnvelope, 403: ErrorEnvelope, 429: ErrorEnvelope },
      },
    },
    async (request) => {
      const caller: Caller = ctx.caller(request);
      const user = caller.user!;
      const org = caller.organization ? await organizations.byId(caller.organization.id) : null;
      const fullUser = (await accounts.userByPublicId(user.publicId))!;
      return ctx.ok({
        user: userView(fullUser),
        organization: org ? organizations.view(org) : null,
        role: caller.role,
        access: caller.access,
        memberships: await organizations.membershipsOf(user.id),
        credential: { kind: caller.kind, interactive: caller.interactive },
        outstandingTermsVersion: caller.outstandingTerms,
        featureFlags: {
          productBrandCutover: config.productBrandCutover,
          productBrandWordmarkUrl: config.productBrandWordmarkUrl ?? null,
        },
      });
    },
  );
}
