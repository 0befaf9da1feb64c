import { desc, eq } from 'drizzle-orm';
import { revokeApiKey } from '../../platform/api-keys.ts';
import type { Clock } from '../../platform/clock.ts';
import { hashApiKey, issueApiKey } from '../../platform/crypto.ts';
import type { Db, Executor } from '../../platform/database.ts';
import { ApiError } from '../../platform/errors.ts';
import { prefixedHexId } from '../../platform/ids.ts';
import { KeyCache } from '../../platform/key-cache.ts';
import type { Notifier } from '../../platform/notifications.ts';
import { apiKeys, partners, tenants } from './db/schema.ts';
import { unauthenticated } from './entity-events-errors.ts';

/** Header carrying the management API key (NOTES.md anchor: `api_key`). */
export const API_KEY_HEADER = 'api_key';
export const KEY_PREFIX = 'eek_';

/** The caller resolved from its key: never taken from the request body or query. */
export interface TenantPrincipal {
  tenantId: string;
  partnerId: string;
  keyId: number;
}

/** A key as the operator lists it (never the key itself). */
export interface KeyRecord {
  id: number;
  tenant_id: string;
  hint: string;
  label: string | null;
  created_at: string;
  revoked_at: string | null;
}

/**
 * Tenants, partners and their API keys (spec 002 section G "The tenant is resolved from the caller's API key").
 * Keys are stored as SHA-256; lookups are cached per instance ({@link KeyCache}) and revocations broadcast by NOTIFY.
 */
export class TenantDirectory {
  private readonly cache: KeyCache<TenantPrincipal | null>;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {
    this.cache = new KeyCache<TenantPrincipal | null>('entity_events_api_key_revoked', clock);
  }

  listenForRevocations(notifier: Notifier) {
    return this.cache.listen(notifier);
  }

  /**
   * Creates a tenant (and a new partner unless `partnerId` names an existing one) with a first API key.
   * @throws ApiError 404 `partner_not_found`.
   */
  async createTenant(
    input: { name: string; partnerId?: string; partnerName?: string },
    executor: Executor = this.db,
  ): Promise<{ tenant_id: string; partner_id: string; api_key: string; key_id: number }> {
    const now = this.clock.now();
    let partnerId = input.partnerId;
    if (partnerId) {
      const [p] = await executor.select().from(partners).where(eq(partners.id, partnerId));
      if (!p) throw new ApiError(404, 'partner_not_found', `No partner ${partnerId}.`);
    } else {
      partnerId = prefixedHexId('pt');
      await executor
        .insert(partners)
        .values({ id: partnerId, name: input.partnerName ?? `${input.name} partner`, createdAt: now });
    }
    const tenantId = prefixedHexId('tn');
    await executor.insert(tenants).values({ id: tenantId, partnerId, name: input.name, createdAt: now });
    const key = await this.issueKey(tenantId, 'first key', executor);
    return { tenant_id: tenantId, partner_id: partnerId, api_key: key.key, key_id: key.id };
  }

  /** Issues a key for `tenantId` (plaintext returned once). @throws ApiError 404 `tenant_not_found`. */
  async issueKey(
    tenantId: string,
    label: string | null,
    executor: Executor = this.db,
  ): Promise<KeyRecord & { key: string }> {
    const [t] = await executor.select().from(tenants).where(eq(tenants.id, tenantId));
    if (!t) throw new ApiError(404, 'tenant_not_found', `No tenant ${tenantId}.`);
    const issued = issueApiKey(KEY_PREFIX);
    const [row] = await executor
      .insert(apiKeys)
      .values({ tenantId, keyHash: issued.hash, hint: issued.hint, label, createdAt: this.clock.now() })
      .returning();
    return { ...toRecord(row!), key: issued.plaintext };
  }

  /** Revokes a key on every instance. @throws ApiError 404 `key_not_found`. */
  async revokeKey(id: number): Promise<KeyRecord> {
    const revoked = await revokeApiKey(this.db, apiKeys, id, { now: this.clock.now(), cache: this.cache });
    if (!revoked) throw new ApiError(404, 'key_not_found', `No API key ${id}.`);
    return toRecord(revoked.row);
  }

  async listKeys(): Promise<KeyRecord[]> {
    return (await this.db.select().from(apiKeys).orderBy(desc(apiKeys.id))).map(toRecord);
  }

  /**
   * Resolves the `api_key` header to its tenant.
   * @throws ApiError 401 `unauthenticated` when missing, unknown or revoked.
   */
  async authenticate(key: string | undefined): Promise<TenantPrincipal> {
    if (!key) throw unauthenticated();
    const found = await this.cache.get(hashApiKey(key), async (hash) => {
      const [row] = await this.db
        .select({
          id: apiKeys.id,
          tenantId: apiKeys.tenantId,
          revokedAt: apiKeys.revokedAt,
          partnerId: tenants.partnerId,
        })
        .from(apiKeys)
        .innerJoin(tenants, eq(tenants.id, apiKeys.tenantId))
        .where(eq(apiKeys.keyHash, hash))
        .limit(1);
      if (!row || row.revokedAt) return null;
      return { tenantId: row.tenantId, partnerId: row.partnerId, keyId: row.id };
    });
    if (!found) throw unauthenticated();
    return found;
  }
}

function toRecord(row: typeof apiKeys.$inferSelect): KeyRecord {
  return {
    id: row.id,
    tenant_id: row.tenantId,
    hint: row.hint,
    label: row.label,
    created_at: row.createdAt.toISOString(),
    revoked_at: row.revokedAt ? row.revokedAt.toISOString() : null,
  };
}
