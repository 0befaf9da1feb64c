/**
 * Payment intents, card payments and voice sessions (spec 001 section A). Every status change goes through
 * {@link transition} (state-machines.ts); money through money.ts; the card network through {@link CardNetwork}.
 * Methods that write take the caller's transaction (`tx`) so that the route can wrap them in an idempotency record.
 * The statements are payment-store.ts's, the JSON:API documents payment-resources.ts's.
 *
 * Lock order (no deadlock between two writers): card payment (settle job only), then the payment intent, then its
 * voice sessions (by id). Every path that locks a voice session locks its intent first.
 */
import type { Clock } from '../../platform/clock.ts';
import { constantTimeEqual, hashApiKey, type SecretBox } from '../../platform/crypto.ts';
import type { Tx } from '../../platform/database.ts';
import { ApiError } from '../../platform/errors.ts';
import { prefixedHexId, randomToken } from '../../platform/ids.ts';
import type { CardNetwork, CheckedCard, NetworkOutcome } from './card-network.ts';
import { type LineItemInput, priceLineItems, type TaxMode } from './money.ts';
import { checkCanProceed, type PartyService, type Principal, partyNotFound } from './parties.ts';
import type { CardPaymentRow, IntentRow, PaymentStore, VoiceSessionRow } from './payment-store.ts';
import type { PaymentsConfig } from './payments-config.ts';
import { settleCardPaymentTask } from './payments-jobs.ts';
import { type IntentStatus, transition } from './state-machines.ts';

export type { CardPaymentRow, IntentRow, VoiceSessionRow } from './payment-store.ts';

/** What the payments domain needs (constructor options of {@link PaymentService}). */
export interface PaymentServiceOptions {
  store: PaymentStore;
  clock: Clock;
  config: PaymentsConfig;
  /** The card network (the simulator by default). */
  network: CardNetwork;
  parties: PartyService;
  /** Seals the client secret of each intent (it is shown again to the merchant while the intent is payable). */
  secrets: SecretBox;
}

/** A request to create an intent (already shape-checked by the route schema). */
export interface CreateIntentInput {
  customerPartyId: string;
  description: string | null;
  taxMode: TaxMode;
  lineItems: LineItemInput[];
  /** RFC 3339; undefined = the default lifetime; null = never expires. */
  expiresAt?: string | null;
}

/** 404 that never tells a missing intent from another merchant's. */
export function intentNotFound(): ApiError {
  return new ApiError(404, 'payment_intent_not_found', 'No such payment intent.');
}

const LINE_ITEMS_POINTER = '/data/attributes/lineItems';

/** The domain of intents, card payments and voice sessions: the rules; {@link PaymentStore} runs the statements. */
export class PaymentService {
  private readonly store: PaymentStore;
  private readonly clock: Clock;
  private readonly config: PaymentsConfig;
  private readonly network: CardNetwork;
  private readonly parties: PartyService;
  private readonly secrets: SecretBox;

  constructor(options: PaymentServiceOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.config = options.config;
    this.network = options.network;
    this.parties = options.parties;
    this.secrets = options.secrets;
  }

  // ---------------------------------------------------------------- intents

  /**
   * Creates an intent for a customer party of the caller.
   * @throws ApiError 404 `party_not_found` (pointer to customerParty) when the party is not the caller's customer,
   *   403 `compliance_required` when the merchant or the customer cannot proceed, 400 `invalid_value` for an unknown
   *   tax code, a bad `expiresAt` or an amount out of range, 400 `limit_exceeded` above the merchant's
   *   `perTransaction` limit (nothing is created).
   */
  async create(tx: Tx, principal: Principal, input: CreateIntentInput): Promise<IntentRow> {
    const now = this.clock.now();
    const totals = priceLineItems(input.lineItems, input.taxMode, this.config.taxRates, LINE_ITEMS_POINTER);
    const expiresAt = this.resolveExpiry(input.expiresAt, now);
    const rows = await this.store.partiesByIds(tx, [principal.partyId, input.customerPartyId]);
    const customer = rows.find((r) => r.id === input.customerPartyId);
    if (customer?.kind !== 'customer' || customer.ownerPartyId !== principal.partyId) {
      throw partyNotFound('/data/relationships/customerParty/data/id');
    }
    checkCanProceed(rows, [principal.partyId, customer.id]);
    const merchant = rows.find((r) => r.id === principal.partyId)!;
    assertWithinLimit(merchant.perTransaction, totals.amount);
    const id = prefixedHexId('pmi');
    const clientSecret = `${id}_secret_${randomToken(24)}`;
    return this.store.insertIntent(tx, {
      id,
      merchantPartyId: principal.partyId,
      customerPartyId: customer.id,
      description: input.description,
      currency: 'USD',
      taxMode: input.taxMode,
      amount: totals.amount,
      taxAmount: totals.taxAmount,
      lineItems: totals.lineItems,
      status: 'open',
      clientSecretHash: hashApiKey(clientSecret),
      clientSecretSealed: this.secrets.encrypt(clientSecret, id),
      expiresAt,
      createdAt: now,
      updatedAt: now,
    });
  }

  private resolveExpiry(value: string | null | undefined, now: Date): Date | null {
    if (value === null) return null;
    if (value === undefined) return new Date(now.getTime() + this.config.defaultExpirySeconds * 1000);
    const at = new Date(value);
    const pointer = { details: { pointer: '/data/attributes/expiresAt' } };
    if (Number.isNaN(at.getTime())) {
      throw new ApiError(400, 'invalid_value', 'expiresAt must be an RFC 3339 date-time.', pointer);
    }
    if (at.getTime() <= now.getTime()) {
      throw new ApiError(400, 'invalid_value', 'expiresAt must be in the future.', pointer);
    }
    if (at.getTime() > now.getTime() + this.config.maxExpirySeconds * 1000) {
      throw new ApiError(
        400,
        'invalid_value',
        `expiresAt may be at most ${this.config.maxExpirySeconds} seconds from now.`,
        pointer,
      );
    }
    return at;
  }

  /**
   * Reads one intent of the caller; an open intent past `expiresAt` is expired first (expiry on read).
   * @throws ApiError 404 `payment_intent_not_found`.
   */
  async get(principal: Principal, id: string): Promise<IntentRow> {
    const row = await this.findFresh(id);
    if (!row || row.merchantPartyId !== principal.partyId) throw intentNotFound();
    return row;
  }

  /** An intent by id after expiry on read, or undefined. */
  async findFresh(id: string): Promise<IntentRow | undefined> {
    const row = await this.store.findIntent(id);
    if (row && this.isDue(row)) {
      await this.store.transaction((tx) => this.expireLocked(tx, [id]));
      return this.store.findIntent(id);
    }
    return row;
  }

  private isDue(row: IntentRow): boolean {
    return row.status === 'open' && row.expiresAt !== null && row.expiresAt.getTime() <= this.clock.nowMs();
  }

  /**
   * A page of the caller's intents, newest first (`status` filters), with the total count. Expiry on read: the
   * caller's open intents past `expiresAt` are expired first, so `filter[status]` and `meta.page.total` already
   * see them as `expired`.
   * @param page `limit` rows (1-100) after `offset` rows.
   */
  async list(
    principal: Principal,
    page: { limit: number; offset: number },
    status?: IntentStatus,
  ): Promise<{ rows: IntentRow[]; total: number }> {
    await this.expireDueOf(principal.partyId);
    const { rows, total } = await this.store.listIntents(principal.partyId, page, status);
    const due = rows.filter((r) => this.isDue(r)).map((r) => r.id);
    if (due.length === 0) return { rows, total };
    await this.store.transaction((tx) => this.expireLocked(tx, due));
    const byId = new Map((await this.store.intentsByIds(due)).map((r) => [r.id, r]));
    const merged = rows.map((r) => byId.get(r.id) ?? r);
    return { rows: status ? merged.filter((r) => r.status === status) : merged, total };
  }

  /** Expires the open intents of one merchant that are past `expiresAt` (expiry on read for lists). */
  private async expireDueOf(merchantPartyId: string, batch = 500): Promise<void> {
    const due = await this.store.dueIntentIds({ now: this.clock.now(), batch, merchantPartyId });
    if (due.length === 0) return;
    await this.store.transaction((tx) => this.expireLocked(tx, due));
  }

  /** Locks an intent of the caller inside `tx` (after expiry on read). @throws 404 `payment_intent_not_found`. */
  private async lockOwned(tx: Tx, principal: Principal, id: string): Promise<IntentRow> {
    const row = await this.store.lockIntent(tx, id);
    if (!row || row.merchantPartyId !== principal.partyId) throw intentNotFound();
    return row;
  }

  /**
   * Replaces the line items of an open intent: new `pli_` ids, positions 0..n-1 in the order given, totals and
   * tax recomputed.
   * @throws ApiError 404, 409 `invalid_state` unless open, 400 as {@link create}, 400 `limit_exceeded`.
   */
  async replaceLineItems(principal: Principal, id: string, lines: LineItemInput[]): Promise<IntentRow> {
    await this.get(principal, id);
    return this.store.transaction((tx) => this.replaceLocked(tx, principal, id, lines));
  }

  private async replaceLocked(tx: Tx, principal: Principal, id: string, lines: LineItemInput[]) {
    const row = await this.lockOwned(tx, principal, id);
    const status = transition('paymentIntent', row.status, 'replaceLineItems');
    const totals = priceLineItems(lines, row.taxMode, this.config.taxRates, '/data');
    const merchant = await this.parties.find(row.merchantPartyId, tx);
    // The replacement body is `{data:[lineItem…]}`: the limit error points at `/data`.
    assertWithinLimit(merchant?.perTransaction ?? null, totals.amount, '/data');
    return this.store.updateIntent(tx, id, {
      status,
      lineItems: totals.lineItems,
      amount: totals.amount,
      taxAmount: totals.taxAmount,
      updatedAt: this.clock.now(),
    });
  }

  /** Cancels an open intent. @throws ApiError 404, 409 `invalid_state` unless open. */
  async cancel(tx: Tx, principal: Principal, id: string): Promise<IntentRow> {
    const row = await this.lockOwned(tx, principal, id);
    const now = this.clock.now();
    const status = transition('paymentIntent', row.status, 'cancel');
    await this.endVoiceSessions(tx, id, 'intent_canceled');
    return this.store.updateIntent(tx, id, { status, canceledAt: now, updatedAt: now });
  }

  /** Expires every open intent past `expiresAt` (the cron job). Returns how many. */
  async expireDue(batch = 500): Promise<number> {
    return this.store.transaction(async (tx) => {
      const due = await this.store.dueIntentIds({ now: this.clock.now(), batch, tx });
      return due.length === 0 ? 0 : this.expireLocked(tx, due);
    });
  }

  /** Expires the given intents that are still open and due (locks them, in id order). Returns how many changed. */
  private async expireLocked(tx: Tx, ids: string[]): Promise<number> {
    const rows = await this.store.lockIntents(tx, ids);
    let changed = 0;
    for (const row of rows) {
      if (!this.isDue(row)) continue;
      const status = transition('paymentIntent', row.status, 'expire');
      await this.endVoiceSessions(tx, row.id, 'intent_expired');
      await this.store.updateIntent(tx, row.id, { status, updatedAt: this.clock.now() });
      changed += 1;
    }
    return changed;
  }

  // ---------------------------------------------------------------- paying

  /**
   * Checks the payer's client secret against an intent (SHA-256, constant-time comparison). The payer route calls
   * it before anything else, so that even an `Idempotency-Key` replay needs the secret.
   * @param row the intent (or undefined when none has the id).
   * @throws ApiError 404 `payment_intent_not_found` when the intent is missing or the secret is wrong (the same
   *   answer for both, never telling which).
   */
  assertClientSecret(row: IntentRow | undefined, clientSecret: string): IntentRow {
    if (!row || !constantTimeEqual(hashApiKey(clientSecret), row.clientSecretHash)) throw intentNotFound();
    return row;
  }

  /** Locks an intent for checkout after checking its client secret. @throws as {@link assertClientSecret}. */
  private async lockBySecret(tx: Tx, intentId: string, clientSecret: string): Promise<IntentRow> {
    return this.assertClientSecret(await this.store.lockIntent(tx, intentId), clientSecret);
  }

  /**
   * Pays an intent through its hosted checkout link (`channel` `link`), authenticated by the client secret.
   * Call {@link findFresh} first so an intent past `expiresAt` is already expired.
   * @throws ApiError 404, 409 `invalid_state` unless open (no new attempt after `expiresAt`), 403
   *   `compliance_required`, 400 `limit_exceeded` when the merchant's limit was lowered below the amount.
   */
  async payWithLink(
    tx: Tx,
    intentId: string,
    clientSecret: string,
    card: CheckedCard,
  ): Promise<{ payment: CardPaymentRow; intent: IntentRow }> {
    const intent = await this.lockBySecret(tx, intentId, clientSecret);
    return this.startPayment(tx, intent, card, 'link', null);
  }

  /**
   * One payment attempt on a locked intent: checks state, expiry, compliance and the merchant's current
   * per-transaction limit, asks the network, records the card payment (brand and last4 only) and moves intent, card
   * payment and voice session through their machines.
   * @throws ApiError 409 `invalid_state` (not open, expired, session not active), 403 `compliance_required`, 400
   *   `limit_exceeded` (nothing is recorded); the payer (`link`) gets neither party ids nor the limit in the detail.
   */
  private async startPayment(
    tx: Tx,
    intent: IntentRow,
    card: CheckedCard,
    channel: 'link' | 'voice',
    session: VoiceSessionRow | null,
  ): Promise<{ payment: CardPaymentRow; intent: IntentRow }> {
    const now = this.clock.now();
    if (this.isDue(intent)) {
      throw new ApiError(409, 'invalid_state', 'This payment intent has expired; no new payment can start.');
    }
    const processing = transition('paymentIntent', intent.status, 'attemptStarted');
    // Every attempt starts as a processing card payment: the session must be able to take that event (active).
    if (session) transition('voiceSession', session.status, 'paymentProcessing');
    let rows: Awaited<ReturnType<PartyService['assertCanProceed']>>;
    try {
      rows = await this.parties.assertCanProceed(tx, [intent.merchantPartyId, intent.customerPartyId]);
    } catch (error) {
      // The payer is not told which party is blocked or why: that is the merchant's business.
      if (channel === 'link' && error instanceof ApiError && error.code === 'compliance_required') {
        throw new ApiError(403, 'compliance_required', 'This merchant cannot take payments right now.');
      }
      throw error;
    }
    // The limit may have been lowered since the intent was created: it holds for every attempt too.
    const limit = rows.find((r) => r.id === intent.merchantPartyId)?.perTransaction ?? null;
    if (limit !== null && intent.amount > limit) {
      throw new ApiError(
        400,
        'limit_exceeded',
        channel === 'link'
          ? 'This payment is above what the merchant accepts in one payment.'
          : `The amount ${intent.amount} cents is above the per-transaction limit of ${limit} cents; replace the ` +
              'line items or raise the limit.',
      );
    }
    const outcome = await this.network.authorize(card, intent.amount);
    const payment: CardPaymentRow = {
      id: prefixedHexId('cpy'),
      paymentIntentId: intent.id,
      merchantPartyId: intent.merchantPartyId,
      amount: intent.amount,
      currency: intent.currency,
      status: 'processing',
      brand: card.brand,
      last4: card.last4,
      channel,
      voiceSessionId: session?.id ?? null,
      failureCode: null,
      failureMessage: null,
      networkReference: outcome.reference,
      createdAt: now,
      updatedAt: now,
    };
    const applied = this.applyOutcome({ ...intent, status: processing }, payment, outcome);
    await this.store.insertCardPayment(tx, applied.payment);
    const updated = await this.store.updateIntent(tx, intent.id, applied.intentChanges);
    await this.afterOutcome(tx, updated, applied.payment, session);
    if (outcome.result === 'pending') {
      await settleCardPaymentTask.enqueue(
        tx,
        { cardPaymentId: payment.id },
        { runAt: new Date(Date.now() + this.config.settleDelaySeconds * 1000), jobKey: payment.id },
      );
    }
    return { payment: applied.payment, intent: updated };
  }

  /**
   * The effect of a network answer on a processing card payment and its processing intent (pure: the caller writes).
   */
  private applyOutcome(
    intent: IntentRow,
    payment: CardPaymentRow,
    outcome: NetworkOutcome,
  ): { payment: CardPaymentRow; intentChanges: Partial<IntentRow> } {
    const now = this.clock.now();
    if (outcome.result === 'pending') {
      return { payment, intentChanges: { status: intent.status, updatedAt: now } };
    }
    if (outcome.result === 'approved') {
      return {
        payment: {
          ...payment,
          status: transition('cardPayment', payment.status, 'approved'),
          updatedAt: now,
        },
        intentChanges: {
          status: transition('paymentIntent', intent.status, 'paymentSucceeded'),
          cardPaymentId: payment.id,
          updatedAt: now,
        },
      };
    }
    const failedAttempts = intent.failedAttempts + 1;
    const expired = intent.expiresAt !== null && intent.expiresAt.getTime() <= now.getTime();
    const event = expired
      ? 'paymentFailedAfterExpiry'
      : failedAttempts >= this.config.maxAttempts
        ? 'paymentFailedFinal'
        : 'paymentFailed';
    return {
      payment: {
        ...payment,
        status: transition('cardPayment', payment.status, 'declined'),
        failureCode: outcome.declineCode,
        failureMessage: outcome.message,
        updatedAt: now,
      },
      intentChanges: {
        status: transition('paymentIntent', intent.status, event),
        failedAttempts,
        updatedAt: now,
      },
    };
  }

  /**
   * Voice sessions follow the payment (at the attempt, and again when the settle job answers): the paying session
   * completes when its card is approved and stays active while the card is processing or after a decline that
   * leaves the intent open; an intent that closed (completed, declined, expired) ends every active session with
   * `intent_<status>`; a link payment that is processing ends them with `paid_by_link`. Locks the sessions after
   * the intent (the caller holds the intent's lock).
   * @param session the paying voice session, already locked by the caller ({@link lockVoiceSession}); null for a link
   *   payment.
   */
  private async afterOutcome(
    tx: Tx,
    intent: IntentRow,
    payment: CardPaymentRow,
    session: VoiceSessionRow | null,
  ): Promise<void> {
    const now = this.clock.now();
    if (session?.status === 'active') {
      const event =
        payment.status === 'failed'
          ? 'paymentFailed'
          : payment.status === 'succeeded'
            ? 'paymentSucceeded'
            : 'paymentProcessing';
      const next = transition('voiceSession', session.status, event);
      await this.store.updateVoiceSession(tx, session.id, {
        status: next,
        cardPaymentId: payment.id,
        updatedAt: now,
      });
    }
    if (intent.status !== 'open' && intent.status !== 'processing') {
      await this.endVoiceSessions(tx, intent.id, `intent_${intent.status}`);
    } else if (intent.status === 'processing' && !session) {
      await this.endVoiceSessions(tx, intent.id, 'paid_by_link');
    }
  }

  /**
   * Settles a pending card payment (the job `payments:settle-card-payment`): asks the network for the final
   * answer and applies it to the card payment, the intent and, for a keyed card, its voice session (approved:
   * session completed; declined with the intent open again: session stays active for another card; declined for
   * the last allowed time or after `expiresAt`: session ended `intent_declined` / `intent_expired`). A payment that
   * is no longer processing is left alone (the job may run twice). Locks card payment, intent, session in that order.
   */
  async settleCardPayment(cardPaymentId: string): Promise<void> {
    await this.store.transaction(async (tx) => {
      const payment = await this.store.lockCardPayment(tx, cardPaymentId);
      if (payment?.status !== 'processing' || !payment.networkReference) return;
      const intent = await this.store.lockIntent(tx, payment.paymentIntentId);
      if (!intent) return;
      const outcome = await this.network.settle(payment.networkReference);
      const applied = this.applyOutcome(intent, payment, outcome);
      await this.store.updateCardPayment(tx, applied.payment);
      const updated = await this.store.updateIntent(tx, intent.id, applied.intentChanges);
      const session = payment.voiceSessionId
        ? ((await this.store.lockVoiceSession(tx, payment.voiceSessionId)) ?? null)
        : null;
      await this.afterOutcome(tx, updated, applied.payment, session);
    });
  }

  /** A card payment of the caller. @throws ApiError 404 `card_payment_not_found`. */
  async getCardPayment(principal: Principal, id: string): Promise<CardPaymentRow> {
    const row = await this.store.findCardPayment(id);
    if (!row || row.merchantPartyId !== principal.partyId) {
      throw new ApiError(404, 'card_payment_not_found', 'No such card payment.');
    }
    return row;
  }

  // ---------------------------------------------------------------- voice

  /**
   * Starts a voice session on an open intent of the caller; an earlier active session of the intent ends
   * (`superseded`). The intent's `voiceSession` becomes this one.
   * @throws ApiError 404, 409 `invalid_state` unless the intent is open and unexpired.
   */
  async createVoiceSession(tx: Tx, principal: Principal, intentId: string): Promise<VoiceSessionRow> {
    const intent = await this.lockOwned(tx, principal, intentId);
    if (this.isDue(intent)) {
      throw new ApiError(409, 'invalid_state', 'This payment intent has expired; no new payment can start.');
    }
    // A session is only useful where a payment can start: the same guard as the attempt itself.
    transition('paymentIntent', intent.status, 'attemptStarted');
    const now = this.clock.now();
    await this.endVoiceSessions(tx, intentId, 'superseded');
    const session = await this.store.insertVoiceSession(tx, {
      id: prefixedHexId('vos'),
      paymentIntentId: intentId,
      merchantPartyId: principal.partyId,
      status: 'active',
      createdAt: now,
      updatedAt: now,
    });
    await this.store.updateIntent(tx, intentId, { voiceSessionId: session.id, updatedAt: now });
    return session;
  }

  /**
   * Locks a voice session of the caller and, before it, its intent (the service's lock order: intent, then
   * session). The session's intent never changes, so an unlocked read finds which intent to lock first.
   * @throws ApiError 404 `voice_session_not_found` (also for another merchant's session).
   */
  private async lockSessionAndIntent(
    tx: Tx,
    principal: Principal,
    id: string,
  ): Promise<{ session: VoiceSessionRow; intent: IntentRow }> {
    const notFound = () => new ApiError(404, 'voice_session_not_found', 'No such voice session.');
    const peek = await this.store.voiceSessionOwner(tx, id);
    if (!peek || peek.merchantPartyId !== principal.partyId) throw notFound();
    const intent = await this.store.lockIntent(tx, peek.paymentIntentId);
    const session = await this.store.lockVoiceSession(tx, id);
    if (!intent || !session) throw notFound();
    return { session, intent };
  }

  /**
   * A voice session of the caller. Expiry on read: when the session is active and its intent is past `expiresAt`,
   * the intent is expired first and the session is answered `ended` (`intent_expired`).
   * @throws ApiError 404 `voice_session_not_found` (also for another merchant's session).
   */
  async getVoiceSession(principal: Principal, id: string): Promise<VoiceSessionRow> {
    const read = () => this.store.findVoiceSession(id);
    const row = await read();
    if (!row || row.merchantPartyId !== principal.partyId) {
      throw new ApiError(404, 'voice_session_not_found', 'No such voice session.');
    }
    if (row.status !== 'active') return row;
    const intent = await this.findFresh(row.paymentIntentId);
    return intent?.status === 'expired' ? ((await read()) ?? row) : row;
  }

  /**
   * Simulation: the payer keys a card during the call (`channel` `voice`). Locks the intent, then the session.
   * @returns the card payment (status `processing`, `succeeded` or `failed`) and the intent after the attempt.
   * @throws ApiError 404 `voice_session_not_found`, 409 `invalid_state` unless the session is active and the intent
   *   open and before `expiresAt`, 403 `compliance_required`, 400 `limit_exceeded` (nothing recorded).
   */
  async keyVoiceCard(
    tx: Tx,
    principal: Principal,
    sessionId: string,
    card: CheckedCard,
  ): Promise<{ payment: CardPaymentRow; intent: IntentRow }> {
    const { session, intent } = await this.lockSessionAndIntent(tx, principal, sessionId);
    return this.startPayment(tx, intent, card, 'voice', session);
  }

  /**
   * Simulation: the payer hangs up (`endedReason` `hung_up`). Locks the intent, then the session. A keyed card
   * still processing settles anyway (the call ended, the payment did not).
   * @throws ApiError 404 `voice_session_not_found`, 409 `invalid_state` unless active.
   */
  async hangUp(tx: Tx, principal: Principal, sessionId: string): Promise<VoiceSessionRow> {
    const { session } = await this.lockSessionAndIntent(tx, principal, sessionId);
    const status = transition('voiceSession', session.status, 'end');
    const now = this.clock.now();
    return (await this.store.updateVoiceSession(tx, sessionId, {
      status,
      endedReason: 'hung_up',
      endedAt: now,
      updatedAt: now,
    }))!;
  }

  /**
   * Ends every active voice session of an intent (`reason` is stored as `endedReason`). The caller holds the
   * intent's lock; the sessions are locked after it, in id order.
   */
  private async endVoiceSessions(tx: Tx, intentId: string, reason: string): Promise<void> {
    const active = await this.store.lockActiveVoiceSessions(tx, intentId);
    const now = this.clock.now();
    for (const s of active) {
      const status = transition('voiceSession', s.status, 'end');
      await this.store.updateVoiceSession(
        tx,
        s.id,
        { status, endedReason: reason, endedAt: now, updatedAt: now },
        status,
      );
    }
  }

  // ---------------------------------------------------------------- reads for pages and operators

  /** The merchant's display name (for the checkout page). */
  async merchantName(partyId: string): Promise<string> {
    return (await this.store.partyName(partyId)) ?? 'Merchant';
  }

  /** Card payments by id (operators). */
  cardPaymentsById(ids: string[]): Promise<CardPaymentRow[]> {
    return this.store.cardPaymentsByIds(ids);
  }
}

/**
 * Refuses an amount above the merchant's per-transaction limit.
 * @param perTransaction the limit in cents, or null for none.
 * @param amount the intent's amount in cents.
 * @param pointer where the line items are in the request body: `/data/attributes/lineItems` (create, default) or
 *   `/data` (line-item replacement, whose body is `{data:[lineItem…]}`).
 * @throws ApiError 400 `limit_exceeded` with that pointer.
 */
export function assertWithinLimit(
  perTransaction: number | null,
  amount: number,
  pointer: string = LINE_ITEMS_POINTER,
): void {
  if (perTransaction !== null && amount > perTransaction) {
    throw new ApiError(
      400,
      'limit_exceeded',
      `The amount ${amount} cents is above the per-transaction limit of ${perTransaction} cents.`,
      { details: { pointer } },
    );
  }
}
