/**
 * Keys and tokens people and organizations hold (spec "Authentication" table; "Credentials and activation"):
 *
 * - user API keys: created from an interactive session with `platform:access` only, bound to the organization active
 *   at creation, shown once then masked, revocable by their user (and by the operator);
 * - organization-owned keys (`key_` ids): from before user keys; an organization administrator lists and revokes
 *   them from an interactive session; none are created any more (the operator imports them);
 * - legacy `lgc_` keys: imported by the operator, accepted until they expire or are revoked; never created, edited
 *   or shown;
 * - widget tokens: short-lived, bound to the user and the active organization;
 * - buyer-agent credentials: an opaque identity of a buyer agent, issued, replaced and revoked by an administrator
 *   signed in directly; they carry no permission.
 */
import { and, asc, eq, inArray, isNull } from 'drizzle-orm';
import type { Clock } from '../../../platform/clock.ts';
import { hashApiKey } from '../../../platform/crypto.ts';
import type { Db, Executor } from '../../../platform/database.ts';
import { prefixedHexId } from '../../../platform/ids.ts';
import {
  buyerAgentCredentials,
  type KeyPermission,
  legacyKeys,
  orgApiKeys,
  organizations,
  userApiKeys,
} from '../db/schema.ts';
import { conflict, notFound } from '../media-buying-errors.ts';
import { NEW_KEY_PERMISSIONS } from './access.ts';
import { type CredentialStores, PREFIX } from './stores.ts';

/** Lifetime of a widget token, in seconds. */
export const WIDGET_TOKEN_SECONDS = 600;

/** A user API key as its user sees it after creation: masked. */
export interface UserApiKeyView {
  id: string;
  label: string | null;
  maskedKey: string;
  permissions: KeyPermission[];
  organizationId: string;
  createdAt: string;
  revokedAt: string | null;
}

/** An organization-owned key as administrators see it. */
export interface OrgApiKeyView {
  id: string;
  label: string | null;
  maskedKey: string;
  permissions: KeyPermission[];
  createdAt: string;
}

/** A buyer-agent credential as administrators see it. */
export interface BuyerAgentCredentialView {
  id: string;
  agentIdentifier: string;
  label: string | null;
  maskedKey: string;
  createdAt: string;
  revokedAt: string | null;
  replacedBy: string | null;
}

/** `mbu_…abcd`: the prefix and the last four characters. */
function masked(prefix: string, hint: string): string {
  return `${prefix}…${hint}`;
}

/** The keys and tokens of people and organizations (module comment). */
export class KeyService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly stores: CredentialStores,
  ) {}

  /**
   * Creates a user API key for `userId` in `organizationId` with `platform:access` (the only permission of new keys).
   * @returns the key record and the plaintext key, shown this once.
   */
  async createUserKey(
    tx: Executor,
    input: { userId: number; organizationId: number; organizationPublicId: string; label: string | null },
  ): Promise<{ record: UserApiKeyView; key: string }> {
    const issued = await this.stores.userApiKeys.issue(tx, {
      prefix: PREFIX.userApiKey,
      label: input.label,
      values: {
        publicId: prefixedHexId('uak'),
        userId: input.userId,
        organizationId: input.organizationId,
        permissions: [...NEW_KEY_PERMISSIONS],
      },
    });
    return { record: userKeyView(issued.row, input.organizationPublicId), key: issued.key };
  }

  /** The user's keys (active ones, or all with `includeRevoked`), newest first, masked. */
  async listUserKeys(userId: number, options: { includeRevoked?: boolean } = {}): Promise<UserApiKeyView[]> {
    const rows = await this.stores.userApiKeys.list({
      where: eq(userApiKeys.userId, userId),
      includeRevoked: options.includeRevoked,
    });
    const orgIds = await this.organizationPublicIds(rows.map((r) => r.organizationId));
    return rows.map((r) => userKeyView(r, orgIds.get(r.organizationId)!));
  }

  /**
   * Revokes one of the user's keys (effective on every instance at once).
   * @param options.onlyKeyId when set, only that key may be revoked (a key revoking itself): any other id is a 404.
   * @throws ApiError 404 for a key that is not the user's (or not `onlyKeyId`).
   */
  async revokeUserKey(
    tx: Executor,
    userId: number,
    publicId: string,
    options: { onlyKeyId?: number } = {},
  ): Promise<UserApiKeyView> {
    const row = await this.findByPublicId(tx, userApiKeys, publicId);
    const revoked =
      row &&
      (await this.stores.userApiKeys.revoke(row.id, {
        executor: tx,
        allowed: (r) =>
          r.userId === userId && (options.onlyKeyId === undefined || r.id === options.onlyKeyId),
      }));
    if (!revoked) throw notFound('API key', publicId);
    const orgIds = await this.organizationPublicIds([revoked.organizationId], tx);
    return userKeyView(revoked, orgIds.get(revoked.organizationId)!);
  }

  /** The organization's owned keys (active), newest first. */
  async listOrgKeys(organizationId: number): Promise<OrgApiKeyView[]> {
    const rows = await this.stores.orgApiKeys.list({ where: eq(orgApiKeys.organizationId, organizationId) });
    return rows.map((r) => ({
      id: r.publicId,
      label: r.label,
      maskedKey: masked(PREFIX.orgApiKey, r.hint),
      permissions: r.permissions,
      createdAt: r.createdAt.toISOString(),
    }));
  }

  /** Revokes an organization-owned key. @throws ApiError 404 for another organization's or an unknown key. */
  async revokeOrgKey(tx: Executor, organizationId: number, publicId: string): Promise<void> {
    const row = await this.findByPublicId(tx, orgApiKeys, publicId);
    const revoked =
      row &&
      (await this.stores.orgApiKeys.revoke(row.id, {
        executor: tx,
        allowed: (r) => r.organizationId === organizationId && r.revokedAt === null,
      }));
    if (!revoked) throw notFound('Organization API key', publicId);
  }

  /**
   * Imports an organization-owned key (operator, migration): `key` is the secret the organization already holds
   * (`mbo_` + 43 URL-safe base64 characters), or a new one is made.
   * @throws ApiError 409 when that secret is already stored.
   */
  async importOrgKey(
    tx: Executor,
    input: { organizationId: number; permissions: KeyPermission[]; label: string | null; key?: string },
  ) {
    return this.importKey(tx, 'org', input);
  }

  /**
   * Imports a legacy customer-scoped key (operator, migration): the secret it has (`lgc_` + 43 URL-safe base64
   * characters) and when it expires (null: until revoked).
   * @throws ApiError 409 when that secret is already stored.
   */
  async importLegacyKey(
    tx: Executor,
    input: {
      organizationId: number;
      permissions: KeyPermission[];
      label: string | null;
      key: string;
      expiresAt: Date | null;
    },
  ) {
    return this.importKey(tx, 'legacy', input);
  }

  /** A widget token for the user in the organization active now, living {@link WIDGET_TOKEN_SECONDS}. */
  async issueWidgetToken(
    tx: Executor,
    input: { userId: number; organizationId: number },
  ): Promise<{ token: string; expiresAt: string }> {
    const expiresAt = new Date(this.clock.nowMs() + WIDGET_TOKEN_SECONDS * 1000);
    const issued = await this.stores.widgetTokens.issue(tx, {
      expiresAt,
      values: { userId: input.userId, organizationId: input.organizationId },
    });
    return { token: issued.key, expiresAt: expiresAt.toISOString() };
  }

  /**
   * Issues a buyer-agent credential for `agentIdentifier` (shown once).
   * @throws ApiError 409 when the organization already has an active credential for that agent (replace it instead).
   */
  async issueBuyerAgent(
    tx: Executor,
    input: { organizationId: number; agentIdentifier: string; label: string | null; issuedByUserId: number },
  ): Promise<{ record: BuyerAgentCredentialView; key: string }> {
    // Concurrent issues for one organization take turns: the second sees the first's credential (409), never a
    // unique-index violation.
    await tx
      .select({ id: organizations.id })
      .from(organizations)
      .where(eq(organizations.id, input.organizationId))
      .for('update');
    const existing = await this.activeBuyerAgent(tx, input.organizationId, input.agentIdentifier);
    if (existing)
      throw conflict(`The agent ${input.agentIdentifier} already has a credential; replace it instead.`, {
        credentialId: existing.publicId,
      });
    const issued = await this.stores.buyerAgents.issue(tx, {
      label: input.label,
      values: {
        publicId: prefixedHexId('bag'),
        organizationId: input.organizationId,
        agentIdentifier: input.agentIdentifier,
        issuedByUserId: input.issuedByUserId,
      },
    });
    return { record: buyerAgentView(issued.row, null), key: issued.key };
  }

  /**
   * Replaces a buyer-agent credential: a new secret for the same agent; the old one is revoked in the same
   * transaction.
   * @throws ApiError 404 for another organization's, an unknown or a revoked credential.
   */
  async replaceBuyerAgent(
    tx: Executor,
    input: { organizationId: number; publicId: string; issuedByUserId: number },
  ): Promise<{ record: BuyerAgentCredentialView; key: string }> {
    const old = await this.findByPublicId(tx, buyerAgentCredentials, input.publicId);
    const revoked =
      old &&
      (await this.stores.buyerAgents.revoke(old.id, {
        executor: tx,
        allowed: (r) => r.organizationId === input.organizationId && r.revokedAt === null,
      }));
    if (!revoked) throw notFound('Buyer-agent credential', input.publicId);
    const issued = await this.stores.buyerAgents.issue(tx, {
      label: revoked.label,
      values: {
        publicId: prefixedHexId('bag'),
        organizationId: input.organizationId,
        agentIdentifier: revoked.agentIdentifier,
        issuedByUserId: input.issuedByUserId,
      },
    });
    await tx
      .update(buyerAgentCredentials)
      .set({ replacedById: issued.row.id })
      .where(eq(buyerAgentCredentials.id, revoked.id));
    return { record: buyerAgentView(issued.row, null), key: issued.key };
  }

  /** Revokes a buyer-agent credential. @throws ApiError 404. */
  async revokeBuyerAgent(tx: Executor, organizationId: number, publicId: string): Promise<void> {
    const row = await this.findByPublicId(tx, buyerAgentCredentials, publicId);
    const revoked =
      row &&
      (await this.stores.buyerAgents.revoke(row.id, {
        executor: tx,
        allowed: (r) => r.organizationId === organizationId && r.revokedAt === null,
      }));
    if (!revoked) throw notFound('Buyer-agent credential', publicId);
  }

  /** The organization's buyer-agent credentials (active, or all), oldest first. */
  async listBuyerAgents(
    organizationId: number,
    options: { includeRevoked?: boolean } = {},
  ): Promise<BuyerAgentCredentialView[]> {
    const rows = await this.stores.buyerAgents.list({
      where: eq(buyerAgentCredentials.organizationId, organizationId),
      includeRevoked: options.includeRevoked,
    });
    const byId = new Map(rows.map((r) => [r.id, r.publicId]));
    return rows
      .map((r) => buyerAgentView(r, r.replacedById === null ? null : (byId.get(r.replacedById) ?? null)))
      .reverse();
  }

  /**
   * Reconciliation: compares the agents the organization expects (`agentIdentifiers`) with its active credentials,
   * changing nothing: which expected agents have none (`missing`), which credentials no expected agent uses
   * (`unexpected`), and which match (`matched`).
   */
  async reconcileBuyerAgents(
    organizationId: number,
    agentIdentifiers: readonly string[],
  ): Promise<{
    matched: BuyerAgentCredentialView[];
    missing: string[];
    unexpected: BuyerAgentCredentialView[];
  }> {
    const active = await this.listBuyerAgents(organizationId);
    const expected = new Set(agentIdentifiers);
    const have = new Set(active.map((c) => c.agentIdentifier));
    return {
      matched: active.filter((c) => expected.has(c.agentIdentifier)),
      missing: [...expected].filter((a) => !have.has(a)).sort(),
      unexpected: active.filter((c) => !expected.has(c.agentIdentifier)),
    };
  }

  private async activeBuyerAgent(executor: Executor, organizationId: number, agentIdentifier: string) {
    const [row] = await executor
      .select()
      .from(buyerAgentCredentials)
      .where(
        and(
          eq(buyerAgentCredentials.organizationId, organizationId),
          eq(buyerAgentCredentials.agentIdentifier, agentIdentifier),
          isNull(buyerAgentCredentials.revokedAt),
        ),
      )
      .limit(1);
    return row;
  }

  private async importKey(
    tx: Executor,
    kind: 'org' | 'legacy',
    input: {
      organizationId: number;
      permissions: KeyPermission[];
      label: string | null;
      key?: string;
      expiresAt?: Date | null;
    },
  ) {
    const table = kind === 'org' ? orgApiKeys : legacyKeys;
    const store = kind === 'org' ? this.stores.orgApiKeys : this.stores.legacyKeys;
    const values = {
      publicId: prefixedHexId(kind === 'org' ? 'key' : 'lgk'),
      organizationId: input.organizationId,
      permissions: [...new Set(input.permissions)],
    };
    if (input.key === undefined) {
      const issued = await store.issue(tx, {
        label: input.label,
        values,
        expiresAt: input.expiresAt ?? null,
      });
      return { row: issued.row, key: issued.key as string | undefined };
    }
    const hash = hashApiKey(input.key);
    const [taken] = await tx.select({ id: table.id }).from(table).where(eq(table.keyHash, hash)).limit(1);
    if (taken) throw conflict('That key is already imported.');
    const [row] = await tx
      .insert(table)
      .values({
        ...values,
        keyHash: hash,
        hint: input.key.slice(-4),
        label: input.label,
        createdAt: this.clock.now(),
        ...(kind === 'legacy' ? { expiresAt: input.expiresAt ?? null } : {}),
      } as never)
      .returning();
    return { row: row as typeof table.$inferSelect, key: undefined };
  }

  private async findByPublicId<
    T extends typeof userApiKeys | typeof orgApiKeys | typeof buyerAgentCredentials,
  >(executor: Executor, table: T, publicId: string): Promise<{ id: number } | undefined> {
    const [row] = await executor
      .select({ id: table.id })
      .from(table as typeof userApiKeys)
      .where(eq(table.publicId, publicId))
      .limit(1);
    return row;
  }

  private async organizationPublicIds(
    ids: number[],
    executor: Executor = this.db,
  ): Promise<Map<number, string>> {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return new Map();
    const rows = await executor
      .select({ id: organizations.id, publicId: organizations.publicId })
      .from(organizations)
      .where(inArray(organizations.id, unique))
      .orderBy(asc(organizations.id));
    return new Map(rows.map((r) => [r.id, r.publicId]));
  }
}

function userKeyView(row: typeof userApiKeys.$inferSelect, organizationPublicId: string): UserApiKeyView {
  return {
    id: row.publicId,
    label: row.label,
    maskedKey: masked(PREFIX.userApiKey, row.hint),
    permissions: row.permissions,
    organizationId: organizationPublicId,
    createdAt: row.createdAt.toISOString(),
    revokedAt: row.revokedAt ? row.revokedAt.toISOString() : null,
  };
}

function buyerAgentView(
  row: typeof buyerAgentCredentials.$inferSelect,
  replacedBy: string | null,
): BuyerAgentCredentialView {
  return {
    id: row.publicId,
    agentIdentifier: row.agentIdentifier,
    label: row.label,
    maskedKey: masked(PREFIX.buyerAgent, row.hint),
    createdAt: row.createdAt.toISOString(),
    revokedAt: row.revokedAt ? row.revokedAt.toISOString() : null,
    replacedBy,
  };
}
