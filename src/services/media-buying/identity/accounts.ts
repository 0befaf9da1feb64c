/**
 * The built-in identity provider's accounts and browser sessions: identities (email, argon2id password, verified
 * email), platform users made from them, password sign-in with its throttle (per account and per client address),
 * sessions (cookie secrets on the credential kit), signup-recovery tokens of an interrupted signup, and the
 * platform-wide security sign-out.
 */
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Clock } from '../../../platform/clock.ts';
import { hashApiKey, issueApiKey } from '../../../platform/crypto.ts';
import type { Db, Executor } from '../../../platform/database.ts';
import { prefixedHexId } from '../../../platform/ids.ts';
import { hashPassword, verifyPassword } from '../../../platform/passwords.ts';
import { type CredentialStores, PREFIX } from '../credentials/index.ts';
import {
  identities,
  magicCodes,
  mcpAccessTokens,
  mcpGrants,
  mcpRefreshTokens,
  type SIGN_IN_METHODS,
  sessions,
  signupRecoveryTokens,
  users,
  widgetTokens,
} from '../db/schema.ts';
import { invalidSignIn } from '../media-buying-errors.ts';
import { signInBuckets, Throttle } from './throttle.ts';

/** How a session was opened. */
export type SignInMethod = (typeof SIGN_IN_METHODS)[number];

/** Lifetime of a signup-recovery token (spec "Limits": ten minutes). */
export const SIGNUP_RECOVERY_SECONDS = 10 * 60;

type IdentityRow = typeof identities.$inferSelect;
type UserRow = typeof users.$inferSelect;

/** What a successful authentication of an identity leads to. */
export type SignInOutcome =
  | { kind: 'user'; user: UserRow; identity: IdentityRow }
  /** A verified identity without a platform account: an interrupted signup (`{requiresSignup, redirectUrl}`). */
  | { kind: 'requires_signup'; identity: IdentityRow; recoveryToken: string };

/** Lower-cases and trims an email (addresses are compared case-insensitively). */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** The answer of a refused sign-in (too many failures). */
export const THROTTLED_MESSAGE = 'Too many failed sign-in attempts; try again later or reset your password.';

/** Identities, users, sessions and sign-in; see the module comment. */
export class Accounts {
  /** The sign-in and mail counters (`throttle.ts`). */
  readonly throttle: Throttle;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly stores: CredentialStores,
    private readonly sessionSeconds: number,
  ) {
    this.throttle = new Throttle(db, clock);
  }

  /** The identity of an email (case-insensitive), if any. */
  async identityByEmail(email: string, executor: Executor = this.db): Promise<IdentityRow | undefined> {
    const [row] = await executor
      .select()
      .from(identities)
      .where(eq(identities.email, normalizeEmail(email)))
      .limit(1);
    return row;
  }

  /** The user of an identity, if any. */
  async userOfIdentity(identityId: number, executor: Executor = this.db): Promise<UserRow | undefined> {
    const [row] = await executor.select().from(users).where(eq(users.identityId, identityId)).limit(1);
    return row;
  }

  /** A user by public id. */
  async userByPublicId(publicId: string, executor: Executor = this.db): Promise<UserRow | undefined> {
    const [row] = await executor.select().from(users).where(eq(users.publicId, publicId)).limit(1);
    return row;
  }

  /**
   * Creates an identity (the password already checked against the policy by the caller).
   * @param verified true when the email is proven (an invitation link, an SSO assertion, the operator).
   */
  async createIdentity(
    tx: Executor,
    input: { email: string; name: string | null; password: string | null; verified: boolean },
  ): Promise<IdentityRow> {
    const now = this.clock.now();
    const [row] = await tx
      .insert(identities)
      .values({
        subject: prefixedHexId('sub'),
        email: normalizeEmail(input.email),
        name: input.name,
        emailVerifiedAt: input.verified ? now : null,
        passwordHash: input.password === null ? null : await hashPassword(input.password),
        passwordChangedAt: input.password === null ? null : now,
        createdAt: now,
      })
      .returning();
    return row!;
  }

  /**
   * The verified identity of `email` (an identity provider vouched for it): the existing one, marked verified, or a
   * new one without a password. Two concurrent first sign-ins with one email make one identity.
   */
  async verifiedIdentity(tx: Executor, input: { email: string; name: string | null }): Promise<IdentityRow> {
    const email = normalizeEmail(input.email);
    const now = this.clock.now();
    await tx
      .insert(identities)
      .values({
        subject: prefixedHexId('sub'),
        email,
        name: input.name,
        emailVerifiedAt: now,
        passwordHash: null,
        passwordChangedAt: null,
        createdAt: now,
      })
      .onConflictDoNothing({ target: identities.email });
    const [row] = await tx.select().from(identities).where(eq(identities.email, email)).for('update');
    if (!row!.emailVerifiedAt) {
      // Codes mailed before (a signup's, with the password someone chose) die with it: see markVerified.
      await this.markVerified(tx, row!.id);
      return { ...row!, emailVerifiedAt: now };
    }
    return row!;
  }

  /**
   * Sets an identity's password (the caller checked the policy). Every unused code of the identity ends: a code mailed
   * before may carry another pending password, which must never replace this one.
   */
  async setPassword(tx: Executor, identityId: number, password: string): Promise<void> {
    await tx
      .update(identities)
      .set({ passwordHash: await hashPassword(password), passwordChangedAt: this.clock.now() })
      .where(eq(identities.id, identityId));
    await this.endCodes(tx, identityId);
  }

  /**
   * Marks an identity's email verified (once), proven by something other than its code (an invitation link, SSO, the
   * operator): every unused code ends, with any pending signup password someone else chose.
   */
  async markVerified(tx: Executor, identityId: number): Promise<void> {
    await tx
      .update(identities)
      .set({ emailVerifiedAt: this.clock.now() })
      .where(and(eq(identities.id, identityId), isNull(identities.emailVerifiedAt)));
    await this.endCodes(tx, identityId);
  }

  /** Ends every unused sign-in or verification code of an identity. */
  async endCodes(tx: Executor, identityId: number): Promise<void> {
    await tx
      .update(magicCodes)
      .set({ consumedAt: this.clock.now() })
      .where(and(eq(magicCodes.identityId, identityId), isNull(magicCodes.consumedAt)));
  }

  /**
   * Serializes the transactions that create an identity or an account for `email` (two invitations accepted at once for
   * one new address, a signup racing an acceptance): the second waits, then sees the first's identity.
   */
  async lockEmail(tx: Executor, email: string): Promise<void> {
    await tx.execute(
      sql`select pg_advisory_xact_lock(hashtext(${`media-buying:email:${normalizeEmail(email)}`}))`,
    );
  }

  /** Creates the platform account of an identity. */
  async createUser(tx: Executor, identity: IdentityRow, name: string): Promise<UserRow> {
    const [row] = await tx
      .insert(users)
      .values({
        publicId: prefixedHexId('usr'),
        identityId: identity.id,
        email: identity.email,
        name,
        createdAt: this.clock.now(),
      })
      .returning();
    return row!;
  }

  /**
   * Checks an email and password under the throttle (refused while the account or the client address is over its
   * failure budget; an unknown email costs the same argon2 work as a known one; the attempt is counted before the
   * check and given back when it succeeds).
   * @returns the identity, `unverified` for a right password of an identity whose email is not proven, or
   *   `undefined` for a wrong email or password.
   * @throws ApiError 429 `RATE_LIMITED` (with `Retry-After`) while throttled.
   */
  async authenticatePassword(
    email: string,
    password: string,
    clientAddress: string,
  ): Promise<IdentityRow | 'unverified' | undefined> {
    const normalized = normalizeEmail(email);
    const buckets = signInBuckets(normalized, clientAddress);
    // Counted as a failure before the password is checked, so concurrent attempts cannot pass together.
    await this.throttle.reserve(buckets, THROTTLED_MESSAGE);
    const identity = await this.identityByEmail(normalized);
    const ok = await verifyPassword(password, identity?.passwordHash ?? null);
    if (!identity || !ok) return undefined;
    await this.throttle.release(buckets);
    if (!identity.emailVerifiedAt) return 'unverified';
    return identity;
  }

  /**
   * Password sign-in (`POST /auth/password`): {@link authenticatePassword}, then {@link outcomeOf}.
   * @returns the outcome, `unverified`, or `undefined` for a wrong email or password (counted as a failure).
   * @throws ApiError 429 `RATE_LIMITED` (with `Retry-After`) while throttled.
   */
  async signInWithPassword(
    email: string,
    password: string,
    clientAddress: string,
  ): Promise<SignInOutcome | 'unverified' | undefined> {
    const identity = await this.authenticatePassword(email, password, clientAddress);
    if (identity === undefined || identity === 'unverified') return identity;
    return this.outcomeOf(identity);
  }

  /**
   * What an authenticated, verified identity leads to: its user, or (no platform account yet) a signup-recovery
   * token for the interrupted signup, carrying the sign-in's routing metadata (`signupExperience`, which grants
   * nothing).
   * @param executor the transaction of the sign-in, when it has one (the token exists exactly when it commits).
   */
  async outcomeOf(
    identity: IdentityRow,
    signupExperience: string | null = null,
    executor: Executor = this.db,
  ): Promise<SignInOutcome> {
    const user = await this.userOfIdentity(identity.id, executor);
    if (user) return { kind: 'user', user, identity };
    const recoveryToken = await this.issueSignupRecovery(executor, identity, signupExperience);
    return { kind: 'requires_signup', identity, recoveryToken };
  }

  /**
   * A signup-recovery token (`verifiedSignupToken`): {@link SIGNUP_RECOVERY_SECONDS}, bound to the identity's subject
   * and email, single use (consumed by account creation).
   */
  async issueSignupRecovery(
    executor: Executor,
    identity: IdentityRow,
    signupExperience: string | null,
  ): Promise<string> {
    const issued = issueApiKey(PREFIX.signupRecovery);
    await executor.insert(signupRecoveryTokens).values({
      keyHash: issued.hash,
      hint: issued.hint,
      createdAt: this.clock.now(),
      expiresAt: new Date(this.clock.nowMs() + SIGNUP_RECOVERY_SECONDS * 1000),
      identityId: identity.id,
      subject: identity.subject,
      email: identity.email,
      signupExperience,
    });
    return issued.plaintext;
  }

  /**
   * Reads a signup-recovery token without consuming it, locking it with `lock` (account creation consumes it in the
   * same transaction: two concurrent creations with one token make one account).
   * @returns the token's row when it is unexpired, unconsumed and still bound to its identity's subject and email.
   */
  async signupRecovery(executor: Executor, token: string, lock = false) {
    const query = executor
      .select({ token: signupRecoveryTokens, identity: identities })
      .from(signupRecoveryTokens)
      .innerJoin(identities, eq(identities.id, signupRecoveryTokens.identityId))
      .where(eq(signupRecoveryTokens.keyHash, hashApiKey(token)))
      .limit(1);
    // Locks the token and its identity (drizzle qualifies a `FOR UPDATE OF` table with its schema, which PostgreSQL
    // refuses, so the whole join is locked).
    const [row] = lock ? await query.for('update') : await query;
    if (!row) return undefined;
    const { token: t, identity } = row;
    if (t.consumedAt || t.revokedAt || !t.expiresAt || t.expiresAt.getTime() <= this.clock.nowMs())
      return undefined;
    // The identity changed since (another email, another subject): the recovery is no longer valid.
    if (identity.subject !== t.subject || identity.email !== t.email) return undefined;
    return row;
  }

  /** Marks a signup-recovery token consumed (inside account creation's transaction). */
  async consumeSignupRecovery(tx: Executor, tokenId: number): Promise<void> {
    await tx
      .update(signupRecoveryTokens)
      .set({ consumedAt: this.clock.now() })
      .where(eq(signupRecoveryTokens.id, tokenId));
  }

  /**
   * Opens a browser session for `userId`.
   * @returns the session secret (the cookie's value) and its lifetime in seconds.
   */
  async openSession(
    executor: Executor,
    userId: number,
    method: SignInMethod,
  ): Promise<{ secret: string; maxAgeSeconds: number }> {
    const issued = await this.stores.sessions.issue(executor, {
      expiresAt: new Date(this.clock.nowMs() + this.sessionSeconds * 1000),
      values: { userId, method },
    });
    return { secret: issued.key, maxAgeSeconds: this.sessionSeconds };
  }

  /**
   * Finishes a sign-in in `tx` (password, code, hosted sign-in, SSO, reset): a session for the identity's user, or a
   * signup-recovery token carrying `signupExperience` when it has no platform account yet.
   * @throws ApiError 401 `UNAUTHORIZED` for a disabled user (nothing is written).
   */
  async finishSignIn(
    tx: Executor,
    identity: IdentityRow,
    method: SignInMethod,
    signupExperience: string | null,
  ): Promise<{ outcome: SignInOutcome; session?: { secret: string; maxAgeSeconds: number } }> {
    const outcome = await this.outcomeOf(identity, signupExperience, tx);
    if (outcome.kind === 'requires_signup') return { outcome };
    // A disabled account answers as a wrong password: the answer never tells that the account exists.
    if (outcome.user.disabledAt) throw invalidSignIn();
    return { outcome, session: await this.openSession(tx, outcome.user.id, method) };
  }

  /**
   * Ends every browser session and widget token of a user, on every instance (a password reset: whoever knew the old
   * password is signed out).
   * @returns how many sessions ended.
   */
  async endSessionsOf(tx: Executor, userId: number): Promise<number> {
    const ended = await this.stores.sessions.revokeWhere(eq(sessions.userId, userId), tx);
    await this.stores.widgetTokens.revokeWhere(eq(widgetTokens.userId, userId), tx);
    return ended.length;
  }

  /** Ends a session (sign-out): its cookie stops working on every instance at once. */
  async endSession(sessionId: number): Promise<void> {
    await this.stores.sessions.revoke(sessionId);
  }

  /**
   * The platform-wide security sign-out (operator): every browser session, every widget token (they come from
   * sessions) and every MCP connector connection (its grant, access and refresh credentials; spec rule 2) end at
   * once, on every instance. API keys, organization and legacy keys, M2M applications and buyer-agent credentials
   * are not sessions and stay valid (revoke them one by one).
   * @returns how many of each were ended.
   */
  async securitySignOut(
    tx: Executor,
  ): Promise<{ sessions: number; widgetTokens: number; mcpGrants: number }> {
    const all = sql`true`;
    // The grants first: their row locks serialize with a code exchange or refresh under way (which holds its grant's
    // lock while it issues), so the credentials such a one issued are committed before the updates below, and revoked.
    const grants = await tx
      .update(mcpGrants)
      .set({ revokedAt: this.clock.now() })
      .where(isNull(mcpGrants.revokedAt))
      .returning({ id: mcpGrants.id });
    const endedSessions = await this.stores.sessions.revokeWhere(all, tx);
    const endedWidgets = await this.stores.widgetTokens.revokeWhere(sql`${widgetTokens.id} is not null`, tx);
    await this.stores.mcpAccessTokens.revokeWhere(sql`${mcpAccessTokens.id} is not null`, tx);
    await tx
      .update(mcpRefreshTokens)
      .set({ revokedAt: this.clock.now() })
      .where(isNull(mcpRefreshTokens.revokedAt));
    return { sessions: endedSessions.length, widgetTokens: endedWidgets.length, mcpGrants: grants.length };
  }

  /** Deletes throttle windows that ended (housekeeping, by a cron job). */
  async pruneThrottle(): Promise<number> {
    return this.throttle.prune();
  }
}
