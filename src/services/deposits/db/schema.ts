import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  index,
  integer,
  numeric,
  pgSchema,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { credentialColumns } from '../../../platform/db/columns.ts';

/** Tables of the deposit-address service (schema `deposits`). uint256 amounts are `numeric(78,0)`, read as strings. */
export const depositsSchema = pgSchema('deposits');

/**
 * Optional API keys (header `x-api-key`). `versions` lists the API versions the key is enabled for (`v1`).
 * Only the SHA-256 of the key is stored.
 */
export const apiKeys = depositsSchema.table('api_keys', {
  ...credentialColumns(),
  versions: text('versions').array().notNull(),
  rateLimitPerMinute: integer('rate_limit_per_minute'),
});

/**
 * One quoted deposit address (vault). Addresses are stored lowercase; `vaultAddress` is unique. `fingerprint`
 * identifies the request (chain, amount, recipient, depositor, refund address) so a repeat finds its pending quote;
 * at most one quote per fingerprint is PENDING (unique partial index).
 * `status`: PENDING, FUNDING_DETECTED, PUBLISHED, EXPIRED_UNFUNDED, FAILED, REFUNDED_BY_USER.
 */
export const quotes = depositsSchema.table(
  'quotes',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    vaultAddress: text('vault_address').notNull().unique(),
    sourceChainId: integer('source_chain_id').notNull(),
    amount: numeric('amount', { precision: 78, scale: 0 }).notNull(),
    recipient: text('recipient').notNull(),
    depositor: text('depositor').notNull(),
    refundRecipient: text('refund_recipient').notNull(),
    fingerprint: text('fingerprint').notNull(),
    nonce: text('nonce').notNull(),
    salt: text('salt').notNull(),
    deadline: timestamp('deadline', { withTimezone: true }).notNull(),
    status: text('status', {
      enum: ['PENDING', 'FUNDING_DETECTED', 'PUBLISHED', 'EXPIRED_UNFUNDED', 'FAILED', 'REFUNDED_BY_USER'],
    }).notNull(),
    receivedAmount: numeric('received_amount', { precision: 78, scale: 0 }).notNull().default('0'),
    fundedAt: timestamp('funded_at', { withTimezone: true }),
    publishedAt: timestamp('published_at', { withTimezone: true }),
    publishTxHash: text('publish_tx_hash'),
    failureReason: text('failure_reason'),
    apiKeyId: bigint('api_key_id', { mode: 'number' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    // At most one PENDING quote per request: concurrent identical requests get one quote.
    uniqueIndex('quotes_pending_fingerprint_uq').on(t.fingerprint).where(sql`${t.status} = 'PENDING'`),
    index('quotes_pending_deadline_idx').on(t.deadline).where(sql`${t.status} = 'PENDING'`),
    check('quotes_amount_positive', sql`${t.amount} > 0`),
  ],
);

/**
 * Token movements of a vault on its source chain: `in` transfers fund it (`plain` ERC-20 transfer or `gasless`
 * EIP-3009 transferWithAuthorization); `out` transfers are refunds (`refund`) sent by the gateway.
 * `observedAt` is the block time: only `in` transfers observed before the deadline count as funding.
 */
export const transfers = depositsSchema.table(
  'transfers',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    quoteId: bigint('quote_id', { mode: 'number' })
      .notNull()
      .references(() => quotes.id),
    direction: text('direction', { enum: ['in', 'out'] }).notNull(),
    kind: text('kind', { enum: ['plain', 'gasless', 'refund'] }).notNull(),
    fromAddress: text('from_address').notNull(),
    toAddress: text('to_address').notNull(),
    amount: numeric('amount', { precision: 78, scale: 0 }).notNull(),
    txHash: text('tx_hash').notNull().unique(),
    observedAt: timestamp('observed_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('transfers_quote_idx').on(t.quoteId)],
);

/** Simulator switches set through the operator API, shared by every instance (for example `failPublishes`). */
export const simulatorSettings = depositsSchema.table('simulator_settings', {
  name: text('name').primaryKey(),
  enabled: boolean('enabled').notNull(),
});
