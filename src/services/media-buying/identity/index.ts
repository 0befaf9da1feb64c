/**
 * The built-in identity provider: passwords, identities, users, sessions and sign-in (passwords, codes, the hosted
 * sign-in round trip), signup (verification, the interrupted signup, account creation) and password resets. Other
 * folders use this module through this file only.
 */
import type { Clock } from '../../../platform/clock.ts';
import type { SecretBox } from '../../../platform/crypto.ts';
import type { Db } from '../../../platform/database.ts';
import type { TaskBinding } from '../../../platform/jobs.ts';
import type { AppLogger } from '../../../platform/logger.ts';
import type { Mailer } from '../mail/index.ts';
import type { Organizations } from '../organizations/index.ts';
import type { Accounts } from './accounts.ts';
import { SignInCodes } from './codes.ts';
import { HostedSignIn } from './hosted-sign-in.ts';
import {
  IdentityMail,
  registerIdentityTask,
  sendPasswordResetTask,
  sendSignInCodeTask,
} from './identity-mail.ts';
import { PasswordResets } from './password-resets.ts';
import { SignInStates } from './sign-in-states.ts';
import { Signup } from './signup.ts';

export { Accounts, normalizeEmail, type SignInOutcome } from './accounts.ts';
export { FIRST_PARTY_CLIENT_ID } from './hosted-sign-in.ts';
export { GENERIC_MESSAGES } from './identity-mail.ts';
export { passwordProblem } from './passwords.ts';
export {
  BROWSER_BINDING_COOKIE,
  browserBinding,
  SIGNUP_EXPERIENCES,
  type SignInStates,
  type SignupExperience,
  STATE_SECONDS,
} from './sign-in-states.ts';
export { ACCOUNT_TYPES, PLANS } from './signup.ts';

/** The sign-in and signup flows of the identity provider, made once per instance. */
export interface IdentityFlows {
  codes: SignInCodes;
  resets: PasswordResets;
  states: SignInStates;
  hosted: HostedSignIn;
  signup: Signup;
  mail: IdentityMail;
  /** The jobs of the flows (mail sending), for the service module's `tasks`. */
  tasks: TaskBinding[];
  /** Deletes sign-in states, authorization codes, sign-in codes and reset links expired a day ago (housekeeping). */
  prune(): Promise<void>;
}

/**
 * Builds the flows.
 * @param deps.uiOrigin the UI's origin (read per use): its pages receive the sign-in callbacks and the mailed links.
 * @param deps.publicUrl the service's public URL (read per request).
 */
export function createIdentityFlows(deps: {
  db: Db;
  clock: Clock;
  secrets: SecretBox;
  logger: AppLogger;
  accounts: Accounts;
  organizations: Organizations;
  mailer: Mailer;
  uiOrigin: () => string;
  publicUrl: () => string;
}): IdentityFlows {
  const { db, clock, secrets, accounts } = deps;
  const codes = new SignInCodes(db, clock, secrets, accounts);
  const resets = new PasswordResets(db, clock, accounts, codes);
  const states = new SignInStates(db, clock, secrets, deps.logger);
  const hosted = new HostedSignIn(db, clock, states, accounts, {
    publicUrl: deps.publicUrl,
    redirectUri: () => `${deps.uiOrigin()}/sign-in/callback`,
  });
  const mail = new IdentityMail(db, clock, secrets, accounts, codes, resets, deps.mailer, () => ({
    signIn: `${deps.uiOrigin()}/sign-in`,
    forgotPassword: `${deps.uiOrigin()}/forgot-password`,
    resetPassword: `${deps.uiOrigin()}/reset-password`,
  }));
  return {
    codes,
    resets,
    states,
    hosted,
    signup: new Signup(db, clock, accounts, deps.organizations),
    mail,
    tasks: [
      registerIdentityTask.with({ identityMail: mail }),
      sendSignInCodeTask.with({ identityMail: mail }),
      sendPasswordResetTask.with({ identityMail: mail }),
    ],
    async prune() {
      await states.prune();
      await hosted.prune();
      await codes.prune();
      await resets.prune();
    },
  };
}
