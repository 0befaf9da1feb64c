/**
 * Staged buyer admission, first stage: the advertiser preview form (spec "Signup": "While closed, choosing Advertiser
 * opens a preview form; an accepted form sends a receipt to the submitted work email. The receipt means details were
 * received, not that an account or access exists").
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import {
  assertError,
  json,
  type MediaBuyingHarness,
  STRONG_PASSWORD,
  startMediaBuying,
  UI_ORIGIN,
} from './support.ts';

const FORM = {
  workEmail: 'Ada@Acme-Outdoor.example',
  name: 'Ada Lovelace',
  company: 'Acme Outdoor <b>Spam</b>',
  message: 'Visit http://spam.example for cheap watches',
  signupExperience: 'ADVERTISER',
};

describe('advertiser preview form', () => {
  let h: MediaBuyingHarness;
  let db: pg.Client;
  const counts = async () => {
    const { rows } = await db.query(`select
      (select count(*)::int from media_buying.identities) as identities,
      (select count(*)::int from media_buying.users) as users,
      (select count(*)::int from media_buying.organizations) as organizations,
      (select count(*)::int from media_buying.memberships) as memberships,
      (select count(*)::int from media_buying.sessions) as sessions,
      (select count(*)::int from media_buying.user_api_keys) as keys,
      (select count(*)::int from media_buying.invitations) as invitations,
      (select count(*)::int from media_buying.advertiser_previews) as previews,
      (select count(*)::int from media_buying.mail_outbox) as mail`);
    return rows[0] as {
      identities: number;
      users: number;
      organizations: number;
      memberships: number;
      sessions: number;
      keys: number;
      invitations: number;
      previews: number;
      mail: number;
    };
  };
  const submit = (body: unknown, remoteAddress?: string, headers?: Record<string, string>) =>
    h.send({ method: 'POST', url: '/api/v2/signup/advertiser-preview', body, remoteAddress, headers });

  before(async () => {
    h = await startMediaBuying();
    db = new pg.Client({ connectionString: h.platform.database.url });
    await db.connect();
  });
  after(async () => {
    await db.end();
    await h.close();
  });

  test('an accepted form is stored and sends a receipt that says received and nothing more: no account, organization or access', async () => {
    const before = await counts();
    const res = await submit(FORM);
    assert.equal(res.statusCode, 202, res.body);
    const body = json(res);
    assert.equal(body.error, null);
    assert.match(body.data.id, /^apv_[0-9a-f]{32}$/);
    assert.equal(body.data.receivedAt, '2026-11-24T12:00:00.000Z');
    assert.equal(body.data.duplicate, false);

    const afterCounts = await counts();
    assert.deepEqual(afterCounts, { ...before, previews: before.previews + 1, mail: before.mail + 1 });

    const mail = await h.mailTo('ada@acme-outdoor.example');
    assert.equal(mail.length, 1);
    assert.equal(mail[0]!.kind, 'preview_receipt');
    assert.equal(mail[0]!.subject, 'We received your details');
    assert.match(mail[0]!.text, /We received the details/);
    assert.match(mail[0]!.text, /does not create an account and does not give access/);
    // Nothing the form carried is relayed to the (unverified) address, and no link is offered.
    for (const echoed of ['Ada', 'Acme', 'Spam', 'spam.example', 'http', 'token'])
      assert.ok(!mail[0]!.text.includes(echoed), `the receipt does not contain "${echoed}"`);

    // The email cannot sign in (there is no account), with any password.
    const signIn = await h.send({
      method: 'POST',
      url: '/auth/password',
      body: { email: FORM.workEmail, password: STRONG_PASSWORD },
    });
    assertError(signIn, 401, 'UNAUTHORIZED');
    const { rows } = await db.query(
      `select count(*)::int as n from media_buying.organizations where name like 'Acme%'`,
    );
    assert.equal(rows[0].n, 0, 'no organization was created');

    // The operator reads the form (who asks to be admitted), e-mail lower-cased.
    const listed = json(await h.ops('GET', '/_ops/advertiser-previews'));
    assert.deepEqual(listed.previews[0], {
      id: body.data.id,
      workEmail: 'ada@acme-outdoor.example',
      name: 'Ada Lovelace',
      company: 'Acme Outdoor <b>Spam</b>',
      message: 'Visit http://spam.example for cheap watches',
      signupExperience: 'ADVERTISER',
      receivedAt: '2026-11-24T12:00:00.000Z',
    });
  });

  test('the same form sent again answers the first one, with no second receipt (a retry is safe)', async () => {
    const form = { ...FORM, workEmail: 'retry@acme.example' };
    const first = json(await submit(form)).data;
    const again = await submit(form);
    assert.equal(again.statusCode, 202);
    assert.deepEqual(json(again).data, { ...first, duplicate: true });
    assert.equal((await h.mailTo('retry@acme.example')).length, 1);
  });

  test('at most 3 forms per work email a day: the 4th is 429 with Retry-After until the first leaves the window', async () => {
    const email = 'cannon@victim.example';
    for (let i = 0; i < 3; i += 1) {
      const res = await submit({ ...FORM, workEmail: email, message: `form ${i}` });
      assert.equal(res.statusCode, 202, res.body);
      h.clock.advance(60_000);
    }
    const before = await counts();
    const refused = await submit({ ...FORM, workEmail: email, message: 'form 4' });
    assertError(refused, 429, 'RATE_LIMITED');
    // The first form was 3 minutes ago: it leaves the 24-hour window in 24 h - 3 min.
    assert.equal(refused.headers['retry-after'], String(24 * 3600 - 180));
    assert.deepEqual(await counts(), before, 'a refused form stores and mails nothing');
    assert.equal((await h.mailTo(email)).length, 3);

    h.clock.advance((24 * 3600 - 180) * 1000);
    assert.equal((await submit({ ...FORM, workEmail: email, message: 'form 5' })).statusCode, 202);
  });

  test('concurrent forms for one email cannot pass the limit together', async () => {
    const email = 'burst@victim.example';
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => submit({ ...FORM, workEmail: email, message: `burst ${i}` })),
    );
    assert.deepEqual(
      answers.map((a) => a.statusCode).sort(),
      [202, 202, 202, 429, 429, 429],
      answers.map((a) => a.body).join('\n'),
    );
    assert.equal((await h.mailTo(email)).length, 3);
  });

  test('at most 10 forms per client address an hour (other addresses and loopback are not affected)', async () => {
    const address = '203.0.113.7';
    for (let i = 0; i < 10; i += 1) {
      const res = await submit({ ...FORM, workEmail: `person${i}@spray.example` }, address);
      assert.equal(res.statusCode, 202, res.body);
    }
    const refused = await submit({ ...FORM, workEmail: 'person10@spray.example' }, address);
    assertError(refused, 429, 'RATE_LIMITED');
    assert.equal(refused.headers['retry-after'], '3600');
    assert.equal(
      (await submit({ ...FORM, workEmail: 'other@spray.example' }, '198.51.100.9')).statusCode,
      202,
    );
    for (let i = 0; i < 11; i += 1)
      assert.equal((await submit({ ...FORM, workEmail: `local${i}@spray.example` })).statusCode, 202);
    h.clock.advance(3600 * 1000);
    assert.equal((await submit({ ...FORM, workEmail: 'person10@spray.example' }, address)).statusCode, 202);
  });

  test('while buyer signup is open the form is refused (409 buyer_signup_open), nothing stored or mailed', async () => {
    assert.equal((await h.ops('PATCH', '/_ops/settings', { buyerSignup: 'open' })).statusCode, 200);
    try {
      const before = await counts();
      const res = await submit({ ...FORM, workEmail: 'late@acme.example' });
      assertError(res, 409, 'CONFLICT', 'buyer_signup_open');
      assert.deepEqual(await counts(), before);
    } finally {
      await h.ops('PATCH', '/_ops/settings', { buyerSignup: 'waitlisted' });
    }
    assert.equal((await submit({ ...FORM, workEmail: 'late@acme.example' })).statusCode, 202);
  });

  test('a browser on another origin is refused (rule 4); a malformed form is a 400 naming the field', async () => {
    const foreign = await submit({ ...FORM, workEmail: 'x@acme.example' }, undefined, {
      origin: 'https://evil.example',
    });
    assertError(foreign, 403, 'FORBIDDEN', 'origin_not_allowed');
    const fromUi = await submit({ ...FORM, workEmail: 'x@acme.example' }, undefined, { origin: UI_ORIGIN });
    assert.equal(fromUi.statusCode, 202);

    const { company: _omitted, ...withoutCompany } = FORM;
    const missing = await submit(withoutCompany);
    assertError(missing, 400, 'VALIDATION_ERROR');
    assert.equal(json(missing).error.field, 'company');
    assertError(await submit({ ...FORM, workEmail: 'not-an-email' }), 400, 'VALIDATION_ERROR');
    assertError(await submit({ ...FORM, signupExperience: 'MEDIA_COMPANY' }), 400, 'VALIDATION_ERROR');
    assertError(await submit({ ...FORM, name: '   ' }), 400, 'VALIDATION_ERROR');
  });
});
