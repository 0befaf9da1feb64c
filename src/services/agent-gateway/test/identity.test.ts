import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../../platform/clock.ts';
import { type GatewayHarness, startGateway } from './support.ts';

/** Spec E "E. Identities" and "Authentication": sign-in, tokens, logout, scope rules, roles. */
describe('agent-gateway identities and scope (single-scope install)', () => {
  const clock = new ManualClock(new Date('2026-11-24T12:00:00Z'));
  let h: GatewayHarness;
  before(async () => {
    h = await startGateway({ clock });
  });
  after(() => h?.close());

  test('login gives an opaque expiring token; me names the user and scopes; wrong passwords are one 401', async () => {
    const seeded = h.platform.credentials('agent-gateway');
    const login = await h.api(undefined, 'POST', '/api/auth/login', {
      username: seeded.username,
      password: seeded.password,
    });
    assert.equal(login.statusCode, 200, login.body);
    const { token, expiresAt, tokenType } = login.json();
    assert.match(token, /^ags_[A-Za-z0-9_-]{43}$/);
    assert.equal(tokenType, 'Bearer');
    assert.equal(expiresAt, new Date(clock.nowMs() + 12 * 3600_000).toISOString());
    const me = await h.api(token, 'GET', '/api/auth/me');
    assert.equal(me.statusCode, 200, me.body);
    assert.equal(me.json().user.username, 'demo');
    assert.deepEqual(me.json().scopes, [{ tenant: 'demo', namespace: '*', role: 'admin' }]);
    assert.ok(!me.body.includes('password'), 'no password hash in the answer');

    const wrong = await h.api(undefined, 'POST', '/api/auth/login', { username: 'demo', password: 'nope' });
    const unknown = await h.api(undefined, 'POST', '/api/auth/login', {
      username: 'nobody',
      password: 'nope',
    });
    assert.equal(wrong.statusCode, 401);
    assert.equal(unknown.statusCode, 401);
    assert.deepEqual(wrong.json(), unknown.json());
    assert.equal(wrong.json().code, 'invalid_credentials');
    assert.deepEqual(Object.keys(wrong.json()).sort(), ['code', 'error', 'message']);
    assert.equal(wrong.json().error, 'Unauthorized');
  });

  test('failed sign-ins are limited per username (429 with Retry-After), by the clock; successes are not counted', async () => {
    const u = await h.user('viewer');
    const login = (password: string, username = u.username) =>
      h.api(undefined, 'POST', '/api/auth/login', { username, password });
    // Many successful sign-ins in one minute are never refused.
    for (let i = 0; i < 15; i++) assert.equal((await login(u.password)).statusCode, 200, `success ${i}`);
    for (let i = 0; i < 10; i++) {
      const wrong = await login('wrong');
      assert.equal(wrong.statusCode, 401, `failure ${i}`);
      assert.equal(wrong.json().code, 'invalid_credentials');
    }
    const limited = await login(u.password);
    assert.equal(limited.statusCode, 429, 'the right password too, once the failures are spent');
    assert.equal(limited.json().code, 'rate_limited');
    assert.ok(Number(limited.headers['retry-after']) >= 1);
    const otherUser = await login('wrong', 'demo');
    assert.equal(otherUser.statusCode, 401, 'another username has its own budget');
    clock.advance(60_000);
    const again = await login(u.password);
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.headers['cache-control'], 'no-store', 'a token answer is kept by no cache');
    clock.set(new Date('2026-11-24T12:00:00Z'));
  });

  test('passwords are stored as argon2id, tokens as SHA-256', async () => {
    const pool = h.platform.booted.database.pool;
    const { rows } = await pool.query(
      `select password_hash from agent_gateway.users where username = 'demo'`,
    );
    assert.match(rows[0].password_hash, /^\$argon2id\$v=19\$/);
    const token = h.demoToken;
    const stored = await pool.query(`select key_hash from agent_gateway.credentials where kind = 'session'`);
    assert.ok(stored.rows.every((r: { key_hash: string }) => /^[0-9a-f]{64}$/.test(r.key_hash)));
    assert.ok(!JSON.stringify(stored.rows).includes(token));
  });

  test('a token expires by the clock; logout stops it at once', async () => {
    const u = await h.user('viewer');
    assert.equal((await h.api(u.token, 'GET', '/api/auth/me')).statusCode, 200);
    const out = await h.api(u.token, 'POST', '/api/auth/logout');
    assert.equal(out.statusCode, 204, out.body);
    const after = await h.api(u.token, 'GET', '/api/auth/me');
    assert.equal(after.statusCode, 401);
    assert.equal(after.json().code, 'token_revoked');

    const v = await h.user('viewer');
    clock.advance(12 * 3600_000 - 1000);
    assert.equal((await h.api(v.token, 'GET', '/api/v1/agents')).statusCode, 200);
    clock.advance(1000);
    const expired = await h.api(v.token, 'GET', '/api/v1/agents');
    assert.equal(expired.statusCode, 401);
    assert.equal(expired.json().code, 'token_expired');
    clock.set(new Date('2026-11-24T12:00:00Z'));
  });

  test('single-scope install: the server decides the scope; headers, body and query must agree with it', async () => {
    const t = h.demoToken;
    const list = await h.api(t, 'GET', '/api/v1/agents');
    assert.equal(list.statusCode, 200, list.body);
    assert.equal(
      list.json().agents.length,
      5,
      "the seeded agents (part 1's four and the demo endpoint's Summarizer)",
    );
    assert.ok(list.json().agents.every((a: { tenant: string }) => a.tenant === 'demo'));
    const same = await h.api(t, 'GET', '/api/v1/agents?tenant=demo', undefined, {
      'x-platform-tenant': 'demo',
      'x-platform-namespace': 'default',
    });
    assert.equal(same.statusCode, 200, same.body);

    const disagree = await h.api(t, 'GET', '/api/v1/agents?tenant=other', undefined, {
      'x-platform-tenant': 'demo',
    });
    assert.equal(disagree.statusCode, 400);
    assert.equal(disagree.json().code, 'scope_mismatch');
    const bodyDisagrees = await h.api(
      t,
      'POST',
      '/api/v1/agents',
      { namespace: 'other', name: 'x', definition: { kind: 'template', template: 'x' } },
      { 'x-platform-namespace': 'default' },
    );
    assert.equal(bodyDisagrees.statusCode, 400);
    assert.equal(bodyDisagrees.json().code, 'scope_mismatch');
    const notTheInstalls = await h.api(t, 'GET', '/api/v1/agents', undefined, {
      'x-platform-tenant': 'other',
    });
    assert.equal(notTheInstalls.statusCode, 400);
    assert.equal(notTheInstalls.json().code, 'scope_mismatch');
  });

  test('roles: a viewer reads but cannot write (403); a user without a role in the scope gets 403', async () => {
    const viewer = await h.user('viewer');
    assert.equal((await h.api(viewer.token, 'GET', '/api/v1/agents')).statusCode, 200);
    const write = await h.api(viewer.token, 'POST', '/api/v1/agents', {
      name: 'x',
      definition: { kind: 'template', template: 'x' },
    });
    assert.equal(write.statusCode, 403);
    assert.equal(write.json().code, 'insufficient_role');

    const created = await h.ops('POST', '/_ops/users', {
      username: 'roleless',
      password: 'roleless-password',
    });
    const login = await h.api(undefined, 'POST', '/api/auth/login', {
      username: 'roleless',
      password: 'roleless-password',
    });
    assert.equal(created.statusCode, 201);
    const none = await h.api(login.json().token, 'GET', '/api/v1/agents');
    assert.equal(none.statusCode, 403);
    assert.equal(none.json().code, 'scope_forbidden');
  });
});

describe('agent-gateway scope (multi-scope install)', () => {
  let h: GatewayHarness;
  before(async () => {
    h = await startGateway({ env: { AGENT_GATEWAY_SCOPE_MODE: 'multi' } });
    assert.equal((await h.ops('POST', '/_ops/tenants', { id: 'acme', name: 'Acme' })).statusCode, 201);
    assert.equal(
      (await h.ops('POST', '/_ops/tenants/acme/namespaces', { id: 'prod', name: 'Prod' })).statusCode,
      201,
    );
  });
  after(() => h?.close());

  test('the scope must be named; an unauthorized scope is 403; body and query agree with headers', async () => {
    const t = h.demoToken;
    const missing = await h.api(t, 'GET', '/api/v1/agents');
    assert.equal(missing.statusCode, 400);
    assert.equal(missing.json().code, 'scope_required');
    const demo = { 'x-platform-tenant': 'demo', 'x-platform-namespace': 'default' };
    assert.equal((await h.api(t, 'GET', '/api/v1/agents', undefined, demo)).statusCode, 200);
    assert.equal((await h.api(t, 'GET', '/api/v1/agents?tenant=demo&namespace=default')).statusCode, 200);
    const acme = await h.api(t, 'GET', '/api/v1/agents', undefined, {
      'x-platform-tenant': 'acme',
      'x-platform-namespace': 'prod',
    });
    assert.equal(acme.statusCode, 403);
    assert.equal(acme.json().code, 'scope_forbidden');
    const ghost = await h.api(t, 'GET', '/api/v1/agents', undefined, {
      'x-platform-tenant': 'ghost',
      'x-platform-namespace': 'x',
    });
    assert.deepEqual(
      ghost.json(),
      { ...acme.json(), message: ghost.json().message },
      'an unknown scope answers as an unauthorized one',
    );
    assert.equal(ghost.statusCode, 403);
    const mismatch = await h.api(t, 'GET', '/api/v1/agents?namespace=other', undefined, demo);
    assert.equal(mismatch.statusCode, 400);
    assert.equal(mismatch.json().code, 'scope_mismatch');

    // A role on acme/prod opens it, and resources stay in their scope.
    const acmeEditor = await h.user('editor', { tenant: 'acme', namespace: 'prod' });
    const acmeHeaders = { 'x-platform-tenant': 'acme', 'x-platform-namespace': 'prod' };
    const created = await h.api(
      acmeEditor.token,
      'POST',
      '/api/v1/agents',
      { name: 'Acme bot', definition: { kind: 'template', template: 'hi' } },
      acmeHeaders,
    );
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.json().agent.tenant, 'acme');
    const inDemo = await h.api(
      acmeEditor.token,
      'GET',
      `/api/v1/agents/${created.json().agent.id}`,
      undefined,
      demo,
    );
    assert.equal(inDemo.statusCode, 403, 'no role in demo');
  });

  test('scope headers are checked on every product route: a bad format or length is a 400, never a 5xx', async () => {
    const doc = (await h.platform.app('agent-gateway').inject({ url: '/openapi.json' })).json() as {
      paths: Record<string, Record<string, { security?: { userToken?: [] }[] }>>;
    };
    const bad = ['Demo', 'a'.repeat(64), '-lead', 'de mo', '../x', 'dé'];
    let checked = 0;
    for (const [path, operations] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(operations)) {
        if (!op.security?.some((s) => 'userToken' in s) || !path.startsWith('/api/v1')) continue;
        const url = path.replace('{id}', 'agt_0123456789abcdef0123456789abcdef');
        for (const [i, value] of bad.entries()) {
          const headers =
            i % 2 === 0
              ? { 'x-platform-tenant': value, 'x-platform-namespace': 'default' }
              : { 'x-platform-tenant': 'demo', 'x-platform-namespace': value };
          const res = await h.api(h.demoToken, method.toUpperCase() as 'GET', url, undefined, headers);
          assert.equal(res.statusCode, 400, `${method} ${path} with ${JSON.stringify(headers)}: ${res.body}`);
          assert.ok(res.json().code, 'the gateway error body');
        }
        checked += 1;
      }
    assert.ok(checked >= 40, `every product route was called (${checked})`);
  });
});
