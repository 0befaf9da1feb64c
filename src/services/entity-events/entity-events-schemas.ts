import { type TProperties, Type } from '@sinclair/typebox';
import { Int4, StringEnum } from '../../platform/schemas.ts';

/** TypeBox schemas of the entity-events API (= its OpenAPI). Spec 002 section G. */

export const ResponseContextSchema = Type.Object(
  {
    correlation_id: Type.String({ description: 'The request id (also the x-request-id header)' }),
    request_status: StringEnum(['success', 'failure'] as const),
    time_taken_in_seconds: Type.Number(),
  },
  { additionalProperties: true },
);

/** Adds `response_context` to a response object. */
export const withContext = <T extends TProperties>(props: T, description?: string) =>
  Type.Object({ ...props, response_context: ResponseContextSchema }, description ? { description } : {});

export const ErrorBody = Type.Object({
  response_context: ResponseContextSchema,
  error: Type.Object({
    code: Type.String(),
    message: Type.String(),
    details: Type.Optional(Type.Object({}, { additionalProperties: true })),
  }),
});

const nullableString = Type.Union([Type.String(), Type.Null()]);
const PayloadFormat = StringEnum(['json', 'stringified_json'] as const);
const HeaderList = Type.Array(Type.String({ maxLength: 2048 }), {
  maxItems: 20,
  description: 'Custom headers `Header-Name: value`, sent with every delivery',
});

export const WebhookProps = {
  webhook_id: Type.String(),
  scope: Type.Object({ type: StringEnum(['tenant', 'partner'] as const), id: Type.String() }),
  name: Type.String(),
  description: nullableString,
  webhook_url: Type.String(),
  headers: Type.Array(Type.String()),
  payload_format: PayloadFormat,
  status: StringEnum(['active', 'disabled'] as const),
  disabled_reason: Type.Union([StringEnum(['caller', 'gone', 'failing'] as const), Type.Null()], {
    description:
      'Why the webhook is disabled: `caller` (PATCH status disabled), `gone` (the receiver answered 410) or ' +
      '`failing` (every attempt failed for 5 days); null while active',
  }),
  disabled_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When the webhook was disabled; null while active',
  }),
  failing_since: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description:
      'The first failed attempt since the last successful one; null while deliveries succeed. The webhook is ' +
      'disabled (`failing`) when an attempt fails 5 days or more after this',
  }),
  legacy: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
  last_modified_time: Type.String({ format: 'date-time' }),
};
export const WebhookSchema = Type.Object(WebhookProps);
export const WebhookResponse = withContext(WebhookProps);
export const WebhookWithSecretResponse = withContext({
  ...WebhookProps,
  webhook_secret: Type.String({ description: 'Padded URL-safe base64; shown only here' }),
});

export const CreateWebhookBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    webhook_url: Type.String({ minLength: 1, maxLength: 2048 }),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
    headers: Type.Optional(HeaderList),
    payload_format: Type.Optional(PayloadFormat),
  },
  { additionalProperties: false },
);

export const UpdateWebhookBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    webhook_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
    headers: Type.Optional(HeaderList),
    payload_format: Type.Optional(PayloadFormat),
    status: Type.Optional(StringEnum(['active', 'disabled'] as const)),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const WebhookParams = Type.Object({ webhook_id: Type.String({ maxLength: 64 }) });
export const DeleteWebhookQuery = Type.Object({ force: Type.Optional(Type.Boolean({ default: false })) });

export const ConnectivityBody = Type.Object(
  {
    simulation: Type.Optional(
      Type.Object(
        {
          event_name: Type.String({ minLength: 1 }),
          number_of_events: Type.Integer({ minimum: 1, maximum: 10 }),
          event_time: Type.Optional(Type.String()),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const _Outcome = Type.Object({
  success: Type.Boolean(),
  status_code: Type.Union([Type.Integer(), Type.Null()]),
  duration_ms: Type.Integer(),
  error: nullableString,
  retry_after_seconds: Type.Optional(Type.Integer()),
});
export const ConnectivityResponse = withContext({ webhook_id: Type.String(), events_sent: Type.Integer() });

const idList = (field: string) =>
  Type.Optional(Type.Array(Type.String(), { description: `${field}: at most 1,000 per request` }));

export const enrollmentBody = (entity: 'business' | 'prospect') =>
  Type.Object(
    {
      enrollment_key: Type.String({ minLength: 1, maxLength: 200 }),
      webhook_id: Type.Optional(Type.Unknown({ description: 'Required (422 when missing)' })),
      event_types: Type.Array(Type.String(), { minItems: 1, maxItems: 100 }),
      [`${entity}_ids`]: idList(`${entity}_ids`),
    },
    { additionalProperties: false, required: ['enrollment_key', 'event_types', `${entity}_ids`] },
  );

export const v1EnrollmentBody = (entity: 'business' | 'prospect') =>
  Type.Object(
    {
      enrollment_key: Type.String({ minLength: 1, maxLength: 200 }),
      event_types: Type.Array(Type.String(), { minItems: 1, maxItems: 100 }),
      [`${entity}_ids`]: idList(`${entity}_ids`),
    },
    { additionalProperties: false, required: ['enrollment_key', 'event_types', `${entity}_ids`] },
  );

export const updateEnrollmentBody = (entity: 'business' | 'prospect') =>
  Type.Object(
    {
      enrollment_key: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      webhook_id: Type.Optional(Type.Unknown()),
      event_types: Type.Optional(Type.Array(Type.String(), { minItems: 1, maxItems: 100 })),
      [`${entity}_ids`]: idList(`${entity}_ids (replaces the list)`),
      [`add_${entity}_ids`]: idList(`add_${entity}_ids`),
      [`remove_${entity}_ids`]: idList(`remove_${entity}_ids`),
    },
    { additionalProperties: false, minProperties: 1 },
  );

export const EnrollmentProps = {
  enrollment_id: Type.String(),
  enrollment_key: Type.String(),
  webhook_id: nullableString,
  status: StringEnum(['active', 'paused'] as const),
  entity_type: StringEnum(['business', 'prospect'] as const),
  api_version: StringEnum(['v1', 'v2'] as const),
  event_types: Type.Array(Type.String()),
  business_ids: Type.Optional(Type.Array(Type.String())),
  prospect_ids: Type.Optional(Type.Array(Type.String())),
  created_at: Type.String({ format: 'date-time' }),
  last_modified_time: Type.String({ format: 'date-time' }),
};
export const EnrollmentSchema = Type.Object(EnrollmentProps);
export const EnrollmentResponse = withContext(EnrollmentProps);
export const EnrollmentParams = Type.Object({ enrollment_id: Type.String({ maxLength: 64 }) });

export const PageSchema = Type.Object({
  limit: Type.Integer(),
  offset: Type.Integer(),
  total: Type.Integer(),
  has_more: Type.Boolean(),
});
export const PageQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  offset: Type.Optional(Int4({ default: 0 })),
});

export const EventSchema = Type.Object({
  event_id: Type.String(),
  event_name: Type.String(),
  entity_type: StringEnum(['business', 'prospect'] as const),
  business_id: Type.Optional(Type.String()),
  prospect_id: Type.Optional(Type.String()),
  event_time: Type.String({ format: 'date-time' }),
  data: Type.Object({}, { additionalProperties: true }),
});

export const fetchEventsBody = (entity: 'business' | 'prospect') =>
  Type.Object(
    {
      [`${entity}_ids`]: Type.Array(Type.String(), { description: 'At most 40 ids' }),
      event_types: Type.Optional(Type.Array(Type.String(), { minItems: 1 })),
      from: Type.Optional(Type.String({ description: 'RFC 3339, inclusive lower bound of event_time' })),
      to: Type.Optional(Type.String({ description: 'RFC 3339, inclusive upper bound of event_time' })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
      offset: Type.Optional(Int4({ default: 0 })),
    },
    { additionalProperties: false, required: [`${entity}_ids`] },
  );

export const DeliverySchema = Type.Object({
  delivery_id: Type.String({
    description: 'Sent as `X-Delivery-Id` on every attempt of this delivery: the de-duplication key',
  }),
  webhook_id: Type.String(),
  event_id: Type.String(),
  enrollment_id: Type.String(),
  status: StringEnum(['pending', 'in_flight', 'succeeded', 'failed', 'cancelled'] as const),
  attempt_count: Type.Integer(),
  next_attempt_at: nullableString,
  last_status_code: Type.Union([Type.Integer(), Type.Null()]),
  last_error: nullableString,
  created_at: Type.String(),
  completed_at: nullableString,
  replay_of: Type.Union([Type.String(), Type.Null()], {
    description:
      'The delivery this one replays (a replay or a recover; also the `X-Replay-Of` header); else null',
  }),
});
export const AttemptSchema = Type.Object({
  attempt_number: Type.Integer(),
  attempted_at: Type.String({ description: 'When the attempt started (the worker claimed the delivery)' }),
  status: StringEnum(['in_progress', 'succeeded', 'failed', 'interrupted'] as const, {
    description:
      '`in_progress` while the POST runs; `interrupted` when its worker stopped (a crash) before recording an ' +
      'outcome: the receiver may or may not have got it, and the next attempt carries the same `X-Delivery-Id`',
  }),
  status_code: Type.Union([Type.Integer(), Type.Null()]),
  duration_ms: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Null while in progress or when interrupted',
  }),
  error: nullableString,
  next_attempt_at: nullableString,
});
export const DeliveryParams = Type.Object({
  webhook_id: Type.String({ maxLength: 64 }),
  delivery_id: Type.String({ maxLength: 64 }),
});
export const DeliveryListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  offset: Type.Optional(Int4({ default: 0 })),
  status: Type.Optional(StringEnum(['pending', 'in_flight', 'succeeded', 'failed', 'cancelled'] as const)),
});

export const RecoverBody = Type.Object(
  {
    since: Type.String({
      maxLength: 64,
      description: 'RFC 3339; deliveries created at or after this (at most 14 days ago)',
    }),
    until: Type.Optional(
      Type.String({
        maxLength: 64,
        description: 'RFC 3339; deliveries created at or before this (default now)',
      }),
    ),
  },
  { additionalProperties: false, examples: [{ since: '2026-05-01T00:00:00Z' }] },
);
export const RecoverResponse = withContext({
  webhook_id: Type.String(),
  since: Type.String({ format: 'date-time' }),
  until: Type.String({ format: 'date-time' }),
  recovered: Type.Integer({
    description: 'New deliveries queued now, each replaying one failed or cancelled delivery',
  }),
  remaining: Type.Integer({
    description:
      'Deliveries of the window left beyond the 1,000 of one call: call again with the same window',
  }),
  skipped: Type.Integer({
    description: 'Failed or cancelled deliveries whose enrollment no longer sends the event to this webhook',
  }),
});

export const LegacyWebhookBody = Type.Object(
  {
    webhook_url: Type.String({ minLength: 1, maxLength: 2048 }),
    headers: Type.Optional(HeaderList),
  },
  { additionalProperties: false },
);
