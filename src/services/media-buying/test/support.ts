/**
 * Test support for the media-buying service: boots it alone on a fresh database with a ManualClock and a fixed UI
 * origin, and wraps the calls the organization and admission tests repeat (operator calls, people, sign-in, browser
 * requests with the session cookie, the mail outbox, invitation links).
 */
import assert from 'node:assert/strict';
import { startTestPlatform, type TestPlatform } from '../../../../test/support/platform.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { mediaBuyingService } from '../index.ts';

/** An `inject()` answer. */
export type Answer = Awaited<ReturnType<ReturnType<TestPlatform['app']>['inject']>>;

/** The UI origin the tests configure (the one origin whose browsers may change state). */
export const UI_ORIGIN = 'https://app.media-buying.test';

/** A password the policy accepts. */
export const STRONG_PASSWORD = 'quartz lantern meadow 91';

/** The demo Buyer Account administrator of the seed. */
export interface Seeded {
  email: string;
  password: string;
  apiKey: string;
  organizationId: string;
  sellerOrganizationId: string;
  /** A user API key of the administrator in the demo Seller Account (part 4). */
  sellerApiKey: string;
  /** The demo Seller Account's text line (part 4). */
  sellerLine: string;
}

/** A request a test sends (method, url, optional JSON body, headers). */
export interface Call {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  body?: unknown;
  headers?: Record<string, string>;
  remoteAddress?: string;
}

/** The harness of one test file. */
export interface MediaBuyingHarness {
  platform: TestPlatform;
  clock: ManualClock;
  seeded: Seeded;
  /** Any request. */
  send(call: Call): Promise<Answer>;
  /** An operator request (plain JSON answers). */
  ops(method: Call['method'], url: string, body?: unknown): Promise<Answer>;
  /** A browser request with session `cookie` (and the UI origin on state-changing methods). */
  browser(cookie: string, method: Call['method'], url: string, body?: unknown): Promise<Answer>;
  /** A request with `Authorization: Bearer key`. */
  bearer(key: string, method: Call['method'], url: string, body?: unknown): Promise<Answer>;
  /** Creates an organization as the operator; `admitted` defaults to true. @returns its `org_` id. */
  createOrganization(kind: 'buyer' | 'seller', name: string, admitted?: boolean): Promise<string>;
  /** Adds a person (creating the account) as the operator. @returns the `usr_` id. */
  addMember(organizationId: string, email: string, role: 'admin' | 'member'): Promise<string>;
  /** Signs in with a password. @returns the session cookie (`mb_session=...`). */
  signIn(email: string, password?: string): Promise<string>;
  /** Accepts the current terms for the cookie's user. */
  acceptTerms(cookie: string): Promise<void>;
  /** The mail to `to`, newest first, as the operator reads the outbox. */
  mailTo(to: string): Promise<{ id: number; subject: string; text: string; kind: string }[]>;
  close(): Promise<void>;
}

/** The `mb_session=...` pair of an answer's `set-cookie`, or undefined. */
export function sessionCookieOf(res: Answer): string | undefined {
  const header = res.headers['set-cookie'];
  const all = Array.isArray(header) ? header : header === undefined ? [] : [String(header)];
  const found = all.find((c) => c.startsWith('mb_session=') && !c.startsWith('mb_session=;'));
  return found?.split(';')[0];
}

/** The invitation token in a mail's text (`...?token=mbi_...`). */
export function tokenIn(text: string): string {
  const match = /[?&]token=(mbi_[A-Za-z0-9_-]{43})/.exec(text);
  assert.ok(match, `an invitation link in: ${text}`);
  return decodeURIComponent(match[1]!);
}

/** The JSON body of an answer, typed loosely for assertions. */
// biome-ignore lint/suspicious/noExplicitAny: assertions read arbitrary answer fields.
export function json(res: Answer): any {
  return JSON.parse(res.body);
}

/** Asserts an error envelope: status, code and (when given) `details.reason`. */
export function assertError(res: Answer, status: number, code: string, reason?: string): void {
  assert.equal(res.statusCode, status, res.body);
  const body = json(res);
  assert.equal(body.data, null);
  assert.equal(body.error.code, code, res.body);
  assert.equal(typeof body.error.message, 'string');
  if (reason !== undefined) assert.equal(body.error.details?.reason, reason, res.body);
}

/** Boots the media-buying service alone (ManualClock at 2026-11-24T12:00:00Z unless given). */
export async function startMediaBuying(
  options: { env?: Record<string, string>; runWorker?: boolean; clock?: ManualClock } = {},
): Promise<MediaBuyingHarness> {
  const clock = options.clock ?? new ManualClock(new Date('2026-11-24T12:00:00Z'));
  const platform = await startTestPlatform({
    services: [mediaBuyingService],
    clock,
    env: { MEDIA_BUYING_UI_ORIGIN: UI_ORIGIN, ...(options.env ?? {}) },
    runWorker: options.runWorker,
  });
  const app = platform.app('media-buying');
  const seeded = platform.credentials('media-buying') as unknown as Seeded;
  const send = (call: Call) =>
    app.inject({
      method: call.method,
      url: call.url,
      headers: {
        ...(call.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(call.headers ?? {}),
      },
      ...(call.body === undefined ? {} : { payload: JSON.stringify(call.body) }),
      ...(call.remoteAddress ? { remoteAddress: call.remoteAddress } : {}),
    });
  const ops = (method: Call['method'], url: string, body?: unknown) =>
    send({ method, url, body, headers: { authorization: platform.operatorAuth } });
  const browser = (cookie: string, method: Call['method'], url: string, body?: unknown) =>
    send({ method, url, body, headers: { cookie, ...(method === 'GET' ? {} : { origin: UI_ORIGIN }) } });
  const harness: MediaBuyingHarness = {
    platform,
    clock,
    seeded,
    send,
    ops,
    browser,
    bearer: (key, method, url, body) =>
      send({ method, url, body, headers: { authorization: `Bearer ${key}` } }),
    async createOrganization(kind, name, admitted = true) {
      const res = await ops('POST', '/_ops/organizations', { kind, name, admitted });
      assert.equal(res.statusCode, 201, res.body);
      return json(res).id;
    },
    async addMember(organizationId, email, role) {
      const res = await ops('POST', `/_ops/organizations/${organizationId}/members`, {
        email,
        name: email.split('@')[0],
        password: STRONG_PASSWORD,
        role,
      });
      assert.equal(res.statusCode, 201, res.body);
      return json(res).userId;
    },
    async signIn(email, password = STRONG_PASSWORD) {
      const res = await send({ method: 'POST', url: '/auth/password', body: { email, password } });
      assert.equal(res.statusCode, 200, res.body);
      const cookie = sessionCookieOf(res);
      assert.ok(cookie, 'a session cookie');
      return cookie;
    },
    async acceptTerms(cookie) {
      const current = await browser(cookie, 'GET', '/api/v2/terms/current');
      const res = await browser(cookie, 'POST', '/api/v2/terms/accept', {
        version: json(current).data.version,
      });
      assert.equal(res.statusCode, 200, res.body);
    },
    async mailTo(to) {
      const res = await ops('GET', `/_ops/mail?to=${encodeURIComponent(to)}`);
      assert.equal(res.statusCode, 200, res.body);
      return json(res).mail;
    },
    close: () => platform.close(),
  };
  return harness;
}
