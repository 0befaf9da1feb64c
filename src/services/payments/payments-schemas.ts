/** TypeBox schemas of the payments service: requests, JSON:API resources, errors (= its OpenAPI). */
import { Type } from '@sinclair/typebox';
import { StringEnum } from '../../platform/schemas.ts';
import { CASE_STATUSES, DISPLAY_STATES, describeCaseTransitions } from './compliance.ts';
import {
  CARD_PAYMENT_STATUSES,
  describeTransitions,
  INTENT_STATUSES,
  VOICE_SESSION_STATUSES,
} from './state-machines.ts';

const Cents = (description: string) => Type.Integer({ description });
const Timestamp = Type.String({ format: 'date-time' });
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const ErrorBody = Type.Object(
  {
    errors: Type.Array(
      Type.Object({
        status: Type.String(),
        code: Type.String(),
        title: Type.String(),
        detail: Type.String(),
        source: Type.Optional(
          Type.Object({
            pointer: Type.Optional(Type.String()),
            parameter: Type.Optional(Type.String()),
            header: Type.Optional(Type.String()),
          }),
        ),
        meta: Type.Object({ supportId: Type.String() }),
      }),
    ),
  },
  { $id: 'PaymentsError', description: 'JSON:API error document' },
);

const idOf = (prefix: string) => Type.String({ pattern: `^${prefix}_[0-9a-f]{32}$` });
const ref = (type: string, prefix: string) => Type.Object({ type: Type.Literal(type), id: idOf(prefix) });

export const LineItemInput = Type.Object(
  {
    referenceId: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 255 }), Type.Null()])),
    description: Type.String({ minLength: 1, maxLength: 500 }),
    quantity: Type.Integer({ minimum: 1, maximum: 100_000 }),
    unitAmount: Type.Integer({ minimum: 0, maximum: 99_999_999, description: 'US cents' }),
    taxCode: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()])),
  },
  { additionalProperties: false },
);

const LineItems = Type.Array(LineItemInput, { minItems: 1, maxItems: 100 });

export const CreateIntentBody = Type.Object(
  {
    data: Type.Object(
      {
        type: Type.Literal('paymentIntent'),
        attributes: Type.Object(
          {
            currency: Type.Optional(Type.Literal('USD')),
            description: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Null()])),
            taxMode: StringEnum(['exclusive', 'inclusive'] as const),
            lineItems: LineItems,
            expiresAt: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
          },
          { additionalProperties: false },
        ),
        relationships: Type.Object(
          {
            customerParty: Type.Object({
              data: Type.Object({ type: Type.Literal('party'), id: idOf('pty') }),
            }),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const ReplaceLineItemsBody = Type.Object({ data: LineItems }, { additionalProperties: false });

const LineItem = Type.Object({
  id: idOf('pli'),
  position: Type.Integer(),
  referenceId: Nullable(Type.String()),
  description: Type.String(),
  quantity: Type.Integer(),
  unitAmount: Cents('US cents'),
  subtotalAmount: Cents('totalAmount - taxAmount'),
  taxAmount: Cents('US cents'),
  totalAmount: Cents('US cents'),
  taxCode: Nullable(Type.String()),
});

export const IntentResource = Type.Object({
  type: Type.Literal('paymentIntent'),
  id: idOf('pmi'),
  attributes: Type.Object({
    amount: Cents('Total in US cents'),
    currency: Type.Literal('USD'),
    description: Nullable(Type.String()),
    payUrl: Nullable(Type.String()),
    clientSecret: Nullable(Type.String()),
    status: StringEnum(INTENT_STATUSES, { description: describeTransitions('paymentIntent') }),
    taxMode: StringEnum(['exclusive', 'inclusive'] as const),
    taxAmount: Cents('US cents'),
    lineItems: Type.Array(LineItem),
    expiresAt: Nullable(Timestamp),
    canceledAt: Nullable(Timestamp),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  }),
  relationships: Type.Object({
    customerParty: Type.Object({ data: ref('party', 'pty') }),
    cardPayment: Type.Object({ data: Type.Union([ref('cardPayment', 'cpy'), Type.Null()]) }),
    voiceSession: Type.Object({ data: Type.Union([ref('voiceSession', 'vos'), Type.Null()]) }),
  }),
});

export const CardPaymentResource = Type.Object({
  type: Type.Literal('cardPayment'),
  id: idOf('cpy'),
  attributes: Type.Object({
    amount: Cents('Attempted amount, US cents'),
    currency: Type.Literal('USD'),
    status: StringEnum(CARD_PAYMENT_STATUSES, { description: describeTransitions('cardPayment') }),
    brand: Nullable(Type.String()),
    last4: Nullable(Type.String()),
    channel: StringEnum(['link', 'voice'] as const),
    failureCode: Nullable(Type.String()),
    failureMessage: Nullable(Type.String()),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  }),
  relationships: Type.Object({
    paymentIntent: Type.Object({ data: ref('paymentIntent', 'pmi') }),
    voiceSession: Type.Object({ data: Type.Union([ref('voiceSession', 'vos'), Type.Null()]) }),
  }),
});

export const VoiceSessionResource = Type.Object({
  type: Type.Literal('voiceSession'),
  id: idOf('vos'),
  attributes: Type.Object({
    status: StringEnum(VOICE_SESSION_STATUSES, { description: describeTransitions('voiceSession') }),
    channel: Type.Literal('voice'),
    endedReason: Nullable(Type.String()),
    endedAt: Nullable(Timestamp),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  }),
  relationships: Type.Object({
    paymentIntent: Type.Object({ data: ref('paymentIntent', 'pmi') }),
    cardPayment: Type.Object({ data: Type.Union([ref('cardPayment', 'cpy'), Type.Null()]) }),
  }),
});

export const IntentDocument = Type.Object({ data: IntentResource });
export const IntentListDocument = Type.Object({
  data: Type.Array(IntentResource),
  meta: Type.Object({
    page: Type.Object({ number: Type.Integer(), size: Type.Integer(), total: Type.Integer() }),
  }),
  links: Type.Object({ self: Type.String(), next: Nullable(Type.String()), prev: Nullable(Type.String()) }),
});
export const CardPaymentDocument = Type.Object({
  data: CardPaymentResource,
  included: Type.Optional(Type.Array(IntentResource)),
});
export const VoiceSessionDocument = Type.Object({ data: VoiceSessionResource });

export const CardInput = Type.Object(
  {
    number: Type.String({ minLength: 12, maxLength: 23, description: 'Card number (spaces allowed)' }),
    expMonth: Type.Integer({ minimum: 1, maximum: 12 }),
    expYear: Type.Integer({ minimum: 0, maximum: 9999 }),
    cvc: Type.String({ pattern: '^[0-9]{3,4}$' }),
  },
  { additionalProperties: false },
);

export const PayBody = Type.Object(
  {
    data: Type.Object(
      {
        type: Type.Literal('cardPayment'),
        attributes: Type.Object(
          { clientSecret: Type.String({ minLength: 1, maxLength: 200 }), card: CardInput },
          {
            additionalProperties: false,
          },
        ),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const KeyedCardBody = Type.Object(
  {
    data: Type.Object(
      {
        type: Type.Literal('cardPayment'),
        attributes: Type.Object({ card: CardInput }, { additionalProperties: false }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const PartyResource = Type.Object({
  type: Type.Literal('party'),
  id: idOf('pty'),
  attributes: Type.Object({
    kind: StringEnum(['merchant', 'customer'] as const),
    name: Type.String(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  }),
});

export const CreatePartyBody = Type.Object(
  {
    data: Type.Object(
      {
        type: Type.Literal('party'),
        attributes: Type.Object(
          { name: Type.String({ minLength: 1, maxLength: 200 }) },
          {
            additionalProperties: false,
          },
        ),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const ComplianceDocument = Type.Object({
  data: Type.Object({
    type: Type.Literal('partyComplianceStatus'),
    id: idOf('pty'),
    attributes: Type.Object({
      programCode: Type.String(),
      caseStatus: StringEnum(CASE_STATUSES, { description: describeCaseTransitions() }),
      displayState: StringEnum(DISPLAY_STATES),
      title: Type.String(),
      message: Type.String(),
      canProceed: Type.Boolean(),
      requirementsDue: Type.Array(Type.String()),
    }),
  }),
});

export const ComplianceSessionDocument = Type.Object({
  data: Type.Object({
    type: Type.Literal('complianceSessionStatus'),
    id: Type.String(),
    attributes: Type.Object({
      programId: Type.String(),
      programVersionId: Type.String(),
      status: StringEnum(CASE_STATUSES, { description: describeCaseTransitions() }),
      requirements: Type.Array(
        Type.Object({ id: Type.String(), key: Type.String(), description: Type.String() }),
      ),
    }),
  }),
});

export const LimitsDocument = Type.Object({
  data: Type.Object({
    type: Type.Literal('transactionLimits'),
    id: idOf('pty'),
    attributes: Type.Object({
      perTransaction: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
        description: 'Cents above 0, or null for no limit',
      }),
    }),
  }),
});

export const SetLimitsBody = Type.Object(
  {
    data: Type.Object(
      {
        type: Type.Literal('transactionLimits'),
        attributes: Type.Object(
          { perTransaction: Type.Union([Type.Integer({ minimum: 1, maximum: 99_999_999 }), Type.Null()]) },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const CredentialRecord = Type.Object({
  id: Type.Integer(),
  partyId: Type.String(),
  kind: StringEnum(['api', 'agent', 'oauth_client'] as const),
  clientId: Nullable(Type.String({ description: 'OAuth clients only' })),
  scopes: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'OAuth clients only' }),
  hint: Type.String(),
  label: Nullable(Type.String()),
  createdAt: Timestamp,
  revokedAt: Nullable(Timestamp),
});
export const IssuedCredential = Type.Object({
  data: Type.Object({
    type: Type.Literal('credential'),
    id: Type.String(),
    attributes: Type.Object({
      kind: StringEnum(['api', 'agent'] as const),
      key: Type.String({ description: 'Shown once' }),
      hint: Type.String(),
      label: Nullable(Type.String()),
      createdAt: Timestamp,
    }),
  }),
});
export const IssueAgentKeyBody = Type.Object(
  {
    data: Type.Object(
      {
        type: Type.Literal('credential'),
        attributes: Type.Object(
          { label: Type.Optional(Type.String({ maxLength: 200 })) },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const IntentParams = Type.Object({ intentId: Type.String({ maxLength: 100 }) });
export const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
export const PartyParams = Type.Object({ partyId: Type.String({ maxLength: 100 }) });

export const ListQuery = Type.Object(
  {
    'page[number]': Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    'page[size]': Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    'filter[status]': Type.Optional(StringEnum(INTENT_STATUSES)),
  },
  { additionalProperties: false },
);

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({ description: 'Replays the first answer of the same request for 48 hours' }),
  ),
});

export const PageQuery = Type.Object(
  {
    'page[number]': Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    'page[size]': Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  },
  { additionalProperties: false },
);

export const PartyListDocument = Type.Object({
  data: Type.Array(PartyResource),
  meta: Type.Object({
    page: Type.Object({ number: Type.Integer(), size: Type.Integer(), total: Type.Integer() }),
  }),
  links: Type.Object({
    self: Type.String(),
    next: Type.Union([Type.String(), Type.Null()]),
    prev: Type.Union([Type.String(), Type.Null()]),
  }),
});
