/**
 * One event stream of invocations (spec 002 section E, "E. Event streams"; anchor: `id:` cursor, `event:`, JSON
 * `data:`, heartbeats, `Last-Event-ID` wins over `?after=`, an expired cursor is 410): the retained events after the
 * cursor are replayed from the table, then live ones follow from the change feed (any instance's commits), each once,
 * in id order. A stream of one invocation ends after its terminal event (at once when resumed at or past it); a
 * conversation's stream stays open. A
 * client that goes away only ends its stream: the invocation goes on (its `statusUrl` tells the outcome).
 */

import { eq, max } from 'drizzle-orm';
import type { ChangeFeed } from '../../../platform/change-feed.ts';
import type { Db } from '../../../platform/database.ts';
import type { InvocationStatus } from '../db/endpoints.ts';
import { invocations } from '../db/endpoints.ts';
import { eventsOf, type InvocationEventRow } from './invocation-events.ts';
import { cursorExpired, isTerminalInvocation } from './invocations.ts';

/** What a stream follows: one invocation (a job, or a conversation's turn), or a whole conversation. */
export type StreamTarget = { invocationId: string; conversationId?: string } | { conversationId: string };

/** A frame to send. */
export interface StreamFrame {
  id: number;
  event: string;
  data: Record<string, unknown>;
}

/**
 * Checks the cursor against retention.
 * @throws ApiError 410 `cursor_expired` when events after `cursor` were pruned.
 */
export async function checkCursor(db: Db, target: StreamTarget, cursor: number): Promise<void> {
  if (cursor <= 0 && !('invocationId' in target)) return;
  const [row] =
    'invocationId' in target
      ? await db
          .select({ pruned: invocations.eventsPrunedThrough })
          .from(invocations)
          .where(eq(invocations.id, target.invocationId))
      : await db
          .select({ pruned: max(invocations.eventsPrunedThrough) })
          .from(invocations)
          .where(eq(invocations.conversationId, target.conversationId));
  const pruned = Number(row?.pruned ?? 0);
  if (pruned > 0 && cursor < pruned) throw cursorExpired(cursor);
}

/**
 * Follows `target` from `cursor`: `send` gets each frame, `end` is called after an invocation's terminal event.
 * @returns the function that stops following (call it when the stream closes).
 */
export async function followInvocationEvents(
  db: Db,
  feed: ChangeFeed<InvocationEventRow>,
  target: StreamTarget,
  cursor: number,
  send: (frame: StreamFrame) => void,
  end: () => void,
): Promise<() => void> {
  const matches = (e: InvocationEventRow) =>
    'invocationId' in target
      ? e.invocationId === target.invocationId
      : e.conversationId === target.conversationId;
  let last = cursor;
  let replaying = true;
  let ended = false;
  const waiting: InvocationEventRow[] = [];
  const deliver = (rows: InvocationEventRow[]) => {
    for (const row of rows) {
      if (ended || row.id <= last || !matches(row)) continue;
      last = row.id;
      send({ id: row.id, event: row.type, data: row.data });
      const status = row.data.status as InvocationStatus | undefined;
      if ('invocationId' in target && status && isTerminalInvocation(status)) {
        ended = true;
        end();
      }
    }
  };
  const unsubscribe = feed.subscribe((rows) => {
    if (replaying) waiting.push(...rows);
    else deliver(rows);
  });
  let finishedBefore = false;
  try {
    // Read before the replay: an invocation already terminal has its terminal event committed, so the replay
    // holds it when it lies after the cursor; when it does not (a resume at or past it), the stream ends at once.
    if ('invocationId' in target) {
      const [row] = await db
        .select({ status: invocations.status })
        .from(invocations)
        .where(eq(invocations.id, target.invocationId));
      finishedBefore = row !== undefined && isTerminalInvocation(row.status);
    }
    deliver(
      await eventsOf(db, 'invocationId' in target ? { invocationId: target.invocationId } : target, cursor),
    );
  } catch (err) {
    unsubscribe();
    throw err;
  }
  replaying = false;
  deliver(waiting.splice(0));
  if (finishedBefore && !ended) {
    ended = true;
    end();
  }
  return unsubscribe;
}
