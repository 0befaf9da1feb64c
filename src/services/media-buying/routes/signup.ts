/**
 * The interrupted signup (spec "States and transitions", Signup; "Sign-in and signup"): the verified signup data of a
 * signup-recovery token, the email-availability check and account creation (our paths:
 * `POST /api/v2/signup/email-availability`, `POST /api/v2/signup/accounts`), both taking `verifiedSignupToken`.
 */
import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../../platform/http.ts';
import { StringEnum } from '../../../platform/schemas.ts';
import { ACCOUNT_TYPES, type IdentityFlows, PLANS, SIGNUP_EXPERIENCES } from '../identity/index.ts';
import { Email, Envelope, ErrorEnvelope, OrganizationRecord, UserRecord } from '../media-buying-schemas.ts';
import { userView } from './auth.ts';
import type { MediaBuyingRouteContext } from './context.ts';

const Token = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'The `verifiedSignupToken` (`mbv_...`) of the `redirectUrl`: ten minutes, single use.',
});

const SignupData = Type.Object({
  email: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  emailVerified: Type.Literal(true),
  signupExperience: Type.Union([StringEnum(SIGNUP_EXPERIENCES), Type.Null()], {
    description: 'The routing metadata of the sign-in (which form to show); it grants nothing.',
  }),
  expiresAt: Type.String({ format: 'date-time' }),
});

const Availability = Type.Object({
  email: Type.String(),
  storefrontAccountSignupAllowed: Type.Boolean({ description: 'Whether an account can be created.' }),
  storefrontIuSignupAllowed: Type.Boolean({ description: 'Whether the plan-selection step is offered.' }),
  storefrontSignupAllowed: Type.Boolean({
    description: 'Legacy: the same meaning (and value) as `storefrontIuSignupAllowed`.',
  }),
});

const StorefrontRecord = Type.Object({
  id: Type.String({ description: '`sf_` + 32 hex' }),
  name: Type.String(),
  currency: Type.String(),
});

const Created = Type.Object({
  user: UserRecord,
  organization: Type.Union([OrganizationRecord, Type.Null()]),
  storefront: Type.Union([StorefrontRecord, Type.Null()]),
});

const Text = (maxLength: number) => Type.String({ minLength: 1, maxLength, pattern: '\\S' });

/** Registers the signup-data, email-availability and account-creation routes. */
export function registerSignupRoutes(
  app: ServiceApp,
  ctx: MediaBuyingRouteContext,
  deps: { identity: IdentityFlows },
): void {
  const { organizations } = ctx.deps;
  const { signup } = deps.identity;

  app.get(
    '/auth/verified-signup-data/:token',
    {
      // The token is a credential: the request line logs the route pattern, not the path.
      config: { secretPath: true },
      schema: {
        operationId: 'getVerifiedSignupData',
        tags: ['auth'],
        summary: 'The non-secret signup form fields of a signup-recovery token',
        description: 'Reading does not consume the token. 404 for an unknown, used or expired token.',
        security: [],
        params: Type.Object({ token: Token }),
        response: { 200: Envelope(SignupData), 400: ErrorEnvelope, 404: ErrorEnvelope },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return ctx.ok(await signup.signupData(request.params.token));
    },
  );

  app.post(
    '/api/v2/signup/email-availability',
    {
      onRequest: ctx.anonymous,
      schema: {
        operationId: 'checkSignupEmailAvailability',
        tags: ['auth'],
        summary: 'May this verified email create an account, and is the plan step open?',
        description:
          'The email must be the verified email of the token (422 otherwise). Does not consume the token.',
        security: [],
        body: Type.Object(
          { verifiedSignupToken: Token, email: Email },
          {
            additionalProperties: false,
            examples: [
              {
                verifiedSignupToken: 'mbv_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG',
                email: 'ada@example.com',
              },
            ],
          },
        ),
        response: { 200: Envelope(Availability), 400: ErrorEnvelope, 403: ErrorEnvelope, 422: ErrorEnvelope },
      },
    },
    async (request) =>
      ctx.ok(await signup.emailAvailability(request.body.verifiedSignupToken, request.body.email)),
  );

  app.post(
    '/api/v2/signup/accounts',
    {
      onRequest: ctx.anonymous,
      schema: {
        operationId: 'createSignupAccount',
        tags: ['auth'],
        summary: 'Create the account of an interrupted signup (consumes the token) and sign in',
        description:
          '`MEDIA_COMPANY`: the user, a Seller Account (admitted) with the user as administrator, and its first ' +
          'storefront. `ADVERTISER`, `ADVERTISER_PORTFOLIO`: the user and a Buyer Account with the user as ' +
          'administrator while public buyer signup is open; 403 `buyer_signup_waitlisted` while it is waitlisted ' +
          '(use the advertiser preview form). `DEVELOPER`: the user only. `plan` and `signupCode` (media companies) ' +
          'are refused (422) while the plan rollout is closed. The token is consumed with the account: of two ' +
          'concurrent creations one succeeds and the other is a 422; a request refused before anything is written ' +
          'leaves the token usable.',
        security: [],
        body: Type.Object(
          {
            verifiedSignupToken: Token,
            accountType: StringEnum(ACCOUNT_TYPES),
            name: Text(200),
            organizationName: Type.Optional(Text(200)),
            storefront: Type.Optional(
              Type.Object(
                {
                  name: Type.Optional(Text(200)),
                  currency: Type.Optional(Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217' })),
                },
                { additionalProperties: false },
              ),
            ),
            plan: Type.Optional(StringEnum(PLANS)),
            signupCode: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9-]{4,64}$' })),
          },
          {
            additionalProperties: false,
            examples: [
              {
                verifiedSignupToken: 'mbv_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG',
                accountType: 'MEDIA_COMPANY',
                name: 'Ada Lovelace',
                organizationName: 'Analytical Media',
                storefront: { name: 'Analytical Media Storefront', currency: 'USD' },
              },
            ],
          },
        ),
        response: {
          201: Envelope(Created),
          400: ErrorEnvelope,
          403: ErrorEnvelope,
          409: ErrorEnvelope,
          422: ErrorEnvelope,
        },
      },
    },
    async (request, reply) => {
      const created = await signup.createAccount(request.body);
      ctx.setSessionCookie(reply, created.session.secret, created.session.maxAgeSeconds);
      return reply.code(201).send(
        ctx.ok({
          user: userView(created.user),
          organization: created.organization ? organizations.view(created.organization) : null,
          storefront: created.storefront
            ? {
                id: created.storefront.publicId,
                name: created.storefront.name,
                currency: created.storefront.currency,
              }
            : null,
        }),
      );
    },
  );
}
