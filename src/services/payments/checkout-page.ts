/**
 * The hosted checkout page (spec 001 A: `payUrl`), server-rendered HTML with no build step. The page shows the
 * merchant, description, line items, tax and total, and a card form; `checkout.js` (served as its own file, so the
 * Content-Security-Policy allows no inline script) reads the client secret from the URL fragment (never sent to the
 * server, so never in a log line), posts the card to `POST /v1/payment-intents/{id}/card-payments` and shows the
 * outcome: success, a decline with its reason and the form again while the intent is open, or "closed".
 */
import { escapeHtml } from '../../platform/html.ts';
import type { IntentRow } from './payments-service.ts';

/** Security headers of every checkout answer (strict CSP, no caching, no framing, no referrer). */
export const CHECKOUT_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=()',
};

/** Formats integer cents as US dollars (`$1,234.56`). */
export function formatUsd(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  const dollars = Math.floor(abs / 100).toLocaleString('en-US');
  return `${sign}$${dollars}.${String(abs % 100).padStart(2, '0')}`;
}

const CLOSED_TEXT: Record<string, string> = {
  completed: 'This payment has been completed.',
  canceled: 'This payment was canceled by the merchant.',
  expired: 'This payment link has expired.',
  declined: 'This payment was declined too many times.',
};

/**
 * Renders the page of an intent (`status` decides between the form, "processing" and "closed"). Line amounts are
 * shown before tax for `exclusive` intents (they add up to the subtotal, tax is added below) and with tax for
 * `inclusive` ones (they add up to the total, the tax line says "included").
 */
export function renderCheckoutPage(intent: IntentRow, merchantName: string): string {
  const rows = intent.lineItems
    .map(
      (line) => `<tr data-line="${line.position}">
          <td>${escapeHtml(line.description)}</td>
          <td class="num">${line.quantity}</td>
          <td class="num">${formatUsd(line.unitAmount)}</td>
          <td class="num">${formatUsd(intent.taxMode === 'exclusive' ? line.subtotalAmount : line.totalAmount)}</td>
        </tr>`,
    )
    .join('\n');
  const subtotal = intent.amount - intent.taxAmount;
  const open = intent.status === 'open';
  const processing = intent.status === 'processing';
  const closed = !open && !processing;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Pay ${escapeHtml(merchantName)}</title>
<link rel="stylesheet" href="/checkout/assets/checkout.css">
<link rel="icon" href="/checkout/assets/favicon.svg" type="image/svg+xml">
<script src="/checkout/assets/checkout.js" defer></script>
</head>
<body>
<main id="checkout" data-intent-id="${escapeHtml(intent.id)}" data-status="${escapeHtml(intent.status)}">
  <header>
    <p class="merchant" id="merchant">${escapeHtml(merchantName)}</p>
    <h1 id="description">${escapeHtml(intent.description ?? 'Payment')}</h1>
    <p class="amount" id="total">${formatUsd(intent.amount)}</p>
  </header>
  <table id="line-items">
    <thead><tr><th>Item</th><th class="num">Qty</th><th class="num">Unit</th><th class="num">Amount</th></tr></thead>
    <tbody>
      ${rows}
    </tbody>
    <tfoot>
      <tr><td colspan="3">Subtotal</td><td class="num" id="subtotal">${formatUsd(subtotal)}</td></tr>
      <tr><td colspan="3">Tax${intent.taxMode === 'inclusive' ? ' (included)' : ''}</td><td class="num" id="tax">${formatUsd(intent.taxAmount)}</td></tr>
      <tr class="total"><td colspan="3">Total</td><td class="num" id="total-row">${formatUsd(intent.amount)}</td></tr>
    </tfoot>
  </table>
  <section id="result" role="status" aria-live="polite"${open ? ' hidden' : ''}>${
    closed
      ? `<h2 id="closed">Closed</h2><p id="closed-reason">${escapeHtml(CLOSED_TEXT[intent.status] ?? 'This payment link is closed.')}</p>`
      : processing
        ? '<h2 id="processing">Processing</h2><p>Your payment is being processed. This page updates by itself.</p>'
        : ''
  }</section>
  <form id="pay-form" autocomplete="on" novalidate${open ? '' : ' hidden'}>
    <label>Card number <input id="card-number" name="cardnumber" inputmode="numeric" autocomplete="cc-number" required maxlength="23"></label>
    <div class="row">
      <label>Expiry (MM/YY) <input id="card-expiry" name="exp-date" autocomplete="cc-exp" placeholder="MM/YY" required maxlength="7"></label>
      <label>CVC <input id="card-cvc" name="cvc" inputmode="numeric" autocomplete="cc-csc" required maxlength="4"></label>
    </div>
    <p id="form-error" class="error" role="alert" hidden></p>
    <button id="pay-button" type="submit">Pay ${formatUsd(intent.amount)}</button>
  </form>
</main>
</body>
</html>
`;
}

/** Renders the page for an unknown intent (404). */
export function renderNotFoundPage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Payment not found</title>
<link rel="stylesheet" href="/checkout/assets/checkout.css">
<link rel="icon" href="/checkout/assets/favicon.svg" type="image/svg+xml"></head>
<body><main id="checkout"><h1>Payment not found</h1><p>Check the link you were given.</p></main></body></html>
`;
}

/** The page's icon (a card outline). */
export const CHECKOUT_FAVICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect x="1" y="3" width="14" height="10" rx="2" ' +
  'fill="#635bff"/><rect x="1" y="5" width="14" height="2" fill="#fff"/></svg>';

/** The page's stylesheet. */
export const CHECKOUT_CSS = `
body { font-family: system-ui, sans-serif; background: #f5f6f8; color: #1a1f36; margin: 0; }
main { max-width: 28rem; margin: 2rem auto; background: #fff; padding: 1.5rem; border-radius: 8px; box-shadow: 0 1px 4px rgba(0,0,0,.1); }
.merchant { color: #697386; margin: 0; }
h1 { font-size: 1.1rem; margin: .25rem 0; }
.amount { font-size: 2rem; font-weight: 600; margin: .5rem 0 1rem; }
table { width: 100%; border-collapse: collapse; margin-bottom: 1rem; font-size: .9rem; }
th, td { padding: .3rem 0; text-align: left; border-bottom: 1px solid #e3e8ee; }
.num { text-align: right; }
tr.total td { font-weight: 600; }
label { display: block; margin-bottom: .75rem; font-size: .85rem; color: #3c4257; }
input { display: block; width: 100%; box-sizing: border-box; padding: .55rem; font-size: 1rem; border: 1px solid #cfd7df; border-radius: 4px; }
.row { display: flex; gap: .75rem; }
.row label { flex: 1; }
button { width: 100%; padding: .7rem; font-size: 1rem; background: #635bff; color: #fff; border: 0; border-radius: 4px; cursor: pointer; }
button:disabled { opacity: .6; }
.error { color: #df1b41; }
#result h2 { font-size: 1.2rem; }
`;

/**
 * The page's script (served from `/checkout/assets/checkout.js`). It never logs or stores the card number; the
 * client secret comes from the URL fragment.
 */
export const CHECKOUT_JS = `'use strict';
(function () {
  var main = document.getElementById('checkout');
  var form = document.getElementById('pay-form');
  if (!main || !form) return;
  var intentId = main.getAttribute('data-intent-id');
  var secret = decodeURIComponent((location.hash || '').slice(1));
  var result = document.getElementById('result');
  var error = document.getElementById('form-error');
  var button = document.getElementById('pay-button');
  if (main.getAttribute('data-status') === 'processing') setTimeout(function () { location.reload(); }, 2000);

  function show(html) { result.innerHTML = html; result.hidden = false; }
  function text(s) { var d = document.createElement('div'); d.textContent = s; return d.innerHTML; }
  function fail(message) { error.textContent = message; error.hidden = false; }

  form.addEventListener('submit', function (event) {
    event.preventDefault();
    error.hidden = true;
    if (!secret) { fail('This payment link is incomplete. Open the full link you were given.'); return; }
    var number = document.getElementById('card-number').value.replace(/[\\s-]/g, '');
    var exp = document.getElementById('card-expiry').value.replace(/\\s/g, '').split('/');
    var cvc = document.getElementById('card-cvc').value.trim();
    var month = parseInt(exp[0], 10), year = parseInt(exp[1], 10);
    if (!(month >= 1 && month <= 12) || !(year >= 0)) { fail('Enter the expiry as MM/YY.'); return; }
    if (year < 100) year += 2000;
    button.disabled = true;
    var key = (window.crypto && crypto.randomUUID) ? crypto.randomUUID() : String(Date.now()) + Math.random();
    fetch('/v1/payment-intents/' + encodeURIComponent(intentId) + '/card-payments', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ data: { type: 'cardPayment', attributes: {
        clientSecret: secret, card: { number: number, expMonth: month, expYear: year, cvc: cvc } } } })
    }).then(function (res) { return res.json().then(function (body) { return { status: res.status, body: body }; }); })
      .then(function (answer) {
        button.disabled = false;
        if (answer.status !== 201) {
          var err = answer.body && answer.body.errors && answer.body.errors[0];
          if (err && err.code === 'invalid_state') {
            form.hidden = true;
            show('<h2 id="closed">Closed</h2><p id="closed-reason">' + text(err.detail) + '</p>');
          } else {
            fail(err ? err.detail : 'The payment could not be sent. Try again.');
          }
          return;
        }
        var payment = answer.body.data.attributes;
        var intent = answer.body.included && answer.body.included[0] && answer.body.included[0].attributes;
        if (payment.status === 'succeeded') {
          form.hidden = true;
          show('<h2 id="success">Payment successful</h2><p>Paid with ' + text(payment.brand || 'card') + ' ending in ' + text(payment.last4 || '') + '.</p>');
        } else if (payment.status === 'processing') {
          form.hidden = true;
          show('<h2 id="processing">Processing</h2><p>Your payment is being processed. This page updates by itself.</p>');
          setTimeout(function () { location.reload(); }, 2000);
        } else if (intent && intent.status === 'open') {
          show('<h2 id="declined">Payment declined</h2><p id="decline-reason">' + text(payment.failureMessage || 'Your card was declined.') + '</p><p>Try another card.</p>');
          form.reset();
        } else {
          form.hidden = true;
          show('<h2 id="declined">Payment declined</h2><p id="decline-reason">' + text(payment.failureMessage || 'Your card was declined.') + '</p><h2 id="closed">Closed</h2><p>This payment can no longer be paid.</p>');
        }
      }, function () { button.disabled = false; fail('The payment could not be sent. Check your connection and try again.'); });
  });
})();
`;
