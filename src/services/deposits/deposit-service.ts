import { createHash, randomBytes } from 'node:crypto';
import { and, asc, eq, lte, sql } from 'drizzle-orm';
import { getAddress, toHex } from 'viem';
import type { Clock } from '../../platform/clock.ts';
import type { Db, Executor, Tx } from '../../platform/database.ts';
import { ApiError } from '../../platform/errors.ts';
import type { GatewayChain } from './chain.ts';
import { quotes, transfers } from './db/schema.ts';
import type { DepositRequest } from './deposit-request.ts';
import type { DepositsConfig } from './deposits-config.ts';
import { businessError } from './deposits-errors.ts';
import { publishTask, settleRefundTask } from './deposits-jobs.ts';
import { quoteSalt, vaultAddress } from './vault-address.ts';

/** Vault states, named as the anchor (a stablecoin "fast deposit" gateway) names them. */
export type VaultStatus =
  | 'PENDING'
  | 'FUNDING_DETECTED'
  | 'PUBLISHED'
  | 'EXPIRED_UNFUNDED'
  | 'FAILED'
  | 'REFUNDED_BY_USER';

/**
 * The vault state machine, in one place. From PENDING: funded before the deadline (FUNDING_DETECTED), the deadline
 * passed unfunded (EXPIRED_UNFUNDED; a partial funding is refunded), or the depositor reclaimed it
 * (REFUNDED_BY_USER). From FUNDING_DETECTED: the destination deposit made (PUBLISHED) or failed (FAILED; the funds
 * are refunded). The other states are final.
 */
export const VAULT_TRANSITIONS: Record<VaultStatus, readonly VaultStatus[]> = {
  PENDING: ['FUNDING_DETECTED', 'EXPIRED_UNFUNDED', 'REFUNDED_BY_USER'],
  FUNDING_DETECTED: ['PUBLISHED', 'FAILED'],
  PUBLISHED: [],
  EXPIRED_UNFUNDED: [],
  FAILED: [],
  REFUNDED_BY_USER: [],
};

/** The quote answer of `POST /deposit-addresses`: checksummed vault address, amount (base units), deadline (Unix s). */
export interface QuoteView {
  vaultAddress: string;
  amount: string;
  deadline: number;
}

/** A transfer of a vault, as `GET /deposit-addresses/{vaultAddress}` shows it. Amounts in base units. */
export interface TransferView {
  direction: 'in' | 'out';
  kind: 'plain' | 'gasless' | 'refund';
  from: string;
  to: string;
  amount: string;
  txHash: string;
  observedAt: string;
}

/** The full state of a vault. */
export interface DepositAddressView extends QuoteView {
  status: VaultStatus;
  sourceChainId: number;
  recipient: string;
  depositor: string;
  refundRecipient: string;
  /** Sum of funding transfers observed before the deadline, base units. */
  receivedAmount: string;
  /** Sum of refunds sent back, base units. */
  refundedAmount: string;
  createdAt: string;
  fundedAt: string | null;
  publishedAt: string | null;
  publishTxHash: string | null;
  failureReason: string | null;
  transfers: TransferView[];
}

type QuoteRow = typeof quotes.$inferSelect;

/**
 * SHA-256 (hex) of the request's identity: chain, amount and the three addresses (lowercase). Two requests with the
 * same fingerprint are "the same request" for the repeat rule.
 */
export function requestFingerprint(r: DepositRequest): string {
  return createHash('sha256')
    .update(`${r.sourceChainId}|${r.amount}|${r.recipient}|${r.depositor}|${r.refundRecipient}`)
    .digest('hex');
}

/**
 * Quotes deposit addresses and runs each vault's life (spec C and its anchor).
 *
 * - {@link DepositService.quote}: the same request while its quote is PENDING and before its deadline returns that
 *   quote (same address, amount, deadline); otherwise a new quote with a new nonce, hence a new vault address.
 *   A unique index allows one PENDING quote per fingerprint, so concurrent identical requests get one quote.
 * - Funding ({@link DepositService.recordTransfer}), publication, expiry and refunds move the state through
 *   {@link VAULT_TRANSITIONS} only.
 */
export class DepositService {
  /** The two statements of every quote request, built once and prepared on each connection (named statements). */
  private readonly statements;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly config: DepositsConfig,
    private readonly chain: GatewayChain,
  ) {
    const p = (name: string) => sql.placeholder(name);
    this.statements = {
      pending: db
        .select()
        .from(quotes)
        .where(and(eq(quotes.fingerprint, p('fingerprint')), eq(quotes.status, 'PENDING')))
        .limit(1)
        .prepare('deposits_pending_quote'),
      // The unique index on PENDING fingerprints makes concurrent identical requests insert one row; the others
      // find it on their next pass.
      insert: db
        .insert(quotes)
        .values({
          vaultAddress: p('vaultAddress'),
          sourceChainId: p('sourceChainId'),
          amount: p('amount'),
          recipient: p('recipient'),
          depositor: p('depositor'),
          refundRecipient: p('refundRecipient'),
          fingerprint: p('fingerprint'),
          nonce: p('nonce'),
          salt: p('salt'),
          deadline: p('deadline'),
          status: 'PENDING',
          apiKeyId: p('apiKeyId'),
          createdAt: p('now'),
          updatedAt: p('now'),
        })
        .onConflictDoNothing({ target: quotes.fingerprint, where: sql`${quotes.status} = 'PENDING'` })
        .returning()
        .prepare('deposits_insert_quote'),
    };
  }

  /**
   * Quotes (or repeats) a deposit address.
   * @throws ApiError 400 business error `UNSUPPORTED_SOURCE_CHAIN` when the chain is not configured.
   */
  async quote(request: DepositRequest, apiKeyId: number | undefined): Promise<QuoteView> {
    if (!this.config.sourceChains.includes(request.sourceChainId)) {
      throw businessError(
        'UNSUPPORTED_SOURCE_CHAIN',
        `Source chain ${request.sourceChainId} is not supported (supported: ${this.config.sourceChains.join(', ')}).`,
      );
    }
    const fingerprint = requestFingerprint(request);
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = this.clock.now();
      const pending = await this.findPending(fingerprint);
      if (pending && pending.deadline > now) return toQuoteView(pending);
      if (pending) {
        // Past its deadline but not swept yet: expire it, then quote anew.
        await this.expire(pending.id);
        continue;
      }
      const deadlineSeconds = Math.floor(now.getTime() / 1000) + this.config.quoteTtlSeconds;
      const nonce = toHex(randomBytes(32));
      const salt = quoteSalt(request, deadlineSeconds, nonce);
      const address = vaultAddress(this.config.factory, salt);
      const [row] = await this.statements.insert.execute({
        vaultAddress: address.toLowerCase(),
        sourceChainId: request.sourceChainId,
        amount: request.amount.toString(),
        recipient: request.recipient,
        depositor: request.depositor,
        refundRecipient: request.refundRecipient,
        fingerprint,
        nonce,
        salt,
        deadline: new Date(deadlineSeconds * 1000),
        apiKeyId: apiKeyId ?? null,
        now,
      });
      if (row) return toQuoteView(row);
    }
    throw new ApiError(503, 'quote_contention', 'The quote could not be settled, retry.');
  }

  /** The PENDING quote of a fingerprint (there is at most one), expired or not. */
  private async findPending(fingerprint: string): Promise<QuoteRow | undefined> {
    const [row] = await this.statements.pending.execute({ fingerprint });
    return row;
  }

  /**
   * The state of a vault by address (any case). A PENDING vault past its deadline is expired first.
   * @throws ApiError 404 `deposit_address_not_found`.
   */
  async get(address: string): Promise<DepositAddressView> {
    let row = await this.load(this.db, address);
    if (row.status === 'PENDING' && row.deadline.getTime() <= this.clock.nowMs()) {
      await this.expire(row.id);
      row = await this.load(this.db, address);
    }
    const rows = await this.db
      .select()
      .from(transfers)
      .where(eq(transfers.quoteId, row.id))
      .orderBy(asc(transfers.id));
    return toView(row, rows);
  }

  private async load(executor: Executor, address: string, lock = false): Promise<QuoteRow> {
    if (!/^0x[0-9a-fA-F]{40}$/.test(address)) throw notFound();
    const query = executor.select().from(quotes).where(eq(quotes.vaultAddress, address.toLowerCase()));
    const [row] = lock ? await query.for('update') : await query;
    if (!row) throw notFound();
    return row;
  }

  /**
   * Records a token transfer into a vault observed on its source chain (the chain simulator's operator route).
   * Funding counts when observed before the deadline; reaching `amount` moves PENDING to FUNDING_DETECTED and queues
   * the destination deposit. A transfer into a vault that no longer takes funding is refunded.
   * @throws ApiError 404 unknown vault; 409 `duplicate_transaction` for a known `txHash`.
   */
  async recordTransfer(input: {
    vaultAddress: string;
    from: string;
    amount: bigint;
    kind: 'plain' | 'gasless';
    txHash?: string;
  }): Promise<DepositAddressView> {
    const now = this.clock.now();
    await this.db.transaction(async (tx) => {
      const row = await this.load(tx, input.vaultAddress, true);
      const txHash = (input.txHash ?? toHex(randomBytes(32))).toLowerCase();
      const [dup] = await tx.select({ id: transfers.id }).from(transfers).where(eq(transfers.txHash, txHash));
      if (dup) throw new ApiError(409, 'duplicate_transaction', `Transaction ${txHash} is already recorded.`);
      await tx.insert(transfers).values({
        quoteId: row.id,
        direction: 'in',
        kind: input.kind,
        fromAddress: input.from.toLowerCase(),
        toAddress: row.vaultAddress,
        amount: input.amount.toString(),
        txHash,
        observedAt: now,
      });
      if (row.status === 'PENDING' && now < row.deadline) {
        const received = await this.fundedBeforeDeadline(tx, row);
        await tx
          .update(quotes)
          .set({ receivedAmount: received.toString(), updatedAt: now })
          .where(eq(quotes.id, row.id));
        if (received >= BigInt(row.amount)) {
          await this.transition(tx, row, 'FUNDING_DETECTED', { fundedAt: now });
          await publishTask.enqueue(tx, { quoteId: row.id }, { jobKey: String(row.id) });
        }
      } else if (row.status !== 'PENDING' && row.status !== 'FUNDING_DETECTED') {
        // A closed vault keeps nothing: what arrives is returned to the refund address.
        await settleRefundTask.enqueue(tx, { quoteId: row.id }, { jobKey: String(row.id) });
      }
    });
    return this.get(input.vaultAddress);
  }

  private async fundedBeforeDeadline(tx: Tx, row: QuoteRow): Promise<bigint> {
    const [sum] = await tx
      .select({ total: sql<string>`coalesce(sum(${transfers.amount}), 0)::text` })
      .from(transfers)
      .where(
        and(
          eq(transfers.quoteId, row.id),
          eq(transfers.direction, 'in'),
          sql`${transfers.observedAt} < ${row.deadline}`,
        ),
      );
    return BigInt(sum?.total ?? '0');
  }

  private async transition(
    tx: Tx,
    row: QuoteRow,
    to: VaultStatus,
    fields: Partial<Pick<QuoteRow, 'fundedAt' | 'publishedAt' | 'publishTxHash' | 'failureReason'>> = {},
  ): Promise<void> {
    if (!VAULT_TRANSITIONS[row.status].includes(to)) {
      throw new ApiError(409, 'invalid_state', `A ${row.status} deposit address cannot become ${to}.`);
    }
    await tx
      .update(quotes)
      .set({ ...fields, status: to, updatedAt: this.clock.now() })
      .where(eq(quotes.id, row.id));
  }

  /** Job `deposits:publish`: makes the destination deposit of a FUNDING_DETECTED vault (PUBLISHED, or FAILED). */
  async publish(quoteId: number): Promise<void> {
    const [row] = await this.db.select().from(quotes).where(eq(quotes.id, quoteId));
    if (row?.status !== 'FUNDING_DETECTED') return;
    let txHash: `0x${string}` | undefined;
    let failure: string | undefined;
    try {
      txHash = await this.chain.publishDeposit({
        vaultAddress: row.vaultAddress,
        recipient: row.recipient,
        amount: BigInt(row.amount),
        sourceChainId: row.sourceChainId,
      });
    } catch (err) {
      failure = (err as Error).message.slice(0, 300);
    }
    await this.db.transaction(async (tx) => {
      const [locked] = await tx.select().from(quotes).where(eq(quotes.id, quoteId)).for('update');
      if (locked?.status !== 'FUNDING_DETECTED') return;
      if (txHash) {
        await this.transition(tx, locked, 'PUBLISHED', {
          publishedAt: this.clock.now(),
          publishTxHash: txHash,
        });
      } else {
        await this.transition(tx, locked, 'FAILED', {
          failureReason: failure ?? 'destination deposit failed',
        });
      }
      // Any excess (or everything, on failure) goes back to the refund address.
      await settleRefundTask.enqueue(tx, { quoteId }, { jobKey: String(quoteId) });
    });
  }

  /**
   * Expires one vault if it is PENDING at or past its deadline: EXPIRED_UNFUNDED, and a partial funding is refunded.
   * (If the funding reached `amount` before the deadline but was not processed yet, it becomes FUNDING_DETECTED.)
   */
  async expire(quoteId: number): Promise<void> {
    await this.db.transaction(async (tx) => {
      const [row] = await tx.select().from(quotes).where(eq(quotes.id, quoteId)).for('update');
      if (row?.status !== 'PENDING' || row.deadline.getTime() > this.clock.nowMs()) return;
      const received = await this.fundedBeforeDeadline(tx, row);
      if (received >= BigInt(row.amount)) {
        await this.transition(tx, row, 'FUNDING_DETECTED', { fundedAt: row.deadline });
        await publishTask.enqueue(tx, { quoteId }, { jobKey: String(quoteId) });
        return;
      }
      await this.transition(tx, row, 'EXPIRED_UNFUNDED');
      await settleRefundTask.enqueue(tx, { quoteId }, { jobKey: String(quoteId) });
    });
  }

  /** Job `deposits:expire-due` (every minute): expires every PENDING vault whose deadline has passed. */
  async expireDue(limit = 1000): Promise<number> {
    const due = await this.db
      .select({ id: quotes.id })
      .from(quotes)
      .where(and(eq(quotes.status, 'PENDING'), lte(quotes.deadline, this.clock.now())))
      .limit(limit);
    for (const { id } of due) await this.expire(id);
    return due.length;
  }

  /**
   * Job `deposits:settle-refund`: returns to the refund address whatever the vault holds beyond what it owes.
   * A PUBLISHED vault owes `amount` (sent to the destination), any other final state owes nothing. Idempotent: the
   * balance is recomputed from the recorded transfers.
   */
  async settleRefund(quoteId: number): Promise<void> {
    await this.db.transaction(async (tx) => {
      const [row] = await tx.select().from(quotes).where(eq(quotes.id, quoteId)).for('update');
      if (!row || row.status === 'PENDING' || row.status === 'FUNDING_DETECTED') return;
      const rows = await tx.select().from(transfers).where(eq(transfers.quoteId, quoteId));
      const inflow = rows.filter((t) => t.direction === 'in').reduce((a, t) => a + BigInt(t.amount), 0n);
      const outflow = rows.filter((t) => t.direction === 'out').reduce((a, t) => a + BigInt(t.amount), 0n);
      const owed = row.status === 'PUBLISHED' ? BigInt(row.amount) : 0n;
      const balance = inflow - owed - outflow;
      if (balance <= 0n) return;
      const txHash = await this.chain.refund({
        vaultAddress: row.vaultAddress,
        to: row.refundRecipient,
        amount: balance,
        sourceChainId: row.sourceChainId,
        sequence: rows.length,
      });
      await tx.insert(transfers).values({
        quoteId,
        direction: 'out',
        kind: 'refund',
        fromAddress: row.vaultAddress,
        toAddress: row.refundRecipient,
        amount: balance.toString(),
        txHash,
        observedAt: this.clock.now(),
      });
    });
  }

  /**
   * The depositor reclaims a PENDING vault's funds before the deadline (operator simulation of the vault's reclaim
   * call): REFUNDED_BY_USER, and the balance goes to the refund address.
   * @throws ApiError 404 unknown vault; 409 `invalid_state` unless PENDING.
   */
  async userRefund(address: string): Promise<DepositAddressView> {
    await this.db.transaction(async (tx) => {
      const row = await this.load(tx, address, true);
      await this.transition(tx, row, 'REFUNDED_BY_USER');
      await settleRefundTask.enqueue(tx, { quoteId: row.id }, { jobKey: String(row.id) });
    });
    return this.get(address);
  }
}

function notFound(): ApiError {
  return new ApiError(404, 'deposit_address_not_found', 'Deposit address not found.');
}

function toQuoteView(row: QuoteRow): QuoteView {
  return {
    vaultAddress: getAddress(row.vaultAddress),
    amount: row.amount,
    deadline: Math.floor(row.deadline.getTime() / 1000),
  };
}

function toView(row: QuoteRow, rows: (typeof transfers.$inferSelect)[]): DepositAddressView {
  const refunded = rows.filter((t) => t.direction === 'out').reduce((a, t) => a + BigInt(t.amount), 0n);
  return {
    ...toQuoteView(row),
    status: row.status,
    sourceChainId: row.sourceChainId,
    recipient: getAddress(row.recipient),
    depositor: getAddress(row.depositor),
    refundRecipient: getAddress(row.refundRecipient),
    receivedAmount: row.receivedAmount,
    refundedAmount: refunded.toString(),
    createdAt: row.createdAt.toISOString(),
    fundedAt: row.fundedAt ? row.fundedAt.toISOString() : null,
    publishedAt: row.publishedAt ? row.publishedAt.toISOString() : null,
    publishTxHash: row.publishTxHash,
    failureReason: row.failureReason,
    transfers: rows.map((t) => ({
      direction: t.direction,
      kind: t.kind,
      from: getAddress(t.fromAddress),
      to: getAddress(t.toAddress),
      amount: t.amount,
      txHash: t.txHash,
      observedAt: t.observedAt.toISOString(),
    })),
  };
}
