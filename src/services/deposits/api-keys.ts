import type { Executor } from '../../platform/database.ts';
import type { ServiceContext } from '../../platform/service.ts';
import { apiKeys } from './db/schema.ts';

/** The header that carries a deposit-service key (the spec leaves it to us). */
export const API_KEY_HEADER = 'x-api-key';
export const KEY_PREFIX = 'dpk_';

/** A caller that sent a valid key. */
export interface KeyPrincipal {
  keyId: number;
  /** API versions the key is enabled for (`v1`, `v2`). */
  versions: string[];
  /** Requests per minute for this key; null: the service's default for keys. */
  rateLimitPerMinute: number | null;
}

/** The deposits-specific fields of a key in operator records. */
export interface KeyAttributes {
  versions: string[];
  rateLimitPerMinute: number | null;
}

/**
 * Optional API keys of the deposit service, on the platform credential kit (SHA-256 at rest, shown once, lookups
 * cached per instance, revocations effective on every instance at once). No key is needed, but a supplied key must
 * be known, not revoked and enabled for the API version called.
 */
export function createKeyStore(ctx: ServiceContext) {
  return ctx.credentialStore<typeof apiKeys, KeyPrincipal, KeyAttributes>({
    table: apiKeys,
    prefixes: [KEY_PREFIX],
    principal: (row) => ({
      keyId: row.id,
      versions: row.versions,
      rateLimitPerMinute: row.rateLimitPerMinute,
    }),
    attributes: (row) => ({ versions: row.versions, rateLimitPerMinute: row.rateLimitPerMinute }),
  });
}

/** The key store of the deposits service. */
export type KeyStore = ReturnType<typeof createKeyStore>;

/** Issues a key (plaintext in the answer once). `versions` default `['v1']`. */
export function issueKey(
  keys: KeyStore,
  executor: Executor,
  input: { label?: string | null; versions?: string[]; rateLimitPerMinute?: number | null },
) {
  return keys.issue(executor, {
    label: input.label,
    values: { versions: input.versions ?? ['v1'], rateLimitPerMinute: input.rateLimitPerMinute ?? null },
  });
}
