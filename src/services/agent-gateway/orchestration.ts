/**
 * Orchestration definitions and runs (spec E: `GET, POST /api/v1/orchestration-definitions`,
 * `POST .../{id}/publish` with `expectedVersion` -> an immutable revision, `GET /api/v1/orchestration-runs/{id}/graph`
 * and `/events`). A definition holds a draft graph (checked on every save, graph.ts) with a version; publishing
 * copies the draft into revision n + 1, which runs use and which never changes.
 */
import { and, asc, desc, eq, inArray } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.ts';
import type { Db, Executor, Tx } from '../../platform/database.ts';
import { ApiError } from '../../platform/errors.ts';
import { prefixedHexId } from '../../platform/ids.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import { badRequest, notFound } from './agent-gateway-errors.ts';
import { agentOfScope } from './agents.ts';
import { agents, approvals, definitions, revisions, runs, steps, teams } from './db/schema.ts';
import { type Graph, graphProblems, singleNodeGraph } from './graph.ts';
import type { Scope } from './identity.ts';
import { expectVersion, inScope, pagedRows } from './queries.ts';
import type { RunEngine, RunRow, StartRun } from './run-engine.ts';
import { runEventsAfter } from './run-events.ts';

/** A definition as the API shows it. */
export interface DefinitionView {
  id: string;
  tenant: string;
  namespace: string;
  name: string;
  description: string;
  graph: Graph;
  version: number;
  publishedRevision: number | null;
  createdAt: string;
  updatedAt: string;
}

function definitionView(row: typeof definitions.$inferSelect): DefinitionView {
  return {
    id: row.id,
    tenant: row.tenantId,
    namespace: row.namespaceId,
    name: row.name,
    description: row.description,
    graph: row.graph as unknown as Graph,
    version: row.version,
    publishedRevision: row.publishedRevision,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function revisionView(row: typeof revisions.$inferSelect) {
  return {
    id: row.id,
    definitionId: row.definitionId,
    revision: row.revision,
    graph: row.graph as unknown as Graph,
    publishedBy: row.publishedBy,
    publishedAt: row.publishedAt.toISOString(),
  };
}

/** A run as the API shows it. */
export function runView(row: RunRow) {
  return {
    id: row.id,
    tenant: row.tenantId,
    namespace: row.namespaceId,
    target: { type: row.targetType, id: row.targetId, revision: row.revision },
    status: row.status,
    input: row.input,
    output: row.output,
    error: row.error,
    parentRunId: row.parentRunId,
    issueId: row.issueId,
    automationId: row.automationId,
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    finishedAt: row.finishedAt ? row.finishedAt.toISOString() : null,
  };
}

/** 409 `not_published`. */
function notPublished(id: string): ApiError {
  return new ApiError(409, 'not_published', `Workflow '${id}' has no published revision: publish it first.`);
}

/** Definitions, revisions and the read side of runs. */
export class OrchestrationService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly engine: RunEngine,
  ) {}

  /**
   * Checks a graph and its references (agents, teams and sub-run definitions of the scope; not itself).
   * @throws ApiError 400 `invalid_graph` with `details.problems`.
   */
  async checkGraph(
    scope: Scope,
    graph: unknown,
    selfId: string | null,
    executor: Executor = this.db,
  ): Promise<Graph> {
    const problems = graphProblems(graph);
    if (problems.length === 0) {
      const g = graph as Graph;
      const ids = (type: string, key: 'agentId' | 'teamId' | 'definitionId') => [
        ...new Set(g.nodes.filter((n) => n.type === type).map((n) => n[key]!)),
      ];
      const inScope = { tenant: scope.tenant, namespace: scope.namespace };
      const missing = async (
        table: typeof agents | typeof teams | typeof definitions,
        wanted: string[],
        what: string,
      ) => {
        if (wanted.length === 0) return;
        const found = await executor
          .select({ id: table.id })
          .from(table)
          .where(
            and(
              inArray(table.id, wanted),
              eq(table.tenantId, inScope.tenant),
              eq(table.namespaceId, inScope.namespace),
            ),
          );
        for (const id of wanted)
          if (!found.some((f) => f.id === id)) problems.push(`${what} '${id}' is not in this scope`);
      };
      await missing(agents, ids('agent', 'agentId'), 'agent');
      await missing(teams, ids('team', 'teamId'), 'team');
      const subruns = ids('subrun', 'definitionId');
      if (selfId && subruns.includes(selfId)) problems.push('a workflow cannot run itself as a sub-run');
      await missing(
        definitions,
        subruns.filter((id) => id !== selfId),
        'workflow',
      );
    }
    if (problems.length > 0)
      throw badRequest(
        'invalid_graph',
        `The workflow graph is invalid: ${problems.slice(0, 5).join('; ')}.`,
        { problems },
      );
    return graph as Graph;
  }

  /** Creates a definition (version 1, unpublished). @throws ApiError 400 `invalid_graph`. */
  async create(
    scope: Scope,
    userId: string | null,
    input: { name: string; description?: string; graph: unknown },
    executor: Executor = this.db,
  ): Promise<DefinitionView> {
    const graph = await this.checkGraph(scope, input.graph, null, executor);
    const now = this.clock.now();
    const [row] = await executor
      .insert(definitions)
      .values({
        id: prefixedHexId('orc'),
        tenantId: scope.tenant,
        namespaceId: scope.namespace,
        name: input.name,
        description: input.description ?? '',
        graph: graph as unknown as Record<string, unknown>,
        version: 1,
        publishedRevision: null,
        createdBy: userId,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    return definitionView(row!);
  }

  /** A page of the scope's definitions, newest first. */
  async list(scope: Scope, page: PageRequest) {
    const where = and(inScope(definitions, scope));
    const { rows, total } = await pagedRows(
      this.db,
      definitions,
      where,
      [desc(definitions.createdAt), desc(definitions.id)],
      page,
    );
    return { items: rows.map(definitionView), total };
  }

  private async row(scope: Scope, id: string, executor: Executor, lock = false) {
    const query = executor
      .select()
      .from(definitions)
      .where(and(eq(definitions.id, id), inScope(definitions, scope)));
    const [row] = lock ? await query.for('update') : await query;
    if (!row) throw notFound('workflow', id);
    return row;
  }

  /** One definition. @throws ApiError 404. */
  async get(scope: Scope, id: string): Promise<DefinitionView> {
    return definitionView(await this.row(scope, id, this.db));
  }

  /**
   * Changes the draft at `expectedVersion` (version + 1).
   * @throws ApiError 404; 409 `version_conflict` with the current version; 400 `invalid_graph`.
   */
  async update(
    scope: Scope,
    id: string,
    input: { expectedVersion: number; name?: string; description?: string; graph?: unknown },
  ) {
    return this.db.transaction(async (tx) => {
      const row = await this.row(scope, id, tx, true);
      expectVersion('workflow', input.expectedVersion, row.version);
      const graph = input.graph === undefined ? undefined : await this.checkGraph(scope, input.graph, id, tx);
      const [updated] = await tx
        .update(definitions)
        .set({
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.description !== undefined ? { description: input.description } : {}),
          ...(graph ? { graph: graph as unknown as Record<string, unknown> } : {}),
          version: row.version + 1,
          updatedAt: this.clock.now(),
        })
        .where(eq(definitions.id, id))
        .returning();
      return definitionView(updated!);
    });
  }

  /**
   * Publishes the draft at `expectedVersion` as the next immutable revision (the definition's version moves on too,
   * so the same publish cannot be applied twice).
   * @throws ApiError 404; 409 `version_conflict` with the current version; 400 `invalid_graph` when a reference
   *   disappeared since the draft was saved.
   */
  async publish(scope: Scope, id: string, userId: string | null, expectedVersion: number, executor?: Tx) {
    const work = async (tx: Tx) => {
      const row = await this.row(scope, id, tx, true);
      expectVersion('workflow', expectedVersion, row.version);
      await this.checkGraph(scope, row.graph, id, tx);
      const now = this.clock.now();
      const revision = (row.publishedRevision ?? 0) + 1;
      const [published] = await tx
        .insert(revisions)
        .values({
          id: prefixedHexId('rev'),
          definitionId: id,
          revision,
          graph: row.graph,
          publishedBy: userId,
          publishedAt: now,
        })
        .returning();
      const [updated] = await tx
        .update(definitions)
        .set({ publishedRevision: revision, version: row.version + 1, updatedAt: now })
        .where(eq(definitions.id, id))
        .returning();
      return { definition: definitionView(updated!), revision: revisionView(published!) };
    };
    return executor ? work(executor) : this.db.transaction(work);
  }

  /** The published revisions of a definition, newest first. @throws ApiError 404. */
  async revisions(scope: Scope, id: string) {
    await this.row(scope, id, this.db);
    const rows = await this.db
      .select()
      .from(revisions)
      .where(eq(revisions.definitionId, id))
      .orderBy(desc(revisions.revision));
    return rows.map(revisionView);
  }

  /** The latest (or a given) published revision of a definition of the scope, or undefined. */
  async publishedRevision(scope: Scope, definitionId: string, executor: Executor, revision?: number) {
    const [def] = await executor
      .select({ published: definitions.publishedRevision })
      .from(definitions)
      .where(and(eq(definitions.id, definitionId), inScope(definitions, scope)));
    const wanted = revision ?? def?.published;
    if (!def || !wanted) return undefined;
    const [row] = await executor
      .select()
      .from(revisions)
      .where(and(eq(revisions.definitionId, definitionId), eq(revisions.revision, wanted)));
    return row ? { revision: row.revision, graph: row.graph as unknown as Graph } : undefined;
  }

  /**
   * What a run of a target is: an agent or a team of the scope (a one-node graph), or a published revision of a
   * workflow (the latest unless `revision` is given).
   * @throws ApiError 404 for a target not in the scope; 409 `not_published`.
   */
  async runPlan(
    scope: Scope,
    target: { type: 'agent' | 'team' | 'orchestration'; id: string; revision?: number },
    executor: Executor = this.db,
  ): Promise<Pick<StartRun, 'targetType' | 'targetId' | 'revision' | 'graph' | 'agents'>> {
    if (target.type === 'orchestration') {
      const published = await this.publishedRevision(scope, target.id, executor, target.revision);
      if (!published) {
        await this.row(scope, target.id, executor);
        if (target.revision !== undefined) throw notFound('revision', `${target.id}@${target.revision}`);
        throw notPublished(target.id);
      }
      return {
        targetType: 'orchestration',
        targetId: target.id,
        revision: published.revision,
        graph: published.graph,
      };
    }
    if (target.type === 'agent') {
      // The whole row: the run's first step runs this agent (a run started inline executes it in this transaction).
      const agent = await agentOfScope(executor, scope, target.id);
      if (!agent) throw notFound(target.type, target.id);
      return {
        targetType: target.type,
        targetId: target.id,
        revision: null,
        graph: singleNodeGraph(target.type, target.id),
        agents: [agent],
      };
    }
    const [found] = await executor
      .select({ id: teams.id })
      .from(teams)
      .where(and(eq(teams.id, target.id), inScope(teams, scope)));
    if (!found) throw notFound(target.type, target.id);
    return {
      targetType: target.type,
      targetId: target.id,
      revision: null,
      graph: singleNodeGraph(target.type, target.id),
    };
  }

  /**
   * Runs `work` inside `tx` with the run events of the runs it starts appended when it returns, after the row locks
   * it takes ({@link RunEngine.appendingEventsLast}).
   */
  appendingEventsLast<T>(tx: Tx, work: () => Promise<T>): Promise<T> {
    return this.engine.appendingEventsLast(tx, work);
  }

  /** Starts a run of a target (`POST /api/v1/orchestration-runs`). @throws ApiError 404, 409 `not_published`. */
  async startRun(
    scope: Scope,
    userId: string | null,
    input: {
      target: { type: 'agent' | 'team' | 'orchestration'; id: string; revision?: number };
      input?: unknown;
    },
    extra: Partial<Pick<StartRun, 'issueId' | 'automationId' | 'triggerDepth'>> = {},
    executor?: Tx,
  ): Promise<RunRow> {
    const work = async (tx: Tx) => {
      const plan = await this.runPlan(scope, input.target, tx);
      return this.engine.start(tx, {
        scope,
        ...plan,
        input: input.input ?? null,
        createdBy: userId,
        ...extra,
      });
    };
    return executor ? work(executor) : this.db.transaction(work);
  }

  /** A page of the scope's runs, newest first (top-level and sub-runs), optionally of one status. */
  async listRuns(scope: Scope, page: PageRequest, filter: { status?: RunRow['status'] } = {}) {
    const where = and(inScope(runs, scope), filter.status ? eq(runs.status, filter.status) : undefined);
    const { rows, total } = await pagedRows(
      this.db,
      runs,
      where,
      [desc(runs.createdAt), desc(runs.id)],
      page,
    );
    return { items: rows.map(runView), total };
  }

  /** One run row of the scope. @throws ApiError 404. */
  async runRow(scope: Scope, id: string): Promise<RunRow> {
    const [row] = await this.db
      .select()
      .from(runs)
      .where(and(eq(runs.id, id), inScope(runs, scope)));
    if (!row) throw notFound('run', id);
    return row;
  }

  /**
   * The execution graph of a run: every node of its graph with the state of its step (`not_reached` before a
   * token reached it), team members under their team node, and the run's edges.
   * @throws ApiError 404.
   */
  async graph(scope: Scope, id: string) {
    const run = await this.runRow(scope, id);
    const graph = run.graph as unknown as Graph;
    const rows = await this.db
      .select()
      .from(steps)
      .where(eq(steps.runId, id))
      .orderBy(asc(steps.createdAt), asc(steps.id));
    const pendingApprovals = await this.db.select().from(approvals).where(eq(approvals.runId, id));
    const stepOf = (s: (typeof rows)[number]) => {
      const wait = (s.wait ?? {}) as Record<string, unknown>;
      return {
        stepId: s.id,
        status: s.status,
        attempt: s.attempt,
        input: s.input,
        output: s.output,
        error: s.error,
        startedAt: s.claimedAt ? s.claimedAt.toISOString() : null,
        finishedAt: s.finishedAt ? s.finishedAt.toISOString() : null,
        dueAt: s.dueAt ? s.dueAt.toISOString() : null,
        childRunId: typeof wait.runId === 'string' ? wait.runId : null,
        approvalId: pendingApprovals.find((a) => a.stepId === s.id)?.id ?? null,
        executionId: typeof wait.executionId === 'string' ? wait.executionId : null,
      };
    };
    return {
      run: runView(run),
      nodes: graph.nodes.map((node) => {
        const step = rows.find((s) => s.nodeId === node.id);
        const members = rows
          .filter((s) => s.nodeId.startsWith(`${node.id}#`))
          .sort((a, b) => Number(a.nodeId.split('#')[1]) - Number(b.nodeId.split('#')[1]));
        return {
          id: node.id,
          type: node.type,
          ...(step ? stepOf(step) : { status: 'not_reached' as const, stepId: null }),
          ...(node.type === 'team'
            ? {
                members: members.map((m) => ({
                  agentId: String((m.wait as { agentId?: string }).agentId),
                  ...stepOf(m),
                })),
              }
            : {}),
        };
      }),
      edges: graph.edges,
    };
  }

  /** The events of a run after the event id `after`, at most `limit`. @throws ApiError 404. */
  async events(scope: Scope, id: string, after: number, limit: number) {
    await this.runRow(scope, id);
    return runEventsAfter(this.db, id, after, limit);
  }
}
