/**
 * Helpers of the identity tests (sign-in, signup, SSO, resets): requests to the media-buying app, the mail outbox,
 * session cookies and the queued jobs.
 */
import assert from 'node:assert/strict';
import type { TestPlatform } from '../../../../test/support/platform.ts';
import type { ServiceApp } from '../../../platform/http.ts';

/** An injected answer. */
export type Answer = Awaited<ReturnType<ServiceApp['inject']>>;

/**
 * The test browser's `mb_signin` cookie (the binding of sign-in round trips to the browser that started them):
 * remembered from the answers of `get` and `post`, and sent with their next requests, as a browser does.
 */
let browserBinding: string | undefined;

/** Keeps the `mb_signin` cookie an answer sets. */
function remember(res: Answer): Answer {
  const header = res.headers['set-cookie'];
  const value = (Array.isArray(header) ? header : [header ?? '']).find((c) => c.startsWith('mb_signin='));
  if (value) browserBinding = value.split(';')[0]!;
  return res;
}

/** A Cookie header with `cookie` and the remembered `mb_signin` cookie (unless `bound` is false). */
function cookies(cookie: string | undefined, bound = true): Record<string, string> {
  const all = [cookie, bound ? browserBinding : undefined].filter((c): c is string => Boolean(c));
  return all.length > 0 ? { cookie: all.join('; ') } : {};
}

/** POSTs JSON to the app (optionally with a cookie, an origin or a client address). */
export async function post(
  app: ServiceApp,
  url: string,
  payload: unknown,
  options: { cookie?: string; origin?: string; remoteAddress?: string } = {},
): Promise<Answer> {
  return remember(
    await app.inject({
      method: 'POST',
      url,
      payload: payload as Record<string, unknown>,
      headers: {
        ...cookies(options.cookie),
        ...(options.origin ? { origin: options.origin } : {}),
      },
      ...(options.remoteAddress ? { remoteAddress: options.remoteAddress } : {}),
    }),
  );
}

/** POSTs an HTML form (`application/x-www-form-urlencoded`). */
export function postForm(
  app: ServiceApp,
  url: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return app.inject({
    method: 'POST',
    url,
    payload: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  });
}

/** GETs a path (optionally with a cookie). */
export async function get(app: ServiceApp, url: string, cookie?: string): Promise<Answer> {
  return remember(await app.inject({ method: 'GET', url, headers: cookies(cookie) }));
}

/** The `mb_session=...` pair of an answer's Set-Cookie, for a Cookie header. */
export function sessionCookie(res: Answer): string {
  const header = res.headers['set-cookie'];
  const value = (Array.isArray(header) ? header : [header ?? '']).find((c) => c.startsWith('mb_session='));
  assert.ok(value, `a session cookie is set: ${res.statusCode} ${res.body}`);
  return value.split(';')[0]!;
}

/** The mails to `to`, newest first (the operator's outbox view). */
export async function mailTo(
  platform: TestPlatform,
  to: string,
): Promise<{ subject: string; text: string; kind: string }[]> {
  const res = await platform.app('media-buying').inject({
    method: 'GET',
    url: `/_ops/mail?to=${encodeURIComponent(to)}`,
    headers: { authorization: platform.operatorAuth },
  });
  assert.equal(res.statusCode, 200, res.body);
  return (res.json() as { mail: { subject: string; text: string; kind: string }[] }).mail;
}

/** The six-digit code of the newest mail to `to`. */
export async function latestCode(platform: TestPlatform, to: string): Promise<string> {
  const [mail] = await mailTo(platform, to);
  const code = /\b(\d{6})\b/.exec(mail?.text ?? '')?.[1];
  assert.ok(code, `a code was mailed to ${to}: ${JSON.stringify(mail)}`);
  return code;
}

/** The `verifiedSignupToken` of an interrupted-signup answer. */
export function signupToken(res: Answer): string {
  const data = res.json().data as { requiresSignup: boolean; redirectUrl: string };
  assert.equal(data.requiresSignup, true, res.body);
  const token = new URL(data.redirectUrl, 'http://ui.invalid').searchParams.get('token');
  assert.ok(token?.startsWith('mbv_'), data.redirectUrl);
  return token!;
}

/** Queued jobs by task name (Graphile Worker's table). */
export async function queuedJobs(platform: TestPlatform): Promise<{ task: string; payload: unknown }[]> {
  const { rows } = await platform.booted.database.pool.query(
    `select t.identifier as task, j.payload from graphile_worker._private_jobs j
       join graphile_worker._private_tasks t on t.id = j.task_id order by j.id`,
  );
  return rows as { task: string; payload: unknown }[];
}

/** Row counts of some media-buying tables. */
export async function counts(platform: TestPlatform, tables: string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of tables) {
    const { rows } = await platform.booted.database.pool.query(
      `select count(*)::int as n from media_buying.${table}`,
    );
    out[table] = (rows[0] as { n: number }).n;
  }
  return out;
}

/** A strong password for tests (random words and digits: never in a breach list). */
export function strongPassword(): string {
  return `quartz ${Math.random().toString(36).slice(2, 8)} lantern ${Math.random().toString(36).slice(2, 6)}`;
}

/**
 * Signs up `email` (`POST /auth/signup`), runs the job, and verifies the mailed code.
 * @returns the verification's answer (an interrupted signup: `{requiresSignup: true, redirectUrl}`).
 */
export async function signUpAndVerify(
  platform: TestPlatform,
  email: string,
  password: string,
  name = 'Test Person',
): Promise<Answer> {
  const app = platform.app('media-buying');
  const res = await post(app, '/auth/signup', { email, password, name });
  assert.equal(res.statusCode, 202, res.body);
  await platform.runDueJobs();
  const code = await latestCode(platform, email);
  const verified = await post(app, '/auth/verify-code', { email, code, password });
  assert.equal(verified.statusCode, 200, verified.body);
  return verified;
}
