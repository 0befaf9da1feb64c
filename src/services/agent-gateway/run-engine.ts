/**
 * The agent runtime's run engine (README "Runs"): runs of an agent, a team or a workflow revision, executed as
 * Graphile Worker jobs, each step recorded as run events.
 *
 * A run walks its graph with tokens: a node gets a step when a token reaches it. Nodes that decide at once (start,
 * end, condition, join) complete in the transaction that delivered the token; agent steps (and team members) are
 * one job each (`agent-gateway:run-step`); approval, timer, signal, sub-run and remote-agent steps wait for what
 * they name. A branch not taken sends "skip" tokens along its edges, so a join knows when every incoming edge is
 * settled. Every transaction on a run locks the run row first, so completions of parallel branches are serialised.
 *
 * Crash safety: a step job claims its step (`running`, attempt + 1, `claimed_at`) in one transaction, executes,
 * and commits the outcome only when the step is still held by that attempt. A worker killed mid-step leaves the
 * claim; the sweep puts claims older than the step lease back to `pending` and queues them again, so the step is
 * retried (attempt 2), and a late completion of the lost attempt is discarded: never lost, never applied twice.
 */
import { and, eq, inArray, isNull, lte, sql } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.ts';
import { type Db, type Executor, NamedStatement, type Tx } from '../../platform/database.ts';
import { prefixedHexId } from '../../platform/ids.ts';
import type { AppLogger } from '../../platform/logger.ts';
import { invalidState, notFound } from './agent-gateway-errors.ts';
import { resumeStepTask, runStepTask } from './agent-gateway-jobs.ts';
import {
  type AgentDefinition,
  AgentError,
  type AgentEvent,
  type AgentRuntime,
  messageOf,
  UNEXPECTED_AGENT_FAILURE,
} from './agent-runtime.ts';
import type { AgentRow } from './agents.ts';
import { approvals, executions, runs, signals, steps } from './db/schema.ts';
import { type Graph, GraphIndex, type GraphNode } from './graph.ts';
import type { Scope } from './identity.ts';
import { inScope, insertRowStatement } from './queries.ts';
import { appendRunEvents, type NewRunEvent } from './run-events.ts';
import { type Condition, ConditionError, evaluateCondition, renderJson } from './templates.ts';

export type RunRow = typeof runs.$inferSelect;
export type StepRow = typeof steps.$inferSelect;
export type RunStatus = RunRow['status'];

/** Terminal run statuses. */
export const TERMINAL: readonly RunStatus[] = ['completed', 'failed', 'cancelled'];
const isTerminal = (status: RunStatus) => TERMINAL.includes(status);

/** A branch no edge is labelled with: every outgoing edge gets a skip token. */
const SKIP_ALL = '\u0000skip';

/** Agents whose execution does no I/O: their steps run in one transaction. */
function isInstant(definition: AgentDefinition): boolean {
  if (definition.kind === 'template' || definition.kind === 'json_transform') return true;
  return definition.kind === 'tool_use' && !definition.tools.includes('fetch_url');
}

/**
 * A run's step counts in one read: steps still to run (`active`: pending or running), `waiting` ones, and the
 * output of its completed end node (`ended`).
 */
const settleStatement = new NamedStatement<{
  active: number;
  waiting: number;
  ended: boolean;
  output: unknown;
}>(
  'agent_gateway_settle_run',
  sql`select count(*) filter (where status in ('pending', 'running'))::int as active,
      count(*) filter (where status = 'waiting')::int as waiting,
      coalesce(bool_or(node_type = 'end' and status = 'completed'), false) as ended,
      (select output from ${steps} where run_id = ${sql.placeholder('runId')} and node_type = 'end'
        and status = 'completed' limit 1) as output
    from ${steps} where run_id = ${sql.placeholder('runId')}`,
);

const insertRunStatement = insertRowStatement('agent_gateway_insert_run', runs);
const insertStepStatement = insertRowStatement('agent_gateway_insert_step', steps);

/** Completes a step with its output. */
const completeStepStatement = new NamedStatement<never>(
  'agent_gateway_complete_step',
  sql`update ${steps} set status = 'completed', output = ${sql.placeholder('output')}::jsonb,
      finished_at = ${sql.placeholder('finishedAt')}::timestamptz, due_at = null
    where id = ${sql.placeholder('id')}`,
);

/** Writes a run's state (status, data, output, error, end time). */
const saveRunStatement = new NamedStatement<never>(
  'agent_gateway_save_run',
  sql`update ${runs} set status = ${sql.placeholder('status')}, data = ${sql.placeholder('data')}::jsonb,
      output = ${sql.placeholder('output')}::jsonb, error = ${sql.placeholder('error')}::jsonb,
      finished_at = ${sql.placeholder('finishedAt')}::timestamptz
    where id = ${sql.placeholder('id')}`,
);

/** Agent steps one job runs in a row (the first, then those each completion queued). */
const MAX_CHAINED_STEPS = 20;

/** The deepest chain of sub-runs (a sub-run of a sub-run ...). */
export const MAX_SUBRUN_DEPTH = 5;

/** What a new run is. */
export interface StartRun {
  scope: Scope;
  targetType: 'agent' | 'team' | 'orchestration';
  targetId: string;
  revision: number | null;
  graph: Graph;
  input: unknown;
  createdBy: string | null;
  parentRunId?: string;
  parentStepId?: string;
  issueId?: string;
  automationId?: string;
  /** The endpoint invocation this run executes, and its conversation (its sub-runs inherit both). */
  invocationId?: string;
  invocationConversationId?: string;
  triggerDepth?: number;
  /** Agents of the scope already read in this transaction (the target agent), so an inline step reads none again. */
  agents?: readonly AgentRow[];
}

/** What the engine reads of other resources (their services implement it). */
export interface RunLookups {
  agent(scope: Scope, id: string, executor: Executor): Promise<AgentRow | undefined>;
  teamMembers(scope: Scope, id: string, executor: Executor): Promise<string[] | undefined>;
  publishedRevision(
    scope: Scope,
    definitionId: string,
    executor: Executor,
  ): Promise<{ revision: number; graph: Graph } | undefined>;
  /** Queues a remote agent's execution for a runtime host; returns its id. */
  queueExecution(
    tx: Executor,
    input: { runId: string; stepId: string; agent: AgentRow; input: unknown },
  ): Promise<string>;
  /** Ends the attempts (revokes the attempt tokens) of executions `ids`, inside `tx` (a cancelled run's). */
  endAttempts(tx: Executor, ids: readonly string[]): Promise<void>;
}

/** Called in the transaction that finished a run (issues take the result, automations hear `run.completed`). */
export type RunObserver = (tx: Tx, run: RunRow) => Promise<void>;

/** Sees the events of a flush (in order) and the runs of its transaction's unit, by id. */
export type RunEventsHook = (
  tx: Tx,
  events: readonly NewRunEvent[],
  runs: ReadonlyMap<string, { row: RunRow }>,
) => void;

/** One transaction's work on runs: the runs it locked (changed in memory, written at the end) and its events. */
class Unit {
  readonly runs = new Map<
    string,
    { row: RunRow; wasTerminal: boolean; wasStatus: RunStatus; graph: GraphIndex }
  >();
  readonly events: NewRunEvent[] = [];
  /** Agent steps this unit queued (a job each); the job that made them may run the first one itself. */
  readonly queued: string[] = [];
  constructor(
    readonly tx: Tx,
    readonly now: Date,
    /** Agent steps of instant agents this unit may still run in its own transaction instead of queueing a job. */
    public inlineSteps = 0,
  ) {}

  /** Where the unit's events go instead of being appended by its flush ({@link RunEngine.start} `deferEvents`). */
  deferEvents: NewRunEvent[] | undefined;

  /** Agents read in this unit's transaction, by id (only used while it runs steps inline). */
  readonly agents = new Map<string, AgentRow>();

  event(
    run: RunRow,
    type: string,
    data: Record<string, unknown>,
    step?: { id: string; nodeId: string },
  ): void {
    this.events.push({ runId: run.id, stepId: step?.id ?? null, nodeId: step?.nodeId ?? null, type, data });
  }
}

/** Runs: start, advance, wait, resume, fail, cancel. */
export class RunEngine {
  private readonly observers: RunObserver[] = [];
  private readonly statusObservers: RunObserver[] = [];
  private readonly flushHooks: ((tx: Tx) => Promise<void>)[] = [];
  private readonly eventHooks: RunEventsHook[] = [];
  /**
   * The outermost flush in progress in a transaction, by transaction: the run events of the flushes nested in it (a
   * run an observer starts, such as an automation's) wait here for its append ({@link flush}).
   */
  private readonly flushing = new WeakMap<Tx, NewRunEvent[]>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly runtime: AgentRuntime,
    private readonly lookups: RunLookups,
    private readonly stepLeaseSeconds: number,
    private readonly logger?: AppLogger,
  ) {}

  /**
   * Runs an in-process `agent` on a step's `input` at node `nodeId` of `run`: its output and the step's events
   * (`agent.output`, then the agent's own), or the failure the step records: an {@link AgentError}'s code and message;
   * any other error (a defect met while running the definition on its input) is {@link UNEXPECTED_AGENT_FAILURE},
   * logged with its stack. The step then fails like any failed step (its run fails): the job or the transaction that
   * ran it goes on, never retried for it.
   */
  private async executeAgent(
    agent: AgentRow,
    run: RunRow,
    nodeId: string,
    input: unknown,
  ): Promise<{ output: unknown; events: AgentEvent[] } | { error: { code: string; message: string } }> {
    try {
      const result = await this.runtime.execute(agent.definition as AgentDefinition, {
        input,
        message: messageOf(input),
        context: { run: { id: run.id, node: nodeId }, nodes: run.data.nodes },
      });
      return {
        output: result.output,
        events: [
          { type: 'agent.output', data: { agentId: agent.id, version: agent.version, text: result.text } },
          ...result.events,
        ],
      };
    } catch (err) {
      if (err instanceof AgentError) return { error: { code: err.code, message: err.message } };
      this.logger?.error({ err, runId: run.id, nodeId }, 'agent step failed with an unexpected error');
      return { error: { ...UNEXPECTED_AGENT_FAILURE } };
    }
  }

  /** Adds an observer of finished runs. */
  onFinished(observer: RunObserver): void {
    this.observers.push(observer);
  }

  /** Adds an observer of a live run's status moves (`running` <-> `waiting`), called in the moving transaction. */
  onStatusChanged(observer: RunObserver): void {
    this.statusObservers.push(observer);
  }

  /**
   * Adds a hook that sees the run events of every flush before they are appended, with the runs they belong to (an
   * invocation's stream forwards its run's progress). It must not write: it queues.
   */
  onEvents(hook: RunEventsHook): void {
    this.eventHooks.push(hook);
  }

  /**
   * Adds a hook called at the end of every outermost flush of the engine's work in a transaction (a flush nested in
   * another's observers calls none; {@link appendingEventsLast} calls them at its end), after the run events were
   * appended: where observers append the events of their own logs (under the same event-log lock, after every row
   * lock of the transaction).
   */
  onFlushed(hook: (tx: Tx) => Promise<void>): void {
    this.flushHooks.push(hook);
  }

  /**
   * Runs `work` inside `tx` with the run events of every flush in it held back, then appends them in one statement
   * (and calls the flush hooks) when it returns: for a caller that starts runs and then locks rows in the same
   * transaction (an event's automations start their runs, then count the firing on their own rows), so the event-log
   * lock stays the transaction's last lock ({@link flush}). Inside a flush (or another such call) it only runs
   * `work`: the outermost appends.
   */
  async appendingEventsLast<T>(tx: Tx, work: () => Promise<T>): Promise<T> {
    if (this.flushing.has(tx)) return work();
    const held: NewRunEvent[] = [];
    this.flushing.set(tx, held);
    let result: T;
    try {
      result = await work();
    } finally {
      this.flushing.delete(tx);
    }
    await appendRunEvents(tx, held, this.clock.now());
    for (const hook of this.flushHooks) await hook(tx);
    return result;
  }

  /**
   * Starts a run inside `tx`: the start node completes at once and its successors get their steps.
   * With `inline`, the agent steps of instant agents (no I/O: template, JSON transform, tool use without
   * `fetch_url`) that the start reaches run in `tx` too, up to {@link MAX_CHAINED_STEPS} of them, each recorded as a
   * job would record it (`step.queued`, `step.started` with attempt 1, its output events, `step.completed`): a run of
   * such agents ends in the transaction that started it, without a job pickup per step. Other steps are queued.
   */
  async start(
    tx: Tx,
    input: StartRun,
    options: {
      inline?: boolean;
      /**
       * When given, the run events are put here instead of appended (and the flush hooks are not called): the
       * caller appends them last in its transaction (a dispatch, with its invocation's events, in one statement).
       */
      deferEvents?: NewRunEvent[];
    } = {},
  ): Promise<RunRow> {
    const unit = new Unit(tx, this.clock.now(), options.inline ? MAX_CHAINED_STEPS : 0);
    unit.deferEvents = options.deferEvents;
    for (const agent of input.agents ?? []) unit.agents.set(agent.id, agent);
    const run = await this.createRun(unit, input);
    await this.flush(unit);
    return run;
  }

  private async createRun(unit: Unit, input: StartRun): Promise<RunRow> {
    const row: RunRow = {
      id: prefixedHexId('run'),
      tenantId: input.scope.tenant,
      namespaceId: input.scope.namespace,
      targetType: input.targetType,
      targetId: input.targetId,
      revision: input.revision,
      graph: input.graph as unknown as Record<string, unknown>,
      status: 'running',
      input: input.input ?? null,
      data: { input: input.input ?? null, nodes: {} },
      output: null,
      error: null,
      parentRunId: input.parentRunId ?? null,
      parentStepId: input.parentStepId ?? null,
      issueId: input.issueId ?? null,
      automationId: input.automationId ?? null,
      invocationId: input.invocationId ?? null,
      invocationConversationId: input.invocationConversationId ?? null,
      triggerDepth: input.triggerDepth ?? 0,
      createdBy: input.createdBy,
      createdAt: unit.now,
      finishedAt: null,
    };
    await insertRunStatement.run(unit.tx, row);
    const graph = new GraphIndex(input.graph);
    unit.runs.set(row.id, { row, wasTerminal: false, wasStatus: row.status, graph });
    unit.event(row, 'run.created', {
      targetType: row.targetType,
      targetId: row.targetId,
      revision: row.revision,
      parentRunId: row.parentRunId,
    });
    const start = await this.insertStep(unit, row, graph.start, {
      status: 'completed',
      input: row.input,
      output: row.input,
    });
    unit.event(row, 'step.completed', { nodeType: 'start' }, start);
    await this.propagate(unit, row, graph.start.id, row.input, null);
    return row;
  }

  /** Locks run `id` for this unit (once) and returns it. */
  private async lockRun(unit: Unit, id: string): Promise<RunRow | undefined> {
    const held = unit.runs.get(id);
    if (held) return held.row;
    const [row] = await unit.tx.select().from(runs).where(eq(runs.id, id)).for('update');
    if (!row) return undefined;
    unit.runs.set(id, {
      row,
      wasTerminal: isTerminal(row.status),
      wasStatus: row.status,
      graph: new GraphIndex(row.graph as unknown as Graph),
    });
    return row;
  }

  private graphOf(unit: Unit, run: RunRow): GraphIndex {
    return unit.runs.get(run.id)!.graph;
  }

  private async insertStep(
    unit: Unit,
    run: RunRow,
    node: { id: string; type: string },
    fields: Partial<StepRow> & { status: StepRow['status'] },
  ): Promise<StepRow> {
    const terminal = ['completed', 'failed', 'skipped', 'cancelled'].includes(fields.status);
    const row: StepRow = {
      id: prefixedHexId('stp'),
      runId: run.id,
      nodeId: node.id,
      nodeType: node.type,
      parentStepId: null,
      attempt: 0,
      input: null,
      output: null,
      error: null,
      arrivals: {},
      wait: null,
      dueAt: null,
      claimedAt: null,
      createdAt: unit.now,
      finishedAt: terminal ? unit.now : null,
      ...fields,
    };
    await insertStepStatement.run(unit.tx, row);
    return row;
  }

  private async updateStep(unit: Unit, id: string, fields: Partial<StepRow>): Promise<StepRow> {
    const [row] = await unit.tx.update(steps).set(fields).where(eq(steps.id, id)).returning();
    return row!;
  }

  /** Sends a token from node `fromId` along each outgoing edge: live when `branch` is null or matches `on`. */
  private async propagate(
    unit: Unit,
    run: RunRow,
    fromId: string,
    payload: unknown,
    branch: string | null,
  ): Promise<void> {
    const graph = this.graphOf(unit, run);
    for (const edge of graph.outgoing.get(fromId) ?? []) {
      const live = branch === null || edge.on === branch;
      await this.deliver(unit, run, edge.to, fromId, live ? 'live' : 'skip', payload);
    }
  }

  /** A token reaches node `nodeId` from `fromId`. */
  private async deliver(
    unit: Unit,
    run: RunRow,
    nodeId: string,
    fromId: string,
    kind: 'live' | 'skip',
    payload: unknown,
  ): Promise<void> {
    if (isTerminal(run.status)) return;
    const graph = this.graphOf(unit, run);
    const node = graph.node(nodeId);
    if (node.type === 'join') return this.deliverToJoin(unit, run, node, fromId, kind, payload);
    if (kind === 'skip') {
      const step = await this.insertStep(unit, run, node, { status: 'skipped' });
      unit.event(run, 'step.skipped', { nodeType: node.type }, step);
      return this.propagate(unit, run, node.id, null, SKIP_ALL);
    }
    const context = { input: run.data.input, nodes: run.data.nodes, previous: payload };
    const input = node.input !== undefined ? renderJson(node.input, context) : payload;
    switch (node.type) {
      case 'end': {
        const step = await this.insertStep(unit, run, node, { status: 'completed', input, output: input });
        run.data = { ...run.data, nodes: { ...run.data.nodes, [node.id]: input } };
        unit.event(run, 'step.completed', { nodeType: 'end' }, step);
        return;
      }
      case 'condition': {
        let result: boolean;
        try {
          result = evaluateCondition(node.condition as Condition, context);
        } catch (err) {
          if (!(err instanceof ConditionError)) throw err;
          // Undecidable on this run's data: the run fails with the reason, no branch is taken by accident.
          const step = await this.insertStep(unit, run, node, { status: 'running', input: payload ?? null });
          return this.failStep(unit, run, step, { code: err.code, message: err.message });
        }
        const step = await this.insertStep(unit, run, node, {
          status: 'completed',
          input: payload ?? null,
          output: { result },
        });
        run.data = { ...run.data, nodes: { ...run.data.nodes, [node.id]: { result } } };
        unit.event(run, 'step.completed', { nodeType: 'condition', result }, step);
        return this.propagate(unit, run, node.id, payload, result ? 'true' : 'false');
      }
      case 'agent':
        return this.queueAgentStep(
          unit,
          run,
          node,
          node.agentId!,
          { input: input ?? null, wait: { agentId: node.agentId } },
          { nodeType: 'agent', agentId: node.agentId },
        );
      case 'team':
        return this.startTeam(unit, run, node, input);
      case 'approval': {
        const approvalId = prefixedHexId('apr');
        const step = await this.insertStep(unit, run, node, {
          status: 'waiting',
          input: input ?? null,
          wait: { kind: 'approval', approvalId },
        });
        await unit.tx.insert(approvals).values({
          id: approvalId,
          tenantId: run.tenantId,
          namespaceId: run.namespaceId,
          runId: run.id,
          stepId: step.id,
          title: node.title ?? `Approve step '${node.id}'`,
          status: 'pending',
          createdAt: unit.now,
        });
        unit.event(run, 'approval.requested', { approvalId, title: node.title ?? null }, step);
        return;
      }
      case 'timer': {
        const dueAt = new Date(unit.now.getTime() + node.delaySeconds! * 1000);
        const step = await this.insertStep(unit, run, node, {
          status: 'waiting',
          input: input ?? null,
          wait: { kind: 'timer' },
          dueAt,
        });
        unit.event(run, 'timer.scheduled', { dueAt: dueAt.toISOString() }, step);
        await resumeStepTask.enqueue(unit.tx, { stepId: step.id }, { runAt: dueAt, jobKey: step.id });
        return;
      }
      case 'signal': {
        const step = await this.insertStep(unit, run, node, {
          status: 'waiting',
          input: input ?? null,
          wait: { kind: 'signal', name: node.signal },
        });
        unit.event(run, 'signal.waiting', { signal: node.signal }, step);
        const [buffered] = await unit.tx
          .select()
          .from(signals)
          .where(
            and(eq(signals.runId, run.id), eq(signals.name, node.signal!), isNull(signals.consumedByStep)),
          )
          .orderBy(signals.id)
          .limit(1);
        if (buffered) await this.consumeSignal(unit, run, step, buffered);
        return;
      }
      case 'subrun':
        return this.startSubrun(unit, run, node, input);
      case 'start':
        throw new Error('unreachable: a start node has no incoming edge');
    }
  }

  private async deliverToJoin(
    unit: Unit,
    run: RunRow,
    node: GraphNode,
    fromId: string,
    kind: 'live' | 'skip',
    payload: unknown,
  ): Promise<void> {
    const graph = this.graphOf(unit, run);
    let [step] = await unit.tx
      .select()
      .from(steps)
      .where(and(eq(steps.runId, run.id), eq(steps.nodeId, node.id)))
      .for('update');
    step ??= await this.insertStep(unit, run, node, { status: 'waiting', input: {}, wait: { kind: 'join' } });
    const arrivals = { ...step.arrivals, [fromId]: kind };
    const inputs = {
      ...((step.input as Record<string, unknown>) ?? {}),
      ...(kind === 'live' ? { [fromId]: payload ?? null } : {}),
    };
    const expected = (graph.incoming.get(node.id) ?? []).length;
    if (Object.keys(arrivals).length < expected) {
      await this.updateStep(unit, step.id, { arrivals, input: inputs });
      return;
    }
    const live = Object.values(arrivals).includes('live');
    // The branches in the order of the join's incoming edges, not of their arrival: the same run data whichever
    // branch finished first.
    const ordered = Object.fromEntries(
      (graph.incoming.get(node.id) ?? []).flatMap((e) =>
        e.from in inputs ? [[e.from, inputs[e.from]]] : [],
      ),
    );
    await this.updateStep(unit, step.id, {
      arrivals,
      input: ordered,
      status: live ? 'completed' : 'skipped',
      output: live ? ordered : null,
      finishedAt: unit.now,
    });
    if (!live) {
      unit.event(run, 'step.skipped', { nodeType: 'join' }, step);
      return this.propagate(unit, run, node.id, null, SKIP_ALL);
    }
    run.data = { ...run.data, nodes: { ...run.data.nodes, [node.id]: ordered } };
    unit.event(run, 'step.completed', { nodeType: 'join', branches: Object.keys(ordered) }, step);
    return this.propagate(unit, run, node.id, ordered, null);
  }

  private async startTeam(unit: Unit, run: RunRow, node: GraphNode, input: unknown): Promise<void> {
    const members = await this.lookups.teamMembers(
      { tenant: run.tenantId, namespace: run.namespaceId },
      node.teamId!,
      unit.tx,
    );
    const step = await this.insertStep(unit, run, node, {
      status: 'waiting',
      input: input ?? null,
      wait: { kind: 'team', teamId: node.teamId, members: members ?? [] },
    });
    if (!members || members.length === 0) {
      return this.failStep(unit, run, step, {
        code: 'team_not_found',
        message: `Team '${node.teamId}' does not exist or has no members.`,
      });
    }
    unit.event(run, 'team.started', { teamId: node.teamId, members }, step);
    await this.addMember(unit, run, step, members, 0, input);
  }

  private async addMember(
    unit: Unit,
    run: RunRow,
    teamStep: StepRow,
    members: string[],
    index: number,
    input: unknown,
  ): Promise<void> {
    await this.queueAgentStep(
      unit,
      run,
      { id: `${teamStep.nodeId}#${index}`, type: 'team_member' },
      members[index]!,
      { input: input ?? null, parentStepId: teamStep.id, wait: { agentId: members[index], index } },
      { nodeType: 'team_member', agentId: members[index], index },
    );
  }

  /**
   * Gives an agent node (or a team member) its step: queued for a job (`agent-gateway:run-step`), or, while the
   * unit may run instant agents inline, run here at once (claimed as attempt 1 in this transaction).
   */
  private async queueAgentStep(
    unit: Unit,
    run: RunRow,
    node: { id: string; type: string },
    agentId: string,
    fields: Pick<StepRow, 'input' | 'wait'> & Partial<Pick<StepRow, 'parentStepId'>>,
    queuedData: Record<string, unknown>,
  ): Promise<void> {
    if (unit.inlineSteps > 0) {
      const agent =
        unit.agents.get(agentId) ??
        (await this.lookups.agent({ tenant: run.tenantId, namespace: run.namespaceId }, agentId, unit.tx));
      if (agent) unit.agents.set(agentId, agent);
      if (agent && isInstant(agent.definition as AgentDefinition)) {
        unit.inlineSteps -= 1;
        // Executed before the step is written, so its row is inserted once, in its final state.
        const claimed = { ...fields, status: 'running' as const, attempt: 1, claimedAt: unit.now };
        const stepId = prefixedHexId('stp');
        const outcome = await this.executeAgent(agent, run, node.id, fields.input);
        if ('error' in outcome) {
          const step = await this.insertStep(unit, run, node, { ...claimed, id: stepId });
          unit.event(run, 'step.queued', queuedData, step);
          unit.event(run, 'step.started', { attempt: 1 }, step);
          return this.failStep(unit, run, step, outcome.error);
        }
        const step = await this.insertStep(unit, run, node, {
          ...claimed,
          id: stepId,
          status: 'completed',
          output: outcome.output ?? null,
          finishedAt: unit.now,
        });
        unit.event(run, 'step.queued', queuedData, step);
        unit.event(run, 'step.started', { attempt: 1 }, step);
        return this.completeStep(unit, run, step, outcome.output, { events: outcome.events, written: true });
      }
    }
    const step = await this.insertStep(unit, run, node, { ...fields, status: 'pending' });
    unit.event(run, 'step.queued', queuedData, step);
    await runStepTask.enqueue(unit.tx, { stepId: step.id }, { jobKey: step.id });
    unit.queued.push(step.id);
  }

  /** Executes a claimed step of an instant agent in the unit's transaction and completes or fails it. */
  private async executeInstant(unit: Unit, run: RunRow, step: StepRow, agent: AgentRow): Promise<void> {
    const outcome = await this.executeAgent(agent, run, step.nodeId, step.input);
    if ('error' in outcome) return this.failStep(unit, run, step, outcome.error);
    await this.completeStep(unit, run, step, outcome.output, { events: outcome.events });
  }

  private async startSubrun(unit: Unit, run: RunRow, node: GraphNode, input: unknown): Promise<void> {
    const scope = { tenant: run.tenantId, namespace: run.namespaceId };
    const step = await this.insertStep(unit, run, node, {
      status: 'waiting',
      input: input ?? null,
      wait: { kind: 'subrun' },
    });
    let depth = 0;
    for (let parent = run.parentRunId; parent; depth++) {
      const [row] = await unit.tx
        .select({ parentRunId: runs.parentRunId })
        .from(runs)
        .where(eq(runs.id, parent));
      parent = row?.parentRunId ?? null;
    }
    if (depth + 1 > MAX_SUBRUN_DEPTH)
      return this.failStep(unit, run, step, {
        code: 'subrun_depth_exceeded',
        message: `Sub-runs nest at most ${MAX_SUBRUN_DEPTH} deep.`,
      });
    const published = await this.lookups.publishedRevision(scope, node.definitionId!, unit.tx);
    if (!published)
      return this.failStep(unit, run, step, {
        code: 'not_published',
        message: `Workflow '${node.definitionId}' has no published revision.`,
      });
    const child = await this.createRun(unit, {
      scope,
      targetType: 'orchestration',
      targetId: node.definitionId!,
      revision: published.revision,
      graph: published.graph,
      input,
      createdBy: run.createdBy,
      parentRunId: run.id,
      parentStepId: step.id,
      triggerDepth: run.triggerDepth,
      invocationId: run.invocationId ?? undefined,
      invocationConversationId: run.invocationConversationId ?? undefined,
    });
    await this.updateStep(unit, step.id, { wait: { kind: 'subrun', runId: child.id } });
    unit.event(
      run,
      'subrun.started',
      { childRunId: child.id, definitionId: node.definitionId, revision: published.revision },
      step,
    );
  }

  /** Completes a step with `output`, records it, and moves the run on. */
  private async completeStep(
    unit: Unit,
    run: RunRow,
    step: StepRow,
    output: unknown,
    options: {
      events?: AgentEvent[];
      branch?: string | null;
      eventData?: Record<string, unknown>;
      /** The step row was written completed already (an inline step inserted in its final state). */
      written?: boolean;
    } = {},
  ): Promise<void> {
    if (!options.written)
      await completeStepStatement.rows(unit.tx, {
        id: step.id,
        output: output === null || output === undefined ? null : JSON.stringify(output),
        finishedAt: unit.now.toISOString(),
      });
    for (const e of options.events ?? []) unit.event(run, e.type, e.data, step);
    unit.event(
      run,
      'step.completed',
      { nodeType: step.nodeType, attempt: step.attempt, output, ...options.eventData },
      step,
    );
    if (step.nodeType === 'team_member') {
      const [team] = await unit.tx.select().from(steps).where(eq(steps.id, step.parentStepId!)).for('update');
      const members = (team!.wait as { members: string[] }).members;
      const index = (step.wait as { index: number }).index;
      if (index + 1 < members.length) {
        unit.event(
          run,
          'team.handoff',
          { from: members[index], to: members[index + 1], index: index + 1 },
          team!,
        );
        return this.addMember(unit, run, team!, members, index + 1, output);
      }
      return this.completeStep(unit, run, team!, output, { eventData: { handoffs: members.length - 1 } });
    }
    run.data = { ...run.data, nodes: { ...run.data.nodes, [step.nodeId]: output ?? null } };
    const passOn =
      step.nodeType === 'approval' || step.nodeType === 'timer' || step.nodeType === 'signal'
        ? (step.input ?? output)
        : output;
    return this.propagate(unit, run, step.nodeId, passOn, options.branch ?? null);
  }

  /** Fails a step and with it the run (a member's failure fails its team step too). */
  private async failStep(
    unit: Unit,
    run: RunRow,
    step: StepRow,
    error: { code: string; message: string },
  ): Promise<void> {
    await this.updateStep(unit, step.id, { status: 'failed', error, finishedAt: unit.now });
    unit.event(run, 'step.failed', { nodeType: step.nodeType, attempt: step.attempt, error }, step);
    if (step.parentStepId)
      await this.updateStep(unit, step.parentStepId, { status: 'failed', error, finishedAt: unit.now });
    const nodeId = step.nodeId.split('#')[0];
    await this.finishRun(unit, run, 'failed', {
      code: error.code,
      message: `Step '${nodeId}' failed: ${error.message}`,
    });
  }

  /**
   * Ends a run as failed or cancelled: its unfinished steps, approvals and executions are cancelled, and so are
   * its unfinished sub-runs.
   */
  private async finishRun(
    unit: Unit,
    run: RunRow,
    status: 'failed' | 'cancelled',
    error: { code: string; message: string },
  ) {
    if (isTerminal(run.status)) return;
    run.status = status;
    run.error = error;
    run.finishedAt = unit.now;
    const open = ['pending', 'running', 'waiting'] as const;
    await unit.tx
      .update(steps)
      .set({ status: 'cancelled', finishedAt: unit.now })
      .where(and(eq(steps.runId, run.id), inArray(steps.status, [...open])));
    await unit.tx
      .update(approvals)
      .set({ status: 'cancelled' })
      .where(and(eq(approvals.runId, run.id), eq(approvals.status, 'pending')));
    const ended = await unit.tx
      .update(executions)
      .set({ status: 'cancelled', finishedAt: unit.now })
      .where(and(eq(executions.runId, run.id), inArray(executions.status, ['queued', 'claimed'])))
      .returning({ id: executions.id });
    await this.lookups.endAttempts(
      unit.tx,
      ended.map((e) => e.id),
    );
    const children = await unit.tx
      .select({ id: runs.id })
      .from(runs)
      .where(and(eq(runs.parentRunId, run.id), inArray(runs.status, ['queued', 'running', 'waiting'])));
    for (const { id } of children) {
      const child = await this.lockRun(unit, id);
      if (child)
        await this.finishRun(unit, child, 'cancelled', {
          code: `parent_${status}`,
          message: `The parent run was ${status}.`,
        });
    }
  }

  /**
   * Writes every run the unit changed (its status settled from its steps), records the run events of runs that
   * finished, tells the parent step of a finished sub-run and the observers, then appends the events.
   *
   * Lock order: the event-log lock (taken by the append) is the last lock of the transaction, after every row lock
   * the observers take (an invocation's row, an issue's). A flush nested in another one's observers (a run an
   * automation starts when a run ends) therefore appends nothing and calls no flush hook: its events join the
   * outermost flush's, appended once at its end. Appending them in the middle, before the outer observers locked
   * their rows, deadlocked with a cancel or a timeout (the invocation's row, then the event-log lock).
   */
  private async flush(unit: Unit): Promise<void> {
    const observe: [RunObserver[], RunRow][] = [];
    for (const { row: run, wasTerminal, wasStatus } of unit.runs.values()) {
      if (!isTerminal(run.status)) await this.settle(unit, run);
      await saveRunStatement.rows(unit.tx, {
        id: run.id,
        status: run.status,
        data: JSON.stringify(run.data),
        output: run.output === null || run.output === undefined ? null : JSON.stringify(run.output),
        error: run.error ? JSON.stringify(run.error) : null,
        finishedAt: run.finishedAt ? run.finishedAt.toISOString() : null,
      });
      if (!wasTerminal && isTerminal(run.status)) {
        unit.event(
          run,
          `run.${run.status}`,
          run.status === 'completed' ? { output: run.output } : { error: run.error },
        );
        if (run.parentStepId) await resumeStepTask.enqueue(unit.tx, { stepId: run.parentStepId });
        observe.push([this.observers, run]);
      } else if (!isTerminal(run.status) && run.status !== wasStatus) {
        observe.push([this.statusObservers, run]);
      }
    }
    // The events first (an invocation's progress precedes the status move its observer makes), then the observers.
    for (const hook of this.eventHooks) hook(unit.tx, unit.events, unit.runs);
    const outer = this.flushing.get(unit.tx);
    const nested = await this.observeNesting(unit.tx, observe, outer);
    // The events of the flushes nested in the observers follow this one's (in the order they happened).
    const events = nested.length > 0 ? [...unit.events, ...nested] : unit.events;
    if (outer) {
      outer.push(...events);
      return;
    }
    if (unit.deferEvents) {
      unit.deferEvents.push(...events);
      return;
    }
    await appendRunEvents(unit.tx, events, unit.now);
    for (const hook of this.flushHooks) await hook(unit.tx);
  }

  /**
   * Calls the observers of a flush with the flushes they cause nested in it ({@link flush}): returns the run events
   * of those, and puts `outer` (the events of the flush this one is nested in, if any) back in place.
   */
  private async observeNesting(
    tx: Tx,
    observe: readonly [RunObserver[], RunRow][],
    outer: NewRunEvent[] | undefined,
  ): Promise<NewRunEvent[]> {
    const nested: NewRunEvent[] = [];
    this.flushing.set(tx, nested);
    try {
      for (const [observers, run] of observe) for (const observer of observers) await observer(tx, run);
    } finally {
      if (outer) this.flushing.set(tx, outer);
      else this.flushing.delete(tx);
    }
    return nested;
  }

  /** A running run's status from its steps: running while any is pending or running, waiting, or done. */
  private async settle(unit: Unit, run: RunRow) {
    const [counts] = await settleStatement.rows(unit.tx, { runId: run.id });
    if (counts!.active > 0) run.status = 'running';
    else if (counts!.waiting > 0) run.status = 'waiting';
    else {
      if (!counts!.ended) {
        run.status = 'failed';
        run.error = { code: 'no_end_reached', message: 'The run ended without reaching an end node.' };
      } else {
        run.status = 'completed';
        run.output = counts!.output;
      }
      run.finishedAt = unit.now;
    }
  }

  /**
   * Runs a pending agent step (job `agent-gateway:run-step`), then, in the same job, the first agent step its
   * completion queued (up to {@link MAX_CHAINED_STEPS}): a sequence of agent steps does not wait for a job pickup
   * between steps. Each chained step is claimed like any other (its own job finds it taken and does nothing).
   */
  async runStep(stepId: string): Promise<void> {
    let next: string | undefined = stepId;
    for (let n = 0; next && n < MAX_CHAINED_STEPS; n++) next = await this.runOneStep(next);
  }

  /**
   * Claims and executes one pending agent step. A `remote` agent's step becomes a queued execution for a runtime
   * host instead.
   * @returns the first agent step the completion queued, if any.
   */
  private async runOneStep(stepId: string): Promise<string | undefined> {
    const [pending] = await this.db.select().from(steps).where(eq(steps.id, stepId));
    if (pending?.status !== 'pending') return undefined;
    const [current] = await this.db.select().from(runs).where(eq(runs.id, pending.runId));
    if (!current || isTerminal(current.status)) return undefined;
    const instantAgentId = (pending.wait as { agentId?: string } | null)?.agentId ?? '';
    const instant = await this.lookups.agent(
      { tenant: current.tenantId, namespace: current.namespaceId },
      instantAgentId,
      this.db,
    );
    if (instant && isInstant(instant.definition as AgentDefinition))
      return this.runInstantStep(stepId, instant);
    const now = this.clock.now();
    const claimed = await this.db.transaction(async (tx) => {
      const [step] = await tx
        .update(steps)
        .set({ status: 'running', attempt: sql`${steps.attempt} + 1`, claimedAt: now })
        .where(and(eq(steps.id, stepId), eq(steps.status, 'pending')))
        .returning();
      if (!step) return undefined;
      await appendRunEvents(
        tx,
        [
          {
            runId: step.runId,
            stepId,
            nodeId: step.nodeId,
            type: 'step.started',
            data: { attempt: step.attempt },
          },
        ],
        now,
      );
      return step;
    });
    if (!claimed) return undefined;
    const [run] = await this.db.select().from(runs).where(eq(runs.id, claimed.runId));
    if (!run || isTerminal(run.status)) return undefined;
    const scope = { tenant: run.tenantId, namespace: run.namespaceId };
    const agentId = (claimed.wait as { agentId?: string } | null)?.agentId ?? '';
    const agent = await this.lookups.agent(scope, agentId, this.db);
    let outcome:
      | { output: unknown; events: AgentEvent[] }
      | { error: { code: string; message: string } }
      | { remote: AgentRow };
    if (!agent)
      outcome = {
        error: { code: 'agent_not_found', message: `Agent '${agentId}' does not exist in this scope.` },
      };
    else if ((agent.definition as AgentDefinition).kind === 'remote') outcome = { remote: agent };
    else {
      const renewal = this.renewWhileRunning(stepId, claimed.attempt);
      try {
        outcome = await this.executeAgent(agent, run, claimed.nodeId, claimed.input);
      } finally {
        await renewal.stop();
      }
    }
    return this.db.transaction(async (tx) => {
      const unit = new Unit(tx, this.clock.now());
      const locked = await this.lockRun(unit, claimed.runId);
      const [step] = await tx.select().from(steps).where(eq(steps.id, stepId)).for('update');
      // Only the attempt that holds the step may settle it: a claim lost to the sweep (this worker was presumed
      // dead) is discarded here, so a step's outcome is applied once.
      if (!locked || !step || step.status !== 'running' || step.attempt !== claimed.attempt) return undefined;
      if ('remote' in outcome) {
        const executionId = await this.lookups.queueExecution(tx, {
          runId: locked.id,
          stepId,
          agent: outcome.remote,
          input: step.input,
        });
        await this.updateStep(unit, stepId, {
          status: 'waiting',
          wait: { ...(step.wait ?? {}), kind: 'execution', executionId },
        });
        unit.event(locked, 'execution.queued', { executionId, agentId }, step);
      } else if ('error' in outcome) await this.failStep(unit, locked, step, outcome.error);
      else await this.completeStep(unit, locked, step, outcome.output, { events: outcome.events });
      await this.flush(unit);
      return unit.queued[0];
    });
  }

  /**
   * Keeps a running step's claim alive while this worker executes it: every quarter of the step lease (wall time)
   * `claimed_at` moves to the injected clock's now, for attempt `attempt` only, so the sweep never takes a step from
   * a live worker however long it runs; a worker that dies stops renewing and its claim lapses after the lease.
   * @returns `stop()`, which ends the renewals and waits for one in flight.
   */
  private renewWhileRunning(stepId: string, attempt: number): { stop(): Promise<void> } {
    let inFlight: Promise<unknown> = Promise.resolve();
    const timer = setInterval(
      () => {
        inFlight = this.db
          .update(steps)
          .set({ claimedAt: this.clock.now() })
          .where(and(eq(steps.id, stepId), eq(steps.status, 'running'), eq(steps.attempt, attempt)))
          .catch(() => undefined); // a failed renewal is retried at the next tick; the lease covers three
      },
      Math.max(1000, (this.stepLeaseSeconds * 1000) / 4),
    );
    timer.unref();
    return {
      async stop() {
        clearInterval(timer);
        await inFlight;
      },
    };
  }

  /**
   * Runs a step of an agent that does no I/O (template, JSON transform, tool use without `fetch_url`) in one
   * transaction: claim, execute, outcome and next steps commit together, or not at all (a worker lost mid-way
   * leaves the step `pending`, and the sweep queues it again).
   */
  private async runInstantStep(stepId: string, agent: AgentRow): Promise<string | undefined> {
    return this.db.transaction(async (tx) => {
      const unit = new Unit(tx, this.clock.now());
      const [first] = await tx.select({ runId: steps.runId }).from(steps).where(eq(steps.id, stepId));
      const run = first ? await this.lockRun(unit, first.runId) : undefined;
      const [locked] = await tx.select().from(steps).where(eq(steps.id, stepId)).for('update');
      if (!run || !locked || locked.status !== 'pending' || isTerminal(run.status)) return undefined;
      const step = await this.updateStep(unit, stepId, {
        status: 'running',
        attempt: locked.attempt + 1,
        claimedAt: unit.now,
      });
      unit.event(run, 'step.started', { attempt: step.attempt }, step);
      await this.executeInstant(unit, run, step, agent);
      await this.flush(unit);
      return unit.queued[0];
    });
  }

  /**
   * Looks again at a waiting step (job `agent-gateway:resume-step`): a due timer fires (by the injected clock), a
   * finished sub-run or remote execution hands over its result (or fails the run).
   */
  async resumeStep(stepId: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const unit = new Unit(tx, this.clock.now());
      const [first] = await tx.select({ runId: steps.runId }).from(steps).where(eq(steps.id, stepId));
      if (!first) return;
      const run = await this.lockRun(unit, first.runId);
      const [step] = await tx.select().from(steps).where(eq(steps.id, stepId)).for('update');
      if (!run || !step || step.status !== 'waiting' || isTerminal(run.status)) return;
      if (await this.resumeWaiting(unit, run, step)) await this.flush(unit);
    });
  }

  /** Moves a waiting step on when what it waits for is there; true when something changed. */
  private async resumeWaiting(unit: Unit, run: RunRow, step: StepRow): Promise<boolean> {
    const wait = (step.wait ?? {}) as { kind?: string; runId?: string; executionId?: string };
    if (wait.kind === 'timer') {
      if (!step.dueAt || step.dueAt.getTime() > unit.now.getTime()) return false;
      unit.event(run, 'timer.fired', { dueAt: step.dueAt.toISOString() }, step);
      await this.completeStep(unit, run, step, { firedAt: unit.now.toISOString() });
      return true;
    }
    if (wait.kind === 'subrun') {
      const [child] = await unit.tx.select().from(runs).where(eq(runs.id, wait.runId!));
      if (!child || !isTerminal(child.status)) return false;
      if (child.status === 'completed')
        await this.completeStep(unit, run, step, child.output, { eventData: { childRunId: child.id } });
      else
        await this.failStep(unit, run, step, {
          code: 'subrun_failed',
          message: `Sub-run '${child.id}' ${child.status}.`,
        });
      return true;
    }
    if (wait.kind === 'execution') {
      const [exe] = await unit.tx.select().from(executions).where(eq(executions.id, wait.executionId!));
      if (exe?.status === 'completed')
        await this.completeStep(unit, run, step, exe.output, { eventData: { executionId: exe.id } });
      else if (exe?.status === 'failed')
        await this.failStep(
          unit,
          run,
          step,
          exe.error ?? { code: 'execution_failed', message: 'The execution failed.' },
        );
      else return false;
      return true;
    }
    return false;
  }
  /**
   * Decides a pending approval: its step completes with `{decision, comment, decidedBy}` and the run follows the
   * edge of the decision; a rejection with no `rejected` edge fails the run (`approval_rejected`).
   * @throws ApiError 404 (not in the scope); 409 `invalid_state` when already decided or cancelled.
   */
  async decide(
    scope: Scope,
    approvalId: string,
    userId: string,
    decision: 'approved' | 'rejected',
    comment: string | undefined,
  ) {
    return this.db.transaction(async (tx) => {
      const unit = new Unit(tx, this.clock.now());
      const [found] = await tx
        .select({ runId: approvals.runId })
        .from(approvals)
        .where(and(eq(approvals.id, approvalId), inScope(approvals, scope)));
      if (!found) throw notFound('approval', approvalId);
      const run = (await this.lockRun(unit, found.runId))!;
      const [approval] = await tx.select().from(approvals).where(eq(approvals.id, approvalId)).for('update');
      if (approval!.status !== 'pending')
        throw invalidState(`Approval '${approvalId}' is already ${approval!.status}.`, {
          status: approval!.status,
        });
      const [decided] = await tx
        .update(approvals)
        .set({ status: decision, decidedBy: userId, comment: comment ?? null, decidedAt: unit.now })
        .where(eq(approvals.id, approvalId))
        .returning();
      const [step] = await tx.select().from(steps).where(eq(steps.id, approval!.stepId)).for('update');
      unit.event(
        run,
        'approval.decided',
        { approvalId, decision, decidedBy: userId, comment: comment ?? null },
        step,
      );
      const output = { decision, comment: comment ?? null, decidedBy: userId };
      const graph = this.graphOf(unit, run);
      const hasEdge = (graph.outgoing.get(step!.nodeId) ?? []).some((e) => e.on === decision);
      if (hasEdge) await this.completeStep(unit, run, step!, output, { branch: decision });
      else {
        await this.updateStep(unit, step!.id, { status: 'completed', output, finishedAt: unit.now });
        unit.event(run, 'step.completed', { nodeType: 'approval', output }, step!);
        await this.finishRun(unit, run, 'failed', {
          code: 'approval_rejected',
          message: `Approval '${approvalId}' was rejected.`,
        });
      }
      await this.flush(unit);
      return decided!;
    });
  }

  /**
   * Sends a signal to a run: a step waiting for that name completes with the payload; otherwise the signal waits
   * for a signal node to reach it.
   * @throws ApiError 404; 409 `invalid_state` for a finished run.
   */
  async signal(scope: Scope, runId: string, name: string, payload: unknown) {
    return this.db.transaction(async (tx) => {
      const unit = new Unit(tx, this.clock.now());
      const run = await this.lockRun(unit, runId);
      if (!run || run.tenantId !== scope.tenant || run.namespaceId !== scope.namespace)
        throw notFound('run', runId);
      if (isTerminal(run.status))
        throw invalidState(`Run '${runId}' is ${run.status}.`, { status: run.status });
      const [signal] = await tx
        .insert(signals)
        .values({ runId, name, payload: payload ?? null, createdAt: unit.now })
        .returning();
      unit.event(run, 'signal.received', { signal: name });
      const [waiting] = await tx
        .select()
        .from(steps)
        .where(
          and(
            eq(steps.runId, runId),
            eq(steps.status, 'waiting'),
            sql`${steps.wait}->>'kind' = 'signal'`,
            sql`${steps.wait}->>'name' = ${name}`,
          ),
        )
        .limit(1)
        .for('update');
      if (waiting) await this.consumeSignal(unit, run, waiting, signal!);
      await this.flush(unit);
      return { signalId: signal!.id, consumed: waiting !== undefined };
    });
  }

  private async consumeSignal(unit: Unit, run: RunRow, step: StepRow, signal: typeof signals.$inferSelect) {
    await unit.tx.update(signals).set({ consumedByStep: step.id }).where(eq(signals.id, signal.id));
    await this.completeStep(
      unit,
      run,
      step,
      { signal: signal.name, payload: signal.payload },
      { eventData: { signal: signal.name } },
    );
  }

  /** Cancels a run (and its sub-runs). @throws ApiError 404; 409 `invalid_state` when it already finished. */
  async cancel(scope: Scope, runId: string, userId: string): Promise<RunRow> {
    return this.db.transaction(async (tx) => {
      const unit = new Unit(tx, this.clock.now());
      const run = await this.lockRun(unit, runId);
      if (!run || run.tenantId !== scope.tenant || run.namespaceId !== scope.namespace)
        throw notFound('run', runId);
      if (isTerminal(run.status))
        throw invalidState(`Run '${runId}' is already ${run.status}.`, { status: run.status });
      await this.finishRun(unit, run, 'cancelled', { code: 'cancelled', message: `Cancelled by ${userId}.` });
      await this.flush(unit);
      return run;
    });
  }

  /**
   * The sweep (every minute, and `POST /_ops/runtime/tick`): steps claimed longer ago than the step lease go back
   * to `pending` and are queued again (their worker is presumed lost), and due timers fire.
   */
  async sweep(): Promise<{ reclaimedSteps: number; firedTimers: number }> {
    const now = this.clock.now();
    const staleBefore = new Date(now.getTime() - this.stepLeaseSeconds * 1000);
    const reclaimed = await this.db.transaction(async (tx) => {
      const rows = await tx
        .update(steps)
        .set({ status: 'pending' })
        .where(and(eq(steps.status, 'running'), lte(steps.claimedAt, staleBefore)))
        .returning();
      for (const step of rows) await runStepTask.enqueue(tx, { stepId: step.id }, { jobKey: step.id });
      // Pending agent steps older than the lease whose job never settled them (its worker died inside a one-
      // transaction step, which rolled back): queued again (a job key held by a locked job gets a new job).
      const stuck = await tx
        .select({ id: steps.id })
        .from(steps)
        .where(and(eq(steps.status, 'pending'), lte(steps.createdAt, staleBefore)))
        .limit(1000);
      for (const step of stuck) await runStepTask.enqueue(tx, { stepId: step.id }, { jobKey: step.id });
      await appendRunEvents(
        tx,
        rows.map((s) => ({
          runId: s.runId,
          stepId: s.id,
          nodeId: s.nodeId,
          type: 'step.reclaimed',
          data: { attempt: s.attempt },
        })),
        now,
      );
      return rows.length;
    });
    const due = await this.db
      .select({ id: steps.id })
      .from(steps)
      .where(and(eq(steps.status, 'waiting'), lte(steps.dueAt, now)))
      .limit(1000);
    for (const { id } of due) await this.resumeStep(id);
    return { reclaimedSteps: reclaimed, firedTimers: due.length };
  }
}
