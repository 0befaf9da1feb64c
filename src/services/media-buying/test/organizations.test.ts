/**
 * Organization rules (spec "What the service does": the owner's active organization membership is resolved on every
 * request; "Errors": `TOS_ACCEPTANCE_REQUIRED`, `ALPHA_OPT_IN_REQUIRED`): removing a member stops their key at once,
 * an organization keeps its last administrator, outstanding terms block every mutation until accepted, alpha
 * features wait for the operator's opt-in, the active organization switches, and member ids of another organization
 * are 404.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError, json, type MediaBuyingHarness, startMediaBuying } from './support.ts';

describe('organizations, memberships, terms and alpha features', () => {
  let h: MediaBuyingHarness;
  let orgA: string;
  let orgB: string;
  let admin: string;
  let memberId: string;
  let member: string;

  before(async () => {
    h = await startMediaBuying();
    orgA = await h.createOrganization('buyer', 'Org A');
    orgB = await h.createOrganization('buyer', 'Org B');
    await h.addMember(orgA, 'admin@a.example', 'admin');
    memberId = await h.addMember(orgA, 'member@a.example', 'member');
    await h.addMember(orgB, 'admin@b.example', 'admin');
    admin = await h.signIn('admin@a.example');
    member = await h.signIn('member@a.example');
    await h.acceptTerms(admin);
    await h.acceptTerms(member);
  });
  after(() => h.close());

  const members = async (cookie: string) =>
    json(await h.browser(cookie, 'GET', '/api/v2/organizations/current/members')).data.map(
      (m: { email: string; role: string }) => `${m.email}:${m.role}`,
    );

  test('removing a member stops their API key and their session in that organization at once', async () => {
    const extraId = await h.addMember(orgA, 'leaver@a.example', 'member');
    const leaver = await h.signIn('leaver@a.example');
    await h.acceptTerms(leaver);
    const created = await h.browser(leaver, 'POST', '/api/v2/user-api-keys', { label: 'script' });
    assert.equal(created.statusCode, 201, created.body);
    const key = json(created).data.key;
    assert.equal((await h.bearer(key, 'GET', '/api/v2/buyer/advertisers')).statusCode, 200);

    const removed = await h.browser(admin, 'DELETE', `/api/v2/organizations/current/members/${extraId}`);
    assert.equal(removed.statusCode, 200, removed.body);
    assert.ok(!(await members(admin)).includes('leaver@a.example:member'));
    // The very next request with the key fails: membership is checked on every request (no cache to wait out).
    assertError(await h.bearer(key, 'GET', '/api/v2/buyer/advertisers'), 401, 'UNAUTHORIZED');
    // The session still signs the person in, but acts in no organization any more.
    const me = json(await h.browser(leaver, 'GET', '/auth/me')).data;
    assert.equal(me.organization, null);
    assertError(
      await h.browser(leaver, 'GET', '/api/v2/buyer/advertisers'),
      403,
      'FORBIDDEN',
      'no_active_organization',
    );
    assertError(
      await h.browser(leaver, 'POST', '/api/v2/organizations/active', { organizationId: orgA }),
      404,
      'NOT_FOUND',
    );
  });

  test('an organization keeps its last administrator: not removed, not demoted', async () => {
    const me = json(await h.browser(admin, 'GET', '/auth/me')).data.user.id;
    assertError(
      await h.browser(admin, 'DELETE', `/api/v2/organizations/current/members/${me}`),
      409,
      'CONFLICT',
    );
    assertError(
      await h.browser(admin, 'PATCH', `/api/v2/organizations/current/members/${me}`, { role: 'member' }),
      409,
      'CONFLICT',
    );
    assert.ok((await members(admin)).includes('admin@a.example:admin'));

    // With a second administrator, the first may step down.
    const promoted = await h.browser(admin, 'PATCH', `/api/v2/organizations/current/members/${memberId}`, {
      role: 'admin',
    });
    assert.equal(promoted.statusCode, 200, promoted.body);
    const down = await h.browser(admin, 'PATCH', `/api/v2/organizations/current/members/${me}`, {
      role: 'member',
    });
    assert.equal(down.statusCode, 200, down.body);
    assert.deepEqual((await members(member)).sort(), ['admin@a.example:member', 'member@a.example:admin']);
    // Restore: the member (now the only administrator) cannot step down; they promote the first one back.
    assertError(
      await h.browser(member, 'PATCH', `/api/v2/organizations/current/members/${memberId}`, {
        role: 'member',
      }),
      409,
      'CONFLICT',
    );
    await h.browser(member, 'PATCH', `/api/v2/organizations/current/members/${me}`, { role: 'admin' });
    await h.browser(admin, 'PATCH', `/api/v2/organizations/current/members/${memberId}`, { role: 'member' });
    assert.deepEqual((await members(admin)).sort(), ['admin@a.example:admin', 'member@a.example:member']);
  });

  test('members of another organization are 404 to an administrator (and stay as they were)', async () => {
    const bMember = await h.addMember(orgB, 'bee@b.example', 'member');
    assertError(
      await h.browser(admin, 'DELETE', `/api/v2/organizations/current/members/${bMember}`),
      404,
      'NOT_FOUND',
    );
    assertError(
      await h.browser(admin, 'PATCH', `/api/v2/organizations/current/members/${bMember}`, { role: 'admin' }),
      404,
      'NOT_FOUND',
    );
    const bAdmin = await h.signIn('admin@b.example');
    assert.ok((await members(bAdmin)).includes('bee@b.example:member'));
    // A member (not an administrator) cannot change anyone, even in their own organization.
    assertError(
      await h.browser(member, 'DELETE', `/api/v2/organizations/current/members/${memberId}`),
      403,
      'FORBIDDEN',
      'admin_required',
    );
  });

  test('a new Terms of Service version blocks every mutation (reads still work) until the user accepts it', async () => {
    assert.equal(
      (await h.browser(member, 'POST', '/api/v2/buyer/advertisers', { name: 'Before' })).statusCode,
      201,
    );
    const published = await h.ops('POST', '/_ops/terms', {
      version: '2026-12-01',
      title: 'Terms of Service',
      body: 'Updated terms.',
    });
    assert.equal(published.statusCode, 201, published.body);

    const refused = await h.browser(member, 'POST', '/api/v2/buyer/advertisers', { name: 'After' });
    assertError(refused, 403, 'TOS_ACCEPTANCE_REQUIRED');
    assert.equal(json(refused).error.details.termsVersion, '2026-12-01');
    // The administrator is blocked too.
    assertError(await h.browser(admin, 'POST', '/api/v2/user-api-keys', {}), 403, 'TOS_ACCEPTANCE_REQUIRED');
    assertError(
      await h.browser(admin, 'POST', '/api/v2/organizations/current/invitations', {
        email: 'z@a.example',
        role: 'member',
      }),
      403,
      'TOS_ACCEPTANCE_REQUIRED',
    );
    assert.equal(
      (await h.browser(member, 'GET', '/api/v2/buyer/advertisers')).statusCode,
      200,
      'reads are allowed',
    );
    assert.equal(json(await h.browser(member, 'GET', '/api/v2/terms/current')).data.accepted, false);
    // Accepting an older version changes nothing.
    assertError(
      await h.browser(member, 'POST', '/api/v2/terms/accept', { version: '2026-11-01' }),
      409,
      'CONFLICT',
    );

    await h.acceptTerms(member);
    assert.equal(
      (await h.browser(member, 'POST', '/api/v2/buyer/advertisers', { name: 'After' })).statusCode,
      201,
    );
    assert.equal(json(await h.browser(member, 'GET', '/api/v2/terms/current')).data.accepted, true);
    assertError(
      await h.browser(admin, 'POST', '/api/v2/buyer/advertisers', { name: 'Admin' }),
      403,
      'TOS_ACCEPTANCE_REQUIRED',
    );
    await h.acceptTerms(admin);
  });

  test('an alpha feature answers ALPHA_OPT_IN_REQUIRED until the operator opts the organization in', async () => {
    const url = '/api/v2/user-api-keys/widget-token';
    const refused = await h.browser(member, 'GET', url);
    assertError(refused, 403, 'ALPHA_OPT_IN_REQUIRED');
    assert.equal(json(refused).error.details.feature, 'embedded-widgets');
    assert.equal((await h.ops('PUT', `/_ops/organizations/${orgA}/alpha/embedded-widgets`)).statusCode, 200);
    const token = await h.browser(member, 'GET', url);
    assert.equal(token.statusCode, 200, token.body);
    assert.match(json(token).data.token, /^wgt_/);
    // Per organization: B is not opted in.
    const bAdmin = await h.signIn('admin@b.example');
    assertError(await h.browser(bAdmin, 'GET', url), 403, 'ALPHA_OPT_IN_REQUIRED');
    assert.equal(
      (await h.ops('DELETE', `/_ops/organizations/${orgA}/alpha/embedded-widgets`)).statusCode,
      200,
    );
    assertError(await h.browser(member, 'GET', url), 403, 'ALPHA_OPT_IN_REQUIRED');
  });

  test('the active organization switches between organizations the user belongs to; keys stay where they were made', async () => {
    await h.addMember(orgB, 'member@a.example', 'member');
    const keyInA = json(await h.browser(member, 'POST', '/api/v2/user-api-keys', { label: 'a' })).data.key;
    assert.equal(json(await h.browser(member, 'GET', '/auth/me')).data.organization.id, orgA);

    const switched = await h.browser(member, 'POST', '/api/v2/organizations/active', {
      organizationId: orgB,
    });
    assert.equal(switched.statusCode, 200, switched.body);
    assert.equal(json(switched).data.id, orgB);
    const me = json(await h.browser(member, 'GET', '/auth/me')).data;
    assert.equal(me.organization.id, orgB);
    assert.equal(me.role, 'member');
    assert.deepEqual(
      me.memberships.map((m: { organization: { id: string } }) => m.organization.id),
      [orgA, orgB],
    );
    // The key made in A still acts in A.
    assert.equal(json(await h.bearer(keyInA, 'GET', '/auth/me')).data.organization.id, orgA);

    // Not a member, waitlisted or unknown: 404, and the active organization does not change.
    const orgC = await h.createOrganization('buyer', 'Org C');
    const waitlisted = await h.createOrganization('buyer', 'Org W', false);
    await h.addMember(waitlisted, 'member@a.example', 'member');
    for (const id of [orgC, waitlisted, 'org_00000000000000000000000000000000'])
      assertError(
        await h.browser(member, 'POST', '/api/v2/organizations/active', { organizationId: id }),
        404,
        'NOT_FOUND',
      );
    assert.equal(json(await h.browser(member, 'GET', '/auth/me')).data.organization.id, orgB);
    // Keys cannot switch: a session is needed.
    assertError(
      await h.bearer(keyInA, 'POST', '/api/v2/organizations/active', { organizationId: orgB }),
      403,
      'FORBIDDEN',
      'interactive_session_required',
    );
    await h.browser(member, 'POST', '/api/v2/organizations/active', { organizationId: orgA });
  });
});
