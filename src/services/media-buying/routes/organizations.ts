/**
 * The caller's organizations and their people: switching the active organization, the members of the current one
 * (administrators remove members and change roles), and the Terms of Service (read the current version, accept it).
 */
import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../../platform/http.ts';
import { StringEnum } from '../../../platform/schemas.ts';
import { MEMBERSHIP_ROLES } from '../db/schema.ts';
import {
  Envelope,
  ErrorEnvelope,
  idErrors,
  MembershipRecord,
  OrganizationRecord,
  security,
} from '../media-buying-schemas.ts';
import type { MediaBuyingRouteContext } from './context.ts';

const Member = Type.Object({
  userId: Type.String(),
  email: Type.String(),
  name: Type.String(),
  role: StringEnum(MEMBERSHIP_ROLES),
  joinedAt: Type.String({ format: 'date-time' }),
});

const MemberParams = Type.Object({ userId: Type.String({ minLength: 1, maxLength: 64 }) });

const Terms = Type.Object({
  version: Type.String(),
  title: Type.String(),
  body: Type.String(),
  publishedAt: Type.String({ format: 'date-time' }),
  accepted: Type.Boolean({ description: 'Whether the caller has accepted this version.' }),
});

/** Registers the organization, member and terms routes. */
export function registerOrganizationRoutes(app: ServiceApp, ctx: MediaBuyingRouteContext): void {
  const { db, organizations } = ctx.deps;
  const who = (request: Parameters<typeof ctx.caller>[0]) => {
    const caller = ctx.caller(request);
    return { caller, actor: { userId: caller.user?.id ?? null, kind: caller.kind } };
  };

  app.get(
    '/api/v2/organizations',
    {
      onRequest: ctx.authenticated({ user: true, organization: false }),
      schema: {
        operationId: 'listMyOrganizations',
        tags: ['organizations'],
        summary: 'The organizations you belong to, with your role in each',
        security,
        response: { 200: Envelope(Type.Array(MembershipRecord)), ...idErrors },
      },
    },
    async (request) => ctx.ok(await organizations.membershipsOf(ctx.caller(request).user!.id)),
  );

  app.post(
    '/api/v2/organizations/active',
    {
      onRequest: ctx.authenticated({ interactive: true, organization: false, termsExempt: true }),
      schema: {
        operationId: 'switchActiveOrganization',
        tags: ['organizations'],
        summary: 'Switch the organization your session acts in',
        description:
          'Interactive sessions only (keys stay bound to the organization of their creation). 404 for an ' +
          'organization you do not belong to.',
        security,
        body: Type.Object(
          { organizationId: Type.String({ minLength: 1, maxLength: 64 }) },
          {
            additionalProperties: false,
            examples: [{ organizationId: 'org_0123456789abcdef0123456789abcdef' }],
          },
        ),
        response: { 200: Envelope(OrganizationRecord), ...idErrors },
      },
    },
    async (request) => {
      const { caller } = who(request);
      const org = await db.transaction((tx) =>
        organizations.switchActive(tx, caller.user!.id, request.body.organizationId),
      );
      return ctx.ok(organizations.view(org));
    },
  );

  app.get(
    '/api/v2/organizations/current/members',
    {
      onRequest: ctx.authenticated({ user: true }),
      schema: {
        operationId: 'listMembers',
        tags: ['organizations'],
        summary: 'The members of your active organization',
        security,
        response: { 200: Envelope(Type.Array(Member)), ...idErrors },
      },
    },
    async (request) => ctx.ok(await organizations.members(ctx.caller(request).organization!.id)),
  );

  app.patch(
    '/api/v2/organizations/current/members/:userId',
    {
      onRequest: ctx.authenticated({ admin: true }),
      schema: {
        operationId: 'changeMemberRole',
        tags: ['organizations'],
        summary: "Change a member's role (administrators; the last administrator stays one)",
        security,
        params: MemberParams,
        body: Type.Object(
          { role: StringEnum(MEMBERSHIP_ROLES) },
          { additionalProperties: false, examples: [{ role: 'admin' }] },
        ),
        response: { 200: Envelope(Type.Array(Member)), ...idErrors, 409: ErrorEnvelope },
      },
    },
    async (request) => {
      const { caller, actor } = who(request);
      const orgId = caller.organization!.id;
      await db.transaction((tx) =>
        organizations.changeRole(tx, orgId, request.params.userId, request.body.role, actor),
      );
      return ctx.ok(await organizations.members(orgId));
    },
  );

  app.delete(
    '/api/v2/organizations/current/members/:userId',
    {
      onRequest: ctx.authenticated({ admin: true }),
      schema: {
        operationId: 'removeMember',
        tags: ['organizations'],
        summary: 'Remove a member (their keys for this organization stop at once)',
        security,
        params: MemberParams,
        response: { 200: Envelope(Type.Array(Member)), ...idErrors, 409: ErrorEnvelope },
      },
    },
    async (request) => {
      const { caller, actor } = who(request);
      const orgId = caller.organization!.id;
      await db.transaction((tx) => organizations.removeMember(tx, orgId, request.params.userId, actor));
      return ctx.ok(await organizations.members(orgId));
    },
  );

  app.get(
    '/api/v2/terms/current',
    {
      onRequest: ctx.authenticated({ user: true, organization: false }),
      schema: {
        operationId: 'getCurrentTerms',
        tags: ['organizations'],
        summary: 'The current Terms of Service and whether you accepted them',
        security,
        response: { 200: Envelope(Type.Union([Terms, Type.Null()])), ...idErrors },
      },
    },
    async (request) => {
      const caller = ctx.caller(request);
      const latest = await organizations.latestTerms();
      if (!latest) return ctx.ok(null);
      return ctx.ok({
        version: latest.version,
        title: latest.title,
        body: latest.body,
        publishedAt: latest.publishedAt.toISOString(),
        accepted: caller.outstandingTerms === null,
      });
    },
  );

  app.post(
    '/api/v2/terms/accept',
    {
      // Accepting terms is a person's act: in an interactive session, never by a key or token.
      onRequest: ctx.authenticated({ interactive: true, organization: false, termsExempt: true }),
      schema: {
        operationId: 'acceptTerms',
        tags: ['organizations'],
        summary: 'Accept the current Terms of Service',
        description:
          'Until the current version is accepted, every mutation answers 403 TOS_ACCEPTANCE_REQUIRED.',
        security,
        body: Type.Object(
          { version: Type.String({ minLength: 1, maxLength: 50 }) },
          { additionalProperties: false, examples: [{ version: '2026-11-01' }] },
        ),
        response: {
          200: Envelope(Type.Object({ version: Type.String(), accepted: Type.Literal(true) })),
          ...idErrors,
          409: ErrorEnvelope,
        },
      },
    },
    async (request) => {
      const { caller, actor } = who(request);
      await db.transaction((tx) =>
        organizations.acceptTerms(tx, caller.user!.id, request.body.version, {
          ...actor,
          organizationId: caller.organization?.id ?? null,
        }),
      );
      return ctx.ok({ version: request.body.version, accepted: true as const });
    },
  );
}
