import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  index,
  integer,
  pgSchema,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
// `schema.ts` re-exports this file: only lazy references (`() => organizations.id`) may touch its bindings here.
import { organizations, storefronts } from './schema.ts';

/**
 * Tables of agent text-message lines (spec document 000, "Text messaging", "Events", "Limits"; issue 19): the
 * per-Seller-Account phone-lines switch, lines, per-line per-number consent, the outbound queue's records, inbound
 * texts and the conversation records.
 *
 * Privacy: a sending or destination number is never stored in plain text. It is kept as `*_sealed` (AES-256-GCM,
 * the platform's SecretBox, bound to the row by its aad) where it must be read back, and as `*_hash` (HMAC-SHA256 under
 * a key derived from the secrets key, hex) where it is only matched (consent, drop on opt-out, reply counts).
 */

/** The service's Postgres schema (the same `media_buying` as `schema.ts`; declared here to avoid an import cycle). */
const mediaBuyingSchema = pgSchema('media_buying');

const id = () => bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity();
const ref = (name: string) => bigint(name, { mode: 'number' });
const at = (name: string) => timestamp(name, { withTimezone: true });

/** The per-Seller-Account agent-phone-lines switch (rule 1 of "Text messaging"); no row: disabled. */
export const phoneLineSwitches = mediaBuyingSchema.table('phone_line_switches', {
  organizationId: ref('organization_id')
    .primaryKey()
    .references(() => organizations.id),
  enabled: boolean('enabled').notNull(),
  changedAt: at('changed_at').notNull(),
});

/** Line statuses: `active` sends and answers; `retired` does neither (terminal). */
export const TEXT_LINE_STATUSES = ['active', 'retired'] as const;
export type TextLineStatus = (typeof TEXT_LINE_STATUSES)[number];

/** Text lines (`ln_`): a phone number the operator assigned to a Seller Account, with the storefront that answers it. */
export const textLines = mediaBuyingSchema.table(
  'text_lines',
  {
    id: id(),
    publicId: text('public_id').notNull().unique(),
    organizationId: ref('organization_id')
      .notNull()
      .references(() => organizations.id),
    /** The line's own number, E.164 (`+15550100123`): public, not a secret. */
    number: text('number').notNull(),
    storefrontId: ref('storefront_id').references(() => storefronts.id),
    status: text('status', { enum: TEXT_LINE_STATUSES }).notNull(),
    assignedAt: at('assigned_at').notNull(),
    retiredAt: at('retired_at'),
  },
  (t) => [
    // One active line per number; a retired number may be assigned again.
    uniqueIndex('text_lines_active_number_uq').on(t.number).where(sql`${t.status} = 'active'`),
    index('text_lines_org_idx').on(t.organizationId),
  ],
);

/** Consent statuses of a number on a line. */
export const CONSENT_STATUSES = ['opted_in', 'opted_out'] as const;

/**
 * The per-line, per-number consent record (rule 1 of "Events"); no row: never opted out. Its number hash is the one
 * kept past the 30-day retention, on purpose: an opt-out must outlive the texts, or the number could be texted again.
 */
export const textConsents = mediaBuyingSchema.table(
  'text_consents',
  {
    lineId: ref('line_id')
      .notNull()
      .references(() => textLines.id),
    numberHash: text('number_hash').notNull(),
    status: text('status', { enum: CONSENT_STATUSES }).notNull(),
    changedAt: at('changed_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.lineId, t.numberHash] })],
);

/** Outbound channels. */
export const TEXT_CHANNELS = ['sms', 'rcs'] as const;
export type TextChannel = (typeof TEXT_CHANNELS)[number];

/**
 * Who queued an outbound text: the send command, the storefront agent's drafted reply, or the line's fixed answer to
 * a HELP or INFO keyword.
 */
export const OUTBOX_ORIGINS = ['command', 'agent_reply', 'help_reply'] as const;

/**
 * Outbound statuses: `pending` (queued), `sending` (counted and handed to the carrier, its answer not yet recorded;
 * one left there longer than a few minutes is sent again with the same idempotency key), `sent` (the carrier accepted it), `dropped` (not sent, never retried: the
 * recipient opted out, the line retired or its switch was off when its turn came), `over_budget` (not sent, never
 * retried: the line's daily segment budget was spent), `refused` (the carrier refused it).
 */
export const OUTBOX_STATUSES = ['pending', 'sending', 'sent', 'dropped', 'over_budget', 'refused'] as const;
export type OutboxStatus = (typeof OUTBOX_STATUSES)[number];

/** The outbound queue's records (`txo_`): one per accepted command or drafted reply. */
export const textOutbox = mediaBuyingSchema.table(
  'text_outbox',
  {
    id: id(),
    publicId: text('public_id').notNull().unique(),
    organizationId: ref('organization_id')
      .notNull()
      .references(() => organizations.id),
    lineId: ref('line_id')
      .notNull()
      .references(() => textLines.id),
    origin: text('origin', { enum: OUTBOX_ORIGINS }).notNull(),
    channel: text('channel', { enum: TEXT_CHANNELS }).notNull(),
    /** The caller's requestId (commands only): unique per Seller Account. */
    requestId: uuid('request_id'),
    /** HMAC of (channel, line, destination, text): a reused requestId with other fields is a conflict. */
    fingerprint: text('fingerprint').notNull(),
    /** Matches the destination (consent, drop on opt-out, reply caps); deleted (null) with the sealed number. */
    destinationHash: text('destination_hash'),
    /** Sealed; deleted (null) 30 days after a finished text was queued. */
    destinationSealed: text('destination_sealed'),
    textSealed: text('text_sealed'),
    /** SMS segments (GSM-7 or UCS-2) the text costs against the daily budget. */
    segments: integer('segments').notNull(),
    status: text('status', { enum: OUTBOX_STATUSES }).notNull(),
    /** Why a text was not sent (`opted_out`, `line_retired`, `daily_budget`, a carrier reason). */
    reason: text('reason'),
    /** The inbound text a drafted reply answers; deleted (null) with the words (it would lead back to the sender). */
    inboundId: ref('inbound_id'),
    createdAt: at('created_at').notNull(),
    sentAt: at('sent_at'),
    carrierMessageId: text('carrier_message_id'),
    /** The carrier's last delivery receipt (`delivered`, `undelivered`, ...). */
    deliveryStatus: text('delivery_status'),
  },
  (t) => [
    uniqueIndex('text_outbox_request_uq')
      .on(t.organizationId, t.requestId)
      .where(sql`${t.requestId} is not null`),
    index('text_outbox_line_sent_idx').on(t.lineId, t.sentAt),
    index('text_outbox_line_dest_idx').on(t.lineId, t.destinationHash, t.status),
    // The lines with texts still to send (the send sweep, `Texting.sweep`): only unsent texts are in it.
    index('text_outbox_unsent_idx').on(t.lineId).where(sql`${t.status} in ('pending', 'sending')`),
    uniqueIndex('text_outbox_carrier_uq').on(t.carrierMessageId),
  ],
);

/** What an inbound text was: a keyword of rule 1, or a brief for the agent. */
export const INBOUND_KINDS = ['opt_out', 'opt_in', 'help', 'brief'] as const;
export type InboundKind = (typeof INBOUND_KINDS)[number];

/**
 * Inbound statuses: `queued` (waiting for the agent; held while the lines switch is off), `working` (the agent has
 * it), `handled` (keywords), `replied` (a reply was queued), `no_reply` (rule 4; `outcome` says why).
 */
export const INBOUND_STATUSES = ['queued', 'working', 'handled', 'replied', 'no_reply'] as const;
export type InboundStatus = (typeof INBOUND_STATUSES)[number];

/**
 * Inbound texts (`txi_`). The words and the sending number are sealed, and deleted 30 days after arrival (rule 7);
 * the row (arrival record) stays without them (`wordsDeletedAt`).
 */
export const textInbound = mediaBuyingSchema.table(
  'text_inbound',
  {
    id: id(),
    publicId: text('public_id').notNull().unique(),
    organizationId: ref('organization_id')
      .notNull()
      .references(() => organizations.id),
    lineId: ref('line_id')
      .notNull()
      .references(() => textLines.id),
    /** The carrier's message id: a webhook delivered twice is stored once. */
    carrierMessageId: text('carrier_message_id').notNull(),
    arrivedAt: at('arrived_at').notNull(),
    kind: text('kind', { enum: INBOUND_KINDS }).notNull(),
    status: text('status', { enum: INBOUND_STATUSES }).notNull(),
    /** Why no reply was queued (`stale`, `blank`, `storefront_unavailable`, `opted_out`, ...). */
    outcome: text('outcome'),
    fromHash: text('from_hash'),
    fromSealed: text('from_sealed'),
    textSealed: text('text_sealed'),
    handledAt: at('handled_at'),
    wordsDeletedAt: at('words_deleted_at'),
  },
  (t) => [
    uniqueIndex('text_inbound_carrier_uq').on(t.lineId, t.carrierMessageId),
    index('text_inbound_retention_idx').on(t.arrivedAt).where(sql`${t.wordsDeletedAt} is null`),
    index('text_inbound_line_status_idx').on(t.lineId, t.status),
  ],
);

/**
 * Conversation records (rule 7): ordinary texts from one number to one line, per Seller Account. Arrival times only
 * ({@link textConversationArrivals}); never displayed, never read by the agent.
 */
export const textConversations = mediaBuyingSchema.table(
  'text_conversations',
  {
    id: id(),
    organizationId: ref('organization_id')
      .notNull()
      .references(() => organizations.id),
    lineId: ref('line_id')
      .notNull()
      .references(() => textLines.id),
    /** Deleted (null) 30 days after the conversation's last arrival: the arrival times stay, unlinked to a number. */
    numberHash: text('number_hash'),
    createdAt: at('created_at').notNull(),
  },
  (t) => [uniqueIndex('text_conversations_uq').on(t.organizationId, t.lineId, t.numberHash)],
);

/** The arrival times of a conversation record. */
export const textConversationArrivals = mediaBuyingSchema.table(
  'text_conversation_arrivals',
  {
    id: id(),
    conversationId: ref('conversation_id')
      .notNull()
      .references(() => textConversations.id),
    arrivedAt: at('arrived_at').notNull(),
  },
  (t) => [index('text_conversation_arrivals_idx').on(t.conversationId, t.arrivedAt)],
);
