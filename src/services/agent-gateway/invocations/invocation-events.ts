/**
 * The event log of invocations (spec 002 section E, "E. Event streams"; anchor: SSE frames with `id:` cursor,
 * `event:`, JSON `data:`): one row per move of an invocation, ids from one identity column committed in id order
 * (writers hold the service's event-log lock, `EVENT_LOG_LOCK` of `run-events.ts`, until commit) and announced with the platform's
 * ChangeFeed notification, so the streams of every instance see every event, in order, once.
 */
import { and, asc, eq, gt, lte } from 'drizzle-orm';
import { ChangeFeed, lastIdOf } from '../../../platform/change-feed.ts';
import type { Db, Executor } from '../../../platform/database.ts';
import type { AppLogger } from '../../../platform/logger.ts';
import { invocationEvents } from '../db/endpoints.ts';
import {
  eventAppendStatement,
  eventsAppendStatement,
  type NewRunEvent,
  RUN_EVENT_COLUMNS,
  RUN_EVENTS_CHANNEL,
  runEventRows,
} from '../run-events.ts';

/** The NOTIFY channel of committed invocation events. */
export const INVOCATION_EVENTS_CHANNEL = 'agent_gateway_invocation_events';

/** An invocation event as streams send it. */
export interface InvocationEventRow {
  id: number;
  invocationId: string;
  conversationId: string | null;
  type: string;
  data: Record<string, unknown>;
  createdAt: Date;
}

const INVOCATION_EVENT_COLUMNS: readonly [string, string][] = [
  ['invocation_id', 'text'],
  ['conversation_id', 'text'],
  ['type', 'text'],
  ['data', 'jsonb'],
];

const appendStatement = eventAppendStatement(
  'agent_gateway_append_invocation_events',
  'agent_gateway.invocation_events',
  INVOCATION_EVENTS_CHANNEL,
  INVOCATION_EVENT_COLUMNS,
);

const appendBothStatement = eventsAppendStatement('agent_gateway_append_run_and_invocation_events', [
  {
    table: 'agent_gateway.run_events',
    channel: RUN_EVENTS_CHANNEL,
    columns: RUN_EVENT_COLUMNS,
    placeholder: 'runEvents',
  },
  {
    table: 'agent_gateway.invocation_events',
    channel: INVOCATION_EVENTS_CHANNEL,
    columns: INVOCATION_EVENT_COLUMNS,
    placeholder: 'invocationEvents',
  },
]);

const invocationEventRows = (events: readonly Omit<InvocationEventRow, 'id' | 'createdAt'>[]) =>
  JSON.stringify(
    events.map((e) => ({
      invocation_id: e.invocationId,
      conversation_id: e.conversationId,
      type: e.type,
      data: e.data,
    })),
  );

/**
 * Appends a transaction's run events and invocation events in one statement under the event-log lock (its last
 * statement before the commit: the lock is held for the shortest time), and notifies each log that got rows.
 */
export async function appendRunAndInvocationEvents(
  tx: Executor,
  runEvents: readonly NewRunEvent[],
  events: readonly Omit<InvocationEventRow, 'id' | 'createdAt'>[],
  now: Date,
): Promise<void> {
  if (runEvents.length === 0 && events.length === 0) return;
  await appendBothStatement.rows(tx, {
    runEvents: runEventRows(runEvents),
    invocationEvents: invocationEventRows(events),
    now: now.toISOString(),
  });
}

/**
 * Appends `events` inside `tx` under the service's event-log lock (call it last in the transaction, after every row
 * lock: the lock is held until commit) and notifies, in one round trip.
 */
export async function appendInvocationEvents(
  tx: Executor,
  events: readonly Omit<InvocationEventRow, 'id' | 'createdAt'>[],
  now: Date,
): Promise<void> {
  if (events.length === 0) return;
  await appendStatement.rows(tx, { events: invocationEventRows(events), now: now.toISOString() });
}

/** The change feed of invocation events on this instance (start it with the service's notifier). */
export function createInvocationFeed(db: Db, logger: AppLogger): ChangeFeed<InvocationEventRow> {
  return new ChangeFeed<InvocationEventRow>(
    {
      channel: INVOCATION_EVENTS_CHANNEL,
      read: (after, upTo, limit) =>
        db
          .select()
          .from(invocationEvents)
          .where(and(gt(invocationEvents.id, after), lte(invocationEvents.id, upTo)))
          .orderBy(asc(invocationEvents.id))
          .limit(limit),
      lastId: () => lastIdOf(db, 'agent_gateway.invocation_events'),
    },
    logger,
  );
}

/** The retained events of one invocation (or of a conversation) after `after`, oldest first. */
export async function eventsOf(
  executor: Executor,
  filter: { invocationId: string } | { conversationId: string },
  after: number,
): Promise<InvocationEventRow[]> {
  return executor
    .select()
    .from(invocationEvents)
    .where(
      and(
        'invocationId' in filter
          ? eq(invocationEvents.invocationId, filter.invocationId)
          : eq(invocationEvents.conversationId, filter.conversationId),
        gt(invocationEvents.id, after),
      ),
    )
    .orderBy(asc(invocationEvents.id))
    .limit(10_000);
}
