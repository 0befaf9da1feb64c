/**
 * Operator routes (`/_ops/*`, bearer OPERATOR_TOKEN checked by the platform): organizations (create, admit, suspend,
 * alpha opt-ins, people), Terms of Service versions, platform settings, the mail outbox, the platform-wide security
 * sign-out, imports of organization-owned and legacy keys, signing-key rotation, agent registrations, and user API
 * keys on the platform's `/_ops/keys` routes. Successful answers are plain JSON (the operator API of every service);
 * errors are the envelope.
 */
import { Type } from '@sinclair/typebox';
import { eq } from 'drizzle-orm';
import { registerCredentialRoutes } from '../../../platform/credential-routes.ts';
import { issueApiKey } from '../../../platform/crypto.ts';
import type { ServiceApp } from '../../../platform/http.ts';
import { prefixedHexId } from '../../../platform/ids.ts';
import { StringEnum } from '../../../platform/schemas.ts';
import { PREFIX } from '../credentials/index.ts';
import {
  agentRegistrations,
  KEY_PERMISSIONS,
  MEMBERSHIP_ROLES,
  ORGANIZATION_KINDS,
  sessions,
  userApiKeys,
  users,
  widgetTokens,
} from '../db/schema.ts';
import { type Accounts, normalizeEmail, passwordProblem } from '../identity/index.ts';
import type { Mailer } from '../mail/index.ts';
import { conflict, notFound, semanticValidation } from '../media-buying-errors.ts';
import { Email, ErrorEnvelope, OrganizationRecord } from '../media-buying-schemas.ts';
import { ALPHA_FEATURES, OPERATOR } from '../organizations/index.ts';
import type { MediaBuyingRouteContext } from './context.ts';

const ops = { tags: ['operator'], security: [{ operatorToken: [] }] };
const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 404: ErrorEnvelope };
const OrgParams = Type.Object({ organizationId: Type.String({ minLength: 1, maxLength: 64 }) });
const Permissions = Type.Array(StringEnum(KEY_PERMISSIONS), {
  minItems: 1,
  maxItems: KEY_PERMISSIONS.length,
});
const KeySecret = (prefix: string) =>
  Type.String({
    pattern: `^${prefix}[A-Za-z0-9_-]{43}$`,
    description: `\`${prefix}\` + 43 URL-safe base64 characters`,
  });

/** Registers the operator routes. */
export function registerOpsRoutes(
  app: ServiceApp,
  ctx: MediaBuyingRouteContext,
  deps: { accounts: Accounts; mailer: Mailer },
): void {
  const { db, organizations, credentials, stores } = ctx.deps;
  const { accounts, mailer } = deps;

  app.post(
    '/_ops/organizations',
    {
      schema: {
        ...ops,
        operationId: 'opsCreateOrganization',
        summary: 'Create a Buyer Account or Seller Account',
        description:
          'A Buyer Account starts waitlisted unless `admitted` is true; a Seller Account is admitted.',
        body: Type.Object(
          {
            kind: StringEnum(ORGANIZATION_KINDS),
            name: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' }),
            admitted: Type.Optional(Type.Boolean()),
          },
          { additionalProperties: false, examples: [{ kind: 'buyer', name: 'Acme Media', admitted: false }] },
        ),
        response: { 201: OrganizationRecord, ...errors },
      },
    },
    async (request, reply) => {
      const row = await db.transaction((tx) =>
        organizations.create(
          tx,
          {
            kind: request.body.kind,
            name: request.body.name.trim(),
            admitted: request.body.kind === 'seller' || request.body.admitted === true,
          },
          OPERATOR,
        ),
      );
      return reply.code(201).send(organizations.view(row));
    },
  );

  for (const status of ['admitted', 'suspended'] as const) {
    const verb = status === 'admitted' ? 'admit' : 'suspend';
    app.post(
      `/_ops/organizations/:organizationId/${verb}`,
      {
        config: { optionalJsonBody: true },
        schema: {
          ...ops,
          operationId: status === 'admitted' ? 'opsAdmitOrganization' : 'opsSuspendOrganization',
          summary:
            status === 'admitted'
              ? 'Admit an organization (staged buyer admission)'
              : 'Suspend an organization (every credential of it stops at once)',
          params: OrgParams,
          response: { 200: OrganizationRecord, ...errors, 409: ErrorEnvelope },
        },
      },
      async (request) =>
        organizations.view(
          await db.transaction((tx) =>
            organizations.setStatus(tx, request.params.organizationId, status, OPERATOR),
          ),
        ),
    );
  }

  for (const enabled of [true, false]) {
    app.route({
      method: enabled ? 'PUT' : 'DELETE',
      url: '/_ops/organizations/:organizationId/alpha/:feature',
      config: { optionalJsonBody: true },
      schema: {
        ...ops,
        operationId: enabled ? 'opsOptInAlpha' : 'opsOptOutAlpha',
        summary: enabled
          ? 'Opt an organization into an alpha feature'
          : 'Opt an organization out of an alpha feature',
        params: Type.Object({
          organizationId: Type.String({ minLength: 1, maxLength: 64 }),
          feature: StringEnum(ALPHA_FEATURES),
        }),
        response: { 200: Type.Object({ features: Type.Array(Type.String()) }), ...errors },
      },
      handler: async (request) => {
        const params = request.params as { organizationId: string; feature: (typeof ALPHA_FEATURES)[number] };
        const org = await organizations.byPublicId(params.organizationId);
        await db.transaction((tx) => organizations.setAlpha(tx, org.id, params.feature, enabled));
        return { features: await organizations.alphaFeatures(org.id) };
      },
    });
  }

  app.post(
    '/_ops/organizations/:organizationId/members',
    {
      schema: {
        ...ops,
        operationId: 'opsAddMember',
        summary: 'Add a person to an organization directly (support): creates the account when missing',
        description:
          'The email counts as verified. A new account needs a `password` (the policy of signup applies) and a ' +
          '`name`; an existing account keeps its password.',
        params: OrgParams,
        body: Type.Object(
          {
            email: Email,
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' })),
            password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
            role: StringEnum(MEMBERSHIP_ROLES),
          },
          {
            additionalProperties: false,
            examples: [
              {
                email: 'grace@example.com',
                name: 'Grace',
                password: 'violet anchor tundra 42',
                role: 'admin',
              },
            ],
          },
        ),
        response: {
          201: Type.Object({
            userId: Type.String(),
            organizationId: Type.String(),
            role: StringEnum(MEMBERSHIP_ROLES),
          }),
          ...errors,
          409: ErrorEnvelope,
          422: ErrorEnvelope,
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const result = await db.transaction(async (tx) => {
        const org = await organizations.byPublicId(request.params.organizationId, tx);
        await accounts.lockEmail(tx, body.email);
        let identity = await accounts.identityByEmail(body.email, tx);
        let user = identity ? await accounts.userOfIdentity(identity.id, tx) : undefined;
        if (!user) {
          if (!body.name)
            throw semanticValidation([
              { location: 'body', field: 'name', message: 'is required for a new account' },
            ]);
          if (!identity) {
            if (body.password === undefined)
              throw semanticValidation([
                { location: 'body', field: 'password', message: 'is required for a new account' },
              ]);
            const problem = passwordProblem(body.password, [body.email, body.name]);
            if (problem)
              throw semanticValidation([{ location: 'body', field: 'password', message: problem.message }]);
            identity = await accounts.createIdentity(tx, {
              email: body.email,
              name: body.name,
              password: body.password,
              verified: true,
            });
          } else {
            await accounts.markVerified(tx, identity.id);
          }
          user = await accounts.createUser(tx, identity, body.name);
        }
        await organizations.addMember(tx, org.id, user.id, body.role, OPERATOR);
        return { userId: user.publicId, organizationId: org.publicId, role: body.role };
      });
      return reply.code(201).send(result);
    },
  );

  app.post(
    '/_ops/users/:userId/disable',
    {
      config: { optionalJsonBody: true },
      schema: {
        ...ops,
        operationId: 'opsDisableUser',
        summary: 'Disable a user: every credential they hold stops at once',
        params: Type.Object({ userId: Type.String({ minLength: 1, maxLength: 64 }) }),
        response: { 200: Type.Object({ userId: Type.String(), disabled: Type.Literal(true) }), ...errors },
      },
    },
    async (request) => {
      const user = await accounts.userByPublicId(request.params.userId);
      if (!user) throw notFound('User', request.params.userId);
      await db.transaction(async (tx) => {
        await tx
          .update(users)
          .set({ disabledAt: new Date(ctx.deps.clock.nowMs()) })
          .where(eq(users.id, user.id));
        // Sessions, widget tokens and MCP connections end now; keys stop too, since every request checks that the user
        // is enabled (enabling the user again brings no connection back).
        await stores.sessions.revokeWhere(eq(sessions.userId, user.id), tx);
        await stores.widgetTokens.revokeWhere(eq(widgetTokens.userId, user.id), tx);
        await credentials.connectedApps.endConnections(tx, { userId: user.id });
      });
      return { userId: user.publicId, disabled: true as const };
    },
  );

  app.post(
    '/_ops/terms',
    {
      schema: {
        ...ops,
        operationId: 'opsPublishTerms',
        summary: 'Publish a Terms of Service version (members must accept it before mutating)',
        body: Type.Object(
          {
            version: Type.String({ minLength: 1, maxLength: 50, pattern: '^[A-Za-z0-9._-]+$' }),
            title: Type.String({ minLength: 1, maxLength: 200 }),
            body: Type.String({ minLength: 1, maxLength: 100_000 }),
          },
          {
            additionalProperties: false,
            examples: [{ version: '2026-11-01', title: 'Terms of Service', body: '...' }],
          },
        ),
        response: {
          201: Type.Object({ version: Type.String(), publishedAt: Type.String({ format: 'date-time' }) }),
          ...errors,
          409: ErrorEnvelope,
        },
      },
    },
    async (request, reply) => {
      const row = await db.transaction((tx) => organizations.publishTerms(tx, request.body));
      return reply.code(201).send({ version: row.version, publishedAt: row.publishedAt.toISOString() });
    },
  );

  const Settings = Type.Object({
    buyerSignup: StringEnum(['waitlisted', 'open'] as const),
    planRollout: StringEnum(['closed', 'open'] as const),
  });
  app.get(
    '/_ops/settings',
    {
      schema: {
        ...ops,
        operationId: 'opsGetSettings',
        summary: 'Platform settings',
        response: { 200: Settings, ...errors },
      },
    },
    async () => organizations.settings(),
  );
  app.patch(
    '/_ops/settings',
    {
      schema: {
        ...ops,
        operationId: 'opsUpdateSettings',
        summary: 'Change platform settings (public buyer signup, plan rollout)',
        body: Type.Partial(Settings, {
          additionalProperties: false,
          minProperties: 1,
          examples: [{ buyerSignup: 'open' }],
        }),
        response: { 200: Settings, ...errors },
      },
    },
    async (request) => db.transaction((tx) => organizations.updateSettings(tx, request.body)),
  );

  app.get(
    '/_ops/mail',
    {
      schema: {
        ...ops,
        operationId: 'opsListMail',
        summary: 'Mail sent or kept in the outbox, newest first',
        querystring: Type.Object(
          {
            to: Type.Optional(Email),
            beforeId: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            mail: Type.Array(
              Type.Object({
                id: Type.Integer(),
                to: Type.String(),
                subject: Type.String(),
                text: Type.String(),
                kind: Type.String(),
                transport: StringEnum(['smtp', 'outbox'] as const),
                createdAt: Type.String({ format: 'date-time' }),
                sentAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
                lastError: Type.Union([Type.String(), Type.Null()]),
              }),
            ),
          }),
          ...errors,
        },
      },
    },
    async (request) => ({
      mail: await mailer.list({
        to: request.query.to === undefined ? undefined : normalizeEmail(request.query.to),
        beforeId: request.query.beforeId,
        limit: request.query.limit ?? 50,
      }),
    }),
  );

  app.post(
    '/_ops/security-sign-out',
    {
      config: { optionalJsonBody: true },
      schema: {
        ...ops,
        operationId: 'opsSecuritySignOut',
        summary:
          'Platform-wide security sign-out: every browser session, widget token and MCP connection ends',
        response: {
          200: Type.Object({
            sessions: Type.Integer(),
            widgetTokens: Type.Integer(),
            mcpGrants: Type.Integer(),
          }),
          ...errors,
        },
      },
    },
    async () => db.transaction((tx) => accounts.securitySignOut(tx)),
  );

  for (const kind of ['org', 'legacy'] as const) {
    app.post(
      kind === 'org' ? '/_ops/org-api-keys' : '/_ops/legacy-keys',
      {
        schema: {
          ...ops,
          operationId: kind === 'org' ? 'opsImportOrgApiKey' : 'opsImportLegacyKey',
          summary:
            kind === 'org'
              ? 'Import an organization-owned key (migration; a new secret when `key` is absent)'
              : 'Import a legacy customer-scoped key (migration)',
          body: Type.Object(
            {
              organizationId: Type.String({ minLength: 1, maxLength: 64 }),
              permissions: Permissions,
              label: Type.Optional(Type.String({ maxLength: 200 })),
              ...(kind === 'org'
                ? { key: Type.Optional(KeySecret(PREFIX.orgApiKey)) }
                : {
                    key: KeySecret(PREFIX.legacyKey),
                    expiresAt: Type.Optional(Type.String({ format: 'date-time' })),
                  }),
            },
            {
              additionalProperties: false,
              examples: [
                { organizationId: 'org_0123456789abcdef0123456789abcdef', permissions: ['platform:read'] },
              ],
            },
          ),
          response: {
            201: Type.Object({
              id: Type.String(),
              organizationId: Type.String(),
              key: Type.Optional(
                Type.String({ description: 'A new secret (only when none was given): shown once.' }),
              ),
            }),
            ...errors,
            409: ErrorEnvelope,
          },
        },
      },
      async (request, reply) => {
        const body = request.body as {
          organizationId: string;
          permissions: (typeof KEY_PERMISSIONS)[number][];
          label?: string;
          key?: string;
          expiresAt?: string;
        };
        const imported = await db.transaction(async (tx) => {
          const org = await organizations.byPublicId(body.organizationId, tx);
          const input = { organizationId: org.id, permissions: body.permissions, label: body.label ?? null };
          return kind === 'org'
            ? credentials.keys.importOrgKey(tx, { ...input, key: body.key })
            : credentials.keys.importLegacyKey(tx, {
                ...input,
                key: body.key!,
                expiresAt: body.expiresAt ? new Date(body.expiresAt) : null,
              });
        });
        return reply.code(201).send({
          id: imported.row.publicId,
          organizationId: body.organizationId,
          ...(imported.key ? { key: imported.key } : {}),
        });
      },
    );
  }

  app.post(
    '/_ops/signing-keys/rotate',
    {
      config: { optionalJsonBody: true },
      schema: {
        ...ops,
        operationId: 'opsRotateSigningKey',
        summary: 'Rotate the token-signing key (the old one stays published until its tokens expire)',
        response: { 200: Type.Object({ kid: Type.String() }), ...errors },
      },
    },
    async () => ({ kid: (await credentials.signingKeys.rotate()).kid }),
  );

  app.post(
    '/_ops/agent-registrations',
    {
      schema: {
        ...ops,
        operationId: 'opsIssueAgentRegistration',
        summary:
          'Issue an agent registration credential (read permission; the sandbox of part 2 issues them to agents)',
        body: Type.Object(
          {
            workloadId: Type.String({ minLength: 1, maxLength: 200 }),
            organizationId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
            alias: Type.Optional(
              Type.Boolean({ description: 'Issue an older buyer read token (`mbt_`) instead.' }),
            ),
          },
          { additionalProperties: false, examples: [{ workloadId: 'agent-42' }] },
        ),
        response: {
          201: Type.Object({ activationId: Type.String(), key: Type.String(), state: Type.String() }),
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const result = await db.transaction(async (tx) => {
        const org = body.organizationId ? await organizations.byPublicId(body.organizationId, tx) : undefined;
        const issued = issueApiKey(body.alias ? PREFIX.buyerReadToken : PREFIX.agentRegistration);
        const now = ctx.deps.clock.nowMs();
        const ends = new Date(now + 30 * 86_400_000);
        const [row] = await tx
          .insert(agentRegistrations)
          .values({
            keyHash: issued.hash,
            hint: issued.hint,
            createdAt: new Date(now),
            expiresAt: ends,
            publicId: prefixedHexId('act'),
            workloadId: body.workloadId,
            state: org ? 'customer_bound' : 'unbound_free',
            organizationId: org?.id ?? null,
            allowanceEndsAt: ends,
          })
          .returning();
        return { activationId: row!.publicId, key: issued.plaintext, state: row!.state };
      });
      return reply.code(201).send(result);
    },
  );

  registerCredentialRoutes(app, {
    store: stores.userApiKeys,
    db,
    noun: 'user API key',
    attributes: {
      keyId: Type.String(),
      userId: Type.String(),
      organizationId: Type.String(),
      permissions: Type.Array(Type.String()),
    },
    issueFields: {
      userId: Type.String({ minLength: 1, maxLength: 64 }),
      organizationId: Type.String({ minLength: 1, maxLength: 64 }),
    },
    issue: async (tx, body) => {
      const user = await accounts.userByPublicId(body.userId, tx);
      const org = await organizations.byPublicId(body.organizationId, tx);
      if (!user) throw notFound('User', body.userId);
      const members = await organizations.membershipsOf(user.id, tx);
      if (!members.some((m) => m.organization.id === org.publicId))
        throw conflict(`${body.userId} is not a member of ${body.organizationId}.`);
      const created = await credentials.keys.createUserKey(tx, {
        userId: user.id,
        organizationId: org.id,
        organizationPublicId: org.publicId,
        label: body.label ?? null,
      });
      const row = (
        await stores.userApiKeys.list({ where: eq(userApiKeys.publicId, created.record.id), executor: tx })
      )[0]!;
      return { row, record: await stores.userApiKeys.record(row, tx), key: created.key };
    },
    filters: {
      fields: { userId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) },
      where: async (query) => {
        if (query.userId === undefined) return undefined;
        const user = await accounts.userByPublicId(query.userId);
        if (!user) throw notFound('User', query.userId);
        return eq(userApiKeys.userId, user.id);
      },
    },
    errorBody: ErrorEnvelope,
  });
}
