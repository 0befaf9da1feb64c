/**
 * OAuth access tokens (spec A "Authentication": the bearer credential may be an OAuth access token; README "OAuth
 * access tokens"): the token endpoint and its errors (RFC 6749), the JWT access tokens (RFC 9068) on the routes their
 * scopes allow, 403 elsewhere, 401 when expired, not yet valid, revoked, of another issuer or audience, `alg: none` or
 * HMAC; key rotation and the JWKS; clients and their secrets; an external issuer with its JWKS on 127.0.0.1.
 * Time moves on a ManualClock.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  type CryptoKey,
  decodeJwt,
  decodeProtectedHeader,
  generateKeyPair,
  importJWK,
  type JWK,
  type JWTPayload,
  SignJWT,
  UnsecuredJWT,
} from 'jose';
import { bodyAs } from '../../../../test/support/json.ts';
import { type Operation, openApiOf, operationsOf } from '../../../../test/support/openapi.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { OAuthErrorBody, TokenResponse } from '../oauth-schemas.ts';
import { SCOPE_NAMES, SCOPES, type Scope } from '../oauth-scopes.ts';
import { readPaymentsConfig } from '../payments-config.ts';
import { type Answer, type PaymentsHarness, startPayments, type TestMerchant } from './support.ts';

/** A registered client: its id and its secret (shown once). */
interface Client {
  clientId: string;
  clientSecret: string;
}

async function registerClient(h: PaymentsHarness, m: TestMerchant, scopes?: Scope[]): Promise<Client> {
  const res = await h.api(m.key, 'POST', '/v1/oauth-clients', {
    data: { type: 'oauthClient', attributes: { name: 'agent', ...(scopes ? { scopes } : {}) } },
  });
  assert.equal(res.statusCode, 201, res.body);
  const attributes = res.json().data.attributes;
  return { clientId: attributes.clientId, clientSecret: attributes.clientSecret };
}

/** `POST /oauth/token` with a form body (HTTP Basic unless `post`). */
function tokenRequest(
  h: PaymentsHarness,
  form: Record<string, string>,
  client?: Client,
  options: { post?: boolean; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const fields = { ...form };
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (client && options.post)
    Object.assign(fields, { client_id: client.clientId, client_secret: client.clientSecret });
  else if (client)
    headers.authorization = `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`;
  return h.platform.app('payments').inject({
    method: 'POST',
    url: '/oauth/token',
    headers: { ...headers, ...options.headers },
    payload: new URLSearchParams(fields).toString(),
  });
}

async function accessToken(h: PaymentsHarness, client: Client, scope?: string): Promise<string> {
  const res = await tokenRequest(
    h,
    { grant_type: 'client_credentials', ...(scope ? { scope } : {}) },
    client,
  );
  assert.equal(res.statusCode, 200, res.body);
  return bodyAs(res, TokenResponse).access_token;
}

/** The service's active signing key, read back as the service does (for forging tokens that only differ in one claim). */
async function serviceSigningKey(
  h: PaymentsHarness,
): Promise<{ kid: string; key: CryptoKey; publicJwk: JWK }> {
  const ctx = h.platform.booted.services.get('payments')!.ctx;
  const { rows } = await h.platform.booted.database.pool.query(
    'select kid, public_jwk, private_jwk_sealed from payments.oauth_signing_keys where retired_at is null',
  );
  const row = rows[0] as { kid: string; public_jwk: JWK; private_jwk_sealed: string };
  const jwk = JSON.parse(
    ctx.secrets.decrypt(row.private_jwk_sealed, `payments:oauth-signing-key:${row.kid}`),
  ) as JWK;
  return { kid: row.kid, key: (await importJWK(jwk, 'ES256')) as CryptoKey, publicJwk: row.public_jwk };
}

function wwwAuthenticate(res: Answer): string {
  return String(res.headers['www-authenticate'] ?? '');
}

/** The JSON:API 401 of a refused bearer token, with its RFC 6750 challenge. */
function assertInvalidToken(res: Answer, what: string): void {
  assert.equal(res.statusCode, 401, `${what}: ${res.body}`);
  assert.equal(res.json().errors[0].code, 'unauthenticated', what);
  assert.match(wwwAuthenticate(res), /^Bearer realm="payments", error="invalid_token"/, what);
}

describe('payments OAuth: token endpoint, scopes, expiry, revocation, forged tokens, rotation', () => {
  const clock = new ManualClock(new Date('2026-11-24T12:00:00Z'));
  let h: PaymentsHarness;
  let m: TestMerchant;

  before(async () => {
    h = await startPayments(clock);
    m = await h.merchant('OAuth shop');
  });
  after(() => h.close());

  test('client_credentials with HTTP Basic or client_secret_post: a Bearer JWT (RFC 9068) with no-store', async () => {
    const client = await registerClient(h, m, ['payment_intents:read', 'payment_intents:write']);
    for (const post of [false, true]) {
      const res = await tokenRequest(h, { grant_type: 'client_credentials' }, client, { post });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.headers.pragma, 'no-cache');
      const body = bodyAs(res, TokenResponse);
      assert.equal(body.token_type, 'Bearer');
      assert.equal(body.expires_in, 900, 'the default lifetime is 15 minutes');
      assert.equal(
        body.scope,
        'payment_intents:read payment_intents:write',
        'no scope asked: all of the client',
      );
      const header = decodeProtectedHeader(body.access_token);
      assert.equal(header.alg, 'ES256');
      assert.equal(header.typ, 'at+jwt');
      assert.ok(typeof header.kid === 'string' && header.kid.length > 0);
      const claims = decodeJwt(body.access_token);
      const publicUrl = h.platform.booted.services.get('payments')!.ctx.publicUrl;
      assert.equal(claims.iss, publicUrl);
      assert.equal(claims.aud, publicUrl);
      assert.equal(claims.sub, client.clientId);
      assert.equal(claims.client_id, client.clientId);
      assert.equal(claims.iat, Math.floor(clock.nowMs() / 1000));
      assert.equal(claims.exp, Math.floor(clock.nowMs() / 1000) + 900);
      assert.ok(typeof claims.jti === 'string' && claims.jti.length >= 16);
    }
    const narrowed = await tokenRequest(
      h,
      { grant_type: 'client_credentials', scope: 'payment_intents:read' },
      client,
    );
    assert.equal(bodyAs(narrowed, TokenResponse).scope, 'payment_intents:read');
  });

  test('token endpoint errors (RFC 6749 section 5.2), each with no-store; 401 invalid_client with a Basic challenge', async () => {
    const client = await registerClient(h, m, ['payment_intents:read']);
    const cases: { what: string; res: Answer; status: number; error: string }[] = [
      {
        what: 'another grant type',
        res: await tokenRequest(h, { grant_type: 'password', username: 'a', password: 'b' }, client),
        status: 400,
        error: 'unsupported_grant_type',
      },
      {
        what: 'no grant type',
        res: await tokenRequest(h, { scope: 'payment_intents:read' }, client),
        status: 400,
        error: 'invalid_request',
      },
      {
        what: 'a scope the client was not registered for',
        res: await tokenRequest(
          h,
          { grant_type: 'client_credentials', scope: 'payment_intents:write' },
          client,
        ),
        status: 400,
        error: 'invalid_scope',
      },
      {
        what: 'an unknown scope',
        res: await tokenRequest(h, { grant_type: 'client_credentials', scope: 'limits:write' }, client),
        status: 400,
        error: 'invalid_scope',
      },
      {
        what: 'a malformed scope list',
        res: await tokenRequest(
          h,
          { grant_type: 'client_credentials', scope: ' payment_intents:read' },
          client,
        ),
        status: 400,
        error: 'invalid_scope',
      },
      {
        what: 'a wrong secret',
        res: await tokenRequest(
          h,
          { grant_type: 'client_credentials' },
          { ...client, clientSecret: `${client.clientSecret.slice(0, -1)}x` },
        ),
        status: 401,
        error: 'invalid_client',
      },
      {
        what: 'the secret of another client',
        res: await tokenRequest(
          h,
          { grant_type: 'client_credentials' },
          {
            clientId: client.clientId,
            clientSecret: (await registerClient(h, m)).clientSecret,
          },
        ),
        status: 401,
        error: 'invalid_client',
      },
      {
        what: 'an unknown client',
        res: await tokenRequest(
          h,
          { grant_type: 'client_credentials' },
          { ...client, clientId: 'cli_0' },
          { post: true },
        ),
        status: 401,
        error: 'invalid_client',
      },
      {
        what: 'no client authentication',
        res: await tokenRequest(h, { grant_type: 'client_credentials' }),
        status: 401,
        error: 'invalid_client',
      },
      {
        what: 'a Bearer credential instead of client authentication',
        res: await tokenRequest(h, { grant_type: 'client_credentials' }, undefined, {
          headers: { authorization: `Bearer ${m.key}` },
        }),
        status: 401,
        error: 'invalid_client',
      },
      {
        what: 'two client authentications (Basic and client_secret_post)',
        res: await tokenRequest(
          h,
          {
            grant_type: 'client_credentials',
            client_id: client.clientId,
            client_secret: client.clientSecret,
          },
          client,
        ),
        status: 400,
        error: 'invalid_request',
      },
      {
        what: 'a repeated parameter',
        res: await h.platform.app('payments').inject({
          method: 'POST',
          url: '/oauth/token',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
          },
          payload: 'grant_type=client_credentials&grant_type=client_credentials',
        }),
        status: 400,
        error: 'invalid_request',
      },
      {
        what: 'a JSON body',
        res: await h.platform.app('payments').inject({
          method: 'POST',
          url: '/oauth/token',
          headers: {
            'content-type': 'application/json',
            authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
          },
          payload: { grant_type: 'client_credentials' },
        }),
        status: 400,
        error: 'invalid_request',
      },
      {
        what: 'a NUL in a parameter',
        res: await tokenRequest(h, { grant_type: 'client_credentials', scope: 'a\u0000b' }, client),
        status: 400,
        error: 'invalid_request',
      },
    ];
    for (const { what, res, status, error } of cases) {
      assert.equal(res.statusCode, status, `${what}: ${res.body}`);
      const body = bodyAs(res, OAuthErrorBody);
      assert.equal(body.error, error, what);
      assert.ok(body.error_description && !/[\\"]/.test(body.error_description), what);
      assert.equal(res.headers['cache-control'], 'no-store', what);
      if (status === 401) assert.match(wwwAuthenticate(res), /^Basic realm="payments"/, what);
    }
  });

  test('a token works on the routes its scopes allow and gets 403 insufficient_scope on the others', async () => {
    const client = await registerClient(h, m);
    const write = await accessToken(h, client, 'payment_intents:write');
    const read = await accessToken(h, client, 'payment_intents:read');
    const intent = await h.createIntent({ ...m, key: write });
    assert.equal((await h.api(read, 'GET', `/v1/payment-intents/${intent.id}`)).statusCode, 200);
    assert.equal((await h.api(read, 'GET', '/v1/payment-intents')).json().meta.page.total, 1);
    const refused = await h.api(read, 'POST', `/v1/payment-intents/${intent.id}/cancel`);
    assert.equal(refused.statusCode, 403, refused.body);
    assert.equal(refused.json().errors[0].code, 'forbidden');
    assert.match(wwwAuthenticate(refused), /error="insufficient_scope"/);
    assert.match(wwwAuthenticate(refused), /scope="payment_intents:write"/);
    assert.equal((await h.api(write, 'GET', `/v1/payment-intents/${intent.id}`)).statusCode, 403);
    assert.equal((await h.api(write, 'POST', `/v1/payment-intents/${intent.id}/cancel`)).statusCode, 200);
    // The token acts for its client's party only: another merchant's intent is a 404, as for its keys.
    const other = await h.merchant('Other shop');
    const theirs = await h.createIntent(other);
    assert.equal((await h.api(read, 'GET', `/v1/payment-intents/${theirs.id}`)).statusCode, 404);
  });

  test('every operation: a token with its oauth2 scope passes, without it 403; API-key-only routes refuse every token', async () => {
    const doc = await openApiOf(h.platform, 'payments');
    const all = await accessToken(h, await registerClient(h, m));
    const ops = operationsOf(doc).filter((op) => op.scheme === 'bearerAuth');
    const scopeOf = (op: Operation) => {
      const raw = doc.paths[op.path]![op.method.toLowerCase()]!.security ?? [];
      return raw.find((r) => r.oauth2)?.oauth2?.[0] as Scope | undefined;
    };
    const url = (op: Operation) => op.path.replace(/\{[^}]+\}/g, 'pmi_00000000000000000000000000000000');
    const call = (op: Operation, token: string) =>
      h.platform.app('payments').inject({
        method: op.method as 'GET',
        url: url(op),
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(op.method === 'GET' ? {} : { payload: '{}' }),
      });
    const scoped = ops.filter((op) => scopeOf(op) !== undefined);
    assert.ok(scoped.length >= 16, 'the agent-key routes declare an oauth2 scope');
    assert.deepEqual(
      new Set(scoped.map((op) => scopeOf(op))),
      new Set(SCOPE_NAMES),
      'every scope guards a route',
    );
    const failures: string[] = [];
    for (const op of scoped) {
      const scope = scopeOf(op)!;
      const only = await accessToken(h, await registerClient(h, m, [scope]));
      const others = SCOPE_NAMES.filter((s) => s !== scope);
      const without = await accessToken(h, await registerClient(h, m, others));
      const allowed = await call(op, only);
      if (allowed.statusCode === 401 || allowed.statusCode === 403)
        failures.push(`${op.method} ${op.path} with ${scope}: ${allowed.statusCode}`);
      const refused = await call(op, without);
      if (refused.statusCode !== 403 || !wwwAuthenticate(refused).includes(`scope="${scope}"`))
        failures.push(`${op.method} ${op.path} without ${scope}: ${refused.statusCode}`);
    }
    for (const op of ops.filter((o) => scopeOf(o) === undefined && o.path !== '/oauth/token')) {
      const res = await call(op, all);
      if (res.statusCode !== 403 || !wwwAuthenticate(res).includes('error="insufficient_scope"'))
        failures.push(`${op.method} ${op.path} (API keys only) with every scope: ${res.statusCode}`);
    }
    assert.deepEqual(failures, []);
  });

  test('expired (clock past exp + 30 s leeway) and not yet valid (clock before nbf - 30 s) tokens are 401', async () => {
    const token = await accessToken(h, await registerClient(h, m), 'parties:read');
    const issuedAt = clock.nowMs();
    assert.equal((await h.api(token, 'GET', '/v1/parties/me')).statusCode, 200);
    clock.set(issuedAt + (900 + 29) * 1000);
    assert.equal((await h.api(token, 'GET', '/v1/parties/me')).statusCode, 200, 'within the leeway');
    clock.set(issuedAt + (900 + 31) * 1000);
    const expired = await h.api(token, 'GET', '/v1/parties/me');
    assertInvalidToken(expired, 'expired');
    assert.match(expired.json().errors[0].detail, /expired/);
    clock.set(issuedAt - 31_000);
    assertInvalidToken(await h.api(token, 'GET', '/v1/parties/me'), 'not yet valid');
    clock.set(issuedAt);
  });

  test('revoking a client refuses its tokens at once and its token requests; agent keys and tokens cannot revoke', async () => {
    const client = await registerClient(h, m);
    const token = await accessToken(h, client, 'parties:read');
    assert.equal((await h.api(token, 'GET', '/v1/parties/me')).statusCode, 200);
    const agent = await h.api(m.key, 'POST', '/v1/agent-keys', {
      data: { type: 'credential', attributes: {} },
    });
    const agentKey = agent.json().data.attributes.key as string;
    for (const caller of [agentKey, token])
      assert.equal(
        (await h.api(caller, 'POST', `/v1/oauth-clients/${client.clientId}/revoke`)).statusCode,
        403,
      );
    const other = await h.merchant('Not the owner');
    assert.equal(
      (await h.api(other.key, 'POST', `/v1/oauth-clients/${client.clientId}/revoke`)).statusCode,
      404,
    );
    assert.equal((await h.api(m.key, 'POST', `/v1/oauth-clients/${client.clientId}/revoke`)).statusCode, 204);
    assertInvalidToken(await h.api(token, 'GET', '/v1/parties/me'), 'revoked client');
    const refused = await tokenRequest(h, { grant_type: 'client_credentials' }, client);
    assert.equal(refused.statusCode, 401);
    assert.equal(bodyAs(refused, OAuthErrorBody).error, 'invalid_client');
    assert.equal((await h.api(m.key, 'POST', `/v1/oauth-clients/${client.clientId}/revoke`)).statusCode, 204);
    const read = await h.api(m.key, 'GET', `/v1/oauth-clients/${client.clientId}`);
    assert.equal(read.json().data.attributes.revokedAt, clock.now().toISOString());
  });

  test('forged tokens are 401: another issuer, another audience, alg none, HS256 with the public key, unknown kid, no typ, no exp, sub not the client', async () => {
    const client = await registerClient(h, m);
    const real = await accessToken(h, client, 'parties:read');
    const claims = decodeJwt(real);
    const { kid, key, publicJwk } = await serviceSigningKey(h);
    const sign = (payload: JWTPayload, header: Record<string, unknown> = {}, signer: CryptoKey = key) =>
      new SignJWT(payload).setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt', ...header }).sign(signer);
    // The control: the same claims signed again with the service key are accepted.
    assert.equal((await h.api(await sign(claims), 'GET', '/v1/parties/me')).statusCode, 200);
    const strange = await generateKeyPair('ES256');
    const { exp: _exp, ...noExp } = claims;
    const hmacSecret = new TextEncoder().encode(JSON.stringify(publicJwk));
    const forged: [string, string][] = [
      ['another issuer', await sign({ ...claims, iss: 'https://evil.example' })],
      ['another audience', await sign({ ...claims, aud: 'https://other.example' })],
      ['another key under the same kid', await sign(claims, {}, strange.privateKey)],
      ['an unknown kid', await sign(claims, { kid: 'not-a-kid' })],
      ['no typ', await sign(claims, { typ: 'JWT' })],
      ['no exp', await sign(noExp)],
      ['sub is not the client', await sign({ ...claims, sub: 'cli_other' })],
      ['an unknown client', await sign({ ...claims, sub: 'cli_0', client_id: 'cli_0' })],
      ['alg none', new UnsecuredJWT(claims).encode()],
      [
        'HS256 keyed with the public key',
        await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid, typ: 'at+jwt' }).sign(hmacSecret),
      ],
      ['a signature cut off', real.split('.').slice(0, 2).join('.')],
      ['not a JWT', 'eyJhbGciOiJFUzI1NiJ9.e30.AAAA'],
    ];
    for (const [what, token] of forged) assertInvalidToken(await h.api(token, 'GET', '/v1/parties/me'), what);
  });

  test('scopes in a token beyond its client’s are ignored; a client registered by a merchant acts for that merchant only', async () => {
    const client = await registerClient(h, m, ['parties:read']);
    const claims = decodeJwt(await accessToken(h, client));
    const { kid, key } = await serviceSigningKey(h);
    const widened = await new SignJWT({ ...claims, scope: 'parties:read payment_intents:write' })
      .setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt' })
      .sign(key);
    assert.equal((await h.api(widened, 'GET', '/v1/parties/me')).json().data.id, m.partyId);
    assert.equal((await h.api(widened, 'GET', '/v1/payment-intents')).statusCode, 403);
  });

  test('rotation: new tokens name the new kid; old tokens verify until they expire; the retired key leaves the JWKS after', async () => {
    const client = await registerClient(h, m);
    const before = await accessToken(h, client, 'parties:read');
    const oldKid = decodeProtectedHeader(before).kid;
    const jwks1 = await h.platform.app('payments').inject({ url: '/.well-known/jwks.json' });
    assert.deepEqual(
      jwks1.json().keys.map((k: JWK) => k.kid),
      [oldKid],
    );
    assert.ok(!('d' in jwks1.json().keys[0]), 'no private part is published');
    const rotated = await h.ops('POST', '/_ops/oauth/signing-keys/rotate');
    assert.equal(rotated.statusCode, 201, rotated.body);
    const newKid = rotated.json().key.kid;
    assert.notEqual(newKid, oldKid);
    const afterToken = await accessToken(h, client, 'parties:read');
    assert.equal(decodeProtectedHeader(afterToken).kid, newKid);
    assert.equal(
      (await h.api(before, 'GET', '/v1/parties/me')).statusCode,
      200,
      'the retired key still verifies',
    );
    const listed = await h.ops('GET', '/_ops/oauth/signing-keys');
    const old = listed.json().keys.find((k: { kid: string }) => k.kid === oldKid);
    assert.equal(old.status, 'retired');
    const retiredAt = Date.parse(old.retiredAt);
    assert.equal(old.publishedUntil, new Date(retiredAt + (900 + 30) * 1000).toISOString());
    const { rows } = await h.platform.booted.database.pool.query(
      'select private_jwk_sealed from payments.oauth_signing_keys where kid = $1',
      [oldKid],
    );
    assert.equal(rows[0].private_jwk_sealed, null, 'the retired private key is erased');
    const kids = async () =>
      (await h.platform.app('payments').inject({ url: '/.well-known/jwks.json' }))
        .json()
        .keys.map((k: JWK) => k.kid);
    assert.deepEqual(new Set(await kids()), new Set([oldKid, newKid]));
    clock.set(retiredAt + (900 + 29) * 1000);
    assert.deepEqual(new Set(await kids()), new Set([oldKid, newKid]));
    clock.set(retiredAt + (900 + 30) * 1000);
    assert.deepEqual(await kids(), [newKid]);
    assert.equal(
      (await h.ops('GET', '/_ops/oauth/signing-keys'))
        .json()
        .keys.find((k: { kid: string }) => k.kid === oldKid).status,
      'expired',
    );
    assertInvalidToken(await h.api(before, 'GET', '/v1/parties/me'), 'signed by an unpublished key');
  });

  test('clients: the secret is shown once and stored as its SHA-256; scopes are checked; API keys only', async () => {
    const res = await h.api(m.key, 'POST', '/v1/oauth-clients', {
      data: {
        type: 'oauthClient',
        attributes: { name: 'reporting', scopes: ['parties:read', 'limits:read'] },
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    const { clientId, clientSecret, scopes, secretHint } = res.json().data.attributes;
    assert.match(clientId, /^cli_[0-9a-f]{32}$/);
    assert.match(clientSecret, /^ocs_[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(scopes, ['parties:read', 'limits:read']);
    assert.equal(secretHint, clientSecret.slice(-4));
    const { rows } = await h.platform.booted.database.pool.query(
      'select key_hash, client_id from payments.credentials where client_id = $1',
      [clientId],
    );
    assert.equal(rows[0].key_hash, createHash('sha256').update(clientSecret).digest('hex'));
    const listed = await h.api(m.key, 'GET', '/v1/oauth-clients');
    assert.equal(listed.statusCode, 200);
    assert.ok(!listed.body.includes(clientSecret));
    assert.ok(listed.json().data.some((c: { id: string }) => c.id === clientId));
    const bad = await h.api(m.key, 'POST', '/v1/oauth-clients', {
      data: { type: 'oauthClient', attributes: { scopes: ['limits:write'] } },
    });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().errors[0].source.pointer, '/data/attributes/scopes/0');
    const agent = await h.api(m.key, 'POST', '/v1/agent-keys', {
      data: { type: 'credential', attributes: {} },
    });
    const refused = await h.api(agent.json().data.attributes.key, 'POST', '/v1/oauth-clients', {
      data: { type: 'oauthClient', attributes: {} },
    });
    assert.equal(refused.statusCode, 403);
    // Operators see clients with the other credentials (never the secret) and may revoke them.
    const ops = await h.ops('GET', `/_ops/keys?partyId=${m.partyId}`);
    const record = ops.json().keys.find((k: { clientId: string | null }) => k.clientId === clientId);
    assert.equal(record.kind, 'oauth_client');
    assert.ok(!ops.body.includes(clientSecret));
    const token = await accessToken(h, { clientId, clientSecret });
    assert.equal((await h.ops('POST', `/_ops/keys/${record.id}/revoke`)).statusCode, 200);
    assertInvalidToken(await h.api(token, 'GET', '/v1/parties/me'), 'revoked by the operator');
  });

  test('metadata: RFC 8414 names the token endpoint, the JWKS, the grant, the auth methods and the scopes', async () => {
    const res = await h.platform.app('payments').inject({ url: '/.well-known/oauth-authorization-server' });
    assert.equal(res.statusCode, 200);
    const base = h.platform.booted.services.get('payments')!.ctx.publicUrl;
    const meta = res.json();
    assert.equal(meta.issuer, base);
    assert.equal(meta.token_endpoint, `${base}/oauth/token`);
    assert.equal(meta.jwks_uri, `${base}/.well-known/jwks.json`);
    assert.deepEqual(meta.grant_types_supported, ['client_credentials']);
    assert.deepEqual(meta.token_endpoint_auth_methods_supported, [
      'client_secret_basic',
      'client_secret_post',
    ]);
    assert.deepEqual(meta.scopes_supported, SCOPE_NAMES);
    const doc = await openApiOf(h.platform, 'payments');
    const scheme = doc.components.securitySchemes.oauth2 as unknown as {
      flows: { clientCredentials: { tokenUrl: string; scopes: Record<string, string> } };
    };
    assert.deepEqual(scheme.flows.clientCredentials.scopes, SCOPES);
    assert.deepEqual(doc.paths['/oauth/token']!.post!.security, [{ oauthClient: [] }]);
  });
});

describe('payments OAuth: configuration', () => {
  test('an external issuer needs its JWKS URL; lifetimes are bounded', () => {
    assert.throws(() => readPaymentsConfig({ PAYMENTS_OAUTH_ISSUER: 'https://idp.example' }), /set together/);
    assert.throws(
      () => readPaymentsConfig({ PAYMENTS_OAUTH_JWKS_URL: 'https://idp.example/jwks' }),
      /set together/,
    );
    assert.throws(
      () =>
        readPaymentsConfig({
          PAYMENTS_OAUTH_ISSUER: 'https://idp.example',
          PAYMENTS_OAUTH_JWKS_URL: 'ftp://x',
        }),
      /PAYMENTS_OAUTH_JWKS_URL/,
    );
    assert.throws(
      () => readPaymentsConfig({ PAYMENTS_OAUTH_PARTY_CLAIM: 'party' }),
      /need PAYMENTS_OAUTH_ISSUER/,
    );
    assert.throws(() => readPaymentsConfig({ PAYMENTS_OAUTH_ACCESS_TOKEN_TTL_SECONDS: '59' }), /60-86400/);
    const config = readPaymentsConfig({
      PAYMENTS_OAUTH_ISSUER: 'https://idp.example',
      PAYMENTS_OAUTH_JWKS_URL: 'https://idp.example/jwks',
    });
    assert.equal(config.oauth.accessTokenTtlSeconds, 900);
    assert.equal(config.oauth.external?.partyClaim, 'party_id');
    assert.equal(config.oauth.external?.audience, undefined);
  });
});
