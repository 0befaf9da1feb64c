/**
 * Sessions of session-era MCP clients (MCP 2025-11-25 "Session Management": `initialize`, then `Mcp-Session-Id` on
 * every request, `DELETE` to end), kept in PostgreSQL (`mcp_sessions`) so any instance serves the next request of a
 * session: nothing about a session lives in an instance's memory.
 *
 * - The id (`mcs_` + 43 URL-safe base64 characters, 256 random bits) is shown once, in the `initialize` answer's
 *   `Mcp-Session-Id` header; only its SHA-256 is stored.
 * - A session is bound to the endpoint (concrete path) it was opened on and to its principal
 *   ({@link principalOf}): presented on another endpoint or by another principal, it is not found (404), exactly like
 *   an unknown id, so a session id never leaks anything.
 * - **Idle timeout {@link MCP_SESSION_IDLE_SECONDS} (30 minutes)**: every request of the session moves `expiresAt`
 *   forward; past it the session is gone (404, the client initializes again). `DELETE` ends it at once. The hourly
 *   prune deletes sessions ended or expired a day ago.
 */
import { and, eq, gt, isNull, lt, or, sql } from 'drizzle-orm';
import type { Clock } from '../../../platform/clock.ts';
import { hashApiKey } from '../../../platform/crypto.ts';
import type { Db } from '../../../platform/database.ts';
import { randomToken } from '../../../platform/ids.ts';
import type { Caller } from '../credentials/index.ts';
import { mcpSessions } from '../db/schema.ts';

/** Seconds a session lives without a request (module comment). */
export const MCP_SESSION_IDLE_SECONDS = 30 * 60;

/** Prefix of session ids. */
export const MCP_SESSION_PREFIX = 'mcs_';

/** A live session as the transport needs it. */
export interface McpSession {
  protocolVersion: string;
  clientName: string;
  clientVersion: string;
}

/**
 * The principal a session is bound to: the user and the organization it acts in for a user credential (an API key
 * and an `mcp_at_` credential of the same user in the same organization are one principal), else the credential itself
 * (organization keys, M2M tokens, buyer agents).
 */
export function principalOf(caller: Caller): string {
  return caller.user
    ? `user:${caller.user.id}@${caller.organization?.id ?? 'none'}`
    : `${caller.kind}:${caller.credentialId}`;
}

/** The sessions store (module comment). */
export class McpSessions {
  private readonly touchQuery;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {
    // One statement per request of a session: find it live, bound to this endpoint and principal, and slide it.
    this.touchQuery = db
      .update(mcpSessions)
      .set({
        lastSeenAt: sql`${sql.placeholder('now')}::timestamptz`,
        expiresAt: sql`${sql.placeholder('expiresAt')}::timestamptz`,
      })
      .where(
        and(
          eq(mcpSessions.sessionHash, sql.placeholder('hash')),
          eq(mcpSessions.endpointPath, sql.placeholder('path')),
          eq(mcpSessions.principal, sql.placeholder('principal')),
          isNull(mcpSessions.endedAt),
          gt(mcpSessions.expiresAt, sql`${sql.placeholder('now')}::timestamptz`),
        ),
      )
      .returning({
        protocolVersion: mcpSessions.protocolVersion,
        clientName: mcpSessions.clientName,
        clientVersion: mcpSessions.clientVersion,
      })
      .prepare('mb_mcp_session_touch');
  }

  /** A new session id (not stored until {@link open}). */
  newId(): string {
    return `${MCP_SESSION_PREFIX}${randomToken()}`;
  }

  /** Stores session `id` after a successful `initialize`. */
  async open(
    id: string,
    input: {
      path: string;
      caller: Caller;
      protocolVersion: string;
      clientName: string;
      clientVersion: string;
    },
  ): Promise<void> {
    const now = this.clock.now();
    await this.db.insert(mcpSessions).values({
      sessionHash: hashApiKey(id),
      endpointPath: input.path,
      principal: principalOf(input.caller),
      protocolVersion: input.protocolVersion,
      clientName: input.clientName.slice(0, 200),
      clientVersion: input.clientVersion.slice(0, 200),
      createdAt: now,
      lastSeenAt: now,
      expiresAt: new Date(now.getTime() + MCP_SESSION_IDLE_SECONDS * 1000),
    });
  }

  /**
   * The live session `id` of `caller` on `path`, its idle expiry moved forward; null when unknown, ended, expired,
   * opened on another endpoint or by another principal (one answer: 404).
   */
  async touch(id: string, path: string, caller: Caller): Promise<McpSession | null> {
    if (!id.startsWith(MCP_SESSION_PREFIX) || id.length > 100) return null;
    const now = this.clock.now();
    const [row] = await this.touchQuery.execute({
      hash: hashApiKey(id),
      path,
      principal: principalOf(caller),
      now: now.toISOString(),
      expiresAt: new Date(now.getTime() + MCP_SESSION_IDLE_SECONDS * 1000).toISOString(),
    });
    return row ?? null;
  }

  /** Ends session `id` (DELETE). @returns false when there was no such live session of `caller` on `path`. */
  async end(id: string, path: string, caller: Caller): Promise<boolean> {
    if (!id.startsWith(MCP_SESSION_PREFIX) || id.length > 100) return false;
    const now = this.clock.now();
    const ended = await this.db
      .update(mcpSessions)
      .set({ endedAt: now })
      .where(
        and(
          eq(mcpSessions.sessionHash, hashApiKey(id)),
          eq(mcpSessions.endpointPath, path),
          eq(mcpSessions.principal, principalOf(caller)),
          isNull(mcpSessions.endedAt),
          gt(mcpSessions.expiresAt, now),
        ),
      )
      .returning({ id: mcpSessions.id });
    return ended.length > 0;
  }

  /** Deletes sessions ended or expired more than a day ago. @returns how many. */
  async prune(): Promise<number> {
    const before = new Date(this.clock.nowMs() - 86_400_000);
    const deleted = await this.db
      .delete(mcpSessions)
      .where(or(lt(mcpSessions.expiresAt, before), lt(mcpSessions.endedAt, before)))
      .returning({ id: mcpSessions.id });
    return deleted.length;
  }
}
