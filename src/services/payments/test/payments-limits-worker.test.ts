import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../../platform/clock.ts';
import { TEST_CARDS } from '../card-network.ts';
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
    const other = await h.ops('POST', `/_ops/parties/${m.partyId}/keys`, { kind: 'agent' });
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
    const { rows } = await h.platform.booted.database.pool.query(
      'select count(*)::int as n from payments.card_payments where payment_intent_id = $1',
      [intent.id],
    );
    assert.equal(rows[0].n, 1);
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
    let status = 'processing';
    for (let i = 0; i < 100 && status === 'processing'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await h.api(m.key, 'GET', `/v1/payment-intents/${intent.id}`)).json().data.attributes.status;
    }
    assert.equal(status, 'completed');
  });
});
