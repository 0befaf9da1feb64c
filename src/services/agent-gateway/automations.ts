/**
 * Automations (spec E: `GET, POST /api/v1/automations`; README "Automations"): a trigger that starts a run of an
 * agent, a team or a published workflow.
 *
 * - `schedule` triggers take a five-field cron expression (minute hour day-of-month month day-of-week, parsed with
 *   `cron-parser`) and an IANA time zone (default UTC). `next_fire_at` is computed by the injected clock; the
 *   minute sweep fires every due automation once and computes the next time after now (a service that was down
 *   does not replay the ticks it missed).
 * - `event` triggers name an event type: `issue.created`, `issue.accepted`, `issue.rejected`, `run.completed`,
 *   `run.failed`, or a component's `custom.<name>` (posted with the internal service token); an optional condition
 *   on `{event: {type, data}}` filters them. A run an event started carries a trigger depth; events of runs three
 *   triggers deep start nothing more (no endless chains).
 */
import { CronExpressionParser } from 'cron-parser';
import { and, desc, eq, lte, sql } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.ts';
import { type Db, type Executor, NamedStatement, type Tx } from '../../platform/database.ts';
import { ApiError } from '../../platform/errors.ts';
import { prefixedHexId } from '../../platform/ids.ts';
import type { AppLogger } from '../../platform/logger.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import { badRequest, invalidFields, notFound } from './agent-gateway-errors.ts';
import { automations } from './db/schema.ts';
import type { Scope } from './identity.ts';
import type { OrchestrationService } from './orchestration.ts';
import { expectVersion, inScope, pagedRows, rowOf, selectColumns } from './queries.ts';
import type { RunRow } from './run-engine.ts';
import { type Condition, ConditionError, conditionProblems, evaluateCondition } from './templates.ts';

/** Event types an automation may name: a built-in one or `custom.<name>`. */
export const EVENT_TYPE_PATTERN =
  '^(issue\\.(created|accepted|rejected)|run\\.(completed|failed)|custom\\.[a-z0-9_.-]{1,100})$';

/** How deep a chain of event-triggered runs goes before events stop starting runs. */
export const MAX_TRIGGER_DEPTH = 3;

export type Trigger =
  | { type: 'schedule'; cron: string; timezone?: string }
  | { type: 'event'; event: string; filter?: unknown };

export interface RunTargetInput {
  type: 'agent' | 'team' | 'orchestration';
  id: string;
  revision?: number;
}

type AutomationRow = typeof automations.$inferSelect;

function automationView(row: AutomationRow) {
  return {
    id: row.id,
    tenant: row.tenantId,
    namespace: row.namespaceId,
    name: row.name,
    enabled: row.enabled,
    trigger: row.trigger as Trigger,
    target: row.target as unknown as RunTargetInput,
    input: row.input,
    nextFireAt: row.nextFireAt ? row.nextFireAt.toISOString() : null,
    lastFiredAt: row.lastFiredAt ? row.lastFiredAt.toISOString() : null,
    fireCount: row.fireCount,
    version: row.version,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/**
 * The next instant after `from` a five-field cron expression names in `timezone`.
 * @throws ApiError 400 `invalid_cron` for an expression or time zone the parser refuses, or one with seconds.
 */
export function nextFire(cron: string, timezone: string, from: Date): Date {
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5 && !cron.trim().startsWith('@'))
    throw badRequest(
      'invalid_cron',
      `'${cron}' is not a five-field cron expression (minute hour day month weekday).`,
    );
  try {
    Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    throw badRequest('invalid_cron', `'${timezone}' is not an IANA time zone.`);
  }
  try {
    return CronExpressionParser.parse(cron, { currentDate: from, tz: timezone, strict: false })
      .next()
      .toDate();
  } catch (err) {
    throw badRequest('invalid_cron', `'${cron}' is not a valid cron expression: ${(err as Error).message}`);
  }
}

/** The enabled automations of a scope listening to an event type (a prepared statement: read at every run's end). */
const listeningStatement = new NamedStatement<Record<string, unknown>>(
  'agent_gateway_automations_listening',
  sql`select ${selectColumns(automations, 'a', 'a_')} from ${automations} a
    where a.tenant_id = ${sql.placeholder('tenant')} and a.namespace_id = ${sql.placeholder('namespace')}
      and a.enabled and a.trigger->>'type' = 'event' and a.trigger->>'event' = ${sql.placeholder('type')}`,
);

/** Automations of a scope, and their firing. */
export class AutomationService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly orchestration: OrchestrationService,
    private readonly logger: AppLogger,
  ) {}

  /** The checked trigger and its first fire time. @throws ApiError 400 (`invalid_cron`, `validation_failed`). */
  private checkTrigger(trigger: Trigger): { trigger: Trigger; nextFireAt: Date | null } {
    if (trigger.type === 'schedule') {
      const timezone = trigger.timezone ?? 'UTC';
      return {
        trigger: { type: 'schedule', cron: trigger.cron, timezone },
        nextFireAt: nextFire(trigger.cron, timezone, this.clock.now()),
      };
    }
    if (trigger.filter !== undefined) {
      const problems = conditionProblems(trigger.filter, 'filter', { roots: ['event'] });
      if (problems.length > 0)
        throw invalidFields(problems.map((p) => ({ location: 'body', field: 'trigger', message: p })));
    }
    return { trigger, nextFireAt: null };
  }

  /**
   * Creates an automation.
   * @throws ApiError 400 (trigger), 404 (target not in the scope), 409 `not_published` (a workflow target).
   */
  async create(
    scope: Scope,
    userId: string | null,
    input: { name: string; enabled?: boolean; trigger: Trigger; target: RunTargetInput; input?: unknown },
    executor: Executor = this.db,
  ) {
    const { trigger, nextFireAt } = this.checkTrigger(input.trigger);
    await this.orchestration.runPlan(scope, input.target, executor);
    const now = this.clock.now();
    const enabled = input.enabled ?? true;
    const [row] = await executor
      .insert(automations)
      .values({
        id: prefixedHexId('aut'),
        tenantId: scope.tenant,
        namespaceId: scope.namespace,
        name: input.name,
        enabled,
        trigger: trigger as Record<string, unknown>,
        target: input.target as unknown as Record<string, unknown>,
        input: input.input ?? null,
        nextFireAt: enabled ? nextFireAt : null,
        fireCount: 0,
        version: 1,
        createdBy: userId,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    return automationView(row!);
  }

  /** A page of the scope's automations, newest first. */
  async list(scope: Scope, page: PageRequest) {
    const where = and(inScope(automations, scope));
    const { rows, total } = await pagedRows(
      this.db,
      automations,
      where,
      [desc(automations.createdAt), desc(automations.id)],
      page,
    );
    return { items: rows.map(automationView), total };
  }

  private async row(scope: Scope, id: string, executor: Executor, lock = false) {
    const query = executor
      .select()
      .from(automations)
      .where(and(eq(automations.id, id), inScope(automations, scope)));
    const [row] = lock ? await query.for('update') : await query;
    if (!row) throw notFound('automation', id);
    return row;
  }

  /** One automation. @throws ApiError 404. */
  async get(scope: Scope, id: string) {
    return automationView(await this.row(scope, id, this.db));
  }

  /**
   * Changes an automation at `expectedVersion` (a schedule's next time is computed again).
   * @throws ApiError 404; 409 `version_conflict` with the current version; 400 for a bad trigger.
   */
  async update(
    scope: Scope,
    id: string,
    input: { expectedVersion: number; name?: string; enabled?: boolean; trigger?: Trigger; input?: unknown },
  ) {
    return this.db.transaction(async (tx) => {
      const row = await this.row(scope, id, tx, true);
      expectVersion('automation', input.expectedVersion, row.version);
      const { trigger, nextFireAt } = this.checkTrigger(input.trigger ?? (row.trigger as Trigger));
      const enabled = input.enabled ?? row.enabled;
      const [updated] = await tx
        .update(automations)
        .set({
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.input !== undefined ? { input: input.input } : {}),
          enabled,
          trigger: trigger as Record<string, unknown>,
          nextFireAt: enabled ? nextFireAt : null,
          version: row.version + 1,
          updatedAt: this.clock.now(),
        })
        .where(eq(automations.id, id))
        .returning();
      return automationView(updated!);
    });
  }

  /** Starts the automation's run inside `tx`; a target that disappeared or was unpublished is logged and skipped. */
  private async fire(tx: Tx, row: AutomationRow, input: unknown, depth: number): Promise<string | undefined> {
    const scope = { tenant: row.tenantId, namespace: row.namespaceId };
    try {
      await tx.execute(sql`savepoint automation_fire`);
      const run = await this.orchestration.startRun(
        scope,
        row.createdBy,
        { target: row.target as unknown as RunTargetInput, input },
        { automationId: row.id, triggerDepth: depth },
        tx,
      );
      await tx.execute(sql`release savepoint automation_fire`);
      return run.id;
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      await tx.execute(sql`rollback to savepoint automation_fire`);
      this.logger.warn({ automationId: row.id, code: err.code }, 'automation target cannot run');
      return undefined;
    }
  }

  /** Fires every enabled schedule automation that is due by the injected clock (the minute sweep). */
  async fireDue(): Promise<number> {
    const now = this.clock.now();
    return this.db.transaction(async (tx) => {
      const due = await tx
        .select()
        .from(automations)
        .where(and(eq(automations.enabled, true), lte(automations.nextFireAt, now)))
        .orderBy(automations.nextFireAt)
        .limit(100)
        .for('update', { skipLocked: true });
      let fired = 0;
      for (const row of due) {
        const trigger = row.trigger as Extract<Trigger, { type: 'schedule' }>;
        const scheduledAt = row.nextFireAt!.toISOString();
        const runId = await this.fire(tx, row, { ...asObject(row.input), schedule: { scheduledAt } }, 0);
        if (runId) fired += 1;
        await tx
          .update(automations)
          .set({
            lastFiredAt: now,
            fireCount: row.fireCount + (runId ? 1 : 0),
            nextFireAt: nextFire(trigger.cron, trigger.timezone ?? 'UTC', now),
          })
          .where(eq(automations.id, row.id));
      }
      return fired;
    });
  }

  /**
   * Starts the runs of the scope's enabled automations that listen for `type` (and whose filter matches), inside
   * `tx`. `depth` is the trigger depth of what raised the event.
   * @returns the automations fired with their runs.
   */
  async onEvent(tx: Tx, scope: Scope, type: string, data: unknown, depth: number) {
    if (depth >= MAX_TRIGGER_DEPTH) return [];
    const listening = (
      await listeningStatement.rows(tx, { tenant: scope.tenant, namespace: scope.namespace, type })
    ).map((r) => rowOf(automations, r, 'a_')!);
    const event = { type, data: data ?? null };
    // The runs' events are appended after the last row lock here (each automation's row), never between them: the
    // event-log lock is a transaction's last lock (run-engine.ts `flush`).
    return this.orchestration.appendingEventsLast(tx, async () => {
      const fired: { automationId: string; runId: string }[] = [];
      for (const row of listening) {
        const filter = (row.trigger as { filter?: unknown }).filter;
        if (filter !== undefined && !this.matches(row.id, filter as Condition, event)) continue;
        const runId = await this.fire(tx, row, { ...asObject(row.input), event }, depth + 1);
        if (!runId) continue;
        await tx
          .update(automations)
          .set({ lastFiredAt: this.clock.now(), fireCount: sql`${automations.fireCount} + 1` })
          .where(eq(automations.id, row.id));
        fired.push({ automationId: row.id, runId });
      }
      return fired;
    });
  }

  /**
   * Whether an event passes an automation's filter. A filter the event cannot decide (a field it lacks, a value of
   * another type: templates.ts `ConditionError`) selects nothing: the event is not for this automation (logged).
   */
  private matches(automationId: string, filter: Condition, event: { type: string; data: unknown }): boolean {
    try {
      return evaluateCondition(filter, { event });
    } catch (err) {
      if (!(err instanceof ConditionError)) throw err;
      this.logger.info({ automationId, code: err.code }, 'automation filter does not apply to the event');
      return false;
    }
  }

  /** The run observer: `run.completed` / `run.failed` events of finished runs. */
  async onRunFinished(tx: Tx, run: RunRow): Promise<void> {
    if (run.status === 'cancelled') return;
    await this.onEvent(
      tx,
      { tenant: run.tenantId, namespace: run.namespaceId },
      `run.${run.status}`,
      {
        runId: run.id,
        target: { type: run.targetType, id: run.targetId },
        output: run.output,
        error: run.error,
      },
      run.triggerDepth,
    );
  }
}

function asObject(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : value === null || value === undefined
      ? {}
      : { value };
}
