/**
 * Identities and scope of the gateway (spec 002 section E, "E. Identities" and "Authentication"): operator-created
 * users who sign in with a password (argon2id) for an opaque, expiring session token; tenants and namespaces; a
 * user's role per scope; and the other credential kinds of the spec's table (runtime host credential, task or
 * attempt token, environment key, internal service token), all on the platform credential kit.
 */
import { and, eq, isNull, or, sql } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.ts';
import type { CredentialRecord } from '../../platform/credentials.ts';
import type { Db, Executor } from '../../platform/database.ts';
import { prefixedHexId } from '../../platform/ids.ts';
import { hashPassword, verifyPassword } from '../../platform/passwords.ts';
import type { ServiceContext } from '../../platform/service.ts';
import {
  badRequest,
  insufficientRole,
  invalidCredentials,
  invalidState,
  notFound,
  scopeForbidden,
} from './agent-gateway-errors.ts';
import { credentials, environments, namespaces, roleBindings, tenants, users } from './db/schema.ts';

/** The kinds of credential, each with its own prefix and its own routes (never interchangeable). */
export type CredentialKind = 'session' | 'host' | 'environment' | 'attempt' | 'internal';

/** The secret prefix of each credential kind. */
export const CREDENTIAL_PREFIXES: Record<CredentialKind, string> = {
  session: 'ags_',
  host: 'agh_',
  environment: 'age_',
  attempt: 'aga_',
  internal: 'agi_',
};

/** How each kind is named in messages. */
export const CREDENTIAL_NAMES: Record<CredentialKind, string> = {
  session: 'a user bearer token',
  host: 'a runtime host credential',
  environment: 'an environment key (X-Builder-Environment-Key)',
  attempt: 'a task or attempt token',
  internal: 'an internal service token',
};

/** The caller behind any credential of the gateway: its kind and what it is bound to. */
export interface CredentialPrincipal {
  credentialId: number;
  kind: CredentialKind;
  userId: string | null;
  environmentId: string | null;
  executionId: string | null;
  sessionId: string | null;
}

/** The fields of a credential in operator records (beside the kit's). */
export interface CredentialAttributes {
  kind: CredentialKind;
  userId: string | null;
  environmentId: string | null;
}

/** The gateway's credential store (one table, every kind). */
export function createCredentialStore(ctx: ServiceContext) {
  return ctx.credentialStore<typeof credentials, CredentialPrincipal, CredentialAttributes>({
    table: credentials,
    prefixes: Object.values(CREDENTIAL_PREFIXES),
    principal: (row) => ({
      credentialId: row.id,
      kind: row.kind,
      userId: row.userId,
      environmentId: row.environmentId,
      executionId: row.executionId,
      sessionId: row.sessionId,
    }),
    attributes: (row) => ({ kind: row.kind, userId: row.userId, environmentId: row.environmentId }),
  });
}

/** The credential store of the gateway. */
export type CredentialStore = ReturnType<typeof createCredentialStore>;

/** Roles in a scope, weakest first: `viewer` reads, `editor` also writes, `admin` also publishes and automates. */
export const ROLES = ['viewer', 'editor', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** True when `has` is at least `needs`. */
export function roleAllows(has: Role, needs: Role): boolean {
  return ROLES.indexOf(has) >= ROLES.indexOf(needs);
}

/** A tenant and namespace pair. */
export interface Scope {
  tenant: string;
  namespace: string;
}

/** A user as the API shows it (never the password hash). */
export interface UserView {
  id: string;
  username: string;
  displayName: string;
  createdAt: string;
  /** When the operator disabled the user, or null. */
  disabledAt: string | null;
}

/** The pieces of identity: users, sign-in, scopes, roles, environments. */
export class IdentityService {
  /** The roles of a user in a scope (hot: every product request), built once as a named prepared statement. */
  private readonly rolesInScope;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly keys: CredentialStore,
    private readonly sessionTtlSeconds: number,
  ) {
    this.rolesInScope = db
      .select({ role: roleBindings.role })
      .from(roleBindings)
      .where(
        and(
          eq(roleBindings.userId, sql.placeholder('userId')),
          eq(roleBindings.tenantId, sql.placeholder('tenant')),
          or(eq(roleBindings.namespaceId, sql.placeholder('namespace')), eq(roleBindings.namespaceId, '*')),
        ),
      )
      .prepare('agent_gateway_roles_in_scope');
  }

  /**
   * Creates a user (operator). The username is kept as given, matched case-insensitively.
   * @throws ApiError 409 `invalid_state` when the username is taken.
   */
  async createUser(
    input: { username: string; password: string; displayName?: string },
    executor: Executor = this.db,
  ): Promise<UserView> {
    const username = input.username.toLowerCase();
    const [taken] = await executor.select({ id: users.id }).from(users).where(eq(users.username, username));
    if (taken) throw invalidState(`The username '${username}' is taken.`);
    const [row] = await executor
      .insert(users)
      .values({
        id: prefixedHexId('usr'),
        username,
        displayName: input.displayName ?? username,
        passwordHash: await hashPassword(input.password),
        createdAt: this.clock.now(),
      })
      .returning();
    return userView(row!);
  }

  /** One user by id (operator), or undefined. */
  async findUser(id: string, executor: Executor = this.db): Promise<UserView | undefined> {
    const [row] = await executor.select().from(users).where(eq(users.id, id));
    return row ? userView(row) : undefined;
  }

  /**
   * Signs a user in: verifies the password (argon2id, constant time; an unknown username costs the same) and issues
   * a session token (`ags_...`, shown once, SHA-256 at rest) expiring after the session lifetime.
   * @throws ApiError 401 `invalid_credentials` for an unknown username or a wrong password (one answer for both).
   */
  async login(
    username: string,
    password: string,
  ): Promise<{ token: string; expiresAt: Date; user: UserView }> {
    const [row] = await this.db.select().from(users).where(eq(users.username, username.toLowerCase()));
    // An unknown username costs the same argon2 work as a known one (platform passwords.ts); a disabled user
    // answers as a wrong password (nothing tells a guesser the account exists).
    if (!(await verifyPassword(password, row?.passwordHash ?? null)) || !row || row.disabledAt)
      throw invalidCredentials();
    const expiresAt = new Date(this.clock.nowMs() + this.sessionTtlSeconds * 1000);
    // Issued while the user row is share-locked and still enabled: a disable racing this sign-in either comes first
    // (refused here) or waits and then revokes this token with the others.
    const issued = await this.db.transaction(async (tx) => {
      const [live] = await tx
        .select({ id: users.id })
        .from(users)
        .where(and(eq(users.id, row.id), isNull(users.disabledAt)))
        .for('share');
      if (!live) throw invalidCredentials();
      return this.issueSession(row.id, expiresAt, 'login', tx);
    });
    return { token: issued.key, expiresAt, user: userView(row) };
  }

  /** Issues a session token for a user (login, or the operator), expiring at `expiresAt`. */
  async issueSession(userId: string, expiresAt: Date, label: string, executor: Executor = this.db) {
    return this.keys.issue(executor, {
      prefix: CREDENTIAL_PREFIXES.session,
      label,
      expiresAt,
      values: { kind: 'session', userId },
    });
  }

  /**
   * Disables a user (operator): no sign-in, and every session token of the user is revoked in the same transaction
   * (on every instance at once, the credential kit's NOTIFY). Disabling a disabled user changes nothing.
   * @throws ApiError 404 for an unknown user.
   */
  async disableUser(id: string): Promise<UserView & { revokedTokens: number }> {
    return this.db.transaction(async (tx) => {
      const [row] = await tx
        .update(users)
        .set({ disabledAt: sql`coalesce(${users.disabledAt}, ${this.clock.now()})` })
        .where(eq(users.id, id))
        .returning();
      if (!row) throw notFound('user', id);
      const revoked = await this.keys.revokeWhere(
        and(eq(credentials.kind, 'session'), eq(credentials.userId, id))!,
        tx,
      );
      return { ...userView(row), revokedTokens: revoked.length };
    });
  }

  /** Enables a disabled user again (operator); they sign in anew. @throws ApiError 404 for an unknown user. */
  async enableUser(id: string): Promise<UserView> {
    const [row] = await this.db.update(users).set({ disabledAt: null }).where(eq(users.id, id)).returning();
    if (!row) throw notFound('user', id);
    return userView(row);
  }

  /**
   * Removes a user's role binding (operator): the user loses that role at once (every product request reads the
   * bindings). `namespace` `*` names the tenant-wide binding.
   * @throws ApiError 404 when the user has no such binding.
   */
  async revokeRole(input: { userId: string; tenant: string; namespace: string }): Promise<void> {
    const deleted = await this.db
      .delete(roleBindings)
      .where(
        and(
          eq(roleBindings.userId, input.userId),
          eq(roleBindings.tenantId, input.tenant),
          eq(roleBindings.namespaceId, input.namespace),
        ),
      )
      .returning({ userId: roleBindings.userId });
    if (deleted.length === 0)
      throw notFound('role binding', `${input.userId} on ${input.tenant}/${input.namespace}`);
  }

  /** Signs out: revokes the session credential on every instance at once. */
  async logout(credentialId: number): Promise<void> {
    await this.keys.revoke(credentialId);
  }

  /** The scopes where a user has a role (`namespace` `*`: every namespace of the tenant). */
  async scopesOf(userId: string): Promise<{ tenant: string; namespace: string; role: Role }[]> {
    const rows = await this.db
      .select()
      .from(roleBindings)
      .where(eq(roleBindings.userId, userId))
      .orderBy(roleBindings.tenantId, roleBindings.namespaceId);
    return rows.map((r) => ({ tenant: r.tenantId, namespace: r.namespaceId, role: r.role }));
  }

  /**
   * The user's role in `scope` (the strongest of a binding on the namespace and one on the whole tenant), checked
   * against `needs`.
   * @throws ApiError 403 `scope_forbidden` when the user has no role there (or the scope does not exist: the same
   *   answer), 403 `insufficient_role` when the role is weaker than `needs`.
   */
  async authorize(userId: string, scope: Scope, needs: Role): Promise<Role> {
    const rows = await this.rolesInScope.execute({
      userId,
      tenant: scope.tenant,
      namespace: scope.namespace,
    });
    if (rows.length === 0) throw scopeForbidden(scope.tenant, scope.namespace);
    const role = rows.map((r) => r.role).sort((a, b) => ROLES.indexOf(b) - ROLES.indexOf(a))[0]!;
    if (!roleAllows(role, needs)) throw insufficientRole(needs, role);
    return role;
  }

  /**
   * Creates a tenant (operator).
   * @throws ApiError 409 `invalid_state` when the id is taken.
   */
  async createTenant(input: { id: string; name: string }, executor: Executor = this.db) {
    const [taken] = await executor.select().from(tenants).where(eq(tenants.id, input.id));
    if (taken) throw invalidState(`The tenant id '${input.id}' is taken.`);
    const [row] = await executor
      .insert(tenants)
      .values({ id: input.id, name: input.name, createdAt: this.clock.now() })
      .returning();
    return { id: row!.id, name: row!.name, createdAt: row!.createdAt.toISOString() };
  }

  /**
   * Creates a namespace of a tenant (operator).
   * @throws ApiError 404 for an unknown tenant; 409 `invalid_state` when the id is taken in that tenant.
   */
  async createNamespace(input: { tenant: string; id: string; name: string }, executor: Executor = this.db) {
    const [tenant] = await executor.select().from(tenants).where(eq(tenants.id, input.tenant));
    if (!tenant) throw notFound('tenant', input.tenant);
    const [taken] = await executor
      .select()
      .from(namespaces)
      .where(and(eq(namespaces.tenantId, input.tenant), eq(namespaces.id, input.id)));
    if (taken) throw invalidState(`The namespace id '${input.id}' is taken in tenant '${input.tenant}'.`);
    const [row] = await executor
      .insert(namespaces)
      .values({ tenantId: input.tenant, id: input.id, name: input.name, createdAt: this.clock.now() })
      .returning();
    return { tenant: row!.tenantId, id: row!.id, name: row!.name, createdAt: row!.createdAt.toISOString() };
  }

  /**
   * Grants (or changes) a user's role in a scope (operator); `namespace` `*` is every namespace of the tenant.
   * @throws ApiError 404 for an unknown user, tenant or namespace.
   */
  async grant(
    input: { userId: string; tenant: string; namespace: string; role: Role },
    executor: Executor = this.db,
  ) {
    if (!(await this.findUser(input.userId, executor))) throw notFound('user', input.userId);
    await this.requireScope({ tenant: input.tenant, namespace: input.namespace }, executor, true);
    await executor
      .insert(roleBindings)
      .values({ ...input, namespaceId: input.namespace, tenantId: input.tenant, createdAt: this.clock.now() })
      .onConflictDoUpdate({
        target: [roleBindings.userId, roleBindings.tenantId, roleBindings.namespaceId],
        set: { role: input.role },
      });
    return { userId: input.userId, tenant: input.tenant, namespace: input.namespace, role: input.role };
  }

  /**
   * Checks that a scope exists (operator routes).
   * @throws ApiError 404 for an unknown tenant or namespace.
   */
  async requireScope(scope: Scope, executor: Executor = this.db, allowWildcard = false): Promise<void> {
    const [tenant] = await executor.select().from(tenants).where(eq(tenants.id, scope.tenant));
    if (!tenant) throw notFound('tenant', scope.tenant);
    if (allowWildcard && scope.namespace === '*') return;
    const [ns] = await executor
      .select()
      .from(namespaces)
      .where(and(eq(namespaces.tenantId, scope.tenant), eq(namespaces.id, scope.namespace)));
    if (!ns) throw notFound('namespace', scope.namespace);
  }

  /** Creates an execution environment in a scope (operator). @throws ApiError 404 for an unknown scope. */
  async createEnvironment(input: Scope & { name: string }, executor: Executor = this.db) {
    await this.requireScope(input, executor);
    const [row] = await executor
      .insert(environments)
      .values({
        id: prefixedHexId('env'),
        tenantId: input.tenant,
        namespaceId: input.namespace,
        name: input.name,
        createdAt: this.clock.now(),
      })
      .returning();
    return environmentView(row!);
  }

  /** One environment, or undefined. */
  async findEnvironment(id: string, executor: Executor = this.db) {
    const [row] = await executor.select().from(environments).where(eq(environments.id, id));
    return row ? environmentView(row) : undefined;
  }

  /**
   * Issues a credential of `kind` (operator, `POST /_ops/keys`): a session token for `userId` (expiring), a host
   * credential or environment key for `environmentId`, or an internal service token. Attempt tokens are issued
   * by execution claims only.
   * @throws ApiError 400 for a missing or unknown owner, or kind `attempt`.
   */
  async issueCredential(
    executor: Executor,
    input: {
      kind: CredentialKind;
      label?: string;
      userId?: string;
      environmentId?: string;
      expiresInSeconds?: number;
    },
  ) {
    const values = {
      kind: input.kind,
      userId: null as string | null,
      environmentId: null as string | null,
    };
    let expiresAt: Date | null = input.expiresInSeconds
      ? new Date(this.clock.nowMs() + input.expiresInSeconds * 1000)
      : null;
    if (input.kind === 'attempt')
      throw badRequest('invalid_credential_kind', 'Attempt tokens are issued by execution claims only.');
    if (input.kind === 'session') {
      const owner = input.userId ? await this.findUser(input.userId, executor) : undefined;
      if (!owner) throw badRequest('invalid_owner', 'A session token needs userId of an existing user.');
      if (owner.disabledAt)
        throw badRequest('invalid_owner', `User '${owner.id}' is disabled; enable it first.`);
      values.userId = owner.id;
      expiresAt ??= new Date(this.clock.nowMs() + this.sessionTtlSeconds * 1000);
    }
    if (input.kind === 'host' || input.kind === 'environment') {
      if (!input.environmentId || !(await this.findEnvironment(input.environmentId, executor)))
        throw badRequest(
          'invalid_owner',
          `A ${input.kind} credential needs environmentId of an existing environment.`,
        );
      values.environmentId = input.environmentId;
    }
    return this.keys.issue(executor, {
      prefix: CREDENTIAL_PREFIXES[input.kind],
      label: input.label ?? null,
      expiresAt,
      values,
    });
  }

  /** The operator record of a credential row. */
  record(row: Parameters<CredentialStore['record']>[0]): Promise<CredentialRecord<CredentialAttributes>> {
    return this.keys.record(row);
  }
}

function userView(row: typeof users.$inferSelect): UserView {
  return {
    id: row.id,
    username: row.username,
    displayName: row.displayName,
    createdAt: row.createdAt.toISOString(),
    disabledAt: row.disabledAt ? row.disabledAt.toISOString() : null,
  };
}

function environmentView(row: typeof environments.$inferSelect) {
  return {
    id: row.id,
    tenant: row.tenantId,
    namespace: row.namespaceId,
    name: row.name,
    createdAt: row.createdAt.toISOString(),
  };
}
