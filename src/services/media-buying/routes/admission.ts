/**
 * Staged buyer admission over HTTP (spec "Signup"; "Authentication" rules 4 and 9): the advertiser preview form, an
 * invitation read and accepted by its link's holder, the member invitations of an organization's administrators,
 * and the organization's Commercial Offers.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { firstHeader } from '../../../platform/auth.ts';
import type { ServiceApp } from '../../../platform/http.ts';
import { Int4, StringEnum } from '../../../platform/schemas.ts';
import { type Admission, PREVIEW_SIGNUP_EXPERIENCES } from '../admission/index.ts';
import { PREFIX } from '../credentials/index.ts';
import { INVITATION_KINDS, MEMBERSHIP_ROLES, OFFER_STATUSES, ORGANIZATION_KINDS } from '../db/schema.ts';
import { forbidden } from '../media-buying-errors.ts';
import {
  Email,
  Envelope,
  ErrorEnvelope,
  idErrors,
  ListEnvelope,
  OrganizationRecord,
  security,
  UserRecord,
} from '../media-buying-schemas.ts';
import { userView } from './auth.ts';
import type { MediaBuyingRouteContext } from './context.ts';

/** Largest `take` of the invitation list. */
const INVITATIONS_MAX_TAKE = 100;

/** An invitation link's token: `mbi_` + 43 URL-safe base64 characters. */
const InvitationToken = Type.String({
  pattern: `^${PREFIX.invitation}[A-Za-z0-9_-]{43}$`,
  description: `The token of the invitation link (\`${PREFIX.invitation}\` + 43 URL-safe base64 characters).`,
});

/** A Commercial Offer. */
export const CommercialOfferRecord = Type.Object({
  id: Type.String({ description: '`ofr_` + 32 hex' }),
  title: Type.String(),
  terms: Type.String(),
  status: StringEnum(OFFER_STATUSES, {
    description:
      '`pending` on arrival; `accepted` or `declined` by an administrator; `withdrawn` by revocation.',
  }),
  createdAt: Type.String({ format: 'date-time' }),
  decidedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  decidedBy: Type.Union([Type.String({ description: '`usr_` + 32 hex' }), Type.Null()]),
});

/** An invitation as administrators and the operator see it (never its token). */
export const InvitationRecord = Type.Object({
  id: Type.String({ description: '`inv_` + 32 hex' }),
  organizationId: Type.String(),
  kind: StringEnum(INVITATION_KINDS, {
    description: '`setup` (the operator, to an administrator) or `member` (an administrator).',
  }),
  email: Type.String(),
  role: StringEnum(MEMBERSHIP_ROLES),
  name: Type.Union([Type.String(), Type.Null()], {
    description: "The invitee's name as the inviter wrote it.",
  }),
  status: StringEnum(['pending', 'accepted', 'revoked', 'expired'] as const),
  invitedBy: Type.Union([Type.String(), Type.Null()], {
    description: 'The administrator who sent it (`usr_...`); null for setup invitations.',
  }),
  commercialOfferId: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String({ format: 'date-time' }),
  expiresAt: Type.String({ format: 'date-time' }),
  acceptedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

const InvitationDetails = Type.Object({
  invitation: Type.Object({
    id: Type.String(),
    kind: StringEnum(INVITATION_KINDS),
    email: Type.String(),
    role: StringEnum(MEMBERSHIP_ROLES),
    name: Type.Union([Type.String(), Type.Null()]),
    expiresAt: Type.String({ format: 'date-time' }),
  }),
  organization: Type.Object({
    id: Type.String(),
    name: Type.String(),
    kind: StringEnum(ORGANIZATION_KINDS),
  }),
  invitedBy: Type.Union([Type.String(), Type.Null()], { description: "The inviting administrator's name." }),
  commercialOffer: Type.Union([CommercialOfferRecord, Type.Null()]),
  accountExists: Type.Boolean({
    description: 'True when the invited email has an account: sign in with it, then accept.',
  }),
});

const Acceptance = Type.Object({
  user: UserRecord,
  organization: OrganizationRecord,
  role: StringEnum(MEMBERSHIP_ROLES),
  commercialOffer: Type.Union([CommercialOfferRecord, Type.Null()], {
    description: 'The offer the invitation carried, still `pending`: joining never accepts it.',
  }),
  outstandingTermsVersion: Type.Union([Type.String(), Type.Null()], {
    description: 'The Terms of Service version to accept before any change can be made, if any.',
  }),
});

const InvitationParams = Type.Object({ invitationId: Type.String({ minLength: 1, maxLength: 64 }) });
const OfferParams = Type.Object({ offerId: Type.String({ minLength: 1, maxLength: 64 }) });
const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' });

/** Registers the admission routes (module comment). */
export function registerAdmissionRoutes(
  app: ServiceApp,
  ctx: MediaBuyingRouteContext,
  admission: Admission,
): void {
  const { organizations, uiOrigin } = ctx.deps;
  const { previews, invitations, offers } = admission;

  app.post(
    '/api/v2/signup/advertiser-preview',
    {
      onRequest: ctx.anonymous,
      schema: {
        operationId: 'submitAdvertiserPreview',
        tags: ['signup'],
        summary: 'Send the advertiser preview form (while buyer signup is waitlisted)',
        description:
          'Staged buyer admission: while public buyer signup is waitlisted, choosing Advertiser opens this form. An ' +
          'accepted form is stored and a receipt is mailed to the work email; the receipt says the details were ' +
          'received, nothing more: no account, organization or access is created. While buyer signup is open the ' +
          'form is refused (409 `CONFLICT`, `details.reason` `buyer_signup_open`). At most 3 forms per work email a ' +
          'day and 10 per client address an hour (429 with Retry-After); the same form sent again answers the first ' +
          '(`duplicate: true`, no second receipt).',
        security: [],
        body: Type.Object(
          {
            workEmail: Email,
            name: Name,
            company: Name,
            message: Type.Optional(Type.String({ maxLength: 5000 })),
            signupExperience: Type.Optional(
              StringEnum(PREVIEW_SIGNUP_EXPERIENCES, {
                description: 'Routing metadata only: grants nothing.',
              }),
            ),
          },
          {
            additionalProperties: false,
            examples: [
              {
                workEmail: 'ada@acme-outdoor.example',
                name: 'Ada Lovelace',
                company: 'Acme Outdoor',
                message: 'We run seasonal campaigns on CTV and audio.',
                signupExperience: 'ADVERTISER',
              },
            ],
          },
        ),
        response: {
          202: Envelope(
            Type.Object({
              id: Type.String({ description: '`apv_` + 32 hex' }),
              receivedAt: Type.String({ format: 'date-time' }),
              duplicate: Type.Boolean({ description: 'True for a repeat of a form already received.' }),
            }),
          ),
          400: ErrorEnvelope,
          403: ErrorEnvelope,
          409: ErrorEnvelope,
          429: ErrorEnvelope,
        },
      },
    },
    async (request, reply) => reply.code(202).send(ctx.ok(await previews.submit(request.body, request.ip))),
  );

  app.get(
    '/api/v2/invitations/lookup',
    {
      onRequest: ctx.anonymous,
      schema: {
        operationId: 'getInvitationByToken',
        tags: ['signup'],
        summary: 'Read an invitation by the token of its link',
        description:
          'For the holder of the link (no credential): the organization, the role, the invited email, the ' +
          'Commercial Offer it carries and whether that email has an account. The token goes in the query so that ' +
          'it never appears in request logs. 404 for an unknown token; 422 (`details.reason` `invitation_expired`, ' +
          '`invitation_revoked`, `invitation_used`); 409 `organization_not_admitted`.',
        security: [],
        querystring: Type.Object({ token: InvitationToken }, { additionalProperties: false }),
        response: {
          200: Envelope(InvitationDetails),
          400: ErrorEnvelope,
          404: ErrorEnvelope,
          409: ErrorEnvelope,
          422: ErrorEnvelope,
          429: ErrorEnvelope,
        },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return ctx.ok(await invitations.lookup(request.query.token));
    },
  );

  /** The user of the request's browser session, if it has a valid one (rule 4: a cookie needs the UI origin). */
  const signedInUser = async (request: FastifyRequest) => {
    const caller = await ctx.sessionCaller(request);
    return caller === null ? null : { id: caller.user!.id, email: caller.user!.email };
  };
  const sessionOrigin = async (request: FastifyRequest) => {
    if (ctx.sessionCookieOf(request) !== undefined && firstHeader(request.headers.origin) !== uiOrigin())
      throw forbidden(`State-changing browser requests are accepted only from ${uiOrigin()}.`, {
        reason: 'origin_not_allowed',
      });
  };

  app.post(
    '/api/v2/invitations/accept',
    {
      onRequest: [...ctx.anonymous, sessionOrigin],
      schema: {
        operationId: 'acceptInvitation',
        tags: ['signup'],
        summary: 'Accept an invitation: create your account and join, or join as the signed-in user',
        description:
          'Works while public buyer signup is waitlisted (rule 9), only for an admitted organization. Without an ' +
          'account: send `name` (default: the name on the invitation) and `password` (at least 10 characters, ' +
          'strong, not breached); the account is created with the invited email (verified by the link) and a ' +
          'browser session opens (cookie `mb_session`). With an account: sign in as the invited email first (the ' +
          'session cookie is read here; 401 `sign_in_required` otherwise); a session of another email is refused ' +
          '(403 `invitation_email_mismatch`). The link is single use: a second acceptance is 422 `invitation_used` ' +
          '(the same signed-in user again gets the same answer). Joining makes the organization your active one and ' +
          'accepts neither the Terms of Service nor the Commercial Offer: both are separate steps.',
        security: [],
        body: Type.Object(
          {
            token: InvitationToken,
            name: Type.Optional(Name),
            password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
          },
          {
            additionalProperties: false,
            examples: [
              {
                token: 'mbi_3q2+7w-example-token-of-43-characters-abcdefg',
                name: 'Grace Hopper',
                password: 'violet anchor tundra 42',
              },
            ],
          },
        ),
        response: {
          200: Envelope(Acceptance),
          400: ErrorEnvelope,
          401: ErrorEnvelope,
          403: ErrorEnvelope,
          404: ErrorEnvelope,
          409: ErrorEnvelope,
          422: ErrorEnvelope,
          429: ErrorEnvelope,
        },
      },
    },
    async (request, reply) => {
      const signedIn = await signedInUser(request);
      const accepted = await invitations.accept(request.body.token, signedIn, {
        name: request.body.name,
        password: request.body.password,
      });
      if (accepted.session)
        ctx.setSessionCookie(reply, accepted.session.secret, accepted.session.maxAgeSeconds);
      return ctx.ok({
        user: userView(accepted.user),
        organization: organizations.view(await organizations.byId(accepted.organizationId)),
        role: accepted.role,
        commercialOffer: accepted.commercialOffer,
        outstandingTermsVersion: accepted.outstandingTerms,
      });
    },
  );

  const admin = ctx.authenticated({ admin: true });
  const actorOf = (request: FastifyRequest) => {
    const caller = ctx.caller(request);
    return { caller, actor: { userId: caller.user!.id, kind: caller.kind } };
  };

  app.post(
    '/api/v2/organizations/current/invitations',
    {
      onRequest: admin,
      schema: {
        operationId: 'createInvitation',
        tags: ['organizations'],
        summary: 'Invite someone to your organization (administrators, interactive session)',
        description:
          'Mails a single-use link that expires in 7 days. 409 `CONFLICT` when the email is a member already ' +
          '(`already_member`) or has an open invitation (`invitation_pending`: revoke it to send another); at most ' +
          '50 invitations a day per organization (429).',
        security,
        body: Type.Object(
          { email: Email, role: StringEnum(MEMBERSHIP_ROLES), name: Type.Optional(Name) },
          {
            additionalProperties: false,
            examples: [{ email: 'grace@acme-outdoor.example', role: 'member', name: 'Grace Hopper' }],
          },
        ),
        response: { 201: Envelope(InvitationRecord), ...idErrors, 409: ErrorEnvelope },
      },
    },
    async (request, reply) => {
      const { caller } = actorOf(request);
      const created = await invitations.createMember(
        caller.organization!.id,
        { userId: caller.user!.id, name: caller.user!.name, kind: caller.kind },
        request.body,
      );
      return reply.code(201).send(ctx.ok(created));
    },
  );

  app.get(
    '/api/v2/organizations/current/invitations',
    {
      onRequest: admin,
      schema: {
        operationId: 'listInvitations',
        tags: ['organizations'],
        summary: "Your organization's invitations, newest first (administrators, interactive session)",
        security,
        querystring: Type.Object(
          {
            take: Type.Optional(Int4({ minimum: 1, maximum: INVITATIONS_MAX_TAKE, default: 50 })),
            skip: Type.Optional(Int4({ minimum: 0, default: 0 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: ListEnvelope(InvitationRecord), ...idErrors },
      },
    },
    async (request) => {
      const take = request.query.take ?? 50;
      const skip = request.query.skip ?? 0;
      const page = await invitations.list(ctx.caller(request).organization!.id, { skip, take });
      return ctx.list(page.items, { skip, take, total: page.total });
    },
  );

  app.delete(
    '/api/v2/organizations/current/invitations/:invitationId',
    {
      onRequest: admin,
      schema: {
        operationId: 'revokeInvitation',
        tags: ['organizations'],
        summary: 'Revoke an invitation (its link stops at once; a pending offer it carries is withdrawn)',
        description:
          "404 for an unknown id or another organization's invitation; 409 (`invitation_used`) for an accepted one.",
        security,
        params: InvitationParams,
        response: { 200: Envelope(InvitationRecord), ...idErrors, 409: ErrorEnvelope },
      },
    },
    async (request) => {
      const { caller, actor } = actorOf(request);
      return ctx.ok(await invitations.revoke(caller.organization!.id, request.params.invitationId, actor));
    },
  );

  app.get(
    '/api/v2/organizations/current/commercial-offers',
    {
      onRequest: admin,
      schema: {
        operationId: 'listCommercialOffers',
        tags: ['organizations'],
        summary: "Your organization's Commercial Offers, newest first (administrators, interactive session)",
        security,
        response: { 200: Envelope(Type.Array(CommercialOfferRecord)), ...idErrors },
      },
    },
    async (request) => ctx.ok(await offers.list(ctx.caller(request).organization!.id)),
  );

  for (const decision of ['accepted', 'declined'] as const) {
    const verb = decision === 'accepted' ? 'accept' : 'decline';
    app.post(
      `/api/v2/organizations/current/commercial-offers/:offerId/${verb}`,
      {
        onRequest: admin,
        config: { optionalJsonBody: true },
        schema: {
          operationId: decision === 'accepted' ? 'acceptCommercialOffer' : 'declineCommercialOffer',
          tags: ['organizations'],
          summary:
            decision === 'accepted'
              ? 'Accept a pending Commercial Offer (administrators, interactive session)'
              : 'Decline a pending Commercial Offer (administrators, interactive session)',
          description:
            "A separate step from joining. The same decision again answers the offer as it is; 409 (`offer_decided`) for an offer decided otherwise or withdrawn; 404 for another organization's offer.",
          security,
          params: OfferParams,
          response: { 200: Envelope(CommercialOfferRecord), ...idErrors, 409: ErrorEnvelope },
        },
      },
      async (request) => {
        const { caller, actor } = actorOf(request);
        return ctx.ok(
          await offers.decide(caller.organization!.id, request.params.offerId, decision, {
            ...actor,
            userId: caller.user!.id,
            userPublicId: caller.user!.publicId,
          }),
        );
      },
    );
  }
}
