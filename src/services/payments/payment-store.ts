/**
 * Reads and writes of payment intents, card payments and voice sessions (the data side of payments-service.ts). No
 * rule lives here: the domain decides, the store runs the statements. Locking reads (`lock...`) take the caller's
 * transaction; see payments-service.ts for the lock order they must be called in.
 */
import { and, count, desc, eq, inArray, lte, ne, sql } from 'drizzle-orm';
import type { Db, Executor, Tx } from '../../platform/database.ts';
import { cardPayments, parties, paymentIntents, voiceSessions } from './db/schema.ts';
import type { IntentStatus } from './state-machines.ts';

/** A stored payment intent (money in integer US cents). */
export type IntentRow = typeof paymentIntents.$inferSelect;
/** A stored card payment (brand and last4 only: never the card number). */
export type CardPaymentRow = typeof cardPayments.$inferSelect;
/** A stored voice session. */
export type VoiceSessionRow = typeof voiceSessions.$inferSelect;
/** A party as a payment reads it (compliance case, per-transaction limit). */
export type PartyRow = typeof parties.$inferSelect;

/** The statements of the payments domain. */
export class PaymentStore {
  /**
   * `SELECT` of one intent by id, built once and run as a named prepared statement (the hot reads: intent reads, the
   * checkout page, the payer's payment). Locked reads build their query per call.
   */
  private readonly intentById;

  constructor(private readonly db: Db) {
    this.intentById = db
      .select()
      .from(paymentIntents)
      .where(eq(paymentIntents.id, sql.placeholder('id')))
      .limit(1)
      .prepare('payments_intent_by_id');
  }

  /** Runs `work` in one transaction. */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  // ---------------------------------------------------------------- parties

  /** The parties of `ids` (in any order; missing ones are absent). */
  async partiesByIds(executor: Executor, ids: readonly string[]): Promise<PartyRow[]> {
    return executor
      .select()
      .from(parties)
      .where(inArray(parties.id, [...new Set(ids)]));
  }

  /** The display name of a party, or undefined. */
  async partyName(partyId: string): Promise<string | undefined> {
    const [row] = await this.db
      .select({ name: parties.name })
      .from(parties)
      .where(eq(parties.id, partyId))
      .limit(1);
    return row?.name;
  }

  // ---------------------------------------------------------------- intents

  /** One intent by id (the prepared statement), or undefined. */
  async findIntent(id: string): Promise<IntentRow | undefined> {
    return (await this.intentById.execute({ id }))[0];
  }

  /** Intents by id (any order). */
  async intentsByIds(ids: readonly string[]): Promise<IntentRow[]> {
    return this.db
      .select()
      .from(paymentIntents)
      .where(inArray(paymentIntents.id, [...ids]));
  }

  /** A page of a merchant's intents, newest first (`status` filters), with the total count. */
  async listIntents(
    merchantPartyId: string,
    page: { limit: number; offset: number },
    status?: IntentStatus,
  ): Promise<{ rows: IntentRow[]; total: number }> {
    const where = and(
      eq(paymentIntents.merchantPartyId, merchantPartyId),
      status ? eq(paymentIntents.status, status) : undefined,
    );
    const [rows, [totalRow]] = await Promise.all([
      this.db
        .select()
        .from(paymentIntents)
        .where(where)
        .orderBy(desc(paymentIntents.createdAt), desc(paymentIntents.id))
        .limit(page.limit)
        .offset(page.offset),
      this.db.select({ n: count() }).from(paymentIntents).where(where),
    ]);
    return { rows, total: totalRow?.n ?? 0 };
  }

  /**
   * Ids of open intents past `expiresAt` at `now` (of one merchant when given), at most `batch`. With `tx`, the
   * rows are locked and rows another transaction holds are skipped (the expiry job).
   */
  async dueIntentIds(options: {
    now: Date;
    batch: number;
    merchantPartyId?: string;
    tx?: Tx;
  }): Promise<string[]> {
    const query = (options.tx ?? this.db)
      .select({ id: paymentIntents.id })
      .from(paymentIntents)
      .where(
        and(
          options.merchantPartyId ? eq(paymentIntents.merchantPartyId, options.merchantPartyId) : undefined,
          eq(paymentIntents.status, 'open'),
          lte(paymentIntents.expiresAt, options.now),
        ),
      )
      .limit(options.batch);
    const rows = options.tx ? await query.for('update', { skipLocked: true }) : await query;
    return rows.map((r) => r.id);
  }

  /** Locks intent `id` (`FOR UPDATE`) in `tx`, or undefined when there is none. */
  async lockIntent(tx: Tx, id: string): Promise<IntentRow | undefined> {
    const [row] = await tx.select().from(paymentIntents).where(eq(paymentIntents.id, id)).for('update');
    return row;
  }

  /** Locks the intents of `ids` in `tx`, in id order (the order every multi-row lock takes). */
  async lockIntents(tx: Tx, ids: readonly string[]): Promise<IntentRow[]> {
    return tx
      .select()
      .from(paymentIntents)
      .where(inArray(paymentIntents.id, [...ids]))
      .orderBy(paymentIntents.id)
      .for('update');
  }

  /** Inserts an intent. */
  async insertIntent(tx: Tx, values: typeof paymentIntents.$inferInsert): Promise<IntentRow> {
    const [row] = await tx.insert(paymentIntents).values(values).returning();
    return row!;
  }

  /** Updates intent `id` with `changes`; returns the row after. */
  async updateIntent(tx: Tx, id: string, changes: Partial<IntentRow>): Promise<IntentRow> {
    const [row] = await tx.update(paymentIntents).set(changes).where(eq(paymentIntents.id, id)).returning();
    return row!;
  }

  // ---------------------------------------------------------------- card payments

  /** One card payment by id, or undefined. */
  async findCardPayment(id: string): Promise<CardPaymentRow | undefined> {
    const [row] = await this.db.select().from(cardPayments).where(eq(cardPayments.id, id)).limit(1);
    return row;
  }

  /** Card payments by id (any order). */
  async cardPaymentsByIds(ids: readonly string[]): Promise<CardPaymentRow[]> {
    return this.db
      .select()
      .from(cardPayments)
      .where(inArray(cardPayments.id, [...ids]));
  }

  /** Locks card payment `id` in `tx` (the settle job takes it before its intent), or undefined. */
  async lockCardPayment(tx: Tx, id: string): Promise<CardPaymentRow | undefined> {
    const [row] = await tx.select().from(cardPayments).where(eq(cardPayments.id, id)).for('update');
    return row;
  }

  async insertCardPayment(tx: Tx, row: CardPaymentRow): Promise<void> {
    await tx.insert(cardPayments).values(row);
  }

  async updateCardPayment(tx: Tx, row: CardPaymentRow): Promise<void> {
    await tx.update(cardPayments).set(row).where(eq(cardPayments.id, row.id));
  }

  // ---------------------------------------------------------------- voice sessions

  /** One voice session by id, or undefined. */
  async findVoiceSession(id: string): Promise<VoiceSessionRow | undefined> {
    const [row] = await this.db.select().from(voiceSessions).where(eq(voiceSessions.id, id)).limit(1);
    return row;
  }

  /** A voice session's intent and merchant, read without a lock (they never change). */
  async voiceSessionOwner(
    tx: Tx,
    id: string,
  ): Promise<{ paymentIntentId: string; merchantPartyId: string } | undefined> {
    const [row] = await tx
      .select({
        paymentIntentId: voiceSessions.paymentIntentId,
        merchantPartyId: voiceSessions.merchantPartyId,
      })
      .from(voiceSessions)
      .where(eq(voiceSessions.id, id))
      .limit(1);
    return row;
  }

  /** Locks voice session `id` in `tx` (after its intent: lock order), or undefined. */
  async lockVoiceSession(tx: Tx, id: string): Promise<VoiceSessionRow | undefined> {
    const [row] = await tx.select().from(voiceSessions).where(eq(voiceSessions.id, id)).for('update');
    return row;
  }

  /** Locks the active voice sessions of an intent in `tx`, in id order. */
  async lockActiveVoiceSessions(tx: Tx, intentId: string): Promise<VoiceSessionRow[]> {
    return tx
      .select()
      .from(voiceSessions)
      .where(and(eq(voiceSessions.paymentIntentId, intentId), eq(voiceSessions.status, 'active')))
      .orderBy(voiceSessions.id)
      .for('update');
  }

  async insertVoiceSession(tx: Tx, values: typeof voiceSessions.$inferInsert): Promise<VoiceSessionRow> {
    const [row] = await tx.insert(voiceSessions).values(values).returning();
    return row!;
  }

  /**
   * Updates voice session `id` with `changes`; returns the row after. With `unlessStatus`, a session already in that
   * status is left as it is (and undefined is returned).
   */
  async updateVoiceSession(
    tx: Tx,
    id: string,
    changes: Partial<VoiceSessionRow>,
    unlessStatus?: VoiceSessionRow['status'],
  ): Promise<VoiceSessionRow | undefined> {
    const [row] = await tx
      .update(voiceSessions)
      .set(changes)
      .where(and(eq(voiceSessions.id, id), unlessStatus ? ne(voiceSessions.status, unlessStatus) : undefined))
      .returning();
    return row;
  }
}
