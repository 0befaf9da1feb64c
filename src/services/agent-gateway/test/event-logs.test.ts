/**
 * The two event logs of the gateway (run events, invocation events) and their commit order (issue 21, the seconds-long
 * tail of submit -> completed): a transaction that writes run events then invocation events (a dispatch) and one that
 * writes them the other way round (a run's end completing its invocation) never deadlock, and each log's ids commit
 * in id order. With one lock per log, taken in opposite orders, PostgreSQL aborted one of them after
 * `deadlock_timeout` and its job waited for Graphile Worker's retry backoff.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'drizzle-orm';
import type { Tx } from '../../../platform/database.ts';
import { appendInvocationEvents } from '../invocations/invocation-events.ts';
import { appendRunEvents } from '../run-events.ts';
import { type GatewayHarness, startGateway } from './support.ts';

let h: GatewayHarness;
before(async () => {
  h = await startGateway();
});
after(() => h?.close());

/** A promise and its resolver. */
function signal() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Waits (bounded) until a session waits for an advisory lock; false when none did within `ms`. */
async function someoneWaitsForAdvisoryLock(ms: number): Promise<boolean> {
  const db = h.platform.booted.database.db;
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const waiting = await db.execute(
      sql`select 1 from pg_locks where locktype = 'advisory' and not granted and database =
        (select oid from pg_database where datname = current_database())`,
    );
    if (waiting.rows.length > 0) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

test('writers of both logs in opposite orders wait for each other instead of deadlocking; ids commit in order', async () => {
  const db = h.platform.booted.database.db;
  const now = new Date();
  const runEvent = (runId: string) => [{ runId, type: 'test.event', data: { runId } }];
  const invocationEvent = (invocationId: string) => [
    { invocationId, conversationId: null, type: 'status', data: { invocationId } },
  ];
  const firstHoldsRunLog = signal();
  const secondStarted = signal();
  const firstMayGoOn = signal();
  // The dispatch order: run events, then invocation events.
  const first = db.transaction(async (tx: Tx) => {
    await appendRunEvents(tx, runEvent('run_first'), now);
    firstHoldsRunLog.resolve();
    await firstMayGoOn.promise;
    await appendInvocationEvents(tx, invocationEvent('inv_first'), now);
  });
  await firstHoldsRunLog.promise;
  // The completion order: invocation events, then run events.
  const second = db.transaction(async (tx: Tx) => {
    secondStarted.resolve();
    await appendInvocationEvents(tx, invocationEvent('inv_second'), now);
    await appendRunEvents(tx, runEvent('run_second'), now);
  });
  await secondStarted.promise;
  // The second writer must be held back by the first one's lock before it writes anything (one lock for both logs).
  // With a lock per log it is not: it takes the invocation log's lock, waits for the run log's, and the first one's
  // next append closes the cycle (PostgreSQL's "deadlock detected" fails one of them below).
  const held = await someoneWaitsForAdvisoryLock(3000);
  firstMayGoOn.resolve();
  const outcomes = await Promise.allSettled([first, second]);
  assert.deepEqual(
    outcomes.map((o) => (o.status === 'rejected' ? String((o.reason as Error).cause ?? o.reason) : 'ok')),
    ['ok', 'ok'],
  );
  assert.ok(held, 'the second writer waited for the first');
  const runIds = await db.execute(
    sql`select run_id from agent_gateway.run_events where run_id in ('run_first', 'run_second') order by id`,
  );
  assert.deepEqual(
    runIds.rows.map((r) => r.run_id),
    ['run_first', 'run_second'],
  );
  const invocationIds = await db.execute(
    sql`select invocation_id from agent_gateway.invocation_events
      where invocation_id in ('inv_first', 'inv_second') order by id`,
  );
  assert.deepEqual(
    invocationIds.rows.map((r) => r.invocation_id),
    ['inv_first', 'inv_second'],
  );
});
