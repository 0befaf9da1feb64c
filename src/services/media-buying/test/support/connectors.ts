/**
 * Test support for connected apps: MCP connector connections written straight into the database, as part 3's OAuth
 * flow will write them (an OAuth client, a user's grant for one MCP resource, and access and refresh credentials
 * under it), with their plaintext secrets for the test to present.
 */
import { eq } from 'drizzle-orm';
import { issueApiKey } from '../../../../platform/crypto.ts';
import type { Db } from '../../../../platform/database.ts';
import { prefixedHexId, randomToken } from '../../../../platform/ids.ts';
import { PREFIX } from '../../credentials/index.ts';
import { mcpAccessTokens, mcpGrants, mcpRefreshTokens, oauthClients, users } from '../../db/schema.ts';

/** A connection written by {@link insertConnection}. */
export interface TestConnection {
  /** The grant's row id. */
  grantId: number;
  /** The grant's public id (`mcg_` + 32 hex), the `id` of the connected-app listing. */
  id: string;
  clientId: string;
  /** Plaintext access credentials (`mcp_at_...`), in the order of `accessExpiresAt`. */
  accessTokens: string[];
  /** Plaintext refresh credentials (`mcp_rt_...`). */
  refreshTokens: string[];
}

/**
 * Writes a connection of user `userPublicId` (`usr_...`) to an app called `appName` (a new OAuth client unless
 * `clientId` names one already written), for `resource`, with one access credential per `accessExpiresAt` and
 * `refreshTokens` refresh credentials (default one each, expiring a day after `firstConnectedAt`).
 */
export async function insertConnection(
  db: Db,
  input: {
    userPublicId: string;
    appName: string;
    clientId?: string;
    /** Null: a connection authorized before resource binding (spec rule 1). */
    resource: string | null;
    /** The grant's and its credentials' scope (default `adcp:read adcp:write`). */
    scope?: string;
    firstConnectedAt: Date;
    lastRefreshedAt?: Date | null;
    revokedAt?: Date | null;
    accessExpiresAt?: Date[];
    refreshTokens?: number;
  },
): Promise<TestConnection> {
  const [user] = await db
    .select({ id: users.id, activeOrganizationId: users.activeOrganizationId })
    .from(users)
    .where(eq(users.publicId, input.userPublicId));
  if (!user?.activeOrganizationId)
    throw new Error(`no user ${input.userPublicId} with an active organization`);
  const clientId = input.clientId ?? `mcpc_${randomToken(12)}`;
  const [existing] = await db.select().from(oauthClients).where(eq(oauthClients.clientId, clientId));
  const client =
    existing ??
    (
      await db
        .insert(oauthClients)
        .values({
          clientId,
          name: input.appName,
          redirectUris: ['https://connector.example/callback'],
          createdAt: input.firstConnectedAt,
        })
        .returning()
    )[0]!;
  const scope = input.scope ?? 'adcp:read adcp:write';
  const [grant] = await db
    .insert(mcpGrants)
    .values({
      publicId: prefixedHexId('mcg'),
      userId: user.id,
      oauthClientId: client.id,
      organizationId: user.activeOrganizationId,
      resource: input.resource,
      scope,
      firstConnectedAt: input.firstConnectedAt,
      lastRefreshedAt: input.lastRefreshedAt ?? null,
      revokedAt: input.revokedAt ?? null,
    })
    .returning();
  const day = 86_400_000;
  const accessTokens: string[] = [];
  for (const expiresAt of input.accessExpiresAt ?? [new Date(input.firstConnectedAt.getTime() + day)]) {
    const issued = issueApiKey(PREFIX.mcpAccess);
    await db.insert(mcpAccessTokens).values({
      keyHash: issued.hash,
      hint: issued.hint,
      createdAt: input.firstConnectedAt,
      expiresAt,
      grantId: grant!.id,
      scope,
    });
    accessTokens.push(issued.plaintext);
  }
  const refreshTokens: string[] = [];
  for (let i = 0; i < (input.refreshTokens ?? 1); i++) {
    const issued = issueApiKey(PREFIX.mcpRefresh);
    await db.insert(mcpRefreshTokens).values({
      keyHash: issued.hash,
      hint: issued.hint,
      createdAt: input.firstConnectedAt,
      expiresAt: new Date(input.firstConnectedAt.getTime() + 30 * day),
      grantId: grant!.id,
      scope,
    });
    refreshTokens.push(issued.plaintext);
  }
  return { grantId: grant!.id, id: grant!.publicId, clientId, accessTokens, refreshTokens };
}
