import { ApiError } from '../../../platform/errors.ts';
import type { ServiceApp } from '../../../platform/http.ts';
import { IdempotencyHeaders, IdParams, IssueAgentKeyBody, IssuedCredential } from '../payments-schemas.ts';
import { bearer, errors, type PaymentsRouteContext } from './context.ts';

/** Registers the agent-key routes. */
export function registerAgentKeyRoutes(app: ServiceApp, ctx: PaymentsRouteContext) {
  const { parties, merchant, apiKeyOnly, post } = ctx;
  app.post(
    '/v1/agent-keys',
    {
      onRequest: merchant,
      schema: {
        operationId: 'issueAgentKey',
        tags: ['credentials'],
        summary: 'Issue an agent key for the caller (shown once; API keys only)',
        security: bearer,
        headers: IdempotencyHeaders,
        body: IssueAgentKeyBody,
        response: { 201: IssuedCredential, ...errors },
      },
    },
    async (request, reply) => {
      const principal = apiKeyOnly(request);
      // The answer holds the key: the idempotency record keeps it sealed (SecretBox), never in clear.
      return post(request, reply, principal.partyId, async (tx) => {
        const issued = await parties.issueKey(
          principal.partyId,
          'agent',
          request.body.data.attributes.label ?? null,
          tx,
        );
        return {
          status: 201,
          body: {
            data: {
              type: 'credential',
              id: String(issued.id),
              attributes: {
                kind: issued.kind,
                key: issued.key,
                hint: issued.hint,
                label: issued.label,
                createdAt: issued.createdAt,
              },
            },
          },
        };
      });
    },
  );

  app.post(
    '/v1/agent-keys/:id/revoke',
    {
      onRequest: merchant,
      schema: {
        operationId: 'revokeAgentKey',
        tags: ['credentials'],
        summary: 'Revoke one of the caller’s agent keys (called with an API key)',
        description:
          'Agent keys only: an API key id is 404 `credential_not_found` (API keys are revoked by the operator). ' +
          'Revoking a revoked key answers 204 again. Takes Idempotency-Key like every POST: the same key on the ' +
          'same path replays the 204 (X-Idempotency-Replayed: true); on another key id it is 409 ' +
          'idempotency_key_reused.',
        security: bearer,
        headers: IdempotencyHeaders,
        params: IdParams,
        response: { 204: { type: 'null' }, ...errors },
      },
    },
    async (request, reply) => {
      const principal = apiKeyOnly(request);
      const id = Number(request.params.id);
      if (!Number.isSafeInteger(id) || id < 1)
        throw new ApiError(404, 'credential_not_found', 'No such credential.');
      return post(request, reply, principal.partyId, async (tx) => {
        await parties.revokeAgentKey(id, principal.partyId, tx);
        return { status: 204, body: null };
      });
    },
  );
}
