import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { waitUntil } from '../../../../test/support/wait.ts';
import { assertDeliveredAtLeastOnce, seedSlowDeliveries } from './support/at-least-once.ts';
import { startWorkerFixture, type WorkerFixture } from './support/worker-fixture.ts';

/**
 * Ctrl-C as a terminal sends it: SIGINT to the whole process group of `npm start --role worker` (npm, its shell and
 * node), while the worker is posting to a slow receiver. Each time the worker stops once, lets its running deliveries
 * finish and settles them (none left `in_flight`, no job left locked), logs no error, and exits; a last worker
 * finishes the rest, and every event arrives exactly once.
 */
let fixture: WorkerFixture;
const EVENTS = 30;

const groupAlive = (pgid: number) => {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
};

before(async () => {
  fixture = await startWorkerFixture('ee-ctrl-c-');
});
after(() => fixture?.close());

test('Ctrl-C to the worker process group mid-delivery: one clean stop, deliveries drained, nothing lost or repeated', async () => {
  const { receiver } = fixture;
  const api = await fixture.boot('api');
  const app = api.services.get('entity-events')!.app!;
  const key = api.services.get('entity-events')!.credentials!.apiKey as string;
  const pool = api.database.pool;
  const eventIds = await seedSlowDeliveries(app, key, receiver, {
    name: 'ctrl-c',
    prefix: 'c',
    count: EVENTS,
    delayMs: 300,
  });

  for (let round = 1; round <= 2; round++) {
    const before = (await receiver.received()).length;
    const worker = await fixture.startWorkerProcess({ npm: true, logLevel: 'info' });
    await receiver.waitFor((l) => l.length >= before + 3, 60_000);
    process.kill(-worker.child.pid!, 'SIGINT');
    const code = await worker.exited(15_000);
    // npm ends by the Ctrl-C it received itself (128) once its child has exited; the worker's own clean exit shows
    // as its "stopped" line (logged just before exit code 0) with no forced exit and no error line.
    assert.ok(code === 0 || code === 128, `round ${round}: npm exit ${code}`);
    await waitUntil('no process of the group is left', () => !groupAlive(worker.child.pid!), {
      timeoutMs: 5_000,
    });
    assert.match(worker.stdout(), /"msg":"stopped"/, `round ${round}: the worker stopped cleanly`);
    assert.doesNotMatch(worker.stderr(), /again|exiting now|longer than/, `round ${round}: one stop`);
    const errorLines = worker
      .stdout()
      .split('\n')
      .filter((l) => /"level":(50|60)/.test(l));
    assert.deepEqual(errorLines, [], `round ${round}: a clean stop logs no error`);
    const left = await pool.query(
      `select (select count(*)::int from entity_events.deliveries where status = 'in_flight') as in_flight,
              (select count(*)::int from graphile_worker._private_jobs where locked_at is not null) as locked`,
    );
    assert.deepEqual(left.rows[0], { in_flight: 0, locked: 0 }, `round ${round}: drained`);
    assert.ok((await receiver.received()).length < EVENTS, `round ${round}: stopped before the end`);
  }

  await fixture.startWorkerProcess();
  // A graceful stop finishes what it started: no event arrives twice.
  await assertDeliveredAtLeastOnce(pool, receiver, eventIds, new Set(), 90_000);
});
