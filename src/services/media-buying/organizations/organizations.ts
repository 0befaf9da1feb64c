/**
 * Organizations and the people in them (spec "What the service does"; "Signup"): Buyer Accounts and Seller
 * Accounts, memberships with roles (removable), a user's active organization, advertisers of Buyer Accounts,
 * storefronts of Seller Accounts, Terms of Service versions and acceptances, alpha features per organization,
 * platform settings, and the audit log of every mutation.
 */
import { and, asc, desc, eq, isNull } from 'drizzle-orm';
import type { Clock } from '../../../platform/clock.ts';
import type { Db, Executor } from '../../../platform/database.ts';
import { prefixedHexId } from '../../../platform/ids.ts';
import {
  advertisers,
  alphaOptIns,
  auditLogs,
  type MembershipRole,
  memberships,
  type OrganizationKind,
  type OrganizationStatus,
  organizations,
  platformSettings,
  storefronts,
  termsAcceptances,
  termsVersions,
  users,
} from '../db/schema.ts';
import { conflict, notFound } from '../media-buying-errors.ts';

/** Alpha features of the platform (opted into per organization by the operator). */
export const ALPHA_FEATURES = ['embedded-widgets', 'measurement-engine', 'rcs-messaging'] as const;
export type AlphaFeature = (typeof ALPHA_FEATURES)[number];

/** Platform settings and their defaults. */
export interface PlatformSettings {
  /** Public buyer signup: `waitlisted` (choosing Advertiser opens the preview form) or `open`. */
  buyerSignup: 'waitlisted' | 'open';
  /** The plan rollout: while `closed`, plan-selection and signup-code data is refused. */
  planRollout: 'closed' | 'open';
}

const DEFAULT_SETTINGS: PlatformSettings = { buyerSignup: 'waitlisted', planRollout: 'closed' };

/** An organization as callers see it. */
export interface OrganizationView {
  id: string;
  kind: OrganizationKind;
  name: string;
  status: OrganizationStatus;
  createdAt: string;
  admittedAt: string | null;
}

/** A member of an organization. */
export interface MemberView {
  userId: string;
  email: string;
  name: string;
  role: MembershipRole;
  joinedAt: string;
}

/** Who made a change, for the audit log. */
export interface Actor {
  userId: number | null;
  /** The credential kind (`session`, `user_api_key`, ...) or `operator`. */
  kind: string;
}

/** The operator, as an actor. */
export const OPERATOR: Actor = { userId: null, kind: 'operator' };

type OrganizationRow = typeof organizations.$inferSelect;

/** The organization records of the service; see the module comment. */
export class Organizations {
  /**
   * @param hooks.accessLost called in the transaction that takes a user's access to an organization away (removed
   *   from it, the organization suspended): what must end with the access (MCP connector connections) ends there.
   */
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly hooks: {
      accessLost?: (tx: Executor, who: { userId?: number; organizationId: number }) => Promise<unknown>;
    } = {},
  ) {}

  /** The view of an organization row. */
  view(row: OrganizationRow): OrganizationView {
    return {
      id: row.publicId,
      kind: row.kind,
      name: row.name,
      status: row.status,
      createdAt: row.createdAt.toISOString(),
      admittedAt: row.admittedAt ? row.admittedAt.toISOString() : null,
    };
  }

  /**
   * Creates an organization: a Seller Account from signup is admitted at once; a Buyer Account starts `waitlisted`
   * unless `admitted` (buyer admission is staged: the operator admits it).
   */
  async create(
    tx: Executor,
    input: { kind: OrganizationKind; name: string; admitted: boolean },
    actor: Actor,
  ): Promise<OrganizationRow> {
    const now = this.clock.now();
    const [row] = await tx
      .insert(organizations)
      .values({
        publicId: prefixedHexId('org'),
        kind: input.kind,
        name: input.name,
        status: input.admitted ? 'admitted' : 'waitlisted',
        createdAt: now,
        admittedAt: input.admitted ? now : null,
      })
      .returning();
    await this.audit(tx, row!.id, actor, 'organization.created', 'organization', row!.publicId, {
      kind: input.kind,
      status: row!.status,
    });
    return row!;
  }

  /** An organization by public id. @throws ApiError 404. */
  async byPublicId(publicId: string, executor: Executor = this.db, lock = false): Promise<OrganizationRow> {
    const query = executor.select().from(organizations).where(eq(organizations.publicId, publicId)).limit(1);
    const [row] = lock ? await query.for('update') : await query;
    if (!row) throw notFound('Organization', publicId);
    return row;
  }

  /** An organization by internal id (it exists: callers hold a foreign key). */
  async byId(id: number, executor: Executor = this.db): Promise<OrganizationRow> {
    const [row] = await executor.select().from(organizations).where(eq(organizations.id, id)).limit(1);
    if (!row) throw notFound('Organization');
    return row;
  }

  /**
   * Moves an organization's status: `admitted` (from `waitlisted` or `suspended`) or `suspended` (from `admitted`).
   * Suspending stops every credential of the organization at the next request and ends its MCP connections
   * (`hooks.accessLost`): re-admitting does not bring them back.
   * @throws ApiError 404; 409 for a move that is not one of those.
   */
  async setStatus(
    tx: Executor,
    publicId: string,
    status: 'admitted' | 'suspended',
    actor: Actor,
  ): Promise<OrganizationRow> {
    const row = await this.byPublicId(publicId, tx, true);
    if (row.status === status) return row;
    if (status === 'suspended' && row.status !== 'admitted')
      throw conflict(`Only an admitted organization can be suspended (this one is ${row.status}).`);
    const now = this.clock.now();
    const [updated] = await tx
      .update(organizations)
      .set(
        status === 'admitted'
          ? { status, admittedAt: row.admittedAt ?? now, suspendedAt: null }
          : { status, suspendedAt: now },
      )
      .where(eq(organizations.id, row.id))
      .returning();
    if (status === 'suspended') await this.hooks.accessLost?.(tx, { organizationId: row.id });
    await this.audit(tx, row.id, actor, `organization.${status}`, 'organization', row.publicId, {
      from: row.status,
    });
    return updated!;
  }

  /**
   * Adds `userId` to an organization with `role` (or changes the role of an active member), and makes it the user's
   * active organization when the user has none.
   */
  async addMember(
    tx: Executor,
    organizationId: number,
    userId: number,
    role: MembershipRole,
    actor: Actor,
  ): Promise<void> {
    const [existing] = await tx
      .select()
      .from(memberships)
      .where(
        and(
          eq(memberships.organizationId, organizationId),
          eq(memberships.userId, userId),
          isNull(memberships.removedAt),
        ),
      )
      .for('update');
    if (existing) {
      if (existing.role !== role)
        await tx.update(memberships).set({ role }).where(eq(memberships.id, existing.id));
    } else {
      await tx.insert(memberships).values({ organizationId, userId, role, createdAt: this.clock.now() });
    }
    await tx
      .update(users)
      .set({ activeOrganizationId: organizationId })
      .where(and(eq(users.id, userId), isNull(users.activeOrganizationId)));
    await this.audit(
      tx,
      organizationId,
      actor,
      'membership.added',
      'user',
      await this.userPublicId(tx, userId),
      {
        role,
      },
    );
  }

  /**
   * Removes a member: every credential the user holds for this organization stops at the next request (keys and
   * tokens are checked against live membership), and the user's MCP connections in it end (`hooks.accessLost`). The
   * last administrator cannot be removed.
   * @throws ApiError 404 for a user who is not a member; 409 for the last administrator.
   */
  async removeMember(
    tx: Executor,
    organizationId: number,
    userPublicId: string,
    actor: Actor,
  ): Promise<void> {
    const member = await this.membershipOf(tx, organizationId, userPublicId);
    if (member.role === 'admin') await this.assertAnotherAdmin(tx, organizationId, member.id);
    await tx.update(memberships).set({ removedAt: this.clock.now() }).where(eq(memberships.id, member.id));
    await this.hooks.accessLost?.(tx, { userId: member.userId, organizationId });
    await tx
      .update(users)
      .set({ activeOrganizationId: null })
      .where(and(eq(users.id, member.userId), eq(users.activeOrganizationId, organizationId)));
    await this.audit(tx, organizationId, actor, 'membership.removed', 'user', userPublicId, {});
  }

  /**
   * Changes a member's role. The last administrator cannot become a member.
   * @throws ApiError 404; 409 for the last administrator.
   */
  async changeRole(
    tx: Executor,
    organizationId: number,
    userPublicId: string,
    role: MembershipRole,
    actor: Actor,
  ): Promise<void> {
    const member = await this.membershipOf(tx, organizationId, userPublicId);
    if (member.role === role) return;
    if (member.role === 'admin') await this.assertAnotherAdmin(tx, organizationId, member.id);
    await tx.update(memberships).set({ role }).where(eq(memberships.id, member.id));
    await this.audit(tx, organizationId, actor, 'membership.role_changed', 'user', userPublicId, {
      from: member.role,
      to: role,
    });
  }

  /** The active members of an organization, in joining order. */
  async members(organizationId: number): Promise<MemberView[]> {
    const rows = await this.db
      .select({
        userId: users.publicId,
        email: users.email,
        name: users.name,
        role: memberships.role,
        joinedAt: memberships.createdAt,
      })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(and(eq(memberships.organizationId, organizationId), isNull(memberships.removedAt)))
      .orderBy(asc(memberships.id));
    return rows.map((r) => ({ ...r, joinedAt: r.joinedAt.toISOString() }));
  }

  /** The organizations a user is an active member of, with the role, in joining order. */
  async membershipsOf(userId: number, executor: Executor = this.db) {
    const rows = await executor
      .select({ organization: organizations, role: memberships.role, joinedAt: memberships.createdAt })
      .from(memberships)
      .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
      .where(and(eq(memberships.userId, userId), isNull(memberships.removedAt)))
      .orderBy(asc(memberships.id));
    return rows.map((r) => ({
      organization: this.view(r.organization),
      role: r.role,
      joinedAt: r.joinedAt.toISOString(),
    }));
  }

  /**
   * Makes `organizationPublicId` the user's active organization (where sessions and new keys act).
   * @throws ApiError 404 when the user is not an active member of an admitted organization of that id.
   */
  async switchActive(tx: Executor, userId: number, organizationPublicId: string): Promise<OrganizationRow> {
    const [row] = await tx
      .select({ organization: organizations })
      .from(memberships)
      .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
      .where(
        and(
          eq(memberships.userId, userId),
          isNull(memberships.removedAt),
          eq(organizations.publicId, organizationPublicId),
          eq(organizations.status, 'admitted'),
        ),
      )
      .limit(1);
    if (!row) throw notFound('Organization', organizationPublicId);
    await tx.update(users).set({ activeOrganizationId: row.organization.id }).where(eq(users.id, userId));
    return row.organization;
  }

  /** True when the organization is opted into alpha feature `feature`. */
  async hasAlpha(organizationId: number, feature: string): Promise<boolean> {
    const [row] = await this.db
      .select({ feature: alphaOptIns.feature })
      .from(alphaOptIns)
      .where(and(eq(alphaOptIns.organizationId, organizationId), eq(alphaOptIns.feature, feature)))
      .limit(1);
    return row !== undefined;
  }

  /** Opts an organization into (or out of) an alpha feature (operator: "opt in through support"). */
  async setAlpha(
    tx: Executor,
    organizationId: number,
    feature: AlphaFeature,
    enabled: boolean,
  ): Promise<void> {
    if (enabled)
      await tx
        .insert(alphaOptIns)
        .values({ organizationId, feature, optedInAt: this.clock.now() })
        .onConflictDoNothing();
    else
      await tx
        .delete(alphaOptIns)
        .where(and(eq(alphaOptIns.organizationId, organizationId), eq(alphaOptIns.feature, feature)));
    await this.audit(
      tx,
      organizationId,
      OPERATOR,
      enabled ? 'alpha.opted_in' : 'alpha.opted_out',
      'feature',
      feature,
      {},
    );
  }

  /** The alpha features an organization is opted into. */
  async alphaFeatures(organizationId: number): Promise<string[]> {
    const rows = await this.db
      .select({ feature: alphaOptIns.feature })
      .from(alphaOptIns)
      .where(eq(alphaOptIns.organizationId, organizationId))
      .orderBy(asc(alphaOptIns.feature));
    return rows.map((r) => r.feature);
  }

  /**
   * Publishes a new Terms of Service version: from now on every member must accept it before mutating.
   * @throws ApiError 409 when the version exists.
   */
  async publishTerms(tx: Executor, input: { version: string; title: string; body: string }) {
    const [row] = await tx
      .insert(termsVersions)
      .values({ ...input, publishedAt: this.clock.now() })
      .onConflictDoNothing()
      .returning();
    if (!row) throw conflict(`Terms version ${input.version} already exists.`);
    return row;
  }

  /** The latest terms version, if any. */
  async latestTerms(executor: Executor = this.db) {
    const [row] = await executor
      .select()
      .from(termsVersions)
      .orderBy(desc(termsVersions.publishedAt), desc(termsVersions.id))
      .limit(1);
    return row;
  }

  /**
   * Records that the user accepts terms `version` (it must be the latest: accepting an older one changes nothing the
   * rules read). Accepting twice is a no-op.
   * @throws ApiError 409 when `version` is not the latest version.
   */
  async acceptTerms(
    tx: Executor,
    userId: number,
    version: string,
    actor: Actor & { organizationId: number | null },
  ) {
    const latest = await this.latestTerms(tx);
    if (!latest || latest.version !== version)
      throw conflict(
        `Terms version ${version} is not the current one${latest ? ` (${latest.version})` : ''}.`,
        {
          currentVersion: latest?.version ?? null,
        },
      );
    await tx
      .insert(termsAcceptances)
      .values({ userId, termsVersionId: latest.id, acceptedAt: this.clock.now() })
      .onConflictDoNothing();
    await this.audit(tx, actor.organizationId, actor, 'terms.accepted', 'terms', version, {});
  }

  /** The platform settings (defaults for those never set). */
  async settings(executor: Executor = this.db): Promise<PlatformSettings> {
    const rows = await executor.select().from(platformSettings);
    const out = { ...DEFAULT_SETTINGS } as Record<string, unknown>;
    for (const row of rows) if (row.key in out) out[row.key] = row.value;
    return out as unknown as PlatformSettings;
  }

  /** Changes platform settings (operator). */
  async updateSettings(tx: Executor, patch: Partial<PlatformSettings>): Promise<PlatformSettings> {
    for (const [key, value] of Object.entries(patch)) {
      if (value === undefined) continue;
      await tx
        .insert(platformSettings)
        .values({ key, value, updatedAt: this.clock.now() })
        .onConflictDoUpdate({ target: platformSettings.key, set: { value, updatedAt: this.clock.now() } });
    }
    return this.settings(tx);
  }

  /** Creates an advertiser of a Buyer Account. */
  async createAdvertiser(tx: Executor, organizationId: number, name: string, actor: Actor) {
    const [row] = await tx
      .insert(advertisers)
      .values({ publicId: prefixedHexId('adv'), organizationId, name, createdAt: this.clock.now() })
      .returning();
    await this.audit(tx, organizationId, actor, 'advertiser.created', 'advertiser', row!.publicId, { name });
    return row!;
  }

  /** Creates a storefront of a Seller Account. */
  async createStorefront(
    tx: Executor,
    organizationId: number,
    input: { name: string; currency: string },
    actor: Actor,
  ) {
    const [row] = await tx
      .insert(storefronts)
      .values({
        publicId: prefixedHexId('sf'),
        organizationId,
        name: input.name,
        currency: input.currency,
        status: 'active',
        createdAt: this.clock.now(),
      })
      .returning();
    await this.audit(tx, organizationId, actor, 'storefront.created', 'storefront', row!.publicId, input);
    return row!;
  }

  /** Appends an audit log entry (in the caller's transaction: the entry exists exactly when the change commits). */
  async audit(
    tx: Executor,
    organizationId: number | null,
    actor: Actor,
    action: string,
    targetType: string,
    targetId: string | null,
    metadata: Record<string, unknown>,
  ): Promise<void> {
    await tx.insert(auditLogs).values({
      organizationId,
      actorUserId: actor.userId,
      actorKind: actor.kind,
      action,
      targetType,
      targetId,
      metadata,
      createdAt: this.clock.now(),
    });
  }

  private async userPublicId(executor: Executor, userId: number): Promise<string> {
    const [row] = await executor.select({ publicId: users.publicId }).from(users).where(eq(users.id, userId));
    return row!.publicId;
  }

  private async membershipOf(tx: Executor, organizationId: number, userPublicId: string) {
    // Every membership change of an organization locks the organization first, so concurrent changes (two
    // administrators demoting each other) take turns instead of deadlocking on each other's rows.
    await tx
      .select({ id: organizations.id })
      .from(organizations)
      .where(eq(organizations.id, organizationId))
      .for('update');
    const [row] = await tx
      .select({ id: memberships.id, role: memberships.role, userId: memberships.userId })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(
        and(
          eq(memberships.organizationId, organizationId),
          eq(users.publicId, userPublicId),
          isNull(memberships.removedAt),
        ),
      )
      .for('update');
    if (!row) throw notFound('Member', userPublicId);
    return row;
  }

  /** @throws ApiError 409 when membership `exceptId` is the organization's only active administrator. */
  private async assertAnotherAdmin(tx: Executor, organizationId: number, exceptId: number): Promise<void> {
    // Lock the organization's admin rows so two concurrent removals cannot both leave it without one.
    const admins = await tx
      .select({ id: memberships.id })
      .from(memberships)
      .where(
        and(
          eq(memberships.organizationId, organizationId),
          eq(memberships.role, 'admin'),
          isNull(memberships.removedAt),
        ),
      )
      .for('update');
    if (!admins.some((a) => a.id !== exceptId))
      throw conflict(
        'An organization keeps at least one administrator; make someone else an administrator first.',
      );
  }
}
