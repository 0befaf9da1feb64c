/**
 * The anonymous requests of the identity provider that send mail: signup (`POST /auth/signup`), sign-in codes
 * (`POST /auth/magic-code`) and password resets (`POST /auth/password-reset`). Each answers the same generic message
 * whatever the account's state, and the work done in the request does not depend on it either (spec "Errors": the
 * magic-code call never reveals account existence, by its answer or its timing): the request checks what it was sent,
 * spends the mail budget of the email and the client address (`throttle.ts`), and enqueues one job; the job, in the
 * background, decides what to send.
 *
 * | request        | the job, when the email has an identity                        | when it has none              |
 * | -------------- | --------------------------------------------------------------- | ----------------------------- |
 * | signup         | unverified, no account: a verification code (carrying the new   | an unverified identity and a  |
 * |                | password); verified or with an account: "you have an account"   | verification code             |
 * | sign-in code   | a sign-in code (none for a disabled user)                       | nothing                       |
 * | password reset | a reset link (none for a disabled user)                         | nothing                       |
 *
 * A signup's password is checked against the policy and hashed (argon2id) in the request, whatever the email; the
 * hash travels to the job sealed (AES-256-GCM) and is installed only when the mailed code proves the address.
 */
import { Type } from '@sinclair/typebox';
import { eq } from 'drizzle-orm';
import type { Clock } from '../../../platform/clock.ts';
import type { SecretBox } from '../../../platform/crypto.ts';
import type { Db } from '../../../platform/database.ts';
import { prefixedHexId } from '../../../platform/ids.ts';
import { defineTask } from '../../../platform/jobs.ts';
import { hashPassword } from '../../../platform/passwords.ts';
import { identities } from '../db/schema.ts';
import type { Mailer } from '../mail/index.ts';
import { semanticValidation } from '../media-buying-errors.ts';
import { type Accounts, normalizeEmail } from './accounts.ts';
import { CODE_SECONDS, type SignInCodes } from './codes.ts';
import { type PasswordResets, RESET_SECONDS } from './password-resets.ts';
import { passwordProblem } from './passwords.ts';
import { mailBuckets } from './throttle.ts';

/** The one answer of every mail-sending request, whatever the account's state. */
export const GENERIC_MESSAGES = {
  signup:
    'Check your inbox: we sent a message to this address with the next step. Nothing happens until it is used.',
  magicCode: 'If an account exists for this email, we sent a sign-in code to it. It expires in 10 minutes.',
  passwordReset:
    'If an account exists for this email, we sent a password-reset link to it. It expires in 30 minutes.',
} as const;

const MAIL_LIMITED = 'Too many messages were asked for this email or from this address; try again later.';
const SEALED_HASH_AAD = 'media-buying:signup-password';

const Email = Type.String({ minLength: 3, maxLength: 254 });

/** Makes or updates the identity of a signup and mails its verification (or "you have an account"). */
export const registerIdentityTask = defineTask(
  'media-buying:register-identity',
  Type.Object({ email: Email, name: Type.String({ maxLength: 200 }), passwordHashSealed: Type.String() }),
  async (payload, deps: { identityMail: IdentityMail }) => deps.identityMail.register(payload),
);

/** Mails a sign-in code when the email has an identity. */
export const sendSignInCodeTask = defineTask(
  'media-buying:send-sign-in-code',
  Type.Object({ email: Email }),
  async ({ email }, deps: { identityMail: IdentityMail }) => deps.identityMail.sendSignInCode(email),
);

/** Mails a password-reset link when the email has an identity. */
export const sendPasswordResetTask = defineTask(
  'media-buying:send-password-reset',
  Type.Object({ email: Email }),
  async ({ email }, deps: { identityMail: IdentityMail }) => deps.identityMail.sendPasswordReset(email),
);

/** The pages of the UI the mails link to. */
export interface UiLinks {
  /** The sign-in page. */
  signIn: string;
  /** The page that asks for a password-reset link. */
  forgotPassword: string;
  /** The page that sets a new password; the token follows in the fragment (`#token=mbp_...`). */
  resetPassword: string;
}

/** The mail-sending requests and their jobs; see the module comment. */
export class IdentityMail {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly secrets: SecretBox,
    private readonly accounts: Accounts,
    private readonly codes: SignInCodes,
    private readonly resets: PasswordResets,
    private readonly mailer: Mailer,
    /** The links (read per mail: the UI origin may follow the service's public URL). */
    private readonly links: () => UiLinks,
  ) {}

  /**
   * `POST /auth/signup`: checks the password against the policy, spends the mail budget, hashes the password and
   * enqueues {@link registerIdentityTask}.
   * @throws ApiError 422 `VALIDATION_ERROR` for a password the policy refuses, 429 over the mail budget.
   */
  async requestSignup(input: { email: string; name: string; password: string }, clientAddress: string) {
    const email = normalizeEmail(input.email);
    const problem = passwordProblem(input.password, [email, input.name]);
    if (problem)
      throw semanticValidation([{ location: 'body', field: 'password', message: problem.message }]);
    await this.accounts.throttle.spend(mailBuckets(email, clientAddress), MAIL_LIMITED);
    const passwordHashSealed = this.secrets.encrypt(await hashPassword(input.password), SEALED_HASH_AAD);
    await registerIdentityTask.enqueue(this.db, { email, name: input.name.trim(), passwordHashSealed });
  }

  /**
   * `POST /auth/magic-code`: spends the mail budget and enqueues {@link sendSignInCodeTask}, whatever the account.
   * @throws ApiError 429 over the mail budget of the email or the client address.
   */
  async requestSignInCode(email: string, clientAddress: string): Promise<void> {
    const normalized = normalizeEmail(email);
    await this.accounts.throttle.spend(mailBuckets(normalized, clientAddress), MAIL_LIMITED);
    await sendSignInCodeTask.enqueue(this.db, { email: normalized });
  }

  /**
   * `POST /auth/password-reset`: spends the mail budget and enqueues {@link sendPasswordResetTask}, whatever the
   * account.
   * @throws ApiError 429 over the mail budget of the email or the client address.
   */
  async requestPasswordReset(email: string, clientAddress: string): Promise<void> {
    const normalized = normalizeEmail(email);
    await this.accounts.throttle.spend(mailBuckets(normalized, clientAddress), MAIL_LIMITED);
    await sendPasswordResetTask.enqueue(this.db, { email: normalized });
  }

  /** The job of a signup (module comment), in one transaction. */
  async register(payload: { email: string; name: string; passwordHashSealed: string }): Promise<void> {
    const passwordHash = this.secrets.decrypt(payload.passwordHashSealed, SEALED_HASH_AAD);
    await this.db.transaction(async (tx) => {
      const now = this.clock.now();
      await tx
        .insert(identities)
        .values({
          subject: prefixedHexId('sub'),
          email: payload.email,
          name: payload.name || null,
          createdAt: now,
        })
        .onConflictDoNothing({ target: identities.email });
      const [identity] = await tx
        .select()
        .from(identities)
        .where(eq(identities.email, payload.email))
        .for('update');
      const user = await this.accounts.userOfIdentity(identity!.id, tx);
      if (identity!.emailVerifiedAt || user) {
        await this.mailer.queue(tx, {
          to: payload.email,
          kind: 'signup_existing',
          subject: 'You already have an account',
          text:
            'Someone, maybe you, tried to sign up with this email address, which already has an account.\n\n' +
            `Sign in: ${this.links().signIn}\n` +
            `Forgot your password? Ask for a reset link: ${this.links().forgotPassword}\n\n` +
            'If it was not you, ignore this message: nothing was changed.',
        });
        return;
      }
      const code = await this.codes.issue(tx, identity!.id, passwordHash);
      await this.mailer.queue(tx, {
        to: payload.email,
        kind: 'signup_verification',
        subject: 'Your verification code',
        text:
          `Enter ${code} to verify your email address and finish signing up. ` +
          `The code expires in ${CODE_SECONDS / 60} minutes and works once.\n\n` +
          'If you did not sign up, ignore this message: nothing happens without the code.',
      });
    });
  }

  /** The job of a sign-in code request (module comment). */
  async sendSignInCode(email: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const identity = await this.accounts.identityByEmail(email, tx);
      if (!identity) return;
      const user = await this.accounts.userOfIdentity(identity.id, tx);
      if (user?.disabledAt) return;
      const code = await this.codes.issue(tx, identity.id);
      await this.mailer.queue(tx, {
        to: identity.email,
        kind: 'magic_code',
        subject: 'Your sign-in code',
        text:
          `Your sign-in code is ${code}. It expires in ${CODE_SECONDS / 60} minutes and works once.\n\n` +
          'If you did not ask for it, ignore this message: nobody can sign in without the code.',
      });
    });
  }

  /** The job of a password-reset request (module comment). */
  async sendPasswordReset(email: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const identity = await this.accounts.identityByEmail(email, tx);
      if (!identity) return;
      const user = await this.accounts.userOfIdentity(identity.id, tx);
      if (user?.disabledAt) return;
      const token = await this.resets.issue(tx, identity.id);
      await this.mailer.queue(tx, {
        to: identity.email,
        kind: 'password_reset',
        subject: 'Reset your password',
        text:
          `Choose a new password here (the link works once, for ${RESET_SECONDS / 60} minutes):\n` +
          `${this.links().resetPassword}#token=${token}\n\n` +
          'If you did not ask for it, ignore this message: your password stays as it is.',
      });
    });
  }
}
