/**
 * OAuth access tokens with independent parties: `oauth4webapi` as the client (discovery by RFC 8414, the
 * client_credentials grant with client_secret_basic and client_secret_post, and RFC 9068 validation of the token
 * against the published JWKS); an external issuer whose JWKS a local server on 127.0.0.1 serves (fetched through the
 * SSRF guard); two instances on one database (a revocation and a rotation reach the other instance at once).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  type CryptoKey,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  type JWTPayload,
  SignJWT,
  UnsecuredJWT,
} from 'jose';
import * as oauth from 'oauth4webapi';
import {
  createTestDatabase,
  TEST_OPERATOR_TOKEN,
  type TestDatabase,
} from '../../../../test/support/platform.ts';
import { waitUntil } from '../../../../test/support/wait.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { loadConfig } from '../../../platform/config.ts';
import { createLogger } from '../../../platform/logger.ts';
import { type BootedPlatform, bootServices } from '../../../platform/runtime.ts';
import { paymentsService } from '../index.ts';
import { type PaymentsHarness, startPayments, type TestMerchant } from './support.ts';

async function registerClient(h: PaymentsHarness, m: TestMerchant, scopes?: string[]) {
  const res = await h.api(m.key, 'POST', '/v1/oauth-clients', {
    data: { type: 'oauthClient', attributes: scopes ? { scopes } : {} },
  });
  assert.equal(res.statusCode, 201, res.body);
  const a = res.json().data.attributes;
  return { clientId: a.clientId as string, clientSecret: a.clientSecret as string };
}

describe('payments OAuth with oauth4webapi as the client, over HTTP', () => {
  // oauth4webapi checks iat and exp on its own clock: the service clock starts at the real time.
  const clock = new ManualClock(Date.now());
  let h: PaymentsHarness;
  let m: TestMerchant;
  let issuer: URL;
  const insecure = { [oauth.allowInsecureRequests]: true };

  before(async () => {
    h = await startPayments(clock, { listen: true });
    m = await h.merchant('Interop shop');
    issuer = new URL(h.platform.booted.services.get('payments')!.ctx.publicUrl);
  });
  after(() => h.close());

  test('discovery, client_credentials (Basic and post), the token validated as RFC 9068, used on the API', async () => {
    const as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    );
    assert.equal(as.issuer, issuer.href.replace(/\/$/, ''));
    const registered = await registerClient(h, m, ['payment_intents:read', 'payment_intents:write']);
    const client: oauth.Client = { client_id: registered.clientId };
    for (const auth of [
      oauth.ClientSecretBasic(registered.clientSecret),
      oauth.ClientSecretPost(registered.clientSecret),
    ]) {
      const response = await oauth.clientCredentialsGrantRequest(
        as,
        client,
        auth,
        new URLSearchParams({ scope: 'payment_intents:write' }),
        insecure,
      );
      const result = await oauth.processClientCredentialsResponse(as, client, response);
      assert.equal(result.token_type, 'bearer');
      assert.equal(result.scope, 'payment_intents:write');
      assert.equal(result.expires_in, 900);
      // The resource-server side of oauth4webapi: typ at+jwt, signature by the JWKS, iss, aud, exp, iat, sub, jti, client_id.
      const request = new Request(`${issuer.href}v1/payment-intents`, {
        headers: { authorization: `Bearer ${result.access_token}` },
      });
      const claims = await oauth.validateJwtAccessToken(
        as,
        request,
        issuer.href.replace(/\/$/, ''),
        insecure,
      );
      assert.equal(claims.client_id, registered.clientId);
      assert.equal(claims.scope, 'payment_intents:write');
      const created = await fetch(`${issuer.href}v1/payment-intents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${result.access_token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          data: {
            type: 'paymentIntent',
            attributes: {
              taxMode: 'exclusive',
              lineItems: [{ description: 'Notebook', quantity: 1, unitAmount: 1000, taxCode: null }],
            },
            relationships: { customerParty: { data: { type: 'party', id: m.customerId } } },
          },
        }),
      });
      assert.equal(created.status, 201, await created.text());
      const refused = await fetch(`${issuer.href}v1/payment-intents`, {
        headers: { authorization: `Bearer ${result.access_token}` },
      });
      assert.equal(refused.status, 403);
      assert.match(refused.headers.get('www-authenticate') ?? '', /insufficient_scope/);
    }
  });

  test('a wrong secret is an OAuth error oauth4webapi reads as invalid_client', async () => {
    const as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    );
    const registered = await registerClient(h, m);
    const client: oauth.Client = { client_id: registered.clientId };
    const response = await oauth.clientCredentialsGrantRequest(
      as,
      client,
      oauth.ClientSecretBasic(`${registered.clientSecret}x`),
      new URLSearchParams(),
      insecure,
    );
    // A 401 with `WWW-Authenticate: Basic` is a challenge to oauth4webapi; the body is RFC 6749's invalid_client.
    let challenge: oauth.WWWAuthenticateChallengeError | undefined;
    await oauth.processClientCredentialsResponse(as, client, response).catch((err: unknown) => {
      if (err instanceof oauth.WWWAuthenticateChallengeError) challenge = err;
      else throw err;
    });
    assert.ok(challenge, 'the answer is a challenge');
    assert.equal(challenge.status, 401);
    assert.equal(challenge.cause[0]?.scheme, 'basic');
    assert.equal(challenge.cause[0]?.parameters.realm, 'payments');
    assert.equal(((await challenge.response.json()) as { error: string }).error, 'invalid_client');
  });
});

/** A JWKS server on 127.0.0.1 (port 0) serving `jwks`, counting its requests. */
async function jwksServer(jwks: () => object) {
  let requests = 0;
  const server = http.createServer((_req, res) => {
    requests += 1;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`,
    requests: () => requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('payments OAuth: an external issuer (PAYMENTS_OAUTH_*), its JWKS on 127.0.0.1', () => {
  const clock = new ManualClock(new Date('2026-11-24T12:00:00Z'));
  const ISSUER = 'https://idp.example.test';
  const AUDIENCE = 'https://payments.example.test';
  const CLAIM = 'https://payments.example.test/party';
  let keys: Awaited<ReturnType<typeof generateKeyPair>>;
  let server: Awaited<ReturnType<typeof jwksServer>>;
  let h: PaymentsHarness;
  let m: TestMerchant;

  const now = () => Math.floor(clock.nowMs() / 1000);
  const sign = (
    claims: JWTPayload,
    options: { alg?: string; key?: CryptoKey | Uint8Array; kid?: string } = {},
  ) =>
    new SignJWT({ iss: ISSUER, aud: AUDIENCE, iat: now(), exp: now() + 300, sub: 'svc-1', ...claims })
      .setProtectedHeader({ alg: options.alg ?? 'RS256', kid: options.kid ?? 'idp-1' })
      .sign(options.key ?? keys.privateKey);

  before(async () => {
    keys = await generateKeyPair('RS256');
    const jwk = { ...(await exportJWK(keys.publicKey)), kid: 'idp-1', alg: 'RS256', use: 'sig' };
    server = await jwksServer(() => ({ keys: [jwk] }));
    h = await startPayments(clock, {
      env: {
        PAYMENTS_OAUTH_ISSUER: ISSUER,
        PAYMENTS_OAUTH_JWKS_URL: server.url,
        PAYMENTS_OAUTH_AUDIENCE: AUDIENCE,
        PAYMENTS_OAUTH_PARTY_CLAIM: CLAIM,
      },
    });
    m = await h.merchant('External shop');
  });
  after(async () => {
    await h.close();
    await server.close();
  });

  test('a token of the issuer for the audience, naming a merchant, acts for it with its scopes', async () => {
    const token = await sign({ [CLAIM]: m.partyId, scope: 'parties:read payment_intents:write' });
    const me = await h.api(token, 'GET', '/v1/parties/me');
    assert.equal(me.statusCode, 200, me.body);
    assert.equal(me.json().data.id, m.partyId);
    await h.createIntent({ ...m, key: token });
    assert.equal(
      (await h.api(token, 'GET', '/v1/payment-intents')).statusCode,
      403,
      'no payment_intents:read',
    );
    assert.equal(
      (
        await h.api(token, 'PUT', '/v1/parties/me/limits', {
          data: { type: 'transactionLimits', attributes: { perTransaction: 5 } },
        })
      ).statusCode,
      403,
    );
    assert.ok(server.requests() >= 1, 'the JWKS was fetched from the issuer');
  });

  test('refused with 401: unknown or customer party, no party, another audience or issuer, expired, not yet valid, no exp, alg none, HS256, unknown key', async () => {
    const customer = m.customerId;
    const { exp: _exp, ...noExp } = { exp: 0 };
    const cases: [string, string][] = [
      ['an unknown party', await sign({ [CLAIM]: 'pty_00000000000000000000000000000000' })],
      ['a customer party', await sign({ [CLAIM]: customer })],
      ['no party claim', await sign({ party_id: m.partyId })],
      ['another audience', await sign({ [CLAIM]: m.partyId, aud: 'https://other.example.test' })],
      ['expired', await sign({ [CLAIM]: m.partyId, iat: now() - 600, exp: now() - 31 })],
      ['not yet valid', await sign({ [CLAIM]: m.partyId, nbf: now() + 31 })],
      [
        'no exp',
        await new SignJWT({ iss: ISSUER, aud: AUDIENCE, [CLAIM]: m.partyId, ...noExp })
          .setProtectedHeader({ alg: 'RS256', kid: 'idp-1' })
          .sign(keys.privateKey),
      ],
      [
        'alg none',
        new UnsecuredJWT({ iss: ISSUER, aud: AUDIENCE, exp: now() + 300, [CLAIM]: m.partyId }).encode(),
      ],
      ['HS256', await sign({ [CLAIM]: m.partyId }, { alg: 'HS256', key: randomBytes(32) })],
      [
        'another key',
        await sign({ [CLAIM]: m.partyId }, { key: (await generateKeyPair('RS256')).privateKey }),
      ],
      [
        'an unknown kid',
        await sign(
          { [CLAIM]: m.partyId },
          { kid: 'idp-2', key: (await generateKeyPair('RS256')).privateKey },
        ),
      ],
    ];
    for (const [what, token] of cases) {
      const res = await h.api(token, 'GET', '/v1/parties/me');
      assert.equal(res.statusCode, 401, `${what}: ${res.body}`);
      assert.match(String(res.headers['www-authenticate']), /error="invalid_token"/, what);
    }
    // Another issuer's token signed with the same key is not routed to this issuer's keys.
    const other = await new SignJWT({
      iss: 'https://evil.example.test',
      aud: AUDIENCE,
      exp: now() + 300,
      [CLAIM]: m.partyId,
    })
      .setProtectedHeader({ alg: 'RS256', kid: 'idp-1' })
      .sign(keys.privateKey);
    assert.equal((await h.api(other, 'GET', '/v1/parties/me')).statusCode, 401);
    // The service's own tokens still work beside the external issuer.
    const own = await registerClient(h, m, ['parties:read']);
    const token = await h.platform.app('payments').inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: own.clientId,
        client_secret: own.clientSecret,
      }).toString(),
    });
    assert.equal((await h.api(token.json().access_token, 'GET', '/v1/parties/me')).statusCode, 200);
    const meta = await h.platform.app('payments').inject({ url: '/.well-known/oauth-protected-resource' });
    assert.ok(meta.json().authorization_servers.includes(ISSUER));
  });

  test('without OUTBOUND_ALLOW_PRIVATE the loopback JWKS is never fetched: the token is 401, not 500', async () => {
    const before = server.requests();
    const guarded = await startPayments(clock, {
      env: {
        OUTBOUND_ALLOW_PRIVATE: 'false',
        PAYMENTS_OAUTH_ISSUER: ISSUER,
        PAYMENTS_OAUTH_JWKS_URL: server.url,
        PAYMENTS_OAUTH_AUDIENCE: AUDIENCE,
        PAYMENTS_OAUTH_PARTY_CLAIM: CLAIM,
      },
    });
    try {
      const merchant = await guarded.merchant('Guarded shop');
      const res = await guarded.api(
        await sign({ [CLAIM]: merchant.partyId, scope: 'parties:read' }),
        'GET',
        '/v1/parties/me',
      );
      assert.equal(res.statusCode, 401, res.body);
      assert.equal(server.requests(), before);
    } finally {
      await guarded.close();
    }
  });
});

describe('payments OAuth: two instances on one database', () => {
  const clock = new ManualClock(new Date('2026-11-24T12:00:00Z'));
  let database: TestDatabase;
  let dataDir: string;
  const instances: BootedPlatform[] = [];

  before(async () => {
    database = await createTestDatabase();
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'api-suite-oauth-'));
    const secretsKey = randomBytes(32);
    for (let i = 0; i < 2; i++) {
      instances.push(
        await bootServices({
          config: loadConfig({ DATA_DIR: dataDir }, {}, [
            { name: 'payments', envPrefix: 'PAYMENTS', defaultPort: 4101 },
          ]),
          services: [paymentsService],
          databaseUrl: database.url,
          operatorToken: TEST_OPERATOR_TOKEN,
          secretsKey,
          logger: createLogger('silent'),
          clock,
          serveHttp: true,
          listen: false,
          runWorker: false,
        }),
      );
    }
  });
  after(async () => {
    for (const instance of instances) await instance.stop();
    await database.drop();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  const app = (i: number) => instances[i]!.services.get('payments')!.app!;
  const credentials = () => instances[0]!.services.get('payments')!.credentials!;
  const token = async (i: number, clientId: string, clientSecret: string) => {
    const res = await app(i).inject({
      method: 'POST',
      url: '/oauth/token',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
      },
      payload: 'grant_type=client_credentials&scope=parties%3Aread',
    });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().access_token as string;
  };
  const me = (i: number, bearer: string) =>
    app(i).inject({ url: '/v1/parties/me', headers: { authorization: `Bearer ${bearer}` } });

  test('a client revoked on one instance: its tokens are refused on the other at once', async () => {
    const key = credentials().merchantKey as string;
    const created = await app(0).inject({
      method: 'POST',
      url: '/v1/oauth-clients',
      headers: { authorization: `Bearer ${key}` },
      payload: { data: { type: 'oauthClient', attributes: {} } },
    });
    const { clientId, clientSecret } = created.json().data.attributes;
    const issued = await token(0, clientId, clientSecret);
    // Instance 1 verifies instance 0's token and caches the client as active.
    assert.equal((await me(1, issued)).statusCode, 200);
    assert.equal((await me(1, issued)).statusCode, 200);
    const revoked = await app(0).inject({
      method: 'POST',
      url: `/v1/oauth-clients/${clientId}/revoke`,
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(revoked.statusCode, 204);
    // The clock does not move (a 60 s cache could otherwise expire): only the NOTIFY can tell instance 1.
    await waitUntil(
      'instance 1 refuses the revoked client’s token',
      async () => (await me(1, issued)).statusCode === 401,
    );
    assert.equal((await me(0, issued)).statusCode, 401);
  });

  test('a rotation on one instance: the other signs with the new key and verifies both', async () => {
    const { oauthClientId, oauthClientSecret } = credentials() as Record<string, string>;
    const before = await token(1, oauthClientId!, oauthClientSecret!);
    const rotated = await app(0).inject({
      method: 'POST',
      url: '/_ops/oauth/signing-keys/rotate',
      headers: { authorization: `Bearer ${TEST_OPERATOR_TOKEN}` },
    });
    assert.equal(rotated.statusCode, 201);
    const kid = rotated.json().key.kid as string;
    const fresh = await token(0, oauthClientId!, oauthClientSecret!);
    assert.equal(decodeProtectedHeader(fresh).kid, kid);
    // Instance 1 has not necessarily heard of the new key yet: a token naming it makes it reload.
    assert.equal((await me(1, fresh)).statusCode, 200);
    assert.equal((await me(1, before)).statusCode, 200);
    await waitUntil(
      'instance 1 signs with the new key',
      async () => decodeProtectedHeader(await token(1, oauthClientId!, oauthClientSecret!)).kid === kid,
    );
  });
});
