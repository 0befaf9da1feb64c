/**
 * Connected apps (spec "Resources and fields", connected-app listing; "Authentication" rule 2): the MCP connectors a
 * user approved, one grant per connector (OAuth client) and exact MCP resource URI, each with its first-connected time
 * and the time its credentials were last refreshed. Part 3 makes grants through OAuth; this module lists a user's
 * active grants and disconnects one.
 *
 * Disconnecting ends the connection at once: in one transaction the grant is revoked, every access credential under
 * it (`mcp_at_`) is revoked through the credential kit (so every instance drops it from its cache when the transaction
 * commits) and every refresh credential under it (`mcp_rt_`) is revoked, so the connector can neither call nor
 * refresh. Signing out of the browser does not disconnect anything (rule 2). Losing active access to the organization
 * (removed from it, the organization suspended, the user disabled) ends the connections the same way
 * ({@link ConnectedApps.endConnections}): they do not come back if the access does.
 */
import { and, count, desc, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Clock } from '../../../platform/clock.ts';
import type { Db, Executor } from '../../../platform/database.ts';
import { mcpAccessTokens, mcpGrants, mcpRefreshTokens, oauthClients } from '../db/schema.ts';
import { notFound } from '../media-buying-errors.ts';
import type { CredentialStores } from './stores.ts';

/** A connected app as its user sees it. */
export interface ConnectedAppView {
  /** The grant's id (`mcg_` + 32 hex). */
  id: string;
  /** The connector's name, as its OAuth client registered it. */
  appName: string;
  /** The connector's OAuth `client_id`. */
  clientId: string;
  /**
   * The exact MCP resource URI the connection is bound to (RFC 8707); null for a connector authorized before resource
   * binding (spec rule 1: it must authorize again).
   */
  resource: string | null;
  /** The scope granted (space-separated). */
  scope: string;
  /** When the user first approved the connector for this resource (ISO 8601). */
  firstConnectedAt: string;
  /** When the connector last refreshed its credentials (ISO 8601), or null when it never has. */
  lastRefreshedAt: string | null;
}

/** What a disconnection revoked. */
export interface Disconnection {
  id: string;
  /** Access credentials revoked now (expired ones included; those revoked before are not counted). */
  accessTokensRevoked: number;
  /** Refresh credentials revoked now. */
  refreshTokensRevoked: number;
}

/** The connected apps of users (module comment). */
export class ConnectedApps {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly stores: CredentialStores,
  ) {}

  /**
   * The user's active grants (not disconnected), most recently connected first, one page of them.
   * @returns the page and the total number of active grants.
   */
  async list(
    userId: number,
    page: { skip: number; take: number },
  ): Promise<{ items: ConnectedAppView[]; total: number }> {
    const where = and(eq(mcpGrants.userId, userId), isNull(mcpGrants.revokedAt));
    const rows = await this.db
      .select({
        grant: mcpGrants,
        appName: oauthClients.name,
        clientId: oauthClients.clientId,
        total: sql<number>`count(*) over ()`.mapWith(Number),
      })
      .from(mcpGrants)
      .innerJoin(oauthClients, eq(oauthClients.id, mcpGrants.oauthClientId))
      .where(where)
      .orderBy(desc(mcpGrants.firstConnectedAt), desc(mcpGrants.id))
      .limit(page.take)
      .offset(page.skip);
    // Past the last row the window count is not there: counted on its own (a page past the end).
    const total =
      rows[0]?.total ??
      (page.skip === 0 ? 0 : (await this.db.select({ n: count() }).from(mcpGrants).where(where))[0]!.n);
    return {
      total,
      items: rows.map(({ grant, appName, clientId }) => ({
        id: grant.publicId,
        appName,
        clientId,
        resource: grant.resource,
        scope: grant.scope,
        firstConnectedAt: grant.firstConnectedAt.toISOString(),
        lastRefreshedAt: grant.lastRefreshedAt ? grant.lastRefreshedAt.toISOString() : null,
      })),
    };
  }

  /**
   * Disconnects one of the user's apps (module comment), in `tx`. The grant row is locked first, so two concurrent
   * disconnections revoke once and the second is a 404.
   * @throws ApiError 404 `NOT_FOUND` for an unknown id, another user's grant, or one already disconnected (the same
   *   answer: another user's grants are never revealed).
   */
  /**
   * Ends, in `tx`, every live connection of user `userId` and/or in organization `organizationId` (at least one
   * given): the connections whose access was lost (spec "Authentication" rule 2: they end when the account loses
   * access). Grants are locked first, as a code exchange or refresh under way holds its grant's lock while it issues,
   * so what such a one issued is committed before the revocations, and revoked with the rest.
   * @returns how many connections ended.
   */
  async endConnections(tx: Executor, who: { userId?: number; organizationId?: number }): Promise<number> {
    if (who.userId === undefined && who.organizationId === undefined)
      throw new Error('endConnections needs a user or an organization');
    const grants = await tx
      .select({ id: mcpGrants.id })
      .from(mcpGrants)
      .where(
        and(
          isNull(mcpGrants.revokedAt),
          who.userId === undefined ? undefined : eq(mcpGrants.userId, who.userId),
          who.organizationId === undefined ? undefined : eq(mcpGrants.organizationId, who.organizationId),
        ),
      )
      .for('update');
    if (grants.length === 0) return 0;
    const ids = grants.map((g) => g.id);
    const now = this.clock.now();
    await tx.update(mcpGrants).set({ revokedAt: now }).where(inArray(mcpGrants.id, ids));
    await this.stores.mcpAccessTokens.revokeWhere(inArray(mcpAccessTokens.grantId, ids), tx);
    await tx
      .update(mcpRefreshTokens)
      .set({ revokedAt: now })
      .where(and(inArray(mcpRefreshTokens.grantId, ids), isNull(mcpRefreshTokens.revokedAt)));
    return ids.length;
  }

  async disconnect(tx: Executor, userId: number, publicId: string): Promise<Disconnection> {
    const [grant] = await tx
      .select({ id: mcpGrants.id })
      .from(mcpGrants)
      .where(and(eq(mcpGrants.publicId, publicId), eq(mcpGrants.userId, userId), isNull(mcpGrants.revokedAt)))
      .for('update');
    if (!grant) throw notFound('Connected app', publicId);
    const now = this.clock.now();
    await tx.update(mcpGrants).set({ revokedAt: now }).where(eq(mcpGrants.id, grant.id));
    const access = await this.stores.mcpAccessTokens.revokeWhere(eq(mcpAccessTokens.grantId, grant.id), tx);
    const refresh = await tx
      .update(mcpRefreshTokens)
      .set({ revokedAt: now })
      .where(and(eq(mcpRefreshTokens.grantId, grant.id), isNull(mcpRefreshTokens.revokedAt)))
      .returning({ id: mcpRefreshTokens.id });
    return { id: publicId, accessTokensRevoked: access.length, refreshTokensRevoked: refresh.length };
  }
}
