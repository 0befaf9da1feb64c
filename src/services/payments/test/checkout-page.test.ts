import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../../platform/clock.ts';
import { TEST_CARDS } from '../card-network.ts';
import { formatUsd } from '../checkout-page.ts';
import { type PaymentsHarness, startPayments, type TestMerchant } from './support.ts';

describe('checkout page (HTTP level): headers, escaping, states', () => {
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 12));
  let h: PaymentsHarness;
  let m: TestMerchant;
  before(async () => {
    h = await startPayments(clock);
    m = await h.merchant('<b>Evil & Co</b>');
  });
  after(async () => h.close());

  test('strict security headers; merchant text escaped; no client secret in the HTML', async () => {
    const intent = await h.createIntent(m, { description: '<script>alert(1)</script>' });
    const res = await h.api(undefined, 'GET', `/checkout/${intent.id}`);
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.equal(res.headers['cache-control'], 'no-store');
    const csp = String(res.headers['content-security-policy']);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.equal(res.headers['x-frame-options'], 'DENY');
    assert.equal(res.headers['referrer-policy'], 'no-referrer');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.ok(!res.body.includes('<script>alert(1)</script>'));
    assert.ok(res.body.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
    assert.ok(res.body.includes('&lt;b&gt;Evil &amp; Co&lt;/b&gt;'));
    assert.ok(!res.body.includes(intent.attributes.clientSecret!));
    assert.ok(!/<script>[^<]/.test(res.body), 'no inline script');
    assert.ok(!/ style=/.test(res.body), 'no inline style');
    // Exclusive: the notebook line (2 × $12.50) shows $25.00 before tax; subtotal $32.99 + tax $2.22 = $35.21.
    assert.match(res.body, /<tr data-line="0">[\s\S]*?\$25\.00<\/td>\s*<\/tr>/);
    assert.match(res.body, /id="subtotal">\$32\.99</);
    assert.match(res.body, /id="tax">\$2\.22</);
    assert.match(res.body, /id="total-row">\$35\.21</);
    const inclusive = await h.createIntent(m, { taxMode: 'inclusive' });
    const inc = await h.api(undefined, 'GET', `/checkout/${inclusive.id}`);
    // Inclusive: the notebook line shows $25.00 with tax in it; tax 2500 × 0.08875 / 1.08875 = 203.79 -> $2.04.
    assert.match(inc.body, /<tr data-line="0">[\s\S]*?\$25\.00<\/td>\s*<\/tr>/);
    assert.match(inc.body, /Tax \(included\)/);
    assert.match(inc.body, /id="tax">\$2\.04</);
    assert.match(inc.body, /id="total-row">\$32\.99</);
    const js = await h.api(undefined, 'GET', '/checkout/assets/checkout.js');
    assert.match(String(js.headers['content-type']), /^text\/javascript/);
    assert.ok(js.body.includes('card-payments'));
  });

  test('processing and closed states; unknown intents get a 404 page', async () => {
    const intent = await h.createIntent(m);
    await h.pay(intent.id, intent.attributes.clientSecret!, TEST_CARDS.pendingThenSuccess);
    const processing = await h.api(undefined, 'GET', `/checkout/${intent.id}`);
    assert.match(processing.body, /id="processing"/);
    await h.platform.runDueJobs();
    const closed = await h.api(undefined, 'GET', `/checkout/${intent.id}`);
    assert.match(closed.body, /id="closed"/);
    assert.match(closed.body, /completed/);
    const canceled = await h.createIntent(m);
    await h.api(m.key, 'POST', `/v1/payment-intents/${canceled.id}/cancel`);
    assert.match(
      (await h.api(undefined, 'GET', `/checkout/${canceled.id}`)).body,
      /canceled by the merchant/,
    );
    const missing = await h.api(undefined, 'GET', `/checkout/pmi_${'0'.repeat(32)}`);
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.headers['cache-control'], 'no-store');
    assert.match(missing.body, /Payment not found/);
    assert.equal((await h.api(undefined, 'GET', '/checkout/garbage')).statusCode, 404);
  });

  test('formatUsd', () => {
    assert.equal(formatUsd(0), '$0.00');
    assert.equal(formatUsd(5), '$0.05');
    assert.equal(formatUsd(3521), '$35.21');
    assert.equal(formatUsd(123456789), '$1,234,567.89');
  });
});

describe('checkout page (HTTP level): a declined intent (PAYMENTS_MAX_ATTEMPTS=1)', () => {
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 12));
  let h: PaymentsHarness;
  let m: TestMerchant;
  before(async () => {
    h = await startPayments(clock, { env: { PAYMENTS_MAX_ATTEMPTS: '1' } });
    m = await h.merchant('One try');
  });
  after(async () => h.close());

  test('one decline declines the intent: its page shows "closed" with the reason and no card form', async () => {
    const intent = await h.createIntent(m);
    const before = await h.api(undefined, 'GET', `/checkout/${intent.id}`);
    assert.match(before.body, /<form id="pay-form" autocomplete="on" novalidate>/);
    assert.match(before.body, /<section id="result" role="status" aria-live="polite" hidden><\/section>/);
    const res = await h.pay(intent.id, intent.attributes.clientSecret!, TEST_CARDS.genericDecline);
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().data.attributes.status, 'failed');
    assert.equal(res.json().included[0].attributes.status, 'declined');
    const page = await h.api(undefined, 'GET', `/checkout/${intent.id}`);
    assert.equal(page.statusCode, 200);
    assert.equal(page.headers['cache-control'], 'no-store');
    assert.match(page.body, /data-status="declined"/);
    assert.match(
      page.body,
      /<section id="result" role="status" aria-live="polite"><h2 id="closed">Closed<\/h2><p id="closed-reason">This payment was declined too many times\.<\/p><\/section>/,
    );
    assert.match(page.body, /<form id="pay-form" autocomplete="on" novalidate hidden>/);
    assert.ok(!page.body.includes(intent.attributes.clientSecret!));
  });
});
