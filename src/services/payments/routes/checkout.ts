/** HTTP routes of the hosted checkout page and its two static assets (see checkout-page.ts). */
import type { ServiceApp } from '../../../platform/http.ts';
import { isPrefixedHexId } from '../../../platform/ids.ts';
import {
  CHECKOUT_CSS,
  CHECKOUT_FAVICON,
  CHECKOUT_HEADERS,
  CHECKOUT_JS,
  renderCheckoutPage,
  renderNotFoundPage,
} from '../checkout-page.ts';
import type { PaymentService } from '../payments-service.ts';

const html = {
  200: { description: 'HTML page', type: 'string' },
  404: { description: 'HTML page', type: 'string' },
};

/** Registers `GET /checkout/{intentId}` and `/checkout/assets/*`. */
export async function registerCheckoutRoutes(app: ServiceApp, deps: { payments: PaymentService }) {
  app.get(
    '/checkout/:intentId',
    {
      schema: {
        operationId: 'getCheckoutPage',
        security: [],
        tags: ['checkout'],
        summary: 'Hosted checkout page of an intent (payUrl; the client secret travels in the URL fragment)',
        params: { type: 'object', properties: { intentId: { type: 'string', maxLength: 100 } } },
        produces: ['text/html'],
        response: html,
      },
    },
    async (request, reply) => {
      const { intentId } = request.params as { intentId: string };
      reply.headers(CHECKOUT_HEADERS).type('text/html; charset=utf-8');
      const intent = isPrefixedHexId('pmi', intentId) ? await deps.payments.findFresh(intentId) : undefined;
      if (!intent) return reply.code(404).send(renderNotFoundPage());
      const merchant = await deps.payments.merchantName(intent.merchantPartyId);
      return reply.send(renderCheckoutPage(intent, merchant));
    },
  );

  app.get(
    '/checkout/assets/checkout.js',
    {
      schema: {
        operationId: 'getCheckoutScript',
        security: [],
        tags: ['checkout'],
        summary: 'Script of the checkout page',
        produces: ['text/javascript'],
        response: { 200: { type: 'string' } },
      },
    },
    async (_request, reply) =>
      reply
        .headers({ 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' })
        .type('text/javascript; charset=utf-8')
        .send(CHECKOUT_JS),
  );

  app.get(
    '/checkout/assets/checkout.css',
    {
      schema: {
        operationId: 'getCheckoutStylesheet',
        security: [],
        tags: ['checkout'],
        summary: 'Stylesheet of the checkout page',
        produces: ['text/css'],
        response: { 200: { type: 'string' } },
      },
    },
    async (_request, reply) =>
      reply
        .headers({ 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' })
        .type('text/css; charset=utf-8')
        .send(CHECKOUT_CSS),
  );

  app.get(
    '/checkout/assets/favicon.svg',
    {
      schema: {
        operationId: 'getCheckoutIcon',
        security: [],
        tags: ['checkout'],
        summary: 'Icon of the checkout page',
        produces: ['image/svg+xml'],
        response: { 200: { type: 'string' } },
      },
    },
    async (_request, reply) =>
      reply
        .headers({ 'cache-control': 'public, max-age=86400', 'x-content-type-options': 'nosniff' })
        .type('image/svg+xml')
        .send(CHECKOUT_FAVICON),
  );
}
