/**
 * The pages of the service as HTTP answers (the browser tests drive them in Chromium): the security headers of every
 * page, the assets their documents load, the signed-in area's redirect to the sign-in page, the `next` a sign-in goes
 * to (never another site), every value escaped, and what the server renders from its state (platform settings, the
 * terms to accept, an administrator's pages).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../../platform/clock.ts';
import {
  envelopeData,
  envelopeError,
  type MediaBuyingHarness,
  STRONG_PASSWORD,
  startMediaBuying,
} from './support/harness.ts';

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const PUBLIC_PAGES = [
  '/sign-in',
  '/sign-in/callback',
  '/sign-in/sso/callback',
  '/signup',
  '/signup?pending=true&token=mbv_x',
  '/invitations/accept?token=mbi_x',
  '/forgot-password',
  '/reset-password',
];
const ACCOUNT_PAGES = [
  '/account',
  '/account/api-keys',
  '/account/m2m-applications',
  '/account/connected-apps',
];

type Answer = Awaited<ReturnType<MediaBuyingHarness['call']>>;

/** Asserts the security headers every page carries. */
function assertPageHeaders(res: Answer, url: string): void {
  assert.equal(res.headers['content-security-policy'], CSP, url);
  assert.equal(res.headers['cache-control'], 'no-store', url);
  assert.equal(res.headers['referrer-policy'], 'same-origin', url);
  assert.equal(res.headers['x-content-type-options'], 'nosniff', url);
  assert.equal(res.headers['x-frame-options'], 'DENY', url);
  assert.equal(res.headers['cross-origin-opener-policy'], 'same-origin', url);
}

/** The local files a page loads (`src` and `href` of its scripts, style sheet and icon). */
function assetsOf(html: string): string[] {
  return [...html.matchAll(/(?:src|href)="(\/ui\/assets\/[^"]+)"/g)].map((m) => m[1]!);
}

/** The `data-*` attributes of `<body>`. */
function bodyData(html: string): Record<string, string> {
  const tag = /<body([^>]*)>/.exec(html)?.[1] ?? '';
  return Object.fromEntries([...tag.matchAll(/data-([a-z-]+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
}

describe('media buying pages over HTTP', () => {
  const clock = new ManualClock(new Date('2026-11-25T10:00:00Z'));
  let h: MediaBuyingHarness;
  let admin: string;

  before(async () => {
    h = await startMediaBuying({ clock });
    admin = await h.signInAccepted(h.demo.email, h.demo.password);
  });
  after(() => h?.close());

  test('every page is HTML with the security headers; every file it loads is served with its type and nosniff', async () => {
    const loaded = new Set<string>();
    for (const url of PUBLIC_PAGES) {
      const res = await h.call({ url });
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
      assertPageHeaders(res, url);
      assert.doesNotMatch(
        res.body,
        /<script>|<style>| on[a-z]+=/i,
        `${url}: no inline script, style or handler`,
      );
      for (const asset of assetsOf(res.body)) loaded.add(asset);
    }
    for (const url of ACCOUNT_PAGES) {
      const res = await h.call({ url, headers: { cookie: admin } });
      assert.equal(res.statusCode, 200, url);
      assertPageHeaders(res, url);
      assert.doesNotMatch(res.body, /<script>|<style>| on[a-z]+=/i, url);
      for (const asset of assetsOf(res.body)) loaded.add(asset);
    }
    assert.ok(loaded.size >= 12, [...loaded].join(' '));
    const types: Record<string, RegExp> = {
      js: /^text\/javascript; charset=utf-8$/,
      css: /^text\/css; charset=utf-8$/,
      svg: /^image\/svg\+xml/,
    };
    for (const asset of loaded) {
      const res = await h.call({ url: asset });
      assert.equal(res.statusCode, 200, asset);
      assert.match(String(res.headers['content-type']), types[asset.split('.').pop()!]!, asset);
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      assert.ok(res.body.length > 0);
    }
    const missing = await h.call({ url: '/ui/assets/nothing.js' });
    assert.equal(missing.statusCode, 404);
    assert.equal(envelopeError(missing).code, 'NOT_FOUND');
  });

  test('the pages of the sign-in round trips allow no script and post only to the service and the callback origin', async () => {
    const started = envelopeData<{ url: string }>(await h.call({ url: '/auth/url' }));
    const hosted = await h.call({ url: new URL(started.url).pathname + new URL(started.url).search });
    assert.equal(hosted.statusCode, 200);
    assert.equal(
      hosted.headers['content-security-policy'],
      "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self' http://127.0.0.1:4100; " +
        "frame-ancestors 'none'; base-uri 'none'",
    );
    assert.equal(hosted.headers['cache-control'], 'no-store');
    // Not no-referrer: browsers would then post the page's form with Origin: null, which the origin check refuses.
    assert.equal(hosted.headers['referrer-policy'], 'same-origin');
    assert.doesNotMatch(hosted.body, /<script/);
  });

  test('the signed-in pages send a browser without a valid session to the sign-in page, which comes back to them', async () => {
    const disabled = await h.addMember(h.demo.organizationId, 'soon-disabled@pages.example', 'member');
    const disabledCookie = await h.signIn('soon-disabled@pages.example', STRONG_PASSWORD);
    const off = await h.ops({ method: 'POST', url: `/_ops/users/${disabled}/disable` });
    assert.equal(off.statusCode, 200, off.body);
    const signedOut = await h.signIn(h.demo.email, h.demo.password);
    await h.session(signedOut, { method: 'POST', url: '/auth/sign-out' });
    for (const cookie of [undefined, 'mb_session=mbs_not-a-session', signedOut, disabledCookie]) {
      for (const url of ACCOUNT_PAGES) {
        const res = await h.call({ url, headers: cookie ? { cookie } : {} });
        assert.equal(res.statusCode, 303, `${url} with ${cookie}`);
        assert.equal(res.headers.location, `/sign-in?next=${encodeURIComponent(url)}`);
        assert.equal(res.headers['cache-control'], 'no-store');
      }
    }
  });

  test('a sign-in goes back only to a path of this site (`next`), never to another origin', async () => {
    const cases: [string, string][] = [
      ['', '/account'],
      ['?next=%2Faccount%2Fapi-keys', '/account/api-keys'],
      ['?next=%2Finvitations%2Faccept%3Ftoken%3Dmbi_abc', '/invitations/accept?token=mbi_abc'],
      ['?next=%2F%2Fevil.example%2Fx', '/account'],
      ['?next=%2F%5Cevil.example', '/account'],
      ['?next=https%3A%2F%2Fevil.example', '/account'],
      ['?next=javascript%3Aalert(1)', '/account'],
      ['?next=%2Fa%20b', '/account'],
      ['?next=%2Fx%0d%0aLocation%3A%20evil', '/account'],
      ['?next=%2F%22%3E%3Cscript%3E', '/account'],
    ];
    for (const [query, next] of cases) {
      const res = await h.call({ url: `/sign-in${query}` });
      assert.equal(res.statusCode, 200, query);
      assert.equal(bodyData(res.body).next, next.replace(/&/g, '&amp;'), query);
    }
  });

  test('every value the server renders is escaped: names, organizations, terms', async () => {
    const hostile = '<img src=x onerror=alert(1)> & "quoted" \'single\'';
    const org = await h.createOrganization('buyer', `Org ${hostile}`);
    await h.addMember(org, 'hostile@pages.example', 'admin', `Name ${hostile}`);
    const published = await h.ops({
      method: 'POST',
      url: '/_ops/terms',
      payload: { version: '2026-12-01', title: `Terms ${hostile}`, body: `Body ${hostile}\nsecond line` },
    });
    assert.equal(published.statusCode, 201, published.body);
    const cookie = await h.signIn('hostile@pages.example', STRONG_PASSWORD);
    const escaped = '&lt;img src=x onerror=alert(1)&gt; &amp; &quot;quoted&quot; &#39;single&#39;';
    for (const url of ACCOUNT_PAGES) {
      const res = await h.call({ url, headers: { cookie } });
      assert.equal(res.statusCode, 200, url);
      assert.ok(!res.body.includes('<img'), `${url} holds no raw markup of a value`);
      assert.ok(res.body.includes(`<span id="user-name">Name ${escaped}</span>`), url);
      assert.ok(res.body.includes(`Org ${escaped} (Buyer Account, admin)</option>`), url);
      assert.ok(res.body.includes('Accept the Terms of Service (version 2026-12-01)'), url);
    }
    const account = await h.call({ url: '/account', headers: { cookie } });
    assert.ok(account.body.includes(`<div id="terms-body" class="pre">Body ${escaped}\nsecond line</div>`));
    assert.ok(account.body.includes('data-version="2026-12-01"'));
    // Accepting the terms (the API the page's button calls) removes the section and the banner.
    const accepted = await h.session(cookie, {
      method: 'POST',
      url: '/api/v2/terms/accept',
      payload: { version: '2026-12-01' },
    });
    assert.equal(accepted.statusCode, 200, accepted.body);
    const after = await h.call({ url: '/account', headers: { cookie } });
    assert.ok(!after.body.includes('id="terms"'));
    assert.ok(!after.body.includes('id="terms-banner"'));
    admin = await h.signInAccepted(h.demo.email, h.demo.password);
  });

  test('the signup page follows the platform settings and resumes an interrupted signup when it has a token', async () => {
    const start = bodyData((await h.call({ url: '/signup' })).body);
    assert.deepEqual(start, { mode: 'start', 'buyer-signup': 'waitlisted', 'plan-rollout': 'closed' });
    const changed = await h.ops({
      method: 'PATCH',
      url: '/_ops/settings',
      payload: { buyerSignup: 'open', planRollout: 'open' },
    });
    assert.equal(changed.statusCode, 200, changed.body);
    const recovery = bodyData((await h.call({ url: '/signup?pending=true&token=mbv_abc' })).body);
    assert.deepEqual(recovery, { mode: 'recovery', 'buyer-signup': 'open', 'plan-rollout': 'open' });
    await h.ops({
      method: 'PATCH',
      url: '/_ops/settings',
      payload: { buyerSignup: 'waitlisted', planRollout: 'closed' },
    });
  });

  test('administrators get the M2M page and the Commercial Offers; members see why they cannot', async () => {
    const adminPage = await h.call({ url: '/account/m2m-applications', headers: { cookie: admin } });
    assert.match(adminPage.body, /<form id="app-form">/);
    assert.match(
      adminPage.body,
      /<code id="token-endpoint">http:\/\/127\.0\.0\.1:4100\/oauth\/token<\/code>/,
    );
    assert.match(adminPage.body, /<code id="resource">http:\/\/127\.0\.0\.1:4100\/api\/v2<\/code>/);
    assert.deepEqual(
      assetsOf(adminPage.body).filter((a) => a.endsWith('.js')),
      ['/ui/assets/common.js', '/ui/assets/m2m.js'],
    );
    assert.match(
      (await h.call({ url: '/account', headers: { cookie: admin } })).body,
      /<section id="offers">/,
    );

    await h.addMember(h.demo.organizationId, 'member@pages.example', 'member');
    const member = await h.signInAccepted('member@pages.example', STRONG_PASSWORD);
    const memberPage = await h.call({ url: '/account/m2m-applications', headers: { cookie: member } });
    assert.match(memberPage.body, /id="admin-only"/);
    assert.doesNotMatch(memberPage.body, /app-form|m2m\.js/);
    assert.doesNotMatch((await h.call({ url: '/account', headers: { cookie: member } })).body, /id="offers"/);
  });

  test('a user API key needs no body (its label is optional), from the UI origin', async () => {
    const res = await h.call({
      method: 'POST',
      url: '/api/v2/user-api-keys',
      headers: { cookie: admin, origin: 'http://127.0.0.1:4100' },
    });
    assert.equal(res.statusCode, 201, res.body);
    const created = envelopeData<{ key: string; record: { label: string | null } }>(res);
    assert.equal(created.record.label, null);
    assert.equal((await h.bearer(created.key, { url: '/auth/me' })).statusCode, 200);
  });
});
