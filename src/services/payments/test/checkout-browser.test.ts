/**
 * The hosted checkout page in a real browser: playwright-core driving Debian's Chromium (`/usr/bin/chromium`,
 * installed by .ci/run when missing). Nothing is skipped: without Chromium these tests fail.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { ManualClock } from '../../../platform/clock.ts';
import { TEST_CARDS } from '../card-network.ts';
import { type PaymentsHarness, startPayments, type TestMerchant } from './support.ts';

const START = Date.UTC(2026, 5, 1, 12, 0, 0);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

describe('checkout page in Chromium', () => {
  const clock = new ManualClock(START);
  let h: PaymentsHarness;
  let m: TestMerchant;
  let browser: Browser;

  before(async () => {
    h = await startPayments(clock, { listen: true });
    m = await h.merchant('Browser Shop');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  });
  after(async () => {
    await browser?.close();
    await h.close();
  });

  /** Opens a page and records CSP violations and script errors. */
  const open = async (url: string): Promise<{ page: Page; problems: string[] }> => {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(msg.text());
    });
    page.on('pageerror', (err) => problems.push(err.message));
    const response = await page.goto(url);
    assert.equal(response?.status(), 200);
    assert.equal(response?.headers()['cache-control'], 'no-store');
    assert.match(response?.headers()['content-security-policy'] ?? '', /script-src 'self'/);
    return { page, problems };
  };

  const fillCard = async (page: Page, number: string) => {
    await page.fill('#card-number', number);
    await page.fill(
      '#card-expiry',
      `12/${String((clock.now().getUTCFullYear() + 3) % 100).padStart(2, '0')}`,
    );
    await page.fill('#card-cvc', '123');
    await page.click('#pay-button');
  };

  test('pays with the success card: the page shows success and the intent is completed with its cardPayment', async () => {
    const intent = await h.createIntent(m);
    const { page, problems } = await open(intent.attributes.payUrl!);
    assert.equal(await page.textContent('#merchant'), 'Browser Shop');
    assert.equal(await page.textContent('#description'), 'Order 1001');
    assert.equal(await page.textContent('#tax'), '$2.22');
    assert.equal(await page.textContent('#total-row'), '$35.21');
    assert.equal(await page.locator('#line-items tbody tr').count(), 3);
    await fillCard(page, TEST_CARDS.success);
    await page.waitForSelector('#success', { timeout: 10_000 });
    assert.match((await page.textContent('#result')) ?? '', /visa ending in 4242/);
    assert.equal(await page.isVisible('#pay-form'), false);
    const res = await h.api(m.key, 'GET', `/v1/payment-intents/${intent.id}`);
    const d = res.json().data;
    assert.equal(d.attributes.status, 'completed');
    assert.match(d.relationships.cardPayment.data.id, /^cpy_[0-9a-f]{32}$/);
    const cp = await h.api(m.key, 'GET', `/v1/card-payments/${d.relationships.cardPayment.data.id}`);
    assert.equal(cp.json().data.attributes.channel, 'link');
    assert.equal(cp.json().data.attributes.last4, '4242');
    // Reopening the link now shows the closed state.
    await page.reload();
    await page.waitForSelector('#closed');
    assert.match((await page.textContent('#closed-reason')) ?? '', /completed/);
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('a declined card shows the reason and lets the payer try another card', async () => {
    const intent = await h.createIntent(m);
    const { page, problems } = await open(intent.attributes.payUrl!);
    await fillCard(page, TEST_CARDS.insufficientFunds);
    await page.waitForSelector('#declined', { timeout: 10_000 });
    assert.equal(await page.textContent('#decline-reason'), 'Your card has insufficient funds.');
    assert.equal(await page.isVisible('#pay-form'), true);
    const mid = await h.api(m.key, 'GET', `/v1/payment-intents/${intent.id}`);
    assert.equal(mid.json().data.attributes.status, 'open');
    assert.equal(mid.json().data.relationships.cardPayment.data, null);
    await fillCard(page, TEST_CARDS.success);
    await page.waitForSelector('#success', { timeout: 10_000 });
    const done = await h.api(m.key, 'GET', `/v1/payment-intents/${intent.id}`);
    assert.equal(done.json().data.attributes.status, 'completed');
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('the last allowed decline (PAYMENTS_MAX_ATTEMPTS, 3) hides the form; reopening shows "closed"', async () => {
    const intent = await h.createIntent(m);
    const { page, problems } = await open(intent.attributes.payUrl!);
    const declines: [string, string][] = [
      [TEST_CARDS.genericDecline, 'Your card was declined.'],
      [TEST_CARDS.expiredCard, 'Your card has expired.'],
    ];
    for (const [number, reason] of declines) {
      await fillCard(page, number);
      await page.locator('#decline-reason', { hasText: reason }).waitFor({ timeout: 10_000 });
      assert.equal(await page.isVisible('#pay-form'), true, `still payable after "${reason}"`);
      assert.equal(await page.isVisible('#closed'), false);
    }
    await fillCard(page, TEST_CARDS.insufficientFunds);
    await page.waitForSelector('#closed', { timeout: 10_000 });
    assert.equal(await page.textContent('#decline-reason'), 'Your card has insufficient funds.');
    assert.equal(await page.isVisible('#pay-form'), false);
    const res = await h.api(m.key, 'GET', `/v1/payment-intents/${intent.id}`);
    assert.equal(res.json().data.attributes.status, 'declined');
    await page.reload();
    await page.waitForSelector('#closed-reason');
    assert.equal(await page.textContent('#closed-reason'), 'This payment was declined too many times.');
    assert.equal(await page.isVisible('#pay-form'), false);
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('an expired intent’s page shows "closed" and no card form', async () => {
    const intent = await h.createIntent(m, {
      expiresAt: new Date(clock.nowMs() + 10 * 60_000).toISOString(),
    });
    clock.advance(10 * 60_000);
    const { page, problems } = await open(intent.attributes.payUrl!);
    await page.waitForSelector('#closed');
    assert.match((await page.textContent('#closed-reason')) ?? '', /expired/);
    assert.equal(await page.isVisible('#pay-form'), false);
    const res = await h.api(m.key, 'GET', `/v1/payment-intents/${intent.id}`);
    assert.equal(res.json().data.attributes.status, 'expired');
    assert.deepEqual(problems, []);
    await page.close();
  });
});
