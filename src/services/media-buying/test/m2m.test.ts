/**
 * M2M applications (spec "Authentication": M2M application row; "Credentials and activation":
 * `/api/v2/m2m-applications`): an organization administrator creates them from an interactive session; the client
 * secret is shown once with the token endpoint and the resource indicator; client-credentials tokens are short-lived
 * JWTs; two client secrets overlap for a rotation; deleting the application makes tokens already issued refused. An
 * independent OAuth client (`oauth4webapi`) gets and checks the tokens over real HTTP.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeJwt, decodeProtectedHeader, generateKeyPair, SignJWT, UnsecuredJWT } from 'jose';
import * as oauth from 'oauth4webapi';
import { ManualClock } from '../../../platform/clock.ts';
import {
  envelopeData,
  envelopeError,
  type MediaBuyingHarness,
  STRONG_PASSWORD,
  startMediaBuying,
} from './support/harness.ts';

const ADVERTISERS = '/api/v2/buyer/advertisers';

interface CreatedApp {
  application: { id: string; clientId: string; secrets: { id: number }[] };
  clientSecret: string;
  tokenEndpoint: string;
  resource: string;
}

describe('media buying: M2M applications and their tokens', () => {
  let h: MediaBuyingHarness;
  const clock = new ManualClock(new Date('2026-11-25T10:00:00Z'));
  let cookie: string;
  let issuer: URL;
  const insecure = { [oauth.allowInsecureRequests]: true };

  const createApp = async (permissions: string[], name = 'backend'): Promise<CreatedApp> => {
    const res = await h.session(cookie, {
      method: 'POST',
      url: '/api/v2/m2m-applications',
      payload: { name, permissions },
    });
    assert.equal(res.statusCode, 201, res.body);
    return envelopeData<CreatedApp>(res);
  };
  const tokenOf = async (clientId: string, secret: string, body: Record<string, string> = {}) => {
    const res = await h.call({
      method: 'POST',
      url: '/oauth/token',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`,
      },
      payload: new URLSearchParams({ grant_type: 'client_credentials', ...body }).toString(),
    });
    return res;
  };

  before(async () => {
    h = await startMediaBuying({ clock, listen: true });
    cookie = await h.signIn(h.demo.email, h.demo.password);
    issuer = new URL(h.platform.booted.services.get('media-buying')!.ctx.publicUrl);
  });
  after(() => h?.close());

  test('created by an administrator in an interactive session: the secret once, the token endpoint and the resource', async () => {
    const created = await createApp(['platform:read']);
    assert.match(created.clientSecret, /^mbcs_/);
    assert.equal(created.tokenEndpoint, `${issuer.origin}/oauth/token`);
    assert.equal(created.resource, `${issuer.origin}/api/v2`);
    const listed = await h.session(cookie, { url: '/api/v2/m2m-applications' });
    assert.ok(!listed.body.includes(created.clientSecret), 'the secret is never shown again');
    assert.equal(
      (
        await h.bearer(h.demo.apiKey, {
          method: 'POST',
          url: '/api/v2/m2m-applications',
          payload: { name: 'x' },
        })
      ).statusCode,
      403,
    );
    await h.addMember(h.demo.organizationId, 'plain-member@example.com', 'member');
    const member = await h.signInAccepted('plain-member@example.com', STRONG_PASSWORD);
    const byMember = await h.session(member, {
      method: 'POST',
      url: '/api/v2/m2m-applications',
      payload: { name: 'x' },
    });
    assert.equal(byMember.statusCode, 403);
    assert.equal(envelopeError(byMember).details?.reason, 'admin_required');
  });

  test('an independent OAuth client discovers the server, gets a token (Basic and post) and uses it', async () => {
    const created = await createApp(['platform:read']);
    const as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    );
    const client: oauth.Client = { client_id: created.application.clientId };
    for (const auth of [
      oauth.ClientSecretBasic(created.clientSecret),
      oauth.ClientSecretPost(created.clientSecret),
    ]) {
      const response = await oauth.clientCredentialsGrantRequest(
        as,
        client,
        auth,
        new URLSearchParams({ resource: created.resource }),
        insecure,
      );
      const token = await oauth.processClientCredentialsResponse(as, client, response);
      assert.equal(token.token_type, 'bearer');
      assert.equal(token.expires_in, 600);
      assert.equal(token.scope, 'platform:read');
      const header = decodeProtectedHeader(token.access_token);
      assert.deepEqual([header.alg, header.typ], ['ES256', 'at+jwt']);
      const jwks = (await (await fetch(`${issuer.origin}/.well-known/jwks.json`)).json()) as {
        keys: { kid: string }[];
      };
      assert.ok(jwks.keys.some((k) => k.kid === header.kid));
      const claims = decodeJwt(token.access_token);
      assert.equal(claims.iss, issuer.origin);
      assert.equal(claims.aud, created.resource);
      assert.equal(claims.exp! - claims.iat!, 600);
      const list = await fetch(`${issuer.origin}${ADVERTISERS}`, {
        headers: { authorization: `Bearer ${token.access_token}` },
      });
      assert.equal(list.status, 200);
      const write = await fetch(`${issuer.origin}${ADVERTISERS}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token.access_token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'by a read token' }),
      });
      assert.equal(write.status, 403, 'platform:read does not write');
    }
  });

  test('token endpoint errors are RFC 6749 section 5.2 answers, never cached', async () => {
    const created = await createApp(['platform:read']);
    const wrong = await tokenOf(created.application.clientId, `${created.clientSecret.slice(0, -1)}x`);
    assert.equal(wrong.statusCode, 401);
    assert.equal((wrong.json() as { error: string }).error, 'invalid_client');
    assert.match(String(wrong.headers['www-authenticate']), /^Basic/);
    assert.equal(wrong.headers['cache-control'], 'no-store');
    const grant = await h.call({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'grant_type=password&username=a&password=b',
    });
    assert.equal((grant.json() as { error: string }).error, 'unsupported_grant_type');
    const scope = await tokenOf(created.application.clientId, created.clientSecret, {
      scope: 'platform:write',
    });
    assert.equal((scope.json() as { error: string }).error, 'invalid_scope');
    const target = await tokenOf(created.application.clientId, created.clientSecret, {
      resource: 'https://elsewhere.example/api',
    });
    assert.equal((target.json() as { error: string }).error, 'invalid_target');
    const twice = await h.call({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'grant_type=client_credentials&grant_type=client_credentials',
    });
    assert.equal(twice.statusCode, 400);
    assert.equal((twice.json() as { error: string }).error, 'invalid_request');
  });

  test('two client secrets overlap for a rotation; a third is refused; a deleted secret stops', async () => {
    const created = await createApp(['platform:read']);
    const added = await h.session(cookie, {
      method: 'POST',
      url: `/api/v2/m2m-applications/${created.application.id}/secrets`,
    });
    assert.equal(added.statusCode, 201);
    const second = envelopeData<{ clientSecret: string; secretId: number }>(added);
    for (const secret of [created.clientSecret, second.clientSecret])
      assert.equal((await tokenOf(created.application.clientId, secret)).statusCode, 200);
    const third = await h.session(cookie, {
      method: 'POST',
      url: `/api/v2/m2m-applications/${created.application.id}/secrets`,
    });
    assert.equal(third.statusCode, 409);
    assert.equal(envelopeError(third).code, 'CONFLICT');
    const firstId = created.application.secrets[0]!.id;
    const deleted = await h.session(cookie, {
      method: 'DELETE',
      url: `/api/v2/m2m-applications/${created.application.id}/secrets/${firstId}`,
    });
    assert.equal(deleted.statusCode, 200);
    assert.equal((await tokenOf(created.application.clientId, created.clientSecret)).statusCode, 401);
    assert.equal((await tokenOf(created.application.clientId, second.clientSecret)).statusCode, 200);
  });

  test('deleting the application refuses the tokens it already got; tokens expire after 10 minutes', async () => {
    const created = await createApp(['platform:read']);
    const token = (
      (await tokenOf(created.application.clientId, created.clientSecret)).json() as { access_token: string }
    ).access_token;
    assert.equal((await h.bearer(token, { url: ADVERTISERS })).statusCode, 200);
    clock.advance(630_000);
    assert.equal(
      (await h.bearer(token, { url: ADVERTISERS })).statusCode,
      401,
      'expired (beyond the 30 s leeway)',
    );

    const fresh = (
      (await tokenOf(created.application.clientId, created.clientSecret)).json() as { access_token: string }
    ).access_token;
    assert.equal((await h.bearer(fresh, { url: ADVERTISERS })).statusCode, 200);
    const removed = await h.session(cookie, {
      method: 'DELETE',
      url: `/api/v2/m2m-applications/${created.application.id}`,
    });
    assert.equal(removed.statusCode, 200);
    assert.equal((await h.bearer(fresh, { url: ADVERTISERS })).statusCode, 401);
    assert.equal((await tokenOf(created.application.clientId, created.clientSecret)).statusCode, 401);
  });

  test('forged tokens are refused: alg none, another key, another audience, another issuer', async () => {
    const created = await createApp(['platform:read']);
    const good = (
      (await tokenOf(created.application.clientId, created.clientSecret)).json() as { access_token: string }
    ).access_token;
    const claims = decodeJwt(good);
    const header = decodeProtectedHeader(good);
    const none = new UnsecuredJWT(claims).encode();
    const { privateKey } = await generateKeyPair('ES256');
    const sign = (payload: Record<string, unknown>, kid = header.kid) =>
      new SignJWT(payload).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid }).sign(privateKey);
    const forgeries = [
      none,
      await sign(claims),
      await sign({ ...claims, aud: 'https://elsewhere.example/api/v2' }),
      await sign({ ...claims, iss: 'https://elsewhere.example' }, 'unknown-kid'),
    ];
    for (const forged of forgeries)
      assert.equal((await h.bearer(forged, { url: ADVERTISERS })).statusCode, 401);
  });

  test('rotating the signing key keeps earlier tokens valid until they expire; the retired key leaves the JWKS then', async () => {
    const created = await createApp(['platform:read']);
    const before = (
      (await tokenOf(created.application.clientId, created.clientSecret)).json() as { access_token: string }
    ).access_token;
    const oldKid = decodeProtectedHeader(before).kid;
    const rotated = await h.ops({ method: 'POST', url: '/_ops/signing-keys/rotate' });
    assert.equal(rotated.statusCode, 200);
    const newKid = (rotated.json() as { kid: string }).kid;
    const after = (
      (await tokenOf(created.application.clientId, created.clientSecret)).json() as { access_token: string }
    ).access_token;
    assert.equal(decodeProtectedHeader(after).kid, newKid);
    assert.equal((await h.bearer(before, { url: ADVERTISERS })).statusCode, 200);
    const kids = async () =>
      ((await h.call({ url: '/.well-known/jwks.json' })).json() as { keys: { kid: string }[] }).keys.map(
        (k) => k.kid,
      );
    assert.deepEqual((await kids()).sort(), [oldKid, newKid].sort());
    clock.advance(901_000);
    assert.deepEqual(await kids(), [newKid]);
  });

  test("another organization's application is 404; a suspended organization's tokens stop", async () => {
    const created = await createApp(['platform:read']);
    const other = await h.createOrganization('buyer', 'M2M Other Buyer');
    await h.addMember(other, 'm2m-other@example.com', 'admin');
    const otherCookie = await h.signInAccepted('m2m-other@example.com', STRONG_PASSWORD);
    for (const method of ['GET', 'PATCH', 'DELETE'] as const) {
      const res = await h.session(otherCookie, {
        method,
        url: `/api/v2/m2m-applications/${created.application.id}`,
        ...(method === 'PATCH' ? { payload: { name: 'mine now' } } : {}),
      });
      assert.equal(res.statusCode, 404, `${method}: ${res.body}`);
      assert.equal(envelopeError(res).code, 'NOT_FOUND');
    }
    const otherApp = await h.session(otherCookie, {
      method: 'POST',
      url: '/api/v2/m2m-applications',
      payload: { name: 'theirs' },
    });
    const theirs = envelopeData<CreatedApp>(otherApp);
    const token = (
      (await tokenOf(theirs.application.clientId, theirs.clientSecret)).json() as { access_token: string }
    ).access_token;
    const me = envelopeData<{ id: string }[]>(await h.bearer(token, { url: ADVERTISERS }));
    assert.deepEqual(me, [], "the token reads its own organization's advertisers only");
    await h.ops({ method: 'POST', url: `/_ops/organizations/${other}/suspend` });
    assert.equal((await h.bearer(token, { url: ADVERTISERS })).statusCode, 401);
    assert.equal((await tokenOf(theirs.application.clientId, theirs.clientSecret)).statusCode, 401);
  });
});

describe('media buying: credential rules across two instances on one database', () => {
  let h: MediaBuyingHarness;
  let b: { app(name: string): ReturnType<MediaBuyingHarness['platform']['app']> };
  let cookie: string;

  before(async () => {
    h = await startMediaBuying();
    b = await h.platform.anotherInstance();
    cookie = await h.signIn(h.demo.email, h.demo.password);
  });
  after(() => h?.close());

  const onB = (credential: string, url = ADVERTISERS) =>
    b.app('media-buying').inject({ url, headers: { authorization: `Bearer ${credential}` } });

  test('a key revoked on one instance is refused on the other at its next request', async () => {
    const key = await h.createUserKey(cookie, 'two instances');
    assert.equal((await onB(key)).statusCode, 200);
    const id = envelopeData<{ id: string; maskedKey: string }[]>(
      await h.session(cookie, { url: '/api/v2/user-api-keys' }),
    ).find((k) => k.maskedKey.endsWith(key.slice(-4)))!.id;
    await h.session(cookie, { method: 'DELETE', url: `/api/v2/user-api-keys/${id}` });
    // The revocation reaches instance B by NOTIFY; its cached resolution is dropped.
    let status = 200;
    for (let i = 0; i < 50 && status === 200; i++) {
      status = (await onB(key)).statusCode;
      if (status === 200) await new Promise((r) => setImmediate(r));
    }
    assert.equal(status, 401);
  });

  test('a member removed on one instance: their key is refused on the other at its next request', async () => {
    const userId = await h.addMember(h.demo.organizationId, 'cross-instance@example.com', 'member');
    const member = await h.signInAccepted('cross-instance@example.com', STRONG_PASSWORD);
    const key = await h.createUserKey(member);
    assert.equal((await onB(key)).statusCode, 200, 'cached on B');
    const removed = await h.session(cookie, {
      method: 'DELETE',
      url: `/api/v2/organizations/current/members/${userId}`,
    });
    assert.equal(removed.statusCode, 200);
    assert.equal((await onB(key)).statusCode, 401, 'membership is read live on every request');
  });

  test('an M2M application deleted on one instance: its token is refused on the other at once', async () => {
    const created = envelopeData<CreatedApp>(
      await h.session(cookie, {
        method: 'POST',
        url: '/api/v2/m2m-applications',
        payload: { name: 'cross' },
      }),
    );
    const token = (
      (
        await b.app('media-buying').inject({
          method: 'POST',
          url: '/oauth/token',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({
            grant_type: 'client_credentials',
            client_id: created.application.clientId,
            client_secret: created.clientSecret,
          }).toString(),
        })
      ).json() as { access_token: string }
    ).access_token;
    assert.equal((await h.bearer(token, { url: ADVERTISERS })).statusCode, 200, 'signed on B, verified on A');
    await h.session(cookie, { method: 'DELETE', url: `/api/v2/m2m-applications/${created.application.id}` });
    assert.equal((await onB(token)).statusCode, 401);
  });
});
