/**
 * Run events: the append-only record of everything a run did (spec E "Event streams"; README "Run events"). Ids
 * come from one identity column and are committed in id order: every writer inserts its events last in its
 * transaction while holding the service's event-log lock ({@link EVENT_LOG_LOCK}), and sends the commit notification
 * of the platform's ChangeFeed (`agent_gateway_run_events`, payload `{"to": <last id>}`), so a feed can stream them
 * to every instance in order.
 */
import { and, asc, eq, gt, type SQL, sql } from 'drizzle-orm';
import { type Executor, NamedStatement } from '../../platform/database.ts';
import { runEvents } from './db/schema.ts';

/**
 * The one advisory lock every writer of the service's event logs (run events and invocation events) holds from its
 * append to its commit, so each log's ids commit in id order. One lock for both logs, not one each: a transaction
 * writes both (a dispatch starts a run and moves its invocation; a run's end completes its invocation), and two
 * locks taken in either order by different transactions deadlocked (PostgreSQL aborts one after `deadlock_timeout`,
 * 1 s, and its job waited for Graphile Worker's retry backoff: the seconds-long tail of submit -> completed). The
 * lock is re-entrant within a transaction; take it last, after every row lock the transaction needs.
 */
export const EVENT_LOG_LOCK = sql`pg_advisory_xact_lock(hashtext('agent_gateway:event_logs'))`;

/**
 * One statement that takes {@link EVENT_LOG_LOCK}, inserts the rows of a JSON array (`$events`, in array order, so
 * ids follow it) into `table` and sends `channel`'s ChangeFeed notification (`{"to": <last id>}`) in the same
 * transaction. `columns` are the table's column names with their SQL types, as the JSON objects name them.
 */
export function eventAppendStatement(
  name: string,
  table: string,
  channel: string,
  columns: readonly [string, string][],
): NamedStatement<Record<string, never>> {
  return eventsAppendStatement(name, [{ table, channel, columns, placeholder: 'events' }]);
}

/** One event log of {@link eventsAppendStatement}: its table, channel, columns and the placeholder of its rows. */
export interface EventLogTarget {
  table: string;
  channel: string;
  columns: readonly [string, string][];
  placeholder: string;
}

/**
 * {@link eventAppendStatement} for several logs in one statement (one lock, each log's rows from its own JSON array,
 * possibly empty, and each log's notification when it got rows): a transaction that writes both logs holds the lock
 * for this one round trip before its commit.
 */
export function eventsAppendStatement(
  name: string,
  logs: readonly EventLogTarget[],
): NamedStatement<Record<string, never>> {
  const inserts = logs.map((log, i) => {
    const names = log.columns.map(([c]) => c).join(', ');
    const typed = log.columns.map(([c, t]) => `${c} ${t}`).join(', ');
    return sql`, inserted${sql.raw(String(i))} as (
      insert into ${sql.raw(log.table)} (${sql.raw(names)}, created_at)
      select ${sql.raw(log.columns.map(([c]) => `e.${c}`).join(', '))}, ${sql.placeholder('now')}::timestamptz
      from held, rows from (jsonb_to_recordset(${sql.placeholder(log.placeholder)}::jsonb) as (${sql.raw(typed)}))
        with ordinality as e(${sql.raw(names)}, n)
      order by e.n
      returning id)`;
  });
  const notifies = logs.map(
    (log, i) =>
      sql`select pg_notify(${log.channel}, json_build_object('to', max(id))::text)
        from inserted${sql.raw(String(i))} having count(*) > 0`,
  );
  const query: SQL = sql`with held as materialized (select ${EVENT_LOG_LOCK})${sql.join(inserts, sql``)}
    ${sql.join(notifies, sql` union all `)}`;
  return new NamedStatement(name, query);
}

/** The columns of run events, as their JSON rows name them. */
export const RUN_EVENT_COLUMNS: readonly [string, string][] = [
  ['run_id', 'text'],
  ['step_id', 'text'],
  ['node_id', 'text'],
  ['type', 'text'],
  ['data', 'jsonb'],
];

/** Run events as the JSON rows of the append statements. */
export function runEventRows(events: readonly NewRunEvent[]): string {
  return JSON.stringify(
    events.map((e) => ({
      run_id: e.runId,
      step_id: e.stepId ?? null,
      node_id: e.nodeId ?? null,
      type: e.type,
      data: e.data,
    })),
  );
}

/** The NOTIFY channel of committed run events. */
export const RUN_EVENTS_CHANNEL = 'agent_gateway_run_events';

const appendRunEventsStatement = eventAppendStatement(
  'agent_gateway_append_run_events',
  'agent_gateway.run_events',
  RUN_EVENTS_CHANNEL,
  RUN_EVENT_COLUMNS,
);

/** An event to append. */
export interface NewRunEvent {
  runId: string;
  stepId?: string | null;
  nodeId?: string | null;
  type: string;
  data: Record<string, unknown>;
}

/** A run event as the API shows it. */
export interface RunEventView {
  id: number;
  runId: string;
  stepId: string | null;
  nodeId: string | null;
  type: string;
  data: unknown;
  createdAt: string;
}

/**
 * Appends `events` inside `tx` under {@link EVENT_LOG_LOCK} (call it last in the transaction: the lock is held until
 * commit) and sends the feed's commit notification: one round trip, a prepared statement.
 */
export async function appendRunEvents(
  tx: Executor,
  events: readonly NewRunEvent[],
  now: Date,
): Promise<void> {
  if (events.length === 0) return;
  await appendRunEventsStatement.rows(tx, { events: runEventRows(events), now: now.toISOString() });
}

/** The events of a run after `after` (an event id), oldest first, at most `limit`. */
export async function runEventsAfter(
  executor: Executor,
  runId: string,
  after: number,
  limit: number,
): Promise<RunEventView[]> {
  const rows = await executor
    .select()
    .from(runEvents)
    .where(and(eq(runEvents.runId, runId), gt(runEvents.id, after)))
    .orderBy(asc(runEvents.id))
    .limit(limit);
  return rows.map((r) => ({
    id: r.id,
    runId: r.runId,
    stepId: r.stepId,
    nodeId: r.nodeId,
    type: r.type,
    data: r.data,
    createdAt: r.createdAt.toISOString(),
  }));
}
