import { desc, eq } from 'drizzle-orm';
import { revokeApiKey } from '../../platform/api-keys.ts';
import type { Clock } from '../../platform/clock.ts';
import { hashApiKey, issueApiKey } from '../../platform/crypto.ts';
import type { Db, Executor } from '../../platform/database.ts';
import { ApiError } from '../../platform/errors.ts';
import { KeyCache } from '../../platform/key-cache.ts';
import type { Notifier } from '../../platform/notifications.ts';
import { apiKeys } from './db/schema.ts';
import { invalidApiKey } from './deposits-errors.ts';

/** The header that carries a deposit-service key (the spec leaves it to us). */
export const API_KEY_HEADER = 'x-api-key';
export const KEY_PREFIX = 'dpk_';

/** A caller that sent a valid key. */
export interface KeyPrincipal {
  keyId: number;
  rateLimitPerMinute: number | null;
}

/** A key as the operator API lists it (never the key itself). */
export interface KeyRecord {
  id: number;
  hint: string;
  label: string | null;
  versions: string[];
  rateLimitPerMinute: number | null;
  createdAt: string;
  revokedAt: string | null;
}

type Lookup =
  | { keyId: number; versions: string[]; rateLimitPerMinute: number | null }
  | 'revoked'
  | 'unknown';

/**
 * Optional API keys of the deposit service: no key is needed, but a supplied key must be known, not revoked and
 * enabled for the API version called (`v1`), else 401 `invalid-api-key`. Stored as SHA-256; lookups cached per
 * instance with revocations broadcast by NOTIFY ({@link KeyCache}).
 */
export class DepositKeyService {
  private readonly cache: KeyCache<Lookup>;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {
    this.cache = new KeyCache<Lookup>('deposits_api_key_revoked', clock);
  }

  listenForRevocations(notifier: Notifier) {
    return this.cache.listen(notifier);
  }

  /** Issues a key (plaintext returned once). `versions` default `['v1']`. */
  async issue(
    input: { label?: string | null; versions?: string[]; rateLimitPerMinute?: number | null },
    executor: Executor = this.db,
  ): Promise<KeyRecord & { key: string }> {
    const issued = issueApiKey(KEY_PREFIX);
    const [row] = await executor
      .insert(apiKeys)
      .values({
        keyHash: issued.hash,
        hint: issued.hint,
        label: input.label ?? null,
        versions: input.versions ?? ['v1'],
        rateLimitPerMinute: input.rateLimitPerMinute ?? null,
        createdAt: this.clock.now(),
      })
      .returning();
    return { ...toRecord(row!), key: issued.plaintext };
  }

  /** Revokes a key on every instance. @throws ApiError 404 `key_not_found`. */
  async revoke(id: number): Promise<KeyRecord> {
    const revoked = await revokeApiKey(this.db, apiKeys, id, { now: this.clock.now(), cache: this.cache });
    if (!revoked) throw new ApiError(404, 'key_not_found', `No API key with id ${id}.`);
    return toRecord(revoked.row);
  }

  async list(): Promise<KeyRecord[]> {
    return (await this.db.select().from(apiKeys).orderBy(desc(apiKeys.id))).map(toRecord);
  }

  /**
   * Resolves a supplied key for API `version`.
   * @throws ApiError 401 `invalid-api-key` when unknown, revoked or not enabled for `version`.
   */
  async authenticate(key: string, version: string): Promise<KeyPrincipal> {
    const found = await this.cache.get(hashApiKey(key), async (hash) => {
      const [row] = await this.db.select().from(apiKeys).where(eq(apiKeys.keyHash, hash)).limit(1);
      if (!row) return 'unknown';
      if (row.revokedAt) return 'revoked';
      return { keyId: row.id, versions: row.versions, rateLimitPerMinute: row.rateLimitPerMinute };
    });
    if (found === 'unknown' || found === 'revoked' || !found.versions.includes(version))
      throw invalidApiKey();
    return { keyId: found.keyId, rateLimitPerMinute: found.rateLimitPerMinute };
  }
}

function toRecord(row: typeof apiKeys.$inferSelect): KeyRecord {
  return {
    id: row.id,
    hint: row.hint,
    label: row.label,
    versions: row.versions,
    rateLimitPerMinute: row.rateLimitPerMinute,
    createdAt: row.createdAt.toISOString(),
    revokedAt: row.revokedAt ? row.revokedAt.toISOString() : null,
  };
}
