/**
 * Run events: the append-only record of everything a run did (spec E "Event streams"; README "Run events"). Ids
 * come from one identity column and are committed in id order: every writer inserts its events last in its
 * transaction while holding the `agent_gateway:run_events` advisory lock, and sends the commit notification of the
 * platform's ChangeFeed (`agent_gateway_run_events`, payload `{"to": <last id>}`), so a feed can stream them to
 * every instance in order (part 2's server-sent events).
 */
import { and, asc, eq, gt, sql } from 'drizzle-orm';
import { ChangeFeed } from '../../platform/change-feed.ts';
import type { Executor } from '../../platform/database.ts';
import { runEvents } from './db/schema.ts';

/** The NOTIFY channel of committed run events. */
export const RUN_EVENTS_CHANNEL = 'agent_gateway_run_events';

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
 * Appends `events` inside `tx` under the event lock (call it last in the transaction: the lock is held until
 * commit) and sends the feed's commit notification.
 */
export async function appendRunEvents(
  tx: Executor,
  events: readonly NewRunEvent[],
  now: Date,
): Promise<void> {
  if (events.length === 0) return;
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext('agent_gateway:run_events'))`);
  const inserted = await tx
    .insert(runEvents)
    .values(
      events.map((e) => ({
        runId: e.runId,
        stepId: e.stepId ?? null,
        nodeId: e.nodeId ?? null,
        type: e.type,
        data: e.data,
        createdAt: now,
      })),
    )
    .returning({ id: runEvents.id });
  await ChangeFeed.notify(tx, RUN_EVENTS_CHANNEL, Math.max(...inserted.map((r) => r.id)));
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
