/**
 * Buyer-agent M2M credentials (spec "Authentication": an opaque buyer-agent identity, no action permissions, issued by
 * a directly authenticated organization administrator, not managed through the M2M application route): issue,
 * replacement, reconciliation and revocation, all from an administrator's interactive session.
 */
import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../../platform/http.ts';
import { Envelope, ErrorEnvelope, idErrors, security } from '../media-buying-schemas.ts';
import type { MediaBuyingRouteContext } from './context.ts';

const Credential = Type.Object({
  id: Type.String({ description: '`bag_` + 32 hex' }),
  agentIdentifier: Type.String(),
  label: Type.Union([Type.String(), Type.Null()]),
  maskedKey: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  replacedBy: Type.Union([Type.String(), Type.Null()]),
});

const Issued = Type.Object({
  key: Type.String({ description: 'Shown in this answer only.' }),
  record: Credential,
});
const Params = Type.Object({ credentialId: Type.String({ minLength: 1, maxLength: 64 }) });
const AgentIdentifier = Type.String({ minLength: 1, maxLength: 300, pattern: '^\\S+$' });

/** Registers the buyer-agent credential routes. */
export function registerBuyerAgentRoutes(app: ServiceApp, ctx: MediaBuyingRouteContext): void {
  const { db, credentials, organizations } = ctx.deps;
  const keys = credentials.keys;
  const admin = ctx.authenticated({ admin: true });
  const audit = (request: Parameters<typeof ctx.caller>[0], action: string, id: string) => {
    const caller = ctx.caller(request);
    return (tx: Parameters<typeof organizations.audit>[0]) =>
      organizations.audit(
        tx,
        caller.organization!.id,
        { userId: caller.user!.id, kind: caller.kind },
        action,
        'buyer_agent_credential',
        id,
        {},
      );
  };

  app.post(
    '/api/v2/buyer-agent-credentials',
    {
      onRequest: admin,
      schema: {
        operationId: 'issueBuyerAgentCredential',
        tags: ['credentials'],
        summary: 'Issue a buyer-agent credential (identity only; shown once)',
        security,
        body: Type.Object(
          {
            agentIdentifier: AgentIdentifier,
            label: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
          },
          {
            additionalProperties: false,
            examples: [{ agentIdentifier: 'https://agent.example.com', label: 'planner' }],
          },
        ),
        response: { 201: Envelope(Issued), ...idErrors, 409: ErrorEnvelope },
      },
    },
    async (request, reply) => {
      const caller = ctx.caller(request);
      const issued = await db.transaction(async (tx) => {
        const result = await keys.issueBuyerAgent(tx, {
          organizationId: caller.organization!.id,
          agentIdentifier: request.body.agentIdentifier,
          label: request.body.label ?? null,
          issuedByUserId: caller.user!.id,
        });
        await audit(request, 'buyer_agent_credential.issued', result.record.id)(tx);
        return result;
      });
      return reply.code(201).send(ctx.ok(issued));
    },
  );

  app.get(
    '/api/v2/buyer-agent-credentials',
    {
      onRequest: admin,
      schema: {
        operationId: 'listBuyerAgentCredentials',
        tags: ['credentials'],
        summary: "The organization's buyer-agent credentials, masked",
        security,
        querystring: Type.Object(
          { includeRevoked: Type.Optional(Type.Boolean()) },
          { additionalProperties: false },
        ),
        response: { 200: Envelope(Type.Array(Credential)), ...idErrors },
      },
    },
    async (request) =>
      ctx.ok(
        await keys.listBuyerAgents(ctx.caller(request).organization!.id, {
          includeRevoked: request.query.includeRevoked,
        }),
      ),
  );

  app.post(
    '/api/v2/buyer-agent-credentials/:credentialId/replace',
    {
      onRequest: admin,
      config: { optionalJsonBody: true },
      schema: {
        operationId: 'replaceBuyerAgentCredential',
        tags: ['credentials'],
        summary: 'Replace a buyer-agent credential: a new secret, the old one revoked',
        security,
        params: Params,
        response: { 201: Envelope(Issued), ...idErrors },
      },
    },
    async (request, reply) => {
      const caller = ctx.caller(request);
      const replaced = await db.transaction(async (tx) => {
        const result = await keys.replaceBuyerAgent(tx, {
          organizationId: caller.organization!.id,
          publicId: request.params.credentialId,
          issuedByUserId: caller.user!.id,
        });
        await audit(request, 'buyer_agent_credential.replaced', request.params.credentialId)(tx);
        return result;
      });
      return reply.code(201).send(ctx.ok(replaced));
    },
  );

  app.post(
    '/api/v2/buyer-agent-credentials/reconcile',
    {
      onRequest: admin,
      schema: {
        operationId: 'reconcileBuyerAgentCredentials',
        tags: ['credentials'],
        summary: 'Compare the agents you expect with the credentials that exist (changes nothing)',
        security,
        body: Type.Object(
          { agentIdentifiers: Type.Array(AgentIdentifier, { maxItems: 500 }) },
          { additionalProperties: false, examples: [{ agentIdentifiers: ['https://agent.example.com'] }] },
        ),
        response: {
          200: Envelope(
            Type.Object({
              matched: Type.Array(Credential),
              missing: Type.Array(Type.String()),
              unexpected: Type.Array(Credential),
            }),
          ),
          ...idErrors,
        },
      },
    },
    async (request) =>
      ctx.ok(
        await keys.reconcileBuyerAgents(ctx.caller(request).organization!.id, request.body.agentIdentifiers),
      ),
  );

  app.delete(
    '/api/v2/buyer-agent-credentials/:credentialId',
    {
      onRequest: admin,
      schema: {
        operationId: 'revokeBuyerAgentCredential',
        tags: ['credentials'],
        summary: 'Revoke a buyer-agent credential',
        security,
        params: Params,
        response: {
          200: Envelope(Type.Object({ id: Type.String(), revoked: Type.Literal(true) })),
          ...idErrors,
        },
      },
    },
    async (request) => {
      const caller = ctx.caller(request);
      await db.transaction(async (tx) => {
        await keys.revokeBuyerAgent(tx, caller.organization!.id, request.params.credentialId);
        await audit(request, 'buyer_agent_credential.revoked', request.params.credentialId)(tx);
      });
      return ctx.ok({ id: request.params.credentialId, revoked: true as const });
    },
  );
}
