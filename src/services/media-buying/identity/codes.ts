/**
 * Six-digit sign-in codes of the built-in identity provider (spec "Sign-in and signup": `POST /auth/magic-code`,
 * `POST /auth/verify-code`), also the email verification of a signup.
 *
 * - A code is six random digits, stored as HMAC-SHA256 under a key derived from the secrets key and bound to its
 *   identity (a stolen table does not give the codes away by a 10^6 dictionary), valid {@link CODE_SECONDS}, single
 *   use, and dead after {@link CODE_MAX_ATTEMPTS} wrong guesses.
 * - Issuing a code ends every earlier unused code of the identity: only the latest mail's code works.
 * - A wrong code is also a failed sign-in for the account and the client address (`throttle.ts`, shared with
 *   passwords): once over budget, every verification is a 429 until the window ends.
 * - A signup's code carries the chosen password (`pendingPasswordHash`): it becomes the identity's password when that
 *   code verifies the email, so a password chosen by someone who cannot read the mailbox never signs in.
 */
import { randomInt } from 'node:crypto';
import { and, desc, eq, isNull, lt } from 'drizzle-orm';
import type { Clock } from '../../../platform/clock.ts';
import { constantTimeEqual, hmacSha256, type SecretBox } from '../../../platform/crypto.ts';
import type { Db, Executor } from '../../../platform/database.ts';
import { verifyPassword } from '../../../platform/passwords.ts';
import { identities, magicCodes } from '../db/schema.ts';
import { type Accounts, normalizeEmail, THROTTLED_MESSAGE } from './accounts.ts';
import { signInBuckets } from './throttle.ts';

/** Digits of a code. */
export const CODE_DIGITS = 6;
/** Lifetime of a code, in seconds (ten minutes). */
export const CODE_SECONDS = 10 * 60;
/** Wrong guesses after which a code is dead. */
export const CODE_MAX_ATTEMPTS = 5;

type IdentityRow = typeof identities.$inferSelect;

/** Sign-in and verification codes; see the module comment. */
export class SignInCodes {
  private readonly key: Buffer;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    secrets: SecretBox,
    private readonly accounts: Accounts,
  ) {
    this.key = secrets.deriveKey('media-buying:sign-in-code');
  }

  /** The stored form of `code` for identity `identityId`. */
  private hashOf(identityId: number, code: string): string {
    return hmacSha256(this.key, `${identityId}:${code}`).toString('hex');
  }

  /**
   * Issues a code for `identityId` in `tx`, ending the identity's earlier unused codes.
   * @param pendingPasswordHash a signup's password, installed when this code verifies the email.
   * @returns the code (six digits, leading zeros kept): for the mail only.
   */
  async issue(tx: Executor, identityId: number, pendingPasswordHash: string | null = null): Promise<string> {
    const now = this.clock.now();
    await tx
      .update(magicCodes)
      .set({ consumedAt: now })
      .where(and(eq(magicCodes.identityId, identityId), isNull(magicCodes.consumedAt)));
    const code = String(randomInt(0, 10 ** CODE_DIGITS)).padStart(CODE_DIGITS, '0');
    await tx.insert(magicCodes).values({
      identityId,
      codeHash: this.hashOf(identityId, code),
      createdAt: now,
      expiresAt: new Date(now.getTime() + CODE_SECONDS * 1000),
      pendingPasswordHash,
    });
    return code;
  }

  /** Ends every unused code of an identity (its email was proven another way: SSO, a password reset). */
  async endAll(tx: Executor, identityId: number): Promise<void> {
    await this.accounts.endCodes(tx, identityId);
  }

  /**
   * Verifies `code` for `email` in `tx`: the identity's latest code must be unused, unexpired, under its attempt limit
   * and equal. On success the code is consumed, the email marked verified, and a pending signup password installed
   * only when `password` is that same password (whoever merely receives the code, perhaps for a signup someone else
   * made with their email, never gets a password they did not choose); on
   * failure the code's attempts go up (the caller counts the failed sign-in, outside `tx`). An unknown email costs the
   * same HMAC work and gives the same answer.
   * @returns the verified identity, or undefined (wrong, used, expired or dead code, unknown email).
   * @throws ApiError 429 `RATE_LIMITED` while the account or the client address is over its failure budget.
   */
  private async verify(
    tx: Executor,
    email: string,
    code: string,
    password: string | undefined,
  ): Promise<IdentityRow | undefined> {
    const normalized = normalizeEmail(email);
    const identity = await this.accounts.identityByEmail(normalized, tx);
    const presented = this.hashOf(identity?.id ?? 0, code);
    // The same lookup for an unknown email (identity 0 has no codes): the answer's timing does not tell them apart.
    const [row] = await tx
      .select()
      .from(magicCodes)
      .where(eq(magicCodes.identityId, identity?.id ?? 0))
      .orderBy(desc(magicCodes.id))
      .limit(1)
      .for('update');
    const now = this.clock.nowMs();
    if (
      !identity ||
      !row ||
      row.consumedAt ||
      row.expiresAt.getTime() <= now ||
      row.attempts >= CODE_MAX_ATTEMPTS
    )
      return undefined;
    if (!constantTimeEqual(presented, row.codeHash)) {
      await tx
        .update(magicCodes)
        .set({ attempts: row.attempts + 1 })
        .where(eq(magicCodes.id, row.id));
      return undefined;
    }
    await tx.update(magicCodes).set({ consumedAt: this.clock.now() }).where(eq(magicCodes.id, row.id));
    await this.accounts.markVerified(tx, identity.id);
    if (
      row.pendingPasswordHash !== null &&
      password !== undefined &&
      (await verifyPassword(password, row.pendingPasswordHash))
    )
      await tx
        .update(identities)
        .set({ passwordHash: row.pendingPasswordHash, passwordChangedAt: this.clock.now() })
        .where(eq(identities.id, identity.id));
    const [fresh] = await tx.select().from(identities).where(eq(identities.id, identity.id));
    return fresh;
  }

  /** Deletes codes that expired more than a day ago (housekeeping). @returns how many. */
  async prune(): Promise<number> {
    const deleted = await this.db
      .delete(magicCodes)
      .where(lt(magicCodes.expiresAt, new Date(this.clock.nowMs() - 86_400_000)))
      .returning({ id: magicCodes.id });
    return deleted.length;
  }

  /**
   * `POST /auth/verify-code`: {@link verify} under the sign-in throttle (per account, per client address). A failure
   * is counted after its transaction commits the attempt.
   * @param finish what a success leads to, in the verification's transaction (a session or a signup token).
   * @returns `finish`'s answer, or undefined for a failed verification.
   * @throws ApiError 429 while throttled; whatever `finish` throws (the verification is then undone).
   */
  async verifyAndFinish<T>(
    email: string,
    code: string,
    password: string | undefined,
    clientAddress: string,
    finish: (tx: Executor, identity: IdentityRow) => Promise<T>,
  ): Promise<T | undefined> {
    const buckets = signInBuckets(normalizeEmail(email), clientAddress);
    // Counted as a failure before the code is checked, so concurrent attempts cannot pass together.
    await this.accounts.throttle.reserve(buckets, THROTTLED_MESSAGE);
    const result = await this.db.transaction(async (tx) => {
      const identity = await this.verify(tx, email, code, password);
      return identity ? { done: await finish(tx, identity) } : undefined;
    });
    if (result === undefined) return undefined;
    await this.accounts.throttle.release(buckets);
    return result.done;
  }
}
