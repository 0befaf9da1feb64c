import { eq } from 'drizzle-orm';
import type { Db, Executor } from '../../platform/database.ts';
import { ApiError } from '../../platform/errors.ts';
import { prefixedHexId } from '../../platform/ids.ts';
import type { ServiceContext } from '../../platform/service.ts';
import { apiKeys, partners, tenants } from './db/schema.ts';

/** Header carrying the management API key (the anchor's `api_key`). */
export const API_KEY_HEADER = 'api_key';
export const KEY_PREFIX = 'eek_';

/** The caller resolved from its key: never taken from the request body or query. */
export interface TenantPrincipal {
  tenantId: string;
  partnerId: string;
  keyId: number;
}

/** The entity-events fields of a key in operator records. */
export interface KeyAttributes {
  tenantId: string;
}

/**
 * The tenants' API keys (spec 002 section G: "The tenant is resolved from the caller's API key"), on the platform
 * credential kit: SHA-256 at rest, shown once, lookups cached per instance, revocations effective on every instance.
 */
export function createKeyStore(ctx: ServiceContext) {
  return ctx.credentialStore<typeof apiKeys, TenantPrincipal, KeyAttributes>({
    table: apiKeys,
    prefixes: [KEY_PREFIX],
    principal: async (row, db) => ({
      tenantId: row.tenantId,
      partnerId: await partnerOf(db, row.tenantId),
      keyId: row.id,
    }),
    attributes: (row) => ({ tenantId: row.tenantId }),
  });
}

/** The key store of the entity-events service. */
export type KeyStore = ReturnType<typeof createKeyStore>;

/** The partner of a key's tenant (it exists: foreign keys, so this read cannot miss). */
async function partnerOf(db: Db, tenantId: string): Promise<string> {
  const [tenant] = await db
    .select({ partnerId: tenants.partnerId })
    .from(tenants)
    .where(eq(tenants.id, tenantId));
  return tenant!.partnerId;
}

/** Issues a key for `tenantId` (plaintext in the answer once). @throws ApiError 404 `tenant_not_found`. */
export async function issueKey(
  keys: KeyStore,
  executor: Executor,
  input: { tenantId: string; label?: string | null },
) {
  const [tenant] = await executor.select().from(tenants).where(eq(tenants.id, input.tenantId));
  if (!tenant) throw new ApiError(404, 'tenant_not_found', `No tenant ${input.tenantId}.`);
  return keys.issue(executor, { label: input.label, values: { tenantId: input.tenantId } });
}

/**
 * Creates a tenant (and a new partner unless `partnerId` names an existing one) with a first API key, inside
 * `executor`'s transaction.
 * @throws ApiError 404 `partner_not_found`.
 */
export async function createTenant(
  keys: KeyStore,
  executor: Executor,
  input: { name: string; partnerId?: string; partnerName?: string },
  now: Date,
): Promise<{ tenant_id: string; partner_id: string; api_key: string; key_id: number }> {
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
  const key = await issueKey(keys, executor, { tenantId, label: 'first key' });
  return { tenant_id: tenantId, partner_id: partnerId, api_key: key.key, key_id: key.row.id };
}
