import type { ServiceApp } from '../../../platform/http.ts';
import { checkCard } from '../card-network.ts';
import { cardPaymentResource, voiceSessionResource } from '../payment-resources.ts';
import {
  CardPaymentDocument,
  IdempotencyHeaders,
  IdParams,
  IntentParams,
  KeyedCardBody,
  VoiceSessionDocument,
} from '../payments-schemas.ts';
import { bearerOrScope, errors, type PaymentsRouteContext } from './context.ts';

/** Registers the voice-session routes. */
export function registerVoiceSessionRoutes(app: ServiceApp, ctx: PaymentsRouteContext) {
  const { payments, merchantWith, principalOf, post, cardFingerprintBody, resources } = ctx;
  app.post(
    '/v1/payment-intents/:intentId/voice-sessions',
    {
      onRequest: merchantWith('voice_sessions:write'),
      schema: {
        operationId: 'createVoiceSession',
        tags: ['voice'],
        summary: 'Start a voice session on an open intent',
        description:
          'An earlier active session of the intent ends (superseded); the intent’s voiceSession is this one.',
        security: bearerOrScope('voice_sessions:write'),
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
      onRequest: merchantWith('voice_sessions:read'),
      schema: {
        operationId: 'getVoiceSession',
        tags: ['voice'],
        summary: 'Read a voice session',
        security: bearerOrScope('voice_sessions:read'),
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
      onRequest: merchantWith('voice_sessions:write'),
      schema: {
        operationId: 'simulateVoiceKeyedCard',
        tags: ['voice'],
        summary: 'Simulation: the payer keys a card during the call (card payment with channel voice)',
        security: bearerOrScope('voice_sessions:write'),
        headers: IdempotencyHeaders,
        params: IdParams,
        body: KeyedCardBody,
        response: { 201: CardPaymentDocument, ...errors },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const { card } = request.body.data.attributes;
      const checked = checkCard(card, ctx.now(), '/data/attributes/card');
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
            body: { data: cardPaymentResource(payment), included: [resources.intent(intent)] },
          };
        },
        fingerprintBody,
      );
    },
  );

  app.post(
    '/v1/voice-sessions/:id/simulation/hang-up',
    {
      onRequest: merchantWith('voice_sessions:write'),
      schema: {
        operationId: 'simulateVoiceHangUp',
        tags: ['voice'],
        summary: 'Simulation: the payer hangs up (an active session ends)',
        security: bearerOrScope('voice_sessions:write'),
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
