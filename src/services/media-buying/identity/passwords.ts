/**
 * The password policy of the built-in identity provider (spec "Authentication", rule 5; "Limits": at least 10
 * characters on signup and reset).
 *
 * - At least {@link MIN_PASSWORD_LENGTH} characters (code points), at most {@link MAX_PASSWORD_LENGTH}.
 * - Strong by zxcvbn's estimate (`@zxcvbn-ts/core` with the common and English dictionaries): score 3 or more
 *   ("safely unguessable: moderate protection from offline slow-hash scenario"), judged with the email and name as
 *   user inputs (a password made of one's own email is weak).
 * - Not in a known breach: the "passwords-common" list shipped with `@zxcvbn-ts/language-common` (about 49,000
 *   passwords seen in breaches), compared case-insensitively, offline (no network at run time).
 * - No character-class rules (NIST SP 800-63B section 3.1.1.2). The same policy applies on signup and reset.
 *
 * Hashes are the platform's argon2id (`src/platform/passwords.ts`).
 */
import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import * as zxcvbnCommon from '@zxcvbn-ts/language-common';
import * as zxcvbnEn from '@zxcvbn-ts/language-en';

/** Shortest accepted password, in code points. */
export const MIN_PASSWORD_LENGTH = 10;
/** Longest accepted password, in code points (argon2 takes any length; this bounds the work per attempt). */
export const MAX_PASSWORD_LENGTH = 256;
/** Lowest accepted zxcvbn score (0-4). */
export const MIN_PASSWORD_SCORE = 3;

const breached = new Set(
  (zxcvbnCommon.dictionary['passwords-common'] as string[]).map((p) => p.toLowerCase()),
);

const estimator = new ZxcvbnFactory({
  translations: zxcvbnEn.translations,
  graphs: zxcvbnCommon.adjacencyGraphs,
  dictionary: { ...zxcvbnCommon.dictionary, ...zxcvbnEn.dictionary },
  useLevenshteinDistance: true,
});

/** Why a password is refused, safe to show. */
export interface PasswordProblem {
  reason: 'too_short' | 'too_long' | 'breached' | 'weak';
  message: string;
}

/**
 * Checks a new password against the policy (module comment).
 * @param userInputs the account's email and name: a password built from them is weak.
 * @returns the first problem, or undefined when the password is acceptable.
 */
export function passwordProblem(
  password: string,
  userInputs: readonly string[] = [],
): PasswordProblem | undefined {
  const length = [...password].length;
  if (length < MIN_PASSWORD_LENGTH)
    return { reason: 'too_short', message: `must be at least ${MIN_PASSWORD_LENGTH} characters` };
  if (length > MAX_PASSWORD_LENGTH)
    return { reason: 'too_long', message: `must be at most ${MAX_PASSWORD_LENGTH} characters` };
  if (breached.has(password.toLowerCase()))
    return { reason: 'breached', message: 'appears in a list of breached passwords; choose another' };
  const inputs = userInputs
    .flatMap((input) => [input, ...input.split(/[@.\s_-]+/)])
    .filter((s) => s.length > 2);
  const result = estimator.check(password, inputs);
  if (result.score < MIN_PASSWORD_SCORE) {
    const hint = result.feedback.warning || result.feedback.suggestions[0];
    return {
      reason: 'weak',
      message: `is too easy to guess${hint ? ` (${hint.replace(/\.$/, '').toLowerCase()})` : ''}; a few uncommon words make a strong password`,
    };
  }
  return undefined;
}
