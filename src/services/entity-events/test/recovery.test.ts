import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startTestPlatform, type TestPlatform } from '../../../../test/support/platform.ts';
import { waitUntil } from '../../../../test/support/wait.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { AUTO_DISABLE_AFTER_MS, RECOVER_MAX_AGE_MS, RECOVER_MAX_DELIVERIES } from '../delivery.ts';
import { entityEventsService } from '../index.ts';
import { RECOVERS_PER_TENANT_PER_MINUTE } from '../routes/context.ts';
import { type PythonReceiver, type Received, startPythonReceiver } from './support/receiver.ts';

/**
 * What receivers need around at-least-once delivery (Svix and Standard Webhooks give the same): the attempt log
 * written before each POST, automatic disabling of a webhook that has failed every attempt for 5 days (and
 * re-enabling it), and recovering the failed and cancelled deliveries of a time window. Time moves with the
 * ManualClock; the receiver is the Python one, which verifies every signature on its own (and refuses a timestamp
 * more than 300 s from its wall clock, which is one more failure where the clock was moved days away).
 */
describe('entity-events: attempt log, auto-disable and recover', () => {
  const DAY = 24 * 3600 * 1000;
  const clock = new ManualClock();
  let platform: TestPlatform;
  let receiver: PythonReceiver;
  let key: string;
  let otherKey: string;
  let seq = 0;

  const call = (method: string, url: string, apiKey: string, payload?: unknown) =>
    platform.app('entity-events').inject({
      method: method as 'GET',
      url,
      headers: { api_key: apiKey },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const ops = (method: string, url: string, payload?: unknown) =>
    platform.app('entity-events').inject({
      method: method as 'POST',
      url,
      headers: { authorization: platform.operatorAuth },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const hook = async (path: string) => {
    const res = await call('POST', '/v2/webhooks', key, {
      name: `hook-${++seq}`,
      webhook_url: `${receiver.url}${path}`,
    });
    assert.equal(res.statusCode, 201, res.body);
    const w = res.json();
    await receiver.setSecret(w.webhook_id, w.webhook_secret);
    return w.webhook_id as string;
  };
  const enroll = async (webhookId: string, ids: string[]) => {
    const res = await call('POST', '/v2/businesses/events/enrollments', key, {
      enrollment_key: `key-${++seq}`,
      webhook_id: webhookId,
      event_types: ['new_product'],
      business_ids: ids,
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().enrollment_id as string;
  };
  /** Stores one `new_product` event per id (one batch) at the clock's time; returns the deliveries created. */
  const ingest = async (...ids: string[]) => {
    const res = await ops('POST', '/_ops/events', {
      events: ids.map((id) => ({
        entity_type: 'business',
        entity_id: id,
        event_name: 'new_product',
        event_time: '2026-05-01T10:00:00Z',
        data: { product_name: id },
      })),
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().deliveries_created as number;
  };
  const webhook = async (webhookId: string) => {
    const res = await call('GET', `/v2/webhooks/${webhookId}`, key);
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };
  type Delivery = { delivery_id: string; status: string; replay_of: string | null; event_id: string };
  const deliveries = async (webhookId: string) => {
    const res = await call('GET', `/v2/webhooks/${webhookId}/deliveries?limit=100`, key);
    assert.equal(res.statusCode, 200, res.body);
    return res.json().deliveries as Delivery[];
  };
  const delivery = async (webhookId: string, deliveryId: string) => {
    const res = await call('GET', `/v2/webhooks/${webhookId}/deliveries/${deliveryId}`, key);
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };
  const recover = (webhookId: string, body: unknown, apiKey = key) =>
    call('POST', `/v2/webhooks/${webhookId}/recover`, apiKey, body);
  const sweepAndRun = async () => {
    const res = await ops('POST', '/_ops/deliveries/sweep');
    assert.equal(res.statusCode, 200, res.body);
    await platform.runDueJobs();
  };
  const onPath = (list: Received[], path: string) => list.filter((r) => r.path === path);
  const iso = (ms: number) => new Date(ms).toISOString();

  before(async () => {
    receiver = await startPythonReceiver();
    platform = await startTestPlatform({
      services: [entityEventsService],
      clock,
      env: { ENTITY_EVENTS_DELIVERY_TIMEOUT_MS: '5000' },
    });
    otherKey = (await ops('POST', '/_ops/tenants', { name: 'Other' })).json().api_key;
  });
  after(async () => {
    await platform?.close();
    await receiver?.stop();
  });
  beforeEach(async () => {
    clock.set(Date.now());
    await receiver.reset();
    // A fresh tenant per test: its own webhooks (under the cap of 10) and its own recover budget.
    key = (await ops('POST', '/_ops/tenants', { name: `T${++seq}` })).json().api_key;
  });

  test('the attempt log holds an attempt from before its POST (in_progress), then its outcome', async () => {
    const w = await hook('/slow-log');
    await receiver.behavior('/slow-log', 200, undefined, 800);
    await enroll(w, ['logco']);
    assert.equal(await ingest('logco'), 1);
    const [d] = await deliveries(w);
    const running = platform.runDueJobs();
    const during = await waitUntil('the attempt to be logged while its POST runs', async () => {
      const now = await delivery(w, d!.delivery_id);
      return now.attempts.length === 1 && now;
    });
    assert.equal(during.status, 'in_flight', JSON.stringify(during));
    assert.equal(during.attempts[0].status, 'in_progress');
    assert.equal(during.attempts[0].duration_ms, null);
    assert.equal(during.attempts[0].status_code, null);
    assert.equal(
      onPath(await receiver.received(), '/slow-log').length,
      0,
      'logged before the receiver has it',
    );
    await running;
    const settled = await delivery(w, d!.delivery_id);
    assert.equal(settled.status, 'succeeded');
    assert.equal(settled.attempts.length, 1, 'the same row, settled');
    assert.equal(settled.attempts[0].status, 'succeeded');
    assert.equal(settled.attempts[0].status_code, 200);
    assert.ok(
      settled.attempts[0].duration_ms >= 700,
      `duration recorded: ${settled.attempts[0].duration_ms}`,
    );
    assert.equal(settled.attempts[0].attempted_at, during.attempts[0].attempted_at);
  });

  test('a webhook whose every attempt failed for 5 days is disabled (failing); re-enabling clears it; recover re-sends', async () => {
    assert.equal(AUTO_DISABLE_AFTER_MS, 5 * DAY);
    const w = await hook('/down');
    await receiver.behavior('/down', 500);
    await enroll(w, ['downco']);
    const t0 = Date.now() - 6 * DAY;
    clock.set(t0);
    assert.equal(await ingest('downco'), 1);
    await platform.runDueJobs();
    let now = await webhook(w);
    assert.equal(now.status, 'active');
    assert.equal(now.failing_since, iso(t0), 'the first failure starts the streak');
    assert.equal(now.disabled_reason, null);

    clock.set(t0 + 5 * DAY - 1);
    assert.equal(await ingest('downco'), 1);
    await platform.runDueJobs();
    now = await webhook(w);
    assert.equal(now.status, 'active', 'one millisecond short of 5 days: still active');
    assert.equal(now.failing_since, iso(t0), 'later failures keep the streak start');

    clock.set(t0 + 5 * DAY);
    assert.equal(await ingest('downco'), 1);
    await platform.runDueJobs();
    now = await webhook(w);
    assert.equal(now.status, 'disabled', 'a failure 5 days into the streak disables the webhook');
    assert.equal(now.disabled_reason, 'failing');
    assert.equal(now.disabled_at, iso(t0 + 5 * DAY));
    assert.equal(onPath(await receiver.received(), '/down').length, 3);

    // While disabled: new events create no delivery for it (they stay in the event store, for fetch-events), and
    // its pending retries are cancelled when they come due, with no POST.
    clock.set(t0 + 5 * DAY + 60_000);
    assert.equal(await ingest('downco'), 0);
    const gap = await call('POST', '/v2/businesses/events', key, {
      business_ids: ['downco'],
      from: '2026-05-01T10:00:00Z',
    });
    assert.equal(
      gap.json().page.total,
      4,
      'the event stored while disabled is in the event store (fetch-events)',
    );
    await sweepAndRun();
    const cancelled = await deliveries(w);
    assert.deepEqual(
      cancelled.map((d) => d.status),
      ['cancelled', 'cancelled', 'cancelled'],
    );
    assert.equal(onPath(await receiver.received(), '/down').length, 3, 'no POST while disabled');

    // Re-enabled by the tenant (PATCH status active): reason, time and streak are cleared.
    const enabled = await call('PATCH', `/v2/webhooks/${w}`, key, { status: 'active' });
    assert.equal(enabled.statusCode, 200, enabled.body);
    assert.equal(enabled.json().status, 'active');
    assert.equal(enabled.json().disabled_reason, null);
    assert.equal(enabled.json().disabled_at, null);
    assert.equal(enabled.json().failing_since, null);

    // The receiver is back: recover re-sends what was cancelled while the webhook was down.
    await receiver.behavior('/down', 200);
    clock.set(Date.now());
    const res = await recover(w, { since: iso(t0 - 1000) });
    assert.equal(res.statusCode, 202, res.body);
    assert.equal(res.json().recovered, 3);
    await platform.runDueJobs();
    const got = onPath(await receiver.received(), '/down').slice(3);
    assert.equal(got.length, 3);
    assert.ok(
      got.every((r) => r.verified && r.status_returned === 200),
      'signed and accepted',
    );
    assert.deepEqual(
      got.map((r) => r.headers['x-replay-of']).sort(),
      cancelled.map((d) => d.delivery_id).sort(),
      'each names the delivery it replays',
    );
    assert.equal((await webhook(w)).failing_since, null);
  });

  test('a success ends the failing streak: failures on either side of it are not 5 days of failures', async () => {
    const w = await hook('/flaky');
    await receiver.behavior('/flaky', 500);
    await enroll(w, ['flakyco']);
    const t0 = Date.now() - 6 * DAY;
    clock.set(t0);
    await ingest('flakyco');
    await platform.runDueJobs();
    assert.equal((await webhook(w)).failing_since, iso(t0));

    await receiver.behavior('/flaky', 200);
    const t1 = Date.now();
    clock.set(t1);
    await ingest('flakyco');
    await platform.runDueJobs();
    let now = await webhook(w);
    assert.equal(now.status, 'active');
    assert.equal(now.failing_since, null, 'a success clears the streak');

    await receiver.behavior('/flaky', 500);
    clock.set(t1 + 1000);
    await ingest('flakyco');
    await platform.runDueJobs();
    now = await webhook(w);
    assert.equal(now.status, 'active', '6 days after the first failure, but a success came between');
    assert.equal(now.failing_since, iso(t1 + 1000), 'a new streak');
    const statuses = onPath(await receiver.received(), '/flaky').map((r) => r.status_returned);
    assert.deepEqual(statuses.slice(1), [200, 500]);
  });

  test('a legacy (v1) webhook disabled by its receiver (410) is re-enabled by registering it again', async () => {
    const legacy = async (path: string) => {
      const res = await call('POST', '/v1/webhooks', key, { webhook_url: `${receiver.url}${path}` });
      assert.equal(res.statusCode, 201, res.body);
      await receiver.setSecret(res.json().webhook_id, res.json().webhook_secret);
      return res.json();
    };
    const first = await legacy('/v1-gone');
    await receiver.behavior('/v1-gone', 410);
    const enrolled = await call('POST', '/v1/businesses/events/enrollments', key, {
      enrollment_key: 'v1',
      event_types: ['new_product'],
      business_ids: ['v1co'],
    });
    assert.equal(enrolled.statusCode, 201, enrolled.body);
    assert.equal(await ingest('v1co'), 1);
    await platform.runDueJobs();
    const listed = async () =>
      (await call('GET', '/v2/webhooks', key)).json().webhooks.find((x: { legacy: boolean }) => x.legacy);
    const gone = await listed();
    assert.deepEqual(
      [gone.status, gone.disabled_reason, gone.disabled_at],
      ['disabled', 'gone', iso(clock.nowMs())],
    );
    assert.equal(await ingest('v1co'), 0);
    const again = await legacy('/v1-back');
    assert.equal(again.webhook_id, first.webhook_id);
    assert.deepEqual(
      [again.status, again.disabled_reason, again.disabled_at, again.failing_since],
      ['active', null, null, null],
    );
    assert.equal(await ingest('v1co'), 1);
  });

  test('recover re-sends the failed deliveries of a window as new deliveries, once, whatever the calls', async () => {
    const w = await hook('/rec');
    await receiver.behavior('/rec', 500);
    await enroll(w, ['r1', 'r2', 'r3', 'early']);
    const dropped = await enroll(w, ['gone1']);
    const T = Date.now();
    clock.set(T - 2 * 3600_000);
    await ingest('early');
    clock.set(T - 3600_000);
    await ingest('r1', 'r2', 'r3', 'gone1');
    await platform.runDueJobs();
    // Every delivery fails its 8 attempts (the 5 s ... 10 h schedule, walked with the clock).
    for (let i = 0; i < 7; i++) {
      const pending = (await deliveries(w)).filter((d) => d.status === 'pending');
      const next = await Promise.all(pending.map((d) => delivery(w, d.delivery_id)));
      clock.set(Math.max(...next.map((d) => Date.parse(d.next_attempt_at))));
      await sweepAndRun();
    }
    const failed = await deliveries(w);
    assert.deepEqual(
      failed.map((d) => d.status),
      ['failed', 'failed', 'failed', 'failed', 'failed'],
    );
    const sentBefore = onPath(await receiver.received(), '/rec').length;
    assert.equal(sentBefore, 40, '5 deliveries x 8 attempts');

    // The receiver is fixed an hour later; one enrollment was deleted meanwhile.
    await receiver.behavior('/rec', 200);
    clock.set(T);
    assert.equal((await call('DELETE', `/v2/businesses/events/enrollments/${dropped}`, key)).statusCode, 200);
    const since = iso(T - 90 * 60_000);
    // Two calls at once: each delivery is replayed once (the unique replay_of is the natural key).
    const [a, b] = await Promise.all([recover(w, { since }), recover(w, { since })]);
    assert.equal(a.statusCode, 202, a.body);
    assert.equal(b.statusCode, 202, b.body);
    assert.equal(a.json().recovered + b.json().recovered, 3, `${a.body} ${b.body}`);
    for (const res of [a, b]) {
      const { webhook_id, until, remaining, skipped } = res.json();
      assert.deepEqual(
        { webhook_id, since: res.json().since, until, remaining, skipped },
        { webhook_id: w, since, until: iso(T), remaining: 0, skipped: 1 },
        'the deleted enrollment has nothing to receive its delivery: skipped',
      );
    }
    await platform.runDueJobs();
    const resent = onPath(await receiver.received(), '/rec').slice(sentBefore);
    assert.equal(resent.length, 3, 'three POSTs, not six');
    const originalOf = new Map(failed.map((d) => [d.event_id, d.delivery_id]));
    const all = await deliveries(w);
    for (const r of resent) {
      assert.equal(r.verified, true, r.reason ?? '');
      assert.ok(['r1', 'r2', 'r3'].includes(r.payload?.business_id as string));
      const original = originalOf.get(r.payload?.event_id as string);
      assert.equal(r.headers['x-replay-of'], original, 'X-Replay-Of names the failed delivery');
      const replay = all.find((d) => d.delivery_id === r.headers['x-delivery-id']);
      assert.ok(replay, 'X-Delivery-Id is the new delivery of the log');
      assert.equal(replay.replay_of, original);
      assert.equal(replay.status, 'succeeded');
    }
    for (const original of originalOf.values())
      assert.equal(
        all.find((d) => d.delivery_id === original)?.status,
        'failed',
        'a replayed delivery keeps its outcome',
      );

    // Later calls re-send nothing more (every delivery of the window was replayed); `until` bounds the window.
    const again = await recover(w, { since });
    assert.deepEqual([again.json().recovered, again.json().remaining], [0, 0]);
    const older = await recover(w, { since: iso(T - 3 * 3600_000), until: iso(T - 90 * 60_000) });
    assert.equal(older.statusCode, 202, older.body);
    assert.deepEqual([older.json().recovered, older.json().skipped], [1, 0], 'only the early one');
    await platform.runDueJobs();
    const last = onPath(await receiver.received(), '/rec').slice(sentBefore + 3);
    assert.deepEqual(
      last.map((r) => r.payload?.business_id),
      ['early'],
    );
  });

  test('recover: the window is bounded, the webhook must be active and the caller its tenant', async () => {
    assert.equal(RECOVER_MAX_AGE_MS, 14 * DAY);
    const w = await hook('/bounds');
    const refused = async (body: unknown, field: string) => {
      const res = await recover(w, body);
      assert.equal(res.statusCode, 400, `${JSON.stringify(body)}: ${res.body}`);
      assert.equal(res.json().error.code, 'validation_failed');
      assert.equal(res.json().response_context.request_status, 'failure');
      assert.deepEqual(
        res.json().error.details.issues.map((i: { field: string }) => i.field),
        [field],
        JSON.stringify(body),
      );
    };
    await refused({ since: iso(clock.nowMs() - 14 * DAY - 1) }, 'since');
    await refused({ since: iso(clock.nowMs() + 1) }, 'since');
    await refused({ since: 'yesterday' }, 'since');
    await refused({ since: iso(clock.nowMs() - DAY), until: iso(clock.nowMs() - 2 * DAY) }, 'until');
    clock.advance(60_000); // a new window of the tenant's recover budget
    await refused({ since: iso(clock.nowMs() - DAY), until: '2026-13-01T00:00:00Z' }, 'until');
    await refused({}, 'since');
    const edge = await recover(w, { since: iso(clock.nowMs() - 14 * DAY) });
    assert.equal(edge.statusCode, 202, `exactly 14 days back is allowed: ${edge.body}`);
    assert.equal(edge.json().recovered, 0);

    const foreign = await recover(w, { since: iso(clock.nowMs() - DAY) }, otherKey);
    assert.equal(foreign.statusCode, 404, "another tenant's webhook is not found");
    assert.equal(foreign.json().error.code, 'webhook_not_found');
    await call('PATCH', `/v2/webhooks/${w}`, key, { status: 'disabled' });
    const disabled = await recover(w, { since: iso(clock.nowMs() - DAY) });
    assert.equal(disabled.statusCode, 422);
    assert.equal(disabled.json().error.code, 'webhook_not_active');
  });

  test('recover is limited per tenant: 5 calls a minute, then 429 with Retry-After', async () => {
    assert.equal(RECOVERS_PER_TENANT_PER_MINUTE, 5);
    clock.advance(60_000);
    const w = await hook('/limited');
    const body = { since: iso(clock.nowMs() - DAY) };
    for (let i = 0; i < RECOVERS_PER_TENANT_PER_MINUTE; i++)
      assert.equal((await recover(w, body)).statusCode, 202, `call ${i + 1}`);
    const limited = await recover(w, body);
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.json().error.code, 'rate_limited');
    assert.match(limited.json().error.message, /recover calls per tenant/);
    assert.ok(Number(limited.headers['retry-after']) >= 1);
    assert.equal(
      (await call('GET', `/v2/webhooks/${w}`, key)).statusCode,
      200,
      "the key's other calls go on",
    );
    const otherHook = await call('POST', '/v2/webhooks', otherKey, {
      name: `other-${++seq}`,
      webhook_url: `${receiver.url}/other`,
    });
    const other = await recover(otherHook.json().webhook_id, body, otherKey);
    assert.equal(other.statusCode, 202, 'another tenant has its own budget');
    clock.advance(60_000);
    assert.equal((await recover(w, body)).statusCode, 202, 'a new minute');
  });

  test('recover re-sends at most 1,000 deliveries per call and reports the remainder', async () => {
    assert.equal(RECOVER_MAX_DELIVERIES, 1000);
    const w = await hook('/many');
    await enroll(w, ['many']);
    const T = clock.nowMs();
    assert.equal(await ingest(...Array.from({ length: 1000 }, () => 'many')), 1000);
    assert.equal(await ingest('many'), 1);
    // The 1,001 deliveries end as the worker ends a delivery whose webhook was disabled before its attempt
    // (`cancelled`, no POST), written in one statement instead of running 1,001 jobs. Their jobs stay queued and
    // would do nothing (a delivery that is not pending is left alone).
    const { rowCount } = await platform.booted.database.pool.query(
      `update entity_events.deliveries
          set status = 'cancelled', last_error = 'webhook disabled', completed_at = $2, next_attempt_at = null
        where webhook_id = $1`,
      [w, iso(T)],
    );
    assert.equal(rowCount, 1001);
    clock.advance(1000);
    const first = await recover(w, { since: iso(T) });
    assert.equal(first.statusCode, 202, first.body);
    assert.deepEqual([first.json().recovered, first.json().remaining], [1000, 1]);
    const second = await recover(w, { since: iso(T) });
    assert.deepEqual(
      [second.json().recovered, second.json().remaining],
      [1, 0],
      'the next call takes the rest',
    );
    const replays = await platform.booted.database.pool.query(
      `select count(*)::int as n, count(distinct replay_of)::int as distinct_originals
         from entity_events.deliveries where webhook_id = $1 and replay_of is not null`,
      [w],
    );
    assert.deepEqual(replays.rows[0], { n: 1001, distinct_originals: 1001 });
    // Nothing is sent from here (the platform is closed with these jobs queued).
  });
});
