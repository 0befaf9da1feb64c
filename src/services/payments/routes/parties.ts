import type { ServiceApp } from '../../../platform/http.ts';
import { complianceResource, complianceSessionResource, limitsResource, partyResource } from '../parties.ts';
import {
  ComplianceDocument,
  ComplianceSessionDocument,
  CreatePartyBody,
  IdempotencyHeaders,
  LimitsDocument,
  PageQuery,
  PartyListDocument,
  PartyParams,
  SetLimitsBody,
} from '../payments-schemas.ts';
import {
  bearer,
  bearerOrScope,
  errors,
  PartyDocumentSchema,
  type PaymentsRouteContext,
  pagedDocument,
} from './context.ts';

/** Registers the party, compliance and limit routes. */
export function registerPartyRoutes(app: ServiceApp, ctx: PaymentsRouteContext) {
  const { parties, merchant, merchantWith, principalOf, apiKeyOnly, post } = ctx;
  app.get(
    '/v1/parties/me',
    {
      onRequest: merchantWith('parties:read'),
      schema: {
        operationId: 'getMyParty',
        tags: ['parties'],
        summary: 'The party of the credential',
        security: bearerOrScope('parties:read'),
        response: { 200: PartyDocumentSchema(), ...errors },
      },
    },
    async (request) => ({ data: partyResource(await parties.visible(principalOf(request), 'me')) }),
  );

  app.post(
    '/v1/parties',
    {
      onRequest: merchant,
      schema: {
        operationId: 'createCustomerParty',
        tags: ['parties'],
        summary: 'Create a customer party (the party being paid); API keys only',
        description:
          'The new party belongs to the caller and starts with compliance case NOT_READY: it cannot take payments ' +
          'until its case is MET.',
        security: bearer,
        headers: IdempotencyHeaders,
        body: CreatePartyBody,
        response: { 201: PartyDocumentSchema(), ...errors },
      },
    },
    async (request, reply) => {
      const principal = apiKeyOnly(request);
      return post(request, reply, principal.partyId, async (tx) => {
        const row = await parties.create(
          { kind: 'customer', name: request.body.data.attributes.name, ownerPartyId: principal.partyId },
          tx,
        );
        return { status: 201, body: { data: partyResource(row) } };
      });
    },
  );

  app.get(
    '/v1/parties',
    {
      onRequest: merchantWith('parties:read'),
      schema: {
        operationId: 'listCustomerParties',
        tags: ['parties'],
        summary: 'List the caller’s customer parties, newest first (paged)',
        security: bearerOrScope('parties:read'),
        querystring: PageQuery,
        response: { 200: PartyListDocument, ...errors },
      },
    },
    async (request) => {
      const number = request.query['page[number]'] ?? 1;
      const size = request.query['page[size]'] ?? 20;
      const { rows, total } = await parties.listCustomers(
        principalOf(request).partyId,
        size,
        (number - 1) * size,
      );
      return pagedDocument(rows.map(partyResource), { number, size, total }, '/v1/parties');
    },
  );

  app.get(
    '/v1/parties/:partyId',
    {
      onRequest: merchantWith('parties:read'),
      schema: {
        operationId: 'getParty',
        tags: ['parties'],
        summary: 'A party: the caller itself (or `me`) or one of its customer parties',
        security: bearerOrScope('parties:read'),
        params: PartyParams,
        response: { 200: PartyDocumentSchema(), ...errors },
      },
    },
    async (request) => ({
      data: partyResource(await parties.visible(principalOf(request), request.params.partyId)),
    }),
  );

  app.get(
    '/v1/parties/:partyId/compliance',
    {
      onRequest: merchantWith('compliance:read'),
      schema: {
        operationId: 'getPartyCompliance',
        tags: ['compliance'],
        summary: 'Compliance status of a party (partyComplianceStatus)',
        description: 'displayState, canProceed, title and message follow from caseStatus (README table).',
        security: bearerOrScope('compliance:read'),
        params: PartyParams,
        response: { 200: ComplianceDocument, ...errors },
      },
    },
    async (request) => ({
      data: complianceResource(await parties.visible(principalOf(request), request.params.partyId)),
    }),
  );

  app.get(
    '/v1/parties/:partyId/compliance/session',
    {
      onRequest: merchantWith('compliance:read'),
      schema: {
        operationId: 'getComplianceSession',
        tags: ['compliance'],
        summary: 'The compliance session (case) of a party: program, status, open requirements',
        security: bearerOrScope('compliance:read'),
        params: PartyParams,
        response: { 200: ComplianceSessionDocument, ...errors },
      },
    },
    async (request) => ({
      data: complianceSessionResource(await parties.visible(principalOf(request), request.params.partyId)),
    }),
  );

  app.get(
    '/v1/parties/me/limits',
    {
      onRequest: merchantWith('limits:read'),
      schema: {
        operationId: 'getTransactionLimits',
        tags: ['limits'],
        summary: 'Per-transaction limit of the caller (cents, or null for none)',
        security: bearerOrScope('limits:read'),
        response: { 200: LimitsDocument, ...errors },
      },
    },
    async (request) => ({ data: limitsResource(await parties.visible(principalOf(request), 'me')) }),
  );

  app.put(
    '/v1/parties/me/limits',
    {
      onRequest: merchant,
      schema: {
        operationId: 'setTransactionLimits',
        tags: ['limits'],
        summary: 'Set the per-transaction limit (API keys only)',
        description: 'Intents whose amount is above the limit are refused (400 limit_exceeded).',
        security: bearer,
        body: SetLimitsBody,
        response: { 200: LimitsDocument, ...errors },
      },
    },
    async (request) => {
      const principal = apiKeyOnly(request);
      return {
        data: limitsResource(
          await parties.setLimit(principal.partyId, request.body.data.attributes.perTransaction),
        ),
      };
    },
  );
}
