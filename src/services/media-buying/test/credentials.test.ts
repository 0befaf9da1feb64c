/**
 * The credential control plane (spec "Authentication", "Credentials and activation"): user API keys, organization-
 * owned keys, legacy keys, widget tokens, buyer-agent identities, agent registration credentials and MCP credentials
 * on REST; every request resolves credential -> owner -> live membership, so a key never grants more than its owner
 * has now.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { startTestPlatform, type TestPlatform } from '../../../../test/support/platform.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { hashApiKey } from '../../../platform/crypto.ts';
import { mediaBuyingService } from '../index.ts';
import {
  envelopeData,
  envelopeError,
  type MediaBuyingHarness,
  STRONG_PASSWORD,
  startMediaBuying,
  UI_ORIGIN,
} from './support/harness.ts';

const ADVERTISERS = '/api/v2/buyer/advertisers';

describe('media buying: user API keys', () => {
  let h: MediaBuyingHarness;
  let cookie: string;

  before(async () => {
    h = await startMediaBuying();
    cookie = await h.signIn(h.demo.email, h.demo.password);
  });
  after(() => h?.close());

  test('created only from an interactive session, with platform:access, shown once then masked', async () => {
    const created = await h.session(cookie, {
      method: 'POST',
      url: '/api/v2/user-api-keys',
      payload: { label: 'ci' },
    });
    assert.equal(created.statusCode, 201);
    const { key, record } = envelopeData<{
      key: string;
      record: { id: string; maskedKey: string; permissions: string[] };
    }>(created);
    assert.match(key, /^mbu_[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(record.permissions, ['platform:access']);
    assert.equal(record.maskedKey, `mbu_…${key.slice(-4)}`);
    const listed = await h.session(cookie, { url: '/api/v2/user-api-keys' });
    assert.ok(!listed.body.includes(key), 'the key is never shown again');
    assert.ok(listed.body.includes(record.maskedKey));

    // No key creates another credential.
    const byKey = await h.bearer(key, { method: 'POST', url: '/api/v2/user-api-keys', payload: {} });
    assert.equal(byKey.statusCode, 403);
    assert.equal(envelopeError(byKey).details?.reason, 'interactive_session_required');
    // Accepting the Terms of Service is a person's act: a key cannot.
    const terms = await h.bearer(key, {
      method: 'POST',
      url: '/api/v2/terms/accept',
      payload: { version: '2026-11-01' },
    });
    assert.equal(terms.statusCode, 403);
    assert.equal(envelopeError(terms).details?.reason, 'interactive_session_required');
    // The request schema has no permission selector: account:admin cannot be asked for.
    const admin = await h.session(cookie, {
      method: 'POST',
      url: '/api/v2/user-api-keys',
      payload: { permissions: ['account:admin'] },
    });
    assert.equal(admin.statusCode, 400);
  });

  test('a key acts in the organization active at its creation, whatever the session switches to later', async () => {
    const key = await h.createUserKey(cookie, 'bound');
    const switched = await h.session(cookie, {
      method: 'POST',
      url: '/api/v2/organizations/active',
      payload: { organizationId: h.demo.sellerOrganizationId },
    });
    assert.equal(switched.statusCode, 200, switched.body);
    const me = envelopeData<{ organization: { id: string } }>(await h.bearer(key, { url: '/auth/me' }));
    assert.equal(me.organization.id, h.demo.organizationId);
    const sessionMe = envelopeData<{ organization: { id: string } }>(
      await h.session(cookie, { url: '/auth/me' }),
    );
    assert.equal(sessionMe.organization.id, h.demo.sellerOrganizationId);
    // The buyer route works with the key (buyer account), not with the session now in the seller account.
    assert.equal((await h.bearer(key, { url: ADVERTISERS })).statusCode, 200);
    const wrongKind = await h.session(cookie, { url: ADVERTISERS });
    assert.equal(wrongKind.statusCode, 403);
    assert.equal(envelopeError(wrongKind).details?.reason, 'wrong_account_kind');
    await h.session(cookie, {
      method: 'POST',
      url: '/api/v2/organizations/active',
      payload: { organizationId: h.demo.organizationId },
    });
  });

  test('revoking a key stops it at once; another user cannot revoke it (404)', async () => {
    const key = await h.createUserKey(cookie, 'to revoke');
    const list = envelopeData<{ id: string; maskedKey: string }[]>(
      await h.session(cookie, { url: '/api/v2/user-api-keys' }),
    );
    const id = list.find((k) => k.maskedKey.endsWith(key.slice(-4)))!.id;

    const other = await h.addMember(h.demo.organizationId, 'other-revoker@example.com', 'admin');
    assert.ok(other);
    const otherCookie = await h.signInAccepted('other-revoker@example.com', STRONG_PASSWORD);
    const foreign = await h.session(otherCookie, { method: 'DELETE', url: `/api/v2/user-api-keys/${id}` });
    assert.equal(foreign.statusCode, 404);
    assert.equal((await h.bearer(key, { url: ADVERTISERS })).statusCode, 200);

    // A key cannot revoke its owner's other keys (a leaked key would lock its owner out); it may revoke itself.
    const bySibling = await h.bearer(h.demo.apiKey, { method: 'DELETE', url: `/api/v2/user-api-keys/${id}` });
    assert.equal(bySibling.statusCode, 404);
    assert.equal((await h.bearer(key, { url: ADVERTISERS })).statusCode, 200);
    const selfKey = await h.createUserKey(cookie, 'revokes itself');
    const selfId = envelopeData<{ id: string; maskedKey: string }[]>(
      await h.session(cookie, { url: '/api/v2/user-api-keys' }),
    ).find((k) => k.maskedKey.endsWith(selfKey.slice(-4)))!.id;
    assert.equal(
      (await h.bearer(selfKey, { method: 'DELETE', url: `/api/v2/user-api-keys/${selfId}` })).statusCode,
      200,
    );
    assert.equal((await h.bearer(selfKey, { url: ADVERTISERS })).statusCode, 401);

    const revoked = await h.session(cookie, { method: 'DELETE', url: `/api/v2/user-api-keys/${id}` });
    assert.equal(revoked.statusCode, 200);
    assert.ok(envelopeData<{ revokedAt: string | null }>(revoked).revokedAt);
    const after = await h.bearer(key, { url: ADVERTISERS });
    assert.equal(after.statusCode, 401);
    assert.equal(envelopeError(after).code, 'UNAUTHORIZED');
  });

  test("a member's key has a member's access: no account administration, and it loses everything with the membership", async () => {
    await h.addMember(h.demo.organizationId, 'member@example.com', 'member');
    const memberCookie = await h.signInAccepted('member@example.com', STRONG_PASSWORD);
    const key = await h.createUserKey(memberCookie, 'member key');
    assert.equal((await h.bearer(key, { url: ADVERTISERS })).statusCode, 200);
    assert.equal(
      (await h.bearer(key, { method: 'POST', url: ADVERTISERS, payload: { name: 'By member' } })).statusCode,
      201,
    );
    const me = envelopeData<{ access: Record<string, string>; role: string }>(
      await h.bearer(key, { url: '/auth/me' }),
    );
    assert.equal(me.role, 'member');
    assert.deepEqual(me.access, { buyer: 'write', seller: 'write' });
    const adminOnly = await h.session(memberCookie, { url: '/api/v2/org-api-keys' });
    assert.equal(adminOnly.statusCode, 403);
    assert.equal(envelopeError(adminOnly).details?.reason, 'admin_required');

    // Promote the member: the same key now reads with admin access (the owner's live role).
    const members = envelopeData<{ userId: string; email: string }[]>(
      await h.session(cookie, { url: '/api/v2/organizations/current/members' }),
    );
    const userId = members.find((m) => m.email === 'member@example.com')!.userId;
    await h.session(cookie, {
      method: 'PATCH',
      url: `/api/v2/organizations/current/members/${userId}`,
      payload: { role: 'admin' },
    });
    const promoted = envelopeData<{ access: Record<string, string> }>(
      await h.bearer(key, { url: '/auth/me' }),
    );
    assert.deepEqual(promoted.access, { buyer: 'admin', seller: 'admin' });

    // Remove the member: the key stops at the next request.
    const removed = await h.session(cookie, {
      method: 'DELETE',
      url: `/api/v2/organizations/current/members/${userId}`,
    });
    assert.equal(removed.statusCode, 200, removed.body);
    assert.equal((await h.bearer(key, { url: ADVERTISERS })).statusCode, 401);
  });

  test('a user API key from before, with an earlier permission name, keeps working at that level', async () => {
    // Existing keys predate `platform:access`: written as the old system stored them.
    const secret = `mbu_${'r'.repeat(43)}`;
    const db = h.platform.booted.services.get('media-buying')!.ctx.db;
    const me = envelopeData<{ user: { id: string } }>(await h.session(cookie, { url: '/auth/me' }));
    await db.execute(sql`insert into media_buying.user_api_keys (key_hash, hint, label, created_at, public_id, user_id,
      organization_id, permissions)
      select ${hashApiKey(secret)}, 'rrrr', 'from before', now(), 'uak_00000000000000000000000000000042', u.id, o.id,
        array['platform:read']
      from media_buying.users u, media_buying.organizations o
      where u.public_id = ${me.user.id} and o.public_id = ${h.demo.organizationId}`);
    assert.equal((await h.bearer(secret, { url: ADVERTISERS })).statusCode, 200);
    const write = await h.bearer(secret, {
      method: 'POST',
      url: ADVERTISERS,
      payload: { name: 'by an old key' },
    });
    assert.equal(write.statusCode, 403);
    assert.equal(envelopeError(write).details?.reason, 'insufficient_permission');
    assert.deepEqual(envelopeData<{ access: unknown }>(await h.bearer(secret, { url: '/auth/me' })).access, {
      buyer: 'read',
      seller: 'read',
    });
  });

  test("the earlier permission names keep working on existing keys, capped by the owner's role", async () => {
    const org = await h.createOrganization('buyer', 'Legacy Names Buyer');
    const res = await h.ops({
      method: 'POST',
      url: '/_ops/org-api-keys',
      payload: { organizationId: org, permissions: ['buyer:read'] },
    });
    assert.equal(res.statusCode, 201);
    const readKey = (res.json() as { key: string }).key;
    assert.equal((await h.bearer(readKey, { url: ADVERTISERS })).statusCode, 200);
    const write = await h.bearer(readKey, { method: 'POST', url: ADVERTISERS, payload: { name: 'nope' } });
    assert.equal(write.statusCode, 403);
    assert.equal(envelopeError(write).details?.reason, 'insufficient_permission');
    const writeKey = (
      (
        await h.ops({
          method: 'POST',
          url: '/_ops/org-api-keys',
          payload: { organizationId: org, permissions: ['platform:write'] },
        })
      ).json() as { key: string }
    ).key;
    assert.equal(
      (await h.bearer(writeKey, { method: 'POST', url: ADVERTISERS, payload: { name: 'ok' } })).statusCode,
      201,
    );
  });
});

describe('media buying: organization-owned and legacy keys', () => {
  let h: MediaBuyingHarness;
  const clock = new ManualClock(new Date('2026-11-25T10:00:00Z'));
  let cookie: string;

  before(async () => {
    h = await startMediaBuying({ clock });
    cookie = await h.signIn(h.demo.email, h.demo.password);
  });
  after(() => h?.close());

  test('organization-owned keys authenticate; administrators list and revoke them from a session only', async () => {
    const imported = await h.ops({
      method: 'POST',
      url: '/_ops/org-api-keys',
      payload: {
        organizationId: h.demo.organizationId,
        permissions: ['platform:read'],
        label: 'old integration',
      },
    });
    assert.equal(imported.statusCode, 201);
    const { id, key } = imported.json() as { id: string; key: string };
    assert.match(id, /^key_[0-9a-f]{32}$/);
    assert.equal((await h.bearer(key, { url: ADVERTISERS })).statusCode, 200);

    const listed = envelopeData<{ id: string; maskedKey: string }[]>(
      await h.session(cookie, { url: '/api/v2/org-api-keys' }),
    );
    assert.deepEqual(
      listed.map((k) => k.id),
      [id],
    );
    assert.ok(!JSON.stringify(listed).includes(key));
    // Neither a key nor the key itself lists or revokes them.
    assert.equal((await h.bearer(key, { url: '/api/v2/org-api-keys' })).statusCode, 403);
    assert.equal(
      (await h.bearer(h.demo.apiKey, { method: 'DELETE', url: `/api/v2/org-api-keys/${id}` })).statusCode,
      403,
    );

    // Another organization's administrator gets 404 for this id.
    const otherOrg = await h.createOrganization('buyer', 'Other Buyer');
    await h.addMember(otherOrg, 'other-admin@example.com', 'admin');
    const otherCookie = await h.signInAccepted('other-admin@example.com', STRONG_PASSWORD);
    const foreign = await h.session(otherCookie, { method: 'DELETE', url: `/api/v2/org-api-keys/${id}` });
    assert.equal(foreign.statusCode, 404);
    assert.equal(envelopeError(foreign).code, 'NOT_FOUND');

    const revoked = await h.session(cookie, { method: 'DELETE', url: `/api/v2/org-api-keys/${id}` });
    assert.equal(revoked.statusCode, 200);
    assert.equal((await h.bearer(key, { url: ADVERTISERS })).statusCode, 401);
    assert.equal(
      (await h.session(cookie, { method: 'DELETE', url: `/api/v2/org-api-keys/${id}` })).statusCode,
      404,
    );
  });

  test('an imported organization key keeps its secret; a secret cannot be imported twice', async () => {
    const secret = `mbo_${'k'.repeat(43)}`;
    const first = await h.ops({
      method: 'POST',
      url: '/_ops/org-api-keys',
      payload: { organizationId: h.demo.organizationId, permissions: ['platform:read'], key: secret },
    });
    assert.equal(first.statusCode, 201);
    assert.equal((first.json() as { key?: string }).key, undefined, 'an imported secret is not echoed');
    assert.equal((await h.bearer(secret, { url: ADVERTISERS })).statusCode, 200);
    const again = await h.ops({
      method: 'POST',
      url: '/_ops/org-api-keys',
      payload: { organizationId: h.demo.organizationId, permissions: ['platform:read'], key: secret },
    });
    assert.equal(again.statusCode, 409);
  });

  test('legacy keys are accepted until they expire or are revoked; nothing creates, edits or shows them', async () => {
    const secret = `lgc_${'L'.repeat(43)}`;
    const expiresAt = new Date(clock.nowMs() + 3_600_000).toISOString();
    const imported = await h.ops({
      method: 'POST',
      url: '/_ops/legacy-keys',
      payload: {
        organizationId: h.demo.organizationId,
        permissions: ['buyer:write'],
        key: secret,
        expiresAt,
      },
    });
    assert.equal(imported.statusCode, 201, imported.body);
    assert.equal((await h.bearer(secret, { url: ADVERTISERS })).statusCode, 200);
    clock.advance(3_600_000);
    const expired = await h.bearer(secret, { url: ADVERTISERS });
    assert.equal(expired.statusCode, 401);
    assert.equal(envelopeError(expired).code, 'UNAUTHORIZED');
    const doc = (await h.call({ url: '/openapi.json' })).json() as { paths: Record<string, unknown> };
    assert.deepEqual(
      Object.keys(doc.paths).filter((p) => p.includes('legacy') && !p.startsWith('/_ops/')),
      [],
      'no public route creates, edits or reveals legacy keys',
    );
  });

  test("a suspended organization's credentials stop at once; admitting it again restores them", async () => {
    const org = await h.createOrganization('buyer', 'Suspended Buyer');
    const key = (
      (
        await h.ops({
          method: 'POST',
          url: '/_ops/org-api-keys',
          payload: { organizationId: org, permissions: ['platform:read'] },
        })
      ).json() as { key: string }
    ).key;
    assert.equal((await h.bearer(key, { url: ADVERTISERS })).statusCode, 200);
    assert.equal(
      (await h.ops({ method: 'POST', url: `/_ops/organizations/${org}/suspend` })).statusCode,
      200,
    );
    assert.equal((await h.bearer(key, { url: ADVERTISERS })).statusCode, 401);
    assert.equal((await h.ops({ method: 'POST', url: `/_ops/organizations/${org}/admit` })).statusCode, 200);
    assert.equal((await h.bearer(key, { url: ADVERTISERS })).statusCode, 200);
  });
});

describe('media buying: widget tokens, buyer agents, agent registrations, MCP credentials on REST', () => {
  let h: MediaBuyingHarness;
  const clock = new ManualClock(new Date('2026-11-25T10:00:00Z'));
  let cookie: string;

  before(async () => {
    h = await startMediaBuying({ clock });
    cookie = await h.signIn(h.demo.email, h.demo.password);
  });
  after(() => h?.close());

  test('the widget token is an alpha, for an interactive session, bound to the user and organization, short-lived', async () => {
    const alpha = await h.session(cookie, { url: '/api/v2/user-api-keys/widget-token' });
    assert.equal(alpha.statusCode, 403);
    assert.equal(envelopeError(alpha).code, 'ALPHA_OPT_IN_REQUIRED');
    await h.ops({
      method: 'PUT',
      url: `/_ops/organizations/${h.demo.organizationId}/alpha/embedded-widgets`,
    });
    const byKey = await h.bearer(h.demo.apiKey, { url: '/api/v2/user-api-keys/widget-token' });
    assert.equal(byKey.statusCode, 403);
    // A navigation from another site (it carries the Lax cookie) issues nothing.
    const crossSite = await h.session(cookie, {
      url: '/api/v2/user-api-keys/widget-token',
      headers: { 'sec-fetch-site': 'cross-site' },
    });
    assert.equal(crossSite.statusCode, 403);
    assert.equal(envelopeError(crossSite).details?.reason, 'origin_not_allowed');
    const issued = await h.session(cookie, { url: '/api/v2/user-api-keys/widget-token' });
    assert.equal(issued.statusCode, 200);
    assert.equal(issued.headers['cache-control'], 'no-store');
    const { token, expiresAt } = envelopeData<{ token: string; expiresAt: string }>(issued);
    assert.equal(new Date(expiresAt).getTime() - clock.nowMs(), 600_000);
    const me = envelopeData<{
      user: { email: string };
      organization: { id: string };
      credential: { kind: string };
    }>(await h.bearer(token, { url: '/auth/me' }));
    assert.equal(me.user.email, h.demo.email);
    assert.equal(me.organization.id, h.demo.organizationId);
    assert.equal(me.credential.kind, 'widget_token');
    // A widget token reads, whatever the user's role: it creates no credential and writes nothing.
    assert.equal(
      (await h.bearer(token, { method: 'POST', url: '/api/v2/user-api-keys', payload: {} })).statusCode,
      403,
    );
    assert.equal((await h.bearer(token, { url: ADVERTISERS })).statusCode, 200);
    const write = await h.bearer(token, {
      method: 'POST',
      url: ADVERTISERS,
      payload: { name: 'by a widget' },
    });
    assert.equal(write.statusCode, 403);
    assert.equal(envelopeError(write).details?.reason, 'insufficient_permission');
    assert.deepEqual(envelopeData<{ access: unknown }>(await h.bearer(token, { url: '/auth/me' })).access, {
      buyer: 'read',
      seller: 'read',
    });
    clock.advance(600_000);
    assert.equal((await h.bearer(token, { url: '/auth/me' })).statusCode, 401);
  });

  test('buyer-agent credentials: identity only (authenticated, permitted nothing); replace, reconcile, revoke', async () => {
    const issued = await h.session(cookie, {
      method: 'POST',
      url: '/api/v2/buyer-agent-credentials',
      payload: { agentIdentifier: 'https://planner.example.com', label: 'planner' },
    });
    assert.equal(issued.statusCode, 201);
    const { key, record } = envelopeData<{ key: string; record: { id: string } }>(issued);
    const read = await h.bearer(key, { url: ADVERTISERS });
    assert.equal(read.statusCode, 403, 'authenticated (not 401) but permitted nothing');
    assert.equal(envelopeError(read).details?.reason, 'insufficient_permission');
    const duplicate = await h.session(cookie, {
      method: 'POST',
      url: '/api/v2/buyer-agent-credentials',
      payload: { agentIdentifier: 'https://planner.example.com' },
    });
    assert.equal(duplicate.statusCode, 409);
    // Keys cannot issue them: a directly authenticated administrator only.
    const byKey = await h.bearer(h.demo.apiKey, {
      method: 'POST',
      url: '/api/v2/buyer-agent-credentials',
      payload: { agentIdentifier: 'https://x.example.com' },
    });
    assert.equal(byKey.statusCode, 403);

    const replaced = await h.session(cookie, {
      method: 'POST',
      url: `/api/v2/buyer-agent-credentials/${record.id}/replace`,
    });
    assert.equal(replaced.statusCode, 201);
    const next = envelopeData<{ key: string; record: { id: string } }>(replaced);
    assert.equal((await h.bearer(key, { url: ADVERTISERS })).statusCode, 401, 'the replaced secret stops');
    assert.equal((await h.bearer(next.key, { url: ADVERTISERS })).statusCode, 403);

    const reconciled = envelopeData<{ matched: { id: string }[]; missing: string[]; unexpected: unknown[] }>(
      await h.session(cookie, {
        method: 'POST',
        url: '/api/v2/buyer-agent-credentials/reconcile',
        payload: { agentIdentifiers: ['https://planner.example.com', 'https://buyer2.example.com'] },
      }),
    );
    assert.deepEqual(
      reconciled.matched.map((c) => c.id),
      [next.record.id],
    );
    assert.deepEqual(reconciled.missing, ['https://buyer2.example.com']);
    assert.deepEqual(reconciled.unexpected, []);

    const history = envelopeData<{ id: string; replacedBy: string | null }[]>(
      await h.session(cookie, { url: '/api/v2/buyer-agent-credentials?includeRevoked=true' }),
    );
    assert.equal(history.find((c) => c.id === record.id)?.replacedBy, next.record.id);

    assert.equal(
      (
        await h.session(cookie, {
          method: 'DELETE',
          url: `/api/v2/buyer-agent-credentials/${next.record.id}`,
        })
      ).statusCode,
      200,
    );
    assert.equal((await h.bearer(next.key, { url: ADVERTISERS })).statusCode, 401);
  });

  test('agent registration credentials carry the read permission; the older buyer read tokens are an alias', async () => {
    for (const alias of [false, true]) {
      const res = await h.ops({
        method: 'POST',
        url: '/_ops/agent-registrations',
        payload: { workloadId: `w-${alias}`, organizationId: h.demo.organizationId, alias },
      });
      assert.equal(res.statusCode, 201);
      const { key, state } = res.json() as { key: string; state: string };
      assert.ok(key.startsWith(alias ? 'mbt_' : 'mbr_'));
      assert.equal(state, 'customer_bound');
      assert.equal((await h.bearer(key, { url: ADVERTISERS })).statusCode, 200);
      const write = await h.bearer(key, { method: 'POST', url: ADVERTISERS, payload: { name: 'x' } });
      assert.equal(write.statusCode, 403);
    }
  });

  test('MCP access credentials are refused on REST routes', async () => {
    const mcp = `mcp_at_${'M'.repeat(43)}`;
    const res = await h.bearer(mcp, { url: ADVERTISERS });
    assert.equal(res.statusCode, 401);
  });
});

describe('media buying: sessions', () => {
  let h: MediaBuyingHarness;
  const clock = new ManualClock(new Date('2026-11-25T10:00:00Z'));

  before(async () => {
    h = await startMediaBuying({ clock });
  });
  after(() => h?.close());

  test('the session cookie is HttpOnly, SameSite=Lax, host-only and not Secure on http', async () => {
    const res = await h.call({
      method: 'POST',
      url: '/auth/password',
      payload: { email: h.demo.email, password: h.demo.password },
    });
    const cookie = String(res.headers['set-cookie']);
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Lax/);
    assert.doesNotMatch(cookie, /Secure/);
    assert.doesNotMatch(cookie, /Domain=/i);
    assert.match(cookie, /Max-Age=604800/);
  });

  test('state-changing requests with the cookie come from the UI origin only; bearer requests are not bound to it', async () => {
    const cookie = await h.signIn(h.demo.email, h.demo.password);
    const post = (headers: Record<string, string>) =>
      h.call({
        method: 'POST',
        url: ADVERTISERS,
        payload: { name: 'Origin test' },
        headers: { cookie, ...headers },
      });
    const none = await post({});
    assert.equal(none.statusCode, 403);
    assert.equal(envelopeError(none).details?.reason, 'origin_not_allowed');
    assert.equal((await post({ origin: 'https://evil.example' })).statusCode, 403);
    assert.equal((await post({ origin: 'http://127.0.0.1:4100.evil.example' })).statusCode, 403);
    assert.equal((await post({ origin: UI_ORIGIN })).statusCode, 201);
    // Reads need no Origin; a bearer request is not a browser's ambient authority.
    assert.equal((await h.call({ url: ADVERTISERS, headers: { cookie } })).statusCode, 200);
    const bearer = await h.bearer(h.demo.apiKey, {
      method: 'POST',
      url: ADVERTISERS,
      payload: { name: 'By key' },
      headers: { origin: 'https://integrator.example' },
    });
    assert.equal(bearer.statusCode, 201);
    // Sign-in from another origin's page (login CSRF) is refused.
    const csrf = await h.call({
      method: 'POST',
      url: '/auth/password',
      payload: { email: h.demo.email, password: h.demo.password },
      headers: { origin: 'https://evil.example' },
    });
    assert.equal(csrf.statusCode, 403);
  });

  test('sign-out ends the session at once; a session expires after its lifetime', async () => {
    const cookie = await h.signIn(h.demo.email, h.demo.password);
    assert.equal((await h.session(cookie, { url: '/auth/me' })).statusCode, 200);
    const out = await h.session(cookie, { method: 'POST', url: '/auth/sign-out' });
    assert.equal(out.statusCode, 200);
    assert.match(String(out.headers['set-cookie']), /Max-Age=0/);
    assert.equal((await h.session(cookie, { url: '/auth/me' })).statusCode, 401);

    const again = await h.signIn(h.demo.email, h.demo.password);
    clock.advance(7 * 86_400_000 - 1000);
    assert.equal((await h.session(again, { url: '/auth/me' })).statusCode, 200);
    clock.advance(1000);
    assert.equal((await h.session(again, { url: '/auth/me' })).statusCode, 401);
  });

  test('a wrong password and an unknown email get the same 401', async () => {
    const wrong = await h.call({
      method: 'POST',
      url: '/auth/password',
      payload: { email: h.demo.email, password: 'not the password at all' },
    });
    const unknown = await h.call({
      method: 'POST',
      url: '/auth/password',
      payload: { email: 'nobody@example.com', password: 'not the password at all' },
    });
    assert.equal(wrong.statusCode, 401);
    assert.equal(unknown.statusCode, 401);
    assert.deepEqual(wrong.json(), unknown.json());
  });

  test('sign-in attempts are throttled per account (10 failures / 15 min) and per client address (30)', async () => {
    const email = 'throttled@example.com';
    await h.addMember(h.demo.organizationId, email, 'member');
    clock.advance(16 * 60_000);
    for (let i = 0; i < 10; i++) {
      const res = await h.call({
        method: 'POST',
        url: '/auth/password',
        payload: { email, password: `wrong ${i}` },
      });
      assert.equal(res.statusCode, 401, `attempt ${i}`);
    }
    const locked = await h.call({
      method: 'POST',
      url: '/auth/password',
      payload: { email, password: STRONG_PASSWORD },
    });
    assert.equal(locked.statusCode, 429, 'even the right password, until the window ends');
    assert.equal(envelopeError(locked).code, 'RATE_LIMITED');
    assert.ok(Number(locked.headers['retry-after']) > 0);
    clock.advance(15 * 60_000);
    assert.equal(
      (await h.call({ method: 'POST', url: '/auth/password', payload: { email, password: STRONG_PASSWORD } }))
        .statusCode,
      200,
    );

    // One address trying many accounts: refused after 30 failures, other addresses are not.
    const from = (remoteAddress: string, i: number) =>
      h.call({
        method: 'POST',
        url: '/auth/password',
        payload: { email: `spray-${i}@example.com`, password: 'guess guess guess' },
        remoteAddress,
      });
    for (let i = 0; i < 30; i++) assert.equal((await from('198.51.100.9', i)).statusCode, 401);
    assert.equal((await from('198.51.100.9', 31)).statusCode, 429);
    assert.equal((await from('198.51.100.10', 32)).statusCode, 401);
  });

  test('concurrent wrong passwords cannot pass the throttle together: at most 10 are checked, the rest are 429', async () => {
    const email = 'burst@example.com';
    await h.addMember(h.demo.organizationId, email, 'member');
    clock.advance(16 * 60_000);
    const answers = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        h.call({ method: 'POST', url: '/auth/password', payload: { email, password: `burst guess ${i}` } }),
      ),
    );
    const statuses = answers.map((r) => r.statusCode);
    assert.equal(statuses.filter((s) => s === 401).length, 10, statuses.join(','));
    assert.equal(statuses.filter((s) => s === 429).length, 15);
    clock.advance(15 * 60_000);
    // A success gives back the unit it reserved: ten more failures are allowed after it in a new window.
    assert.equal(
      (await h.call({ method: 'POST', url: '/auth/password', payload: { email, password: STRONG_PASSWORD } }))
        .statusCode,
      200,
    );
    for (let i = 0; i < 10; i++)
      assert.equal(
        (await h.call({ method: 'POST', url: '/auth/password', payload: { email, password: `again ${i}` } }))
          .statusCode,
        401,
      );
  });

  test('a platform-wide security sign-out ends every session and widget token; API keys keep working', async () => {
    const cookie = await h.signIn(h.demo.email, h.demo.password);
    await h.ops({
      method: 'PUT',
      url: `/_ops/organizations/${h.demo.organizationId}/alpha/embedded-widgets`,
    });
    const token = envelopeData<{ token: string }>(
      await h.session(cookie, { url: '/api/v2/user-api-keys/widget-token' }),
    ).token;
    const res = await h.ops({ method: 'POST', url: '/_ops/security-sign-out' });
    assert.equal(res.statusCode, 200);
    const ended = res.json() as { sessions: number; widgetTokens: number };
    assert.ok(ended.sessions >= 1 && ended.widgetTokens >= 1, JSON.stringify(ended));
    assert.equal((await h.session(cookie, { url: '/auth/me' })).statusCode, 401);
    assert.equal((await h.bearer(token, { url: '/auth/me' })).statusCode, 401);
    assert.equal((await h.bearer(h.demo.apiKey, { url: '/auth/me' })).statusCode, 200);
  });

  test('a disabled user: every credential they hold stops', async () => {
    const email = 'disabled@example.com';
    const userId = await h.addMember(h.demo.organizationId, email, 'admin');
    const cookie = await h.signInAccepted(email, STRONG_PASSWORD);
    const key = await h.createUserKey(cookie);
    assert.equal((await h.ops({ method: 'POST', url: `/_ops/users/${userId}/disable` })).statusCode, 200);
    assert.equal((await h.session(cookie, { url: '/auth/me' })).statusCode, 401);
    assert.equal((await h.bearer(key, { url: '/auth/me' })).statusCode, 401);
    const disabled = await h.call({
      method: 'POST',
      url: '/auth/password',
      payload: { email, password: STRONG_PASSWORD },
    });
    assert.equal(disabled.statusCode, 401);
    const wrong = await h.call({
      method: 'POST',
      url: '/auth/password',
      payload: { email, password: 'wrong guess 123' },
    });
    assert.deepEqual(disabled.json(), wrong.json(), 'a disabled account answers as a wrong password');
  });
});

describe('media buying: the session cookie on https and under a parent domain (rule 4)', () => {
  test('Secure on an https public URL; Domain only when the API host is under the configured parent domain', async () => {
    const cases = [
      { url: 'https://api.media.example.com', domain: 'media.example.com', expectDomain: true },
      { url: 'https://api.other.example', domain: 'media.example.com', expectDomain: false },
      // The API host itself is not a parent domain: the cookie stays host-only.
      { url: 'https://media.example.com', domain: 'media.example.com', expectDomain: false },
    ];
    for (const c of cases) {
      const platform: TestPlatform = await startTestPlatform({
        services: [mediaBuyingService],
        env: { MEDIA_BUYING_PUBLIC_URL: c.url, MEDIA_BUYING_COOKIE_DOMAIN: c.domain },
      });
      try {
        const demo = platform.credentials('media-buying') as { email: string; password: string };
        const res = await platform.app('media-buying').inject({
          method: 'POST',
          url: '/auth/password',
          payload: { email: demo.email, password: demo.password },
        });
        const cookie = String(res.headers['set-cookie']);
        assert.match(cookie, /Secure/);
        if (c.expectDomain) assert.match(cookie, /Domain=media\.example\.com/);
        else assert.doesNotMatch(cookie, /Domain=/i);
      } finally {
        await platform.close();
      }
    }
  });
});
