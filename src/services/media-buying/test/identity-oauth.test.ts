/**
 * The sign-in round trips (spec "Sign-in and signup": `GET /auth/url`, `GET /auth/sso/url`, `POST /auth/token`,
 * `POST /auth/sso/callback`; "Authentication" rule 6; "Errors": `SIGNUP_EXPERIENCE_STATE_UNAVAILABLE`): the hosted
 * sign-in of the built-in identity provider, SSO with the built-in OpenID Connect simulator and with an external
 * issuer over HTTP, every failure case of the routing-intent state, and `signup_experience` granting nothing.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import pg from 'pg';
import { baseUrlOf, startTestPlatform, type TestPlatform } from '../../../../test/support/platform.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { ConfigError } from '../../../platform/errors.ts';
import { FIRST_PARTY_CLIENT_ID } from '../identity/index.ts';
import { mediaBuyingService } from '../index.ts';
import { readMediaBuyingConfig } from '../media-buying-config.ts';
import { DEMO_EMAIL } from '../seed.ts';
import {
  type Answer,
  counts,
  get,
  post,
  postForm,
  sessionCookie,
  signUpAndVerify,
  signupToken,
  strongPassword,
} from './identity-support.ts';

const MINUTE = 60_000;
const UI = 'http://127.0.0.1:4100';

/** The query parameters of a URL. */
function paramsOf(url: string): Record<string, string> {
  return Object.fromEntries(new URL(url).searchParams.entries());
}

/** The flat 503 of the legacy endpoints, its message matching `message`. */
function assertFlat503(res: Answer, message: RegExp): void {
  assert.equal(res.statusCode, 503, res.body);
  const body = res.json() as Record<string, unknown>;
  assert.deepEqual(Object.keys(body).sort(), ['error', 'message', 'retryable']);
  assert.equal(body.error, 'SIGNUP_EXPERIENCE_STATE_UNAVAILABLE');
  assert.equal(body.retryable, true);
  assert.match(String(body.message), message);
}

/** The legacy 422 on `state`. */
function assertLegacyState(res: Answer, message: RegExp): void {
  assert.equal(res.statusCode, 422, res.body);
  const error = res.json().error as { code: string; field: string; message: string };
  assert.equal(error.code, 'VALIDATION_ERROR');
  assert.equal(error.field, 'state');
  assert.match(error.message, message);
  assert.equal(res.json().data, null);
}

describe('media-buying identity: hosted sign-in and SSO round trips', () => {
  const clock = new ManualClock();
  let platform: TestPlatform;
  let db: pg.Client;
  let demoPassword: string;
  const app = () => platform.app('media-buying');

  before(async () => {
    platform = await startTestPlatform({ services: [mediaBuyingService], clock });
    demoPassword = platform.credentials('media-buying').password as string;
    db = new pg.Client({ connectionString: platform.database.url });
    await db.connect();
  });
  after(async () => {
    await db?.end();
    await platform?.close();
  });

  /** `GET /auth/url` (or `/auth/sso/url`): the authorization URL's parameters. */
  const start = async (flow: 'auth' | 'sso', experience?: string) => {
    const path = flow === 'auth' ? '/auth/url' : '/auth/sso/url';
    const res = await get(app(), experience ? `${path}?signup_experience=${experience}` : path);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['cache-control'], 'no-store');
    const data = res.json().data as { url: string; expiresAt: string };
    assert.equal(new Date(data.expiresAt).getTime(), clock.nowMs() + 10 * MINUTE);
    return { url: data.url, params: paramsOf(data.url) };
  };

  /** Signs in on the hosted page (a form post): the callback's code and state. */
  const hostedCode = async (params: Record<string, string>, email: string, password: string) => {
    const res = await postForm(app(), '/auth/authorize', { ...params, email, password });
    assert.equal(res.statusCode, 303, res.body);
    const location = String(res.headers.location);
    assert.ok(location.startsWith(`${UI}/sign-in/callback?`), location);
    return paramsOf(location) as { code: string; state: string };
  };

  /** Chooses a person on the simulator's page: the callback's code, state and iss. */
  const simulatorCode = async (params: Record<string, string>, login: string, emailVerified = true) => {
    const res = await postForm(app(), '/_sim/oidc/authorize', {
      ...params,
      login,
      name: `${login} (simulated)`,
      email_verified: String(emailVerified),
    });
    assert.equal(res.statusCode, 303, res.body);
    const location = String(res.headers.location);
    assert.ok(location.startsWith(`${UI}/sign-in/sso/callback?`), location);
    return paramsOf(location) as { code: string; state: string; iss: string };
  };

  test('hosted sign-in: the URL, the sign-in page, the code, and POST /auth/token opens a session', async () => {
    const { url, params } = await start('auth');
    assert.ok(url.startsWith(`${UI}/auth/authorize?`), url);
    assert.equal(params.client_id, FIRST_PARTY_CLIENT_ID);
    assert.equal(params.redirect_uri, `${UI}/sign-in/callback`);
    assert.equal(params.code_challenge_method, 'S256');
    assert.match(params.state!, /^mbst_[A-Za-z0-9_-]{43}$/, 'a flow without routing intent');

    const page = await get(app(), new URL(url).pathname + new URL(url).search);
    assert.equal(page.statusCode, 200, page.body);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(
      String(page.headers['content-security-policy']),
      /form-action 'self' http:\/\/127\.0\.0\.1:4100/,
    );
    assert.match(page.body, /<form method="post" action="\/auth\/authorize">/);
    assert.ok(page.body.includes(`value="${params.state}"`));

    const wrong = await postForm(app(), '/auth/authorize', {
      ...params,
      email: DEMO_EMAIL,
      password: 'not it at all 42',
    });
    assert.equal(wrong.statusCode, 401);
    assert.equal(wrong.headers.location, undefined);

    const callback = await hostedCode(params, DEMO_EMAIL, demoPassword);
    assert.equal(callback.state, params.state);
    assert.match(callback.code, /^mbac_[A-Za-z0-9_-]{43}$/);
    const done = await post(app(), '/auth/token', callback);
    assert.equal(done.statusCode, 200, done.body);
    assert.equal(done.headers['cache-control'], 'no-store');
    const data = done.json().data as { requiresSignup: boolean; user: { email: string } };
    assert.equal(data.requiresSignup, false);
    assert.equal(data.user.email, DEMO_EMAIL);
    const me = await get(app(), '/auth/me', sessionCookie(done));
    assert.equal(me.statusCode, 200, me.body);
    assert.equal(me.json().data.credential.kind, 'session');

    // The state is one-time: the same callback again is the legacy refusal (no routing intent).
    assertLegacyState(await post(app(), '/auth/token', callback), /is unknown or was already used/);

    // A JSON post of the hosted page gets the redirect in the envelope.
    const second = await start('auth');
    const json = await post(app(), '/auth/authorize', {
      ...second.params,
      email: DEMO_EMAIL,
      password: demoPassword,
    });
    assert.equal(json.statusCode, 200, json.body);
    assert.equal(paramsOf(json.json().data.redirectUrl).state, second.params.state);
  });

  test('a round trip completes only in the browser that started it (the mb_signin binding): code and state alone do not', async () => {
    for (const experience of [undefined, 'ADVERTISER']) {
      const started = await get(
        app(),
        experience ? `/auth/url?signup_experience=${experience}` : '/auth/url',
      );
      const binding = String(started.headers['set-cookie']).split(';')[0]!;
      assert.match(binding, /^mb_signin=[A-Za-z0-9_-]{43}$/);
      assert.match(String(started.headers['set-cookie']), /HttpOnly; SameSite=Lax/);
      const params = paramsOf((started.json().data as { url: string }).url);
      const callback = await hostedCode(params, DEMO_EMAIL, demoPassword);
      // Another browser (no binding cookie, or its own) with the same code and state is refused: nothing consumed.
      for (const cookie of [undefined, `mb_signin=${'x'.repeat(43)}`]) {
        const refused = await app().inject({
          method: 'POST',
          url: '/auth/token',
          payload: callback,
          headers: cookie ? { cookie } : {},
        });
        if (experience) {
          assert.equal(refused.statusCode, 503, refused.body);
          assert.equal(refused.json().error, 'SIGNUP_EXPERIENCE_STATE_UNAVAILABLE');
        } else assertLegacyState(refused, /is unknown or was already used/);
      }
      const done = await app().inject({
        method: 'POST',
        url: '/auth/token',
        payload: callback,
        headers: { cookie: binding },
      });
      assert.equal(done.statusCode, 200, done.body);
    }
  });

  test('the hosted page never redirects a bad request; a code is bound to its PKCE challenge and lives one minute', async () => {
    const { params } = await start('auth');
    const evil = { ...params, redirect_uri: 'https://evil.example/cb' };
    const page = await get(app(), `/auth/authorize?${new URLSearchParams(evil)}`);
    assert.equal(page.statusCode, 400);
    assert.equal(page.json().error.code, 'VALIDATION_ERROR');
    assert.equal(page.json().error.field, 'query.redirect_uri');
    const posted = await postForm(app(), '/auth/authorize', {
      ...evil,
      email: DEMO_EMAIL,
      password: demoPassword,
    });
    assert.equal(posted.statusCode, 400);
    assert.equal(posted.headers.location, undefined, 'never redirected');
    for (const [field, value] of [
      ['client_id', 'someone-else'],
      ['code_challenge_method', 'plain'],
      ['response_type', 'token'],
    ] as const) {
      const res = await get(app(), `/auth/authorize?${new URLSearchParams({ ...params, [field]: value })}`);
      assert.equal(res.statusCode, 400, `${field}: ${res.body}`);
      assert.equal(res.json().error.field, `query.${field}`);
    }

    // A code issued for another round trip (another PKCE challenge) does not complete this one...
    const other = await start('auth');
    const otherCode = await hostedCode(other.params, DEMO_EMAIL, demoPassword);
    const mismatch = await post(app(), '/auth/token', { code: otherCode.code, state: params.state });
    assert.equal(mismatch.statusCode, 422, mismatch.body);
    assert.equal(mismatch.json().error.field, 'code');
    // ...and the refusal consumed nothing: each completes with its own code.
    const own = await hostedCode(params, DEMO_EMAIL, demoPassword);
    assert.equal((await post(app(), '/auth/token', own)).statusCode, 200);
    assert.equal((await post(app(), '/auth/token', otherCode)).statusCode, 200);

    // A code lives one minute.
    const late = await start('auth');
    const lateCode = await hostedCode(late.params, DEMO_EMAIL, demoPassword);
    clock.advance(MINUTE + 1000);
    const expired = await post(app(), '/auth/token', lateCode);
    assert.equal(expired.statusCode, 422, expired.body);
    assert.equal(expired.json().error.field, 'code');
  });

  test('signup_experience is routing metadata only: kept server-side, handed to the signup data, and grants nothing', async () => {
    const email = 'routed@example.com';
    const password = strongPassword();
    await signUpAndVerify(platform, email, password);
    const tables = [
      'organizations',
      'memberships',
      'users',
      'advertiser_previews',
      'invitations',
      'audit_logs',
    ];
    const before = await counts(platform, tables);

    const { params } = await start('auth', 'ADVERTISER');
    assert.match(params.state!, /^mbsx_/, 'a flow with routing intent');
    assert.ok(!new URL(`${UI}/auth/authorize?${new URLSearchParams(params)}`).search.includes('ADVERTISER'));
    const done = await post(app(), '/auth/token', await hostedCode(params, email, password));
    assert.equal(done.statusCode, 200, done.body);
    const token = signupToken(done);
    const data = await get(app(), `/auth/verified-signup-data/${token}`);
    assert.equal(data.statusCode, 200, data.body);
    assert.equal(data.json().data.signupExperience, 'ADVERTISER');
    assert.deepEqual(await counts(platform, tables), before, 'nothing admitted, joined or created');

    // An existing user signing in with MEDIA_COMPANY intent: the same organization, role and memberships as without.
    const plain = await post(
      app(),
      '/auth/token',
      await hostedCode((await start('auth')).params, DEMO_EMAIL, demoPassword),
    );
    const routed = await post(
      app(),
      '/auth/token',
      await hostedCode((await start('auth', 'MEDIA_COMPANY')).params, DEMO_EMAIL, demoPassword),
    );
    assert.deepEqual(routed.json(), plain.json());
    const meOf = async (res: Answer) => {
      const me = (await get(app(), '/auth/me', sessionCookie(res))).json().data;
      return { organization: me.organization, role: me.role, access: me.access, memberships: me.memberships };
    };
    assert.deepEqual(await meOf(routed), await meOf(plain));
    assert.deepEqual(await counts(platform, tables), before);
  });

  for (const flow of ['auth', 'sso'] as const) {
    const callback = flow === 'auth' ? '/auth/token' : '/auth/sso/callback';
    const other = flow === 'auth' ? 'sso' : 'auth';

    test(`${callback}: every SIGNUP_EXPERIENCE_STATE_UNAVAILABLE case is a flat 503 with routing intent, the legacy 422 without`, async () => {
      /** A full round trip up to the callback: the callback's parameters. */
      const roundTrip = async (experience?: string) => {
        const { params } = await start(flow, experience);
        return flow === 'auth'
          ? hostedCode(params, DEMO_EMAIL, demoPassword)
          : simulatorCode(params, 'grace');
      };
      const complete = (body: Record<string, string>) => post(app(), callback, body);

      // Unavailable: a well-formed state never issued (or purged), and one already used.
      const fake = `mbsx_${'A'.repeat(43)}`;
      assertFlat503(
        await complete({ code: 'x', state: fake }),
        /unknown or was already used; restart sign-in/,
      );
      assertLegacyState(
        await complete({ code: 'x', state: `mbst_${'A'.repeat(43)}` }),
        /unknown or was already used/,
      );
      const used = await roundTrip('DEVELOPER');
      assert.equal((await complete(used)).statusCode, 200);
      assertFlat503(await complete(used), /unknown or was already used/);

      // Malformed: the routing-intent prefix with a damaged rest; anything else is the legacy answer.
      for (const state of ['mbsx_short', `${used.state}x`, `mbsx_${'!'.repeat(43)}`])
        assertFlat503(await complete({ code: 'x', state }), /malformed/);
      for (const state of ['garbage', 'mbst_short', `mbs_${'A'.repeat(43)}`])
        assertLegacyState(await complete({ code: 'x', state }), /is not a state this service issued/);

      // Expired: ten minutes after the URL was made.
      const late = await roundTrip('ADVERTISER');
      const latePlain = await roundTrip();
      clock.advance(10 * MINUTE + 1000);
      assertFlat503(await complete(late), /expired; restart sign-in/);
      assertLegacyState(await complete(latePlain), /expired/);

      // Wrong flow: a state of the other round trip.
      const foreign = await get(
        app(),
        `/auth/${other === 'auth' ? '' : 'sso/'}url?signup_experience=ADVERTISER`,
      );
      const foreignState = paramsOf(foreign.json().data.url).state!;
      assertFlat503(await complete({ code: 'x', state: foreignState }), /belongs to another sign-in flow/);
      const foreignPlain = paramsOf(
        (await get(app(), `/auth/${other === 'auth' ? '' : 'sso/'}url`)).json().data.url,
      );
      assertLegacyState(await complete({ code: 'x', state: foreignPlain.state! }), /another sign-in flow/);

      // The store cannot be read.
      const pending = await roundTrip('MEDIA_COMPANY');
      const pendingPlain = await roundTrip();
      await db.query('alter table media_buying.sign_in_states rename to sign_in_states_away');
      try {
        assertFlat503(await complete(pending), /cannot be read right now; restart sign-in/);
        const down = await complete(pendingPlain);
        assert.equal(down.statusCode, 503);
        assert.deepEqual(down.json(), {
          data: null,
          error: {
            code: 'SERVICE_UNAVAILABLE',
            message: 'Sign-in cannot complete right now; retry in a moment.',
          },
        });
      } finally {
        await db.query('alter table media_buying.sign_in_states_away rename to sign_in_states');
      }
      // Back: both complete (a refusal consumed nothing).
      assert.equal((await complete(pending)).statusCode, 200);
      assert.equal((await complete(pendingPlain)).statusCode, 200);
    });
  }

  test('a routing-intent state that cannot be stored is a flat 503 on both URL endpoints; without intent an enveloped 503', async () => {
    await db.query(`create function media_buying.refuse_states() returns trigger language plpgsql as
      $$ begin raise exception 'state storage unavailable'; end $$`);
    await db.query(`create trigger refuse_states before insert on media_buying.sign_in_states
      for each row execute function media_buying.refuse_states()`);
    try {
      for (const path of ['/auth/url', '/auth/sso/url']) {
        const routed = await get(app(), `${path}?signup_experience=ADVERTISER_PORTFOLIO`);
        assertFlat503(routed, /could not be stored; retry in a moment/);
        const plain = await get(app(), path);
        assert.equal(plain.statusCode, 503);
        assert.deepEqual(plain.json(), {
          data: null,
          error: {
            code: 'SERVICE_UNAVAILABLE',
            message: 'Sign-in cannot start right now; retry in a moment.',
          },
        });
      }
    } finally {
      await db.query('drop trigger refuse_states on media_buying.sign_in_states');
      await db.query('drop function media_buying.refuse_states()');
    }
    assert.equal((await get(app(), '/auth/url?signup_experience=ADVERTISER')).statusCode, 200);
    // An unknown experience is a schema error in the envelope, not the flat body.
    const bad = await get(app(), '/auth/url?signup_experience=ADMIN');
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().error.code, 'VALIDATION_ERROR');
  });

  test('one client address starts at most 100 round trips a minute (each stores a state)', async () => {
    clock.advance(MINUTE);
    const from = { remoteAddress: '192.0.2.44' };
    for (let i = 0; i < 100; i++) {
      const path = i % 2 === 0 ? '/auth/url' : '/auth/sso/url';
      const res = await app().inject({ method: 'GET', url: path, ...from });
      assert.equal(res.statusCode, 200, res.body);
    }
    const limited = await app().inject({
      method: 'GET',
      url: '/auth/url?signup_experience=ADVERTISER',
      ...from,
    });
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.json().error.code, 'RATE_LIMITED');
    assert.ok(Number(limited.headers['retry-after']) >= 1);
    const other = await app().inject({ method: 'GET', url: '/auth/url', remoteAddress: '192.0.2.45' });
    assert.equal(other.statusCode, 200);
    clock.advance(MINUTE);
    assert.equal((await app().inject({ method: 'GET', url: '/auth/url', ...from })).statusCode, 200);
  });

  test('SSO with the built-in simulator: a new verified identity resumes its signup; its link signs in next time', async () => {
    const { url, params } = await start('sso', 'MEDIA_COMPANY');
    assert.ok(url.startsWith(`${UI}/_sim/oidc/authorize?`), url);
    assert.equal(params.code_challenge_method, 'S256');
    assert.ok(params.nonce && params.state && params.code_challenge);
    assert.equal(params.scope, 'openid email profile');
    const page = await get(app(), new URL(url).pathname + new URL(url).search);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /Ada Lovelace &lt;ada@sso-simulator\.example&gt;/);

    const cb = await simulatorCode(params, 'ada');
    assert.equal(cb.iss, `${UI}/_sim/oidc`);
    const done = await post(app(), '/auth/sso/callback', cb);
    assert.equal(done.statusCode, 200, done.body);
    const token = signupToken(done);
    const data = (await get(app(), `/auth/verified-signup-data/${token}`)).json().data;
    assert.deepEqual(
      { email: data.email, name: data.name, signupExperience: data.signupExperience },
      { email: 'ada@sso-simulator.example', name: 'ada (simulated)', signupExperience: 'MEDIA_COMPANY' },
    );
    const { rows } = await db.query(
      `select l.issuer, l.subject, i.password_hash, i.email_verified_at is not null as verified
         from media_buying.sso_links l join media_buying.identities i on i.id = l.identity_id
        where i.email = 'ada@sso-simulator.example'`,
    );
    assert.deepEqual(rows, [
      { issuer: `${UI}/_sim/oidc`, subject: 'sim-ada', password_hash: null, verified: true },
    ]);
    // Next time the link finds the identity, even if the provider stops vouching for the email.
    const again = await simulatorCode((await start('sso')).params, 'ada', false);
    signupToken(await post(app(), '/auth/sso/callback', again));
  });

  test('SSO links an existing account only by a verified email', async () => {
    const email = 'linus@sso-simulator.example';
    const orgId = platform.credentials('media-buying').organizationId as string;
    const added = await app().inject({
      method: 'POST',
      url: `/_ops/organizations/${orgId}/members`,
      headers: { authorization: platform.operatorAuth },
      payload: { email, name: 'Linus', password: strongPassword(), role: 'member' },
    });
    assert.equal(added.statusCode, 201, added.body);

    const { params } = await start('sso');
    const unverified = await simulatorCode(params, 'linus', false);
    const refused = await post(app(), '/auth/sso/callback', unverified);
    assert.equal(refused.statusCode, 403, refused.body);
    assert.equal(refused.json().error.details.reason, 'email_not_verified');
    const links = async () =>
      (await db.query(`select count(*)::int as n from media_buying.sso_links where subject = 'sim-linus'`))
        .rows[0].n;
    assert.equal(await links(), 0);

    // The refusal consumed nothing: the same round trip completes with a verified assertion.
    const verified = await simulatorCode(params, 'linus', true);
    const done = await post(app(), '/auth/sso/callback', verified);
    assert.equal(done.statusCode, 200, done.body);
    assert.equal(done.json().data.user.email, email);
    assert.equal(await links(), 1);
    const me = await get(app(), '/auth/me', sessionCookie(done));
    assert.equal(me.json().data.user.email, email);
  });

  test('the SSO callback checks the code at the provider, the issuer, and the code lifetime', async () => {
    const first = await simulatorCode((await start('sso')).params, 'grace');
    assert.equal((await post(app(), '/auth/sso/callback', first)).statusCode, 200);

    // A code used once is refused by the provider, even with a fresh state.
    const fresh = await start('sso');
    const replay = await post(app(), '/auth/sso/callback', {
      code: first.code,
      state: fresh.params.state!,
      iss: first.iss,
    });
    assert.equal(replay.statusCode, 422, replay.body);
    assert.equal(replay.json().error.field, 'code');

    // Another issuer in the callback (RFC 9207).
    const cb = await simulatorCode(fresh.params, 'grace');
    const mixed = await post(app(), '/auth/sso/callback', { ...cb, iss: 'https://other.example' });
    assert.equal(mixed.statusCode, 422, mixed.body);
    assert.equal(mixed.json().error.field, 'iss');

    // The provider's code lives a minute.
    clock.advance(MINUTE + 1000);
    const late = await post(app(), '/auth/sso/callback', cb);
    assert.equal(late.statusCode, 422, late.body);
    assert.equal(late.json().error.field, 'code');
  });

  test('an ID token for another nonce is refused (401) and consumes nothing', async () => {
    const { params } = await start('sso');
    const swapped = await simulatorCode({ ...params, nonce: 'someone-elses-nonce' }, 'ada');
    const refused = await post(app(), '/auth/sso/callback', swapped);
    assert.equal(refused.statusCode, 401, refused.body);
    assert.deepEqual(refused.json().error, {
      code: 'UNAUTHORIZED',
      message: 'The credential is invalid, expired or revoked.',
    });
    const honest = await simulatorCode(params, 'ada');
    assert.equal((await post(app(), '/auth/sso/callback', honest)).statusCode, 200);
  });

  test('one client address completes at most 30 round trips a minute (an SSO completion calls the provider)', async () => {
    const from = { remoteAddress: '192.0.2.77' };
    const body = { code: `mbac_${'a'.repeat(43)}`, state: `mbst_${'b'.repeat(43)}` };
    for (let i = 0; i < 30; i++)
      assert.equal(
        (await post(app(), i % 2 ? '/auth/token' : '/auth/sso/callback', body, from)).statusCode,
        422,
      );
    const limited = await post(app(), '/auth/token', body, from);
    assert.equal(limited.statusCode, 429);
    assert.ok(Number(limited.headers['retry-after']) >= 1);
    assert.equal((await post(app(), '/auth/token', body, { remoteAddress: '192.0.2.78' })).statusCode, 422);
    clock.advance(61_000);
  });

  test('the simulator refuses a bad authorization request without redirecting, and a wrong client secret', async () => {
    const { params } = await start('sso');
    const noPkce = { ...params, code_challenge_method: 'plain' };
    const page = await get(app(), `/_sim/oidc/authorize?${new URLSearchParams(noPkce)}`);
    assert.equal(page.statusCode, 400);
    assert.equal(page.json().error.code, 'VALIDATION_ERROR');
    assert.equal(page.json().error.field, 'query.code_challenge_method');
    assert.match(page.json().error.message, /must be S256 \(PKCE is required\)/);
    const chosen = await postForm(app(), '/_sim/oidc/authorize', {
      ...params,
      redirect_uri: 'javascript:alert(1)',
      login: 'ada',
      name: 'Ada',
    });
    assert.equal(chosen.statusCode, 400);
    assert.equal(chosen.headers.location, undefined);
    assert.equal(chosen.json().error.field, 'redirect_uri');
    // Never an open redirect: another site's URI is refused on the page and on the post.
    const elsewhere = { ...params, redirect_uri: 'https://attacker.example/callback' };
    const foreignPage = await get(app(), `/_sim/oidc/authorize?${new URLSearchParams(elsewhere)}`);
    assert.equal(foreignPage.statusCode, 400);
    assert.match(
      foreignPage.json().error.message,
      /must be on http:\/\/127\.0\.0\.1:4100 or a loopback address/,
    );
    const foreignPost = await postForm(app(), '/_sim/oidc/authorize', {
      ...elsewhere,
      login: 'ada',
      name: 'Ada',
    });
    assert.equal(foreignPost.statusCode, 400);
    assert.equal(foreignPost.headers.location, undefined);
    // A form on another site cannot post the simulator's choice.
    const crossSite = await postForm(
      app(),
      '/_sim/oidc/authorize',
      { ...params, login: 'ada', name: 'Ada' },
      { origin: 'https://attacker.example' },
    );
    assert.equal(crossSite.statusCode, 403);
    const cb = await simulatorCode(params, 'ada');
    const token = await postForm(app(), '/_sim/oidc/token', {
      grant_type: 'authorization_code',
      code: cb.code,
      redirect_uri: params.redirect_uri!,
      code_verifier: 'x'.repeat(43),
      client_id: 'media-buying',
      client_secret: 'not the secret',
    });
    assert.equal(token.statusCode, 401);
    assert.equal(token.json().error, 'invalid_client');
  });
});

describe('media-buying SSO against a configured external issuer', () => {
  test('MEDIA_BUYING_OIDC_* is validated at start', () => {
    const bad: Record<string, string>[] = [
      {
        MEDIA_BUYING_OIDC_ISSUER: 'http://idp.example.com',
        MEDIA_BUYING_OIDC_CLIENT_ID: 'a',
        MEDIA_BUYING_OIDC_CLIENT_SECRET: 'b',
      },
      { MEDIA_BUYING_OIDC_ISSUER: 'https://idp.example.com' },
      { MEDIA_BUYING_OIDC_CLIENT_ID: 'a', MEDIA_BUYING_OIDC_CLIENT_SECRET: 'b' },
      {
        MEDIA_BUYING_OIDC_ISSUER: 'https://idp.example.com?x=1',
        MEDIA_BUYING_OIDC_CLIENT_ID: 'a',
        MEDIA_BUYING_OIDC_CLIENT_SECRET: 'b',
      },
      {
        MEDIA_BUYING_OIDC_ISSUER: 'ftp://idp.example.com',
        MEDIA_BUYING_OIDC_CLIENT_ID: 'a',
        MEDIA_BUYING_OIDC_CLIENT_SECRET: 'b',
      },
    ];
    for (const env of bad) assert.throws(() => readMediaBuyingConfig(env), ConfigError, JSON.stringify(env));
    assert.equal(readMediaBuyingConfig({}).oidc, undefined);
    assert.deepEqual(
      readMediaBuyingConfig({
        MEDIA_BUYING_OIDC_ISSUER: 'https://idp.example.com/',
        MEDIA_BUYING_OIDC_CLIENT_ID: 'media',
        MEDIA_BUYING_OIDC_CLIENT_SECRET: 's3cret',
      }).oidc,
      { issuer: 'https://idp.example.com/', clientId: 'media', clientSecret: 's3cret' },
    );
    assert.ok(
      readMediaBuyingConfig({
        MEDIA_BUYING_OIDC_ISSUER: 'http://localhost:9000/oidc',
        MEDIA_BUYING_OIDC_CLIENT_ID: 'a',
        MEDIA_BUYING_OIDC_CLIENT_SECRET: 'b',
      }).oidc,
    );
  });

  test("any issuer: a hand-written provider's ID token is checked against its JWKS (a forged signature is a 401)", async () => {
    const right = await generateKeyPair('ES256');
    const rogue = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(right.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    let signWith = right.privateKey;
    let base = '';
    const server = http.createServer((req, res) => {
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      };
      if (req.method === 'GET' && req.url === '/.well-known/openid-configuration')
        return json(200, {
          issuer: base,
          authorization_endpoint: `${base}/authorize`,
          token_endpoint: `${base}/token`,
          jwks_uri: `${base}/jwks`,
          response_types_supported: ['code'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['ES256'],
          token_endpoint_auth_methods_supported: ['client_secret_post'],
        });
      if (req.method === 'GET' && req.url === '/jwks') return json(200, { keys: [jwk] });
      if (req.method === 'POST' && req.url === '/token') {
        let raw = '';
        req.on('data', (chunk) => {
          raw += chunk;
        });
        req.on('end', async () => {
          const form = new URLSearchParams(raw);
          if (form.get('client_secret') !== 'fake-secret') return json(401, { error: 'invalid_client' });
          const { nonce } = JSON.parse(Buffer.from(form.get('code') ?? '', 'base64url').toString()) as {
            nonce: string;
          };
          const now = Math.floor(Date.now() / 1000);
          const idToken = await new SignJWT({ email: 'hopper@fake-idp.example', email_verified: true, nonce })
            .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
            .setIssuer(base)
            .setAudience('fake-client')
            .setSubject('fake-1')
            .setIssuedAt(now)
            .setExpirationTime(now + 300)
            .sign(signWith);
          json(200, { access_token: 'at', token_type: 'Bearer', expires_in: 300, id_token: idToken });
        });
        return undefined;
      }
      return json(404, { error: 'not_found' });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const client = await startTestPlatform({
      services: [mediaBuyingService],
      env: {
        MEDIA_BUYING_OIDC_ISSUER: base,
        MEDIA_BUYING_OIDC_CLIENT_ID: 'fake-client',
        MEDIA_BUYING_OIDC_CLIENT_SECRET: 'fake-secret',
      },
    });
    try {
      const app = client.app('media-buying');
      const callbackOf = async () => {
        const url = new URL((await get(app, '/auth/sso/url')).json().data.url as string);
        assert.equal(url.origin + url.pathname, `${base}/authorize`);
        const nonce = url.searchParams.get('nonce')!;
        return {
          code: Buffer.from(JSON.stringify({ nonce })).toString('base64url'),
          state: url.searchParams.get('state')!,
        };
      };
      const good = await post(app, '/auth/sso/callback', await callbackOf());
      assert.equal(good.statusCode, 200, good.body);
      signupToken(good);
      signWith = rogue.privateKey;
      const forged = await post(app, '/auth/sso/callback', await callbackOf());
      assert.equal(forged.statusCode, 401, forged.body);
      assert.equal(forged.json().error.code, 'UNAUTHORIZED');
    } finally {
      await client.close();
      server.close();
    }
  });

  test("another instance's simulator as the issuer, over HTTP through the guarded client", async () => {
    const provider = await startTestPlatform({ services: [mediaBuyingService], listen: true });
    let client: TestPlatform | undefined;
    try {
      const issuerBase = baseUrlOf(provider.app('media-buying'));
      const registered = await provider.app('media-buying').inject({
        method: 'POST',
        url: '/_ops/oidc-simulator/clients',
        headers: { authorization: provider.operatorAuth },
        payload: { clientId: 'media-buying-elsewhere' },
      });
      assert.equal(registered.statusCode, 200, registered.body);
      const reg = registered.json() as { issuer: string; clientId: string; clientSecret: string };
      assert.equal(reg.issuer, `${issuerBase}/_sim/oidc`);

      client = await startTestPlatform({
        services: [mediaBuyingService],
        env: {
          MEDIA_BUYING_OIDC_ISSUER: reg.issuer,
          MEDIA_BUYING_OIDC_CLIENT_ID: reg.clientId,
          MEDIA_BUYING_OIDC_CLIENT_SECRET: reg.clientSecret,
        },
      });
      const app = client.app('media-buying');
      // The simulator is not served where an external issuer is configured.
      assert.equal((await get(app, '/_sim/oidc/.well-known/openid-configuration')).statusCode, 404);

      const started = await get(app, '/auth/sso/url?signup_experience=DEVELOPER');
      assert.equal(started.statusCode, 200, started.body);
      const url = new URL(started.json().data.url as string);
      assert.equal(url.origin + url.pathname, `${reg.issuer}/authorize`);
      const chosen = await postForm(provider.app('media-buying'), '/_sim/oidc/authorize', {
        ...Object.fromEntries(url.searchParams.entries()),
        login: 'edsger',
        name: 'Edsger',
        email_verified: 'true',
      });
      assert.equal(chosen.statusCode, 303, chosen.body);
      const cb = paramsOf(String(chosen.headers.location));
      const done = await post(app, '/auth/sso/callback', cb);
      assert.equal(done.statusCode, 200, done.body);
      const token = signupToken(done);
      assert.equal(
        (await get(app, `/auth/verified-signup-data/${token}`)).json().data.signupExperience,
        'DEVELOPER',
      );
      const { rows } = await client.booted.database.pool.query(
        'select issuer, subject from media_buying.sso_links',
      );
      assert.deepEqual(rows, [{ issuer: reg.issuer, subject: 'sim-edsger' }]);

      // A secret the provider does not know: the provider refuses the client, the sign-in is a 503.
      await client.close();
      client = await startTestPlatform({
        services: [mediaBuyingService],
        env: {
          MEDIA_BUYING_OIDC_ISSUER: reg.issuer,
          MEDIA_BUYING_OIDC_CLIENT_ID: reg.clientId,
          MEDIA_BUYING_OIDC_CLIENT_SECRET: 'wrong-secret',
        },
      });
      const url2 = new URL(
        (await get(client.app('media-buying'), '/auth/sso/url')).json().data.url as string,
      );
      const chosen2 = await postForm(provider.app('media-buying'), '/_sim/oidc/authorize', {
        ...Object.fromEntries(url2.searchParams.entries()),
        login: 'edsger',
        name: 'Edsger',
        email_verified: 'true',
      });
      const refused = await post(
        client.app('media-buying'),
        '/auth/sso/callback',
        paramsOf(String(chosen2.headers.location)),
      );
      assert.equal(refused.statusCode, 503, refused.body);
      assert.equal(refused.json().error.code, 'SERVICE_UNAVAILABLE');
    } finally {
      await client?.close();
      await provider.close();
    }
  });
});
