import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { TEST_OPERATOR_TOKEN } from '../../../../test/support/platform.ts';
import { deliverTask } from '../entity-events-jobs.ts';
import { assertDeliveredAtLeastOnce, seedSlowDeliveries } from './support/at-least-once.ts';
import { startWorkerFixture, type WorkerFixture } from './support/worker-fixture.ts';

/**
 * A real crash: the worker is a child process (`node --import tsx src/main.ts --role worker`, as `npm start` runs
 * it) and gets SIGKILL while it is posting to a slow receiver. Nothing is settled or released: the deliveries it had
 * claimed stay `in_flight` and its Graphile Worker jobs stay locked (for up to 4 hours). The sweeper puts the claims
 * back, a second worker process finishes, and every event reaches the receiver; only the deliveries that were in
 * flight at the kill may arrive twice (at-least-once), with the same `X-Delivery-Id`. The attempt log shows the
 * attempt the kill cut off: `in_progress` after the kill, `interrupted` once swept, followed by the attempt that
 * succeeded.
 */
let fixture: WorkerFixture;
const EVENTS = 40;

before(async () => {
  fixture = await startWorkerFixture('ee-sigkill-');
});
after(() => fixture?.close());

test('a worker killed with SIGKILL mid-delivery loses nothing: its claims are swept back and a new worker finishes', async () => {
  const { receiver } = fixture;
  const api = await fixture.boot('api');
  const app = api.services.get('entity-events')!.app!;
  const key = api.services.get('entity-events')!.credentials!.apiKey as string;
  const ops = { authorization: `Bearer ${TEST_OPERATOR_TOKEN}` };
  const pool = api.database.pool;
  // Each POST to /slow takes 400 ms, so a worker running 4 at once always has some in flight.
  const eventIds = await seedSlowDeliveries(app, key, receiver, {
    name: 'sigkill',
    prefix: 'k',
    count: EVENTS,
    delayMs: 400,
  });

  // The first worker delivers a few, then dies without any chance to settle or release anything.
  const first = await fixture.startWorkerProcess();
  await receiver.waitFor((l) => l.length >= 6, 60_000);
  first.child.kill('SIGKILL'); // the node process itself (startCli spawns node, no npm or shell in between)
  assert.equal(await first.exited(10_000), 128, 'killed by a signal');
  assert.equal(first.child.signalCode, 'SIGKILL');
  const atKill = await receiver.received();
  assert.ok(atKill.length < EVENTS, `the worker was killed before finishing (${atKill.length})`);

  // What the dead worker left: claims in flight (their POST may or may not have reached the receiver) and jobs
  // still locked by it, which Graphile Worker would only release after 4 hours.
  const inFlight = (
    await pool.query(
      `select id, event_id, webhook_id, claimed_at from entity_events.deliveries
        where status = 'in_flight' order by id`,
    )
  ).rows as { id: string; event_id: string; webhook_id: string; claimed_at: Date }[];
  assert.ok(inFlight.length >= 1, 'the kill caught deliveries in flight');
  const locked = (
    await pool.query(
      `select j.key, j.payload->>'deliveryId' as delivery_id
         from graphile_worker._private_jobs j
         join graphile_worker._private_tasks t on t.id = j.task_id
        where t.identifier = $1 and j.locked_at is not null`,
      [deliverTask.name],
    )
  ).rows as { key: string | null; delivery_id: string }[];
  const lockedIds = new Set(locked.map((j) => j.delivery_id));
  for (const d of inFlight) assert.ok(lockedIds.has(d.id), `the job of in-flight ${d.id} is still locked`);
  // Each attempt the kill cut off is in the log: its claim, committed before the POST, is shown as the attempt in
  // progress, with no outcome.
  const logOf = async (webhookId: string, deliveryId: string) => {
    const res = await app.inject({
      method: 'GET',
      url: `/v2/webhooks/${webhookId}/deliveries/${deliveryId}`,
      headers: { api_key: key },
    });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().attempts as {
      attempt_number: number;
      attempted_at: string;
      status: string;
      status_code: number | null;
      duration_ms: number | null;
      error: string | null;
    }[];
  };
  const cutOff = inFlight.map((d) => d.id);
  for (const d of inFlight) {
    const attempts = await logOf(d.webhook_id, d.id);
    assert.deepEqual(
      attempts.map((a) => [a.attempt_number, a.status, a.attempted_at, a.duration_ms]),
      [[1, 'in_progress', d.claimed_at.toISOString(), null]],
      `the attempt in flight at the kill is in the log of ${d.id}`,
    );
  }

  // The sweeper re-queues claims older than 60 s by the service clock. The worker is another process on the
  // system clock, so a ManualClock cannot be shared with it (moving only the API's clock would set
  // next_attempt_at in the worker's future); instead the claims are made 2 minutes old, as if that time had passed.
  await pool.query(
    `update entity_events.deliveries set claimed_at = claimed_at - interval '2 minutes' where status = 'in_flight'`,
  );
  // Swept before the next worker starts, so its own cron sweep (every minute) cannot race this one.
  const swept = await app.inject({ method: 'POST', url: '/_ops/deliveries/sweep', headers: ops });
  assert.equal(swept.statusCode, 200, swept.body);
  assert.ok(swept.json().queued >= inFlight.length, 'every lost claim is queued again');
  // add_job with the job key of a locked job un-keys the locked one and adds a new, runnable job (Graphile Worker's
  // documented job_key behaviour), so the re-queue does not wait for the 4-hour lock to expire.
  for (const d of inFlight) {
    const { rows } = await pool.query(
      `select count(*) filter (where locked_at is null and key = $2)::int as runnable,
              count(*) filter (where locked_at is not null and key is not null)::int as locked_keyed
         from graphile_worker._private_jobs where payload->>'deliveryId' = $1`,
      [d.id, `${deliverTask.name}:${d.id}`],
    );
    assert.deepEqual(rows[0], { runnable: 1, locked_keyed: 0 }, `a runnable job for ${d.id}`);
  }

  // The sweep logged the cut-off attempts: interrupted, at their claim time (made 2 minutes older above), no
  // outcome; the delivery is due again.
  for (const d of inFlight) {
    const [a, ...more] = await logOf(d.webhook_id, d.id);
    assert.deepEqual(more, [], d.id);
    assert.deepEqual(
      [a!.attempt_number, a!.status, a!.attempted_at, a!.status_code, a!.duration_ms],
      [1, 'interrupted', new Date(d.claimed_at.getTime() - 120_000).toISOString(), null, null],
      d.id,
    );
    assert.match(a!.error ?? '', /^interrupted/);
  }

  await fixture.startWorkerProcess();
  // At-least-once, no more: only an event whose delivery was in flight at the kill may arrive twice.
  await assertDeliveredAtLeastOnce(
    pool,
    receiver,
    eventIds,
    new Set(inFlight.map((d) => d.event_id)),
    90_000,
  );
  // The log of a cut-off delivery: the interrupted attempt, then the one that succeeded; every other delivery has
  // one attempt, and none is left in progress.
  const log = (
    await pool.query(
      `select d.id, array_agg(a.status order by a.attempt_number) as statuses
         from entity_events.deliveries d join entity_events.delivery_attempts a on a.delivery_id = d.id
        group by d.id`,
    )
  ).rows as { id: string; statuses: string[] }[];
  assert.equal(log.length, EVENTS);
  for (const d of log)
    assert.deepEqual(d.statuses, cutOff.includes(d.id) ? ['interrupted', 'succeeded'] : ['succeeded'], d.id);
});
