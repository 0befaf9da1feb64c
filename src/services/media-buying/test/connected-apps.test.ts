/**
 * Connected apps (spec "Resources and fields": the connected-app listing; "Authentication" rule 2): the signed-in
 * user's MCP connectors with app name, first-connected and last-refresh times, and disconnecting one, which
 * invalidates its access and refresh credentials at once, on every instance. Interactive sessions only. Connections
 * are written straight into the database (`support/connectors.ts`), as part 3's OAuth flow will.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { and, eq, isNull } from 'drizzle-orm';
import { waitUntil } from '../../../../test/support/wait.ts';
import { ManualClock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/database.ts';
import { PREFIX } from '../credentials/index.ts';
import { auditLogs, mcpAccessTokens, mcpGrants, mcpRefreshTokens } from '../db/schema.ts';
import { insertConnection } from './support/connectors.ts';
import {
  envelopeData,
  envelopeError,
  type MediaBuyingHarness,
  STRONG_PASSWORD,
  startMediaBuying,
} from './support/harness.ts';

const LIST = '/api/v2/connected-apps';
const RESOURCE = 'http://127.0.0.1:4100/mcp/v3';

interface Listed {
  data: {
    id: string;
    appName: string;
    clientId: string;
    resource: string;
    scope: string;
    firstConnectedAt: string;
    lastRefreshedAt: string | null;
  }[];
  meta: { pagination: { skip: number; take: number; total: number; hasMore: boolean } };
}

describe('media buying: connected apps', () => {
  const clock = new ManualClock(new Date('2026-11-25T10:00:00Z'));
  let h: MediaBuyingHarness;
  let db: Db;
  let ada: { id: string; cookie: string };
  let grace: { id: string; cookie: string };
  const at = (minutes: number) => new Date(clock.nowMs() + minutes * 60_000);

  before(async () => {
    h = await startMediaBuying({ clock });
    db = h.platform.booted.database.db;
    const org = await h.createOrganization('buyer', 'Connectors Inc');
    const adaId = await h.addMember(org, 'ada@connectors.example', 'admin', 'Ada');
    const graceId = await h.addMember(org, 'grace@connectors.example', 'member', 'Grace');
    ada = { id: adaId, cookie: await h.signInAccepted('ada@connectors.example', STRONG_PASSWORD) };
    grace = { id: graceId, cookie: await h.signInAccepted('grace@connectors.example', STRONG_PASSWORD) };
  });
  after(() => h?.close());

  const list = async (cookie: string, query = '') => {
    const res = await h.session(cookie, { url: `${LIST}${query}` });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Listed;
  };

  test('the listing shows the active connections of the signed-in user only: app name, first-connected and last-refresh times, newest first, paged', async () => {
    const older = await insertConnection(db, {
      userPublicId: ada.id,
      appName: 'Claude',
      resource: RESOURCE,
      firstConnectedAt: at(-600),
      lastRefreshedAt: at(-5),
    });
    const newer = await insertConnection(db, {
      userPublicId: ada.id,
      appName: 'Reporting <Agent> & "Co"',
      resource: `${RESOURCE}/creative`,
      scope: 'adcp:read',
      firstConnectedAt: at(-60),
    });
    await insertConnection(db, {
      userPublicId: ada.id,
      appName: 'Disconnected earlier',
      resource: RESOURCE,
      firstConnectedAt: at(-30),
      revokedAt: at(-10),
    });
    const gracesApp = await insertConnection(db, {
      userPublicId: grace.id,
      appName: 'Grace app',
      resource: RESOURCE,
      firstConnectedAt: at(-20),
    });

    const page = await list(ada.cookie);
    assert.deepEqual(page.data, [
      {
        id: newer.id,
        appName: 'Reporting <Agent> & "Co"',
        clientId: newer.clientId,
        resource: `${RESOURCE}/creative`,
        scope: 'adcp:read',
        firstConnectedAt: at(-60).toISOString(),
        lastRefreshedAt: null,
      },
      {
        id: older.id,
        appName: 'Claude',
        clientId: older.clientId,
        resource: RESOURCE,
        scope: 'adcp:read adcp:write',
        firstConnectedAt: at(-600).toISOString(),
        lastRefreshedAt: at(-5).toISOString(),
      },
    ]);
    assert.deepEqual(page.meta.pagination, { skip: 0, take: 50, total: 2, hasMore: false });
    assert.match(older.id, /^mcg_[0-9a-f]{32}$/);

    const second = await list(ada.cookie, '?take=1&skip=1');
    assert.deepEqual(
      second.data.map((a) => a.id),
      [older.id],
    );
    assert.deepEqual(second.meta.pagination, { skip: 1, take: 1, total: 2, hasMore: false });
    const first = await list(ada.cookie, '?take=1');
    assert.deepEqual(first.meta.pagination, { skip: 0, take: 1, total: 2, hasMore: true });
    const past = await list(ada.cookie, '?skip=5');
    assert.deepEqual(past.data, []);
    assert.deepEqual(past.meta.pagination, { skip: 5, take: 50, total: 2, hasMore: false });

    assert.deepEqual(
      (await list(grace.cookie)).data.map((a) => a.id),
      [gracesApp.id],
    );
    const tooMany = await h.session(ada.cookie, { url: `${LIST}?take=101` });
    assert.equal(tooMany.statusCode, 400);
    assert.equal(envelopeError(tooMany).code, 'VALIDATION_ERROR');
  });

  test('only an interactive session lists or disconnects: a user API key is 403, no credential 401', async () => {
    const key = await h.createUserKey(ada.cookie);
    const connection = await insertConnection(db, {
      userPublicId: ada.id,
      appName: 'Key probe',
      resource: RESOURCE,
      firstConnectedAt: at(-1),
    });
    for (const call of [{ url: LIST }, { method: 'DELETE' as const, url: `${LIST}/${connection.id}` }]) {
      const byKey = await h.bearer(key, call);
      assert.equal(byKey.statusCode, 403, byKey.body);
      assert.equal(envelopeError(byKey).details?.reason, 'interactive_session_required');
      const anonymous = await h.call(call);
      assert.equal(anonymous.statusCode, 401);
      assert.equal(envelopeError(anonymous).code, 'UNAUTHORIZED');
    }
    const [grant] = await db.select().from(mcpGrants).where(eq(mcpGrants.publicId, connection.id));
    assert.equal(grant!.revokedAt, null);
  });

  test('disconnecting revokes the connection and every access and refresh credential under it at once; twice is a 404', async () => {
    const connection = await insertConnection(db, {
      userPublicId: ada.id,
      appName: 'To disconnect',
      resource: RESOURCE,
      firstConnectedAt: at(-120),
      // One valid access credential, one already expired: both are revoked.
      accessExpiresAt: [at(30), at(-1)],
      refreshTokens: 2,
    });
    const other = await insertConnection(db, {
      userPublicId: ada.id,
      appName: 'Stays connected',
      resource: RESOURCE,
      firstConnectedAt: at(-90),
    });
    clock.advance(1000);
    const res = await h.session(ada.cookie, { method: 'DELETE', url: `${LIST}/${connection.id}` });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(envelopeData(res), {
      id: connection.id,
      disconnected: true,
      accessTokensRevoked: 2,
      refreshTokensRevoked: 2,
    });

    const now = clock.now().getTime();
    const [grant] = await db.select().from(mcpGrants).where(eq(mcpGrants.id, connection.grantId));
    assert.equal(grant!.revokedAt?.getTime(), now);
    const access = await db
      .select()
      .from(mcpAccessTokens)
      .where(eq(mcpAccessTokens.grantId, connection.grantId));
    assert.deepEqual(
      access.map((t) => t.revokedAt?.getTime()),
      [now, now],
    );
    const refresh = await db
      .select()
      .from(mcpRefreshTokens)
      .where(eq(mcpRefreshTokens.grantId, connection.grantId));
    assert.deepEqual(
      refresh.map((t) => t.revokedAt?.getTime()),
      [now, now],
    );
    // The other connection is untouched.
    const untouched = await db
      .select()
      .from(mcpAccessTokens)
      .where(and(eq(mcpAccessTokens.grantId, other.grantId), isNull(mcpAccessTokens.revokedAt)));
    assert.equal(untouched.length, 1);
    assert.ok(!(await list(ada.cookie)).data.some((a) => a.id === connection.id));
    assert.ok((await list(ada.cookie)).data.some((a) => a.id === other.id));

    const [audit] = await db
      .select()
      .from(auditLogs)
      .where(and(eq(auditLogs.action, 'connected_app.disconnected'), eq(auditLogs.targetId, connection.id)));
    assert.equal(audit?.actorKind, 'session');
    assert.deepEqual(audit?.metadata, { accessTokensRevoked: 2, refreshTokensRevoked: 2 });

    const again = await h.session(ada.cookie, { method: 'DELETE', url: `${LIST}/${connection.id}` });
    assert.equal(again.statusCode, 404);
    assert.equal(envelopeError(again).code, 'NOT_FOUND');
  });

  test("another user's connection or an unknown id is a 404 and nothing changes", async () => {
    const gracesApp = await insertConnection(db, {
      userPublicId: grace.id,
      appName: 'Not yours',
      resource: RESOURCE,
      firstConnectedAt: at(-5),
    });
    for (const id of [gracesApp.id, 'mcg_00000000000000000000000000000000', 'nonsense']) {
      const res = await h.session(ada.cookie, { method: 'DELETE', url: `${LIST}/${id}` });
      assert.equal(res.statusCode, 404, res.body);
      assert.equal(envelopeError(res).code, 'NOT_FOUND');
    }
    const [grant] = await db.select().from(mcpGrants).where(eq(mcpGrants.id, gracesApp.grantId));
    assert.equal(grant!.revokedAt, null);
    const [token] = await db
      .select()
      .from(mcpAccessTokens)
      .where(eq(mcpAccessTokens.grantId, gracesApp.grantId));
    assert.equal(token!.revokedAt, null);
  });

  test('a disconnection from another origin is refused (rule 4) and revokes nothing', async () => {
    const connection = await insertConnection(db, {
      userPublicId: grace.id,
      appName: 'Origin probe',
      resource: RESOURCE,
      firstConnectedAt: at(-5),
    });
    for (const origin of ['https://evil.example', 'http://127.0.0.1:4101']) {
      const res = await h.session(grace.cookie, {
        method: 'DELETE',
        url: `${LIST}/${connection.id}`,
        headers: { origin },
      });
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(envelopeError(res).details?.reason, 'origin_not_allowed');
    }
    const [grant] = await db.select().from(mcpGrants).where(eq(mcpGrants.id, connection.grantId));
    assert.equal(grant!.revokedAt, null);
  });

  test('signing out of the browser does not disconnect an app (rule 2); outstanding terms do not block a disconnection', async () => {
    const connection = await insertConnection(db, {
      userPublicId: grace.id,
      appName: 'Survives sign-out',
      resource: RESOURCE,
      firstConnectedAt: at(-5),
    });
    const signedOut = await h.session(grace.cookie, { method: 'POST', url: '/auth/sign-out' });
    assert.equal(signedOut.statusCode, 200, signedOut.body);
    const [grant] = await db.select().from(mcpGrants).where(eq(mcpGrants.id, connection.grantId));
    assert.equal(grant!.revokedAt, null);

    const published = await h.ops({
      method: 'POST',
      url: '/_ops/terms',
      payload: { version: '2026-12-01', title: 'Terms v2', body: 'New terms.' },
    });
    assert.equal(published.statusCode, 201, published.body);
    grace.cookie = await h.signIn('grace@connectors.example', STRONG_PASSWORD);
    const blocked = await h.session(grace.cookie, {
      method: 'POST',
      url: '/api/v2/user-api-keys',
      payload: {},
    });
    assert.equal(envelopeError(blocked).code, 'TOS_ACCEPTANCE_REQUIRED');
    const res = await h.session(grace.cookie, { method: 'DELETE', url: `${LIST}/${connection.id}` });
    assert.equal(res.statusCode, 200, res.body);
  });

  test('a disconnected access credential is refused by every instance at once, even one that had it cached', async () => {
    const connection = await insertConnection(db, {
      userPublicId: ada.id,
      appName: 'Cached elsewhere',
      resource: RESOURCE,
      firstConnectedAt: at(-5),
    });
    // A store with its own cache, told of revocations only by NOTIFY, as another instance's store is.
    const running = h.platform.booted.services.get('media-buying')!;
    const elsewhere = running.ctx.credentialStore({
      table: mcpAccessTokens,
      prefixes: [PREFIX.mcpAccess],
      principal: (row) => ({ grantId: row.grantId }),
      attributes: () => ({}),
    });
    const unlisten = await elsewhere.listen(running.ctx.notifier);
    try {
      const token = connection.accessTokens[0]!;
      const before = await elsewhere.resolve(token);
      assert.deepEqual(before, { status: 'active', principal: { grantId: connection.grantId } });
      const res = await h.session(ada.cookie, { method: 'DELETE', url: `${LIST}/${connection.id}` });
      assert.equal(res.statusCode, 200, res.body);
      // The cached answer lives 60 s and the clock does not move: only the revocation notice can change it.
      await waitUntil('the other store sees the revocation', async () => {
        const now = await elsewhere.resolve(token);
        return now.status === 'revoked';
      });
    } finally {
      await unlisten();
    }
  });
});
