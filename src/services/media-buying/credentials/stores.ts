/**
 * Every credential of the media-buying service on the platform credential kit (SHA-256 at rest, shown once, lookups
 * cached per instance, revocations effective on every instance at once). Each store maps a stored row to its
 * {@link Holder}: who the credential stands for. What the holder may do now is decided on every request from live
 * data (`caller.ts`), so a removed member's key stops at once.
 *
 * | kind                 | secret prefix     | holder                                   | where it is sent          |
 * | -------------------- | ----------------- | ---------------------------------------- | ------------------------- |
 * | `session`            | `mbs_`            | a user (interactive)                     | cookie `mb_session`       |
 * | `user_api_key`       | `mbu_`            | a user, in the organization of creation  | `Authorization: Bearer`   |
 * | `widget_token`       | `wgt_`            | a user and organization, short-lived     | `Authorization: Bearer`   |
 * | `org_api_key`        | `mbo_`            | an organization (ids `key_...`)          | `Authorization: Bearer`   |
 * | `legacy_key`         | `lgc_`            | an organization, until expiry            | `Authorization: Bearer`   |
 * | `buyer_agent`        | `mba_`            | an organization's buyer agent, no rights | `Authorization: Bearer`   |
 * | `agent_registration` | `mbr_` (`mbt_`)   | an activation (read permission)          | `Authorization: Bearer`   |
 * | `m2m_token`          | JWT               | an M2M application                       | `Authorization: Bearer`   |
 * | `mcp_access`         | `mcp_at_`         | a connector grant: MCP endpoints only    | refused on REST           |
 */
import { eq } from 'drizzle-orm';
import type { ServiceContext } from '../../../platform/service.ts';
import {
  agentRegistrations,
  buyerAgentCredentials,
  type KeyPermission,
  legacyKeys,
  m2mClientSecrets,
  mcpAccessTokens,
  orgApiKeys,
  organizations,
  sessions,
  userApiKeys,
  users,
  widgetTokens,
} from '../db/schema.ts';

/** Secret prefixes of each credential kind (the table above). */
export const PREFIX = {
  session: 'mbs_',
  userApiKey: 'mbu_',
  widgetToken: 'wgt_',
  orgApiKey: 'mbo_',
  legacyKey: 'lgc_',
  buyerAgent: 'mba_',
  agentRegistration: 'mbr_',
  /** The older buyer read tokens, an accepted alias of agent registration credentials. */
  buyerReadToken: 'mbt_',
  m2mClientSecret: 'mbcs_',
  signupRecovery: 'mbv_',
  passwordReset: 'mbp_',
  invitation: 'mbi_',
  mcpAccess: 'mcp_at_',
  mcpRefresh: 'mcp_rt_',
} as const;

/** Who a credential stands for, as stored (what it may do is decided per request). */
export type Holder =
  | { kind: 'session'; credentialId: number; userId: number }
  | {
      kind: 'user_api_key';
      credentialId: number;
      userId: number;
      organizationId: number;
      permissions: readonly KeyPermission[];
    }
  | { kind: 'widget_token'; credentialId: number; userId: number; organizationId: number }
  | {
      kind: 'org_api_key' | 'legacy_key';
      credentialId: number;
      organizationId: number;
      permissions: readonly KeyPermission[];
    }
  | { kind: 'buyer_agent'; credentialId: number; organizationId: number }
  | { kind: 'agent_registration'; credentialId: number }
  | { kind: 'm2m_token'; credentialId: number; organizationId: number; scopes: readonly KeyPermission[] }
  | {
      kind: 'mcp_access';
      credentialId: number;
      grantId: number;
      /** The credential's OAuth scope tokens (`adcp:read`, `adcp:write`): what MCP calls it may make. */
      scopes: readonly string[];
    };

/** A kind of {@link Holder}. */
export type CredentialKind = Holder['kind'];

/** The credential stores of the service, made once per instance. */
export function createCredentialStores(ctx: ServiceContext) {
  return {
    sessions: ctx.credentialStore({
      table: sessions,
      prefixes: [PREFIX.session],
      principal: (row): Holder => ({ kind: 'session', credentialId: row.id, userId: row.userId }),
      attributes: (row) => ({ userId: row.userId, method: row.method }),
    }),
    userApiKeys: ctx.credentialStore({
      table: userApiKeys,
      prefixes: [PREFIX.userApiKey],
      principal: (row): Holder => ({
        kind: 'user_api_key',
        credentialId: row.id,
        userId: row.userId,
        organizationId: row.organizationId,
        permissions: row.permissions,
      }),
      attributes: async (row, executor) => {
        const [owner] = await executor
          .select({ userId: users.publicId, organizationId: organizations.publicId })
          .from(users)
          .innerJoin(organizations, eq(organizations.id, row.organizationId))
          .where(eq(users.id, row.userId));
        return { keyId: row.publicId, ...owner!, permissions: row.permissions };
      },
    }),
    widgetTokens: ctx.credentialStore({
      table: widgetTokens,
      prefixes: [PREFIX.widgetToken],
      principal: (row): Holder => ({
        kind: 'widget_token',
        credentialId: row.id,
        userId: row.userId,
        organizationId: row.organizationId,
      }),
      attributes: (row) => ({ userId: row.userId, organizationId: row.organizationId }),
    }),
    orgApiKeys: ctx.credentialStore({
      table: orgApiKeys,
      prefixes: [PREFIX.orgApiKey],
      principal: (row): Holder => ({
        kind: 'org_api_key',
        credentialId: row.id,
        organizationId: row.organizationId,
        permissions: row.permissions,
      }),
      attributes: (row) => ({
        keyId: row.publicId,
        organizationId: row.organizationId,
        permissions: row.permissions,
      }),
    }),
    legacyKeys: ctx.credentialStore({
      table: legacyKeys,
      prefixes: [PREFIX.legacyKey],
      principal: (row): Holder => ({
        kind: 'legacy_key',
        credentialId: row.id,
        organizationId: row.organizationId,
        permissions: row.permissions,
      }),
      attributes: (row) => ({
        keyId: row.publicId,
        organizationId: row.organizationId,
        permissions: row.permissions,
      }),
    }),
    buyerAgents: ctx.credentialStore({
      table: buyerAgentCredentials,
      prefixes: [PREFIX.buyerAgent],
      principal: (row): Holder => ({
        kind: 'buyer_agent',
        credentialId: row.id,
        organizationId: row.organizationId,
      }),
      attributes: (row) => ({ credentialId: row.publicId, organizationId: row.organizationId }),
    }),
    agentRegistrations: ctx.credentialStore({
      table: agentRegistrations,
      prefixes: [PREFIX.agentRegistration, PREFIX.buyerReadToken],
      principal: (row): Holder => ({ kind: 'agent_registration', credentialId: row.id }),
      attributes: (row) => ({ activationId: row.publicId, state: row.state }),
    }),
    m2mClientSecrets: ctx.credentialStore({
      table: m2mClientSecrets,
      prefixes: [PREFIX.m2mClientSecret],
      principal: (row) => ({ secretId: row.id, applicationId: row.applicationId }),
      attributes: (row) => ({ applicationId: row.applicationId }),
    }),
    mcpAccessTokens: ctx.credentialStore({
      table: mcpAccessTokens,
      prefixes: [PREFIX.mcpAccess],
      principal: (row): Holder => ({
        kind: 'mcp_access',
        credentialId: row.id,
        grantId: row.grantId,
        scopes: row.scope.split(' '),
      }),
      attributes: (row) => ({ grantId: row.grantId, scope: row.scope }),
    }),
  };
}

/** The credential stores of the service. */
export type CredentialStores = ReturnType<typeof createCredentialStores>;
