/**
 * The text-message commands (spec "Text messaging"): `POST /api/v2/communications/messages` (SMS) and
 * `POST /api/v2/communications/rcs/messages` (RCS, an alpha feature: `rcs-messaging`). The field names are ours (the
 * spec does not show them): `requestId`, `line`, `destination`, `text`. There is no status lookup route (rule 6).
 */
import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../../platform/http.ts';
import { E164_PATTERN, type Texting } from '../communications/index.ts';
import { Envelope, ErrorEnvelope, security } from '../media-buying-schemas.ts';
import type { MediaBuyingRouteContext } from './context.ts';

/** The longest text a command takes (characters): ten concatenated GSM-7 segments at most, as carriers cap it. */
export const TEXT_MAX_LENGTH = 1600;

const UUID = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

const TextCommandBody = Type.Object(
  {
    requestId: Type.String({
      pattern: UUID,
      description: 'A UUID you choose: repeating the same command with it is safe (rules 3 and 4).',
    }),
    line: Type.String({
      pattern: E164_PATTERN,
      description: "The line's number (E.164), assigned to your Seller Account by the operator.",
    }),
    destination: Type.String({
      pattern: E164_PATTERN,
      description: 'The recipient, E.164 (`+<country code><number>`): ordinary +1 numbers only.',
    }),
    text: Type.String({
      minLength: 1,
      maxLength: TEXT_MAX_LENGTH,
      pattern: '\\S',
      description:
        'The words. GSM-7 texts take 160 characters per single segment (153 per segment when longer); any other ' +
        'character makes the text UCS-2 (70, then 67 per segment). Segments count against the daily budget.',
    }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        requestId: '6f1c2b1e-8d5a-4c3e-9b7a-2f4d5e6a7b8c',
        line: '+12025550100',
        destination: '+12125550123',
        text: 'Your proposal is ready for review.',
      },
    ],
  },
);

const TextCommandResult = Type.Object({
  requestId: Type.String({ description: 'The requestId of the command.' }),
  outboxId: Type.String({ description: '`txo_` + 32 hex: keep it for support and reconciliation.' }),
  duplicate: Type.Boolean({
    description: 'True when this repeats an earlier command with the same requestId.',
  }),
  status: Type.Literal('pending', {
    description: 'Queued only: carrier acceptance or delivery is not implied.',
  }),
});

const errors = {
  400: ErrorEnvelope,
  401: ErrorEnvelope,
  403: ErrorEnvelope,
  404: ErrorEnvelope,
  409: ErrorEnvelope,
  429: ErrorEnvelope,
};

const RULES =
  'Needs write access to seller functions in the Seller Account that holds the line (a key never exceeds its ' +
  "owner's role), its agent phone lines enabled and the line active. Answers 202 `status: pending` (queued); the " +
  'same requestId with the same line, destination and text answers the same `outboxId` with `duplicate: true`; ' +
  'with any of them changed 409 `CONFLICT` (`request_id_reused`). 400 `BAD_REQUEST` with nothing queued for a ' +
  'recipient who opted out of the line (`recipient_opted_out`) or a destination outside the sending limits ' +
  '(`destination_not_allowed`, `details.classification`: `other_country`, `short_code`, `premium_rate`, ' +
  '`toll_free`, `not_ordinary`, `invalid_number`). 404 for a line that is not yours; 409 `phone_lines_disabled`, ' +
  '`line_retired`. Texts go out at most 10 per minute per line, within a daily budget of segments per line.';

/** Registers the text-message commands. */
export function registerCommunicationRoutes(
  app: ServiceApp,
  ctx: MediaBuyingRouteContext,
  texting: Texting,
): void {
  const commands = [
    {
      url: '/api/v2/communications/messages',
      channel: 'sms',
      operationId: 'sendTextMessage',
      alpha: undefined,
    },
    {
      url: '/api/v2/communications/rcs/messages',
      channel: 'rcs',
      operationId: 'sendRcsMessage',
      alpha: 'rcs-messaging',
    },
  ] as const;
  for (const command of commands)
    app.post(
      command.url,
      {
        onRequest: ctx.authenticated({ needs: { fn: 'seller', level: 'write' }, alpha: command.alpha }),
        schema: {
          operationId: command.operationId,
          tags: ['communications'],
          summary:
            command.channel === 'sms'
              ? 'Send one SMS from your assigned line'
              : 'Send one RCS message from your assigned line (alpha: rcs-messaging)',
          description: RULES,
          security,
          body: TextCommandBody,
          response: { 202: Envelope(TextCommandResult), ...errors },
        },
      },
      async (request, reply) => {
        const caller = ctx.caller(request);
        const result = await texting.send(caller.organization!.id, {
          channel: command.channel,
          ...request.body,
        });
        return reply.code(202).send(ctx.ok(result));
      },
    );
}
