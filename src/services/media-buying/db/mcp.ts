/**
 * Tables of the MCP layer (part 3, spec "MCP"): the sessions of session-era (initialize/session lifecycle) MCP clients,
 * kept in PostgreSQL so any instance serves the next request of a session. Stateless (MCP 2026-07-28) requests keep
 * nothing. Like `catalog.ts`, this file has its own handle on the `media_buying` schema (`schema.ts` re-exports it).
 */
import { bigint, index, pgSchema, text, timestamp } from 'drizzle-orm/pg-core';

const mediaBuying = pgSchema('media_buying');
const id = () => bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity();
const at = (name: string) => timestamp(name, { withTimezone: true });

/**
 * One MCP session (`Mcp-Session-Id`, MCP 2025-11-25 "Session Management"). The id itself is never stored: only its
 * SHA-256 (`sessionHash`), like every other secret of the service. A session belongs to the endpoint it was opened on
 * (its concrete path) and to the principal that opened it (`principal`, see `mcp/sessions.ts`); it ends on DELETE
 * (`endedAt`) or when idle past `expiresAt` (sliding).
 */
export const mcpSessions = mediaBuying.table(
  'mcp_sessions',
  {
    id: id(),
    sessionHash: text('session_hash').notNull().unique(),
    /** The concrete MCP path the session was opened on (e.g. `/mcp/v3/storefronts/sf_...`). */
    endpointPath: text('endpoint_path').notNull(),
    /** The principal the session is bound to (`user:<id>@<organization id>` or `<credential kind>:<credential id>`). */
    principal: text('principal').notNull(),
    /** The MCP protocol version negotiated by `initialize` (e.g. `2025-11-25`). */
    protocolVersion: text('protocol_version').notNull(),
    /** The client's `clientInfo.name` and `.version` of `initialize`. */
    clientName: text('client_name').notNull(),
    clientVersion: text('client_version').notNull(),
    createdAt: at('created_at').notNull(),
    lastSeenAt: at('last_seen_at').notNull(),
    /** Idle expiry: `lastSeenAt` + the idle timeout; moved forward by every request of the session. */
    expiresAt: at('expires_at').notNull(),
    endedAt: at('ended_at'),
  },
  (t) => [index('mcp_sessions_expires_idx').on(t.expiresAt)],
);
