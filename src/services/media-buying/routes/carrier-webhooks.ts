/**
 * The carrier's webhooks (README, "Carrier webhooks"): inbound texts to a line (`POST /carrier/webhooks/inbound`) and
 * delivery receipts (`POST /carrier/webhooks/status`). Each request is signed: `x-carrier-timestamp` (Unix seconds)
 * and `x-carrier-signature: v1=<hex HMAC-SHA256 of "<timestamp>.<raw body>">` under the webhook secret, within 300
 * seconds of the service clock; the signature is checked on the exact bytes received, before the body is validated.
 */
import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { firstHeader } from '../../../platform/auth.ts';
import type { Clock } from '../../../platform/clock.ts';
import { platformError } from '../../../platform/errors.ts';
import type { ServiceApp } from '../../../platform/http.ts';
import { E164_PATTERN, type Texting, verifyCarrierWebhook } from '../communications/index.ts';
import { carrierSignatureInvalid, notFound } from '../media-buying-errors.ts';
import { Envelope, ErrorEnvelope } from '../media-buying-schemas.ts';
import { TEXT_MAX_LENGTH } from './communications.ts';

/** The largest webhook body read (bytes). */
const MAX_WEBHOOK_BYTES = 64 * 1024;

/** The raw body of each webhook request, kept for its signature. */
const rawBodies = new WeakMap<FastifyRequest, string>();

const headers = Type.Object({
  'x-carrier-timestamp': Type.Optional(Type.String({ maxLength: 20, description: 'Unix seconds' })),
  'x-carrier-signature': Type.Optional(
    Type.String({
      maxLength: 1000,
      description: '`v1=<hex HMAC-SHA256>` (several comma-separated while rotating)',
    }),
  ),
});

const CarrierId = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:-]+$' });

/** Registers the carrier webhooks; `secret` is the HMAC key both sides share. */
export function registerCarrierWebhookRoutes(
  app: ServiceApp,
  deps: { texting: Texting; clock: Clock; secret: Buffer },
): void {
  const { texting, clock, secret } = deps;

  /** Keeps the exact bytes for the signature, then hands the platform's JSON parser the same bytes. */
  const keepRawBody = async (
    request: FastifyRequest,
    _reply: unknown,
    payload: AsyncIterable<Buffer | string>,
  ) => {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of payload) {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += buffer.length;
      if (size > MAX_WEBHOOK_BYTES)
        throw platformError('payload_too_large', `Webhook bodies are at most ${MAX_WEBHOOK_BYTES} bytes.`);
      chunks.push(buffer);
    }
    const raw = Buffer.concat(chunks);
    rawBodies.set(request, raw.toString('utf8'));
    const stream = Readable.from([raw]) as Readable & { receivedEncodedLength?: number };
    stream.receivedEncodedLength = raw.length;
    return stream;
  };

  /** Refuses an unsigned or badly signed request before its body is validated. */
  const checkSignature = async (request: FastifyRequest) => {
    const refusal = verifyCarrierWebhook(
      secret,
      {
        timestamp: firstHeader(request.headers['x-carrier-timestamp']),
        signature: firstHeader(request.headers['x-carrier-signature']),
      },
      rawBodies.get(request) ?? '',
      clock.nowMs(),
    );
    if (refusal) throw carrierSignatureInvalid(refusal);
  };

  const route = { preParsing: keepRawBody, preValidation: checkSignature };
  // No credential scheme: the carrier authenticates each request by its HMAC signature (headers below), as webhooks do.
  const security: { [scheme: string]: string[] }[] = [];

  app.post(
    '/carrier/webhooks/inbound',
    {
      ...route,
      schema: {
        operationId: 'carrierInboundText',
        tags: ['carrier'],
        security,
        summary: 'The carrier delivers an inbound text to a line (signed)',
        description:
          'Keywords (STOP, UNSUBSCRIBE, CANCEL, END, QUIT; START, UNSTOP; HELP, INFO: one word, trimmed, trailing punctuation dropped, any case) ' +
          "update the number's consent on the line; any other text goes to the line's storefront agent, which may " +
          'queue one drafted reply. A message id delivered again is stored once. 404 when `to` is no active line.',
        headers,
        body: Type.Object(
          {
            messageId: CarrierId,
            to: Type.String({ pattern: E164_PATTERN, description: "The line's number" }),
            from: Type.String({
              pattern: '^\\+?[0-9]{3,15}$',
              description:
                "The sender's number (untrusted); written without `+` it is read as a +1 number (`13125550147` and `3125550147` are `+13125550147`)",
            }),
            text: Type.String({ maxLength: TEXT_MAX_LENGTH, description: 'The words (may be blank)' }),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Envelope(
            Type.Object({
              inboundId: Type.String({ description: '`txi_` + 32 hex' }),
              kind: Type.Union([
                Type.Literal('opt_out'),
                Type.Literal('opt_in'),
                Type.Literal('help'),
                Type.Literal('brief'),
              ]),
              duplicate: Type.Boolean(),
            }),
          ),
          400: ErrorEnvelope,
          401: ErrorEnvelope,
          404: ErrorEnvelope,
          413: ErrorEnvelope,
        },
      },
    },
    async (request) => {
      const { messageId, to, from, text } = request.body;
      const received = await texting.receive({ carrierMessageId: messageId, to, from, text });
      if (!received) throw notFound('Line', to);
      return { data: received, error: null };
    },
  );

  app.post(
    '/carrier/webhooks/status',
    {
      ...route,
      schema: {
        operationId: 'carrierDeliveryReceipt',
        tags: ['carrier'],
        security,
        summary: 'The carrier reports the delivery of a text it accepted (signed)',
        headers,
        body: Type.Object(
          {
            messageId: CarrierId,
            status: Type.Union([
              Type.Literal('delivered'),
              Type.Literal('undelivered'),
              Type.Literal('failed'),
              Type.Literal('expired'),
            ]),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Envelope(Type.Object({ recorded: Type.Boolean() })),
          400: ErrorEnvelope,
          401: ErrorEnvelope,
          413: ErrorEnvelope,
        },
      },
    },
    async (request) => {
      const recorded = await texting.receipt(request.body.messageId, request.body.status);
      return { data: { recorded }, error: null };
    },
  );
}
