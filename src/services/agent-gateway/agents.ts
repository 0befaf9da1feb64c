/**
 * Agents of a scope (spec E: `GET, POST /api/v1/agents`, `PATCH /api/v1/agents/{id}/definition`,
 * `GET /api/v1/chat-agents`). A definition change makes a new version (kept in `agent_versions`), guarded by
 * `expectedVersion`.
 */
import { and, desc, eq, sql } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.ts';
import { type Db, type Executor, NamedStatement } from '../../platform/database.ts';
import { prefixedHexId } from '../../platform/ids.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import { badRequest, invalidFields, notFound } from './agent-gateway-errors.ts';
import {
  type AgentDefinition,
  type AgentKind,
  type AgentRuntime,
  conversationalByDefault,
  definitionIssues,
} from './agent-runtime.ts';
import { agents, agentVersions, environments } from './db/schema.ts';
import type { Scope } from './identity.ts';
import { expectVersion, inScope, pagedRows, rowOf, selectColumns } from './queries.ts';

/** An agent as the API shows it. */
export interface AgentView {
  id: string;
  tenant: string;
  namespace: string;
  name: string;
  description: string;
  kind: AgentKind;
  conversational: boolean;
  definition: AgentDefinition;
  version: number;
  createdAt: string;
  updatedAt: string;
}

/** An agent row. */
export type AgentRow = typeof agents.$inferSelect;

/** The view of an agent row. */
export function agentView(row: AgentRow): AgentView {
  return {
    id: row.id,
    tenant: row.tenantId,
    namespace: row.namespaceId,
    name: row.name,
    description: row.description,
    kind: row.kind as AgentKind,
    conversational: row.conversational,
    definition: row.definition as AgentDefinition,
    version: row.version,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** One agent of a scope (a prepared statement: the run engine reads the agent of every step). */
const agentRowStatement = new NamedStatement<Record<string, unknown>>(
  'agent_gateway_agent_row',
  sql`select ${selectColumns(agents, 'a', 'a_')} from ${agents} a
    where a.id = ${sql.placeholder('id')} and a.tenant_id = ${sql.placeholder('tenant')}
      and a.namespace_id = ${sql.placeholder('namespace')}`,
);

/** Agent `id` of `scope` (one prepared read), or undefined. */
export async function agentOfScope(
  executor: Executor,
  scope: Scope,
  id: string,
): Promise<AgentRow | undefined> {
  const [found] = await agentRowStatement.rows(executor, {
    id,
    tenant: scope.tenant,
    namespace: scope.namespace,
  });
  return found ? rowOf(agents, found, 'a_') : undefined;
}

/** Agents: catalog, creation, versioned definition updates. */
export class AgentService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly runtime: AgentRuntime,
  ) {}

  /**
   * Checks a definition for `scope`: its kind's shape and templates, a `remote` agent's environment in the same
   * scope, a `model` agent only when a model adapter is configured.
   * @throws ApiError 400 `validation_failed` naming every problem, 400 `invalid_definition` for the rest.
   */
  async checkDefinition(
    scope: Scope,
    definition: unknown,
    executor: Executor = this.db,
  ): Promise<AgentDefinition> {
    const issues = definitionIssues(definition, { location: 'body', field: 'definition' });
    if (issues.length > 0) throw invalidFields(issues);
    const d = definition as AgentDefinition;
    if (d.kind === 'remote') {
      const [env] = await executor
        .select({ id: environments.id })
        .from(environments)
        .where(and(eq(environments.id, d.environmentId), inScope(environments, scope)));
      if (!env) throw badRequest('invalid_definition', `No environment '${d.environmentId}' in this scope.`);
    }
    if (d.kind === 'model' && !this.runtime.modelConfigured)
      throw badRequest(
        'invalid_definition',
        'Model agents need the model adapter, which this install has not configured.',
      );
    return d;
  }

  /** Creates an agent (version 1). @throws ApiError 400 for a bad definition ({@link checkDefinition}). */
  async create(
    scope: Scope,
    userId: string | null,
    input: { name: string; description?: string; conversational?: boolean; definition: unknown },
    executor: Executor = this.db,
  ): Promise<AgentView> {
    const definition = await this.checkDefinition(scope, input.definition, executor);
    const now = this.clock.now();
    const row = {
      id: prefixedHexId('agt'),
      tenantId: scope.tenant,
      namespaceId: scope.namespace,
      name: input.name,
      description: input.description ?? '',
      kind: definition.kind,
      conversational: input.conversational ?? conversationalByDefault(definition.kind),
      definition: definition as Record<string, unknown>,
      version: 1,
      createdBy: userId,
      createdAt: now,
      updatedAt: now,
    };
    const inTx = async (tx: Executor) => {
      await tx.insert(agents).values(row);
      await tx.insert(agentVersions).values({
        agentId: row.id,
        version: 1,
        kind: row.kind,
        conversational: row.conversational,
        definition: row.definition,
        createdBy: userId,
        createdAt: now,
      });
    };
    if (executor === this.db) await this.db.transaction(inTx);
    else await inTx(executor);
    return agentView(row);
  }

  /** A page of the scope's agents, newest first (only conversation-capable ones with `conversational`). */
  async list(scope: Scope, page: PageRequest, options: { conversational?: boolean } = {}) {
    const where = and(
      inScope(agents, scope),
      options.conversational ? eq(agents.conversational, true) : undefined,
    );
    const { rows, total } = await pagedRows(
      this.db,
      agents,
      where,
      [desc(agents.createdAt), desc(agents.id)],
      page,
    );
    return { items: rows.map(agentView), total };
  }

  /** One agent row of the scope. @throws ApiError 404 (also for another scope's agent). */
  async row(scope: Scope, id: string, executor: Executor = this.db): Promise<AgentRow> {
    const row = await agentOfScope(executor, scope, id);
    if (!row) throw notFound('agent', id);
    return row;
  }

  /** One agent of the scope. @throws ApiError 404. */
  async get(scope: Scope, id: string): Promise<AgentView> {
    return agentView(await this.row(scope, id));
  }

  /** Every version of an agent, newest first. @throws ApiError 404. */
  async versions(scope: Scope, id: string) {
    await this.row(scope, id);
    const rows = await this.db
      .select()
      .from(agentVersions)
      .where(eq(agentVersions.agentId, id))
      .orderBy(desc(agentVersions.version));
    return rows.map((r) => ({
      version: r.version,
      kind: r.kind as AgentKind,
      conversational: r.conversational,
      definition: r.definition as AgentDefinition,
      createdBy: r.createdBy,
      createdAt: r.createdAt.toISOString(),
    }));
  }

  /**
   * Replaces an agent's definition, making version `expectedVersion + 1` (kept in the history).
   * @throws ApiError 404; 409 `version_conflict` (with the current version) when the agent is not at
   *   `expectedVersion`; 400 for a bad definition.
   */
  async updateDefinition(
    scope: Scope,
    id: string,
    userId: string | null,
    input: { expectedVersion: number; definition: unknown; conversational?: boolean },
  ): Promise<AgentView> {
    return this.db.transaction(async (tx) => {
      const [row] = await tx
        .select()
        .from(agents)
        .where(and(eq(agents.id, id), inScope(agents, scope)))
        .for('update');
      if (!row) throw notFound('agent', id);
      expectVersion('agent', input.expectedVersion, row.version);
      const definition = await this.checkDefinition(scope, input.definition, tx);
      const now = this.clock.now();
      const version = row.version + 1;
      const conversational = input.conversational ?? row.conversational;
      await tx.insert(agentVersions).values({
        agentId: id,
        version,
        kind: definition.kind,
        conversational,
        definition: definition as Record<string, unknown>,
        createdBy: userId,
        createdAt: now,
      });
      const [updated] = await tx
        .update(agents)
        .set({
          kind: definition.kind,
          conversational,
          definition: definition as Record<string, unknown>,
          version,
          updatedAt: now,
        })
        .where(eq(agents.id, id))
        .returning();
      return agentView(updated!);
    });
  }
}
