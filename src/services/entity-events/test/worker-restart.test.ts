import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { TEST_OPERATOR_TOKEN } from '../../../../test/support/platform.ts';
import { assertDeliveredAtLeastOnce, seedSlowDeliveries } from './support/at-least-once.ts';
import { startWorkerFixture, type WorkerFixture } from './support/worker-fixture.ts';

/**
 * At-least-once across worker restarts: an API instance stores events (jobs queued, no worker), a first worker
 * process delivers some and is stopped, a delivery whose worker "crashed" mid-flight is left in_flight with its job
 * gone, and a second worker finishes. Every event reaches the receiver; every delivery ends succeeded.
 */
let fixture: WorkerFixture;

before(async () => {
  fixture = await startWorkerFixture('ee-restart-');
});
after(() => fixture?.close());

test('deliveries survive a worker restart and a lost in-flight job (at-least-once, no loss)', async () => {
  const { receiver } = fixture;
  const api = await fixture.boot('api');
  const app = api.services.get('entity-events')!.app!;
  const key = api.services.get('entity-events')!.credentials!.apiKey as string;
  const ops = { authorization: `Bearer ${TEST_OPERATOR_TOKEN}` };
  const eventIds = await seedSlowDeliveries(app, key, receiver, {
    name: 'restart',
    prefix: 'r',
    count: 40,
    delayMs: 40,
  });

  // A worker "crashed" while delivering one event: its row is in_flight (claimed 2 min ago) and its job is gone.
  const pool = api.database.pool;
  const victim = await pool.query(
    `update entity_events.deliveries set status = 'in_flight', claimed_at = now() - interval '2 minutes',
       attempt_count = 1
     where id = (select id from entity_events.deliveries order by id limit 1) returning id`,
  );
  const victimId = victim.rows[0].id as string;
  await pool.query(`delete from graphile_worker._private_jobs where payload->>'deliveryId' = $1`, [victimId]);

  const worker1 = await fixture.boot('worker');
  await receiver.waitFor((l) => l.length >= 8, 20_000);
  await worker1.stop();
  const afterFirst = (await receiver.received()).length;
  assert.ok(afterFirst < 39, `the first worker was stopped before finishing (${afterFirst})`);

  await fixture.boot('worker');
  const swept = await app.inject({ method: 'POST', url: '/_ops/deliveries/sweep', headers: ops });
  assert.equal(swept.statusCode, 200);
  assert.ok(swept.json().queued >= 1, 'the lost in-flight delivery is queued again');
  // No duplication beyond at-least-once: a graceful stop finishes its jobs and a re-queued job finds its delivery
  // already claimed, so only the delivery lost in flight may (in real life) reach the receiver twice.
  const victimEvent = (
    await pool.query('select event_id from entity_events.deliveries where id = $1', [victimId])
  ).rows[0].event_id as string;
  await assertDeliveredAtLeastOnce(pool, receiver, eventIds, new Set([victimEvent]), 30_000);
});
