/**
 * Parties, their credentials, compliance cases and transaction limits (spec 001 section A: "Party compliance
 * status", "Compliance session status", "Transaction limits", "Authentication").
 */
import { and, count, desc, eq, inArray } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.ts';
import type { CredentialRecord as KitCredentialRecord } from '../../platform/credentials.ts';
import type { Db, Executor } from '../../platform/database.ts';
import { ApiError } from '../../platform/errors.ts';
import { prefixedHexId } from '../../platform/ids.ts';
import type { ServiceContext } from '../../platform/service.ts';
import {
  assertCaseTransition,
  type CaseStatus,
  canProceed,
  DISPLAY_RULES,
  partyComplianceAttributes,
} from './compliance.ts';
import { credentials, parties, type RequirementRow } from './db/schema.ts';
import type { Scope } from './oauth-scopes.ts';

/** Prefix of API keys (full rights of their party). */
export const API_KEY_PREFIX = 'sk_';
/** Prefix of agent keys (act for their party with narrower rights: README "Credentials"). */
export const AGENT_KEY_PREFIX = 'ak_';

/**
 * The caller behind a bearer credential (spec A "Authentication": an API key, an agent key or an OAuth access token).
 */
export interface Principal {
  partyId: string;
  /**
   * The credential row: the API or agent key, or the OAuth client an access token of this service was issued to;
   * null for an external issuer's token.
   */
  credentialId: number | null;
  /** `api` key (every right of the party), `agent` key, or `oauth` access token (its scopes). */
  kind: 'api' | 'agent' | 'oauth';
  /** The scopes of an access token; null for keys (whose rights follow their kind). */
  scopes: readonly Scope[] | null;
  /** The per-credential rate-limit bucket: `key:<row id>` for keys and this service's clients, `ext:<...>` else. */
  bucket: string;
}

/** A credential as listed (never the key itself). */
export type CredentialRecord = KitCredentialRecord<CredentialAttributes>;

/** A newly issued credential with its key, shown once. */
export type IssuedKey = CredentialRecord & { key: string };

/** The payments fields of a credential in records (`clientId` and `scopes` only for OAuth clients). */
export interface CredentialAttributes {
  partyId: string;
  kind: 'api' | 'agent' | 'oauth_client';
  clientId: string | null;
  scopes: string[] | null;
}

/**
 * The operator record fields of a credential row.
 */
export function credentialAttributes(row: typeof credentials.$inferSelect): CredentialAttributes {
  return { partyId: row.partyId, kind: row.kind, clientId: row.clientId, scopes: row.scopes };
}

/**
 * The bearer credentials of parties, on the platform credential kit: SHA-256 at rest, shown once, lookups cached
 * per instance, revocations effective on every instance at once.
 */
export function createCredentialStore(ctx: ServiceContext) {
  return ctx.credentialStore<typeof credentials, Principal, CredentialAttributes>({
    table: credentials,
    prefixes: [API_KEY_PREFIX, AGENT_KEY_PREFIX],
    principal: (row) => {
      // Only `sk_` and `ak_` secrets reach this store (OAuth client secrets have their own prefix and store).
      if (row.kind === 'oauth_client') throw new Error(`credential ${row.id} is not a bearer key`);
      return {
        partyId: row.partyId,
        credentialId: row.id,
        kind: row.kind,
        scopes: null,
        bucket: `key:${row.id}`,
      };
    },
    attributes: credentialAttributes,
  });
}

/** The credential store of the payments service. */
export type CredentialStore = ReturnType<typeof createCredentialStore>;

export type PartyRow = typeof parties.$inferSelect;

/** Default compliance program of new parties. */
export const DEFAULT_PROGRAM = {
  code: 'US_MERCHANT_KYB',
  id: 'prg_us_merchant_kyb',
  versionId: 'prv_2026_01',
};

/** The requirements of a new case (keys are what `requirementsDue` lists). */
export const DEFAULT_REQUIREMENTS: readonly Omit<RequirementRow, 'id'>[] = [
  { key: 'business_details', description: 'Legal name, address and tax identifier of the business.' },
  { key: 'representative_identity', description: 'Identity document of a legal representative.' },
  { key: 'bank_account', description: 'Bank account that receives payouts.' },
];

function withIds(requirements: readonly Omit<RequirementRow, 'id'>[]): RequirementRow[] {
  return requirements.map((r) => ({ id: prefixedHexId('req'), key: r.key, description: r.description }));
}

/** 404 that never tells a missing party from another merchant's. */
export function partyNotFound(pointer?: string): ApiError {
  return new ApiError(404, 'party_not_found', 'No such party.', pointer ? { details: { pointer } } : {});
}

/** Parties and their credentials ({@link CredentialStore}). */
export class PartyService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly keys: CredentialStore,
  ) {}

  /**
   * Creates a party with a compliance case in `caseStatus` (default `NOT_READY`; operators may seed any status).
   * Customer parties belong to `ownerPartyId` (their merchant).
   */
  async create(
    input: {
      kind: 'merchant' | 'customer';
      name: string;
      ownerPartyId?: string | null;
      caseStatus?: CaseStatus;
      perTransaction?: number | null;
    },
    executor: Executor = this.db,
  ): Promise<PartyRow> {
    const now = this.clock.now();
    const [row] = await executor
      .insert(parties)
      .values({
        id: prefixedHexId('pty'),
        kind: input.kind,
        name: input.name,
        ownerPartyId: input.ownerPartyId ?? null,
        programCode: DEFAULT_PROGRAM.code,
        programId: DEFAULT_PROGRAM.id,
        programVersionId: DEFAULT_PROGRAM.versionId,
        caseId: prefixedHexId('cse'),
        caseStatus: input.caseStatus ?? 'NOT_READY',
        requirements: input.caseStatus === 'MET' ? [] : withIds(DEFAULT_REQUIREMENTS),
        perTransaction: input.perTransaction ?? null,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    return row!;
  }

  /**
   * Creates a party and, for a merchant, its first API key, in one transaction (operator route `POST /_ops/parties`).
   * @returns the party and the issued key (plaintext, shown once), or null for a customer party.
   */
  async createWithApiKey(
    input: Parameters<PartyService['create']>[0],
  ): Promise<{ party: PartyRow; apiKey: IssuedKey | null }> {
    return this.db.transaction(async (tx) => {
      const party = await this.create(input, tx);
      const apiKey = input.kind === 'merchant' ? await this.issueKey(party.id, 'api', 'operator', tx) : null;
      return { party, apiKey };
    });
  }

  /** Issues a credential of `kind` for `partyId`; the plaintext key is returned once. */
  async issueKey(
    partyId: string,
    kind: 'api' | 'agent',
    label: string | null | undefined,
    executor: Executor = this.db,
  ): Promise<IssuedKey> {
    const issued = await this.keys.issue(executor, {
      prefix: kind === 'api' ? API_KEY_PREFIX : AGENT_KEY_PREFIX,
      label,
      values: { partyId, kind },
    });
    return { ...issued.record, key: issued.key };
  }

  /**
   * Revokes agent key `id` of `partyId` (`POST /v1/agent-keys/{id}/revoke`: agent keys only; a party's API keys are
   * the operator's to revoke). A key already revoked keeps its first revocation time. Other instances drop the key
   * from their cache when the transaction commits (NOTIFY).
   * @param executor the caller's transaction (the route's idempotency record), or the pool (own transaction).
   * @throws ApiError 404 `credential_not_found` (also for another party's key, and for an API key).
   */
  async revokeAgentKey(id: number, partyId: string, executor: Executor = this.db): Promise<void> {
    // Inside the caller's transaction the kit's transaction is a savepoint: the revocation commits (and notifies)
    // with the caller's idempotency record.
    const revoked = await this.keys.revoke(id, {
      executor,
      allowed: (row) => row.partyId === partyId && row.kind === 'agent',
    });
    if (!revoked) throw credentialNotFound();
  }

  /** A party by id, or undefined. */
  async find(id: string, executor: Executor = this.db): Promise<PartyRow | undefined> {
    const [row] = await executor.select().from(parties).where(eq(parties.id, id)).limit(1);
    return row;
  }

  /**
   * A party the caller may see: itself, or a customer party it owns. `'me'` is the caller's own party.
   * @throws ApiError 404 `party_not_found` otherwise (never telling which).
   */
  async visible(principal: Principal, partyId: string): Promise<PartyRow> {
    const id = partyId === 'me' ? principal.partyId : partyId;
    const row = await this.find(id);
    if (!row || (row.id !== principal.partyId && row.ownerPartyId !== principal.partyId))
      throw partyNotFound();
    return row;
  }

  /**
   * Checks that both parties of a payment may proceed (their compliance case allows it).
   * @throws ApiError 403 `compliance_required` naming the party and its display state.
   */
  async assertCanProceed(executor: Executor, partyIds: readonly string[]): Promise<PartyRow[]> {
    const rows = await executor
      .select()
      .from(parties)
      .where(inArray(parties.id, [...new Set(partyIds)]));
    checkCanProceed(rows, partyIds);
    return rows;
  }

  /**
   * Moves a party's compliance case (operator route). `requirements` (keys and descriptions) replaces the open
   * requirements when given; a move to `MET` clears them.
   * @throws ApiError 404 `party_not_found`, 409 `invalid_state` for a transition outside README's table.
   */
  async moveCase(
    partyId: string,
    to: CaseStatus,
    requirements?: readonly Omit<RequirementRow, 'id'>[],
  ): Promise<PartyRow> {
    return this.db.transaction(async (tx) => {
      const [row] = await tx.select().from(parties).where(eq(parties.id, partyId)).for('update');
      if (!row) throw partyNotFound();
      assertCaseTransition(row.caseStatus as CaseStatus, to);
      const next =
        to === 'MET' ? [] : requirements !== undefined ? withIds(requirements) : (row.requirements ?? []);
      const [updated] = await tx
        .update(parties)
        .set({ caseStatus: to, requirements: next, updatedAt: this.clock.now() })
        .where(eq(parties.id, partyId))
        .returning();
      return updated!;
    });
  }

  /** Sets the caller's per-transaction limit (cents > 0, or null for none). */
  async setLimit(partyId: string, perTransaction: number | null): Promise<PartyRow> {
    const [row] = await this.db
      .update(parties)
      .set({ perTransaction, updatedAt: this.clock.now() })
      .where(eq(parties.id, partyId))
      .returning();
    if (!row) throw partyNotFound();
    return row;
  }

  /** Customer parties owned by `ownerPartyId`, newest first: `limit` rows after `offset`, and the total. */
  async listCustomers(
    ownerPartyId: string,
    limit: number,
    offset: number,
  ): Promise<{ rows: PartyRow[]; total: number }> {
    const where = and(eq(parties.ownerPartyId, ownerPartyId), eq(parties.kind, 'customer'));
    const [rows, [total]] = await Promise.all([
      this.db
        .select()
        .from(parties)
        .where(where)
        .orderBy(desc(parties.createdAt), desc(parties.id))
        .limit(limit)
        .offset(offset),
      this.db.select({ n: count() }).from(parties).where(where),
    ]);
    return { rows, total: total?.n ?? 0 };
  }
}

function credentialNotFound(): ApiError {
  return new ApiError(404, 'credential_not_found', 'No such credential.');
}

/** JSON:API resource of a party's compliance status. */
export function complianceResource(row: PartyRow) {
  return {
    type: 'partyComplianceStatus' as const,
    id: row.id,
    attributes: partyComplianceAttributes({
      programCode: row.programCode,
      caseStatus: row.caseStatus as CaseStatus,
      requirements: row.requirements,
    }),
  };
}

/** JSON:API resource of a party's compliance session (its case). */
export function complianceSessionResource(row: PartyRow) {
  return {
    type: 'complianceSessionStatus' as const,
    id: row.caseId,
    attributes: {
      programId: row.programId,
      programVersionId: row.programVersionId,
      status: row.caseStatus as CaseStatus,
      requirements: row.requirements.map((r) => ({ id: r.id, key: r.key, description: r.description })),
    },
  };
}

/** JSON:API resource of a party. */
export function partyResource(row: PartyRow) {
  return {
    type: 'party' as const,
    id: row.id,
    attributes: {
      kind: row.kind,
      name: row.name,
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    },
  };
}

/** JSON:API resource of transaction limits. */
export function limitsResource(row: PartyRow) {
  return {
    type: 'transactionLimits' as const,
    id: row.id,
    attributes: { perTransaction: row.perTransaction },
  };
}

/**
 * The compliance rule of a payment on parties already read: every id of `partyIds` is in `rows` and its case allows
 * proceeding ({@link canProceed}).
 * @throws ApiError 404 `party_not_found` for an id not in `rows`; 403 `compliance_required` naming the party and its
 *   display state.
 */
export function checkCanProceed(rows: readonly PartyRow[], partyIds: readonly string[]): void {
  for (const id of partyIds) {
    const row = rows.find((r) => r.id === id);
    if (!row) throw partyNotFound();
    if (!canProceed(row.caseStatus)) {
      const rule = DISPLAY_RULES[row.caseStatus as CaseStatus];
      throw new ApiError(
        403,
        'compliance_required',
        `Party ${row.id} cannot take part in payments yet: its compliance status is ${rule.displayState} (${row.caseStatus}). ${rule.message}`,
        { details: { partyId: row.id } },
      );
    }
  }
}
