import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { type CliProcess, startCli } from '../../../../test/support/cli-process.ts';
import {
  createTestDatabase,
  TEST_OPERATOR_TOKEN,
  type TestDatabase,
} from '../../../../test/support/platform.ts';
import { loadConfig } from '../../../platform/config.ts';
import { createLogger } from '../../../platform/logger.ts';
import { type BootedPlatform, bootServices } from '../../../platform/runtime.ts';
import { deliverTask } from '../entity-events-jobs.ts';
import { entityEventsService } from '../index.ts';
import { assertDeliveredAtLeastOnce, seedSlowDeliveries } from './support/at-least-once.ts';
import { type PythonReceiver, startPythonReceiver } from './support/receiver.ts';

/**
 * A real crash: the worker is a child process (`node --import tsx src/main.ts --role worker`, as `npm start` runs
 * it) and gets SIGKILL while it is posting to a slow receiver. Nothing is settled or released: the deliveries it had
 * claimed stay `in_flight` and its Graphile Worker jobs stay locked (for up to 4 hours). The sweeper puts the claims
 * back, a second worker process finishes, and every event reaches the receiver; only the deliveries that were in
 * flight at the kill may arrive twice (at-least-once).
 */
let database: TestDatabase;
let receiver: PythonReceiver;
let dataDir: string;
let api: BootedPlatform | undefined;
const secretsKey = randomBytes(32);
const children: CliProcess[] = [];
const EVENTS = 40;

/** A worker process on the test database; resolves once it has started (its banner is printed). */
const startWorker = async () => {
  const cli = startCli(['--role', 'worker'], {
    DATABASE_URL: database.url,
    SERVICES: 'entity-events',
    DATA_DIR: dataDir,
    OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
    SECRETS_KEY: secretsKey.toString('hex'), // the API's key: the worker must open the sealed webhook secrets
    OUTBOUND_ALLOW_PRIVATE: 'true',
    ENTITY_EVENTS_SIMULATOR_EVENTS_PER_MINUTE: '0',
    WORKER_CONCURRENCY: '4',
    LOG_LEVEL: 'warn',
  });
  children.push(cli);
  await cli.waitFor('Press Ctrl-C', 90_000);
  return cli;
};

const alive = (cli: CliProcess) => cli.child.exitCode === null && cli.child.signalCode === null;

before(async () => {
  database = await createTestDatabase();
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ee-sigkill-'));
  receiver = await startPythonReceiver();
});
after(async () => {
  for (const cli of children) {
    if (!alive(cli)) continue;
    cli.child.kill('SIGKILL');
    await cli.exited(10_000).catch(() => undefined);
  }
  await api?.stop().catch(() => undefined);
  await receiver?.stop();
  await database?.drop();
  await fs.rm(dataDir, { recursive: true, force: true });
});

test('a worker killed with SIGKILL mid-delivery loses nothing: its claims are swept back and a new worker finishes', async () => {
  const s = entityEventsService;
  const env = {
    DATA_DIR: dataDir,
    OUTBOUND_ALLOW_PRIVATE: 'true',
    ENTITY_EVENTS_SIMULATOR_EVENTS_PER_MINUTE: '0',
  };
  api = await bootServices({
    config: loadConfig(env, {}, [{ name: s.name, envPrefix: s.envPrefix, defaultPort: s.defaultPort }]),
    services: [s],
    databaseUrl: database.url,
    operatorToken: TEST_OPERATOR_TOKEN,
    secretsKey,
    logger: createLogger('silent'),
    serveHttp: true,
    listen: false,
    runWorker: false,
  });
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
  const first = await startWorker();
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
      `select id, event_id from entity_events.deliveries where status = 'in_flight' order by id`,
    )
  ).rows as { id: string; event_id: string }[];
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

  await startWorker();
  // At-least-once, no more: only an event whose delivery was in flight at the kill may arrive twice.
  await assertDeliveredAtLeastOnce(
    pool,
    receiver,
    eventIds,
    new Set(inFlight.map((d) => d.event_id)),
    90_000,
  );
});
