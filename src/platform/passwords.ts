/**
 * Password hashing of every service (docs/architecture.md, "Secrets"): argon2id with `@node-rs/argon2`, OWASP's
 * recommended minimum (m = 19,456 KiB, t = 2, p = 1; 16-byte salt, 32-byte output), in the PHC string format
 * (`$argon2id$v=19$m=19456,t=2,p=1$...`). At most {@link ARGON2_CONCURRENCY} hashes run at once per process: each
 * holds 19 MiB while it runs, so a burst of sign-ins waits in line instead of taking memory without bound. A password
 * checked against no stored hash (an unknown user) costs the same work as one checked against a real hash, so the
 * answer's timing never tells whether an account exists.
 */
import { hash, verify } from '@node-rs/argon2';
import pLimit from 'p-limit';

/** argon2id parameters (OWASP Password Storage Cheat Sheet, "Argon2id": m=19456 KiB, t=2, p=1). */
export const ARGON2_PARAMETERS = {
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
  outputLen: 32,
  // Algorithm.Argon2id: the package's enum is a `const enum`, which an isolated-module build cannot read.
  algorithm: 2,
} as const;

/** argon2 operations run at once per process (module comment). */
export const ARGON2_CONCURRENCY = 4;
const argon2Slots = pLimit(ARGON2_CONCURRENCY);

/** The argon2id PHC string of `password` (module comment for the parameters). */
export function hashPassword(password: string): Promise<string> {
  return argon2Slots(() => hash(password, ARGON2_PARAMETERS));
}

let decoyHash: Promise<string> | undefined;

/**
 * Verifies `password` against a stored argon2id hash; with `stored` null (no account, or an account without a
 * password) it verifies against a decoy hash and answers false, in the same time. Never throws for a malformed hash
 * (false).
 */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  decoyHash ??= hashPassword('decoy password that matches nothing');
  const decoy = await decoyHash;
  return argon2Slots(async () => {
    try {
      return (await verify(stored ?? decoy, password)) && stored !== null;
    } catch {
      return false;
    }
  });
}
