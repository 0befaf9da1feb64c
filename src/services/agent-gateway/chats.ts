/**
 * Chats (spec E: `GET, POST /api/v1/chats`, `POST /api/v1/chats/{id}/turns`, chat `PATCH` with `version`): a
 * user's conversation with one conversation-capable agent. A chat is private to its owner: another user, even in
 * the same scope, gets the 404 of a chat that does not exist. A turn runs the agent and records the message and the
 * reply in one statement; a `remote` agent's turn is recorded `pending` and answered when a runtime host reports.
 */
import { and, asc, desc, eq, sql } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.ts';
import type { Db, Executor } from '../../platform/database.ts';
import { prefixedHexId } from '../../platform/ids.ts';
import type { AppLogger } from '../../platform/logger.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import { badRequest, invalidState, notFound, versionConflict } from './agent-gateway-errors.ts';
import {
  type AgentDefinition,
  AgentError,
  type AgentRuntime,
  UNEXPECTED_AGENT_FAILURE,
} from './agent-runtime.ts';
import type { AgentService } from './agents.ts';
import { agents as agentRows, chats, chatTurns } from './db/schema.ts';
import type { Scope } from './identity.ts';
import { inScope, pagedRows } from './queries.ts';

/** A chat as the API shows it. */
export interface ChatView {
  id: string;
  tenant: string;
  namespace: string;
  agentId: string;
  title: string;
  archived: boolean;
  version: number;
  turnCount: number;
  createdAt: string;
  updatedAt: string;
}

/** A turn as the API shows it: `reply` is null while pending or after a failure (then `error`). */
export interface TurnView {
  id: string;
  chatId: string;
  seq: number;
  message: string;
  status: 'completed' | 'failed' | 'pending';
  reply: { text: string; data?: unknown } | null;
  error: { code: string; message: string } | null;
  agentVersion: number;
  createdAt: string;
  completedAt: string | null;
}

function chatView(row: typeof chats.$inferSelect): ChatView {
  return {
    id: row.id,
    tenant: row.tenantId,
    namespace: row.namespaceId,
    agentId: row.agentId,
    title: row.title,
    archived: row.archived,
    version: row.version,
    turnCount: row.turnCount,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** The view of a turn row. */
export function turnView(row: typeof chatTurns.$inferSelect): TurnView {
  return {
    id: row.id,
    chatId: row.chatId,
    seq: row.seq,
    message: row.message,
    status: row.status,
    reply: row.reply ?? null,
    error: row.error ?? null,
    agentVersion: row.agentVersion,
    createdAt: row.createdAt.toISOString(),
    completedAt: row.completedAt ? row.completedAt.toISOString() : null,
  };
}

/** Queues a remote agent's turn for a runtime host (host-protocol.ts), inside the caller's transaction. */
export type RemoteTurnQueue = (
  tx: Executor,
  input: { turnId: string; agentId: string; agentVersion: number; environmentId: string; input: unknown },
) => Promise<void>;

/** Earlier turns given to a `model` agent as history. */
const MODEL_HISTORY_TURNS = 20;

/** Chats and their turns. */
export class ChatService {
  /** A chat of its owner in a scope with its agent (the hot read of a turn), a named prepared statement. */
  private readonly chatWithAgent;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly agents: AgentService,
    private readonly runtime: AgentRuntime,
    private readonly queueRemote: RemoteTurnQueue,
    private readonly logger?: AppLogger,
  ) {
    this.chatWithAgent = db
      .select({ chat: chats, agent: agentRows })
      .from(chats)
      .innerJoin(agentRows, eq(agentRows.id, chats.agentId))
      .where(
        and(
          eq(chats.id, sql.placeholder('id')),
          eq(chats.tenantId, sql.placeholder('tenant')),
          eq(chats.namespaceId, sql.placeholder('namespace')),
          eq(chats.ownerId, sql.placeholder('ownerId')),
        ),
      )
      .prepare('agent_gateway_chat_with_agent');
  }

  /**
   * Creates a chat with a conversation-capable agent of the scope.
   * @throws ApiError 404 for an agent not in the scope; 400 `agent_not_conversational`.
   */
  async create(
    scope: Scope,
    ownerId: string,
    input: { agentId: string; title: string },
    executor: Executor = this.db,
  ): Promise<ChatView> {
    const agent = await this.agents.row(scope, input.agentId, executor);
    if (!agent.conversational)
      throw badRequest(
        'agent_not_conversational',
        `Agent '${agent.id}' does not take chat turns (see GET /api/v1/chat-agents).`,
      );
    const now = this.clock.now();
    const [row] = await executor
      .insert(chats)
      .values({
        id: prefixedHexId('cht'),
        tenantId: scope.tenant,
        namespaceId: scope.namespace,
        ownerId,
        agentId: agent.id,
        title: input.title,
        archived: false,
        version: 1,
        turnCount: 0,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    return chatView(row!);
  }

  /** A page of the caller's chats in the scope, most recently active first. */
  async list(scope: Scope, ownerId: string, page: PageRequest, options: { includeArchived?: boolean } = {}) {
    const where = and(
      inScope(chats, scope),
      eq(chats.ownerId, ownerId),
      options.includeArchived ? undefined : eq(chats.archived, false),
    );
    const { rows, total } = await pagedRows(
      this.db,
      chats,
      where,
      [desc(chats.updatedAt), desc(chats.id)],
      page,
    );
    return { items: rows.map(chatView), total };
  }

  private async row(scope: Scope, ownerId: string, id: string, executor: Executor = this.db) {
    const [row] = await executor
      .select()
      .from(chats)
      .where(and(eq(chats.id, id), inScope(chats, scope), eq(chats.ownerId, ownerId)));
    if (!row) throw notFound('chat', id);
    return row;
  }

  /** One of the caller's chats. @throws ApiError 404 (also another user's or another scope's chat). */
  async get(scope: Scope, ownerId: string, id: string): Promise<ChatView> {
    return chatView(await this.row(scope, ownerId, id));
  }

  /**
   * Changes a chat's title or archived flag when it is at `version` (spec E: chat patch uses `version`).
   * @throws ApiError 404; 409 `version_conflict` with the current version.
   */
  async patch(
    scope: Scope,
    ownerId: string,
    id: string,
    input: { version: number; title?: string; archived?: boolean },
  ): Promise<ChatView> {
    return this.db.transaction(async (tx) => {
      const current = await this.row(scope, ownerId, id, tx);
      const [row] = await tx
        .update(chats)
        .set({
          ...(input.title !== undefined ? { title: input.title } : {}),
          ...(input.archived !== undefined ? { archived: input.archived } : {}),
          version: sql`${chats.version} + 1`,
          updatedAt: this.clock.now(),
        })
        .where(and(eq(chats.id, id), eq(chats.version, input.version)))
        .returning();
      if (!row) {
        const [now] = await tx.select({ version: chats.version }).from(chats).where(eq(chats.id, id));
        throw versionConflict('chat', input.version, now?.version ?? current.version);
      }
      return chatView(row);
    });
  }

  /** A page of a chat's turns, oldest first. @throws ApiError 404. */
  async turns(scope: Scope, ownerId: string, id: string, page: PageRequest) {
    const chat = await this.row(scope, ownerId, id);
    const rows = await this.db
      .select()
      .from(chatTurns)
      .where(eq(chatTurns.chatId, id))
      .orderBy(asc(chatTurns.seq))
      .limit(page.limit)
      .offset(page.offset);
    return { items: rows.map(turnView), total: chat.turnCount };
  }

  /**
   * Sends a turn: runs the chat's agent (its current version) on `message` and records the turn. An in-process
   * agent answers at once (`completed`, or `failed` with the agent's error); a `remote` agent's turn is `pending`
   * until a runtime host completes its execution.
   * @throws ApiError 404; 409 `invalid_state` for an archived chat; 400 `agent_not_conversational` when the agent
   *   stopped being one.
   */
  async sendTurn(scope: Scope, ownerId: string, id: string, message: string, executor: Executor = this.db) {
    // The chat and its agent in one read (a turn is the hot path: a prepared statement outside a transaction).
    const key = { id, tenant: scope.tenant, namespace: scope.namespace, ownerId };
    const [found] =
      executor === this.db
        ? await this.chatWithAgent.execute(key)
        : await executor
            .select({ chat: chats, agent: agentRows })
            .from(chats)
            .innerJoin(agentRows, eq(agentRows.id, chats.agentId))
            .where(and(eq(chats.id, id), inScope(chats, scope), eq(chats.ownerId, ownerId)));
    if (!found) throw notFound('chat', id);
    const { chat, agent } = found;
    if (chat.archived) throw invalidState(`Chat '${id}' is archived; un-archive it (PATCH) to continue.`);
    if (!agent.conversational)
      throw badRequest('agent_not_conversational', `Agent '${agent.id}' no longer takes chat turns.`);
    const definition = agent.definition as AgentDefinition;
    const now = this.clock.now();
    const turnId = prefixedHexId('trn');
    let status: 'completed' | 'failed' | 'pending' = 'pending';
    let reply: { text: string; data?: unknown } | null = null;
    let error: { code: string; message: string } | null = null;
    if (definition.kind !== 'remote') {
      const history = definition.kind === 'model' ? await this.history(id, executor) : [];
      try {
        const result = await this.runtime.execute(
          definition,
          {
            input: { message },
            message,
            context: { chat: { id: chat.id, title: chat.title, turn: chat.turnCount + 1 } },
          },
          history,
        );
        status = 'completed';
        reply =
          definition.kind === 'template' || definition.kind === 'model'
            ? { text: result.text }
            : { text: result.text, data: result.output };
      } catch (err) {
        // The agent's own failure, or a defect met while running its definition on this message (logged with its
        // stack, shown as `agent_error` with no internals): the turn is recorded `failed` either way, never a 500.
        status = 'failed';
        if (err instanceof AgentError) error = { code: err.code, message: err.message };
        else {
          this.logger?.error(
            { err, chatId: id, agentId: agent.id },
            'chat turn failed with an unexpected error',
          );
          error = { ...UNEXPECTED_AGENT_FAILURE };
        }
      }
    }
    const write = async (tx: Executor) => {
      const inserted = await tx.execute(sql`
        with c as (
          update ${chats} set turn_count = turn_count + 1, updated_at = ${now}
          where id = ${id} returning turn_count
        )
        insert into ${chatTurns} (id, chat_id, seq, message, status, reply, error, agent_version, created_at, completed_at)
        select ${turnId}, ${id}, c.turn_count, ${message}, ${status}, ${reply === null ? null : JSON.stringify(reply)}::jsonb,
               ${error === null ? null : JSON.stringify(error)}::jsonb, ${agent.version}, ${now},
               ${status === 'pending' ? null : now}::timestamptz
        from c
        returning seq`);
      const seq = Number((inserted.rows[0] as { seq: number }).seq);
      if (definition.kind === 'remote')
        await this.queueRemote(tx, {
          turnId,
          agentId: agent.id,
          agentVersion: agent.version,
          environmentId: definition.environmentId,
          input: { message, chat: { id: chat.id, title: chat.title, turn: seq } },
        });
      return seq;
    };
    const seq =
      definition.kind === 'remote' && executor === this.db
        ? await this.db.transaction(write)
        : await write(executor);
    return {
      turn: {
        id: turnId,
        chatId: id,
        seq,
        message,
        status,
        reply,
        error,
        agentVersion: agent.version,
        createdAt: now.toISOString(),
        completedAt: status === 'pending' ? null : now.toISOString(),
      } satisfies TurnView,
      chat: { id, version: chat.version, turnCount: seq },
    };
  }

  /** One turn of the caller's chat. @throws ApiError 404. */
  async turn(scope: Scope, ownerId: string, chatId: string, turnId: string): Promise<TurnView> {
    await this.row(scope, ownerId, chatId);
    const [row] = await this.db
      .select()
      .from(chatTurns)
      .where(and(eq(chatTurns.id, turnId), eq(chatTurns.chatId, chatId)));
    if (!row) throw notFound('turn', turnId);
    return turnView(row);
  }

  private async history(chatId: string, executor: Executor) {
    const rows = await executor
      .select({ message: chatTurns.message, reply: chatTurns.reply })
      .from(chatTurns)
      .where(and(eq(chatTurns.chatId, chatId), eq(chatTurns.status, 'completed')))
      .orderBy(desc(chatTurns.seq))
      .limit(MODEL_HISTORY_TURNS);
    return rows.reverse().map((r) => ({ message: r.message, reply: r.reply?.text ?? '' }));
  }
}
