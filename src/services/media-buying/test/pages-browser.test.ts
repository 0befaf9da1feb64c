/**
 * The pages of issue 16 in a real browser: playwright-core driving Debian's Chromium (`/usr/bin/chromium`, or
 * `CHROMIUM_PATH`; installed by .ci/run when missing). Nothing is skipped: without Chromium these tests fail.
 *
 * - A person invited to an admitted organization opens the mailed link, creates the account, accepts the terms,
 *   creates an API key (shown once), and that key works on the REST API.
 * - A page served from another origin, whose script posts to the service with the victim's session cookie, is refused:
 *   the attacker is on the same site (127.0.0.1, another port), so the SameSite=Lax cookie is sent, and only the
 *   Origin check (spec "Authentication", rule 4) stands between it and a new key; from another site (`localhost`)
 *   the cookie is not even sent.
 * - Sign-in with a password (and `next`), with SSO through the built-in simulator, and SSO for a new person, which
 *   resumes the interrupted signup on the signup page.
 * - The M2M applications and connected apps pages.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { baseUrlOf } from '../../../../test/support/platform.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { insertConnection } from './support/connectors.ts';
import {
  envelopeData,
  type MediaBuyingHarness,
  STRONG_PASSWORD,
  startMediaBuying,
} from './support/harness.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const NEW_PASSWORD = 'copper violin harbor 58';

describe('media buying pages in Chromium', () => {
  const clock = new ManualClock(new Date());
  let h: MediaBuyingHarness;
  let browser: Browser;
  let base: string;

  before(async () => {
    h = await startMediaBuying({ clock, listen: true });
    base = baseUrlOf(h.platform.app('media-buying'));
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  });
  after(async () => {
    await browser?.close();
    await h?.close();
  });

  /**
   * A fresh browser context (its own cookies) and page that records script errors and CSP violations (a failed
   * request's "Failed to load resource" line is the page's business: the tests assert what the page shows).
   */
  const open = async (): Promise<{ context: BrowserContext; page: Page; problems: string[] }> => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (msg) => {
      if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource'))
        problems.push(msg.text());
    });
    page.on('pageerror', (err) => problems.push(err.message));
    page.on('dialog', (dialog) => dialog.accept());
    return { context, page, problems };
  };

  /** Signs in on the sign-in page with a password and waits for the account page. */
  const signIn = async (page: Page, email: string, password: string) => {
    await page.goto(`${base}/sign-in`);
    await page.fill('#email', email);
    await page.fill('#password', password);
    await page.click('#password-submit');
    await page.waitForURL(`${base}/account`);
  };

  test('an invited person joins an admitted organization, accepts the terms, creates an API key once, and the key works on the REST API', async () => {
    const orgId = await h.createOrganization('buyer', 'Acme <Outdoor> & "Co"', false);
    const admitted = await h.ops({ method: 'POST', url: `/_ops/organizations/${orgId}/admit` });
    assert.equal(admitted.statusCode, 200, admitted.body);
    const invited = await h.ops({
      method: 'POST',
      url: `/_ops/organizations/${orgId}/setup-invitation`,
      payload: {
        email: 'ada@acme-outdoor.example',
        name: 'Ada Lovelace',
        commercialOffer: { title: 'Launch pricing', terms: 'Platform fee of 8% for 12 months.' },
      },
    });
    assert.equal(invited.statusCode, 201, invited.body);
    const mail = await h.ops({ url: '/_ops/mail?to=ada@acme-outdoor.example' });
    const text = (mail.json() as { mail: { text: string }[] }).mail[0]!.text;
    const link = /(http:\/\/\S+\/invitations\/accept\?token=mbi_[A-Za-z0-9_-]{43})/.exec(text)?.[1];
    assert.ok(link?.startsWith(`${base}/invitations/accept?token=`), text);

    const { context, page, problems } = await open();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    const res = await page.goto(link!);
    assert.equal(res?.status(), 200);
    await page.locator('#create-form').waitFor();
    assert.equal(await page.textContent('#invitation-organization'), 'Acme <Outdoor> & "Co"');
    assert.equal(await page.textContent('#invitation-role'), 'an administrator');
    assert.equal(await page.textContent('#offer-title'), 'Launch pricing (pending)');
    assert.equal(await page.inputValue('#accept-name'), 'Ada Lovelace');
    await page.fill('#accept-password', NEW_PASSWORD);
    await page.click('#create-and-join');

    await page.locator('#terms-step').waitFor();
    assert.match(
      (await page.textContent('#terms-title')) ?? '',
      /Media Buying Terms of Service \(version 2026-11-01\)/,
    );
    await page.click('#accept-terms');
    await page.locator('#done').waitFor();
    assert.equal(await page.isVisible('#done-offer'), true, 'the offer waits for its own decision');

    await page.click('#to-api-keys');
    await page.waitForURL(`${base}/account/api-keys`);
    assert.equal(await page.textContent('#user-name'), 'Ada Lovelace');
    assert.match(
      (await page.textContent('#organization-switcher option:checked')) ?? '',
      /^Acme <Outdoor> & "Co" \(Buyer Account, admin\)$/,
    );
    await page.locator('#keys-empty').waitFor();
    await page.fill('#key-label', 'browser key');
    await page.click('#create-key');
    await page.locator('#new-key-panel').waitFor();
    const key = await page.inputValue('#new-key');
    assert.match(key, /^mbu_[A-Za-z0-9_-]{43}$/);
    await page.click('#copy-key');
    await page.locator('#copy-status', { hasText: 'Copied.' }).waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), key);
    const row = page.locator('#keys-body tr');
    await row.first().waitFor();
    assert.equal(await row.count(), 1);
    assert.equal(await row.locator('code').textContent(), `mbu_…${key.slice(-4)}`);

    // Shown once: the page after a reload lists the key masked and holds it nowhere.
    await page.reload();
    await page.locator('#keys-body tr').first().waitFor();
    assert.equal(await page.isVisible('#new-key-panel'), false);
    assert.equal((await page.content()).includes(key), false);

    const advertisers = await fetch(`${base}/api/v2/buyer/advertisers`, {
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(advertisers.status, 200);
    const listed = (await advertisers.json()) as { data: unknown[]; error: null; meta: unknown };
    assert.deepEqual(listed, {
      data: [],
      error: null,
      meta: { pagination: { skip: 0, take: 50, total: 0, hasMore: false } },
    });
    const me = envelopeData<{ organization: { id: string } }>(await h.bearer(key, { url: '/auth/me' }));
    assert.equal(me.organization.id, orgId, 'the key is bound to the organization joined');

    // The offer is accepted in a separate step, by the administrator, on the account page.
    await page.click('nav a[href="/account"]');
    const offer = page.locator('#offers-list article');
    await offer.getByRole('button', { name: 'Accept the offer' }).click();
    await offer.locator('.badge', { hasText: 'accepted' }).waitFor();
    assert.deepEqual(problems, []);
    await context.close();
  });

  test('a page of another origin posting with the victim’s session cookie is refused (403) and changes nothing', async () => {
    const { context, page, problems } = await open();
    await signIn(page, h.demo.email, h.demo.password);
    const keysBefore = envelopeData<unknown[]>(
      await h.bearer(h.demo.apiKey, { url: '/api/v2/user-api-keys' }),
    );

    // The attacker: another port of the same host (same site, so the SameSite=Lax cookie goes along), and the same
    // pages at http://localhost (another site).
    const attacker = http.createServer((req, res) => {
      const form = req.url?.startsWith('/form');
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          form
            ? `<form id="f" method="post" action="${base}/auth/sign-out"></form><script>document.getElementById('f').submit()</script>`
            : `<script>fetch(${JSON.stringify(`${base}/api/v2/user-api-keys`)}, { method: 'POST', mode: 'no-cors', credentials: 'include' }).then(() => { document.title = 'sent'; }, () => { document.title = 'failed'; });</script>`,
        );
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    const port = (attacker.address() as AddressInfo).port;
    try {
      // A script's no-body POST (a "simple" request: no preflight). The answer is opaque to the attacker, but the
      // browser reports its status: 403 origin_not_allowed is answered only to a valid session cookie (the session is
      // resolved first; without one the answer is 401), so the cookie went along and the Origin alone refused it.
      const target = `${base}/api/v2/user-api-keys`;
      const [answer] = await Promise.all([
        page.waitForResponse((r) => r.url() === target && r.request().method() === 'POST'),
        page.goto(`http://127.0.0.1:${port}/fetch`),
      ]);
      assert.equal(answer.status(), 403);

      // A top-level form POST (a navigation) to sign out: the request shows the cookie and the foreign Origin; the
      // answer is the same refusal, and the session lives on.
      const [refused] = await Promise.all([
        page.waitForResponse((r) => r.url() === `${base}/auth/sign-out`),
        page.goto(`http://127.0.0.1:${port}/form`),
      ]);
      const sent = await refused.request().allHeaders();
      assert.match(sent.cookie ?? '', /mb_session=mbs_/, 'the browser sent the session cookie');
      assert.equal(sent.origin, `http://127.0.0.1:${port}`);
      assert.equal(sent['sec-fetch-site'], 'same-site');
      assert.equal(refused.status(), 403);
      await page.waitForURL(`${base}/auth/sign-out`);
      const shown = JSON.parse((await page.textContent('body')) ?? '{}') as {
        error: { code: string; details: { reason: string } };
      };
      assert.equal(shown.error.code, 'FORBIDDEN');
      assert.equal(shown.error.details.reason, 'origin_not_allowed');

      // Another site: the Lax cookie is not sent on a cross-site POST, so the service sees no session (401).
      const [crossSite] = await Promise.all([
        page.waitForResponse((r) => r.url() === target && r.request().method() === 'POST'),
        page.goto(`http://localhost:${port}/fetch`),
      ]);
      assert.equal(crossSite.status(), 401);

      const keysAfter = envelopeData<unknown[]>(
        await h.bearer(h.demo.apiKey, { url: '/api/v2/user-api-keys' }),
      );
      assert.equal(keysAfter.length, keysBefore.length, 'no key was created');

      // The same request from the service's own page (its origin) creates a key: only the Origin decided.
      await page.goto(`${base}/account`);
      assert.equal(await page.textContent('#user-email'), h.demo.email, 'still signed in');
      const status = await page.evaluate(
        async () => (await fetch('/api/v2/user-api-keys', { method: 'POST' })).status,
      );
      assert.equal(status, 201);
      const keysNow = envelopeData<unknown[]>(
        await h.bearer(h.demo.apiKey, { url: '/api/v2/user-api-keys' }),
      );
      assert.equal(keysNow.length, keysBefore.length + 1);
    } finally {
      await new Promise((resolve) => attacker.close(resolve));
    }
    assert.deepEqual(problems, []);
    await context.close();
  });

  test('sign-in with a password (back to the page asked for), sign-out, the hosted page, and SSO through the simulator', async () => {
    const { context, page, problems } = await open();
    const res = await page.goto(`${base}/account/api-keys`);
    assert.equal(res?.status(), 200);
    await page.waitForURL(`${base}/sign-in?next=%2Faccount%2Fapi-keys`);
    await page.fill('#email', h.demo.email);
    await page.fill('#password', 'not the password at all');
    await page.click('#password-submit');
    await page.locator('#password-error', { hasText: 'Invalid email or password.' }).waitFor();
    await page.fill('#password', h.demo.password);
    await page.click('#password-submit');
    await page.waitForURL(`${base}/account/api-keys`);
    assert.equal(await page.textContent('#user-email'), h.demo.email);

    await page.click('#sign-out');
    await page.waitForURL(`${base}/sign-in`);
    await page.goto(`${base}/account`);
    await page.waitForURL(`${base}/sign-in?next=%2Faccount`);

    // The identity provider's hosted page: its form redirects to the callback page, which completes the sign-in.
    await page.click('#hosted-button');
    await page.waitForURL(/\/auth\/authorize\?/);
    await page.fill('input[name="email"]', h.demo.email);
    await page.fill('input[name="password"]', h.demo.password);
    await page.click('button[type="submit"]');
    await page.waitForURL(`${base}/account`);
    assert.equal(await page.textContent('#user-email'), h.demo.email);
    await page.click('#sign-out');
    await page.waitForURL(`${base}/sign-in`);

    // SSO: Ada has an account (made by the operator); the simulator vouches for her verified email.
    await h.addMember(h.demo.organizationId, 'ada@sso-simulator.example', 'member', 'Ada Lovelace');
    await page.click('#sso-button');
    await page.waitForURL(/\/_sim\/oidc\/authorize\?/);
    await page.click('button[data-login="ada"]');
    await page.waitForURL(`${base}/account`);
    assert.equal(await page.textContent('#user-email'), 'ada@sso-simulator.example');
    assert.match((await page.textContent('#terms-banner')) ?? '', /Accept the Terms of Service/);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test('SSO for a new person resumes the interrupted signup on the signup page, which creates the account', async () => {
    const { context, page, problems } = await open();
    await page.goto(`${base}/signup`);
    await page.check('input[name="accountType"][value="DEVELOPER"]');
    await page.click('#signup-sso');
    await page.waitForURL(/\/_sim\/oidc\/authorize\?/);
    await page.click('button[data-login="grace"]');
    await page.waitForURL(/\/signup\?pending=true&token=mbv_/);
    await page.locator('#account-form').waitFor();
    assert.equal(await page.textContent('#recovery-email'), 'grace@sso-simulator.example');
    assert.equal(await page.inputValue('#account-name'), 'Grace Hopper');
    // The routing metadata of the round trip preselected the type; the person still chooses.
    assert.equal(await page.isChecked('input[name="recoveryType"][value="DEVELOPER"]'), true);
    // While buyer signup is waitlisted, Advertiser shows the preview form instead.
    await page.check('input[name="recoveryType"][value="ADVERTISER"]');
    await page.locator('#preview-section').waitFor();
    assert.equal(await page.isVisible('#create-account'), false);
    await page.check('input[name="recoveryType"][value="DEVELOPER"]');
    await page.click('#create-account');
    await page.waitForURL(`${base}/account`);
    assert.equal(await page.textContent('#user-email'), 'grace@sso-simulator.example');
    assert.equal(await page.isVisible('#no-memberships'), true);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test('M2M applications (secret shown once, usable at the token endpoint) and connected apps (disconnect) pages', async () => {
    const { context, page, problems } = await open();
    await signIn(page, h.demo.email, h.demo.password);
    await page.click('nav a[href="/account/m2m-applications"]');
    await page.fill('#app-name', 'nightly <reports>');
    await page.check('input[name="permission"][value="buyer:read"]');
    await page.click('#create-app');
    await page.locator('#secret-panel').waitFor();
    const clientId = (await page.textContent('#secret-client-id'))!;
    const secret = await page.inputValue('#client-secret');
    assert.equal(await page.textContent('#secret-token-endpoint'), `${base}/oauth/token`);
    assert.equal(await page.textContent('#secret-resource'), `${base}/api/v2`);
    const token = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
      },
      body: 'grant_type=client_credentials',
    });
    assert.equal(token.status, 200);
    assert.equal(((await token.json()) as { scope: string }).scope, 'platform:read buyer:read');
    const card = page.locator('#apps article');
    await card.locator('h3', { hasText: 'nightly <reports>' }).waitFor();
    await card.getByRole('button', { name: 'Add a secret' }).click();
    await card.locator('li').nth(1).waitFor();
    assert.notEqual(await page.inputValue('#client-secret'), secret, 'the new secret is shown once');
    await card.getByRole('button', { name: 'Delete application' }).click();
    await page.locator('#apps-empty').waitFor();

    const me = envelopeData<{ user: { id: string } }>(await h.bearer(h.demo.apiKey, { url: '/auth/me' }));
    const connection = await insertConnection(h.platform.booted.database.db, {
      userPublicId: me.user.id,
      appName: 'Claude <desktop>',
      resource: `${base}/mcp/v3`,
      firstConnectedAt: new Date(clock.nowMs() - 3_600_000),
    });
    await page.click('nav a[href="/account/connected-apps"]');
    const app = page.locator(`#connected-body tr[data-connection="${connection.id}"]`);
    await app.waitFor();
    assert.equal(await app.locator('td').first().textContent(), 'Claude <desktop>');
    assert.equal(await app.locator('td').nth(3).textContent(), 'never');
    await app.getByRole('button', { name: 'Disconnect' }).click();
    await page.locator('#connected-empty').waitFor();
    const listed = await h.session(await h.signIn(h.demo.email, h.demo.password), {
      url: '/api/v2/connected-apps',
    });
    assert.deepEqual(envelopeData(listed), []);
    assert.deepEqual(problems, []);
    await context.close();
  });

  /** The newest mail to `to` (the operator's outbox view), once the jobs that send it ran. */
  const newestMail = async (to: string) => {
    await h.platform.runDueJobs();
    const res = await h.ops({ url: `/_ops/mail?to=${encodeURIComponent(to)}` });
    return (res.json() as { mail: { text: string; kind: string }[] }).mail[0]!;
  };

  test('signup: Advertiser while waitlisted sends the preview form; a media company signs up with email, password and the mailed code', async () => {
    const { context, page, problems } = await open();
    await page.goto(`${base}/signup`);
    await page.check('input[name="accountType"][value="ADVERTISER"]');
    await page.locator('#preview-section').waitFor();
    assert.equal(await page.isVisible('#account-section'), false);
    await page.fill('#preview-email', 'cmo@waitlisted-brand.example');
    await page.fill('#preview-name', 'Mae Jemison');
    await page.fill('#preview-company', 'Waitlisted Brand');
    await page.click('#preview-form button[type="submit"]');
    await page.locator('#preview-done').waitFor();
    assert.equal((await newestMail('cmo@waitlisted-brand.example')).kind, 'preview_receipt');

    await page.check('input[name="accountType"][value="MEDIA_COMPANY"]');
    await page.locator('#account-section').waitFor();
    await page.fill('#signup-email', 'katherine@new-media.example');
    await page.fill('#signup-name', 'Katherine Johnson');
    await page.fill('#signup-password', 'short');
    await page.click('#signup-form button[type="submit"]');
    await page.locator('#signup-error', { hasText: 'password' }).waitFor();
    await page.fill('#signup-password', NEW_PASSWORD);
    await page.click('#signup-form button[type="submit"]');
    await page.locator('#signup-code-form').waitFor();
    const code = /\b(\d{6})\b/.exec((await newestMail('katherine@new-media.example')).text)![1]!;
    await page.fill('#signup-code', code);
    await page.click('#signup-code-form button[type="submit"]');
    await page.waitForURL(/\/signup\?pending=true&token=mbv_/);
    await page.locator('#account-form').waitFor();
    assert.equal(await page.textContent('#recovery-email'), 'katherine@new-media.example');
    assert.equal(await page.isChecked('input[name="recoveryType"][value="MEDIA_COMPANY"]'), true);
    assert.equal(await page.isVisible('#storefront-fields'), true);
    assert.equal(await page.isVisible('#plan-fields'), false, 'the plan rollout is closed');
    await page.fill('#organization-name', 'New Media Co');
    await page.click('#create-account');
    await page.waitForURL(`${base}/account`);
    assert.match(
      (await page.textContent('#active-organization')) ?? '',
      /^New Media Co \(Seller Account, admin\)$/,
    );
    // The password chosen on the page is the account's: it signs in.
    const signIn = await fetch(`${base}/auth/password`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'katherine@new-media.example', password: NEW_PASSWORD }),
    });
    assert.equal(signIn.status, 200, await signIn.text());
    assert.deepEqual(problems, []);
    await context.close();
  });

  test('a magic code signs in; a reset link sets a new password; the switcher changes the active organization; a key is revoked', async () => {
    const email = 'dorothy@pages.example';
    const sellerOrg = h.demo.sellerOrganizationId;
    await h.addMember(h.demo.organizationId, email, 'member', 'Dorothy Vaughan');
    await h.addMember(sellerOrg, email, 'member', 'Dorothy Vaughan');
    const { context, page, problems } = await open();
    await page.goto(`${base}/sign-in`);
    await page.fill('#code-email', email);
    await page.click('#code-request-form button[type="submit"]');
    await page.locator('#code-verify-form').waitFor();
    const code = /\b(\d{6})\b/.exec((await newestMail(email)).text)![1]!;
    await page.fill('#code', code);
    await page.click('#code-verify-form button[type="submit"]');
    await page.waitForURL(`${base}/account`);
    assert.equal(await page.textContent('#user-email'), email);

    // The reset link of the mail, opened in this browser: a new password, and the person is signed in again.
    await page.goto(`${base}/forgot-password`);
    await page.fill('#forgot-email', email);
    await page.click('#forgot-form button[type="submit"]');
    await page.locator('#forgot-done').waitFor();
    const link = /(http:\/\/\S+\/reset-password#token=mbp_[A-Za-z0-9_-]{43})/.exec(
      (await newestMail(email)).text,
    )![1]!;
    await page.goto(link);
    assert.equal(new URL(page.url()).hash, '', 'the token left the address bar');
    await page.fill('#new-password', NEW_PASSWORD);
    await page.fill('#confirm-password', NEW_PASSWORD);
    await page.click('#reset-form button[type="submit"]');
    await page.waitForURL(`${base}/account`);
    assert.equal(
      (await h.call({ method: 'POST', url: '/auth/password', payload: { email, password: NEW_PASSWORD } }))
        .statusCode,
      200,
    );

    // Accept the terms on the account page, then switch the organization the session acts in.
    await page.click('#accept-terms');
    await page.locator('#terms').waitFor({ state: 'detached' });
    const before = await page.inputValue('#organization-switcher');
    const other = before === sellerOrg ? h.demo.organizationId : sellerOrg;
    await Promise.all([page.waitForEvent('load'), page.selectOption('#organization-switcher', other)]);
    assert.equal(await page.inputValue('#organization-switcher'), other);

    await page.click('nav a[href="/account/api-keys"]');
    await page.click('#create-key');
    await page.locator('#new-key-panel').waitFor();
    const key = await page.inputValue('#new-key');
    assert.equal(
      envelopeData<{ organization: { id: string } }>(await h.bearer(key, { url: '/auth/me' })).organization
        .id,
      other,
    );
    await page.locator('#keys-body tr').getByRole('button', { name: 'Revoke' }).click();
    await page.locator('#keys-empty').waitFor();
    assert.equal((await h.bearer(key, { url: '/auth/me' })).statusCode, 401);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test('an invitation to a person who has an account: sign in first, come back to the invitation, and join', async () => {
    const email = 'existing@pages-join.example';
    const sellerOrg = h.demo.sellerOrganizationId;
    await h.addMember(sellerOrg, email, 'member', 'Existing Person');
    const adminCookie = await h.signInAccepted(h.demo.email, h.demo.password);
    const switched = await h.session(adminCookie, {
      method: 'POST',
      url: '/api/v2/organizations/active',
      payload: { organizationId: h.demo.organizationId },
    });
    assert.equal(switched.statusCode, 200, switched.body);
    const sent = await h.session(adminCookie, {
      method: 'POST',
      url: '/api/v2/organizations/current/invitations',
      payload: { email, role: 'member' },
    });
    assert.equal(sent.statusCode, 201, sent.body);
    const link = /(http:\/\/\S+\/invitations\/accept\?token=mbi_[A-Za-z0-9_-]{43})/.exec(
      (await newestMail(email)).text,
    )![1]!;

    const { context, page, problems } = await open();
    await page.goto(link);
    await page.locator('#sign-in-first').waitFor();
    assert.equal(await page.isVisible('#create-form'), false);
    await page.click('#sign-in-link');
    await page.waitForURL(/\/sign-in\?next=/);
    await page.fill('#email', email);
    await page.fill('#password', STRONG_PASSWORD);
    await page.click('#password-submit');
    await page.waitForURL(link);
    await page.locator('#join-form').waitFor();
    assert.equal(await page.textContent('#join-email'), email);
    await page.click('#join');
    await page.locator('#terms-step').waitFor();
    await page.click('#accept-terms');
    await page.locator('#done').waitFor();
    assert.equal(await page.textContent('#done-organization'), 'Demo Buyer');
    await page.click('a[href="/account"]');
    await page.locator('#memberships').waitFor();
    assert.equal(await page.locator('#memberships tbody tr').count(), 2);
    assert.deepEqual(problems, []);
    await context.close();
  });
});
