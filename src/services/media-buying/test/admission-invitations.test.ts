/**
 * Staged buyer admission after the preview: the operator admits an organization and sends its administrator the setup
 * invitation (with an optional Commercial Offer); invitations are read and accepted by their link's holder, work
 * while public buyer signup is waitlisted and only for an admitted organization (spec "Signup"; "Authentication" rule
 * 9); Commercial Offers are pending on arrival and decided in a separate step; administrators invite, list and revoke
 * members; ids of another organization are 404.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import {
  assertError,
  json,
  type MediaBuyingHarness,
  STRONG_PASSWORD,
  sessionCookieOf,
  startMediaBuying,
  tokenIn,
  UI_ORIGIN,
} from './support.ts';

const OFFER = { title: 'Launch pricing', terms: 'Platform fee of 8% of media spend for 12 months.' };
const SEVEN_DAYS_MS = 7 * 86_400_000;

describe('setup invitations, acceptance and Commercial Offers', () => {
  let h: MediaBuyingHarness;
  let db: pg.Client;

  /** Creates a waitlisted Buyer Account, admits it, and returns its id. */
  const admittedBuyer = async (name: string) => {
    const id = await h.createOrganization('buyer', name, false);
    const admitted = await h.ops('POST', `/_ops/organizations/${id}/admit`);
    assert.equal(admitted.statusCode, 200, admitted.body);
    return id;
  };
  const setupInvitation = (organizationId: string, body: unknown) =>
    h.ops('POST', `/_ops/organizations/${organizationId}/setup-invitation`, body);
  /** The token of the newest invitation mail to `email`. */
  const latestToken = async (email: string) => {
    const mail = await h.mailTo(email);
    assert.ok(mail.length > 0, `a mail to ${email}`);
    return tokenIn(mail[0]!.text);
  };
  const lookup = (token: string) =>
    h.send({ method: 'GET', url: `/api/v2/invitations/lookup?token=${encodeURIComponent(token)}` });
  const accept = (body: Record<string, unknown>, cookie?: string) =>
    h.send({
      method: 'POST',
      url: '/api/v2/invitations/accept',
      body,
      headers: cookie ? { cookie, origin: UI_ORIGIN } : {},
    });
  const scalar = async (query: string, params: unknown[] = []) =>
    (await db.query(query, params)).rows[0] as Record<string, unknown>;

  before(async () => {
    h = await startMediaBuying();
    db = new pg.Client({ connectionString: h.platform.database.url });
    await db.connect();
  });
  after(async () => {
    await db.end();
    await h.close();
  });

  test('a setup invitation needs an admitted organization (409), an existing one (404)', async () => {
    const waitlisted = await h.createOrganization('buyer', 'Waiting Co', false);
    assertError(
      await setupInvitation(waitlisted, { email: 'boss@waiting.example' }),
      409,
      'CONFLICT',
      'organization_not_admitted',
    );
    assertError(
      await setupInvitation('org_00000000000000000000000000000000', { email: 'boss@waiting.example' }),
      404,
      'NOT_FOUND',
    );
    assert.equal((await h.mailTo('boss@waiting.example')).length, 0, 'nothing was mailed');
  });

  test('admitted, invited, joined while buyer signup is waitlisted; terms before any change; the offer stays pending until accepted separately', async () => {
    assert.equal(json(await h.ops('GET', '/_ops/settings')).buyerSignup, 'waitlisted');
    const orgId = await admittedBuyer('Acme Outdoor');
    const sent = await setupInvitation(orgId, {
      email: 'Ada@Acme-Outdoor.example',
      name: 'Ada Lovelace',
      commercialOffer: OFFER,
    });
    assert.equal(sent.statusCode, 201, sent.body);
    const { invitation, commercialOffer } = json(sent);
    assert.match(invitation.id, /^inv_[0-9a-f]{32}$/);
    assert.deepEqual(
      { ...invitation, id: undefined },
      {
        id: undefined,
        organizationId: orgId,
        kind: 'setup',
        email: 'ada@acme-outdoor.example',
        role: 'admin',
        name: 'Ada Lovelace',
        status: 'pending',
        invitedBy: null,
        commercialOfferId: commercialOffer.id,
        createdAt: '2026-11-24T12:00:00.000Z',
        expiresAt: '2026-12-01T12:00:00.000Z',
        acceptedAt: null,
        revokedAt: null,
      },
    );
    assert.match(commercialOffer.id, /^ofr_[0-9a-f]{32}$/);
    assert.equal(commercialOffer.status, 'pending');
    assert.ok(!JSON.stringify(json(sent)).includes('mbi_'), 'the operator never sees the token');

    const mail = await h.mailTo('ada@acme-outdoor.example');
    assert.equal(mail.length, 1);
    assert.equal(mail[0]!.kind, 'setup_invitation');
    assert.equal(mail[0]!.subject, 'Set up Acme Outdoor on Media Buying');
    assert.ok(mail[0]!.text.includes(`${UI_ORIGIN}/invitations/accept?token=mbi_`), mail[0]!.text);
    assert.match(mail[0]!.text, /expires at 2026-12-01T12:00:00Z/);
    assert.match(
      mail[0]!.text,
      /Commercial Offer \("Launch pricing"\) is attached\. Joining does not accept it/,
    );
    const token = tokenIn(mail[0]!.text);
    const stored = await scalar('select key_hash from media_buying.invitations where public_id = $1', [
      invitation.id,
    ]);
    assert.notEqual(stored.key_hash, token, 'only a hash of the token is stored');

    const read = await lookup(token);
    assert.equal(read.statusCode, 200, read.body);
    assert.equal(read.headers['cache-control'], 'no-store');
    assert.deepEqual(json(read).data, {
      invitation: {
        id: invitation.id,
        kind: 'setup',
        email: 'ada@acme-outdoor.example',
        role: 'admin',
        name: 'Ada Lovelace',
        expiresAt: '2026-12-01T12:00:00.000Z',
      },
      organization: { id: orgId, name: 'Acme Outdoor', kind: 'buyer' },
      invitedBy: null,
      commercialOffer,
      accountExists: false,
    });

    // Weak or missing passwords are refused before anything is created.
    const weak = await accept({ token, password: 'password12' });
    assertError(weak, 422, 'VALIDATION_ERROR');
    assert.equal(json(weak).error.field, 'password');
    assertError(await accept({ token }), 422, 'VALIDATION_ERROR');
    assert.equal(
      (
        await scalar(`select count(*)::int as n from media_buying.users where email = $1`, [
          'ada@acme-outdoor.example',
        ])
      ).n,
      0,
    );

    const joined = await accept({ token, password: STRONG_PASSWORD });
    assert.equal(joined.statusCode, 200, joined.body);
    const cookie = sessionCookieOf(joined);
    assert.ok(cookie, 'a browser session opened');
    const data = json(joined).data;
    assert.equal(data.user.email, 'ada@acme-outdoor.example');
    assert.equal(data.user.name, 'Ada Lovelace', 'the name on the invitation is the default');
    assert.equal(data.organization.id, orgId);
    assert.equal(data.organization.status, 'admitted');
    assert.equal(data.role, 'admin');
    assert.equal(data.commercialOffer.status, 'pending', 'joining does not accept the offer');
    assert.equal(data.outstandingTermsVersion, '2026-11-01');

    // The email counts as verified by the link: password sign-in works at once.
    await h.signIn('ada@acme-outdoor.example');
    const me = json(await h.browser(cookie, 'GET', '/auth/me')).data;
    assert.equal(me.organization.id, orgId, 'the joined organization is the active one');
    assert.equal(me.role, 'admin');
    assert.equal(me.outstandingTermsVersion, '2026-11-01');

    // Outstanding terms: every mutation is refused, accepting the offer included, until the terms are accepted.
    assertError(
      await h.browser(cookie, 'POST', '/api/v2/user-api-keys', { label: 'x' }),
      403,
      'TOS_ACCEPTANCE_REQUIRED',
    );
    assertError(
      await h.browser(
        cookie,
        'POST',
        `/api/v2/organizations/current/commercial-offers/${commercialOffer.id}/accept`,
      ),
      403,
      'TOS_ACCEPTANCE_REQUIRED',
    );
    const offers = await h.browser(cookie, 'GET', '/api/v2/organizations/current/commercial-offers');
    assert.equal(offers.statusCode, 200, offers.body);
    assert.deepEqual(
      json(offers).data.map((o: { id: string; status: string }) => [o.id, o.status]),
      [[commercialOffer.id, 'pending']],
    );
    await h.acceptTerms(cookie);
    assert.equal((await h.browser(cookie, 'POST', '/api/v2/user-api-keys', { label: 'x' })).statusCode, 201);

    // The offer is accepted in its own step, by an administrator, and the decision is audit-logged.
    const decided = await h.browser(
      cookie,
      'POST',
      `/api/v2/organizations/current/commercial-offers/${commercialOffer.id}/accept`,
    );
    assert.equal(decided.statusCode, 200, decided.body);
    assert.equal(json(decided).data.status, 'accepted');
    assert.equal(json(decided).data.decidedBy, data.user.id);
    assert.equal(json(decided).data.decidedAt, '2026-11-24T12:00:00.000Z');
    const again = await h.browser(
      cookie,
      'POST',
      `/api/v2/organizations/current/commercial-offers/${commercialOffer.id}/accept`,
    );
    assert.deepEqual(json(again).data, json(decided).data, 'accepting again answers the offer as it is');
    assertError(
      await h.browser(
        cookie,
        'POST',
        `/api/v2/organizations/current/commercial-offers/${commercialOffer.id}/decline`,
      ),
      409,
      'CONFLICT',
      'offer_decided',
    );
    const audit = await db.query(
      `select a.action from media_buying.audit_logs a join media_buying.organizations o on o.id = a.organization_id
       where o.public_id = $1 order by a.id`,
      [orgId],
    );
    assert.deepEqual(
      audit.rows.map((r) => r.action),
      [
        'organization.created',
        'organization.admitted',
        'commercial_offer.created',
        'invitation.created',
        'membership.added',
        'invitation.accepted',
        'terms.accepted',
        'user_api_key.created',
        'commercial_offer.accepted',
      ],
    );

    // Single use: the link is spent.
    assertError(
      await accept({ token, password: STRONG_PASSWORD }),
      422,
      'VALIDATION_ERROR',
      'invitation_used',
    );
    assertError(await lookup(token), 422, 'VALIDATION_ERROR', 'invitation_used');
    // ... but the same signed-in person retrying gets the same answer (a retry is safe).
    const retried = await accept({ token }, cookie);
    assert.equal(retried.statusCode, 200, retried.body);
    assert.equal(json(retried).data.user.id, data.user.id);
    assert.equal(sessionCookieOf(retried), undefined, 'no second session');
  });

  test('concurrent acceptances of one link: one wins, the other is told the link was used; one account', async () => {
    const orgId = await admittedBuyer('Race Co');
    assert.equal(
      (await setupInvitation(orgId, { email: 'racer@race.example', name: 'Racer' })).statusCode,
      201,
    );
    const token = await latestToken('racer@race.example');
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => accept({ token, password: STRONG_PASSWORD })),
    );
    const statuses = answers.map((a) => a.statusCode).sort();
    assert.deepEqual(statuses, [200, 422, 422, 422], answers.map((a) => a.body).join('\n'));
    for (const a of answers.filter((x) => x.statusCode === 422))
      assert.equal(json(a).error.details.reason, 'invitation_used');
    const n = await scalar('select count(*)::int as n from media_buying.users where email = $1', [
      'racer@race.example',
    ]);
    assert.equal(n.n, 1);
  });

  test('an expired link is refused (moved by the clock); a revoked one too, withdrawing its offer', async () => {
    const orgId = await admittedBuyer('Slow Co');
    assert.equal(
      (await setupInvitation(orgId, { email: 'slow@slow.example', name: 'Slow' })).statusCode,
      201,
    );
    const token = await latestToken('slow@slow.example');
    h.clock.advance(SEVEN_DAYS_MS - 1000);
    assert.equal((await lookup(token)).statusCode, 200, 'valid until the last second');
    h.clock.advance(1000);
    assertError(await lookup(token), 422, 'VALIDATION_ERROR', 'invitation_expired');
    assertError(
      await accept({ token, password: STRONG_PASSWORD }),
      422,
      'VALIDATION_ERROR',
      'invitation_expired',
    );

    const revokedOrg = await admittedBuyer('Revoked Co');
    const sent = json(
      await setupInvitation(revokedOrg, { email: 'rev@rev.example', name: 'Rev', commercialOffer: OFFER }),
    );
    const revokedToken = await latestToken('rev@rev.example');
    const revoked = await h.ops('POST', `/_ops/invitations/${sent.invitation.id}/revoke`);
    assert.equal(revoked.statusCode, 200, revoked.body);
    assert.equal(json(revoked).status, 'revoked');
    assertError(await lookup(revokedToken), 422, 'VALIDATION_ERROR', 'invitation_revoked');
    assertError(
      await accept({ token: revokedToken, password: STRONG_PASSWORD }),
      422,
      'VALIDATION_ERROR',
      'invitation_revoked',
    );
    const offer = await scalar('select status from media_buying.commercial_offers where public_id = $1', [
      sent.commercialOffer.id,
    ]);
    assert.equal(offer.status, 'withdrawn');
    // Revoking twice answers it as it is.
    assert.equal(
      json(await h.ops('POST', `/_ops/invitations/${sent.invitation.id}/revoke`)).status,
      'revoked',
    );
  });

  test('the organization must be admitted when the link is used (rule 9): a suspended one refuses it', async () => {
    const orgId = await admittedBuyer('Suspended Co');
    assert.equal((await setupInvitation(orgId, { email: 'sus@sus.example', name: 'Sus' })).statusCode, 201);
    const token = await latestToken('sus@sus.example');
    assert.equal((await h.ops('POST', `/_ops/organizations/${orgId}/suspend`)).statusCode, 200);
    assertError(await lookup(token), 409, 'CONFLICT', 'organization_not_admitted');
    assertError(
      await accept({ token, password: STRONG_PASSWORD }),
      409,
      'CONFLICT',
      'organization_not_admitted',
    );
    assert.equal((await h.ops('POST', `/_ops/organizations/${orgId}/admit`)).statusCode, 200);
    assert.equal((await accept({ token, password: STRONG_PASSWORD })).statusCode, 200);
  });

  test('an existing account signs in first; a session of another email is refused', async () => {
    const otherOrg = await h.createOrganization('seller', 'Elsewhere Media');
    await h.addMember(otherOrg, 'grace@elsewhere.example', 'admin');
    await h.addMember(otherOrg, 'mallory@elsewhere.example', 'member');
    const orgId = await admittedBuyer('Second Home');
    assert.equal((await setupInvitation(orgId, { email: 'grace@elsewhere.example' })).statusCode, 201);
    const token = await latestToken('grace@elsewhere.example');
    assert.equal(json(await lookup(token)).data.accountExists, true);

    assertError(
      await accept({ token, name: 'Grace', password: STRONG_PASSWORD }),
      401,
      'UNAUTHORIZED',
      'sign_in_required',
    );
    const mallory = await h.signIn('mallory@elsewhere.example');
    assertError(await accept({ token }, mallory), 403, 'FORBIDDEN', 'invitation_email_mismatch');
    // A session cookie without the UI origin is refused (rule 4).
    const noOrigin = await h.send({
      method: 'POST',
      url: '/api/v2/invitations/accept',
      body: { token },
      headers: { cookie: mallory },
    });
    assertError(noOrigin, 403, 'FORBIDDEN', 'origin_not_allowed');

    const grace = await h.signIn('grace@elsewhere.example');
    const joined = await accept({ token }, grace);
    assert.equal(joined.statusCode, 200, joined.body);
    assert.equal(sessionCookieOf(joined), undefined, 'the signed-in user keeps their session');
    assert.equal(json(joined).data.organization.id, orgId);
    const memberships = json(await h.browser(grace, 'GET', '/api/v2/organizations')).data;
    assert.deepEqual(
      memberships.map((m: { organization: { id: string }; role: string }) => [m.organization.id, m.role]),
      [
        [otherOrg, 'admin'],
        [orgId, 'admin'],
      ],
    );
    assert.equal(json(await h.browser(grace, 'GET', '/auth/me')).data.organization.id, orgId);
  });

  test('an identity left by an unfinished signup of the invited email gets the password set through the link', async () => {
    await db.query(
      `insert into media_buying.identities (subject, email, name, password_hash, created_at)
       values ('sub_squatter', 'squat@target.example', 'Squatter', 'not-a-real-hash', now())`,
    );
    const orgId = await admittedBuyer('Target Co');
    assert.equal(
      (await setupInvitation(orgId, { email: 'squat@target.example', name: 'Owner' })).statusCode,
      201,
    );
    const token = await latestToken('squat@target.example');
    assert.equal(json(await lookup(token)).data.accountExists, false);
    assert.equal((await accept({ token, password: STRONG_PASSWORD })).statusCode, 200);
    await h.signIn('squat@target.example', STRONG_PASSWORD);
  });

  test('a Commercial Offer attaches only to the first administrator invitation of a Buyer Account', async () => {
    const seller = await h.createOrganization('seller', 'Seller Co');
    assertError(
      await setupInvitation(seller, { email: 's@seller.example', commercialOffer: OFFER }),
      409,
      'CONFLICT',
      'not_a_buyer_account',
    );
    assert.equal((await setupInvitation(seller, { email: 's@seller.example' })).statusCode, 201);

    const staffed = await admittedBuyer('Staffed Co');
    await h.addMember(staffed, 'first@staffed.example', 'admin');
    assertError(
      await setupInvitation(staffed, { email: 'second@staffed.example', commercialOffer: OFFER }),
      409,
      'CONFLICT',
      'not_first_administrator_invitation',
    );

    const fresh = await admittedBuyer('Fresh Co');
    const first = json(await setupInvitation(fresh, { email: 'a@fresh.example', commercialOffer: OFFER }));
    const second = await setupInvitation(fresh, { email: 'b@fresh.example', commercialOffer: OFFER });
    assertError(second, 409, 'CONFLICT', 'offer_pending');
    assert.equal(json(second).error.details.invitationId, first.invitation.id);
    // Without an offer a second administrator may be invited.
    assert.equal((await setupInvitation(fresh, { email: 'b@fresh.example' })).statusCode, 201);

    // Once the first invitation expired unused, a new offer supersedes (withdraws) the old one.
    h.clock.advance(SEVEN_DAYS_MS);
    const third = await setupInvitation(fresh, { email: 'c@fresh.example', commercialOffer: OFFER });
    assert.equal(third.statusCode, 201, third.body);
    const statuses = await db.query(
      `select public_id, status from media_buying.commercial_offers where public_id = any($1) order by id`,
      [[first.commercialOffer.id, json(third).commercialOffer.id]],
    );
    assert.deepEqual(
      statuses.rows.map((r) => r.status),
      ['withdrawn', 'pending'],
    );
  });

  test('concurrent setup invitations with offers to one organization: one offer is made, the others are 409', async () => {
    const orgId = await admittedBuyer('Burst Co');
    const answers = await Promise.all(
      ['x@burst.example', 'y@burst.example', 'z@burst.example'].map((email) =>
        setupInvitation(orgId, { email, commercialOffer: OFFER }),
      ),
    );
    assert.deepEqual(
      answers.map((a) => a.statusCode).sort(),
      [201, 409, 409],
      answers.map((a) => a.body).join('\n'),
    );
    for (const a of answers.filter((x) => x.statusCode === 409))
      assert.equal(json(a).error.details.reason, 'offer_pending');
    const offers = await scalar(
      `select count(*)::int as n from media_buying.commercial_offers c join media_buying.organizations o
       on o.id = c.organization_id where o.public_id = $1`,
      [orgId],
    );
    assert.equal(offers.n, 1);
  });

  test('one open invitation per email and organization; none for a member', async () => {
    const orgId = await admittedBuyer('Dup Co');
    const first = json(await setupInvitation(orgId, { email: 'dup@dup.example' }));
    const dup = await setupInvitation(orgId, { email: 'DUP@dup.example' });
    assertError(dup, 409, 'CONFLICT', 'invitation_pending');
    assert.equal(json(dup).error.details.invitationId, first.invitation.id);
    await h.addMember(orgId, 'member@dup.example', 'admin');
    assertError(
      await setupInvitation(orgId, { email: 'member@dup.example' }),
      409,
      'CONFLICT',
      'already_member',
    );
  });

  test('unknown and malformed tokens', async () => {
    const unknown = `mbi_${'A'.repeat(43)}`;
    assertError(await lookup(unknown), 404, 'NOT_FOUND');
    assertError(await accept({ token: unknown, password: STRONG_PASSWORD }), 404, 'NOT_FOUND');
    assertError(await lookup('mbi_short'), 400, 'VALIDATION_ERROR');
    assertError(await accept({ token: 'nope' }), 400, 'VALIDATION_ERROR');
  });
});

describe('member invitations by administrators, and ids of another organization', () => {
  let h: MediaBuyingHarness;
  let adminA: string;
  let adminB: string;
  let orgA: string;
  let orgB: string;

  before(async () => {
    h = await startMediaBuying();
    orgA = await h.createOrganization('buyer', 'Org A');
    orgB = await h.createOrganization('buyer', 'Org B');
    await h.addMember(orgA, 'admin@a.example', 'admin');
    await h.addMember(orgB, 'admin@b.example', 'admin');
    adminA = await h.signIn('admin@a.example');
    adminB = await h.signIn('admin@b.example');
    await h.acceptTerms(adminA);
    await h.acceptTerms(adminB);
  });
  after(() => h.close());

  const invite = (cookie: string, body: unknown) =>
    h.browser(cookie, 'POST', '/api/v2/organizations/current/invitations', body);

  test('an administrator invites, lists and revokes; the invitee joins as a member and must accept the terms', async () => {
    const created = await invite(adminA, { email: 'Newbie@A.example', role: 'member', name: 'Newbie' });
    assert.equal(created.statusCode, 201, created.body);
    const invitation = json(created).data;
    assert.equal(invitation.kind, 'member');
    assert.equal(invitation.role, 'member');
    assert.equal(invitation.email, 'newbie@a.example');
    assert.equal(invitation.status, 'pending');
    assert.match(invitation.invitedBy, /^usr_/);
    const mail = await h.mailTo('newbie@a.example');
    assert.equal(mail[0]!.kind, 'member_invitation');
    assert.equal(mail[0]!.subject, 'You are invited to join Org A');
    assert.match(
      mail[0]!.text,
      /^admin invited you to join Org A on the media-buying platform as a member\./,
    );
    assert.doesNotMatch(mail[0]!.text, /Commercial Offer/);

    const listed = await h.browser(adminA, 'GET', '/api/v2/organizations/current/invitations?take=10');
    assert.equal(listed.statusCode, 200, listed.body);
    assert.deepEqual(json(listed).meta.pagination, { skip: 0, take: 10, total: 1, hasMore: false });
    assert.deepEqual(json(listed).data[0], invitation);

    const token = tokenIn(mail[0]!.text);
    const read = json(await h.send({ method: 'GET', url: `/api/v2/invitations/lookup?token=${token}` })).data;
    assert.equal(read.invitedBy, 'admin');
    assert.equal(read.commercialOffer, null);
    const joined = await h.send({
      method: 'POST',
      url: '/api/v2/invitations/accept',
      body: { token, password: STRONG_PASSWORD },
    });
    assert.equal(joined.statusCode, 200, joined.body);
    assert.equal(json(joined).data.role, 'member');
    const newbie = sessionCookieOf(joined)!;
    // A member cannot invite nor see the invitations and offers; and until the terms are accepted, no change at all.
    for (const url of [
      '/api/v2/organizations/current/commercial-offers',
      '/api/v2/organizations/current/invitations',
    ])
      assertError(await h.browser(newbie, 'GET', url), 403, 'FORBIDDEN', 'admin_required');
    assertError(
      await invite(newbie, { email: 'x@a.example', role: 'member' }),
      403,
      'FORBIDDEN',
      'admin_required',
    );
    assertError(
      await h.browser(newbie, 'POST', '/api/v2/buyer/advertisers', { name: 'Mine' }),
      403,
      'TOS_ACCEPTANCE_REQUIRED',
    );
    await h.acceptTerms(newbie);
    assert.equal(
      (await h.browser(newbie, 'POST', '/api/v2/buyer/advertisers', { name: 'Mine' })).statusCode,
      201,
    );
    const afterJoin = json(await h.browser(adminA, 'GET', '/api/v2/organizations/current/invitations'))
      .data[0];
    assert.equal(afterJoin.status, 'accepted');
    assertError(
      await h.browser(adminA, 'DELETE', `/api/v2/organizations/current/invitations/${invitation.id}`),
      409,
      'CONFLICT',
      'invitation_used',
    );

    const second = json(await invite(adminA, { email: 'later@a.example', role: 'admin' })).data;
    const revoked = await h.browser(
      adminA,
      'DELETE',
      `/api/v2/organizations/current/invitations/${second.id}`,
    );
    assert.equal(revoked.statusCode, 200, revoked.body);
    assert.equal(json(revoked).data.status, 'revoked');
    const laterToken = tokenIn((await h.mailTo('later@a.example'))[0]!.text);
    assertError(
      await h.send({
        method: 'POST',
        url: '/api/v2/invitations/accept',
        body: { token: laterToken, password: STRONG_PASSWORD },
      }),
      422,
      'VALIDATION_ERROR',
      'invitation_revoked',
    );
    // A revoked invitation no longer blocks a new one to the same email.
    assert.equal((await invite(adminA, { email: 'later@a.example', role: 'admin' })).statusCode, 201);
    assertError(
      await invite(adminA, { email: 'later@a.example', role: 'admin' }),
      409,
      'CONFLICT',
      'invitation_pending',
    );
    assertError(
      await invite(adminA, { email: 'admin@a.example', role: 'admin' }),
      409,
      'CONFLICT',
      'already_member',
    );
  });

  test('invitations need an interactive administrator session: a key of the same administrator is refused', async () => {
    const key = json(await h.browser(adminA, 'POST', '/api/v2/user-api-keys', { label: 'script' })).data.key;
    assertError(
      await h.bearer(key, 'POST', '/api/v2/organizations/current/invitations', {
        email: 'k@a.example',
        role: 'member',
      }),
      403,
      'FORBIDDEN',
      'interactive_session_required',
    );
    assertError(
      await h.bearer(key, 'GET', '/api/v2/organizations/current/commercial-offers'),
      403,
      'FORBIDDEN',
    );
    assertError(
      await h.send({
        method: 'POST',
        url: '/api/v2/organizations/current/invitations',
        body: { email: 'k@a.example', role: 'member' },
      }),
      401,
      'UNAUTHORIZED',
    );
  });

  test("another organization's invitation and offer ids are 404 (and left as they were)", async () => {
    const invA = json(await invite(adminA, { email: 'probe@a.example', role: 'member' })).data;
    const probe = await h.browser(adminB, 'DELETE', `/api/v2/organizations/current/invitations/${invA.id}`);
    assertError(probe, 404, 'NOT_FOUND');
    const still = json(await h.browser(adminA, 'GET', '/api/v2/organizations/current/invitations')).data.find(
      (i: { id: string }) => i.id === invA.id,
    );
    assert.equal(still.status, 'pending');
    const listedByB = json(await h.browser(adminB, 'GET', '/api/v2/organizations/current/invitations')).data;
    assert.ok(
      !listedByB.some((i: { id: string }) => i.id === invA.id),
      "B's list holds none of A's invitations",
    );

    // An offer of a third organization, probed by B's administrator.
    const orgC = await h.createOrganization('buyer', 'Org C');
    const offered = json(
      await h.ops('POST', `/_ops/organizations/${orgC}/setup-invitation`, {
        email: 'c@c.example',
        commercialOffer: OFFER,
      }),
    );
    for (const verb of ['accept', 'decline'])
      assertError(
        await h.browser(
          adminB,
          'POST',
          `/api/v2/organizations/current/commercial-offers/${offered.commercialOffer.id}/${verb}`,
        ),
        404,
        'NOT_FOUND',
      );
    assert.deepEqual(
      json(await h.browser(adminB, 'GET', '/api/v2/organizations/current/commercial-offers')).data,
      [],
    );
    const token = tokenIn((await h.mailTo('c@c.example'))[0]!.text);
    const read = json(await h.send({ method: 'GET', url: `/api/v2/invitations/lookup?token=${token}` })).data;
    assert.equal(read.commercialOffer.status, 'pending', 'the probes changed nothing');
  });

  test('at most 50 member invitations a day per organization (429), counted again after a day', async () => {
    const org = await h.createOrganization('buyer', 'Busy Co');
    await h.addMember(org, 'admin@busy.example', 'admin');
    const busy = await h.signIn('admin@busy.example');
    await h.acceptTerms(busy);
    for (let i = 0; i < 50; i += 1)
      assert.equal((await invite(busy, { email: `p${i}@busy.example`, role: 'member' })).statusCode, 201);
    const refused = await invite(busy, { email: 'p50@busy.example', role: 'member' });
    assertError(refused, 429, 'RATE_LIMITED');
    assert.equal(refused.headers['retry-after'], '86400');
    h.clock.advance(86_400_000);
    // The invitations live 7 days; only the daily count starts over.
    assert.equal((await invite(busy, { email: 'p50@busy.example', role: 'member' })).statusCode, 201);
  });
});
