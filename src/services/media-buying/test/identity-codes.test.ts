/**
 * Signup, sign-in codes and their limits (spec "Sign-in and signup": `POST /auth/magic-code` always answers the same,
 * `POST /auth/verify-code`; "Authentication" rule 5; issue 16: codes are six digits, ten minutes, single use, five
 * attempts; sending is limited per email and per client address; wrong codes count as failed sign-ins). Every expiry
 * is crossed by moving the injected clock.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
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
  queuedJobs,
  sessionCookie,
  signUpAndVerify,
  signupToken,
  strongPassword,
} from './identity-support.ts';

const MINUTE = 60_000;

describe('media-buying identity: signup and sign-in codes', () => {
  const clock = new ManualClock(new Date('2026-11-24T09:00:00Z'));
  let platform: TestPlatform;
  let orgId: string;
  const app = () => platform.app('media-buying');
  const ops = () => ({ authorization: platform.operatorAuth });

  /** Adds a member (an account with a verified email and a password) to the demo Buyer Account. */
  const addMember = async (email: string, password = strongPassword()) => {
    const res = await app().inject({
      method: 'POST',
      url: `/_ops/organizations/${orgId}/members`,
      headers: ops(),
      payload: { email, name: 'Member', password, role: 'member' },
    });
    assert.equal(res.statusCode, 201, res.body);
    return { userId: (res.json() as { userId: string }).userId, password };
  };

  before(async () => {
    platform = await startTestPlatform({ services: [mediaBuyingService], clock });
    orgId = platform.credentials('media-buying').organizationId as string;
  });
  after(async () => {
    await platform?.close();
  });

  test('signup mails a code; its password signs in only once the code verified the email; then the signup is interrupted', async () => {
    const email = 'newcomer@example.com';
    const password = strongPassword();
    const before = await counts(platform, ['identities', 'magic_codes']);
    const res = await post(app(), '/auth/signup', { email, password, name: 'New Comer' });
    assert.equal(res.statusCode, 202);
    assert.deepEqual(res.json(), { data: { message: GENERIC_MESSAGES.signup }, error: null });
    // The request only queued the job: no identity, no code yet.
    assert.deepEqual(await counts(platform, ['identities', 'magic_codes']), before);
    assert.equal((await queuedJobs(platform)).at(-1)?.task, 'media-buying:register-identity');
    await platform.runDueJobs();
    const [mail] = await mailTo(platform, email);
    assert.equal(mail?.kind, 'signup_verification');

    // The chosen password is pending on the code: it does not sign in yet.
    const early = await post(app(), '/auth/password', { email, password });
    assert.equal(early.statusCode, 401);
    assert.deepEqual(early.json().error, { code: 'UNAUTHORIZED', message: 'Invalid email or password.' });

    const code = await latestCode(platform, email);
    // The code is sent with the password chosen at signup: that is what installs it.
    const verified = await post(app(), '/auth/verify-code', { email, code, password });
    assert.equal(verified.statusCode, 200, verified.body);
    const data = verified.json().data as { requiresSignup: boolean; redirectUrl: string };
    assert.equal(data.requiresSignup, true);
    assert.match(data.redirectUrl, /^\/signup\?pending=true&token=mbv_[A-Za-z0-9_-]{43}$/);
    assert.equal(verified.headers['set-cookie'], undefined, 'no session without an account');

    // Now the password works, and leads to the same interrupted signup.
    const later = await post(app(), '/auth/password', { email, password });
    assert.equal(later.statusCode, 200, later.body);
    signupToken(later);

    // Signing up again: the same answer; the mail says there is an account already (and carries no code).
    const again = await post(app(), '/auth/signup', {
      email,
      password: strongPassword(),
      name: 'Someone Else',
    });
    assert.equal(again.statusCode, 202);
    assert.equal(again.body, res.body);
    await platform.runDueJobs();
    const [existing] = await mailTo(platform, email);
    assert.equal(existing?.kind, 'signup_existing');
    assert.doesNotMatch(existing!.text, /\b\d{6}\b/);
    // ...and the password did not change.
    assert.equal((await post(app(), '/auth/password', { email, password })).statusCode, 200);
  });

  test("someone who signs up with another person's email never sets their password: the code alone verifies, installs nothing", async () => {
    const email = 'victim@example.com';
    const attackers = strongPassword();
    assert.equal(
      (await post(app(), '/auth/signup', { email, password: attackers, name: 'Not the owner' })).statusCode,
      202,
    );
    await platform.runDueJobs();
    // The mailbox's owner enters the code they received (without the attacker's password): signed in, email proven.
    const verified = await post(app(), '/auth/verify-code', {
      email,
      code: await latestCode(platform, email),
    });
    assert.equal(verified.statusCode, 200, verified.body);
    assert.equal(verified.json().data.requiresSignup, true);
    // The password the attacker chose does not sign in.
    const attacker = await post(app(), '/auth/password', { email, password: attackers });
    assert.equal(attacker.statusCode, 401);
    // A wrong password sent with the code installs nothing either.
    const other = 'else@example.com';
    const chosen = strongPassword();
    await post(app(), '/auth/signup', { email: other, password: chosen, name: 'Else' });
    await platform.runDueJobs();
    await post(app(), '/auth/verify-code', {
      email: other,
      code: await latestCode(platform, other),
      password: strongPassword(),
    });
    assert.equal((await post(app(), '/auth/password', { email: other, password: chosen })).statusCode, 401);
  });

  test('an email proven another way (an invitation, the operator) ends the codes mailed before, with their pending password', async () => {
    const email = 'proven-elsewhere@example.com';
    const pending = strongPassword();
    await post(app(), '/auth/signup', { email, password: pending, name: 'Pending' });
    await platform.runDueJobs();
    const code = await latestCode(platform, email);
    await addMember(email);
    const late = await post(app(), '/auth/verify-code', { email, code, password: pending });
    assert.equal(late.statusCode, 401, 'the code died when the email was proven');
    assert.equal((await post(app(), '/auth/password', { email, password: pending })).statusCode, 401);
  });

  test('a signup with a short, breached or guessable password is a 422 and queues nothing', async () => {
    const jobs = (await queuedJobs(platform)).length;
    for (const [password, message] of [
      ['short1', 'must be at least 10 characters'],
      ['password123', 'appears in a list of breached passwords; choose another'],
    ] as const) {
      const res = await post(app(), '/auth/signup', { email: 'weak@example.com', password, name: 'Weak' });
      assert.equal(res.statusCode, 422, res.body);
      assert.deepEqual(res.json().error, {
        code: 'VALIDATION_ERROR',
        message: `Invalid request: password ${message}.`,
        field: 'password',
        details: { issues: [{ field: 'password', location: 'body', message }] },
      });
    }
    const guessable = await post(app(), '/auth/signup', {
      email: 'weak@example.com',
      password: 'weak@example.com1',
      name: 'Weak',
    });
    assert.equal(guessable.statusCode, 422);
    assert.equal(guessable.json().error.field, 'password');
    assert.equal((await queuedJobs(platform)).length, jobs);
  });

  test('magic-code: one answer and the same request-time work for every account state; the job decides', async () => {
    // The states: no identity; a pending signup; a verified identity without an account; an account; a disabled one.
    const unknown = 'nobody@example.com';
    const pending = 'pending@example.com';
    const verifiedOnly = 'verified-only@example.com';
    const member = 'member-codes@example.com';
    const disabled = 'disabled@example.com';
    assert.equal(
      (await post(app(), '/auth/signup', { email: pending, password: strongPassword(), name: 'P' }))
        .statusCode,
      202,
    );
    await signUpAndVerify(platform, verifiedOnly, strongPassword());
    await addMember(member);
    const gone = await addMember(disabled);
    const off = await app().inject({
      method: 'POST',
      url: `/_ops/users/${gone.userId}/disable`,
      headers: ops(),
    });
    assert.equal(off.statusCode, 200, off.body);
    await platform.runDueJobs();

    const tables = ['identities', 'magic_codes', 'mail_outbox', 'users', 'sessions'];
    const answers: string[] = [];
    for (const email of [unknown, pending, verifiedOnly, member, disabled]) {
      const jobsBefore = await queuedJobs(platform);
      const before = await counts(platform, tables);
      const res = await post(app(), '/auth/magic-code', { email });
      assert.equal(res.statusCode, 202, `${email}: ${res.body}`);
      answers.push(res.body);
      // The request wrote nothing that depends on the account: one job of the same task, with the email only.
      assert.deepEqual(await counts(platform, tables), before, email);
      const jobs = await queuedJobs(platform);
      assert.deepEqual(jobs.slice(jobsBefore.length), [
        { task: 'media-buying:send-sign-in-code', payload: { email } },
      ]);
    }
    assert.equal(new Set(answers).size, 1, 'every answer is the same');
    assert.deepEqual(JSON.parse(answers[0]!), { data: { message: GENERIC_MESSAGES.magicCode }, error: null });

    await platform.runDueJobs();
    const kinds = async (email: string) => (await mailTo(platform, email)).map((m) => m.kind);
    assert.deepEqual(await kinds(unknown), []);
    assert.equal((await kinds(pending))[0], 'magic_code');
    assert.equal((await kinds(verifiedOnly))[0], 'magic_code');
    assert.equal((await kinds(member))[0], 'magic_code');
    assert.deepEqual(await kinds(disabled), [], 'a disabled user gets no code');

    // The member signs in with the code; the verified identity without an account resumes its signup.
    const signedIn = await post(app(), '/auth/verify-code', {
      email: member,
      code: await latestCode(platform, member),
    });
    assert.equal(signedIn.statusCode, 200, signedIn.body);
    assert.equal(signedIn.json().data.requiresSignup, false);
    const me = await get(app(), '/auth/me', sessionCookie(signedIn));
    assert.equal(me.statusCode, 200, me.body);
    assert.equal(me.json().data.user.email, member);
    const resumed = await post(app(), '/auth/verify-code', {
      email: verifiedOnly,
      code: await latestCode(platform, verifiedOnly),
    });
    signupToken(resumed);
  });

  test('a code expires after 10 minutes, works once, dies after 5 wrong attempts; a new code replaces the old one', async () => {
    const email = 'codes-life@example.com';
    await addMember(email);
    const ask = async () => {
      assert.equal((await post(app(), '/auth/magic-code', { email })).statusCode, 202);
      await platform.runDueJobs();
      return latestCode(platform, email);
    };
    const refused = { data: null, error: { code: 'UNAUTHORIZED', message: 'Invalid or expired code.' } };
    const verify = (code: string) => post(app(), '/auth/verify-code', { email, code });
    const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

    const first = await ask();
    // The code is readable only in the sealed body: no column of the outbox holds it in clear.
    const clear = new pg.Client({ connectionString: platform.database.url });
    await clear.connect();
    try {
      const rows = (await clear.query('select * from media_buying.mail_outbox')).rows as Record<
        string,
        unknown
      >[];
      assert.ok(rows.length > 0);
      assert.ok(!JSON.stringify(rows).includes(first), 'the code is in no clear-text column of the outbox');
    } finally {
      await clear.end();
    }
    clock.advance(10 * MINUTE - 1000);
    const stillGood = await ask(); // the first is replaced by this one
    const replaced = await verify(first);
    assert.equal(replaced.statusCode, 401);
    assert.deepEqual(replaced.json(), refused);
    clock.advance(10 * MINUTE + 1000);
    const expired = await verify(stillGood);
    assert.equal(expired.statusCode, 401, 'ten minutes later the code is expired');

    clock.advance(16 * MINUTE); // a new throttle window
    const attempts = await ask();
    for (let i = 0; i < 5; i++) assert.equal((await verify(wrong(attempts))).statusCode, 401);
    const dead = await verify(attempts);
    assert.equal(dead.statusCode, 401, 'after five wrong guesses the right code is refused too');
    assert.deepEqual(dead.json(), refused);

    clock.advance(16 * MINUTE);
    const good = await ask();
    clock.advance(10 * MINUTE - 1000);
    const ok = await verify(good);
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json().data.user.email, email);
    sessionCookie(ok);
    const again = await verify(good);
    assert.equal(again.statusCode, 401, 'a code works once');
  });

  test('wrong codes are failed sign-ins of the account and of the client address, shared with passwords', async () => {
    clock.advance(30 * MINUTE);
    const email = 'throttled@example.com';
    const { password } = await addMember(email);
    assert.equal((await post(app(), '/auth/magic-code', { email })).statusCode, 202);
    await platform.runDueJobs();
    const code = await latestCode(platform, email);
    // Five wrong passwords and five wrong codes: the account's ten failures.
    const wrongCode = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++)
      assert.equal(
        (await post(app(), '/auth/password', { email, password: `${password}x` })).statusCode,
        401,
      );
    for (let i = 0; i < 4; i++)
      assert.equal((await post(app(), '/auth/verify-code', { email, code: wrongCode })).statusCode, 401);
    clock.advance(MINUTE);
    assert.equal((await post(app(), '/auth/verify-code', { email, code: wrongCode })).statusCode, 401);
    const limited = await post(app(), '/auth/verify-code', { email, code });
    assert.equal(limited.statusCode, 429, limited.body);
    assert.equal(limited.json().error.code, 'RATE_LIMITED');
    assert.equal(
      limited.headers['retry-after'],
      String(14 * 60),
      'until the window (15 minutes from the first failure) ends',
    );
    assert.equal((await post(app(), '/auth/password', { email, password })).statusCode, 429);

    clock.advance(14 * MINUTE);
    // The code died meanwhile (five wrong guesses): ask a new one; the window has ended.
    assert.equal((await post(app(), '/auth/magic-code', { email })).statusCode, 202);
    await platform.runDueJobs();
    const fresh = await post(app(), '/auth/verify-code', { email, code: await latestCode(platform, email) });
    assert.equal(fresh.statusCode, 200, fresh.body);

    // Per client address: 30 failures from one address, whatever the emails, then every attempt from it is refused.
    const address = '203.0.113.9';
    for (let i = 0; i < 30; i++) {
      const res = await post(
        app(),
        '/auth/verify-code',
        { email: `guess${i}@example.com`, code: '123456' },
        {
          remoteAddress: address,
        },
      );
      assert.equal(res.statusCode, 401, res.body);
    }
    const blocked = await post(
      app(),
      '/auth/verify-code',
      { email: 'other@example.com', code: '123456' },
      {
        remoteAddress: address,
      },
    );
    assert.equal(blocked.statusCode, 429);
    const elsewhere = await post(
      app(),
      '/auth/verify-code',
      { email: 'other@example.com', code: '123456' },
      {
        remoteAddress: '203.0.113.10',
      },
    );
    assert.equal(elsewhere.statusCode, 401, 'another address is not limited');
  });

  test('mail is limited per email (5 per 15 minutes, signup, codes and resets together) and per client address (20)', async () => {
    clock.advance(30 * MINUTE);
    const email = 'mail-budget@example.com';
    const sends = [
      () => post(app(), '/auth/magic-code', { email }),
      () => post(app(), '/auth/password-reset', { email }),
      () => post(app(), '/auth/signup', { email, password: strongPassword(), name: 'Budget' }),
      () => post(app(), '/auth/magic-code', { email }),
      () => post(app(), '/auth/magic-code', { email }),
    ];
    for (const send of sends) assert.equal((await send()).statusCode, 202);
    const jobs = (await queuedJobs(platform)).length;
    const limited = await post(app(), '/auth/magic-code', { email });
    assert.equal(limited.statusCode, 429, limited.body);
    assert.equal(limited.json().error.code, 'RATE_LIMITED');
    assert.equal(limited.headers['retry-after'], String(15 * 60));
    assert.equal((await post(app(), '/auth/password-reset', { email })).statusCode, 429);
    assert.equal((await queuedJobs(platform)).length, jobs, 'a refused request queues nothing');
    assert.equal((await post(app(), '/auth/magic-code', { email: 'another@example.com' })).statusCode, 202);
    clock.advance(15 * MINUTE);
    assert.equal((await post(app(), '/auth/magic-code', { email })).statusCode, 202, 'a new window');

    const address = '198.51.100.7';
    for (let i = 0; i < 20; i++)
      assert.equal(
        (
          await post(
            app(),
            '/auth/magic-code',
            { email: `visitor${i}@example.com` },
            { remoteAddress: address },
          )
        ).statusCode,
        202,
      );
    const crowded = await post(
      app(),
      '/auth/magic-code',
      { email: 'visitor-x@example.com' },
      { remoteAddress: address },
    );
    assert.equal(crowded.statusCode, 429);
    await platform.runDueJobs();
  });

  test('the hourly housekeeping deletes codes, states and links expired a day ago, and ended throttle windows', async () => {
    const pool = platform.booted.database.pool;
    assert.equal(
      (await post(app(), '/auth/magic-code', { email: 'member-codes@example.com' })).statusCode,
      202,
    );
    assert.equal(
      (await post(app(), '/auth/password-reset', { email: 'member-codes@example.com' })).statusCode,
      202,
    );
    assert.equal((await get(app(), '/auth/url')).statusCode, 200);
    await platform.runDueJobs();
    const live = await counts(platform, [
      'magic_codes',
      'sign_in_states',
      'password_resets',
      'sign_in_throttle',
    ]);
    for (const [table, n] of Object.entries(live)) assert.ok(n > 0, `${table} has rows`);
    const prune = () =>
      pool.query(`select graphile_worker.add_job('media-buying:prune-sign-in-throttle', '{}'::json)`);
    clock.advance(23 * 60 * MINUTE);
    await prune();
    await platform.runDueJobs();
    const early = await counts(platform, ['magic_codes', 'sign_in_states', 'password_resets']);
    assert.ok(early.magic_codes! > 0 && early.sign_in_states! > 0, 'kept for a day after expiry');
    clock.advance(2 * 60 * MINUTE);
    await prune();
    await platform.runDueJobs();
    assert.deepEqual(
      await counts(platform, ['magic_codes', 'sign_in_states', 'password_resets', 'sign_in_throttle']),
      {
        magic_codes: 0,
        sign_in_states: 0,
        password_resets: 0,
        sign_in_throttle: 0,
      },
    );
  });
});
