/**
 * The token and revocation endpoints of MCP connectors (RFC 6749 sections 4.1.3 and 6, PKCE RFC 7636, resource
 * indicators RFC 8707, revocation RFC 7009; spec "Authentication", rules 1-3):
 *
 * - `authorization_code`: the code (single use), the client, the redirect URI, the PKCE verifier (S256) and `resource`
 *   must all match what the code was issued for; the credentials carry the scope the user approved for the code. A
 *   code presented a second time revokes the credentials issued from it (RFC 6749 section 4.1.2: its family).
 * - `refresh_token`: rotating. Each use revokes the presented `mcp_rt_` by marking it rotated and issues a new pair;
 *   `resource` must be the grant's exactly (rule 3); `scope`, when sent, must be within the presented credential's own
 *   scope, and the new pair carries what was asked for (RFC 6749 section 6: a refresh narrows or keeps, never widens;
 *   `invalid_scope` otherwise). A rotated refresh credential presented again within {@link REFRESH_GRACE_SECONDS} of
 *   its rotation, while none of the credentials it issued has been used yet, is a concurrent refresh (two requests of
 *   one client crossing) and gets a new pair too, a sibling of the first: the first sibling used supersedes the
 *   others, and presenting a superseded sibling is a replay. Presented later, or after one of its successors was used,
 *   a rotated credential is a replay: the grant and every credential under it are revoked (the whole grant family; the
 *   user must connect the app again). So the grace window never forks a second lineage that replay detection cannot
 *   see. A grant authorized before resource binding (no `resource`) is refused (rule 1), and so is one whose user lost
 *   active access to the grant's organization (that ends the grant: rule 2). `last_refreshed_at` of the grant is
 *   updated.
 * - Every failure of a grant is `invalid_grant` (RFC 6749 section 5.2); a `resource` that is no MCP endpoint's URI at
 *   all is `invalid_target` (RFC 8707 section 2).
 *
 * Lifetimes: an `mcp_at_` lives {@link ACCESS_TOKEN_SECONDS}; an `mcp_rt_` has no time limit: the connection ends only
 * when the account loses active access, on the platform-wide security sign-out or on disconnect (rule 2), and each
 * use replaces it. Both are opaque (`<prefix>` + 43 characters) and stored as SHA-256 (access credentials through the
 * credential kit's `mcpAccessTokens` store, so a revocation reaches every instance's cache at once).
 */
import { and, eq, isNotNull, isNull, ne } from 'drizzle-orm';
import type { Clock } from '../../../../platform/clock.ts';
import {
  constantTimeEqual,
  hashApiKey,
  issueApiKey,
  pkceS256Challenge,
} from '../../../../platform/crypto.ts';
import type { Db, Executor } from '../../../../platform/database.ts';
import { type CredentialStores, hasActiveAccess, PREFIX } from '../../credentials/index.ts';
import {
  mcpAccessTokens,
  mcpGrants,
  mcpRefreshTokens,
  oauthAuthorizationCodes,
  oauthClients,
} from '../../db/schema.ts';
import { mcpTargetOfResource } from '../contract.ts';
import { narrowScope } from './scopes.ts';

/** Lifetime of an `mcp_at_` access credential, in seconds (one hour). */
export const ACCESS_TOKEN_SECONDS = 3600;
/** How long after its rotation a refresh credential may still be used by a concurrent refresh, in seconds. */
export const REFRESH_GRACE_SECONDS = 30;

/** A successful token answer (RFC 6749 section 5.1). */
export interface TokenAnswer {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/** A failed token request (RFC 6749 section 5.2; RFC 8707 `invalid_target`). */
export interface TokenFailure {
  error: 'invalid_request' | 'invalid_grant' | 'invalid_target' | 'invalid_scope';
  error_description: string;
}

const failure = (error: TokenFailure['error'], description: string): TokenFailure => ({
  error,
  error_description: description,
});

const REFRESH_FORMAT = new RegExp(`^${PREFIX.mcpRefresh}[A-Za-z0-9_-]{43}$`);
const VERIFIER_FORMAT = /^[A-Za-z0-9\-._~]{43,128}$/;

type GrantRow = typeof mcpGrants.$inferSelect;
type RefreshRow = typeof mcpRefreshTokens.$inferSelect;

/** The token and revocation endpoints (module comment). */
export class McpTokens {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly stores: CredentialStores,
    private readonly publicUrl: () => string,
  ) {}

  /** The `authorization_code` grant (module comment). */
  async exchangeCode(input: {
    clientId: string | undefined;
    code: string | undefined;
    codeVerifier: string | undefined;
    redirectUri: string | undefined;
    resource: string | undefined;
  }): Promise<TokenAnswer | TokenFailure> {
    if (!input.code || !input.clientId || !input.codeVerifier || !input.redirectUri)
      return failure('invalid_request', 'code, client_id, code_verifier and redirect_uri are required.');
    const target = this.targetError(input.resource);
    if (target) return target;
    return this.db.transaction(async (tx) => {
      const [code] = await tx
        .select()
        .from(oauthAuthorizationCodes)
        .where(eq(oauthAuthorizationCodes.codeHash, hashApiKey(input.code!)))
        .for('update');
      // The grant is locked (order: code, then grant; a disconnection never locks codes): a disconnection running
      // now either finishes first (the grant is then seen revoked) or waits for this exchange and revokes what it
      // issued. Unlocked, credentials inserted concurrently would escape the disconnection's revocation.
      const row = code && (await this.grantOf(tx, code.grantId, true));
      const invalid = failure('invalid_grant', 'The authorization code is invalid, expired or already used.');
      if (!code || !row) return invalid;
      const { grant } = row;
      if (code.usedAt !== null) {
        // A code used twice: what it issued is revoked (RFC 6749 section 4.1.2).
        await this.revokeFamily(tx, code.id);
        return invalid;
      }
      // One attempt per code, whatever its outcome.
      await tx
        .update(oauthAuthorizationCodes)
        .set({ usedAt: this.clock.now() })
        .where(eq(oauthAuthorizationCodes.id, code.id));
      if (code.expiresAt.getTime() <= this.clock.nowMs()) return invalid;
      if (!constantTimeEqual(row.clientId, input.clientId!))
        return failure('invalid_grant', 'The code was issued to another client.');
      if (code.redirectUri !== input.redirectUri)
        return failure('invalid_grant', 'redirect_uri is not the one of the authorization request.');
      if (
        !VERIFIER_FORMAT.test(input.codeVerifier!) ||
        !constantTimeEqual(pkceS256Challenge(input.codeVerifier!), code.codeChallenge)
      )
        return failure('invalid_grant', 'code_verifier does not match the code challenge (PKCE S256).');
      if (code.resource !== input.resource)
        return failure('invalid_grant', 'resource is not the one the code was issued for (RFC 8707).');
      if (grant.revokedAt !== null) return invalid;
      if (!(await hasActiveAccess(tx, grant.userId, grant.organizationId)))
        return failure('invalid_grant', "The user no longer has active access to the grant's organization.");
      return this.issuePair(tx, grant, code.scope, code.id);
    });
  }

  /** The `refresh_token` grant (module comment). */
  async refresh(input: {
    clientId: string | undefined;
    refreshToken: string | undefined;
    resource: string | undefined;
    scope: string | undefined;
  }): Promise<TokenAnswer | TokenFailure> {
    if (!input.refreshToken || !input.clientId)
      return failure('invalid_request', 'refresh_token and client_id are required.');
    const invalid = failure('invalid_grant', 'The refresh token is invalid, expired or revoked.');
    if (!REFRESH_FORMAT.test(input.refreshToken)) return invalid;
    const hash = hashApiKey(input.refreshToken);
    return this.db.transaction(async (tx) => {
      // Locks in the order of a disconnection (grant, then its credentials), so the two never deadlock.
      const [found] = await tx
        .select({ grantId: mcpRefreshTokens.grantId })
        .from(mcpRefreshTokens)
        .where(eq(mcpRefreshTokens.keyHash, hash));
      if (!found) return invalid;
      const row = await this.grantOf(tx, found.grantId, true);
      const [token] = await tx
        .select()
        .from(mcpRefreshTokens)
        .where(eq(mcpRefreshTokens.keyHash, hash))
        .for('update');
      const grant = row!.grant;
      if (!constantTimeEqual(row!.clientId, input.clientId!))
        return failure('invalid_grant', 'The refresh token was issued to another client.');
      if (grant.resource === null)
        return failure(
          'invalid_grant',
          'This connection was authorized before resource binding: authorize the app again (spec rule 1).',
        );
      // Only a bound grant's refresh is checked for its resource: a connector authorized before resource binding
      // does not send one, and must be told to authorize again (above), not that resource is missing.
      const target = this.targetError(input.resource);
      if (target) return target;
      if (grant.revokedAt !== null || token!.revokedAt !== null) return invalid;
      if (token!.expiresAt && token!.expiresAt.getTime() <= this.clock.nowMs()) return invalid;
      if (input.resource !== grant.resource)
        return failure('invalid_grant', 'resource is not the one this connection is bound to (RFC 8707).');
      const now = this.clock.now();
      if (await this.isReplay(tx, token!, now)) {
        // A replayed refresh credential: someone else may hold the family; end the whole grant.
        await this.revokeGrant(tx, grant.id);
        return failure('invalid_grant', 'The refresh token was already used: the connection is revoked.');
      }
      if (!(await hasActiveAccess(tx, grant.userId, grant.organizationId))) {
        // The account lost active access: the connection ends (rule 2).
        await this.revokeGrant(tx, grant.id);
        return failure('invalid_grant', "The user no longer has active access to the grant's organization.");
      }
      // Checked after replay detection (a replayed credential ends the grant whatever it asks for); refused before the
      // credential is used up.
      const scope = narrowScope(input.scope, token!.scope);
      if ('refused' in scope)
        return failure(
          'invalid_scope',
          `A refresh cannot widen the scope: this credential holds ${token!.scope} (RFC 6749 section 6).`,
        );
      if (token!.rotatedAt === null) {
        await tx.update(mcpRefreshTokens).set({ rotatedAt: now }).where(eq(mcpRefreshTokens.id, token!.id));
        // Its siblings (issued to a concurrent refresh of the same parent) are superseded: tripwires from now on.
        if (token!.parentId !== null)
          await tx
            .update(mcpRefreshTokens)
            .set({ supersededAt: now })
            .where(
              and(
                eq(mcpRefreshTokens.parentId, token!.parentId),
                ne(mcpRefreshTokens.id, token!.id),
                isNull(mcpRefreshTokens.rotatedAt),
                isNull(mcpRefreshTokens.supersededAt),
              ),
            );
      }
      await tx.update(mcpGrants).set({ lastRefreshedAt: now }).where(eq(mcpGrants.id, grant.id));
      return this.issuePair(tx, grant, scope.scope, token!.familyId, token!.id);
    });
  }

  /**
   * Whether presenting `token` (locked, with its grant) is a replay: it was superseded by a sibling, or it was rotated
   * more than {@link REFRESH_GRACE_SECONDS} ago, or one of the credentials its rotation issued was used already.
   */
  private async isReplay(tx: Executor, token: RefreshRow, now: Date): Promise<boolean> {
    if (token.supersededAt !== null) return true;
    if (token.rotatedAt === null) return false;
    if (now.getTime() - token.rotatedAt.getTime() > REFRESH_GRACE_SECONDS * 1000) return true;
    const [usedSuccessor] = await tx
      .select({ id: mcpRefreshTokens.id })
      .from(mcpRefreshTokens)
      .where(and(eq(mcpRefreshTokens.parentId, token.id), isNotNull(mcpRefreshTokens.rotatedAt)))
      .limit(1);
    return usedSuccessor !== undefined;
  }

  /**
   * Revocation (RFC 7009): an `mcp_at_` is revoked; an `mcp_rt_` is revoked with the access credentials of its
   * family. Only the client the credential was issued to may revoke it; anything else (unknown, another client's, not
   * a credential of ours) changes nothing and answers the same (RFC 7009 section 2.2).
   */
  async revoke(input: { clientId: string; token: string }): Promise<void> {
    const hash = hashApiKey(input.token);
    await this.db.transaction(async (tx) => {
      if (input.token.startsWith(PREFIX.mcpAccess)) {
        const [row] = await tx
          .select({ id: mcpAccessTokens.id, clientId: oauthClients.clientId })
          .from(mcpAccessTokens)
          .innerJoin(mcpGrants, eq(mcpGrants.id, mcpAccessTokens.grantId))
          .innerJoin(oauthClients, eq(oauthClients.id, mcpGrants.oauthClientId))
          .where(eq(mcpAccessTokens.keyHash, hash));
        if (row && constantTimeEqual(row.clientId, input.clientId))
          await this.stores.mcpAccessTokens.revokeWhere(eq(mcpAccessTokens.id, row.id), tx);
      } else if (input.token.startsWith(PREFIX.mcpRefresh)) {
        const [row] = await tx
          .select({ token: mcpRefreshTokens, clientId: oauthClients.clientId })
          .from(mcpRefreshTokens)
          .innerJoin(mcpGrants, eq(mcpGrants.id, mcpRefreshTokens.grantId))
          .innerJoin(oauthClients, eq(oauthClients.id, mcpGrants.oauthClientId))
          .where(eq(mcpRefreshTokens.keyHash, hash));
        if (!row || !constantTimeEqual(row.clientId, input.clientId)) return;
        if (row.token.familyId === null)
          await tx
            .update(mcpRefreshTokens)
            .set({ revokedAt: this.clock.now() })
            .where(and(eq(mcpRefreshTokens.id, row.token.id), isNull(mcpRefreshTokens.revokedAt)));
        else await this.revokeFamily(tx, row.token.familyId);
      }
    });
  }

  /**
   * `invalid_target` for a `resource` that is missing or not the URI of any MCP endpoint (RFC 8707 section 2), else
   * undefined (whether it is the grant's is checked against the grant: `invalid_grant`).
   */
  private targetError(resource: string | undefined): TokenFailure | undefined {
    if (resource === undefined)
      return failure('invalid_target', 'resource (RFC 8707) is required: the exact URI of the MCP endpoint.');
    if (!mcpTargetOfResource(this.publicUrl(), resource))
      return failure('invalid_target', 'resource is not the URI of an MCP endpoint of this service.');
    return undefined;
  }

  /** A grant with its client's `client_id`, the grant row locked when `lock` (no join under the lock). */
  private async grantOf(
    tx: Executor,
    grantId: number,
    lock: boolean,
  ): Promise<{ grant: GrantRow; clientId: string } | undefined> {
    const query = tx.select().from(mcpGrants).where(eq(mcpGrants.id, grantId));
    const [grant] = lock ? await query.for('update') : await query;
    if (!grant) return undefined;
    const [client] = await tx
      .select({ clientId: oauthClients.clientId })
      .from(oauthClients)
      .where(eq(oauthClients.id, grant.oauthClientId));
    return { grant, clientId: client!.clientId };
  }

  /**
   * Issues an access and a refresh credential under `grant` with `scope` (canonical), in family `familyId`, issued by
   * refresh credential `parentId`.
   */
  private async issuePair(
    tx: Executor,
    grant: GrantRow,
    scope: string,
    familyId: number | null,
    parentId: number | null = null,
  ): Promise<TokenAnswer> {
    const now = this.clock.now();
    const access = await this.stores.mcpAccessTokens.issue(tx, {
      expiresAt: new Date(now.getTime() + ACCESS_TOKEN_SECONDS * 1000),
      values: { grantId: grant.id, familyId, scope },
    });
    const refresh = issueApiKey(PREFIX.mcpRefresh);
    await tx.insert(mcpRefreshTokens).values({
      keyHash: refresh.hash,
      hint: refresh.hint,
      createdAt: now,
      expiresAt: null,
      grantId: grant.id,
      familyId,
      parentId,
      scope,
    });
    return {
      access_token: access.key,
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_SECONDS,
      refresh_token: refresh.plaintext,
      scope,
    };
  }

  /** Revokes every credential of a family (an authorization code and its refresh lineage). */
  private async revokeFamily(tx: Executor, familyId: number): Promise<void> {
    await this.stores.mcpAccessTokens.revokeWhere(eq(mcpAccessTokens.familyId, familyId), tx);
    await tx
      .update(mcpRefreshTokens)
      .set({ revokedAt: this.clock.now() })
      .where(and(eq(mcpRefreshTokens.familyId, familyId), isNull(mcpRefreshTokens.revokedAt)));
  }

  /** Revokes a grant and every credential under it (a replayed refresh credential; lost access). */
  private async revokeGrant(tx: Executor, grantId: number): Promise<void> {
    const now = this.clock.now();
    await tx
      .update(mcpGrants)
      .set({ revokedAt: now })
      .where(and(eq(mcpGrants.id, grantId), isNull(mcpGrants.revokedAt)));
    await this.stores.mcpAccessTokens.revokeWhere(eq(mcpAccessTokens.grantId, grantId), tx);
    await tx
      .update(mcpRefreshTokens)
      .set({ revokedAt: now })
      .where(and(eq(mcpRefreshTokens.grantId, grantId), isNull(mcpRefreshTokens.revokedAt)));
  }
}
