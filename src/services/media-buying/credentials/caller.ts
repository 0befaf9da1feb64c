/**
 * Who is calling, decided on every request (spec: "the service resolves the key owner and the owner's active
 * organization membership on every request"): the credential's {@link Holder} (cached per instance by the credential
 * kit, revocations effective at once) is joined with live data in one statement ({@link LIVE_USER}): the owner user
 * (not disabled), the organization the credential acts in (admitted), the owner's membership there (not removed) and
 * its role, whether the latest Terms of Service are accepted, and for an `mcp_at_` credential its grant. A removed
 * member's key, a deleted M2M application's token or a suspended organization's credentials stop at the next request,
 * on every instance.
 *
 * The rule "the user is an active member of the organization" has one implementation here: the same statement and
 * {@link isActiveMember} answer every request's caller and the OAuth token endpoint's {@link hasActiveAccess} (run in
 * its transaction, under the grant lock).
 */
import { eq, sql } from 'drizzle-orm';
import { type Db, type Executor, NamedStatement } from '../../../platform/database.ts';
import {
  type ACTIVATION_STATES,
  agentRegistrations,
  type MembershipRole,
  mcpGrants,
  memberships,
  type OrganizationKind,
  organizations,
  termsAcceptances,
  termsVersions,
  users,
} from '../db/schema.ts';
import { type Access, intersect, NO_ACCESS, permissionAccess, roleAccess } from './access.ts';
import type { CredentialKind, Holder } from './stores.ts';

/** The most a widget token may do (read): capped below the user's role. */
const WIDGET_ACCESS: Access = { buyer: 'read', seller: 'read' };

/** The organization a caller acts in. */
export interface CallerOrganization {
  id: number;
  publicId: string;
  kind: OrganizationKind;
  name: string;
}

/** The user behind a caller, when there is one. */
export interface CallerUser {
  id: number;
  publicId: string;
  email: string;
  name: string;
}

/** The resolved caller of a request. */
export interface Caller {
  kind: CredentialKind;
  /** The credential's row id in its table (audit logs, revocation watchers). */
  credentialId: number;
  /** True for a browser session (signed in directly): only these create credentials or administer accounts. */
  interactive: boolean;
  user: CallerUser | null;
  /** The organization the credential acts in now (a session: the user's active organization), if any. */
  organization: CallerOrganization | null;
  /** The user's live role in {@link organization} (null for credentials without a user, or without membership). */
  role: MembershipRole | null;
  /** What the caller may do in {@link organization} now. */
  access: Access;
  /** The latest terms version when the user has not accepted it (mutations are refused), else null. */
  outstandingTerms: string | null;
  /**
   * For an agent registration credential: its activation row id and state (the sandbox policy decides what it may
   * do). Absent for every other credential.
   */
  sandbox?: { registrationId: number; state: (typeof ACTIVATION_STATES)[number] };
  /**
   * For an `mcp_at_` OAuth credential: its scope tokens (`adcp:read`, `adcp:write`), which the MCP layer enforces per
   * tool call. Absent for every other credential (their permission names are in {@link access}).
   */
  oauthScopes?: readonly string[];
}

/**
 * Why a credential that resolved does not authenticate now. `wrong_resource`: an `mcp_at_` access credential presented
 * to another MCP endpoint than the exact resource its grant is bound to (RFC 8707), or its grant was disconnected.
 * `not_for_mcp`: a widget token presented to an MCP endpoint (it serves embedded widgets only).
 */
export type CallerRefusal = 'owner_inactive' | 'organization_inactive' | 'wrong_resource' | 'not_for_mcp';

/** A row of {@link LIVE_USER}. */
interface LiveRow {
  userId: number;
  userPublicId: string;
  userEmail: string;
  userName: string;
  userDisabled: boolean;
  orgId: number | null;
  orgPublicId: string | null;
  orgKind: OrganizationKind | null;
  orgName: string | null;
  orgStatus: string | null;
  /** The user's role in the organization (null: no membership, or removed). */
  role: MembershipRole | null;
  latestTerms: string | null;
  termsAccepted: boolean;
  /** The grant's resource and whether it is revoked (the grant of `grantId`; null without one). */
  grantResource: string | null;
  grantRevoked: boolean | null;
}

const p = (name: string) => sql.placeholder(name);

/**
 * The live state of one user, in one statement, named (prepared once per connection) and run on any executor: the
 * pool on every request, a transaction of the token endpoint. The user is `userId`, or (`userId` null) the user of MCP
 * grant `grantId`; the organization is `organizationId`, else the grant's, else the user's active organization (a
 * session's). With it: the user's membership role there (not removed), the organization's status, the latest Terms of
 * Service and whether the user accepted it, and the grant's resource and revocation.
 */
const LIVE_USER = new NamedStatement<LiveRow>(
  'media_buying_live_user',
  sql`select u.id as "userId", u.public_id as "userPublicId", u.email as "userEmail", u.name as "userName",
      u.disabled_at is not null as "userDisabled",
      o.id as "orgId", o.public_id as "orgPublicId", o.kind as "orgKind", o.name as "orgName", o.status as "orgStatus",
      m.role as "role", t.version as "latestTerms", a.user_id is not null as "termsAccepted",
      g.resource as "grantResource", g.revoked_at is not null as "grantRevoked"
    from ${users} u
    left join ${mcpGrants} g on g.id = ${p('grantId')}::bigint
    left join ${organizations} o
      on o.id = coalesce(${p('organizationId')}::bigint, g.organization_id, u.active_organization_id)
    left join ${memberships} m on m.organization_id = o.id and m.user_id = u.id and m.removed_at is null
    left join (select id, version from ${termsVersions} order by published_at desc, id desc limit 1) t on true
    left join ${termsAcceptances} a on a.user_id = u.id and a.terms_version_id = t.id
    where u.id = coalesce(${p('userId')}::bigint,
      (select gu.user_id from ${mcpGrants} gu where gu.id = ${p('grantId')}::bigint))`,
);

/**
 * The rule "the user is an active member of the organization" on a {@link LIVE_USER} row: the user is enabled, the
 * membership is not removed, the organization is admitted.
 */
function isActiveMember(row: LiveRow | undefined): row is LiveRow {
  return row !== undefined && !row.userDisabled && row.role !== null && row.orgStatus === 'admitted';
}

/**
 * True when user `userId` is an active member of organization `organizationId` now ({@link isActiveMember}): what a
 * connector's grant needs to be worth anything (spec "Authentication" rule 2: a connection ends when the account loses
 * active access). The same statement and rule as every request's caller resolution.
 * @param executor the pool, or the caller's transaction (the token endpoint's, under its grant lock).
 */
export async function hasActiveAccess(
  executor: Executor,
  userId: number,
  organizationId: number,
): Promise<boolean> {
  const [row] = await LIVE_USER.rows(executor, { userId, organizationId, grantId: null });
  return isActiveMember(row);
}

/**
 * Resolves credential holders against live data (module comment), with prepared statements (built once per instance:
 * this runs on every request).
 */
export class Callers {
  private readonly organizationQuery;
  private readonly registrationQuery;

  constructor(private readonly db: Db) {
    this.organizationQuery = db
      .select()
      .from(organizations)
      .where(eq(organizations.id, sql.placeholder('organizationId')))
      .limit(1)
      .prepare('media_buying_caller_organization');
    this.registrationQuery = db
      .select({ organizationId: agentRegistrations.organizationId, state: agentRegistrations.state })
      .from(agentRegistrations)
      .where(eq(agentRegistrations.id, sql.placeholder('id')))
      .limit(1)
      .prepare('media_buying_caller_registration');
  }

  /**
   * Resolves a holder presented to an MCP endpoint whose exact resource URI is `resource` (spec "Authentication",
   * rules 1-3, the `mcp_at_` row). A widget token is refused (`not_for_mcp`); every other credential but `mcp_at_`
   * resolves as on REST ({@link resolve}). An `mcp_at_`
   * access credential authenticates only when its grant is not revoked, the grant's `resource` is `resource` exactly,
   * and its user is an active member of the grant's organization: the caller is then that user acting in that
   * organization with the user's live role there, with the credential's scope ({@link Caller.oauthScopes}).
   * @returns the caller, or why the credential does not authenticate on this endpoint now.
   */
  async resolveForMcp(holder: Holder, resource: string): Promise<Caller | CallerRefusal> {
    // A widget token is for a page embedding the UI's widgets, never an agent's credential (spec "Authentication").
    if (holder.kind === 'widget_token') return 'not_for_mcp';
    if (holder.kind !== 'mcp_access') return this.resolve(holder);
    // One statement: the grant, its user, and the user's membership in the grant's organization.
    const [row] = await LIVE_USER.rows(this.db, {
      userId: null,
      organizationId: null,
      grantId: holder.grantId,
    });
    if (row?.grantRevoked !== false || row.grantResource !== resource) return 'wrong_resource';
    const caller = this.userCallerOf(holder, row, true, null);
    return typeof caller === 'string' ? caller : { ...caller, oauthScopes: holder.scopes };
  }

  /**
   * Resolves a holder against live data (module comment).
   * @returns the caller, or why the credential does not authenticate any more: its user is disabled, or its
   *   organization-bound credential lost its organization (membership removed, organization not admitted).
   */
  resolve(holder: Holder): Promise<Caller | CallerRefusal> {
    switch (holder.kind) {
      case 'session':
        return this.userCaller(holder, holder.userId, null, null);
      case 'user_api_key':
        return this.userCaller(
          holder,
          holder.userId,
          holder.organizationId,
          permissionAccess(holder.permissions),
        );
      case 'widget_token':
        // An embedded widget reads: whatever the user's role, its token never writes or administers.
        return this.userCaller(holder, holder.userId, holder.organizationId, WIDGET_ACCESS);
      case 'org_api_key':
      case 'legacy_key':
        return this.organizationCaller(holder, holder.organizationId, permissionAccess(holder.permissions));
      case 'm2m_token':
        return this.organizationCaller(holder, holder.organizationId, permissionAccess(holder.scopes));
      case 'buyer_agent':
        return this.organizationCaller(holder, holder.organizationId, NO_ACCESS);
      case 'agent_registration':
        return this.registrationCaller(holder);
      case 'mcp_access':
        // MCP credentials are bound to their MCP resource: never a REST caller (spec "Authentication").
        return Promise.resolve('owner_inactive');
    }
  }

  /**
   * A user-bound caller. `boundOrganizationId` is the organization a key or token was bound to (null for a session:
   * the user's active organization); `cap` the key's permission names (null: the role's full access).
   */
  private async userCaller(
    holder: Holder,
    userId: number,
    boundOrganizationId: number | null,
    cap: Access | null,
  ): Promise<Caller | CallerRefusal> {
    const [row] = await LIVE_USER.rows(this.db, {
      userId,
      organizationId: boundOrganizationId,
      grantId: null,
    });
    return this.userCallerOf(holder, row, boundOrganizationId !== null, cap);
  }

  /** The caller of a {@link LIVE_USER} row; `bound`: the credential is bound to the row's organization. */
  private userCallerOf(
    holder: Holder,
    row: LiveRow | undefined,
    bound: boolean,
    cap: Access | null,
  ): Caller | CallerRefusal {
    if (!row || row.userDisabled) return 'owner_inactive';
    const member = isActiveMember(row);
    // A key or token bound to an organization is worth nothing once its owner is not an active member there.
    if (bound && !member) return 'organization_inactive';
    const roleLevel = member ? roleAccess(row.role!) : NO_ACCESS;
    return {
      kind: holder.kind,
      credentialId: holder.credentialId,
      interactive: holder.kind === 'session',
      user: { id: row.userId, publicId: row.userPublicId, email: row.userEmail, name: row.userName },
      organization: member
        ? { id: row.orgId!, publicId: row.orgPublicId!, kind: row.orgKind!, name: row.orgName! }
        : null,
      role: member ? row.role : null,
      access: cap ? intersect(roleLevel, cap) : roleLevel,
      outstandingTerms: row.latestTerms !== null && !row.termsAccepted ? row.latestTerms : null,
    };
  }

  /** An organization-bound caller without a user (organization-owned and legacy keys, M2M tokens, buyer agents). */
  private async organizationCaller(
    holder: Holder,
    organizationId: number,
    access: Access,
  ): Promise<Caller | CallerRefusal> {
    const [org] = await this.organizationQuery.execute({ organizationId });
    if (org?.status !== 'admitted') return 'organization_inactive';
    return {
      kind: holder.kind,
      credentialId: holder.credentialId,
      interactive: false,
      user: null,
      organization: { id: org.id, publicId: org.publicId, kind: org.kind, name: org.name },
      role: null,
      access,
      outstandingTerms: null,
    };
  }

  /**
   * An agent registration credential: the read permission, in the Buyer Account it is bound to (`customer_bound`) or
   * in none (the sandbox of part 2 decides what an unbound registration reads).
   */
  private async registrationCaller(holder: Holder): Promise<Caller | CallerRefusal> {
    const [row] = await this.registrationQuery.execute({ id: holder.credentialId });
    if (!row) return 'owner_inactive';
    const sandbox = { registrationId: holder.credentialId, state: row.state };
    if (row.organizationId !== null) {
      const caller = await this.organizationCaller(holder, row.organizationId, { buyer: 'read' });
      return typeof caller === 'string' ? caller : { ...caller, sandbox };
    }
    return {
      sandbox,
      kind: holder.kind,
      credentialId: holder.credentialId,
      interactive: false,
      user: null,
      organization: null,
      role: null,
      access: { buyer: 'read' },
      outstandingTerms: null,
    };
  }
}
