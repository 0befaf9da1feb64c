/**
 * Test support of the media-buying service: the platform booted with the service, the demo credentials, and the
 * steps tests repeat (signing in, adding people and organizations through the operator API, sending with a session
 * cookie from the UI origin or with a bearer credential).
 */
import assert from 'node:assert/strict';
import { startTestPlatform, type TestPlatform } from '../../../../../test/support/platform.ts';
import type { Clock } from '../../../../platform/clock.ts';
import { mediaBuyingService } from '../../index.ts';

/**
 * The UI origin of test platforms that do not listen (the service's default public URL); a listening platform's UI
 * origin is its own origin (the service reads it at each use), which `session` sends.
 */
export const UI_ORIGIN = 'http://127.0.0.1:4100';

/** A strong password that meets the policy. */
export const STRONG_PASSWORD = 'violet anchor tundra forty-two';

/** One request as `inject()` takes it. */
export interface Call {
  method?: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  payload?: unknown;
  headers?: Record<string, string>;
  remoteAddress?: string;
}

/** A booted media-buying service with helpers. */
export interface MediaBuyingHarness {
  platform: TestPlatform;
  /** The demo credentials of the first start. */
  demo: {
    email: string;
    password: string;
    apiKey: string;
    organizationId: string;
    sellerOrganizationId: string;
    /** Part 2's seeded catalog and buying records. */
    advertiserId: string;
    campaignId: string;
    mediaBuyId: string;
    europeSellerOrganizationId: string;
  };
  /** Sends a request. */
  call(call: Call): Promise<Awaited<ReturnType<ReturnType<TestPlatform['app']>['inject']>>>;
  /** Sends with a bearer credential. */
  bearer(credential: string, call: Call): ReturnType<MediaBuyingHarness['call']>;
  /** Sends with a session cookie from the UI origin. */
  session(cookie: string, call: Call): ReturnType<MediaBuyingHarness['call']>;
  /** Sends an operator request. */
  ops(call: Call): ReturnType<MediaBuyingHarness['call']>;
  /** Signs in with a password and returns the `Cookie` header value of the session. */
  signIn(email: string, password: string): Promise<string>;
  /** Signs in and accepts the current Terms of Service (a new member must before any mutation). */
  signInAccepted(email: string, password: string): Promise<string>;
  /** Creates an organization through the operator API and returns its public id. */
  createOrganization(kind: 'buyer' | 'seller', name: string, admitted?: boolean): Promise<string>;
  /** Adds a person (created when missing, password {@link STRONG_PASSWORD}) and returns the user's public id. */
  addMember(organizationId: string, email: string, role: 'admin' | 'member', name?: string): Promise<string>;
  /** Creates a user API key from a session (the active organization) and returns the key. */
  createUserKey(cookie: string, label?: string): Promise<string>;
  close(): Promise<void>;
}

/** Boots the media-buying service on a fresh database. */
export async function startMediaBuying(
  options: { clock?: Clock; env?: Record<string, string>; runWorker?: boolean; listen?: boolean } = {},
): Promise<MediaBuyingHarness> {
  const platform = await startTestPlatform({ services: [mediaBuyingService], ...options });
  const app = platform.app('media-buying');
  const demo = platform.credentials('media-buying') as MediaBuyingHarness['demo'];
  const running = platform.booted.services.get('media-buying')!;
  const uiOrigin = () => options.env?.MEDIA_BUYING_UI_ORIGIN ?? new URL(running.ctx.publicUrl).origin;
  const call: MediaBuyingHarness['call'] = (c) =>
    app.inject({
      method: c.method ?? 'GET',
      url: c.url,
      headers: c.headers,
      ...(c.payload === undefined ? {} : { payload: c.payload as string }),
      ...(c.remoteAddress ? { remoteAddress: c.remoteAddress } : {}),
    });
  const harness: MediaBuyingHarness = {
    platform,
    demo,
    call,
    bearer: (credential, c) =>
      call({ ...c, headers: { ...c.headers, authorization: `Bearer ${credential}` } }),
    session: (cookie, c) => call({ ...c, headers: { origin: uiOrigin(), ...c.headers, cookie } }),
    ops: (c) => call({ ...c, headers: { ...c.headers, authorization: platform.operatorAuth } }),
    async signIn(email, password) {
      const res = await call({ method: 'POST', url: '/auth/password', payload: { email, password } });
      assert.equal(res.statusCode, 200, res.body);
      const setCookie = res.headers['set-cookie'];
      const cookie = String(Array.isArray(setCookie) ? setCookie[0] : setCookie).split(';')[0]!;
      assert.match(cookie, /^mb_session=mbs_/);
      return cookie;
    },
    async signInAccepted(email, password) {
      const cookie = await harness.signIn(email, password);
      const terms = await harness.session(cookie, { url: '/api/v2/terms/current' });
      const version = (terms.json() as { data: { version: string } | null }).data?.version;
      if (version) {
        const accepted = await harness.session(cookie, {
          method: 'POST',
          url: '/api/v2/terms/accept',
          payload: { version },
        });
        assert.equal(accepted.statusCode, 200, accepted.body);
      }
      return cookie;
    },
    async createOrganization(kind, name, admitted = true) {
      const res = await harness.ops({
        method: 'POST',
        url: '/_ops/organizations',
        payload: { kind, name, admitted },
      });
      assert.equal(res.statusCode, 201, res.body);
      return (res.json() as { id: string }).id;
    },
    async addMember(organizationId, email, role, name = 'Test Person') {
      const res = await harness.ops({
        method: 'POST',
        url: `/_ops/organizations/${organizationId}/members`,
        payload: { email, name, password: STRONG_PASSWORD, role },
      });
      assert.equal(res.statusCode, 201, res.body);
      return (res.json() as { userId: string }).userId;
    },
    async createUserKey(cookie, label = 'test key') {
      const res = await harness.session(cookie, {
        method: 'POST',
        url: '/api/v2/user-api-keys',
        payload: { label },
      });
      assert.equal(res.statusCode, 201, res.body);
      return (res.json() as { data: { key: string } }).data.key;
    },
    close: () => platform.close(),
  };
  return harness;
}

/** The error object of an envelope answer, after checking the envelope's shape. */
export function envelopeError(res: { json(): unknown; statusCode: number }): {
  code: string;
  message: string;
  field?: string;
  details?: Record<string, unknown>;
} {
  const body = res.json() as { data: unknown; error: { code: string; message: string } | null };
  assert.equal(body.data, null, 'a failure has data: null');
  assert.ok(body.error && typeof body.error.code === 'string' && typeof body.error.message === 'string');
  return body.error as ReturnType<typeof envelopeError>;
}

/** The data of an envelope answer, after checking `error: null`. */
export function envelopeData<T = Record<string, unknown>>(res: { json(): unknown }): T {
  const body = res.json() as { data: T; error: unknown };
  assert.equal(body.error, null, 'a success has error: null');
  return body.data;
}
