import { sql } from 'drizzle-orm';
import {
  bigint,
  check,
  index,
  integer,
  jsonb,
  pgSchema,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { credentialColumns, signingKeyColumns } from '../../../platform/db/columns.ts';

/** Tables of the card-payments and compliance service (spec 001 section A), Postgres schema `payments`. */
export const paymentsSchema = pgSchema('payments');

/** One requirement of a compliance case (`complianceSessionStatus.requirements[]`). */
export interface RequirementRow {
  id: string;
  key: string;
  description: string;
}

/** One line of a payment intent, as stored (money in integer US cents). */
export interface LineItemRow {
  id: string;
  position: number;
  referenceId: string | null;
  description: string;
  quantity: number;
  unitAmount: number;
  subtotalAmount: number;
  taxAmount: number;
  totalAmount: number;
  taxCode: string | null;
}

/**
 * Parties (`pty_` + 32 hex): merchants (who hold API keys and create intents) and customer parties (the parties
 * being paid, created by a merchant: `ownerPartyId`). Each party has one compliance case (`caseStatus`,
 * `requirements`) and an optional per-transaction limit in cents (`perTransaction`, null = none).
 */
export const parties = paymentsSchema.table(
  'parties',
  {
    id: text('id').primaryKey(),
    kind: text('kind', { enum: ['merchant', 'customer'] }).notNull(),
    name: text('name').notNull(),
    ownerPartyId: text('owner_party_id'),
    programCode: text('program_code').notNull(),
    programId: text('program_id').notNull(),
    programVersionId: text('program_version_id').notNull(),
    caseId: text('case_id').notNull(),
    caseStatus: text('case_status').notNull(),
    requirements: jsonb('requirements').$type<RequirementRow[]>().notNull(),
    perTransaction: bigint('per_transaction', { mode: 'number' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    index('parties_owner_idx').on(t.ownerPartyId),
    check('parties_per_transaction_positive', sql`${t.perTransaction} is null or ${t.perTransaction} > 0`),
  ],
);

/**
 * Credentials of a party: `api` keys (full rights of the party), `agent` keys (act for the party with narrower
 * rights) and `oauth_client`s (an OAuth 2.0 client registered by the party: `clientId` is its public identifier, the
 * stored secret its client secret, `scopes` what its access tokens may be granted; README "OAuth access tokens").
 * Only the SHA-256 of a key or client secret is stored; `hint` is its last four characters.
 */
export const credentials = paymentsSchema.table(
  'credentials',
  {
    ...credentialColumns(),
    partyId: text('party_id')
      .notNull()
      .references(() => parties.id),
    kind: text('kind', { enum: ['api', 'agent', 'oauth_client'] }).notNull(),
    clientId: text('client_id'),
    scopes: text('scopes').array(),
  },
  (t) => [
    index('credentials_party_idx').on(t.partyId),
    uniqueIndex('credentials_client_id_idx').on(t.clientId),
    check(
      'credentials_oauth_client_fields',
      sql`(${t.kind} = 'oauth_client') = (${t.clientId} is not null and ${t.scopes} is not null)`,
    ),
  ],
);

/**
 * The keys that sign the service's own OAuth access tokens (ES256, `kid` in every token's header). One key is active
 * (`retiredAt` null) and signs; a rotation retires it and starts a new one. A retired key's private half is erased
 * and its public half is published in the JWKS until every token it signed has expired: `retiredAt` plus
 * `maxTokenTtlSeconds` (the longest lifetime any instance gave a token it signed) plus the verification leeway.
 * The private JWK is sealed with the platform SecretBox (AES-256-GCM, bound to the `kid`).
 */
export const oauthSigningKeys = paymentsSchema.table('oauth_signing_keys', signingKeyColumns());

/**
 * Payment intents (`pmi_`). Line items are stored with their intent (always read and replaced as a whole).
 * The client secret is stored twice: SHA-256 (`clientSecretHash`, compared in constant time) and sealed with the
 * platform SecretBox (`clientSecretSealed`, so the merchant can read it back while the intent is payable).
 */
export const paymentIntents = paymentsSchema.table(
  'payment_intents',
  {
    id: text('id').primaryKey(),
    merchantPartyId: text('merchant_party_id')
      .notNull()
      .references(() => parties.id),
    customerPartyId: text('customer_party_id')
      .notNull()
      .references(() => parties.id),
    description: text('description'),
    currency: text('currency').notNull(),
    taxMode: text('tax_mode', { enum: ['exclusive', 'inclusive'] }).notNull(),
    amount: bigint('amount', { mode: 'number' }).notNull(),
    taxAmount: bigint('tax_amount', { mode: 'number' }).notNull(),
    lineItems: jsonb('line_items').$type<LineItemRow[]>().notNull(),
    status: text('status').notNull(),
    clientSecretHash: text('client_secret_hash').notNull(),
    clientSecretSealed: text('client_secret_sealed').notNull(),
    failedAttempts: integer('failed_attempts').notNull().default(0),
    cardPaymentId: text('card_payment_id'),
    voiceSessionId: text('voice_session_id'),
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    canceledAt: timestamp('canceled_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    index('payment_intents_merchant_created_idx').on(t.merchantPartyId, t.createdAt, t.id),
    index('payment_intents_open_expiry_idx').on(t.expiresAt).where(sql`${t.status} = 'open'`),
    check('payment_intents_amount_positive', sql`${t.amount} > 0`),
  ],
);

/**
 * Card payments (`cpy_`): one attempt to pay an intent. Only the brand and last four digits of the card are kept.
 * `networkReference` is the card network's reference of the attempt (the simulator's own for simulated cards).
 */
export const cardPayments = paymentsSchema.table(
  'card_payments',
  {
    id: text('id').primaryKey(),
    paymentIntentId: text('payment_intent_id')
      .notNull()
      .references(() => paymentIntents.id),
    merchantPartyId: text('merchant_party_id').notNull(),
    amount: bigint('amount', { mode: 'number' }).notNull(),
    currency: text('currency').notNull(),
    status: text('status').notNull(),
    brand: text('brand'),
    last4: text('last4'),
    channel: text('channel', { enum: ['link', 'voice'] }).notNull(),
    voiceSessionId: text('voice_session_id'),
    failureCode: text('failure_code'),
    failureMessage: text('failure_message'),
    networkReference: text('network_reference'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('card_payments_intent_idx').on(t.paymentIntentId)],
);

/** Voice sessions (`vos_`): a simulated phone call in which the payer keys a card for an intent. */
export const voiceSessions = paymentsSchema.table(
  'voice_sessions',
  {
    id: text('id').primaryKey(),
    paymentIntentId: text('payment_intent_id')
      .notNull()
      .references(() => paymentIntents.id),
    merchantPartyId: text('merchant_party_id').notNull(),
    status: text('status').notNull(),
    cardPaymentId: text('card_payment_id'),
    endedReason: text('ended_reason'),
    endedAt: timestamp('ended_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('voice_sessions_intent_idx').on(t.paymentIntentId)],
);
