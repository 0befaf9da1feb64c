/**
 * Public routes of the payments service (HTTP layer only: parse, authenticate, call the domain, format).
 * Merchant routes take `Authorization: Bearer <API key | agent key>`; the payer route
 * `POST /v1/payment-intents/{intentId}/card-payments` is authenticated by the intent's client secret instead.
 * Every POST honours `Idempotency-Key` (through {@link IdempotentRunner}; the operator routes in ops-routes.ts do
 * not take it).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Tx } from '../../platform/database.ts';
import { ApiError } from '../../platform/errors.ts';
import type { ServiceApp } from '../../platform/http.ts';
import type { CardFingerprinter } from './card-fingerprint.ts';
import { type CheckedCard, checkCard } from './card-network.ts';
import type { IdempotentRunner, OperationAnswer } from './idempotent-runner.ts';
import {
  complianceResource,
  complianceSessionResource,
  limitsResource,
  type PartyService,
  type Principal,
  partyResource,
} from './parties.ts';
import {
  CardPaymentDocument,
  ComplianceDocument,
  ComplianceSessionDocument,
  CreateIntentBody,
  CreatePartyBody,
  ErrorBody,
  IdempotencyHeaders,
  IdParams,
  IntentDocument,
  IntentListDocument,
  IntentParams,
  IssueAgentKeyBody,
  IssuedCredential,
  KeyedCardBody,
  LimitsDocument,
  ListQuery,
  PageQuery,
  PartyListDocument,
  PartyParams,
  PartyResource,
  PayBody,
  ReplaceLineItemsBody,
  SetLimitsBody,
  VoiceSessionDocument,
} from './payments-schemas.ts';
import { cardPaymentResource, type PaymentService, voiceSessionResource } from './payments-service.ts';

declare module 'fastify' {
  interface FastifyRequest {
    paymentsPrincipal?: Principal;
  }
}

const bearer = [{ bearerAuth: [] }];
const errors = {
  400: ErrorBody,
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
  409: ErrorBody,
  429: ErrorBody,
};

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/** What the public routes need: settings, the domain services and the idempotency runner. */
export interface PaymentsRouteDeps {
  /** Requests per minute per credential, and payment attempts per minute per client address on the payer route. */
  limits: { keyRateLimit: number; payerRateLimit: number };
  payments: PaymentService;
  parties: PartyService;
  runner: IdempotentRunner;
  /** Keyed HMAC of card number and CVC for the idempotency fingerprints of the card routes. */
  cardFingerprints: CardFingerprinter;
  now: () => Date;
}

/** Registers the public API. */
export async function registerPaymentsRoutes(app: ServiceApp, deps: PaymentsRouteDeps) {
  const { payments, parties, runner } = deps;

  /**
   * What identifies the card of a card-route request for `Idempotency-Key`: brand, last4, expiry and a keyed
   * HMAC-SHA256 of number and CVC (card-fingerprint.ts). Another card or CVC is another request (409); the number
   * and the CVC themselves never reach the fingerprint record.
   */
  const cardFingerprintBody = (checked: CheckedCard) => ({
    card: {
      brand: checked.brand,
      last4: checked.last4,
      expMonth: checked.expMonth,
      expYear: checked.expYear,
      numberAndCvcHmac: deps.cardFingerprints.fingerprint(checked),
    },
  });
  app.addContentTypeParser(
    'application/vnd.api+json',
    { parseAs: 'string' },
    app.getDefaultJsonParser('error', 'error'),
  );

  const authenticate = async (request: FastifyRequest) => {
    request.paymentsPrincipal = await parties.authenticate(request.headers.authorization);
  };
  const rateLimited = (max: number, ttlMs: number) =>
    new ApiError(
      429,
      'rate_limited',
      `Too many requests: at most ${max} per minute. Retry after Retry-After seconds.`,
      {
        headers: { 'retry-after': String(Math.max(1, Math.ceil(ttlMs / 1000))) },
      },
    );
  const keyLimit = app.rateLimit({
    timeWindow: 60_000,
    max: deps.limits.keyRateLimit,
    keyGenerator: (request: FastifyRequest) => `key:${request.paymentsPrincipal?.credentialId ?? 'none'}`,
    errorResponseBuilder: (_request, context) => rateLimited(context.max, context.ttl),
  });
  const payerLimit = app.rateLimit({
    timeWindow: 60_000,
    max: deps.limits.payerRateLimit,
    keyGenerator: (request: FastifyRequest) => `payer:${request.ip}`,
    errorResponseBuilder: (_request, context) => rateLimited(context.max, context.ttl),
  });
  const merchant = [authenticate, keyLimit];
  const principalOf = (request: FastifyRequest): Principal => request.paymentsPrincipal!;
  const apiKeyOnly = (request: FastifyRequest): Principal => {
    const p = principalOf(request);
    if (p.kind !== 'api') {
      throw new ApiError(403, 'forbidden', 'Agent keys cannot do this; use an API key of the party.');
    }
    return p;
  };

  /** Runs a POST under its Idempotency-Key (if any) and sends the answer. */
  const post = async (
    request: FastifyRequest,
    reply: FastifyReply,
    scope: string,
    operation: (tx: Tx) => Promise<OperationAnswer>,
    fingerprintBody: unknown = request.body,
  ) => {
    const header = request.headers['idempotency-key'];
    const answer = await runner.run(
      {
        scope: `payments:${scope}`,
        key: Array.isArray(header) ? header[0] : header,
        method: 'POST',
        path: pathOf(request.url),
        fingerprintBody,
      },
      operation,
    );
    if (answer.replayed) reply.header('x-idempotency-replayed', 'true');
    return reply.code(answer.status).send(answer.body);
  };

  // ------------------------------------------------------------ parties, compliance, limits, keys

  app.get(
    '/v1/parties/me',
    {
      onRequest: merchant,
      schema: {
        operationId: 'getMyParty',
        tags: ['parties'],
        summary: 'The party of the credential',
        security: bearer,
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
      onRequest: merchant,
      schema: {
        operationId: 'listCustomerParties',
        tags: ['parties'],
        summary: 'List the caller’s customer parties, newest first (paged)',
        security: bearer,
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
      const link = (n: number) => `/v1/parties?page[number]=${n}&page[size]=${size}`;
      return {
        data: rows.map(partyResource),
        meta: { page: { number, size, total } },
        links: {
          self: link(number),
          next: number * size < total ? link(number + 1) : null,
          prev: number > 1 ? link(number - 1) : null,
        },
      };
    },
  );

  app.get(
    '/v1/parties/:partyId',
    {
      onRequest: merchant,
      schema: {
        operationId: 'getParty',
        tags: ['parties'],
        summary: 'A party: the caller itself (or `me`) or one of its customer parties',
        security: bearer,
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
      onRequest: merchant,
      schema: {
        operationId: 'getPartyCompliance',
        tags: ['compliance'],
        summary: 'Compliance status of a party (partyComplianceStatus)',
        description: 'displayState, canProceed, title and message follow from caseStatus (README table).',
        security: bearer,
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
      onRequest: merchant,
      schema: {
        operationId: 'getComplianceSession',
        tags: ['compliance'],
        summary: 'The compliance session (case) of a party: program, status, open requirements',
        security: bearer,
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
      onRequest: merchant,
      schema: {
        operationId: 'getTransactionLimits',
        tags: ['limits'],
        summary: 'Per-transaction limit of the caller (cents, or null for none)',
        security: bearer,
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
        summary: 'Revoke one of the caller’s keys (API keys only)',
        description:
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
        await parties.revokeKey(id, principal.partyId, tx);
        return { status: 204, body: null };
      });
    },
  );

  // ------------------------------------------------------------ payment intents

  app.post(
    '/v1/payment-intents',
    {
      onRequest: merchant,
      schema: {
        operationId: 'createPaymentIntent',
        tags: ['payment-intents'],
        summary: 'Create a payment intent for a customer party',
        description:
          'Amounts in integer US cents. Tax per line from the tax-code table, rounded half up (README). ' +
          'Refused with 403 compliance_required when the merchant or the customer cannot proceed, 400 ' +
          'limit_exceeded above the per-transaction limit (nothing is created).',
        security: bearer,
        headers: IdempotencyHeaders,
        body: CreateIntentBody,
        response: { 201: IntentDocument, ...errors },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const { attributes, relationships } = request.body.data;
      return post(request, reply, principal.partyId, async (tx) => {
        const row = await payments.create(tx, principal, {
          customerPartyId: relationships.customerParty.data.id,
          description: attributes.description ?? null,
          taxMode: attributes.taxMode,
          lineItems: attributes.lineItems,
          expiresAt: attributes.expiresAt,
        });
        return { status: 201, body: { data: payments.intentResource(row) } };
      });
    },
  );

  app.get(
    '/v1/payment-intents',
    {
      onRequest: merchant,
      schema: {
        operationId: 'listPaymentIntents',
        tags: ['payment-intents'],
        summary: 'List the caller’s payment intents, newest first (paged)',
        security: bearer,
        querystring: ListQuery,
        response: { 200: IntentListDocument, ...errors },
      },
    },
    async (request) => {
      const number = request.query['page[number]'] ?? 1;
      const size = request.query['page[size]'] ?? 20;
      const status = request.query['filter[status]'];
      const { rows, total } = await payments.list(
        principalOf(request),
        { limit: size, offset: (number - 1) * size },
        status,
      );
      const link = (n: number) =>
        `/v1/payment-intents?page[number]=${n}&page[size]=${size}${status ? `&filter[status]=${status}` : ''}`;
      return {
        data: rows.map((r) => payments.intentResource(r)),
        meta: { page: { number, size, total } },
        links: {
          self: link(number),
          next: number * size < total ? link(number + 1) : null,
          prev: number > 1 ? link(number - 1) : null,
        },
      };
    },
  );

  app.get(
    '/v1/payment-intents/:intentId',
    {
      onRequest: merchant,
      schema: {
        operationId: 'getPaymentIntent',
        tags: ['payment-intents'],
        summary: 'Read a payment intent (an intent past expiresAt is expired on read)',
        security: bearer,
        params: IntentParams,
        response: { 200: IntentDocument, ...errors },
      },
    },
    async (request) => ({
      data: payments.intentResource(await payments.get(principalOf(request), request.params.intentId)),
    }),
  );

  app.put(
    '/v1/payment-intents/:intentId/line-items',
    {
      onRequest: merchant,
      schema: {
        operationId: 'replacePaymentIntentLineItems',
        tags: ['payment-intents'],
        summary: 'Replace the line items of an open intent',
        description: 'New pli_ ids, positions 0..n-1 in the order sent; amount and taxAmount recomputed.',
        security: bearer,
        params: IntentParams,
        body: ReplaceLineItemsBody,
        response: { 200: IntentDocument, ...errors },
      },
    },
    async (request) => {
      const row = await payments.replaceLineItems(
        principalOf(request),
        request.params.intentId,
        request.body.data,
      );
      return { data: payments.intentResource(row) };
    },
  );

  app.post(
    '/v1/payment-intents/:intentId/cancel',
    {
      onRequest: merchant,
      schema: {
        operationId: 'cancelPaymentIntent',
        tags: ['payment-intents'],
        summary: 'Cancel an open intent',
        security: bearer,
        headers: IdempotencyHeaders,
        params: IntentParams,
        response: { 200: IntentDocument, ...errors },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      await payments.get(principal, request.params.intentId);
      return post(request, reply, principal.partyId, async (tx) => ({
        status: 200,
        body: {
          data: payments.intentResource(await payments.cancel(tx, principal, request.params.intentId)),
        },
      }));
    },
  );

  app.post(
    '/v1/payment-intents/:intentId/card-payments',
    {
      onRequest: payerLimit,
      schema: {
        operationId: 'payPaymentIntent',
        tags: ['checkout'],
        summary: 'Pay an intent with a card (payer side, authenticated by the client secret)',
        description:
          'Used by the hosted checkout page. A declined card still creates a card payment (status failed, ' +
          'failureCode, failureMessage): the intent returns to open for another card, or becomes declined after ' +
          'PAYMENTS_MAX_ATTEMPTS failures. The card number is never stored: only brand and last4. A wrong client ' +
          'secret is 404 (also for an Idempotency-Key replay); 403 compliance_required or 400 limit_exceeded when ' +
          'the merchant cannot take this payment now (nothing is recorded).',
        security: [],
        headers: IdempotencyHeaders,
        params: IntentParams,
        body: PayBody,
        response: { 201: CardPaymentDocument, ...errors },
      },
    },
    async (request, reply) => {
      const { clientSecret, card } = request.body.data.attributes;
      const checked = checkCard(card, deps.now(), '/data/attributes/card');
      const intentId = request.params.intentId;
      // The secret is checked before the idempotency record is consulted: a replay needs it too.
      payments.assertClientSecret(await payments.findFresh(intentId), clientSecret);
      const fingerprintBody = await cardFingerprintBody(checked);
      return post(
        request,
        reply,
        `checkout:${intentId}`,
        async (tx) => {
          const { payment, intent } = await payments.payWithLink(tx, intentId, clientSecret, checked);
          return {
            status: 201,
            body: { data: cardPaymentResource(payment), included: [payments.intentResource(intent)] },
          };
        },
        fingerprintBody,
      );
    },
  );

  app.get(
    '/v1/card-payments/:id',
    {
      onRequest: merchant,
      schema: {
        operationId: 'getCardPayment',
        tags: ['card-payments'],
        summary: 'Read a card payment',
        security: bearer,
        params: IdParams,
        response: { 200: CardPaymentDocument, ...errors },
      },
    },
    async (request) => ({
      data: cardPaymentResource(await payments.getCardPayment(principalOf(request), request.params.id)),
    }),
  );

  // ------------------------------------------------------------ voice

  app.post(
    '/v1/payment-intents/:intentId/voice-sessions',
    {
      onRequest: merchant,
      schema: {
        operationId: 'createVoiceSession',
        tags: ['voice'],
        summary: 'Start a voice session on an open intent',
        description:
          'An earlier active session of the intent ends (superseded); the intent’s voiceSession is this one.',
        security: bearer,
        headers: IdempotencyHeaders,
        params: IntentParams,
        response: { 201: VoiceSessionDocument, ...errors },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      await payments.get(principal, request.params.intentId);
      return post(request, reply, principal.partyId, async (tx) => ({
        status: 201,
        body: {
          data: voiceSessionResource(
            await payments.createVoiceSession(tx, principal, request.params.intentId),
          ),
        },
      }));
    },
  );

  app.get(
    '/v1/voice-sessions/:id',
    {
      onRequest: merchant,
      schema: {
        operationId: 'getVoiceSession',
        tags: ['voice'],
        summary: 'Read a voice session',
        security: bearer,
        params: IdParams,
        response: { 200: VoiceSessionDocument, ...errors },
      },
    },
    async (request) => ({
      data: voiceSessionResource(await payments.getVoiceSession(principalOf(request), request.params.id)),
    }),
  );

  app.post(
    '/v1/voice-sessions/:id/simulation/keyed-card',
    {
      onRequest: merchant,
      schema: {
        operationId: 'simulateVoiceKeyedCard',
        tags: ['voice'],
        summary: 'Simulation: the payer keys a card during the call (card payment with channel voice)',
        security: bearer,
        headers: IdempotencyHeaders,
        params: IdParams,
        body: KeyedCardBody,
        response: { 201: CardPaymentDocument, ...errors },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const { card } = request.body.data.attributes;
      const checked = checkCard(card, deps.now(), '/data/attributes/card');
      // Reading the session expires its intent first when due (expiry on read), so the attempt sees `expired`.
      await payments.getVoiceSession(principal, request.params.id);
      const fingerprintBody = await cardFingerprintBody(checked);
      return post(
        request,
        reply,
        principal.partyId,
        async (tx) => {
          const { payment, intent } = await payments.keyVoiceCard(tx, principal, request.params.id, checked);
          return {
            status: 201,
            body: { data: cardPaymentResource(payment), included: [payments.intentResource(intent)] },
          };
        },
        fingerprintBody,
      );
    },
  );

  app.post(
    '/v1/voice-sessions/:id/simulation/hang-up',
    {
      onRequest: merchant,
      schema: {
        operationId: 'simulateVoiceHangUp',
        tags: ['voice'],
        summary: 'Simulation: the payer hangs up (an active session ends)',
        security: bearer,
        headers: IdempotencyHeaders,
        params: IdParams,
        response: { 200: VoiceSessionDocument, ...errors },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      return post(request, reply, principal.partyId, async (tx) => ({
        status: 200,
        body: { data: voiceSessionResource(await payments.hangUp(tx, principal, request.params.id)) },
      }));
    },
  );
}

function PartyDocumentSchema() {
  return { type: 'object', properties: { data: PartyResource }, required: ['data'] } as const;
}
