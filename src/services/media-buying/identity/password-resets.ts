/**
 * Password reset by emailed link (spec "Authentication", rule 5: the same policy as signup): a link token (`mbp_` +
 * 43 URL-safe base64 characters, its SHA-256 stored) valid {@link RESET_SECONDS}, single use. Confirming sets the new
 * password (checked against the policy with the account's email and name), proves the email (it is marked verified),
 * ends every other pending link and code of the identity, and ends every session and widget token of its user.
 */
import { and, eq, isNull, lt } from 'drizzle-orm';
import type { Clock } from '../../../platform/clock.ts';
import { hashApiKey, issueApiKey } from '../../../platform/crypto.ts';
import type { Db, Executor } from '../../../platform/database.ts';
import { PREFIX } from '../credentials/index.ts';
import { identities, passwordResets } from '../db/schema.ts';
import { semanticValidation } from '../media-buying-errors.ts';
import type { Accounts } from './accounts.ts';
import type { SignInCodes } from './codes.ts';
import { passwordProblem } from './passwords.ts';

/** Lifetime of a reset link, in seconds (30 minutes). */
export const RESET_SECONDS = 30 * 60;

/** The form of a reset token. */
const TOKEN_PATTERN = /^mbp_[A-Za-z0-9_-]{43}$/;

type IdentityRow = typeof identities.$inferSelect;

/** Password-reset links; see the module comment. */
export class PasswordResets {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly accounts: Accounts,
    private readonly codes: SignInCodes,
  ) {}

  /** Issues a reset link token for `identityId` in `tx`. @returns the token, for the mail only. */
  async issue(tx: Executor, identityId: number): Promise<string> {
    const issued = issueApiKey(PREFIX.passwordReset);
    const now = this.clock.now();
    await tx.insert(passwordResets).values({
      keyHash: issued.hash,
      hint: issued.hint,
      createdAt: now,
      expiresAt: new Date(now.getTime() + RESET_SECONDS * 1000),
      identityId,
    });
    return issued.plaintext;
  }

  /**
   * Sets a new password with a reset token, in `tx` (module comment). Everything is checked before anything is
   * written.
   * @returns the identity, its email now verified and its password changed.
   * @throws ApiError 422 `VALIDATION_ERROR` for an unknown, used or expired token (`token`) or a password the policy
   *   refuses (`password`).
   */
  async confirm(tx: Executor, token: string, password: string): Promise<IdentityRow> {
    const row = TOKEN_PATTERN.test(token)
      ? (
          await tx
            .select({ reset: passwordResets, identity: identities })
            .from(passwordResets)
            .innerJoin(identities, eq(identities.id, passwordResets.identityId))
            .where(eq(passwordResets.keyHash, hashApiKey(token)))
            .limit(1)
            .for('update')
        )[0]
      : undefined;
    const live =
      row &&
      row.reset.consumedAt === null &&
      row.reset.revokedAt === null &&
      row.reset.expiresAt !== null &&
      row.reset.expiresAt.getTime() > this.clock.nowMs();
    if (!row || !live)
      throw semanticValidation([
        {
          location: 'body',
          field: 'token',
          message: 'is unknown, used or expired; ask for a new password-reset link',
        },
      ]);
    const { identity } = row;
    const problem = passwordProblem(password, [identity.email, identity.name ?? '']);
    if (problem)
      throw semanticValidation([{ location: 'body', field: 'password', message: problem.message }]);
    const now = this.clock.now();
    await tx
      .update(passwordResets)
      .set({ consumedAt: now })
      .where(and(eq(passwordResets.identityId, identity.id), isNull(passwordResets.consumedAt)));
    await this.accounts.setPassword(tx, identity.id, password);
    await this.accounts.markVerified(tx, identity.id);
    await this.codes.endAll(tx, identity.id);
    const user = await this.accounts.userOfIdentity(identity.id, tx);
    if (user) await this.accounts.endSessionsOf(tx, user.id);
    const [fresh] = await tx.select().from(identities).where(eq(identities.id, identity.id));
    return fresh!;
  }

  /** Deletes reset links that expired more than a day ago (housekeeping). @returns how many. */
  async prune(): Promise<number> {
    const deleted = await this.db
      .delete(passwordResets)
      .where(lt(passwordResets.expiresAt, new Date(this.clock.nowMs() - 86_400_000)))
      .returning({ id: passwordResets.id });
    return deleted.length;
  }
}
