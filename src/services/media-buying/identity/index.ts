/**
 * The built-in identity provider: passwords, identities, users, sessions and sign-in. Other folders use this module
 * through this file only.
 */
export { Accounts, normalizeEmail, type SignInOutcome } from './accounts.ts';
export { passwordProblem } from './passwords.ts';
