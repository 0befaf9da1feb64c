import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { waitUntil } from '../../../../test/support/wait.ts';
import { type GatewayHarness, startGateway } from './support.ts';

/**
 * The operator's user administration: users and role bindings per scope, removing a binding (the role stops at
 * once), disabling a user (no sign-in, every token stops at once on every instance), enabling again.
 */
describe('agent-gateway operator: users and role bindings', () => {
  let h: GatewayHarness;
  before(async () => {
    h = await startGateway({ env: { AGENT_GATEWAY_SCOPE_MODE: 'multi' } });
    assert.equal(
      (await h.ops('POST', '/_ops/tenants/demo/namespaces', { id: 'staging', name: 'Staging' })).statusCode,
      201,
    );
  });
  after(() => h?.close());

  const demo = { 'x-platform-tenant': 'demo', 'x-platform-namespace': 'default' };
  const staging = { 'x-platform-tenant': 'demo', 'x-platform-namespace': 'staging' };

  test('role bindings per scope: a binding opens its scope only; DELETE removes it at once; unknown is 404', async () => {
    const u = await h.user('editor', { tenant: 'demo', namespace: 'default' });
    assert.equal((await h.api(u.token, 'GET', '/api/v1/agents', undefined, demo)).statusCode, 200);
    assert.equal((await h.api(u.token, 'GET', '/api/v1/agents', undefined, staging)).statusCode, 403);
    const granted = await h.ops('PUT', '/_ops/role-bindings', {
      userId: u.id,
      tenant: 'demo',
      namespace: 'staging',
      role: 'viewer',
    });
    assert.equal(granted.statusCode, 200, granted.body);
    assert.equal((await h.api(u.token, 'GET', '/api/v1/agents', undefined, staging)).statusCode, 200);
    const write = await h.api(
      u.token,
      'POST',
      '/api/v1/agents',
      { name: 'x', definition: { kind: 'template', template: 'hi' } },
      staging,
    );
    assert.equal(write.statusCode, 403, 'a viewer there');
    assert.equal(write.json().code, 'insufficient_role');
    const read = await h.ops('GET', `/_ops/users/${u.id}`);
    assert.equal(read.statusCode, 200, read.body);
    assert.deepEqual(read.json().roles, [
      { tenant: 'demo', namespace: 'default', role: 'editor' },
      { tenant: 'demo', namespace: 'staging', role: 'viewer' },
    ]);

    const removed = await h.ops('DELETE', `/_ops/role-bindings?userId=${u.id}&tenant=demo&namespace=default`);
    assert.equal(removed.statusCode, 204, removed.body);
    const gone = await h.api(u.token, 'GET', '/api/v1/agents', undefined, demo);
    assert.equal(gone.statusCode, 403);
    assert.equal(gone.json().code, 'scope_forbidden');
    assert.equal((await h.api(u.token, 'GET', '/api/v1/agents', undefined, staging)).statusCode, 200);
    const again = await h.ops('DELETE', `/_ops/role-bindings?userId=${u.id}&tenant=demo&namespace=default`);
    assert.equal(again.statusCode, 404);
    assert.equal(
      (await h.ops('GET', '/_ops/users/usr_ffffffffffffffffffffffffffffffff')).statusCode,
      404,
      'an unknown user',
    );
  });

  test('a disabled user cannot sign in and every token stops at once on every instance; enable restores sign-in', async () => {
    const b = (await h.platform.anotherInstance()).app('agent-gateway');
    const u = await h.user('editor', { tenant: 'demo', namespace: '*' });
    const second = await h.api(undefined, 'POST', '/api/auth/login', {
      username: u.username,
      password: u.password,
    });
    const tokens = [u.token, second.json().token as string];
    const me = (app: typeof b, token: string) =>
      app.inject({ url: '/api/auth/me', headers: { authorization: `Bearer ${token}` } });
    for (const t of tokens) {
      assert.equal((await me(h.platform.app('agent-gateway'), t)).statusCode, 200);
      assert.equal((await me(b, t)).statusCode, 200, 'instance B resolved (and cached) the token');
    }
    const disabled = await h.ops('POST', `/_ops/users/${u.id}/disable`);
    assert.equal(disabled.statusCode, 200, disabled.body);
    assert.equal(disabled.json().revokedTokens, 2);
    assert.ok(disabled.json().user.disabledAt);
    for (const t of tokens) {
      const here = await me(h.platform.app('agent-gateway'), t);
      assert.equal(here.statusCode, 401);
      assert.equal(here.json().code, 'token_revoked');
    }
    // B drops its cached resolutions when the revocation's NOTIFY arrives (it is sent at commit).
    await waitUntil('instance B refuses the token', async () => (await me(b, tokens[1]!)).statusCode === 401);
    for (const t of tokens) assert.equal((await me(b, t)).statusCode, 401, 'instance B refuses it too');
    const login = await h.api(undefined, 'POST', '/api/auth/login', {
      username: u.username,
      password: u.password,
    });
    assert.equal(login.statusCode, 401, 'a disabled user answers as a wrong password');
    assert.equal(login.json().code, 'invalid_credentials');
    const issued = await h.ops('POST', '/_ops/keys', { kind: 'session', userId: u.id });
    assert.equal(issued.statusCode, 400, 'no operator-issued token for a disabled user either');

    const enabled = await h.ops('POST', `/_ops/users/${u.id}/enable`);
    assert.equal(enabled.statusCode, 200, enabled.body);
    assert.equal(enabled.json().user.disabledAt, null);
    const back = await h.api(undefined, 'POST', '/api/auth/login', {
      username: u.username,
      password: u.password,
    });
    assert.equal(back.statusCode, 200, back.body);
    assert.equal((await me(b, tokens[0]!)).statusCode, 401, 'old tokens stay revoked');
  });

  test('operator-issued keys are answered with Cache-Control: no-store', async () => {
    const u = await h.user('viewer', { tenant: 'demo', namespace: 'default' });
    const issued = await h.ops('POST', '/_ops/keys', { kind: 'session', userId: u.id });
    assert.equal(issued.statusCode, 201, issued.body);
    assert.equal(issued.headers['cache-control'], 'no-store');
  });
});
