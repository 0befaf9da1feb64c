import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { loadConfig } from '../../../platform/config.ts';
import { createLogger } from '../../../platform/logger.ts';
import { type BootedPlatform, bootServices } from '../../../platform/runtime.ts';
import { createTestDatabase, TEST_OPERATOR_TOKEN, type TestDatabase } from '../../../platform/testing.ts';
import { entityEventsService } from '../index.ts';
import { type PythonReceiver, startPythonReceiver } from './support/receiver.ts';

/**
 * At-least-once across worker restarts: an API instance stores events (jobs queued, no worker), a first worker
 * process delivers some and is stopped, a delivery whose worker "crashed" mid-flight is left in_flight with its job
 * gone, and a second worker finishes. Every event reaches the receiver; every delivery ends succeeded.
 */
let database: TestDatabase;
let receiver: PythonReceiver;
let dataDir: string;
const secretsKey = randomBytes(32);
const running: BootedPlatform[] = [];

const boot = async (role: 'api' | 'worker') => {
  const env = {
    DATA_DIR: dataDir,
    OUTBOUND_ALLOW_PRIVATE: 'true',
    WORKER_CONCURRENCY: '4',
    ENTITY_EVENTS_SIMULATOR_EVENTS_PER_MINUTE: '0',
  };
  const s = entityEventsService;
  const config = loadConfig(env, {}, [{ name: s.name, envPrefix: s.envPrefix, defaultPort: s.defaultPort }]);
  const booted = await bootServices({
    config,
    services: [s],
    databaseUrl: database.url,
    operatorToken: TEST_OPERATOR_TOKEN,
    secretsKey,
    logger: createLogger('silent'),
    serveHttp: role === 'api',
    listen: false,
    runWorker: role === 'worker',
  });
  running.push(booted);
  return booted;
};

before(async () => {
  database = await createTestDatabase();
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ee-restart-'));
  receiver = await startPythonReceiver();
});
after(async () => {
  for (const b of running) await b.stop().catch(() => undefined);
  await receiver?.stop();
  await database?.drop();
  await fs.rm(dataDir, { recursive: true, force: true });
});

test('deliveries survive a worker restart and a lost in-flight job (at-least-once, no loss)', async () => {
  const api = await boot('api');
  const app = api.services.get('entity-events')!.app!;
  const key = api.services.get('entity-events')!.credentials!.apiKey as string;
  const call = (method: 'POST' | 'GET', url: string, payload?: object, headers?: Record<string, string>) =>
    app.inject({ method, url, headers: headers ?? { api_key: key }, ...(payload ? { payload } : {}) });

  const hook = (
    await call('POST', '/v2/webhooks', { name: 'restart', webhook_url: `${receiver.url}/slow` })
  ).json();
  await receiver.setSecret(hook.webhook_id, hook.webhook_secret);
  await receiver.behavior('/slow', 200, undefined, 40);
  const ids = Array.from({ length: 40 }, (_, i) => `r${i}`);
  const enrolled = await call('POST', '/v2/businesses/events/enrollments', {
    enrollment_key: 'restart',
    webhook_id: hook.webhook_id,
    event_types: ['new_product'],
    business_ids: ids,
  });
  assert.equal(enrolled.statusCode, 201, enrolled.body);
  const ops = { authorization: `Bearer ${TEST_OPERATOR_TOKEN}` };
  const stored = await call(
    'POST',
    '/_ops/events',
    {
      events: ids.map((id) => ({
        entity_type: 'business',
        entity_id: id,
        event_name: 'new_product',
        event_time: new Date().toISOString(),
        data: { product_name: id },
      })),
    },
    ops,
  );
  assert.equal(stored.statusCode, 201, stored.body);
  assert.equal(stored.json().deliveries_created, 40);
  const eventIds = new Set<string>(stored.json().events.map((e: { event_id: string }) => e.event_id));

  // A worker "crashed" while delivering one event: its row is in_flight (claimed 2 min ago) and its job is gone.
  const pool = api.database.pool;
  const victim = await pool.query(
    `update entity_events.deliveries set status = 'in_flight', claimed_at = now() - interval '2 minutes',
       attempt_count = 1
     where id = (select id from entity_events.deliveries order by id limit 1) returning id`,
  );
  const victimId = victim.rows[0].id as string;
  await pool.query(`delete from graphile_worker._private_jobs where payload->>'deliveryId' = $1`, [victimId]);

  const worker1 = await boot('worker');
  await receiver.waitFor((l) => l.length >= 8, 20_000);
  await worker1.stop();
  const afterFirst = (await receiver.received()).length;
  assert.ok(afterFirst < 39, `the first worker was stopped before finishing (${afterFirst})`);

  await boot('worker');
  const swept = await call('POST', '/_ops/deliveries/sweep', undefined, ops);
  assert.equal(swept.statusCode, 200);
  assert.ok(swept.json().queued >= 1, 'the lost in-flight delivery is queued again');
  const got = await receiver.waitFor(
    (l) => new Set(l.map((r) => r.payload?.event_id as string)).size >= 40,
    30_000,
  );
  const seen = new Set(got.map((r) => r.payload?.event_id as string));
  assert.deepEqual([...seen].sort(), [...eventIds].sort(), 'every event delivered');
  assert.ok(got.every((r) => r.verified));
  // Wait for the last attempt records to commit, then every delivery is succeeded.
  for (let i = 0; i < 100; i++) {
    const { rows } = await pool.query(
      `select count(*)::int as n from entity_events.deliveries where status = 'succeeded'`,
    );
    if (rows[0].n === 40) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const { rows } = await pool.query(
    `select status, count(*)::int as n from entity_events.deliveries group by 1`,
  );
  assert.deepEqual(rows, [{ status: 'succeeded', n: 40 }]);
  // No duplication beyond at-least-once: a graceful stop finishes its jobs and a re-queued job finds its delivery
  // already claimed, so only the delivery lost in flight may (in real life) reach the receiver twice.
  const victimEvent = (
    await pool.query('select event_id from entity_events.deliveries where id = $1', [victimId])
  ).rows[0].event_id as string;
  const perEvent = new Map<string, number>();
  for (const r of await receiver.received()) {
    const id = r.payload?.event_id as string;
    perEvent.set(id, (perEvent.get(id) ?? 0) + 1);
  }
  const duplicated = [...perEvent].filter(([id, n]) => n > 1 && id !== victimEvent);
  assert.deepEqual(duplicated, [], 'no event but the lost one is delivered twice');
});
