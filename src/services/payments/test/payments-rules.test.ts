/**
 * Rules of the issue that cut across routes: the card number and the client secret never reach a log line or a
 * stored row; a payer replay needs the client secret; expiry on read for lists and voice sessions; every way a
 * voice session ends; 404s that never tell another merchant's resource from a missing one; agent-key rights;
 * compliance and the per-transaction limit checked again at payment time; idempotency records pruned after 48 h.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../../platform/clock.ts';
import { TEST_CARDS } from '../card-network.ts';
import {
  assertError,
  futureExpiry,
  type IntentDoc,
  type PaymentsHarness,
  startPayments,
  type TestMerchant,
  THREE_LINES,
} from './support.ts';

const START = Date.UTC(2026, 5, 1, 12, 0, 0);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe('payments: the card number and the client secret are never logged or stored', () => {
  const clock = new ManualClock(START);
  const lines: string[] = [];
  let h: PaymentsHarness;
  let m: TestMerchant;
  before(async () => {
    h = await startPayments(clock, { logLines: lines });
    m = await h.merchant('Logged');
  });
  after(async () => h.close());

  test('every payment path (link, voice, pending + settle job, bad cards, bad JSON) logs no card number', async () => {
    const secrets: string[] = [];
    const payBody = (secret: string, number: string, extra: Record<string, unknown> = {}) => ({
      data: {
        type: 'cardPayment',
        attributes: { clientSecret: secret, card: { number, ...futureExpiry(clock), cvc: '123', ...extra } },
      },
    });
    let n = 0;
    const pay = (intent: IntentDoc, number: string, extra: Record<string, unknown> = {}) =>
      h.api(
        undefined,
        'POST',
        `/v1/payment-intents/${intent.id}/card-payments`,
        payBody(intent.attributes.clientSecret!, number, extra),
        { 'idempotency-key': `log-check-${++n}` },
      );

    const paid = await h.createIntent(m);
    secrets.push(paid.attributes.clientSecret!);
    assert.equal((await pay(paid, TEST_CARDS.genericDecline)).statusCode, 201);
    assertError(await pay(paid, '4242424242424241'), 400, 'invalid_value'); // Luhn
    assertError(await pay(paid, TEST_CARDS.success, { extra: '4242424242424242' }), 400, 'invalid_value');
    const malformed = await h.api(
      undefined,
      'POST',
      `/v1/payment-intents/${paid.id}/card-payments`,
      `${JSON.stringify(payBody(paid.attributes.clientSecret!, '5555555555554444'))},`,
      { 'content-type': 'application/json' },
    );
    assertError(malformed, 400, 'invalid_value');
    assert.ok(!malformed.body.includes('5555555555554444'));
    assert.equal((await pay(paid, '4242 4242 4242 4242')).statusCode, 201);

    const pending = await h.createIntent(m);
    secrets.push(pending.attributes.clientSecret!);
    assert.equal((await pay(pending, TEST_CARDS.pendingThenSuccess)).statusCode, 201);
    // The queued settle job carries the card payment id only.
    const jobs = await h.platform.booted.database.pool.query(
      'select t::text as p from graphile_worker._private_jobs t',
    );
    assert.ok(jobs.rows.length >= 1);
    for (const row of jobs.rows) assert.ok(!row.p.includes(TEST_CARDS.pendingThenSuccess), row.p);
    await h.platform.runDueJobs();

    const voiced = await h.createIntent(m);
    secrets.push(voiced.attributes.clientSecret!);
    const session = (await h.api(m.key, 'POST', `/v1/payment-intents/${voiced.id}/voice-sessions`)).json()
      .data;
    const keyed = await h.api(m.key, 'POST', `/v1/voice-sessions/${session.id}/simulation/keyed-card`, {
      data: {
        type: 'cardPayment',
        attributes: { card: { number: '5555 5555 5555 4444', ...futureExpiry(clock), cvc: '123' } },
      },
    });
    assert.equal(keyed.json().data.attributes.status, 'succeeded');
    assert.equal(keyed.json().data.attributes.brand, 'mastercard');

    // The logger did capture the requests (one line per request), with paths but no bodies.
    const requestLines = lines.filter((l) => l.includes('"msg":"request"'));
    assert.ok(requestLines.some((l) => l.includes(`/v1/payment-intents/${paid.id}/card-payments`)));
    assert.ok(requestLines.length >= 10, `only ${requestLines.length} request lines`);
    const all = lines.join('\n');
    const numbers = [...Object.values(TEST_CARDS), '4242424242424241', '5555555555554444'];
    for (const n of numbers) {
      assert.ok(!all.includes(n), `log holds ${n}`);
      assert.ok(!all.includes(n.replace(/(\d{4})(?=\d)/g, '$1 ')), `log holds spaced ${n}`);
    }
    for (const s of secrets) assert.ok(!all.includes(s), 'log holds a client secret');

    // Nor does any stored row (card payments, intents, voice sessions, idempotency records).
    const { rows } = await h.platform.booted.database.pool.query(
      `select (select string_agg(t::text, '') from payments.card_payments t) as cp,
              (select string_agg(t::text, '') from payments.payment_intents t) as pi,
              (select string_agg(t::text, '') from payments.voice_sessions t) as vs,
              (select string_agg(t::text, '') from platform.idempotency_keys t) as idem`,
    );
    const stored = JSON.stringify(rows[0]);
    for (const n of numbers) assert.ok(!stored.includes(n), `stored ${n}`);
    for (const s of secrets) assert.ok(!stored.includes(s), 'stored a client secret in clear');
    assert.ok(stored.includes('4444'));
  });
});

describe('payments: expiry on read, voice-session endings, tenancy, rights, compliance at payment time', () => {
  const clock = new ManualClock(START);
  let h: PaymentsHarness;
  let m: TestMerchant;
  let other: TestMerchant;

  before(async () => {
    h = await startPayments(clock, { env: { PAYMENTS_MAX_ATTEMPTS: '2' } });
    m = await h.merchant('Rules');
    other = await h.merchant('Rules other');
  });
  after(async () => h.close());

  const read = async (id: string): Promise<IntentDoc> => {
    const res = await h.api(m.key, 'GET', `/v1/payment-intents/${id}`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json().data;
  };
  const session = async (id: string) => (await h.api(m.key, 'GET', `/v1/voice-sessions/${id}`)).json().data;

  test('a payer replay (same Idempotency-Key and card) still needs the right client secret', async () => {
    const intent = await h.createIntent(m);
    const secret = intent.attributes.clientSecret!;
    const key = { 'idempotency-key': 'payer-replay-1' };
    const first = await h.pay(intent.id, secret, TEST_CARDS.genericDecline, key);
    assert.equal(first.statusCode, 201, first.body);
    // Same key, same card, a forged secret of the same length: 404, not the stored answer (which holds the secret).
    const forged = `${secret.slice(0, -4)}${secret.endsWith('aaaa') ? 'bbbb' : 'aaaa'}`;
    assert.equal(forged.length, secret.length);
    const stolen = await h.pay(intent.id, forged, TEST_CARDS.genericDecline, key);
    assertError(stolen, 404, 'payment_intent_not_found');
    assert.equal(stolen.headers['x-idempotency-replayed'], undefined);
    assert.ok(!stolen.body.includes(secret));
    const replay = await h.pay(intent.id, secret, TEST_CARDS.genericDecline, key);
    assert.equal(replay.headers['x-idempotency-replayed'], 'true');
    assert.equal(replay.json().data.id, first.json().data.id);
  });

  test('list: intents past expiresAt are expired before filtering and counting (no read needed)', async () => {
    const fresh = await h.merchant('Expiring lister');
    const soon = await h.createIntent(fresh, {
      expiresAt: new Date(clock.nowMs() + 5 * MINUTE).toISOString(),
    });
    const later = await h.createIntent(fresh, { expiresAt: new Date(clock.nowMs() + HOUR).toISOString() });
    clock.advance(5 * MINUTE);
    const expired = await h.api(fresh.key, 'GET', '/v1/payment-intents?filter[status]=expired');
    assert.deepEqual(
      expired.json().data.map((d: IntentDoc) => [d.id, d.attributes.status, d.attributes.payUrl]),
      [[soon.id, 'expired', null]],
    );
    assert.equal(expired.json().meta.page.total, 1);
    const open = await h.api(fresh.key, 'GET', '/v1/payment-intents?filter[status]=open');
    assert.deepEqual(
      open.json().data.map((d: IntentDoc) => d.id),
      [later.id],
    );
    assert.equal(open.json().meta.page.total, 1);
  });

  test('voice: an intent expiring ends its session (intent_expired), on the session read and by the job', async () => {
    const a = await h.createIntent(m, { expiresAt: new Date(clock.nowMs() + 10 * MINUTE).toISOString() });
    const b = await h.createIntent(m, { expiresAt: new Date(clock.nowMs() + 10 * MINUTE).toISOString() });
    const sa = await h.startVoiceSession(m, a.id);
    const sb = await h.startVoiceSession(m, b.id);
    clock.advance(10 * MINUTE);
    // Reading the session is enough: its intent expires on that read.
    const readA = await session(sa);
    assert.equal(readA.attributes.status, 'ended');
    assert.equal(readA.attributes.endedReason, 'intent_expired');
    assert.equal(await h.rawStatus('payment_intents', a.id), 'expired');
    // The cron job does the same for b.
    assert.equal(await h.rawStatus('voice_sessions', sb), 'active');
    await h.platform.booted.tasks['payments:expire-intents']!({}, {} as never);
    const readB = await session(sb);
    assert.equal(readB.attributes.status, 'ended');
    assert.equal(readB.attributes.endedReason, 'intent_expired');
    assertError(await h.keyCard(m, sb, TEST_CARDS.success), 409, 'invalid_state');
    assertError(
      await h.api(m.key, 'POST', `/v1/payment-intents/${b.id}/voice-sessions`),
      409,
      'invalid_state',
    );
  });

  test('voice: a link payment ends the active session (intent_completed; paid_by_link while processing)', async () => {
    const paid = await h.createIntent(m);
    const s1 = await h.startVoiceSession(m, paid.id);
    assert.equal((await h.pay(paid.id, paid.attributes.clientSecret!, TEST_CARDS.success)).statusCode, 201);
    const ended1 = await session(s1);
    assert.equal(ended1.attributes.status, 'ended');
    assert.equal(ended1.attributes.endedReason, 'intent_completed');
    assert.equal(ended1.relationships.cardPayment.data, null);

    const pending = await h.createIntent(m);
    const s2 = await h.startVoiceSession(m, pending.id);
    const res = await h.pay(pending.id, pending.attributes.clientSecret!, TEST_CARDS.pendingThenSuccess);
    assert.equal(res.json().data.attributes.status, 'processing');
    const ended2 = await session(s2);
    assert.equal(ended2.attributes.status, 'ended');
    assert.equal(ended2.attributes.endedReason, 'paid_by_link');
    // No session can start while a payment is processing.
    assertError(
      await h.api(m.key, 'POST', `/v1/payment-intents/${pending.id}/voice-sessions`),
      409,
      'invalid_state',
    );
    await h.platform.runDueJobs();
    assert.equal((await read(pending.id)).attributes.status, 'completed');
  });

  test('voice: a keyed pending card keeps the session active (paymentProcessing); the settle job completes both', async () => {
    const intent = await h.createIntent(m);
    const s = await h.startVoiceSession(m, intent.id);
    const res = await h.keyCard(m, s, TEST_CARDS.pendingThenSuccess);
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().data.attributes.status, 'processing');
    assert.equal(res.json().data.attributes.channel, 'voice');
    assert.equal(res.json().included[0].attributes.status, 'processing');
    const mid = await session(s);
    assert.deepEqual([mid.attributes.status, mid.attributes.endedReason], ['active', null]);
    assert.deepEqual(mid.relationships.cardPayment.data, { type: 'cardPayment', id: res.json().data.id });
    // The intent is processing: no second card meanwhile.
    assertError(await h.keyCard(m, s, TEST_CARDS.success), 409, 'invalid_state');
    await h.platform.runDueJobs();
    const done = await read(intent.id);
    assert.equal(done.attributes.status, 'completed');
    assert.deepEqual(done.relationships.cardPayment.data, { type: 'cardPayment', id: res.json().data.id });
    assert.deepEqual(done.relationships.voiceSession.data, { type: 'voiceSession', id: s });
    const after = await session(s);
    assert.deepEqual([after.attributes.status, after.attributes.endedReason], ['completed', null]);
  });

  test('voice: a keyed pending card declined by the settle job leaves the session active for another card', async () => {
    const intent = await h.createIntent(m);
    const s = await h.startVoiceSession(m, intent.id);
    const res = await h.keyCard(m, s, TEST_CARDS.pendingThenDecline);
    assert.equal(res.json().data.attributes.status, 'processing');
    assert.equal((await session(s)).attributes.status, 'active');
    await h.platform.runDueJobs();
    const cp = await h.api(m.key, 'GET', `/v1/card-payments/${res.json().data.id}`);
    assert.deepEqual(
      [cp.json().data.attributes.status, cp.json().data.attributes.failureCode],
      ['failed', 'card_declined'],
    );
    assert.equal((await read(intent.id)).attributes.status, 'open');
    const waiting = await session(s);
    assert.deepEqual([waiting.attributes.status, waiting.attributes.endedReason], ['active', null]);
    // Not `completed` with a failed payment: the payer keys another card on the same call.
    const ok = await h.keyCard(m, s, TEST_CARDS.success);
    assert.equal(ok.statusCode, 201, ok.body);
    assert.equal(ok.json().data.attributes.status, 'succeeded');
    assert.equal((await session(s)).attributes.status, 'completed');
    assert.equal((await read(intent.id)).attributes.status, 'completed');
  });

  test('voice: a pending decline that closes the intent ends the session with its reason (declined, expired)', async () => {
    // PAYMENTS_MAX_ATTEMPTS is 2 here: one decline, then a pending card declined by the job -> intent declined.
    const last = await h.createIntent(m);
    const s1 = await h.startVoiceSession(m, last.id);
    assert.equal(
      (await h.keyCard(m, s1, TEST_CARDS.genericDecline)).json().included[0].attributes.status,
      'open',
    );
    assert.equal(
      (await h.keyCard(m, s1, TEST_CARDS.pendingThenDecline)).json().data.attributes.status,
      'processing',
    );
    assert.equal((await session(s1)).attributes.status, 'active');
    await h.platform.runDueJobs();
    assert.equal((await read(last.id)).attributes.status, 'declined');
    const ended1 = await session(s1);
    assert.deepEqual([ended1.attributes.status, ended1.attributes.endedReason], ['ended', 'intent_declined']);

    // Declined by the job after expiresAt -> intent expired, session ended intent_expired.
    const late = await h.createIntent(m, { expiresAt: new Date(clock.nowMs() + 5 * MINUTE).toISOString() });
    const s2 = await h.startVoiceSession(m, late.id);
    assert.equal(
      (await h.keyCard(m, s2, TEST_CARDS.pendingThenDecline)).json().data.attributes.status,
      'processing',
    );
    clock.advance(5 * MINUTE + 1000);
    await h.platform.booted.tasks['payments:expire-intents']!({}, {} as never);
    assert.equal(await h.rawStatus('voice_sessions', s2), 'active'); // the attempt started in time
    await h.platform.runDueJobs();
    assert.equal((await read(late.id)).attributes.status, 'expired');
    const ended2 = await session(s2);
    assert.deepEqual([ended2.attributes.status, ended2.attributes.endedReason], ['ended', 'intent_expired']);
  });

  test('voice: the last allowed decline declines the intent and ends the session (intent_declined)', async () => {
    const intent = await h.createIntent(m);
    const s = await h.startVoiceSession(m, intent.id);
    const first = await h.keyCard(m, s, TEST_CARDS.genericDecline);
    assert.equal(first.json().included[0].attributes.status, 'open');
    assert.equal((await session(s)).attributes.status, 'active');
    const second = await h.keyCard(m, s, TEST_CARDS.expiredCard);
    assert.equal(second.json().data.attributes.failureCode, 'expired_card');
    assert.equal(second.json().included[0].attributes.status, 'declined');
    const ended = await session(s);
    assert.equal(ended.attributes.status, 'ended');
    assert.equal(ended.attributes.endedReason, 'intent_declined');
    const after = await read(intent.id);
    assert.equal(after.attributes.payUrl, null);
    assert.equal(after.relationships.cardPayment.data, null);
  });

  test('404s never tell another merchant’s card payment, voice session or intent from a missing one', async () => {
    const intent = await h.createIntent(m);
    const paid = await h.pay(intent.id, intent.attributes.clientSecret!, TEST_CARDS.success);
    const cpId = paid.json().data.id as string;
    const foreignCp = await h.api(other.key, 'GET', `/v1/card-payments/${cpId}`);
    const missingCp = await h.api(other.key, 'GET', `/v1/card-payments/cpy_${'0'.repeat(32)}`);
    assertError(foreignCp, 404, 'card_payment_not_found');
    assertError(missingCp, 404, 'card_payment_not_found');
    assert.equal(foreignCp.json().errors[0].detail, missingCp.json().errors[0].detail);

    const open = await h.createIntent(m);
    const foreignVoice = await h.api(other.key, 'POST', `/v1/payment-intents/${open.id}/voice-sessions`);
    const missingVoice = await h.api(
      other.key,
      'POST',
      `/v1/payment-intents/pmi_${'0'.repeat(32)}/voice-sessions`,
    );
    assertError(foreignVoice, 404, 'payment_intent_not_found');
    assertError(missingVoice, 404, 'payment_intent_not_found');
    assert.equal(foreignVoice.json().errors[0].detail, missingVoice.json().errors[0].detail);
    // The foreign caller changed nothing.
    assert.equal((await read(open.id)).relationships.voiceSession.data, null);

    const s = await h.startVoiceSession(m, open.id);
    for (const [method, url] of [
      ['GET', `/v1/voice-sessions/${s}`],
      ['POST', `/v1/voice-sessions/${s}/simulation/hang-up`],
    ] as const) {
      assertError(await h.api(other.key, method, url), 404, 'voice_session_not_found');
    }
    assertError(
      await h.api(other.key, 'POST', `/v1/voice-sessions/${s}/simulation/keyed-card`, {
        data: {
          type: 'cardPayment',
          attributes: { card: { number: TEST_CARDS.success, ...futureExpiry(clock), cvc: '123' } },
        },
      }),
      404,
      'voice_session_not_found',
    );
    assert.equal((await session(s)).attributes.status, 'active');
    // Another merchant's intents never appear in a list.
    const list = await h.api(other.key, 'GET', '/v1/payment-intents?page[size]=100');
    assert.ok(!list.json().data.some((d: IntentDoc) => d.id === open.id));
  });

  test('agent keys: everything on intents and voice, but no key revocation (403 forbidden)', async () => {
    const issued = await h.api(m.key, 'POST', '/v1/agent-keys', {
      data: { type: 'credential', attributes: { label: 'voice bot' } },
    });
    const agentKey = issued.json().data.attributes.key as string;
    const created = await h.api(agentKey, 'POST', '/v1/payment-intents', {
      data: {
        type: 'paymentIntent',
        attributes: { description: 'by agent', taxMode: 'inclusive', lineItems: THREE_LINES },
        relationships: { customerParty: { data: { type: 'party', id: m.customerId } } },
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().data.id as string;
    const replaced = await h.api(agentKey, 'PUT', `/v1/payment-intents/${id}/line-items`, {
      data: [{ description: 'one', quantity: 1, unitAmount: 100 }],
    });
    assert.equal(replaced.statusCode, 200, replaced.body);
    const v = await h.api(agentKey, 'POST', `/v1/payment-intents/${id}/voice-sessions`);
    assert.equal(v.statusCode, 201, v.body);
    assert.equal((await h.api(agentKey, 'GET', '/v1/parties/me/limits')).statusCode, 200);
    assert.equal((await h.api(agentKey, 'POST', `/v1/payment-intents/${id}/cancel`)).statusCode, 200);
    assertError(
      await h.api(agentKey, 'POST', `/v1/agent-keys/${issued.json().data.id}/revoke`),
      403,
      'forbidden',
    );
    assert.equal((await h.api(agentKey, 'GET', '/v1/parties/me')).statusCode, 200);
  });

  test('compliance is checked again at payment time: the payer learns nothing, the merchant learns why', async () => {
    const c = await h.ops('POST', '/_ops/parties', {
      kind: 'customer',
      name: 'Later blocked',
      ownerPartyId: m.partyId,
      caseStatus: 'MET',
    });
    const customerId = c.json().data.id as string;
    const intent = await h.createIntent({ ...m, customerId });
    const s = await h.startVoiceSession(m, intent.id);
    const moved = await h.ops('POST', `/_ops/parties/${customerId}/compliance/case`, {
      caseStatus: 'ACTION_NEEDED',
      requirements: [{ key: 'proof_of_address', description: 'A recent utility bill' }],
    });
    assert.equal(moved.statusCode, 200, moved.body);
    const payer = assertError(
      await h.pay(intent.id, intent.attributes.clientSecret!, TEST_CARDS.success),
      403,
      'compliance_required',
    );
    assert.equal(payer.detail, 'This merchant cannot take payments right now.');
    const merchantView = assertError(await h.keyCard(m, s, TEST_CARDS.success), 403, 'compliance_required');
    assert.match(merchantView.detail, new RegExp(customerId));
    assert.match(merchantView.detail, /documentsRequired/);
    // Nothing was attempted; the intent is still open.
    assert.equal(await h.attemptCount(intent.id), 0);
    assert.equal((await read(intent.id)).attributes.status, 'open');
  });

  test('a limit lowered after creation holds for every attempt (link and voice); nothing is recorded', async () => {
    const shop = await h.merchant('Limit later');
    const intent = await h.createIntent(shop); // 3521 cents
    const setLimit = (perTransaction: number | null) =>
      h.api(shop.key, 'PUT', '/v1/parties/me/limits', {
        data: { type: 'transactionLimits', attributes: { perTransaction } },
      });
    assert.equal((await setLimit(3520)).statusCode, 200);
    const payer = assertError(
      await h.pay(intent.id, intent.attributes.clientSecret!, TEST_CARDS.success),
      400,
      'limit_exceeded',
    );
    assert.ok(!payer.detail.includes('3520'), payer.detail);
    const s = (await h.api(shop.key, 'POST', `/v1/payment-intents/${intent.id}/voice-sessions`)).json().data
      .id;
    const voice = assertError(
      await h.api(shop.key, 'POST', `/v1/voice-sessions/${s}/simulation/keyed-card`, {
        data: {
          type: 'cardPayment',
          attributes: { card: { number: TEST_CARDS.success, ...futureExpiry(clock), cvc: '123' } },
        },
      }),
      400,
      'limit_exceeded',
    );
    assert.match(voice.detail, /3520/);
    assert.equal(await h.attemptCount(intent.id), 0);
    assert.equal(await h.rawStatus('payment_intents', intent.id), 'open');
    assert.equal(await h.rawStatus('voice_sessions', s), 'active');
    // At the limit again: paid.
    assert.equal((await setLimit(3521)).statusCode, 200);
    const ok = await h.pay(intent.id, intent.attributes.clientSecret!, TEST_CARDS.success);
    assert.equal(ok.json().data.attributes.status, 'succeeded');
  });

  test('operator routes: settle a pending payment now, run the expiry sweep now', async () => {
    const intent = await h.createIntent(m);
    const res = await h.pay(intent.id, intent.attributes.clientSecret!, TEST_CARDS.pendingThenDecline);
    const cpId = res.json().data.id as string;
    const settled = await h.ops('POST', `/_ops/card-payments/${cpId}/settle`);
    assert.equal(settled.statusCode, 200, settled.body);
    assert.equal(settled.json().data.id, cpId);
    assert.equal(settled.json().data.attributes.status, 'failed');
    assert.equal(settled.json().data.attributes.failureCode, 'card_declined');
    assert.equal(settled.json().data.attributes.channel, 'link');
    assert.equal((await read(intent.id)).attributes.status, 'open');
    // Settling again changes nothing (the job may run twice).
    assert.equal(
      (await h.ops('POST', `/_ops/card-payments/${cpId}/settle`)).json().data.attributes.status,
      'failed',
    );
    assertError(
      await h.ops('POST', `/_ops/card-payments/cpy_${'0'.repeat(32)}/settle`),
      404,
      'card_payment_not_found',
    );
    const due = await h.createIntent(m, { expiresAt: new Date(clock.nowMs() + MINUTE).toISOString() });
    clock.advance(MINUTE);
    const swept = await h.ops('POST', '/_ops/payment-intents/expire-due');
    assert.equal(swept.statusCode, 200, swept.body);
    assert.ok(swept.json().expired >= 1);
    assert.equal(await h.rawStatus('payment_intents', due.id), 'expired');
  });

  test('bad input: a malformed customer party id is a 400 with its pointer; nothing is created', async () => {
    const before = (
      await h.platform.booted.database.pool.query('select count(*)::int as n from payments.payment_intents')
    ).rows[0].n;
    const res = await h.api(m.key, 'POST', '/v1/payment-intents', {
      data: {
        type: 'paymentIntent',
        attributes: { taxMode: 'exclusive', lineItems: THREE_LINES },
        relationships: { customerParty: { data: { type: 'party', id: 'customer-1' } } },
      },
    });
    assertError(res, 400, 'invalid_value', '/data/relationships/customerParty/data/id');
    const after = (
      await h.platform.booted.database.pool.query('select count(*)::int as n from payments.payment_intents')
    ).rows[0].n;
    assert.equal(after, before);
  });

  test('idempotency records: replayed until just before 48 h, then the key is free and the record pruned', async () => {
    const headers = { 'idempotency-key': 'retention-check' };
    const first = await h.createIntent(m, {}, headers);
    clock.advance(48 * HOUR - 1000);
    const replay = await h.api(
      m.key,
      'POST',
      '/v1/payment-intents',
      {
        data: {
          type: 'paymentIntent',
          attributes: { description: 'Order 1001', taxMode: 'exclusive', lineItems: THREE_LINES },
          relationships: { customerParty: { data: { type: 'party', id: m.customerId } } },
        },
      },
      headers,
    );
    assert.equal(replay.headers['x-idempotency-replayed'], 'true');
    assert.equal(replay.json().data.id, first.id);
    const stored = async () =>
      (
        await h.platform.booted.database.pool.query(
          "select count(*)::int as n from platform.idempotency_keys where key = 'retention-check'",
        )
      ).rows[0].n;
    await h.platform.booted.tasks['platform:prune-idempotency']!({}, {} as never);
    assert.equal(await stored(), 1);
    clock.advance(1000);
    await h.platform.booted.tasks['platform:prune-idempotency']!({}, {} as never);
    assert.equal(await stored(), 0);
  });
});
