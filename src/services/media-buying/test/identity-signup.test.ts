/**
 * The interrupted signup and password resets (spec "States and transitions", Signup; "Sign-in and signup": the
 * verified signup data, the email-availability check and account creation with `verifiedSignupToken`, plan data
 * refused while the rollout is closed; "Limits": the signup-recovery token lives ten minutes; "Authentication"
 * rule 5: resets follow the signup policy). Expiries are crossed by moving the injected clock.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestPlatform, type TestPlatform } from '../../../../test/support/platform.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { GENERIC_MESSAGES } from '../identity/index.ts';
import { mediaBuyingService } from '../index.ts';
import {
  counts,
  get,
  latestCode,
  mailTo,
  post,
  sessionCookie,
  signUpAndVerify,
  signupToken,
  strongPassword,
} from './identity-support.ts';

const MINUTE = 60_000;

describe('media-buying identity: the interrupted signup and password resets', () => {
  const clock = new ManualClock(new Date('2026-11-24T09:00:00Z'));
  let platform: TestPlatform;
  const logLines: string[] = [];
  const app = () => platform.app('media-buying');
  const settings = async (patch: Record<string, string>) => {
    const res = await app().inject({
      method: 'PATCH',
      url: '/_ops/settings',
      headers: { authorization: platform.operatorAuth },
      payload: patch,
    });
    assert.equal(res.statusCode, 200, res.body);
  };
  let n = 0;
  /** A new verified identity without an account, and its password: a fresh `verifiedSignupToken`. */
  const interrupted = async (name = 'Signup Person') => {
    n += 1;
    const email = `signup${n}@example.com`;
    const password = strongPassword();
    const verified = await signUpAndVerify(platform, email, password, name);
    return { email, password, token: signupToken(verified) };
  };
  const create = (body: Record<string, unknown>) => post(app(), '/api/v2/signup/accounts', body);
  /** Signs in again: a fresh signup-recovery token (a refused creation spent the previous one). */
  const freshToken = async (email: string, password: string) =>
    signupToken(await post(app(), '/auth/password', { email, password }));
  /** A creation refused because its token is spent. */
  const assertSpent = (res: Awaited<ReturnType<typeof create>>) => {
    assert.equal(res.statusCode, 422, res.body);
    assert.equal(res.json().error.field, 'verifiedSignupToken');
  };
  const tables = ['users', 'organizations', 'memberships', 'storefronts', 'account_signups', 'sessions'];

  before(async () => {
    platform = await startTestPlatform({ services: [mediaBuyingService], clock, logLines });
  });
  after(async () => {
    await platform?.close();
  });

  test('verified signup data: the non-secret form fields, for ten minutes', async () => {
    const { email, token } = await interrupted('Grace Hopper');
    const res = await get(app(), `/auth/verified-signup-data/${token}`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.deepEqual(res.json(), {
      data: {
        email,
        name: 'Grace Hopper',
        emailVerified: true,
        signupExperience: null,
        expiresAt: new Date(clock.nowMs() + 10 * MINUTE).toISOString(),
      },
      error: null,
    });
    clock.advance(10 * MINUTE);
    const expired = await get(app(), `/auth/verified-signup-data/${token}`);
    assert.equal(expired.statusCode, 404);
    assert.deepEqual(expired.json(), {
      data: null,
      error: { code: 'NOT_FOUND', message: 'Signup data not found.' },
    });
    const availability = await post(app(), '/api/v2/signup/email-availability', {
      verifiedSignupToken: token,
      email,
    });
    assert.equal(availability.statusCode, 422);
    assert.equal(availability.json().error.field, 'verifiedSignupToken');
    const created = await create({ verifiedSignupToken: token, accountType: 'DEVELOPER', name: 'Grace' });
    assert.equal(created.statusCode, 422);
    assert.equal(created.json().error.field, 'verifiedSignupToken');
    assert.equal((await get(app(), '/auth/verified-signup-data/mbv_unknown')).statusCode, 404);
    // The token travels in the path: the request log lines name the route, never the token.
    const logged = logLines.filter((line) => line.includes('/auth/verified-signup-data/'));
    assert.ok(logged.length >= 3, 'the requests were logged');
    assert.deepEqual(
      logLines.filter((line) => line.includes(token)),
      [],
    );
    assert.ok(logged.every((line) => line.includes('"path":"/auth/verified-signup-data/:token"')));
  });

  test('the token is bound to its identity: another email voids it', async () => {
    const { email, token } = await interrupted();
    await platform.booted.database.pool.query(
      `update media_buying.identities set email = 'moved@example.com' where email = $1`,
      [email],
    );
    assert.equal((await get(app(), `/auth/verified-signup-data/${token}`)).statusCode, 404);
  });

  test('email availability: the three flags follow the plan rollout and the account; the email must be the token’s', async () => {
    const { email, password, token } = await interrupted();
    const check = (verifiedSignupToken: string, address = email) =>
      post(app(), '/api/v2/signup/email-availability', { verifiedSignupToken, email: address });
    const closed = await check(token, email.toUpperCase());
    assert.equal(closed.statusCode, 200, closed.body);
    assert.deepEqual(closed.json().data, {
      email,
      storefrontAccountSignupAllowed: true,
      storefrontIuSignupAllowed: false,
      storefrontSignupAllowed: false,
    });
    await settings({ planRollout: 'open' });
    try {
      assert.deepEqual((await check(token)).json().data, {
        email,
        storefrontAccountSignupAllowed: true,
        storefrontIuSignupAllowed: true,
        storefrontSignupAllowed: true,
      });
      const other = await check(token, 'someone@example.com');
      assert.equal(other.statusCode, 422);
      assert.equal(other.json().error.field, 'email');

      // A second token of the same identity (another sign-in); the first creates the account.
      const second = signupToken(await post(app(), '/auth/password', { email, password }));
      const made = await create({ verifiedSignupToken: token, accountType: 'DEVELOPER', name: 'Dev' });
      assert.equal(made.statusCode, 201, made.body);
      assert.deepEqual((await check(second)).json().data, {
        email,
        storefrontAccountSignupAllowed: false,
        storefrontIuSignupAllowed: false,
        storefrontSignupAllowed: false,
      });
      const twice = await create({ verifiedSignupToken: second, accountType: 'DEVELOPER', name: 'Dev' });
      assert.equal(twice.statusCode, 409, twice.body);
      assert.equal(twice.json().error.code, 'CONFLICT');
      assert.equal((await check(token)).statusCode, 422, 'a consumed token');
    } finally {
      await settings({ planRollout: 'closed' });
    }
  });

  test('a media company: the user, an admitted Seller Account it administers, its first storefront, and a session', async () => {
    const { email, token } = await interrupted();
    const res = await create({
      verifiedSignupToken: token,
      accountType: 'MEDIA_COMPANY',
      name: 'Ada Lovelace',
      organizationName: 'Analytical Media',
      storefront: { name: 'Analytical Storefront', currency: 'EUR' },
    });
    assert.equal(res.statusCode, 201, res.body);
    const data = res.json().data;
    assert.equal(data.user.email, email);
    assert.equal(data.user.name, 'Ada Lovelace');
    assert.equal(data.organization.kind, 'seller');
    assert.equal(data.organization.status, 'admitted');
    assert.equal(data.organization.name, 'Analytical Media');
    assert.deepEqual(
      { name: data.storefront.name, currency: data.storefront.currency },
      {
        name: 'Analytical Storefront',
        currency: 'EUR',
      },
    );
    assert.match(data.storefront.id, /^sf_[0-9a-f]{32}$/);
    const me = await get(app(), '/auth/me', sessionCookie(res));
    assert.equal(me.statusCode, 200, me.body);
    assert.equal(me.json().data.organization.id, data.organization.id);
    assert.equal(me.json().data.role, 'admin');
    const again = await create({ verifiedSignupToken: token, accountType: 'DEVELOPER', name: 'Again' });
    assert.equal(again.statusCode, 422, 'the token was consumed');
    const { rows } = await platform.booted.database.pool.query(
      `select account_type, plan, signup_code from media_buying.account_signups s
         join media_buying.users u on u.id = s.user_id where u.email = $1`,
      [email],
    );
    assert.deepEqual(rows, [{ account_type: 'MEDIA_COMPANY', plan: null, signup_code: null }]);
  });

  test('plan selection and signup codes are refused while the plan rollout is closed; a refused attempt spends the token', async () => {
    const { email, password, token } = await interrupted();
    const form = {
      verifiedSignupToken: token,
      accountType: 'MEDIA_COMPANY',
      name: 'P',
      organizationName: 'P Media',
    };
    const before = await counts(platform, tables);
    for (const extra of [{ plan: 'growth' }, { signupCode: 'EARLY-2026' }]) {
      form.verifiedSignupToken = await freshToken(email, password);
      const res = await create({ ...form, ...extra });
      assert.equal(res.statusCode, 422, res.body);
      const field = Object.keys(extra)[0]!;
      assert.deepEqual(res.json().error, {
        code: 'VALIDATION_ERROR',
        message: 'Plan selection and signup codes are not available yet; sign up without them.',
        field,
        details: {
          issues: [
            {
              field,
              location: 'body',
              message: 'is not accepted yet: plan selection and signup codes are not open',
            },
          ],
        },
      });
    }
    assert.deepEqual(await counts(platform, tables), before, 'nothing written');
    // "After a failed attempt the user authenticates again for a fresh token": the refused token is spent.
    assertSpent(await create(form));
    assert.notEqual(form.verifiedSignupToken, token);
    assert.equal(
      (await create({ ...form, verifiedSignupToken: await freshToken(email, password) })).statusCode,
      201,
    );

    await settings({ planRollout: 'open' });
    try {
      const open = await interrupted();
      const made = await create({
        verifiedSignupToken: open.token,
        accountType: 'MEDIA_COMPANY',
        name: 'Q',
        organizationName: 'Q Media',
        plan: 'growth',
        signupCode: 'EARLY-2026',
      });
      assert.equal(made.statusCode, 201, made.body);
      const { rows } = await platform.booted.database.pool.query(
        `select plan, signup_code from media_buying.account_signups s join media_buying.users u on u.id = s.user_id
          where u.email = $1`,
        [open.email],
      );
      assert.deepEqual(rows, [{ plan: 'growth', signup_code: 'EARLY-2026' }]);
      const dev = await interrupted();
      const wrong = await create({
        verifiedSignupToken: dev.token,
        accountType: 'DEVELOPER',
        name: 'D',
        plan: 'starter',
      });
      assert.equal(wrong.statusCode, 422);
      assert.equal(wrong.json().error.field, 'plan');
    } finally {
      await settings({ planRollout: 'closed' });
    }
  });

  test('buyer accounts are refused while buyer signup is waitlisted and admitted once it is open; a developer gets no organization', async () => {
    const { email, password } = await interrupted();
    const before = await counts(platform, tables);
    let token = '';
    for (const accountType of ['ADVERTISER', 'ADVERTISER_PORTFOLIO']) {
      token = await freshToken(email, password);
      const res = await create({
        verifiedSignupToken: token,
        accountType,
        name: 'B',
        organizationName: 'B Ads',
      });
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(res.json().error.code, 'FORBIDDEN');
      assert.deepEqual(res.json().error.details, { reason: 'buyer_signup_waitlisted' });
    }
    assert.deepEqual(await counts(platform, tables), before);
    assertSpent(await create({ verifiedSignupToken: token, accountType: 'DEVELOPER', name: 'B' }));

    await settings({ buyerSignup: 'open' });
    try {
      const res = await create({
        verifiedSignupToken: await freshToken(email, password),
        accountType: 'ADVERTISER',
        name: 'B',
        organizationName: 'B Ads',
      });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().data.organization.kind, 'buyer');
      assert.equal(res.json().data.organization.status, 'admitted');
      assert.equal(res.json().data.storefront, null);
      const me = (await get(app(), '/auth/me', sessionCookie(res))).json().data;
      assert.equal(me.role, 'admin');
      assert.deepEqual(me.access, { buyer: 'admin', seller: 'admin' });
    } finally {
      await settings({ buyerSignup: 'waitlisted' });
    }

    const dev = await interrupted();
    const made = await create({ verifiedSignupToken: dev.token, accountType: 'DEVELOPER', name: 'Dev' });
    assert.equal(made.statusCode, 201, made.body);
    assert.deepEqual(
      { organization: made.json().data.organization, storefront: made.json().data.storefront },
      {
        organization: null,
        storefront: null,
      },
    );
    const me = (await get(app(), '/auth/me', sessionCookie(made))).json().data;
    assert.deepEqual(
      { organization: me.organization, memberships: me.memberships },
      { organization: null, memberships: [] },
    );
    const missing = await interrupted();
    const noName = await create({
      verifiedSignupToken: missing.token,
      accountType: 'MEDIA_COMPANY',
      name: 'M',
    });
    assert.equal(noName.statusCode, 422);
    assert.equal(noName.json().error.field, 'organizationName');
  });

  test('concurrent creations with one token make one account; the others are refused', async () => {
    const { email, token } = await interrupted();
    const before = await counts(platform, tables);
    const results = await Promise.all(
      [1, 2, 3].map((i) =>
        create({
          verifiedSignupToken: token,
          accountType: 'MEDIA_COMPANY',
          name: `Racer ${i}`,
          organizationName: `Race ${i}`,
        }),
      ),
    );
    assert.deepEqual(
      results.map((r) => r.statusCode).sort(),
      [201, 422, 422],
      results.map((r) => r.body).join('\n'),
    );
    for (const loser of results.filter((r) => r.statusCode === 422))
      assert.equal(loser.json().error.field, 'verifiedSignupToken');
    const after = await counts(platform, tables);
    assert.deepEqual(Object.fromEntries(tables.map((t) => [t, after[t]! - before[t]!])), {
      users: 1,
      organizations: 1,
      memberships: 1,
      storefronts: 1,
      account_signups: 1,
      sessions: 1,
    });
    const { rows } = await platform.booted.database.pool.query(
      'select count(*)::int as n from media_buying.users where email = $1',
      [email],
    );
    assert.equal(rows[0].n, 1);
  });

  test('password reset: one answer for every email; the link sets a new password under the policy, once, for 30 minutes, ending the other sessions', async () => {
    const email = 'resetter@example.com';
    const orgId = platform.credentials('media-buying').organizationId as string;
    const oldPassword = strongPassword();
    const added = await app().inject({
      method: 'POST',
      url: `/_ops/organizations/${orgId}/members`,
      headers: { authorization: platform.operatorAuth },
      payload: { email, name: 'Resetter', password: oldPassword, role: 'member' },
    });
    assert.equal(added.statusCode, 201, added.body);
    const first = sessionCookie(await post(app(), '/auth/password', { email, password: oldPassword }));
    const second = sessionCookie(await post(app(), '/auth/password', { email, password: oldPassword }));

    const unknown = await post(app(), '/auth/password-reset', { email: 'no-such-person@example.com' });
    const known = await post(app(), '/auth/password-reset', { email });
    assert.equal(unknown.statusCode, 202);
    assert.equal(known.body, unknown.body);
    assert.deepEqual(known.json(), { data: { message: GENERIC_MESSAGES.passwordReset }, error: null });
    await platform.runDueJobs();
    assert.deepEqual(await mailTo(platform, 'no-such-person@example.com'), []);
    const linkOf = async () => {
      const [mail] = await mailTo(platform, email);
      assert.equal(mail?.kind, 'password_reset');
      const token = /\/reset-password#token=(mbp_[A-Za-z0-9_-]{43})/.exec(mail!.text)?.[1];
      assert.ok(token, mail!.text);
      return token;
    };
    const token = await linkOf();

    const weak = await post(app(), '/auth/password-reset/confirm', {
      token,
      password: 'resetter@example.com',
    });
    assert.equal(weak.statusCode, 422, weak.body);
    assert.equal(weak.json().error.field, 'password');
    const newPassword = strongPassword();
    const done = await post(app(), '/auth/password-reset/confirm', { token, password: newPassword });
    assert.equal(done.statusCode, 200, done.body);
    assert.equal(done.json().data.user.email, email);
    const fresh = sessionCookie(done);
    for (const ended of [first, second]) assert.equal((await get(app(), '/auth/me', ended)).statusCode, 401);
    assert.equal((await get(app(), '/auth/me', fresh)).statusCode, 200);
    assert.equal((await post(app(), '/auth/password', { email, password: oldPassword })).statusCode, 401);
    assert.equal((await post(app(), '/auth/password', { email, password: newPassword })).statusCode, 200);
    const reused = await post(app(), '/auth/password-reset/confirm', { token, password: strongPassword() });
    assert.equal(reused.statusCode, 422);
    assert.equal(reused.json().error.field, 'token');

    // Thirty minutes.
    await post(app(), '/auth/password-reset', { email });
    await platform.runDueJobs();
    const late = await linkOf();
    clock.advance(30 * MINUTE);
    assert.equal(
      (await post(app(), '/auth/password-reset/confirm', { token: late, password: strongPassword() }))
        .statusCode,
      422,
    );

    // Using one link ends the others.
    clock.advance(MINUTE);
    await post(app(), '/auth/password-reset', { email });
    await platform.runDueJobs();
    const a = await linkOf();
    await post(app(), '/auth/password-reset', { email });
    await platform.runDueJobs();
    const b = await linkOf();
    assert.notEqual(a, b);
    assert.equal(
      (await post(app(), '/auth/password-reset/confirm', { token: b, password: strongPassword() }))
        .statusCode,
      200,
    );
    assert.equal(
      (await post(app(), '/auth/password-reset/confirm', { token: a, password: strongPassword() }))
        .statusCode,
      422,
    );
  });

  test("a reset proves the email of a pending signup: the signup's code, and the password it carried, die", async () => {
    const email = 'pending-reset@example.com';
    const squatted = strongPassword();
    assert.equal(
      (await post(app(), '/auth/signup', { email, password: squatted, name: 'Squatter' })).statusCode,
      202,
    );
    await platform.runDueJobs();
    const signupCode = await latestCode(platform, email);
    assert.equal((await post(app(), '/auth/password-reset', { email })).statusCode, 202);
    await platform.runDueJobs();
    const [mail] = await mailTo(platform, email);
    const token = /#token=(mbp_[A-Za-z0-9_-]{43})/.exec(mail!.text)![1]!;
    const chosen = strongPassword();
    const done = await post(app(), '/auth/password-reset/confirm', { token, password: chosen });
    assert.equal(done.statusCode, 200, done.body);
    signupToken(done);
    assert.equal((await post(app(), '/auth/verify-code', { email, code: signupCode })).statusCode, 401);
    assert.equal((await post(app(), '/auth/password', { email, password: squatted })).statusCode, 401);
    assert.equal((await post(app(), '/auth/password', { email, password: chosen })).statusCode, 200);
  });
});
