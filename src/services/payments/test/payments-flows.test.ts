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
} from './support.ts';

const START = Date.UTC(2026, 5, 1, 12, 0, 0);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe('payments: card payments, every state-machine edge over HTTP, voice, expiry, idempotency', () => {
  const clock = new ManualClock(START);
  let h: PaymentsHarness;
  let m: TestMerchant;

  before(async () => {
    h = await startPayments(clock, { env: { PAYMENTS_MAX_ATTEMPTS: '3' } });
    m = await h.merchant('Flows');
  });
  after(async () => h.close());

  const read = async (id: string): Promise<IntentDoc> => {
    const res = await h.api(m.key, 'GET', `/v1/payment-intents/${id}`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json().data;
  };
  const secretOf = (i: IntentDoc) => i.attributes.clientSecret!;
  const settleJobs = () => h.platform.runDueJobs();
  const expireJob = () => h.platform.booted.tasks['payments:expire-intents']!({}, {} as never);
  const pool = () => h.platform.booted.database.pool;
  test('success card: card payment succeeded (brand, last4, channel link); intent completed with cardPayment', async () => {
    const intent = await h.createIntent(m);
    const res = await h.pay(intent.id, secretOf(intent), TEST_CARDS.success);
    assert.equal(res.statusCode, 201, res.body);
    const cp = res.json().data;
    assert.match(cp.id, /^cpy_[0-9a-f]{32}$/);
    assert.deepEqual(
      { ...cp.attributes, createdAt: undefined, updatedAt: undefined },
      {
        amount: intent.attributes.amount,
        currency: 'USD',
        status: 'succeeded',
        brand: 'visa',
        last4: '4242',
        channel: 'link',
        failureCode: null,
        failureMessage: null,
        createdAt: undefined,
        updatedAt: undefined,
      },
    );
    const after = await read(intent.id);
    assert.equal(after.attributes.status, 'completed');
    assert.deepEqual(after.relationships.cardPayment, { data: { type: 'cardPayment', id: cp.id } });
    assert.equal(after.attributes.payUrl, null);
    assert.equal(after.attributes.clientSecret, null);
    const fetched = await h.api(m.key, 'GET', `/v1/card-payments/${cp.id}`);
    assert.equal(fetched.json().data.attributes.status, 'succeeded');
    // completed is terminal: no second payment, no line-item change, no cancel.
    assertError(await h.pay(intent.id, secretOf(intent), TEST_CARDS.success), 409, 'invalid_state');
    assertError(await h.api(m.key, 'POST', `/v1/payment-intents/${intent.id}/cancel`), 409, 'invalid_state');
  });

  test('each decline card: failed card payment with its code; intent back to open, cardPayment stays null', async () => {
    const cases: [string, string, string][] = [
      [TEST_CARDS.genericDecline, 'card_declined', '0002'],
      [TEST_CARDS.insufficientFunds, 'insufficient_funds', '9995'],
      [TEST_CARDS.expiredCard, 'expired_card', '0069'],
      [TEST_CARDS.incorrectCvc, 'incorrect_cvc', '0127'],
    ];
    for (const [number, code, last4] of cases) {
      const intent = await h.createIntent(m);
      const res = await h.pay(intent.id, secretOf(intent), number);
      assert.equal(res.statusCode, 201, res.body);
      const a = res.json().data.attributes;
      assert.equal(a.status, 'failed');
      assert.equal(a.failureCode, code);
      assert.ok(a.failureMessage.length > 0);
      assert.equal(a.last4, last4);
      const after = await read(intent.id);
      assert.equal(after.attributes.status, 'open');
      assert.equal(after.relationships.cardPayment.data, null);
      assert.ok(after.attributes.payUrl);
    }
  });

  test('intent processing -> declined after PAYMENTS_MAX_ATTEMPTS failures; then closed', async () => {
    const intent = await h.createIntent(m);
    for (let i = 1; i <= 3; i++) {
      const res = await h.pay(intent.id, secretOf(intent), TEST_CARDS.genericDecline);
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().included[0].attributes.status, i < 3 ? 'open' : 'declined');
    }
    const after = await read(intent.id);
    assert.equal(after.attributes.status, 'declined');
    assert.equal(after.attributes.payUrl, null);
    assertError(await h.pay(intent.id, secretOf(intent), TEST_CARDS.success), 409, 'invalid_state');
    assertError(await h.api(m.key, 'POST', `/v1/payment-intents/${intent.id}/cancel`), 409, 'invalid_state');
  });

  test('pending card: intent processing (payUrl kept) until the settle job completes it', async () => {
    const intent = await h.createIntent(m);
    const res = await h.pay(intent.id, secretOf(intent), TEST_CARDS.pendingThenSuccess);
    assert.equal(res.json().data.attributes.status, 'processing');
    const mid = await read(intent.id);
    assert.equal(mid.attributes.status, 'processing');
    assert.ok(mid.attributes.payUrl);
    assert.ok(mid.attributes.clientSecret);
    assert.equal(mid.relationships.cardPayment.data, null);
    // processing: no cancel, no line items, no second attempt.
    assertError(await h.api(m.key, 'POST', `/v1/payment-intents/${intent.id}/cancel`), 409, 'invalid_state');
    assertError(
      await h.api(m.key, 'PUT', `/v1/payment-intents/${intent.id}/line-items`, {
        data: [{ description: 'x', quantity: 1, unitAmount: 1 }],
      }),
      409,
      'invalid_state',
    );
    assertError(await h.pay(intent.id, secretOf(intent), TEST_CARDS.success), 409, 'invalid_state');
    await settleJobs();
    const done = await read(intent.id);
    assert.equal(done.attributes.status, 'completed');
    assert.deepEqual(done.relationships.cardPayment.data, { type: 'cardPayment', id: res.json().data.id });
    const cp = await h.api(m.key, 'GET', `/v1/card-payments/${res.json().data.id}`);
    assert.equal(cp.json().data.attributes.status, 'succeeded');
  });

  test('pending card declined later: processing -> open; and after expiresAt: processing -> expired', async () => {
    const intent = await h.createIntent(m);
    await h.pay(intent.id, secretOf(intent), TEST_CARDS.pendingThenDecline);
    await settleJobs();
    const back = await read(intent.id);
    assert.equal(back.attributes.status, 'open');
    const cpId = (
      await h.platform.booted.database.pool.query(
        'select id, status, failure_code from payments.card_payments where payment_intent_id = $1',
        [intent.id],
      )
    ).rows[0];
    assert.equal(cpId.status, 'failed');
    assert.equal(cpId.failure_code, 'card_declined');

    const late = await h.createIntent(m, { expiresAt: new Date(clock.nowMs() + 10 * MINUTE).toISOString() });
    await h.pay(late.id, secretOf(late), TEST_CARDS.pendingThenDecline);
    clock.advance(11 * MINUTE);
    // A processing intent is not expired by the sweep: the attempt started in time.
    await expireJob();
    assert.equal((await read(late.id)).attributes.status, 'processing');
    await settleJobs();
    const expired = await read(late.id);
    assert.equal(expired.attributes.status, 'expired');
    assert.equal(expired.attributes.payUrl, null);
  });

  test('card checks: Luhn, expiry against the clock, CVC length; wrong client secret is a 404', async () => {
    const intent = await h.createIntent(m);
    const pay = (card: Record<string, unknown>, secret = secretOf(intent)) =>
      h.api(undefined, 'POST', `/v1/payment-intents/${intent.id}/card-payments`, {
        data: { type: 'cardPayment', attributes: { clientSecret: secret, card } },
      });
    const good = { number: '4242 4242 4242 4242', ...futureExpiry(clock), cvc: '123' };
    const luhn = await pay({ ...good, number: '4242424242424241' });
    assertError(luhn, 400, 'invalid_value', '/data/attributes/card/number');
    assert.ok(!luhn.body.includes('4242424242424241'));
    const now = clock.now();
    assertError(
      await pay({
        ...good,
        expMonth: now.getUTCMonth() === 0 ? 12 : now.getUTCMonth(),
        expYear: now.getUTCMonth() === 0 ? now.getUTCFullYear() - 1 : now.getUTCFullYear(),
      }),
      400,
      'invalid_value',
      '/data/attributes/card/expYear',
    );
    // The current month is still valid.
    assertError(await pay({ ...good, cvc: '12' }), 400, 'invalid_value', '/data/attributes/card/cvc');
    assertError(
      await pay({ ...good, number: '378282246310005', cvc: '123' }),
      400,
      'invalid_value',
      '/data/attributes/card/cvc',
    );
    assertError(await pay(good, `${intent.id}_secret_wrong`), 404, 'payment_intent_not_found');
    assertError(await pay(good, 'nonsense'), 404, 'payment_intent_not_found');
    assert.equal((await read(intent.id)).attributes.status, 'open');
    const thisMonth = await pay({ ...good, expMonth: now.getUTCMonth() + 1, expYear: now.getUTCFullYear() });
    assert.equal(thisMonth.statusCode, 201, thisMonth.body);
    const amex = await h.createIntent(m);
    const amexPay = await h.api(undefined, 'POST', `/v1/payment-intents/${amex.id}/card-payments`, {
      data: {
        type: 'cardPayment',
        attributes: {
          clientSecret: secretOf(amex),
          card: { number: '378282246310005', ...futureExpiry(clock), cvc: '1234' },
        },
      },
    });
    assert.equal(amexPay.json().data.attributes.brand, 'american-express');
    assert.equal(amexPay.json().data.attributes.last4, '0005');
  });

  test('expiry: on read, and by the cron job; no attempt after expiresAt; the open -> expired edge', async () => {
    const a = await h.createIntent(m, { expiresAt: new Date(clock.nowMs() + 10 * MINUTE).toISOString() });
    const b = await h.createIntent(m, { expiresAt: new Date(clock.nowMs() + 10 * MINUTE).toISOString() });
    const never = await h.createIntent(m, { expiresAt: null });
    assert.equal(never.attributes.expiresAt, null);
    clock.advance(10 * MINUTE - 1);
    assert.equal((await read(a.id)).attributes.status, 'open');
    clock.advance(1);
    // on read
    const expired = await read(a.id);
    assert.equal(expired.attributes.status, 'expired');
    assert.equal(expired.attributes.payUrl, null);
    assert.equal(expired.attributes.clientSecret, null);
    // by the job (b was not read)
    const raw = await h.platform.booted.database.pool.query(
      'select status from payments.payment_intents where id = $1',
      [b.id],
    );
    assert.equal(raw.rows[0].status, 'open');
    await expireJob();
    const raw2 = await h.platform.booted.database.pool.query(
      'select status from payments.payment_intents where id = $1',
      [b.id],
    );
    assert.equal(raw2.rows[0].status, 'expired');
    assertError(await h.pay(b.id, secretOf(b), TEST_CARDS.success), 409, 'invalid_state');
    assertError(await h.api(m.key, 'POST', `/v1/payment-intents/${b.id}/cancel`), 409, 'invalid_state');
    clock.advance(HOUR * 24 * 10);
    assert.equal((await read(never.id)).attributes.status, 'open');
    // The default lifetime is 24 h.
    const d = await h.createIntent(m);
    clock.advance(24 * HOUR);
    assert.equal((await read(d.id)).attributes.status, 'expired');
  });

  test('no attempt after expiresAt before a read or the job expired the intent: link and voice are 409, nothing recorded', async () => {
    const byLink = await h.createIntent(m, { expiresAt: new Date(clock.nowMs() + MINUTE).toISOString() });
    const byVoice = await h.createIntent(m, { expiresAt: new Date(clock.nowMs() + MINUTE).toISOString() });
    const session = await h.startVoiceSession(m, byVoice.id);
    clock.advance(MINUTE + 1000);
    // Nothing has expired them yet: no read, no job.
    assert.equal(await h.rawStatus('payment_intents', byLink.id), 'open');
    assert.equal(await h.rawStatus('payment_intents', byVoice.id), 'open');
    assertError(await h.pay(byLink.id, secretOf(byLink), TEST_CARDS.success), 409, 'invalid_state');
    assertError(await h.keyCard(m, session, TEST_CARDS.success), 409, 'invalid_state');
    assert.equal(await h.attemptCount(byLink.id), 0);
    assert.equal(await h.attemptCount(byVoice.id), 0);
    for (const intent of [byLink, byVoice]) {
      const after = await read(intent.id);
      assert.equal(after.attributes.status, 'expired');
      assert.equal(after.relationships.cardPayment.data, null);
      assert.equal(after.attributes.payUrl, null);
    }
    const ended = (await h.api(m.key, 'GET', `/v1/voice-sessions/${session}`)).json().data;
    assert.deepEqual([ended.attributes.status, ended.attributes.endedReason], ['ended', 'intent_expired']);
  });

  test('voice: session on an open intent; decline keeps it active; keyed success completes it (channel voice)', async () => {
    const intent = await h.createIntent(m);
    const s = await h.api(m.key, 'POST', `/v1/payment-intents/${intent.id}/voice-sessions`);
    assert.equal(s.statusCode, 201, s.body);
    const session = s.json().data;
    assert.match(session.id, /^vos_[0-9a-f]{32}$/);
    assert.equal(session.attributes.status, 'active');
    assert.deepEqual((await read(intent.id)).relationships.voiceSession.data, {
      type: 'voiceSession',
      id: session.id,
    });
    const key = (number: string) =>
      h.api(m.key, 'POST', `/v1/voice-sessions/${session.id}/simulation/keyed-card`, {
        data: { type: 'cardPayment', attributes: { card: { number, ...futureExpiry(clock), cvc: '123' } } },
      });
    // active --paymentFailed--> active
    const declined = await key(TEST_CARDS.insufficientFunds);
    assert.equal(declined.statusCode, 201, declined.body);
    assert.equal(declined.json().data.attributes.channel, 'voice');
    assert.equal(declined.json().data.attributes.status, 'failed');
    assert.equal(
      (await h.api(m.key, 'GET', `/v1/voice-sessions/${session.id}`)).json().data.attributes.status,
      'active',
    );
    // active --paymentSucceeded--> completed
    const ok = await key(TEST_CARDS.success);
    assert.equal(ok.json().data.attributes.status, 'succeeded');
    assert.equal(ok.json().data.attributes.channel, 'voice');
    assert.deepEqual(ok.json().data.relationships.voiceSession.data, {
      type: 'voiceSession',
      id: session.id,
    });
    const done = (await h.api(m.key, 'GET', `/v1/voice-sessions/${session.id}`)).json().data;
    assert.equal(done.attributes.status, 'completed');
    assert.deepEqual(done.relationships.cardPayment.data, { type: 'cardPayment', id: ok.json().data.id });
    const paid = await read(intent.id);
    assert.equal(paid.attributes.status, 'completed');
    assert.deepEqual(paid.relationships.cardPayment.data, { type: 'cardPayment', id: ok.json().data.id });
    // completed is terminal
    assertError(await key(TEST_CARDS.success), 409, 'invalid_state');
    assertError(
      await h.api(m.key, 'POST', `/v1/voice-sessions/${session.id}/simulation/hang-up`),
      409,
      'invalid_state',
    );
    // no session on a closed intent
    assertError(
      await h.api(m.key, 'POST', `/v1/payment-intents/${intent.id}/voice-sessions`),
      409,
      'invalid_state',
    );
  });

  test('voice: hang-up, superseded by a newer session, and ended when the intent is canceled', async () => {
    const intent = await h.createIntent(m);
    const first = (await h.api(m.key, 'POST', `/v1/payment-intents/${intent.id}/voice-sessions`)).json().data;
    const hung = await h.api(m.key, 'POST', `/v1/voice-sessions/${first.id}/simulation/hang-up`);
    assert.equal(hung.json().data.attributes.status, 'ended');
    assert.equal(hung.json().data.attributes.endedReason, 'hung_up');
    const second = (await h.api(m.key, 'POST', `/v1/payment-intents/${intent.id}/voice-sessions`)).json()
      .data;
    const third = (await h.api(m.key, 'POST', `/v1/payment-intents/${intent.id}/voice-sessions`)).json().data;
    const s2 = (await h.api(m.key, 'GET', `/v1/voice-sessions/${second.id}`)).json().data;
    assert.equal(s2.attributes.status, 'ended');
    assert.equal(s2.attributes.endedReason, 'superseded');
    assert.deepEqual((await read(intent.id)).relationships.voiceSession.data, {
      type: 'voiceSession',
      id: third.id,
    });
    await h.api(m.key, 'POST', `/v1/payment-intents/${intent.id}/cancel`);
    const s3 = (await h.api(m.key, 'GET', `/v1/voice-sessions/${third.id}`)).json().data;
    assert.equal(s3.attributes.status, 'ended');
    assert.equal(s3.attributes.endedReason, 'intent_canceled');
    // Another merchant sees no session.
    const other = await h.merchant('Other voice');
    assertError(
      await h.api(other.key, 'GET', `/v1/voice-sessions/${third.id}`),
      404,
      'voice_session_not_found',
    );
  });

  test('Idempotency-Key: replay with X-Idempotency-Replayed, 409 on a changed body, kept 48 hours', async () => {
    const headers = { 'idempotency-key': 'order-1001-create' };
    const first = await h.createIntent(m, {}, headers);
    const again = await h.api(
      m.key,
      'POST',
      '/v1/payment-intents',
      {
        data: {
          type: 'paymentIntent',
          attributes: {
            description: 'Order 1001',
            taxMode: 'exclusive',
            lineItems: (await import('./support.ts')).THREE_LINES,
          },
          relationships: { customerParty: { data: { type: 'party', id: m.customerId } } },
        },
      },
      headers,
    );
    assert.equal(again.statusCode, 201, again.body);
    assert.equal(again.headers['x-idempotency-replayed'], 'true');
    assert.equal(again.json().data.id, first.id);
    assert.equal(again.json().data.attributes.clientSecret, first.attributes.clientSecret);
    // The stored record holds no client secret in clear.
    const stored = await h.platform.booted.database.pool.query(
      "select response::text as r from platform.idempotency_keys where key = 'order-1001-create'",
    );
    assert.ok(!stored.rows[0].r.includes(first.attributes.clientSecret!));
    assert.ok(stored.rows[0].r.includes(first.id));
    // Changed body: conflict, nothing created.
    const changed = await h.api(
      m.key,
      'POST',
      '/v1/payment-intents',
      {
        data: {
          type: 'paymentIntent',
          attributes: {
            description: 'Order 1002',
            taxMode: 'exclusive',
            lineItems: [{ description: 'x', quantity: 1, unitAmount: 5 }],
          },
          relationships: { customerParty: { data: { type: 'party', id: m.customerId } } },
        },
      },
      headers,
    );
    assertError(changed, 409, 'idempotency_key_reused');
    // Another merchant's same key is independent.
    const other = await h.merchant('Idem other');
    const theirs = await h.createIntent(other, {}, headers);
    assert.notEqual(theirs.id, first.id);
    // 47 h later still a replay; after 48 h the key is free again.
    clock.advance(47 * HOUR);
    const replay47 = await h.api(
      m.key,
      'POST',
      '/v1/payment-intents',
      JSON.parse(
        JSON.stringify({
          data: {
            type: 'paymentIntent',
            attributes: {
              description: 'Order 1001',
              taxMode: 'exclusive',
              lineItems: (await import('./support.ts')).THREE_LINES,
            },
            relationships: { customerParty: { data: { type: 'party', id: m.customerId } } },
          },
        }),
      ),
      headers,
    );
    assert.equal(replay47.headers['x-idempotency-replayed'], 'true');
    assert.equal(replay47.json().data.id, first.id);
    clock.advance(HOUR);
    const fresh = await h.createIntent(m, {}, headers);
    assert.notEqual(fresh.id, first.id);
    // Bad keys are refused.
    assertError(
      await h.api(m.key, 'POST', `/v1/payment-intents/${fresh.id}/cancel`, undefined, {
        'idempotency-key': 'x'.repeat(256),
      }),
      400,
      'invalid_value',
    );
  });

  test('Idempotency-Key on the payment, cancel and voice routes: one attempt, replayed answers', async () => {
    const intent = await h.createIntent(m);
    const key = { 'idempotency-key': 'pay-once' };
    const first = await h.pay(intent.id, secretOf(intent), TEST_CARDS.genericDecline, key);
    const second = await h.pay(intent.id, secretOf(intent), TEST_CARDS.genericDecline, key);
    assert.equal(second.headers['x-idempotency-replayed'], 'true');
    assert.equal(second.json().data.id, first.json().data.id);
    assert.equal(await h.attemptCount(intent.id), 1);
    assertError(
      await h.pay(intent.id, secretOf(intent), TEST_CARDS.success, key),
      409,
      'idempotency_key_reused',
    );
    const c1 = await h.api(m.key, 'POST', `/v1/payment-intents/${intent.id}/cancel`, undefined, {
      'idempotency-key': 'cancel-1',
    });
    const c2 = await h.api(m.key, 'POST', `/v1/payment-intents/${intent.id}/cancel`, undefined, {
      'idempotency-key': 'cancel-1',
    });
    assert.equal(c1.statusCode, 200);
    assert.equal(c2.statusCode, 200, c2.body);
    assert.equal(c2.headers['x-idempotency-replayed'], 'true');
    const other = await h.createIntent(m);
    const v1 = await h.api(m.key, 'POST', `/v1/payment-intents/${other.id}/voice-sessions`, undefined, {
      'idempotency-key': 'v-1',
    });
    const v2 = await h.api(m.key, 'POST', `/v1/payment-intents/${other.id}/voice-sessions`, undefined, {
      'idempotency-key': 'v-1',
    });
    assert.equal(v2.json().data.id, v1.json().data.id);
    assert.equal(v2.headers['x-idempotency-replayed'], 'true');
  });
  test('Idempotency-Key on agent-key issue: the same key is replayed, sealed at rest', async () => {
    const body = { data: { type: 'credential', attributes: { label: 'idem agent' } } };
    const a = await h.api(m.key, 'POST', '/v1/agent-keys', body, { 'idempotency-key': 'agent-1' });
    const b = await h.api(m.key, 'POST', '/v1/agent-keys', body, { 'idempotency-key': 'agent-1' });
    assert.equal(a.statusCode, 201, a.body);
    assert.equal(b.headers['x-idempotency-replayed'], 'true');
    assert.equal(b.json().data.attributes.key, a.json().data.attributes.key);
    const stored = await h.platform.booted.database.pool.query(
      "select response::text as r from platform.idempotency_keys where key = 'agent-1'",
    );
    assert.ok(!stored.rows[0].r.includes(a.json().data.attributes.key));
    const keys = await h.platform.booted.database.pool.query(
      "select count(*)::int as n from payments.credentials where label = 'idem agent'",
    );
    assert.equal(keys.rows[0].n, 1);
  });

  test('Idempotency-Key on party creation, keyed card, hang-up and agent-key revocation: replay, 409 when changed', async () => {
    const replayed = (res: { headers: Record<string, unknown> }) =>
      assert.equal(res.headers['x-idempotency-replayed'], 'true');
    // POST /v1/parties
    const party = (name: string) =>
      h.api(
        m.key,
        'POST',
        '/v1/parties',
        { data: { type: 'party', attributes: { name } } },
        {
          'idempotency-key': 'party-1',
        },
      );
    const p1 = await party('Idem customer');
    const p2 = await party('Idem customer');
    assert.equal(p1.statusCode, 201, p1.body);
    assert.equal(p2.statusCode, 201, p2.body);
    replayed(p2);
    assert.equal(p2.json().data.id, p1.json().data.id);
    assertError(await party('Another customer'), 409, 'idempotency_key_reused');
    const named = await pool().query(
      "select count(*)::int as n from payments.parties where name in ('Idem customer', 'Another customer')",
    );
    assert.equal(named.rows[0].n, 1);

    // POST /v1/voice-sessions/{id}/simulation/keyed-card
    const intent = await h.createIntent(m);
    const s1 = await h.startVoiceSession(m, intent.id);
    const keyHeader = { 'idempotency-key': 'keyed-1' };
    const k1 = await h.keyCard(m, s1, TEST_CARDS.genericDecline, keyHeader);
    const k2 = await h.keyCard(m, s1, TEST_CARDS.genericDecline, keyHeader);
    assert.equal(k1.statusCode, 201, k1.body);
    assert.equal(k2.statusCode, 201, k2.body);
    replayed(k2);
    assert.equal(k2.json().data.id, k1.json().data.id);
    assertError(
      await h.keyCard(m, s1, TEST_CARDS.insufficientFunds, keyHeader),
      409,
      'idempotency_key_reused',
    );
    assert.equal(await h.attemptCount(intent.id), 1);

    // POST /v1/voice-sessions/{id}/simulation/hang-up (no body: the session id in the path is the request)
    const hang = (sessionId: string) =>
      h.api(m.key, 'POST', `/v1/voice-sessions/${sessionId}/simulation/hang-up`, undefined, {
        'idempotency-key': 'hang-1',
      });
    const h1 = await hang(s1);
    const h2 = await hang(s1);
    assert.equal(h1.statusCode, 200, h1.body);
    assert.equal(h2.statusCode, 200, h2.body); // without the key: 409, an ended session cannot end again
    replayed(h2);
    assert.deepEqual(h2.json(), h1.json());
    const s2 = await h.startVoiceSession(m, intent.id);
    assertError(await hang(s2), 409, 'idempotency_key_reused');
    assert.equal(await h.rawStatus('voice_sessions', s2), 'active');

    // POST /v1/agent-keys/{id}/revoke
    const issue = async () => {
      const res = await h.api(m.key, 'POST', '/v1/agent-keys', {
        data: { type: 'credential', attributes: { label: 'revoke idem' } },
      });
      assert.equal(res.statusCode, 201, res.body);
      return { id: res.json().data.id as string, key: res.json().data.attributes.key as string };
    };
    const a = await issue();
    const b = await issue();
    const revoke = (id: string) =>
      h.api(m.key, 'POST', `/v1/agent-keys/${id}/revoke`, undefined, { 'idempotency-key': 'revoke-1' });
    const r1 = await revoke(a.id);
    const r2 = await revoke(a.id);
    assert.equal(r1.statusCode, 204, r1.body);
    assert.equal(r1.headers['x-idempotency-replayed'], undefined);
    assert.equal(r2.statusCode, 204, r2.body);
    replayed(r2);
    assertError(await h.api(a.key, 'GET', '/v1/parties/me'), 401, 'unauthenticated');
    assertError(await revoke(b.id), 409, 'idempotency_key_reused');
    assert.equal((await h.api(b.key, 'GET', '/v1/parties/me')).statusCode, 200);
  });

  test('card routes: the same Idempotency-Key with another CVC or another card with the same last4 is a 409', async () => {
    // 4000 0000 0018 0002 is another Visa ending 0002 with the same expiry: only the keyed HMAC of number and CVC
    // in the fingerprint tells it from the decline card 4000 0000 0000 0002.
    const sameLast4 = '4000000000180002';
    const intent = await h.createIntent(m);
    const payWith = (number: string, cvc: string) =>
      h.api(
        undefined,
        'POST',
        `/v1/payment-intents/${intent.id}/card-payments`,
        {
          data: {
            type: 'cardPayment',
            attributes: { clientSecret: secretOf(intent), card: { number, ...futureExpiry(clock), cvc } },
          },
        },
        { 'idempotency-key': 'card-fp-link' },
      );
    const first = await payWith(TEST_CARDS.genericDecline, '123');
    assert.equal(first.statusCode, 201, first.body);
    // The same card, keyed with spaces: the same request.
    const again = await payWith('4000 0000 0000 0002', '123');
    assert.equal(again.headers['x-idempotency-replayed'], 'true');
    assert.equal(again.json().data.id, first.json().data.id);
    assertError(await payWith(TEST_CARDS.genericDecline, '124'), 409, 'idempotency_key_reused');
    assertError(await payWith(sameLast4, '123'), 409, 'idempotency_key_reused');
    assert.equal(await h.attemptCount(intent.id), 1);

    const voiced = await h.createIntent(m);
    const s = await h.startVoiceSession(m, voiced.id);
    const header = { 'idempotency-key': 'card-fp-voice' };
    const k1 = await h.keyCard(m, s, TEST_CARDS.genericDecline, header, '123');
    assert.equal(k1.statusCode, 201, k1.body);
    const k2 = await h.keyCard(m, s, TEST_CARDS.genericDecline, header, '123');
    assert.equal(k2.headers['x-idempotency-replayed'], 'true');
    assertError(
      await h.keyCard(m, s, TEST_CARDS.genericDecline, header, '999'),
      409,
      'idempotency_key_reused',
    );
    assertError(await h.keyCard(m, s, sameLast4, header, '123'), 409, 'idempotency_key_reused');
    assert.equal(await h.attemptCount(voiced.id), 1);

    // No record holds a card number or a CVC.
    const records = await pool().query(
      "select string_agg(t::text, '') as r from platform.idempotency_keys t where key like 'card-fp-%'",
    );
    assert.ok(!records.rows[0].r.includes(TEST_CARDS.genericDecline));
    assert.ok(!records.rows[0].r.includes(sameLast4));
  });

  test('the card number is never stored: no table holds it', async () => {
    const { rows } = await h.platform.booted.database.pool.query(
      `select (select string_agg(t::text, '') from payments.card_payments t) as cp,
              (select string_agg(t::text, '') from payments.payment_intents t) as pi,
              (select string_agg(t::text, '') from platform.idempotency_keys t) as idem`,
    );
    const all = JSON.stringify(rows[0]);
    for (const n of Object.values(TEST_CARDS)) assert.ok(!all.includes(n), `found ${n}`);
    assert.ok(!all.includes('378282246310005'));
    assert.ok(all.includes('4242'));
  });
});
