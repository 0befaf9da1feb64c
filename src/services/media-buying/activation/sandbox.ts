/**
 * The zero-spend activation sandbox (spec "Activation state", "Activation record"; Limits: 30 days, zero-dollar spend
 * cap).
 *
 * 1. **Anonymous registration** (`POST /api/v2/activation/registrations`): an agent with no credential gets an
 *    enrolment and the identity provider's signed assertion (ES256 JWT of the service's signing key, `typ`
 *    `activation-assertion+jwt`, 10 minutes, single use by `jti`).
 * 2. **Assertion exchange** (`POST /api/v2/activation/token`): the assertion becomes an agent registration credential
 *    (`mbr_`) in `unbound_free`, living 30 days (the allowance), plus a claim code (`mbc_`, shown once) for a person.
 *    The anonymous cleanup job is scheduled: a sandbox still `unbound_free` after {@link ABANDONED_AFTER_DAYS} days is
 *    removed (its credential revoked, its provider connections and claim code deleted).
 * 3. **Provider binding** (`POST /api/v2/buyer/activation/provider-binding`): needs a provider account connected in the
 *    sandbox (the provider's connect callback; `POST /_ops/activations/{id}/provider-connections` stands in for it);
 *    maps the first one, deletes the others (exactly one kept), cancels the cleanup job -> `bound_free`. No spend.
 * 4. **Claim** (`POST /api/v2/buyer/activation/claim`): a user who is an active member of an admitted Buyer Account
 *    (the one the credential acts in) presents the activation id and claim code: the credential is attached to that
 *    account -> `customer_bound`; no account is created or admitted. Allowed from `unbound_free` and `bound_free`.
 * 5. **The end of the allowance**: the credential expires with it (30 days after the exchange, by the clock) and is
 *    refused like any expired credential (401 `UNAUTHORIZED`), in every state; a claimed account keeps its data.
 */
import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { and, asc, eq, isNull, lt, ne, sql } from 'drizzle-orm';
import { errors as joseErrors, jwtVerify } from 'jose';
import type { Clock } from '../../../platform/clock.ts';
import { constantTimeEqual, issueApiKey } from '../../../platform/crypto.ts';
import type { Db, Executor } from '../../../platform/database.ts';
import { prefixedHexId, randomToken } from '../../../platform/ids.ts';
import { defineTask } from '../../../platform/jobs.ts';
import type { SigningKeys } from '../../../platform/signing-keys.ts';
import { PREFIX } from '../credentials/index.ts';
import {
  activationClaims,
  activationEnrolments,
  activationProviderConnections,
  agentRegistrations,
  auditLogs,
  organizations,
} from '../db/schema.ts';
import { activationAssertionInvalid, conflict, notFound } from '../media-buying-errors.ts';
import { grantsOf, type SandboxState } from './policy.ts';

/** The allowance of the sandbox (spec Limits: 30 days). */
export const ALLOWANCE_DAYS = 30;

/** Days after the exchange after which a sandbox still `unbound_free` counts as abandoned and is removed. */
export const ABANDONED_AFTER_DAYS = 7;

/** Lifetime of the identity provider's assertion. */
export const ASSERTION_SECONDS = 600;

/** `typ` of the assertion. */
export const ASSERTION_TYPE = 'activation-assertion+jwt';

/** Version of the activation record and of the published contract. */
export const ACTIVATION_SCHEMA_VERSION = '2026-11-01';

/** The sandbox's spend cap in every state: zero dollars (spec "Activation state"). */
export const SANDBOX_SPEND_CAP = { amount: 0, currency: 'USD' } as const;

/** The claim code's prefix (`mbc_` + 43 URL-safe base64 characters). */
export const CLAIM_PREFIX = 'mbc_';

const DAY_MS = 86_400_000;

function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** The provider account mapped by the binding. */
export interface ProviderAccount {
  provider: string;
  providerAccountId: string;
  connectedAt: string;
}

/** The activation record (spec "Activation record"): stable across retries, never a secret. */
export interface ActivationRecord {
  schemaVersion: string;
  activationId: string;
  workloadId: string;
  state: SandboxState;
  expiresAt: string;
  account: {
    buyerAccountId: string | null;
    name: string | null;
    providerAccount: ProviderAccount | null;
  } | null;
  allowance: {
    ttlDays: number;
    spendCap: { amount: number; currency: string };
    grants: string[];
  };
}

/** Removes an abandoned anonymous sandbox (payload: the activation id). */
export const anonymousCleanupTask = defineTask(
  'media-buying:activation-cleanup',
  Type.Object({ activationId: Type.String() }),
  async (payload, deps: { sandbox: ActivationSandbox }) => {
    await deps.sandbox.removeIfAbandoned(payload.activationId);
  },
);

/** The activation sandbox (module comment). */
export class ActivationSandbox {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly keys: SigningKeys,
    private readonly publicUrl: () => string,
  ) {}

  /** The token endpoint (the assertion's audience). */
  tokenEndpoint(): string {
    return `${this.publicUrl()}/api/v2/activation/token`;
  }

  /** Step 1: anonymous registration. @returns the enrolment id and the signed assertion. */
  async register(input: { agentName: string; workloadId?: string }) {
    const now = this.clock.now();
    const jti = randomToken(16);
    const publicId = prefixedHexId('are');
    const workloadId = input.workloadId ?? prefixedHexId('wl');
    await this.db.insert(activationEnrolments).values({
      publicId,
      workloadId,
      agentName: input.agentName,
      assertionId: jti,
      createdAt: now,
      assertionExpiresAt: new Date(now.getTime() + ASSERTION_SECONDS * 1000),
    });
    const assertion = await this.keys.sign(
      { iss: this.publicUrl(), sub: publicId, aud: this.tokenEndpoint(), jti, workload_id: workloadId },
      { typ: ASSERTION_TYPE, lifetimeSeconds: ASSERTION_SECONDS },
    );
    return {
      enrolmentId: publicId,
      workloadId,
      assertion,
      assertionExpiresAt: new Date(now.getTime() + ASSERTION_SECONDS * 1000).toISOString(),
      tokenEndpoint: this.tokenEndpoint(),
    };
  }

  /**
   * Step 2: exchanges the assertion for the credential (module comment), in one transaction with the cleanup job.
   * @throws ApiError 401 `UNAUTHORIZED` for an assertion that does not verify, has expired or was used.
   */
  async exchange(assertion: string) {
    let claims: { sub?: string; jti?: string };
    try {
      ({ payload: claims } = await jwtVerify(assertion, this.keys.getKey, {
        issuer: this.publicUrl(),
        audience: this.tokenEndpoint(),
        typ: ASSERTION_TYPE,
        algorithms: ['ES256'],
        currentDate: this.clock.now(),
      }));
    } catch (err) {
      if (err instanceof joseErrors.JOSEError || err instanceof TypeError) throw activationAssertionInvalid();
      throw err;
    }
    if (typeof claims.sub !== 'string' || typeof claims.jti !== 'string') throw activationAssertionInvalid();
    return this.db.transaction(async (tx) => {
      const [enrolment] = await tx
        .select()
        .from(activationEnrolments)
        .where(
          and(
            eq(activationEnrolments.publicId, claims.sub!),
            eq(activationEnrolments.assertionId, claims.jti!),
          ),
        )
        .for('update');
      if (!enrolment || enrolment.exchangedAt !== null) throw activationAssertionInvalid();
      const now = this.clock.now();
      const ends = new Date(now.getTime() + ALLOWANCE_DAYS * DAY_MS);
      const issued = issueApiKey(PREFIX.agentRegistration);
      const [registration] = await tx
        .insert(agentRegistrations)
        .values({
          keyHash: issued.hash,
          hint: issued.hint,
          label: enrolment.agentName,
          createdAt: now,
          expiresAt: ends,
          publicId: prefixedHexId('act'),
          workloadId: enrolment.workloadId,
          state: 'unbound_free',
          allowanceEndsAt: ends,
        })
        .returning();
      const claimCode = `${CLAIM_PREFIX}${randomToken(32)}`;
      await tx
        .insert(activationClaims)
        .values({ registrationId: registration!.id, codeHash: sha256(claimCode) });
      await tx
        .update(activationEnrolments)
        .set({ exchangedAt: now, registrationId: registration!.id })
        .where(eq(activationEnrolments.id, enrolment.id));
      await anonymousCleanupTask.enqueue(
        tx,
        { activationId: registration!.publicId },
        { runAt: new Date(now.getTime() + ABANDONED_AFTER_DAYS * DAY_MS), jobKey: registration!.publicId },
      );
      return {
        accessToken: issued.plaintext,
        tokenType: 'Bearer' as const,
        expiresIn: ALLOWANCE_DAYS * 86_400,
        activationId: registration!.publicId,
        state: 'unbound_free' as const,
        claimCode,
      };
    });
  }

  /** The activation record of registration row `id` (the probe). */
  async record(registrationId: number, executor: Executor = this.db): Promise<ActivationRecord> {
    const [row] = await executor
      .select({ reg: agentRegistrations, orgPublicId: organizations.publicId, orgName: organizations.name })
      .from(agentRegistrations)
      .leftJoin(organizations, eq(organizations.id, agentRegistrations.organizationId))
      .where(eq(agentRegistrations.id, registrationId));
    if (!row) throw notFound('Activation');
    const { reg } = row;
    const provider = reg.providerAccount as ProviderAccount | null;
    return {
      schemaVersion: ACTIVATION_SCHEMA_VERSION,
      activationId: reg.publicId,
      workloadId: reg.workloadId,
      state: reg.state,
      expiresAt: reg.allowanceEndsAt.toISOString(),
      account:
        reg.state === 'unbound_free'
          ? null
          : { buyerAccountId: row.orgPublicId, name: row.orgName, providerAccount: provider ?? null },
      allowance: {
        ttlDays: ALLOWANCE_DAYS,
        spendCap: { ...SANDBOX_SPEND_CAP },
        grants: grantsOf(reg.state),
      },
    };
  }

  /**
   * Step 3: provider binding (module comment). Binding again answers the record as it is.
   * @throws ApiError 409 `CONFLICT` (`no_provider_account_connected`) when no provider account is connected.
   */
  async bindProvider(registrationId: number) {
    return this.db.transaction(async (tx) => {
      const [reg] = await tx
        .select()
        .from(agentRegistrations)
        .where(eq(agentRegistrations.id, registrationId))
        .for('update');
      if (!reg) throw notFound('Activation');
      if (reg.providerAccount !== null) return this.record(registrationId, tx);
      const [first] = await tx
        .select()
        .from(activationProviderConnections)
        .where(eq(activationProviderConnections.registrationId, reg.id))
        .orderBy(asc(activationProviderConnections.id))
        .limit(1);
      if (!first)
        throw conflict('Connect a provider account inside the sandbox first, then bind it.', {
          reason: 'no_provider_account_connected',
        });
      await tx
        .delete(activationProviderConnections)
        .where(
          and(
            eq(activationProviderConnections.registrationId, reg.id),
            ne(activationProviderConnections.id, first.id),
          ),
        );
      await tx
        .update(agentRegistrations)
        .set({
          state: reg.state === 'unbound_free' ? 'bound_free' : reg.state,
          providerAccount: {
            provider: first.provider,
            providerAccountId: first.providerAccountId,
            connectedAt: first.connectedAt.toISOString(),
          },
        })
        .where(eq(agentRegistrations.id, reg.id));
      await this.cancelCleanup(tx, reg.publicId);
      await this.audit(tx, reg.organizationId, 'activation.provider_bound', reg.publicId, {
        provider: first.provider,
        providerAccountId: first.providerAccountId,
      });
      return this.record(registrationId, tx);
    });
  }

  /** A provider account connected inside the sandbox (the provider's connect callback; operator route). */
  async connectProvider(activationId: string, input: { provider: string; providerAccountId: string }) {
    return this.db.transaction(async (tx) => {
      const [reg] = await tx
        .select()
        .from(agentRegistrations)
        .where(eq(agentRegistrations.publicId, activationId))
        .for('update');
      if (!reg || reg.revokedAt !== null) throw notFound('Activation', activationId);
      await tx
        .insert(activationProviderConnections)
        .values({ registrationId: reg.id, ...input, connectedAt: this.clock.now() })
        .onConflictDoNothing();
      const n = await tx
        .select({ n: sql<number>`count(*)::int` })
        .from(activationProviderConnections)
        .where(eq(activationProviderConnections.registrationId, reg.id));
      return { activationId, connections: n[0]!.n };
    });
  }

  /**
   * Step 4: the claim (module comment) by a user acting in Buyer Account `organizationId`. Claiming again into the
   * same account answers the record.
   * @throws ApiError 404 for an unknown activation or a wrong claim code (one answer); 409 `CONFLICT`
   *   (`claimed_by_another_account`) when another account claimed it.
   */
  async claim(
    actor: { userId: number; organizationId: number; kind: string },
    input: { activationId: string; claimCode: string },
  ) {
    return this.db.transaction(async (tx) => {
      const [locked] = await tx
        .select()
        .from(agentRegistrations)
        .where(eq(agentRegistrations.publicId, input.activationId))
        .for('update');
      const [claimRow] = locked
        ? await tx.select().from(activationClaims).where(eq(activationClaims.registrationId, locked.id))
        : [];
      const row = locked && claimRow ? { reg: locked, claim: claimRow } : undefined;
      if (
        !row ||
        row.reg.revokedAt !== null ||
        !constantTimeEqual(row.claim.codeHash, sha256(input.claimCode))
      )
        throw notFound('Activation', input.activationId);
      const { reg } = row;
      if (reg.state === 'customer_bound') {
        if (reg.organizationId === actor.organizationId) return this.record(reg.id, tx);
        throw conflict('This activation is claimed by another account.', {
          reason: 'claimed_by_another_account',
        });
      }
      await tx
        .update(agentRegistrations)
        .set({ state: 'customer_bound', organizationId: actor.organizationId, claimedByUserId: actor.userId })
        .where(eq(agentRegistrations.id, reg.id));
      await tx
        .update(activationClaims)
        .set({ claimedAt: this.clock.now() })
        .where(eq(activationClaims.registrationId, reg.id));
      await this.cancelCleanup(tx, reg.publicId);
      await this.audit(
        tx,
        actor.organizationId,
        'activation.claimed',
        reg.publicId,
        { from: reg.state },
        actor,
      );
      return this.record(reg.id, tx);
    });
  }

  /**
   * The anonymous cleanup: a sandbox still `unbound_free` {@link ABANDONED_AFTER_DAYS} days after its exchange (by the
   * clock) is removed: credential revoked, provider connections and claim code deleted. Anything else is kept. When
   * the job runs before that moment by the service clock (the job's time is the database's; the two may disagree),
   * the cleanup is scheduled again under the same job key for the moment it is due (at least a minute later in
   * database time, so a skew never makes it spin), so an abandoned sandbox is always removed in the end.
   * @returns `removed`, `kept` (bound, claimed or already revoked), or `rescheduled`.
   */
  async removeIfAbandoned(activationId: string): Promise<'removed' | 'kept' | 'rescheduled'> {
    return this.db.transaction(async (tx) => {
      const [reg] = await tx
        .select()
        .from(agentRegistrations)
        .where(eq(agentRegistrations.publicId, activationId))
        .for('update');
      if (reg?.state !== 'unbound_free' || reg.revokedAt !== null) return 'kept';
      const now = this.clock.now();
      const dueAt = reg.createdAt.getTime() + ABANDONED_AFTER_DAYS * DAY_MS;
      if (now.getTime() < dueAt) {
        const [db] = (await tx.execute(sql`select now() as "now"`)).rows as { now: string | Date }[];
        const floor = new Date(db!.now).getTime() + 60_000;
        await anonymousCleanupTask.enqueue(
          tx,
          { activationId: reg.publicId },
          { runAt: new Date(Math.max(dueAt, floor)), jobKey: reg.publicId },
        );
        return 'rescheduled';
      }
      await tx
        .delete(activationProviderConnections)
        .where(eq(activationProviderConnections.registrationId, reg.id));
      await tx.delete(activationClaims).where(eq(activationClaims.registrationId, reg.id));
      await tx.update(agentRegistrations).set({ revokedAt: now }).where(eq(agentRegistrations.id, reg.id));
      await this.audit(tx, null, 'activation.abandoned_removed', reg.publicId, {});
      return 'removed';
    });
  }

  /**
   * Deletes anonymous enrolments never exchanged whose assertion expired more than a day ago by the clock (an expired
   * assertion can no longer be exchanged, so nothing refers to them). @returns how many were deleted.
   */
  async pruneEnrolments(): Promise<number> {
    const before = new Date(this.clock.nowMs() - DAY_MS);
    const deleted = await this.db
      .delete(activationEnrolments)
      .where(
        and(isNull(activationEnrolments.exchangedAt), lt(activationEnrolments.assertionExpiresAt, before)),
      )
      .returning({ id: activationEnrolments.id });
    return deleted.length;
  }

  /** Cancels the scheduled anonymous cleanup of an activation (Graphile Worker `remove_job` by its key). */
  private async cancelCleanup(tx: Executor, activationId: string) {
    await tx.execute(
      sql`select graphile_worker.remove_job(${`${anonymousCleanupTask.name}:${activationId}`})`,
    );
  }

  private async audit(
    tx: Executor,
    organizationId: number | null,
    action: string,
    activationId: string,
    metadata: Record<string, unknown>,
    actor: { userId: number | null; kind: string } = { userId: null, kind: 'agent_registration' },
  ) {
    await tx.insert(auditLogs).values({
      organizationId,
      actorUserId: actor.userId,
      actorKind: actor.kind,
      action,
      targetType: 'activation',
      targetId: activationId,
      metadata,
      createdAt: this.clock.now(),
    });
  }
}
