/**
 * The OAuth authorization server of MCP connectors (issue 18): client registration (`clients.ts`), the authorization
 * endpoint and consent (`authorization.ts`), the token and revocation endpoints (`tokens.ts`), the discovery documents
 * (`metadata.ts`). Domain code only (no Fastify): `routes/mcp-oauth.ts` serves it. Other folders use it through this
 * file.
 */
import type { Clock } from '../../../../platform/clock.ts';
import type { SecretBox } from '../../../../platform/crypto.ts';
import type { Db } from '../../../../platform/database.ts';
import type { OutboundHttp } from '../../../../platform/outbound-http.ts';
import type { CredentialStores } from '../../credentials/index.ts';
import { McpAuthorization } from './authorization.ts';
import { McpOAuthClients } from './clients.ts';
import { McpTokens } from './tokens.ts';

export { RegistrationError } from './clients.ts';
export { mcpAuthorizationServerMetadata, protectedResourceMetadata } from './metadata.ts';
export { liveResourceOfPath } from './resources.ts';
export { type McpScope, SCOPE_DESCRIPTIONS } from './scopes.ts';

/** The authorization server of MCP connectors, made once per instance. */
export interface McpOAuth {
  clients: McpOAuthClients;
  authorization: McpAuthorization;
  tokens: McpTokens;
}

/**
 * Builds the authorization server.
 * @param deps.allowLoopbackHttp accept `http:` client ID metadata document URLs on a loopback host (the outbound
 *   guard's private-address allowance, `OUTBOUND_ALLOW_PRIVATE`).
 */
export function createMcpOAuth(deps: {
  db: Db;
  clock: Clock;
  secrets: SecretBox;
  outbound: OutboundHttp;
  allowLoopbackHttp: boolean;
  stores: CredentialStores;
  publicUrl: () => string;
}): McpOAuth {
  const clients = new McpOAuthClients(deps.db, deps.clock, deps.outbound, deps.allowLoopbackHttp);
  return {
    clients,
    authorization: new McpAuthorization(
      deps.db,
      deps.clock,
      clients,
      deps.publicUrl,
      deps.secrets.deriveKey('media-buying:mcp-oauth-consent'),
    ),
    tokens: new McpTokens(deps.db, deps.clock, deps.stores, deps.publicUrl),
  };
}
