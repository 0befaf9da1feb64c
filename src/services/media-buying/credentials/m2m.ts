/**
 * M2M applications (spec "Authentication", M2M application row; "Credentials and activation", `/api/v2/m2m-applications`):
 * OAuth 2.0 clients of an organization for the client-credentials grant (RFC 6749 section 4.4). Creation answers the
 * client secret once, with the token endpoint and the resource indicator (RFC 8707) its tokens are for. Tokens are
 * short-lived JWT access tokens (RFC 9068, ES256, `jose`) verified against the service's published keys; two client
 * secrets may be valid at once so a rotation never breaks a running backend; deleting the application makes every
 * token it already got refused at the next request, on every instance (the token's application is read live).
 */
import { and, asc, eq, isNull } from 'drizzle-orm';
import type { JWTPayload } from 'jose';
import type { Clock } from '../../../platform/clock.ts';
import { type CredentialSource, JwtCredentialSource } from '../../../platform/credentials.ts';
import { constantTimeEqual } from '../../../platform/crypto.ts';
import type { Db, Executor } from '../../../platform/database.ts';
import { prefixedHexId, randomToken } from '../../../platform/ids.ts';
import { SIGNING_ALGORITHM, type SigningKeys } from '../../../platform/signing-keys.ts';
import { type KeyPermission, m2mApplications, m2mClientSecrets, organizations } from '../db/schema.ts';
import { conflict, notFound } from '../media-buying-errors.ts';
import type { CredentialStores, Holder } from './stores.ts';

/** The permission names an M2M application may hold (never administration: no credential creates another). */
export const M2M_PERMISSIONS = ['platform:read', 'platform:write', 'buyer:read', 'buyer:write'] as const;
export type M2mPermission = (typeof M2M_PERMISSIONS)[number];

/** Lifetime of an M2M access token, in seconds. */
export const M2M_TOKEN_SECONDS = 600;

/** Client secrets valid at once per application (the old and the new one, during a rotation). */
export const MAX_ACTIVE_SECRETS = 2;

/** An M2M application as its organization's administrators see it (never a secret). */
export interface M2mApplicationView {
  id: string;
  name: string;
  clientId: string;
  permissions: M2mPermission[];
  secrets: { id: number; hint: string; createdAt: string; expiresAt: string | null }[];
  createdAt: string;
}

/** Why a token request fails (RFC 6749 section 5.2). */
export type TokenRequestError = 'invalid_client' | 'invalid_scope' | 'invalid_target';

/** M2M applications, their secrets and their tokens. */
export class M2mApplications {
  /** Verifies the service's M2M JWTs (issuer: the public URL; audience: the REST resource). */
  readonly tokens: CredentialSource<Holder>;
  private verifier: { issuer: string; source: JwtCredentialSource<Holder> } | undefined;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly stores: CredentialStores,
    private readonly keys: SigningKeys,
    /** The service's public URL (read at use: a test platform learns its port after setup). */
    private readonly publicUrl: () => string,
  ) {
    this.tokens = { resolve: (secret) => this.verifierFor(this.issuer).resolve(secret) };
  }

  /** The tokens' issuer: the service's public URL. */
  get issuer(): string {
    return this.publicUrl();
  }

  /** The REST API's resource indicator (RFC 8707): the tokens' audience. */
  get resource(): string {
    return `${this.publicUrl()}/api/v2`;
  }

  /** The token endpoint (RFC 6749 section 3.2). */
  get tokenEndpoint(): string {
    return `${this.issuer}/oauth/token`;
  }

  private verifierFor(issuer: string): JwtCredentialSource<Holder> {
    if (this.verifier?.issuer !== issuer) {
      this.verifier = {
        issuer,
        source: new JwtCredentialSource<Holder>({
          keys: this.keys.getKey,
          issuer,
          audience: `${issuer}/api/v2`,
          algorithms: [SIGNING_ALGORITHM],
          typ: 'at+jwt',
          clock: this.clock,
          principal: (claims) => this.holderOf(claims),
        }),
      };
    }
    return this.verifier.source;
  }

  /**
   * Creates an application of organization `organizationId` with its first client secret (shown once).
   * @returns the application and `clientSecret`.
   */
  async create(
    tx: Executor,
    input: { organizationId: number; name: string; permissions: M2mPermission[]; createdByUserId: number },
  ): Promise<{ application: M2mApplicationView; clientSecret: string }> {
    const [row] = await tx
      .insert(m2mApplications)
      .values({
        publicId: prefixedHexId('m2m'),
        organizationId: input.organizationId,
        name: input.name,
        clientId: `mbc_${randomToken(18)}`,
        permissions: [...new Set(input.permissions)],
        createdByUserId: input.createdByUserId,
        createdAt: this.clock.now(),
      })
      .returning();
    const secret = await this.stores.m2mClientSecrets.issue(tx, { values: { applicationId: row!.id } });
    return { application: await this.view(row!, tx), clientSecret: secret.key };
  }

  /** The organization's applications, oldest first (deleted ones are gone). */
  async list(organizationId: number): Promise<M2mApplicationView[]> {
    const rows = await this.db
      .select()
      .from(m2mApplications)
      .where(and(eq(m2mApplications.organizationId, organizationId), isNull(m2mApplications.deletedAt)))
      .orderBy(asc(m2mApplications.id));
    return Promise.all(rows.map((r) => this.view(r, this.db)));
  }

  /** One application of the organization. @throws ApiError 404 for another organization's or a deleted one. */
  async get(
    organizationId: number,
    publicId: string,
    executor: Executor = this.db,
  ): Promise<M2mApplicationView> {
    return this.view(await this.row(organizationId, publicId, executor), executor);
  }

  /**
   * Renames an application or changes its permissions (tokens issued before keep their scope until they expire; the
   * scope is capped by the application's permissions at every request).
   * @throws ApiError 404.
   */
  async update(
    tx: Executor,
    organizationId: number,
    publicId: string,
    patch: { name?: string; permissions?: M2mPermission[] },
  ): Promise<M2mApplicationView> {
    const row = await this.row(organizationId, publicId, tx, true);
    const [updated] = await tx
      .update(m2mApplications)
      .set({
        ...(patch.name !== undefined ? { name: patch.name } : {}),
        ...(patch.permissions !== undefined ? { permissions: [...new Set(patch.permissions)] } : {}),
      })
      .where(eq(m2mApplications.id, row.id))
      .returning();
    return this.view(updated!, tx);
  }

  /**
   * Adds a client secret for a rotation (shown once). An application has at most {@link MAX_ACTIVE_SECRETS} valid
   * secrets: delete the old one once every backend uses the new one.
   * @throws ApiError 404; 409 `CONFLICT` with two valid secrets already.
   */
  async addSecret(
    tx: Executor,
    organizationId: number,
    publicId: string,
  ): Promise<{ application: M2mApplicationView; clientSecret: string; secretId: number }> {
    const row = await this.row(organizationId, publicId, tx, true);
    const active = await this.activeSecrets(row.id, tx);
    if (active.length >= MAX_ACTIVE_SECRETS)
      throw conflict(
        `An application has at most ${MAX_ACTIVE_SECRETS} valid client secrets; delete the old one first.`,
        { secretIds: active.map((s) => s.id) },
      );
    const secret = await this.stores.m2mClientSecrets.issue(tx, { values: { applicationId: row.id } });
    return { application: await this.view(row, tx), clientSecret: secret.key, secretId: secret.row.id };
  }

  /** Deletes (revokes) one client secret. @throws ApiError 404 for an unknown secret of this application. */
  async deleteSecret(
    tx: Executor,
    organizationId: number,
    publicId: string,
    secretId: number,
  ): Promise<void> {
    const row = await this.row(organizationId, publicId, tx, true);
    const revoked = await this.stores.m2mClientSecrets.revoke(secretId, {
      executor: tx,
      allowed: (secret) => secret.applicationId === row.id && secret.revokedAt === null,
    });
    if (!revoked) throw notFound('Client secret', String(secretId));
  }

  /**
   * Deletes an application: its secrets are revoked and every token it already got is refused from now on.
   * @throws ApiError 404.
   */
  async delete(tx: Executor, organizationId: number, publicId: string): Promise<void> {
    const row = await this.row(organizationId, publicId, tx, true);
    await tx
      .update(m2mApplications)
      .set({ deletedAt: this.clock.now() })
      .where(eq(m2mApplications.id, row.id));
    await this.stores.m2mClientSecrets.revokeWhere(eq(m2mClientSecrets.applicationId, row.id), tx);
  }

  /**
   * The client-credentials grant: authenticates `clientId` with `clientSecret` (either of its valid secrets, compared
   * through their SHA-256) and issues an access token for `resource` (default: the REST API) with the requested
   * `scope` (default: every permission of the application).
   * @returns the token response (RFC 6749 section 5.1), or the RFC 6749 error code.
   */
  async issueToken(input: {
    clientId: string;
    clientSecret: string;
    scope?: string;
    resource?: string;
  }): Promise<
    | { access_token: string; token_type: 'Bearer'; expires_in: number; scope: string }
    | { error: TokenRequestError }
  > {
    const [app] = await this.db
      .select()
      .from(m2mApplications)
      .innerJoin(organizations, eq(organizations.id, m2mApplications.organizationId))
      .where(and(eq(m2mApplications.clientId, input.clientId), isNull(m2mApplications.deletedAt)))
      .limit(1);
    const secret = await this.stores.m2mClientSecrets.resolve(input.clientSecret);
    const valid =
      app !== undefined &&
      secret.status === 'active' &&
      secret.principal.applicationId === app.m2m_applications.id &&
      constantTimeEqual(app.m2m_applications.clientId, input.clientId);
    if (!valid || app.organizations.status !== 'admitted') return { error: 'invalid_client' };
    if (input.resource !== undefined && input.resource !== this.resource) return { error: 'invalid_target' };
    const allowed = app.m2m_applications.permissions as M2mPermission[];
    const requested = input.scope === undefined ? allowed : input.scope.split(' ').filter(Boolean);
    if (requested.length === 0 || requested.some((s) => !allowed.includes(s as M2mPermission)))
      return { error: 'invalid_scope' };
    const scope = requested.join(' ');
    const accessToken = await this.keys.sign(
      {
        iss: this.issuer,
        aud: this.resource,
        sub: app.m2m_applications.publicId,
        client_id: app.m2m_applications.clientId,
        org: app.organizations.publicId,
        scope,
        jti: randomToken(16),
      },
      { typ: 'at+jwt', lifetimeSeconds: M2M_TOKEN_SECONDS },
    );
    return { access_token: accessToken, token_type: 'Bearer', expires_in: M2M_TOKEN_SECONDS, scope };
  }

  /** The holder of a verified token: its application, live (a deleted application's tokens are `revoked`). */
  private async holderOf(claims: JWTPayload): Promise<Holder | 'revoked' | 'unknown'> {
    if (typeof claims.client_id !== 'string' || typeof claims.scope !== 'string') return 'unknown';
    const [app] = await this.db
      .select()
      .from(m2mApplications)
      .where(eq(m2mApplications.clientId, claims.client_id))
      .limit(1);
    if (!app) return 'unknown';
    if (app.deletedAt) return 'revoked';
    const current = new Set(app.permissions);
    const scopes = claims.scope.split(' ').filter((s): s is KeyPermission => current.has(s as KeyPermission));
    return { kind: 'm2m_token', credentialId: app.id, organizationId: app.organizationId, scopes };
  }

  private async row(organizationId: number, publicId: string, executor: Executor, lock = false) {
    const query = executor
      .select()
      .from(m2mApplications)
      .where(
        and(
          eq(m2mApplications.publicId, publicId),
          eq(m2mApplications.organizationId, organizationId),
          isNull(m2mApplications.deletedAt),
        ),
      )
      .limit(1);
    const [row] = lock ? await query.for('update') : await query;
    if (!row) throw notFound('M2M application', publicId);
    return row;
  }

  private activeSecrets(applicationId: number, executor: Executor) {
    return this.stores.m2mClientSecrets.list({
      where: eq(m2mClientSecrets.applicationId, applicationId),
      executor,
    });
  }

  private async view(
    row: typeof m2mApplications.$inferSelect,
    executor: Executor,
  ): Promise<M2mApplicationView> {
    const secrets = await this.activeSecrets(row.id, executor);
    return {
      id: row.publicId,
      name: row.name,
      clientId: row.clientId,
      permissions: row.permissions as M2mPermission[],
      secrets: secrets
        .map((s) => ({
          id: s.id,
          hint: s.hint,
          createdAt: s.createdAt.toISOString(),
          expiresAt: s.expiresAt ? s.expiresAt.toISOString() : null,
        }))
        .reverse(),
      createdAt: row.createdAt.toISOString(),
    };
  }
}
