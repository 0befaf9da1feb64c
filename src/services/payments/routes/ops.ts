/**
 * Operator routes (`/_ops`, Bearer OPERATOR_TOKEN): create parties and credentials, move compliance cases, drive
 * the card simulator (settle a pending payment now) and run the expiry sweep.
 */
import { Type } from '@sinclair/typebox';
import { eq } from 'drizzle-orm';
import { registerCredentialRoutes } from '../../../platform/credential-routes.ts';
import type { Db } from '../../../platform/database.ts';
import { ApiError } from '../../../platform/errors.ts';
import type { ServiceApp } from '../../../platform/http.ts';
import { StringEnum } from '../../../platform/schemas.ts';
import { CASE_STATUSES } from '../compliance.ts';
import { credentials } from '../db/schema.ts';
import {
  AGENT_KEY_PREFIX,
  API_KEY_PREFIX,
  type CredentialStore,
  complianceResource,
  type PartyService,
  partyNotFound,
  partyResource,
} from '../parties.ts';
import { cardPaymentResource } from '../payment-resources.ts';
import {
  CardPaymentResource,
  ComplianceDocument,
  CredentialRecord,
  ErrorBody,
  PartyResource,
} from '../payments-schemas.ts';
import type { PaymentService } from '../payments-service.ts';

const ops = { tags: ['operator'], security: [{ operatorToken: [] }] };
const errors = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody, 409: ErrorBody };

const IssuedKey = Type.Object({ ...CredentialRecord.properties, key: Type.String() });

/** Registers the operator routes. */
export async function registerOpsRoutes(
  app: ServiceApp,
  deps: { payments: PaymentService; parties: PartyService; keys: CredentialStore; db: Db },
) {
  app.post(
    '/_ops/parties',
    {
      schema: {
        ...ops,
        operationId: 'opsCreateParty',
        summary: 'Create a party (a merchant gets an API key, shown once)',
        description:
          'A customer party needs `ownerPartyId` (its merchant). `caseStatus` seeds the compliance case ' +
          '(default NOT_READY) without going through the case transitions.',
        body: Type.Object(
          {
            kind: StringEnum(['merchant', 'customer'] as const),
            name: Type.String({ minLength: 1, maxLength: 200 }),
            ownerPartyId: Type.Optional(Type.String()),
            caseStatus: Type.Optional(StringEnum(CASE_STATUSES)),
            perTransaction: Type.Optional(
              Type.Union([Type.Integer({ minimum: 1, maximum: 99_999_999 }), Type.Null()]),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Object({ data: PartyResource, apiKey: Type.Union([IssuedKey, Type.Null()]) }),
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      if (body.kind === 'customer') {
        const owner = body.ownerPartyId ? await deps.parties.find(body.ownerPartyId) : undefined;
        if (owner?.kind !== 'merchant') {
          throw new ApiError(400, 'invalid_value', 'A customer party needs ownerPartyId of a merchant.', {
            details: { pointer: '/ownerPartyId' },
          });
        }
      }
      const { party, apiKey } = await deps.parties.createWithApiKey({
        kind: body.kind,
        name: body.name,
        ownerPartyId: body.kind === 'customer' ? body.ownerPartyId : null,
        caseStatus: body.caseStatus,
        perTransaction: body.perTransaction ?? null,
      });
      return reply.code(201).send({ data: partyResource(party), apiKey });
    },
  );

  registerCredentialRoutes(app, {
    store: deps.keys,
    db: deps.db,
    attributes: {
      partyId: Type.String(),
      kind: StringEnum(['api', 'agent', 'oauth_client'] as const),
      clientId: Type.Union([Type.String(), Type.Null()], { description: 'OAuth clients only' }),
      scopes: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'OAuth clients only' }),
    },
    issueFields: {
      partyId: Type.String({ minLength: 1, maxLength: 100 }),
      kind: StringEnum(['api', 'agent'] as const),
    },
    issue: async (tx, body) => {
      const party = await deps.parties.find(body.partyId, tx);
      if (!party) throw partyNotFound('/partyId');
      return deps.keys.issue(tx, {
        prefix: body.kind === 'api' ? API_KEY_PREFIX : AGENT_KEY_PREFIX,
        label: body.label,
        values: { partyId: party.id, kind: body.kind },
      });
    },
    filters: {
      fields: { partyId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) },
      where: async (query) =>
        query.partyId === undefined ? undefined : eq(credentials.partyId, query.partyId),
    },
    errorBody: ErrorBody,
    noun: 'credential',
  });

  app.post(
    '/_ops/parties/:partyId/compliance/case',
    {
      schema: {
        ...ops,
        operationId: 'opsMoveComplianceCase',
        summary: 'Move a party’s compliance case to another status (README transition table)',
        params: Type.Object({ partyId: Type.String() }),
        body: Type.Object(
          {
            caseStatus: StringEnum(CASE_STATUSES),
            requirements: Type.Optional(
              Type.Array(
                Type.Object(
                  {
                    key: Type.String({ minLength: 1, maxLength: 100 }),
                    description: Type.String({ minLength: 1, maxLength: 500 }),
                  },
                  { additionalProperties: false },
                ),
                { maxItems: 50 },
              ),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: ComplianceDocument, ...errors },
      },
    },
    async (request) => ({
      data: complianceResource(
        await deps.parties.moveCase(
          request.params.partyId,
          request.body.caseStatus,
          request.body.requirements,
        ),
      ),
    }),
  );

  app.post(
    '/_ops/card-payments/:id/settle',
    {
      schema: {
        ...ops,
        operationId: 'opsSettleCardPayment',
        summary: 'Settle a processing card payment now (what the settle job does)',
        params: Type.Object({ id: Type.String() }),
        response: { 200: Type.Object({ data: CardPaymentResource }), ...errors },
      },
    },
    async (request) => {
      await deps.payments.settleCardPayment(request.params.id);
      const [row] = await deps.payments.cardPaymentsById([request.params.id]);
      if (!row) throw new ApiError(404, 'card_payment_not_found', 'No such card payment.');
      return { data: cardPaymentResource(row) };
    },
  );

  app.post(
    '/_ops/payment-intents/expire-due',
    {
      schema: {
        ...ops,
        operationId: 'opsExpireDueIntents',
        summary: 'Expire open intents past expiresAt now (what the cron job does)',
        response: { 200: Type.Object({ expired: Type.Integer() }), 401: ErrorBody },
      },
    },
    async () => ({ expired: await deps.payments.expireDue() }),
  );
}
