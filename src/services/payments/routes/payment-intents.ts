import type { ServiceApp } from '../../../platform/http.ts';
import { checkCard } from '../card-network.ts';
import { cardPaymentResource } from '../payment-resources.ts';
import {
  CardPaymentDocument,
  CreateIntentBody,
  IdempotencyHeaders,
  IdParams,
  IntentDocument,
  IntentListDocument,
  IntentParams,
  ListQuery,
  PayBody,
  ReplaceLineItemsBody,
} from '../payments-schemas.ts';
import { bearerOrScope, errors, type PaymentsRouteContext, pagedDocument } from './context.ts';

/** Registers the payment-intent and card-payment routes. */
export function registerPaymentIntentRoutes(app: ServiceApp, ctx: PaymentsRouteContext) {
  const { payments, merchantWith, payerLimit, principalOf, post, cardFingerprintBody, resources } = ctx;
  app.post(
    '/v1/payment-intents',
    {
      onRequest: merchantWith('payment_intents:write'),
      schema: {
        operationId: 'createPaymentIntent',
        tags: ['payment-intents'],
        summary: 'Create a payment intent for a customer party',
        description:
          'Amounts in integer US cents. Tax per line from the tax-code table, rounded half up (README). ' +
          'Refused with 403 compliance_required when the merchant or the customer cannot proceed, 400 ' +
          'limit_exceeded above the per-transaction limit (nothing is created).',
        security: bearerOrScope('payment_intents:write'),
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
        return { status: 201, body: { data: resources.intent(row) } };
      });
    },
  );

  app.get(
    '/v1/payment-intents',
    {
      onRequest: merchantWith('payment_intents:read'),
      schema: {
        operationId: 'listPaymentIntents',
        tags: ['payment-intents'],
        summary: 'List the caller’s payment intents, newest first (paged)',
        security: bearerOrScope('payment_intents:read'),
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
      return pagedDocument(
        rows.map((r) => resources.intent(r)),
        { number, size, total },
        '/v1/payment-intents',
        status ? `&filter[status]=${status}` : '',
      );
    },
  );

  app.get(
    '/v1/payment-intents/:intentId',
    {
      onRequest: merchantWith('payment_intents:read'),
      schema: {
        operationId: 'getPaymentIntent',
        tags: ['payment-intents'],
        summary: 'Read a payment intent (an intent past expiresAt is expired on read)',
        security: bearerOrScope('payment_intents:read'),
        params: IntentParams,
        response: { 200: IntentDocument, ...errors },
      },
    },
    async (request) => ({
      data: resources.intent(await payments.get(principalOf(request), request.params.intentId)),
    }),
  );

  app.put(
    '/v1/payment-intents/:intentId/line-items',
    {
      onRequest: merchantWith('payment_intents:write'),
      schema: {
        operationId: 'replacePaymentIntentLineItems',
        tags: ['payment-intents'],
        summary: 'Replace the line items of an open intent',
        description: 'New pli_ ids, positions 0..n-1 in the order sent; amount and taxAmount recomputed.',
        security: bearerOrScope('payment_intents:write'),
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
      return { data: resources.intent(row) };
    },
  );

  app.post(
    '/v1/payment-intents/:intentId/cancel',
    {
      onRequest: merchantWith('payment_intents:write'),
      schema: {
        operationId: 'cancelPaymentIntent',
        tags: ['payment-intents'],
        summary: 'Cancel an open intent',
        security: bearerOrScope('payment_intents:write'),
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
          data: resources.intent(await payments.cancel(tx, principal, request.params.intentId)),
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
      const checked = checkCard(card, ctx.now(), '/data/attributes/card');
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
            body: { data: cardPaymentResource(payment), included: [resources.intent(intent)] },
          };
        },
        fingerprintBody,
      );
    },
  );

  app.get(
    '/v1/card-payments/:id',
    {
      onRequest: merchantWith('card_payments:read'),
      schema: {
        operationId: 'getCardPayment',
        tags: ['card-payments'],
        summary: 'Read a card payment',
        security: bearerOrScope('card_payments:read'),
        params: IdParams,
        response: { 200: CardPaymentDocument, ...errors },
      },
    },
    async (request) => ({
      data: cardPaymentResource(await payments.getCardPayment(principalOf(request), request.params.id)),
    }),
  );
}
