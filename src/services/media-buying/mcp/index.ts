/**
 * The MCP side of the media-buying service (issue 18), built once per instance: the tools, their dispatcher, the
 * session store and the transport (see `transport.ts`), the contract between the MCP layer and its tools
 * (`contract.ts`), and the OAuth authorization server of MCP connectors (`oauth/`). Other folders use it through this
 * file only.
 */
import { eq } from 'drizzle-orm';
import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/database.ts';
import type { AppLogger } from '../../../platform/logger.ts';
import type { BuyerLists } from '../catalog/index.ts';
import type { MediaBuyingCredentials } from '../credentials/index.ts';
import { storefronts } from '../db/schema.ts';
import { McpDispatcher } from './dispatch.ts';
import { McpSessions } from './sessions.ts';
import { createMcpTools, type McpToolDeps } from './tools/index.ts';
import { McpTransport } from './transport.ts';

export { MCP_ENDPOINTS, type McpTarget, mcpTargetOfPath, protectedResourceMetadataPath } from './contract.ts';
export { errorBodyOf } from './dispatch.ts';
export { McpIdempotency } from './idempotency.ts';
export {
  createMcpOAuth,
  liveResourceOfPath,
  type McpOAuth,
  type McpScope,
  mcpAuthorizationServerMetadata,
  protectedResourceMetadata,
  RegistrationError,
  SCOPE_DESCRIPTIONS,
} from './oauth/index.ts';
export { MCP_SESSION_IDLE_SECONDS, McpSessions } from './sessions.ts';
export type { McpTransport } from './transport.ts';

/** Builds the MCP layer (module comment). */
export function createMcp(
  deps: McpToolDeps & {
    db: Db;
    clock: Clock;
    credentials: MediaBuyingCredentials;
    lists: BuyerLists;
    publicUrl: () => string;
    logger?: AppLogger;
  },
): { transport: McpTransport; sessions: McpSessions } {
  const sessions = new McpSessions(deps.db, deps.clock);
  const dispatcher = new McpDispatcher(createMcpTools(deps), deps.logger);
  const transport = new McpTransport({
    credentials: deps.credentials,
    dispatcher,
    sessions,
    publicUrl: deps.publicUrl,
    logger: deps.logger,
    async storefront(publicId) {
      const [row] = await deps.db
        .select({
          id: storefronts.id,
          publicId: storefronts.publicId,
          organizationId: storefronts.organizationId,
          status: storefronts.status,
        })
        .from(storefronts)
        .where(eq(storefronts.publicId, publicId))
        .limit(1);
      return row ?? null;
    },
  });
  return { transport, sessions };
}
