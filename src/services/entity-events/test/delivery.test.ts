import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startTestPlatform, type TestPlatform } from '../../../../test/support/platform.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { createLogger } from '../../../platform/logger.ts';
import { OutboundHttp } from '../../../platform/outbound-http.ts';
import { DeliveryEngine } from '../delivery.ts';
import { EventStore } from '../events.ts';
import { entityEventsService } from '../index.ts';
import { EntityEventSimulator } from '../simulator.ts';
import { WebhookService } from '../webhooks.ts';
import { type PythonReceiver, type Received, startPythonReceiver } from './support/receiver.ts';

/**
 * Delivery end to end: events stored through the operator API are fanned out, delivered by the worker tasks to a
 * real HTTP receiver written in Python's standard library, which verifies every signature on its own.
 */
describe('entity-events: delivery to a real receiver (Python verifier)', () => {
  const clock = new ManualClock();
  let platform: TestPlatform;
  let receiver: PythonReceiver;
  let keyA: string;
  let keyB: string;
  let tenantA: string;
  let partnerA: string;
  let seq = 0;

  const call = (method: string, url: string, key: string, payload?: unknown) =>
    platform.app('entity-events').inject({
      method: method as 'GET',
      url,
      headers: { api_key: key },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const ops = (method: string, url: string, payload?: unknown) =>
    platform.app('entity-events').inject({
      method: method as 'POST',
      url,
      headers: { authorization: platform.operatorAuth },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const hook = async (key: string, path: string, extra: Record<string, unknown> = {}) => {
    const res = await call('POST', '/v2/webhooks', key, {
      name: `hook-${++seq}`,
      webhook_url: `${receiver.url}${path}`,
      ...extra,
    });
    assert.equal(res.statusCode, 201, res.body);
    const w = res.json();
    await receiver.setSecret(w.webhook_id, w.webhook_secret);
    return w as { webhook_id: string; webhook_secret: string };
  };
  const enroll = async (key: string, webhookId: string, ids: string[], types: string[]) => {
    const res = await call('POST', '/v2/businesses/events/enrollments', key, {
      enrollment_key: `key-${++seq}`,
      webhook_id: webhookId,
      event_types: types,
      business_ids: ids,
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as { enrollment_id: string; enrollment_key: string };
  };
  const funding = {
    funding_stage: 'series_b',
    funding_date: '2026-05-01',
    amount: 25000000,
    investors: ['Accel'],
  };
  const ingest = async (
    entityId: string,
    eventName = 'new_funding_round',
    data: Record<string, unknown> = funding,
  ) => {
    const res = await ops('POST', '/_ops/events', {
      events: [
        {
          entity_type: 'business',
          entity_id: entityId,
          event_name: eventName,
          event_time: '2026-05-01T10:00:00Z',
          data,
        },
      ],
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as { events: { event_id: string }[]; deliveries_created: number };
  };
  const onPath = (list: Received[], path: string) => list.filter((r) => r.path === path);
  const deliveriesOf = async (key: string, webhookId: string) => {
    const res = await call('GET', `/v2/webhooks/${webhookId}/deliveries`, key);
    assert.equal(res.statusCode, 200, res.body);
    return res.json().deliveries as { delivery_id: string; status: string; next_attempt_at: string | null }[];
  };
  const deliveryOf = async (key: string, webhookId: string) => {
    const [d] = await deliveriesOf(key, webhookId);
    assert.ok(d, 'a delivery exists');
    const res = await call('GET', `/v2/webhooks/${webhookId}/deliveries/${d.delivery_id}`, key);
    assert.equal(res.statusCode, 200);
    return res.json();
  };
  const sweepAndRun = async () => {
    const res = await ops('POST', '/_ops/deliveries/sweep');
    assert.equal(res.statusCode, 200);
    await platform.runDueJobs();
    return res.json().queued as number;
  };

  before(async () => {
    receiver = await startPythonReceiver();
    platform = await startTestPlatform({
      services: [entityEventsService],
      clock,
      env: { ENTITY_EVENTS_DELIVERY_TIMEOUT_MS: '500' },
    });
    const creds = platform.credentials('entity-events');
    keyA = creds.apiKey as string;
    tenantA = creds.tenantId as string;
    partnerA = creds.partnerId as string;
    keyB = (await ops('POST', '/_ops/tenants', { name: 'B' })).json().api_key;
  });
  after(async () => {
    await platform?.close();
    await receiver?.stop();
  });
  beforeEach(async () => {
    clock.set(Date.now());
    await receiver.reset();
    // A fresh tenant of the demo partner per test keeps each test under the 10-webhook cap.
    const fresh = (await ops('POST', '/_ops/tenants', { name: `A${++seq}`, partner_id: partnerA })).json();
    keyA = fresh.api_key;
    tenantA = fresh.tenant_id;
  });

  test('one signed POST per event to the matching enrollment only; payload, headers and exact bytes', async () => {
    const w1 = await hook(keyA, '/a', { headers: ['X-Team: blue'] });
    const e1 = await enroll(keyA, w1.webhook_id, ['acme'], ['new_funding_round']);
    const wDisabled = await hook(keyA, '/disabled');
    await enroll(keyA, wDisabled.webhook_id, ['acme'], ['new_funding_round']);
    await call('PATCH', `/v2/webhooks/${wDisabled.webhook_id}`, keyA, { status: 'disabled' });
    const wGone = await hook(keyA, '/paused');
    await enroll(keyA, wGone.webhook_id, ['acme'], ['new_funding_round']);
    await call('DELETE', `/v2/webhooks/${wGone.webhook_id}?force=true`, keyA);
    const wb = await hook(keyB, '/b');
    await enroll(keyB, wb.webhook_id, ['acme'], ['new_product']);

    const stored = await ingest('acme');
    assert.equal(
      stored.deliveries_created,
      1,
      'not to a disabled webhook, a paused enrollment or another tenant',
    );
    await platform.runDueJobs();
    const list = await receiver.waitFor((l) => l.length >= 1);
    assert.equal(list.length, 1);
    const r = list[0]!;
    assert.equal(r.path, '/a');
    assert.equal(r.verified, true, r.reason ?? '');
    assert.equal(r.content_type, 'application/json');
    assert.equal(r.headers['x-team'], 'blue');
    assert.match(r.timestamp ?? '', /^\d+$/);
    assert.deepEqual(r.payload, {
      webhook_id: w1.webhook_id,
      tenant_id: tenantA,
      partner_id: partnerA,
      event_id: stored.events[0]!.event_id,
      event_name: 'new_funding_round',
      enrollment_key: e1.enrollment_key,
      enrollment_id: e1.enrollment_id,
      entity_type: 'business',
      business_id: 'acme',
      event_time: '2026-05-01T10:00:00.000Z',
      data: funding,
    });
    assert.equal(r.raw_body, JSON.stringify(r.payload), 'json format: the event object as it is');

    await receiver.reset();
    const product = await ingest('acme', 'new_product', { product_name: 'Rocket' });
    assert.equal(product.deliveries_created, 1);
    await platform.runDueJobs();
    const second = await receiver.waitFor((l) => l.length >= 1);
    assert.deepEqual(
      second.map((x) => [x.path, x.verified, x.payload?.tenant_id]),
      [['/b', true, (second[0]!.payload as { tenant_id: string }).tenant_id]],
    );
    assert.notEqual(second[0]!.payload?.tenant_id, tenantA);
    const d = await deliveryOf(keyA, w1.webhook_id);
    assert.equal(d.status, 'succeeded');
    assert.equal(d.attempts.length, 1);
    assert.equal(d.attempts[0].status_code, 200);
  });

  test('stringified_json sends {text} whose text is the event; the signature covers the bytes sent', async () => {
    const w = await hook(keyA, '/text', { payload_format: 'stringified_json' });
    await enroll(keyA, w.webhook_id, ['strco'], ['new_funding_round']);
    const stored = await ingest('strco');
    await platform.runDueJobs();
    const [r] = await receiver.waitFor((l) => l.length >= 1);
    assert.equal(r!.verified, true, r!.reason ?? '');
    const outer = JSON.parse(r!.raw_body);
    assert.deepEqual(Object.keys(outer), ['text']);
    assert.equal(JSON.parse(outer.text).event_id, stored.events[0]!.event_id);
  });

  test('X-Timestamp 301 s old is rejected by the receiver (attempt logged, retried); 290 s old is accepted', async () => {
    const w = await hook(keyA, '/window');
    await enroll(keyA, w.webhook_id, ['clockco'], ['new_funding_round']);
    clock.set(Date.now() - 301_000);
    await ingest('clockco');
    await platform.runDueJobs();
    const [rejected] = await receiver.waitFor((l) => l.length >= 1);
    assert.equal(rejected!.verified, false);
    assert.match(rejected!.reason ?? '', /300 s window/);
    let d = await deliveryOf(keyA, w.webhook_id);
    assert.equal(d.status, 'pending');
    assert.equal(d.attempts[0].status_code, 401);
    clock.set(Date.now() - 290_000);
    assert.equal(await sweepAndRun(), 1);
    const list = await receiver.waitFor((l) => l.length >= 2);
    assert.equal(list[1]!.verified, true, list[1]!.reason ?? '');
    d = await deliveryOf(keyA, w.webhook_id);
    assert.equal(d.status, 'succeeded');
  });

  test('X-Timestamp 301 s ahead is rejected by the receiver (attempt logged, retried); 290 s ahead is accepted', async () => {
    const w = await hook(keyA, '/ahead');
    await enroll(keyA, w.webhook_id, ['aheadco', 'aheadco2'], ['new_funding_round']);
    // X-Timestamp is whole seconds, rounded down: the clock is put on a second boundary so the header is at least
    // 301 s ahead of the receiver's wall clock when it is signed (the receiver sees it a few ms later, still > 300).
    clock.set(Math.ceil(Date.now() / 1000) * 1000 + 301_000);
    await ingest('aheadco');
    await platform.runDueJobs();
    const [rejected] = await receiver.waitFor((l) => l.length >= 1);
    assert.equal(rejected!.verified, false);
    assert.match(rejected!.reason ?? '', /300 s window/);
    assert.ok(Number(rejected!.timestamp) - rejected!.received_at_ms / 1000 > 299, 'ahead, not behind');
    const d = await deliveryOf(keyA, w.webhook_id);
    assert.equal(d.status, 'pending');
    assert.equal(d.attempts[0].status_code, 401);
    clock.set(Date.now() + 290_000);
    await ingest('aheadco2');
    await platform.runDueJobs();
    const list = await receiver.waitFor((l) => l.length >= 2);
    const accepted = list[1]!;
    assert.equal(accepted.payload?.business_id, 'aheadco2');
    assert.equal(accepted.verified, true, accepted.reason ?? '');
    assert.ok(
      Number(accepted.timestamp) - accepted.received_at_ms / 1000 > 280,
      'well ahead of the receiver',
    );
    const statuses = (await deliveriesOf(keyA, w.webhook_id)).map((x) => x.status).sort();
    assert.deepEqual(statuses, ['pending', 'succeeded']);
  });

  test('retries follow the schedule (5 s, then 5 min, +-10 % jitter) and the attempt log records each attempt', async () => {
    const w = await hook(keyA, '/retry');
    await receiver.behavior('/retry', 500);
    await enroll(keyA, w.webhook_id, ['retryco'], ['new_funding_round']);
    const t0 = Date.now() - 250_000;
    clock.set(t0);
    await ingest('retryco');
    await platform.runDueJobs();
    let d = await deliveryOf(keyA, w.webhook_id);
    assert.equal(d.status, 'pending');
    assert.equal(d.attempts.length, 1);
    assert.equal(d.attempts[0].status_code, 500);
    const next1 = Date.parse(d.next_attempt_at);
    assert.ok(next1 >= t0 + 4500 && next1 <= t0 + 5500, `first retry after 5 s +-10 %: ${next1 - t0}`);
    assert.equal(d.attempts[0].next_attempt_at, d.next_attempt_at);

    clock.set(next1 - 1);
    assert.equal(await sweepAndRun(), 0, 'not due one millisecond early');
    assert.equal((await deliveryOf(keyA, w.webhook_id)).attempts.length, 1);

    clock.set(next1);
    assert.equal(await sweepAndRun(), 1);
    d = await deliveryOf(keyA, w.webhook_id);
    assert.equal(d.attempts.length, 2);
    const next2 = Date.parse(d.next_attempt_at);
    assert.ok(
      next2 - next1 >= 270_000 && next2 - next1 <= 330_000,
      `second retry after 5 min: ${next2 - next1}`,
    );

    await receiver.behavior('/retry', 200);
    clock.set(next2);
    await sweepAndRun();
    d = await deliveryOf(keyA, w.webhook_id);
    assert.equal(d.status, 'succeeded', JSON.stringify(d.attempts));
    assert.deepEqual(
      d.attempts.map((a: { attempt_number: number; status_code: number }) => [
        a.attempt_number,
        a.status_code,
      ]),
      [
        [1, 500],
        [2, 500],
        [3, 200],
      ],
    );
    assert.equal(d.next_attempt_at, null);
    const got = onPath(await receiver.received(), '/retry');
    assert.equal(got.length, 3);
    assert.deepEqual(
      got.map((r) => r.headers['x-delivery-id']),
      [d.delivery_id, d.delivery_id, d.delivery_id],
      'X-Delivery-Id: the same delivery id on every attempt (the de-duplication key)',
    );
    assert.ok(
      got.every((r) => r.headers['x-replay-of'] === undefined),
      'no X-Replay-Of on a delivery that is no replay',
    );
  });

  test('timeouts and connection failures are failed attempts, retried on the schedule', async () => {
    const slow = await hook(keyA, '/slow');
    await receiver.behavior('/slow', 200, undefined, 1500);
    await enroll(keyA, slow.webhook_id, ['slowco'], ['new_funding_round']);
    const closed = await call('POST', '/v2/webhooks', keyA, {
      name: 'closed',
      webhook_url: 'http://127.0.0.1:9/x',
    });
    await enroll(keyA, closed.json().webhook_id, ['slowco'], ['new_funding_round']);
    await ingest('slowco');
    await platform.runDueJobs();
    const timedOut = await deliveryOf(keyA, slow.webhook_id);
    assert.equal(timedOut.status, 'pending');
    assert.equal(timedOut.attempts[0].status_code, null);
    assert.match(timedOut.attempts[0].error, /^timeout/);
    assert.ok(timedOut.attempts[0].duration_ms >= 450, 'bounded by the configured timeout');
    const refused = await deliveryOf(keyA, closed.json().webhook_id);
    assert.equal(refused.status, 'pending');
    assert.match(refused.attempts[0].error, /^network/);
    assert.ok(refused.next_attempt_at);
  });

  test('the SSRF guard refuses cloud metadata addresses even where private targets are allowed', async () => {
    const res = await call('POST', '/v2/webhooks', keyA, {
      name: 'metadata',
      webhook_url: 'http://169.254.169.254/latest/meta-data',
    });
    assert.equal(res.statusCode, 201);
    const check = await call('POST', `/v2/webhooks/${res.json().webhook_id}/check_connectivity`, keyA);
    const outcome = check.json().response_context.webhook_response;
    assert.equal(outcome.success, false);
    assert.match(outcome.error, /^blocked_address/);
  });

  test('Retry-After on 503 sets the next attempt exactly', async () => {
    const w = await hook(keyA, '/ra');
    await receiver.behavior('/ra', 503, 120);
    await enroll(keyA, w.webhook_id, ['raco'], ['new_funding_round']);
    const t0 = clock.nowMs();
    await ingest('raco');
    await platform.runDueJobs();
    const d = await deliveryOf(keyA, w.webhook_id);
    assert.equal(d.attempts[0].status_code, 503);
    assert.equal(Date.parse(d.next_attempt_at), t0 + 120_000);
  });

  test('Retry-After on 429 moves each attempt but never extends the 8-attempt budget', async () => {
    const w = await hook(keyA, '/busy');
    await receiver.behavior('/busy', 429, 60);
    await enroll(keyA, w.webhook_id, ['busyco'], ['new_funding_round']);
    // 7 x 60 s of service time stays inside the receiver's 300-second window (it checks against its wall clock).
    clock.set(Date.now() - 210_000);
    await ingest('busyco');
    await platform.runDueJobs();
    for (let i = 1; i < 8; i++) {
      const d = await deliveryOf(keyA, w.webhook_id);
      assert.equal(d.status, 'pending', `after attempt ${i}`);
      const last = d.attempts[d.attempts.length - 1];
      assert.equal(last.status_code, 429);
      assert.equal(
        Date.parse(d.next_attempt_at) - Date.parse(last.attempted_at),
        60_000,
        'exactly Retry-After',
      );
      clock.set(Date.parse(d.next_attempt_at));
      await sweepAndRun();
    }
    const d = await deliveryOf(keyA, w.webhook_id);
    assert.equal(d.attempts.length, 8);
    assert.equal(d.status, 'failed', 'Retry-After on the last attempt does not buy a ninth');
    assert.equal(d.next_attempt_at, null);
    assert.equal(d.attempts[7].next_attempt_at, null);
  });

  test('a 3xx answer is a failure and its redirect is not followed', async () => {
    const w = await hook(keyA, '/moved');
    await receiver.behavior('/moved', 302);
    await enroll(keyA, w.webhook_id, ['movedco'], ['new_funding_round']);
    await ingest('movedco');
    await platform.runDueJobs();
    const d = await deliveryOf(keyA, w.webhook_id);
    assert.equal(d.status, 'pending');
    assert.equal(d.attempts[0].status_code, 302);
    assert.match(d.attempts[0].error, /302/);
    assert.equal(onPath(await receiver.received(), '/moved').length, 1);
  });

  test('re-pointing or narrowing an enrollment cancels its pending retries to the old target; replay is refused', async () => {
    const old = await hook(keyA, '/old');
    const fresh = await hook(keyA, '/fresh');
    await receiver.behavior('/old', 500);
    const e = await enroll(keyA, old.webhook_id, ['moveco', 'dropco'], ['new_funding_round']);
    await ingest('moveco');
    await platform.runDueJobs();
    assert.equal((await deliveryOf(keyA, old.webhook_id)).status, 'pending');
    const url = `/v2/businesses/events/enrollments/${e.enrollment_id}`;
    assert.equal((await call('PATCH', url, keyA, { webhook_id: fresh.webhook_id })).statusCode, 200);
    clock.advance(10_000);
    await sweepAndRun();
    const d = await deliveryOf(keyA, old.webhook_id);
    assert.equal(d.status, 'cancelled');
    assert.equal(d.last_error, 'enrollment re-pointed to another webhook');
    assert.equal(onPath(await receiver.received(), '/old').length, 1, 'the old webhook gets no retry');
    const replay = await call(
      'POST',
      `/v2/webhooks/${old.webhook_id}/deliveries/${d.delivery_id}/replay`,
      keyA,
    );
    assert.equal(replay.statusCode, 422);
    assert.equal(replay.json().error.code, 'enrollment_not_active');

    await receiver.behavior('/fresh', 500);
    await ingest('dropco');
    await platform.runDueJobs();
    assert.equal(
      (await deliveryOf(keyA, fresh.webhook_id)).status,
      'pending',
      'new events go to the new webhook',
    );
    await call('PATCH', url, keyA, { remove_business_ids: ['dropco'] });
    clock.advance(10_000);
    await sweepAndRun();
    const dropped = await deliveryOf(keyA, fresh.webhook_id);
    assert.equal(dropped.status, 'cancelled');
    assert.equal(dropped.last_error, 'enrollment no longer covers this entity or event type');
    assert.equal(onPath(await receiver.received(), '/fresh').length, 1);
    const replayDropped = await call(
      'POST',
      `/v2/webhooks/${fresh.webhook_id}/deliveries/${dropped.delivery_id}/replay`,
      keyA,
    );
    assert.equal(replayDropped.statusCode, 422);
    assert.equal(replayDropped.json().error.code, 'enrollment_not_active');
    await call('PATCH', url, keyA, { add_business_ids: ['dropco'] });
    await receiver.behavior('/fresh', 200);
    const replayed = await call(
      'POST',
      `/v2/webhooks/${fresh.webhook_id}/deliveries/${dropped.delivery_id}/replay`,
      keyA,
    );
    assert.equal(replayed.statusCode, 202, 'covered again: replayable');
    await platform.runDueJobs();
    assert.equal((await deliveryOf(keyA, fresh.webhook_id)).status, 'succeeded');
  });

  test('a paused enrollment re-pointed at an active webhook receives new events again', async () => {
    const gone = await hook(keyA, '/gone-hook');
    const e = await enroll(keyA, gone.webhook_id, ['pauseco'], ['new_funding_round']);
    const del = await call('DELETE', `/v2/webhooks/${gone.webhook_id}?force=true`, keyA);
    assert.deepEqual(del.json().affected_enrollment_ids, [e.enrollment_id]);
    assert.equal((await ingest('pauseco')).deliveries_created, 0);
    const next = await hook(keyA, '/back');
    const repointed = await call('PATCH', `/v2/businesses/events/enrollments/${e.enrollment_id}`, keyA, {
      webhook_id: next.webhook_id,
    });
    assert.equal(repointed.json().status, 'active');
    const stored = await ingest('pauseco');
    assert.equal(stored.deliveries_created, 1);
    await platform.runDueJobs();
    const [r] = onPath(await receiver.waitFor((l) => onPath(l, '/back').length >= 1), '/back');
    assert.equal(r!.verified, true);
    assert.equal(r!.payload!.enrollment_id, e.enrollment_id);
    assert.equal(r!.payload!.event_id, stored.events[0]!.event_id);
    assert.equal(onPath(await receiver.received(), '/gone-hook').length, 0);
  });

  test('without OUTBOUND_ALLOW_PRIVATE a loopback destination is refused by the SSRF guard (no request sent)', async () => {
    const w = await hook(keyA, '/private');
    const running = platform.booted.services.get('entity-events')!;
    const guarded = new OutboundHttp({ allowPrivate: false });
    const engine = new DeliveryEngine(
      running.ctx.db,
      clock,
      guarded,
      new WebhookService(running.ctx.db, clock, running.ctx.secrets),
      500,
    );
    try {
      const [key] = (
        await running.ctx.pool.query(
          'select k.id, k.tenant_id, t.partner_id from entity_events.api_keys k join entity_events.tenants t on t.id = k.tenant_id where t.id = $1 limit 1',
          [tenantA],
        )
      ).rows as { id: number; tenant_id: string; partner_id: string }[];
      const principal = { keyId: key!.id, tenantId: key!.tenant_id, partnerId: key!.partner_id };
      const [outcome] = await engine.checkConnectivity(principal, w.webhook_id);
      assert.equal(outcome!.success, false);
      assert.match(outcome!.error ?? '', /^blocked_address/);
      assert.equal(onPath(await receiver.received(), '/private').length, 0);
    } finally {
      await guarded.close();
    }
  });

  test('410 Gone disables the webhook and fails the delivery; nothing more is queued for it', async () => {
    const w = await hook(keyA, '/gone');
    await receiver.behavior('/gone', 410);
    await enroll(keyA, w.webhook_id, ['goneco'], ['new_funding_round']);
    await ingest('goneco');
    await platform.runDueJobs();
    const d = await deliveryOf(keyA, w.webhook_id);
    assert.equal(d.status, 'failed');
    const hookNow = (await call('GET', `/v2/webhooks/${w.webhook_id}`, keyA)).json();
    assert.equal(hookNow.status, 'disabled');
    assert.equal(hookNow.disabled_reason, 'gone');
    assert.equal(hookNow.disabled_at, clock.now().toISOString());
    assert.equal((await ingest('goneco')).deliveries_created, 0);
  });

  test('after 8 failed attempts the delivery is failed; replay delivers it as a new delivery; only failed ones replay', async () => {
    const w = await hook(keyA, '/exhaust');
    await receiver.behavior('/exhaust', 500);
    await enroll(keyA, w.webhook_id, ['exco'], ['new_funding_round']);
    await ingest('exco');
    await platform.runDueJobs();
    for (let i = 0; i < 7; i++) {
      const d = await deliveryOf(keyA, w.webhook_id);
      assert.equal(d.status, 'pending');
      clock.set(Date.parse(d.next_attempt_at));
      await sweepAndRun();
    }
    const d = await deliveryOf(keyA, w.webhook_id);
    assert.equal(d.status, 'failed');
    assert.equal(d.attempts.length, 8);
    assert.equal(d.next_attempt_at, null);
    const span = Date.parse(d.attempts[7].attempted_at) - Date.parse(d.attempts[0].attempted_at);
    const nominal = (5 + 300 + 1800 + 7200 + 18000 + 36000 + 36000) * 1000;
    assert.ok(span >= nominal * 0.9 && span <= nominal * 1.1, `schedule spans about 27.9 h: ${span}`);

    await receiver.behavior('/exhaust', 200);
    clock.set(Date.now());
    const replay = await call(
      'POST',
      `/v2/webhooks/${w.webhook_id}/deliveries/${d.delivery_id}/replay`,
      keyA,
    );
    assert.equal(replay.statusCode, 202, replay.body);
    const replayed = replay.json();
    assert.equal(replayed.status, 'pending');
    assert.equal(replayed.replay_of, d.delivery_id, 'the replay names the delivery it replays');
    assert.notEqual(replayed.delivery_id, d.delivery_id, 'a replay is a new delivery');
    await platform.runDueJobs();
    const fresh = await call('GET', `/v2/webhooks/${w.webhook_id}/deliveries/${replayed.delivery_id}`, keyA);
    assert.equal(fresh.json().status, 'succeeded');
    assert.deepEqual(
      fresh
        .json()
        .attempts.map((a: { attempt_number: number; status: string }) => [a.attempt_number, a.status]),
      [[1, 'succeeded']],
      'its own attempt log and a fresh budget',
    );
    const original = await call('GET', `/v2/webhooks/${w.webhook_id}/deliveries/${d.delivery_id}`, keyA);
    assert.equal(original.json().status, 'failed', 'the replayed delivery keeps its status and log');
    assert.equal(original.json().attempts.length, 8);
    const last = onPath(await receiver.received(), '/exhaust').at(-1)!;
    assert.equal(last.headers['x-delivery-id'], replayed.delivery_id);
    assert.equal(last.headers['x-replay-of'], d.delivery_id);
    assert.equal(last.payload?.event_id, fresh.json().event_id, 'the same event');

    const twice = await call('POST', `/v2/webhooks/${w.webhook_id}/deliveries/${d.delivery_id}/replay`, keyA);
    assert.equal(twice.statusCode, 409, 'a delivery is replayed once');
    assert.equal(twice.json().error.code, 'delivery_already_replayed');
    assert.equal(twice.json().error.details.replay_delivery_id, replayed.delivery_id);
    const again = await call(
      'POST',
      `/v2/webhooks/${w.webhook_id}/deliveries/${replayed.delivery_id}/replay`,
      keyA,
    );
    assert.equal(again.statusCode, 409);
    assert.equal(again.json().error.code, 'delivery_not_replayable', 'a succeeded delivery is not replayed');
    const foreign = await call(
      'POST',
      `/v2/webhooks/${w.webhook_id}/deliveries/${d.delivery_id}/replay`,
      keyB,
    );
    assert.equal(foreign.statusCode, 404);
  });

  test('disabling a webhook cancels its pending retries and stops new deliveries; re-enabling resumes', async () => {
    const w = await hook(keyA, '/toggle');
    await receiver.behavior('/toggle', 500);
    await enroll(keyA, w.webhook_id, ['togco'], ['new_funding_round']);
    await ingest('togco');
    await platform.runDueJobs();
    await call('PATCH', `/v2/webhooks/${w.webhook_id}`, keyA, { status: 'disabled' });
    clock.advance(10_000);
    await sweepAndRun();
    const d = await deliveryOf(keyA, w.webhook_id);
    assert.equal(d.status, 'cancelled');
    assert.equal(d.last_error, 'webhook disabled');
    assert.equal(d.attempts.length, 1, 'no POST after disabling');
    assert.equal((await ingest('togco')).deliveries_created, 0);
    await receiver.behavior('/toggle', 200);
    await call('PATCH', `/v2/webhooks/${w.webhook_id}`, keyA, { status: 'active' });
    assert.equal((await ingest('togco')).deliveries_created, 1);
    await platform.runDueJobs();
    const got = onPath(await receiver.received(), '/toggle');
    assert.equal(got.filter((r) => r.status_returned === 200).length, 1);
  });

  test('deleting an enrollment stops its pending retries; force-deleting a webhook cancels its deliveries', async () => {
    const w = await hook(keyA, '/del');
    await receiver.behavior('/del', 500);
    const e = await enroll(keyA, w.webhook_id, ['delco'], ['new_funding_round']);
    await ingest('delco');
    await platform.runDueJobs();
    assert.equal((await deliveryOf(keyA, w.webhook_id)).status, 'pending');
    const del = await call('DELETE', `/v2/businesses/events/enrollments/${e.enrollment_id}`, keyA);
    assert.equal(del.statusCode, 200);
    clock.advance(10_000);
    await sweepAndRun();
    const d = await deliveryOf(keyA, w.webhook_id);
    assert.equal(d.status, 'cancelled');
    assert.equal(d.last_error, 'enrollment deleted');
    assert.equal(onPath(await receiver.received(), '/del').length, 1, 'no POST after the deletion');

    const w2 = await hook(keyA, '/del2');
    await receiver.behavior('/del2', 500);
    await enroll(keyA, w2.webhook_id, ['delco2'], ['new_funding_round']);
    await ingest('delco2');
    await platform.runDueJobs();
    const forced = await call('DELETE', `/v2/webhooks/${w2.webhook_id}?force=true`, keyA);
    assert.equal(forced.statusCode, 200);
    const { rows } = await platform.booted.database.pool.query(
      'select status, last_error from entity_events.deliveries where webhook_id = $1',
      [w2.webhook_id],
    );
    assert.deepEqual(rows, [{ status: 'cancelled', last_error: 'webhook deleted' }]);
    assert.equal((await ingest('delco2')).deliveries_created, 0, 'the paused enrollment gets nothing');
  });

  test('v1 enrollments deliver to the legacy partner webhook with the earlier founding_* names', async () => {
    const legacy = await call('POST', '/v1/webhooks', keyA, { webhook_url: `${receiver.url}/legacy` });
    assert.equal(legacy.statusCode, 201, legacy.body);
    await receiver.setSecret(legacy.json().webhook_id, legacy.json().webhook_secret);
    const v1 = await call('POST', '/v1/businesses/events/enrollments', keyA, {
      enrollment_key: 'old-crm',
      event_types: ['new_funding_round'],
      business_ids: ['oldco'],
    });
    assert.equal(v1.statusCode, 201, v1.body);
    assert.equal(v1.json().webhook_id, null);
    const w = await hook(keyA, '/new');
    await enroll(keyA, w.webhook_id, ['oldco'], ['new_funding_round']);
    assert.equal((await ingest('oldco')).deliveries_created, 2);
    await platform.runDueJobs();
    const got = await receiver.waitFor((l) => l.length >= 2);
    const old = onPath(got, '/legacy')[0]!;
    const cur = onPath(got, '/new')[0]!;
    assert.equal(old.verified, true, old.reason ?? '');
    assert.equal(cur.verified, true);
    const oldData = old.payload!.data as Record<string, unknown>;
    assert.equal(oldData.founding_stage, 'series_b');
    assert.equal(oldData.founding_date, '2026-05-01');
    assert.equal(oldData.funding_stage, undefined);
    const curData = cur.payload!.data as Record<string, unknown>;
    assert.equal(curData.funding_stage, 'series_b');
    assert.equal(curData.founding_stage, undefined);
    assert.equal(old.payload!.webhook_id, legacy.json().webhook_id);
  });

  test('check_connectivity: a signed test event now, or 1-10 simulated events; outcome in response_context', async () => {
    const w = await hook(keyA, '/check');
    const basic = await call('POST', `/v2/webhooks/${w.webhook_id}/check_connectivity`, keyA);
    assert.equal(basic.statusCode, 200, basic.body);
    const outcome = basic.json().response_context.webhook_response;
    assert.equal(outcome.success, true);
    assert.equal(outcome.status_code, 200);
    assert.equal(typeof outcome.duration_ms, 'number');
    const [first] = await receiver.received();
    assert.equal(first!.verified, true);
    assert.equal(first!.payload!.event_name, 'test_event');

    const sim = await call('POST', `/v2/webhooks/${w.webhook_id}/check_connectivity`, keyA, {
      simulation: {
        event_name: 'prospect_changed_company',
        number_of_events: 3,
        event_time: '2026-04-01T08:00:00Z',
      },
    });
    assert.equal(sim.statusCode, 200, sim.body);
    assert.equal(sim.json().response_context.webhook_responses.length, 3);
    const got = (await receiver.received()).slice(1);
    assert.equal(got.length, 3);
    const ids = new Set([first!, ...got].map((r) => r.headers['x-delivery-id']));
    assert.equal(ids.size, 4, 'each mock event carries an X-Delivery-Id of its own');
    for (const id of ids) assert.match(id ?? '', /^dl_[0-9a-f]{32}$/);
    for (const r of got) {
      assert.equal(r.verified, true);
      assert.equal(r.payload!.event_name, 'prospect_changed_company');
      assert.equal(r.payload!.entity_type, 'prospect');
      assert.equal(r.payload!.event_time, '2026-04-01T08:00:00.000Z');
      assert.ok((r.payload!.data as Record<string, unknown>).new_company);
    }
    const sentBefore = (await receiver.received()).length;
    for (const [simulation, code, fields] of [
      [
        { event_name: 'new_product', number_of_events: 11 },
        'validation_failed',
        ['simulation/number_of_events'],
      ],
      [
        { event_name: 'new_product', number_of_events: 0 },
        'validation_failed',
        ['simulation/number_of_events'],
      ],
      [{ event_name: 'no_such_event', number_of_events: 1 }, 'unknown_event_type', ['simulation/event_name']],
      [
        { event_name: 'new_product', number_of_events: 1, event_time: 'yesterday' },
        'validation_failed',
        ['simulation/event_time'],
      ],
      [
        { event_name: 'no_such_event', number_of_events: 1, event_time: 'yesterday' },
        'validation_failed',
        ['simulation/event_name', 'simulation/event_time'],
      ],
    ] as const) {
      const bad = await call('POST', `/v2/webhooks/${w.webhook_id}/check_connectivity`, keyA, { simulation });
      assert.equal(bad.statusCode, 400, JSON.stringify(simulation));
      assert.equal(bad.json().error.code, code, JSON.stringify(simulation));
      assert.deepEqual(
        bad.json().error.details.issues.map((i: { field: string }) => i.field),
        fields,
        JSON.stringify(simulation),
      );
    }
    assert.equal((await receiver.received()).length, sentBefore, 'nothing is sent for a refused simulation');
    const emptyJson = await platform.app('entity-events').inject({
      method: 'POST',
      url: `/v2/webhooks/${w.webhook_id}/check_connectivity`,
      headers: { api_key: keyA, 'content-type': 'application/json' },
      payload: '',
    });
    assert.equal(emptyJson.statusCode, 200, 'Content-Type without a body is the basic check');
    assert.equal(emptyJson.json().events_sent, 1);
    const broken = await platform.app('entity-events').inject({
      method: 'POST',
      url: `/v2/webhooks/${w.webhook_id}/check_connectivity`,
      headers: { api_key: keyA, 'content-type': 'application/json' },
      payload: '{"simulation":',
    });
    assert.equal(broken.statusCode, 400);
    assert.equal(broken.json().response_context.request_status, 'failure');
    await receiver.behavior('/check', 500);
    const failing = await call('POST', `/v2/webhooks/${w.webhook_id}/check_connectivity`, keyA);
    assert.equal(failing.json().response_context.webhook_response.status_code, 500);
    assert.equal(failing.json().response_context.webhook_response.success, false);
  });

  test('check_connectivity simulation: the events are sent at once, so the answer waits at most one timeout', async () => {
    // A receiver that answers nothing until all five events are in flight together. Sent one after another, each
    // would wait alone and time out (the delivery timeout here is 500 ms); sent at once, all five are answered 200.
    const held: http.ServerResponse[] = [];
    const barrier = http.createServer((req, res) => {
      req.resume();
      held.push(res);
      if (held.length === 5) for (const r of held.splice(0)) r.end('ok');
    });
    await new Promise<void>((resolve) => barrier.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = barrier.address() as { port: number };
      const created = await call('POST', '/v2/webhooks', keyA, {
        name: `barrier-${++seq}`,
        webhook_url: `http://127.0.0.1:${port}/hook`,
      });
      assert.equal(created.statusCode, 201, created.body);
      const sim = await call('POST', `/v2/webhooks/${created.json().webhook_id}/check_connectivity`, keyA, {
        simulation: { event_name: 'new_product', number_of_events: 5 },
      });
      assert.equal(sim.statusCode, 200, sim.body);
      const outcomes = sim.json().response_context.webhook_responses as { status_code: number | null }[];
      assert.deepEqual(
        outcomes.map((o) => o.status_code),
        [200, 200, 200, 200, 200],
      );
    } finally {
      for (const r of held.splice(0)) r.destroy();
      barrier.closeAllConnections();
      await new Promise((resolve) => barrier.close(resolve));
    }
  });

  test('rotating a secret: deliveries are signed with the new secret only, for that webhook only', async () => {
    const w = await hook(keyA, '/rot');
    const other = await hook(keyA, '/rot-other');
    await enroll(keyA, w.webhook_id, ['rotco'], ['new_funding_round']);
    await enroll(keyA, other.webhook_id, ['rotco'], ['new_funding_round']);
    const rotated = (await call('POST', `/v2/webhooks/${w.webhook_id}/rotate_secret`, keyA)).json();
    await ingest('rotco');
    await platform.runDueJobs();
    let got = await receiver.waitFor((l) => l.length >= 2);
    assert.equal(onPath(got, '/rot')[0]!.verified, false, 'the receiver still holds the old secret');
    assert.equal(onPath(got, '/rot-other')[0]!.verified, true, 'the other webhook keeps its secret');
    await receiver.setSecret(w.webhook_id, rotated.webhook_secret);
    clock.advance(6000);
    await sweepAndRun();
    got = await receiver.waitFor((l) => onPath(l, '/rot').length >= 2);
    assert.equal(onPath(got, '/rot')[1]!.verified, true);
  });

  test('the simulator produces events for enrolled entities through the same fan-out', async () => {
    const w = await hook(keyB, '/sim');
    await enroll(keyB, w.webhook_id, ['simco'], ['new_office']);
    const rate = await ops('PUT', '/_ops/simulator', { events_per_minute: 0 });
    assert.equal(rate.statusCode, 200);
    // As many events as there are enrolled (enrollment, entity) pairs: each pair is picked once, simco included.
    const { rows } = await platform.booted.database.pool.query(
      `select count(*)::int as n from entity_events.enrollments e
         join entity_events.enrollment_entities ee on ee.enrollment_id = e.id where e.status = 'active'`,
    );
    const res = await ops('POST', '/_ops/simulator/produce', { count: rows[0].n });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().produced, rows[0].n);
    await platform.runDueJobs();
    const got = onPath(await receiver.waitFor((l) => onPath(l, '/sim').length >= 1), '/sim');
    assert.equal(got[0]!.payload!.business_id, 'simco');
    assert.equal(got[0]!.payload!.event_name, 'new_office');
    assert.ok((got[0]!.payload!.data as { location?: unknown }).location);
  });

  test('the simulator produces the configured rate by the service clock, shared by every instance', async () => {
    const db = platform.booted.database.db;
    const w = await hook(keyA, '/rate');
    await enroll(
      keyA,
      w.webhook_id,
      Array.from({ length: 30 }, (_, i) => `rate${i}`),
      ['new_product'],
    );
    const instance = () =>
      new EntityEventSimulator(db, clock, new EventStore(db, clock), createLogger('silent'), 0, 1000);
    const [one, two] = [instance(), instance()];
    assert.equal(await one.rate(), 0, 'the PUT above stored 0');
    assert.equal(await one.tick(), 0);
    await one.setRate(30);
    assert.equal(await two.rate(), 30, 'the rate is shared');
    clock.advance(1000);
    assert.equal(await one.tick(), 0, '30 per minute = half an event per second');
    clock.advance(1000);
    assert.equal((await one.tick()) + (await two.tick()), 1, 'one event in two seconds, produced once');
    assert.equal(await two.tick(), 0, 'no time passed: nothing more is due');
    await two.setRate(600);
    clock.advance(1000);
    assert.equal(
      (await one.tick()) + (await two.tick()),
      10,
      'two instances together make the rate, not twice it',
    );
    clock.advance(1500);
    assert.equal(await two.tick(), 15);
    await one.setRate(60);
    clock.advance(3_600_000);
    assert.equal(await one.tick(), 10, 'an hour with every worker stopped: only the last 10 s are owed');
    await one.setRate(0);
    clock.advance(60_000);
    assert.equal((await one.tick()) + (await two.tick()), 0, 'rate 0 stops it');
  });
});
