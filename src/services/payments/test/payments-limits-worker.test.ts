import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { waitUntil } from '../../../../test/support/wait.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { TEST_CARDS } from '../card-network.ts';
import { expireIntentsTask } from '../payments-jobs.ts';
import { assertError, type PaymentsHarness, startPayments, type TestMerchant } from './support.ts';

describe('payments: rate limits (per credential, per payer address) and concurrent attempts', () => {
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 12));
  let h: PaymentsHarness;
  let m: TestMerchant;
  before(async () => {
    h = await startPayments(clock, { env: { PAYMENTS_KEY_RATE_LIMIT: '5', PAYMENTS_PAYER_RATE_LIMIT: '3' } });
    m = await h.merchant('Limited');
  });
  after(async () => h.close());

  test('a credential gets PAYMENTS_KEY_RATE_LIMIT requests per minute, then 429 rate_limited with Retry-After', async () => {
    // merchant() used no merchant route; this key starts with a full window.
    for (let i = 0; i < 5; i++) assert.equal((await h.api(m.key, 'GET', '/v1/parties/me')).statusCode, 200);
    const limited = await h.api(m.key, 'GET', '/v1/parties/me');
    assertError(limited, 429, 'rate_limited');
    assert.ok(Number(limited.headers['retry-after']) >= 1);
    // Another credential of the same party has its own budget.
    const other = await h.ops('POST', '/_ops/keys', { partyId: m.partyId, kind: 'agent' });
    assert.equal((await h.api(other.json().key, 'GET', '/v1/parties/me')).statusCode, 200);
    clock.advance(60_000);
    assert.equal((await h.api(m.key, 'GET', '/v1/parties/me')).statusCode, 200);
  });

  test('the payer route allows PAYMENTS_PAYER_RATE_LIMIT attempts per minute per client address', async () => {
    clock.advance(60_000);
    const intent = await h.createIntent(m);
    const secret = intent.attributes.clientSecret!;
    for (let i = 0; i < 3; i++) {
      const res = await h.pay(intent.id, secret, '4242424242424241');
      assertError(res, 400, 'invalid_value');
    }
    assertError(await h.pay(intent.id, secret, TEST_CARDS.success), 429, 'rate_limited');
    clock.advance(60_000);
    assert.equal((await h.pay(intent.id, secret, TEST_CARDS.success)).statusCode, 201);
  });

  test('two attempts at once on one intent: exactly one card payment, the other is 409', async () => {
    clock.advance(60_000);
    const intent = await h.createIntent(m);
    const [a, b] = await Promise.all([
      h.pay(intent.id, intent.attributes.clientSecret!, TEST_CARDS.success),
      h.pay(intent.id, intent.attributes.clientSecret!, TEST_CARDS.success),
    ]);
    assert.deepEqual([a.statusCode, b.statusCode].sort(), [201, 409]);
    assert.equal(await h.attemptCount(intent.id), 1);
  });

  test('keyed card (voice) racing a link payment or a cancel on one intent: no 500, one winner, consistent states', async () => {
    // Every path locks the intent first, then its voice sessions: before that order was fixed, the keyed card
    // (session, then intent) and the link payment / cancel (intent, then sessions) could deadlock (a 500).
    const pool = h.platform.booted.database.pool;
    const keyed = (sessionId: string) => h.keyCard(m, sessionId, TEST_CARDS.success);
    const state = async (intentId: string, sessionId: string) => {
      const { rows } = await pool.query(
        `select i.status as intent, i.card_payment_id as cp, s.status as session, s.ended_reason as reason,
                (select count(*)::int from payments.card_payments c where c.payment_intent_id = i.id) as attempts,
                (select string_agg(c.channel, ',') from payments.card_payments c where c.payment_intent_id = i.id) as channels
           from payments.payment_intents i join payments.voice_sessions s on s.id = $2 where i.id = $1`,
        [intentId, sessionId],
      );
      return rows[0];
    };
    for (let round = 0; round < 8; round++) {
      clock.advance(60_000); // fresh rate-limit windows (PAYMENTS_KEY_RATE_LIMIT 5, PAYMENTS_PAYER_RATE_LIMIT 3 here)
      const intent = await h.createIntent(m);
      const s = await h.api(m.key, 'POST', `/v1/payment-intents/${intent.id}/voice-sessions`);
      assert.equal(s.statusCode, 201, s.body);
      const sessionId = s.json().data.id as string;
      const [voice, link] = await Promise.all([
        keyed(sessionId),
        h.pay(intent.id, intent.attributes.clientSecret!, TEST_CARDS.success),
      ]);
      assert.deepEqual([voice.statusCode, link.statusCode].sort(), [201, 409], `${voice.body} ${link.body}`);
      const after = await state(intent.id, sessionId);
      assert.equal(after.intent, 'completed');
      assert.equal(after.attempts, 1);
      assert.ok(after.cp);
      if (voice.statusCode === 201) {
        assert.deepEqual([after.channels, after.session, after.reason], ['voice', 'completed', null]);
      } else {
        assert.deepEqual(
          [after.channels, after.session, after.reason],
          ['link', 'ended', 'intent_completed'],
        );
      }
    }
    for (let round = 0; round < 8; round++) {
      clock.advance(60_000); // a fresh window for the merchant key (PAYMENTS_KEY_RATE_LIMIT is 5 here)
      const intent = await h.createIntent(m);
      const s = await h.api(m.key, 'POST', `/v1/payment-intents/${intent.id}/voice-sessions`);
      const sessionId = s.json().data.id as string;
      const [voice, cancel] = await Promise.all([
        keyed(sessionId),
        h.api(m.key, 'POST', `/v1/payment-intents/${intent.id}/cancel`),
      ]);
      // One wins: the keyed card (201; the cancel finds a completed intent: 409) or the cancel (200; the keyed
      // card finds a canceled intent: 409).
      const statuses = [voice.statusCode, cancel.statusCode];
      assert.ok(
        (statuses[0] === 201 && statuses[1] === 409) || (statuses[0] === 409 && statuses[1] === 200),
        `${voice.body} ${cancel.body}`,
      );
      const after = await state(intent.id, sessionId);
      if (voice.statusCode === 201) {
        assert.deepEqual(
          [after.intent, after.attempts, after.session, after.reason],
          ['completed', 1, 'completed', null],
        );
      } else {
        assert.equal(cancel.statusCode, 200, cancel.body);
        assert.deepEqual(
          [after.intent, after.attempts, after.session, after.reason],
          ['canceled', 0, 'ended', 'intent_canceled'],
        );
      }
    }
  });
});

describe('payments: the worker settles a pending payment through the real job queue', () => {
  let h: PaymentsHarness;
  before(async () => {
    h = await startPayments(new ManualClock(Date.UTC(2026, 5, 1, 12)), { runWorker: true });
  });
  after(async () => h.close());

  test('pending card -> processing -> completed by payments:settle-card-payment', async () => {
    const m = await h.merchant('Worker');
    const intent = await h.createIntent(m);
    const res = await h.pay(intent.id, intent.attributes.clientSecret!, TEST_CARDS.pendingThenSuccess);
    assert.equal(res.json().data.attributes.status, 'processing');
    const status = await waitUntil('the settle job', async () => {
      const s = (await h.api(m.key, 'GET', `/v1/payment-intents/${intent.id}`)).json().data.attributes.status;
      return s !== 'processing' && s;
    });
    assert.equal(status, 'completed');
  });

  test('cron: payments:expire-intents every minute, declared by the service and registered by the worker', async () => {
    const service = h.platform.booted.services.get('payments')!;
    assert.deepEqual(service.module.cron, [{ task: expireIntentsTask, pattern: '* * * * *' }]);
    assert.equal(typeof h.platform.booted.tasks['payments:expire-intents'], 'function');
    // The running worker registers the schedule with Graphile Worker (just after boot: poll, bounded).
    const identifiers = await waitUntil('the schedule in known_crontabs', async () => {
      const { rows } = await h.platform.booted.database.pool.query(
        'select identifier from graphile_worker._private_known_crontabs',
      );
      const ids = rows.map((r: { identifier: string }) => r.identifier);
      return ids.includes('payments:expire-intents') && ids;
    });
    assert.ok(identifiers.includes('payments:expire-intents'), identifiers.join(', '));
  });
});
