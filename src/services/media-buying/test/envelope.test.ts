/**
 * The REST envelope and the error table (spec "Resources and fields", "Errors"): every success is `{data, error:
 * null}` (plus `meta.pagination` on lists), every failure `{data: null, error: {code, message, field?, details?}}`
 * with the status of the spec's table, including the answers the framework gives before a route runs.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../../platform/clock.ts';
import { envelopeData, envelopeError, type MediaBuyingHarness, startMediaBuying } from './support/harness.ts';

/** The default of MEDIA_BUYING_REQUESTS_PER_MINUTE. */
const REQUESTS_PER_MINUTE = 600;

describe('media buying: the REST envelope and the error table', () => {
  let h: MediaBuyingHarness;
  const clock = new ManualClock(new Date('2026-11-25T10:00:00Z'));

  before(async () => {
    h = await startMediaBuying({ clock });
  });
  after(() => h?.close());

  test('a success is {data, error: null}; a list adds meta.pagination {skip, take, total, hasMore}', async () => {
    const me = await h.bearer(h.demo.apiKey, { url: '/auth/me' });
    assert.equal(me.statusCode, 200);
    assert.equal(envelopeData<{ user: { email: string } }>(me).user.email, h.demo.email);

    for (const name of ['B', 'C', 'D']) {
      const created = await h.bearer(h.demo.apiKey, {
        method: 'POST',
        url: '/api/v2/buyer/advertisers',
        payload: { name },
      });
      assert.equal(created.statusCode, 201, created.body);
    }
    const page = await h.bearer(h.demo.apiKey, { url: '/api/v2/buyer/advertisers?take=2&skip=1' });
    assert.equal(page.statusCode, 200);
    const body = page.json() as { data: { name: string }[]; error: null; meta: { pagination: unknown } };
    assert.equal(body.error, null);
    assert.deepEqual(
      body.data.map((a) => a.name),
      ['B', 'C'],
    );
    assert.deepEqual(body.meta.pagination, { skip: 1, take: 2, total: 4, hasMore: true });
    const last = (
      await h.bearer(h.demo.apiKey, { url: '/api/v2/buyer/advertisers?take=2&skip=2' })
    ).json() as {
      data: { name: string }[];
      meta: { pagination: { hasMore: boolean } };
    };
    assert.deepEqual(
      last.data.map((a) => a.name),
      ['C', 'D'],
    );
    assert.equal(last.meta.pagination.hasMore, false);
    const past = (
      await h.bearer(h.demo.apiKey, { url: '/api/v2/buyer/advertisers?take=2&skip=10' })
    ).json() as {
      data: unknown[];
      meta: { pagination: unknown };
    };
    assert.deepEqual(past.data, []);
    assert.deepEqual(past.meta.pagination, { skip: 10, take: 2, total: 4, hasMore: false });
  });

  test('HEAD answers as GET with no body', async () => {
    const get = await h.bearer(h.demo.apiKey, { url: '/api/v2/buyer/advertisers' });
    const head = await h.bearer(h.demo.apiKey, { method: 'HEAD', url: '/api/v2/buyer/advertisers' });
    assert.equal(head.statusCode, get.statusCode);
    assert.equal(head.body, '');
    assert.equal(head.headers['content-type'], get.headers['content-type']);
  });

  test('400 VALIDATION_ERROR names the field and lists every issue in details.issues', async () => {
    const res = await h.bearer(h.demo.apiKey, {
      url: '/api/v2/buyer/advertisers?take=0&skip=-1&extra=1',
    });
    assert.equal(res.statusCode, 400);
    const error = envelopeError(res);
    assert.equal(error.code, 'VALIDATION_ERROR');
    assert.equal(typeof error.field, 'string');
    const issues = error.details!.issues as { field: string; location: string; message: string }[];
    assert.ok(issues.length >= 2, JSON.stringify(issues));
    assert.ok(issues.some((i) => i.field === 'query.take'));
    assert.ok(issues.some((i) => i.field === 'query.skip'));

    const body = await h.bearer(h.demo.apiKey, {
      method: 'POST',
      url: '/api/v2/buyer/advertisers',
      payload: { name: 42, colour: 'red' },
    });
    assert.equal(body.statusCode, 400);
    const bodyError = envelopeError(body);
    assert.equal(bodyError.code, 'VALIDATION_ERROR');
    const fields = (bodyError.details!.issues as { field: string }[]).map((i) => i.field).sort();
    assert.deepEqual(fields, ['colour', 'name']);
  });

  test('422 VALIDATION_ERROR for values the schema accepts and the rules refuse', async () => {
    const org = h.demo.organizationId;
    const res = await h.ops({
      method: 'POST',
      url: `/_ops/organizations/${org}/members`,
      payload: { email: 'weak@example.com', name: 'Weak', password: 'password123', role: 'member' },
    });
    assert.equal(res.statusCode, 422);
    const error = envelopeError(res);
    assert.equal(error.code, 'VALIDATION_ERROR');
    assert.equal(error.field, 'password');
  });

  test('401 UNAUTHORIZED for no credential, a malformed one and an unknown one, with the same shape', async () => {
    const missing = await h.call({ url: '/api/v2/buyer/advertisers' });
    const malformed = await h.call({
      url: '/api/v2/buyer/advertisers',
      headers: { authorization: 'Basic abc' },
    });
    const unknown = await h.bearer(`mbu_${'A'.repeat(43)}`, { url: '/api/v2/buyer/advertisers' });
    for (const res of [missing, malformed, unknown]) {
      assert.equal(res.statusCode, 401);
      assert.equal(envelopeError(res).code, 'UNAUTHORIZED');
    }
  });

  test('404 NOT_FOUND for an unknown route and an unknown id; 403 FORBIDDEN without the permission', async () => {
    const route = await h.call({ url: '/api/v2/nope' });
    assert.equal(route.statusCode, 404);
    assert.equal(envelopeError(route).code, 'NOT_FOUND');
    const id = await h.bearer(h.demo.apiKey, {
      url: '/api/v2/buyer/advertisers/adv_00000000000000000000000000000000',
    });
    assert.equal(id.statusCode, 404);
    assert.equal(envelopeError(id).code, 'NOT_FOUND');
    const forbidden = await h.bearer(h.demo.apiKey, { url: '/api/v2/org-api-keys' });
    assert.equal(forbidden.statusCode, 403);
    assert.equal(envelopeError(forbidden).code, 'FORBIDDEN');
    assert.equal(envelopeError(forbidden).details?.reason, 'interactive_session_required');
  });

  test("the framework's own answers are envelopes too: 400 malformed JSON, 405 with Allow, 413, 415", async () => {
    const method = await h.bearer(h.demo.apiKey, { method: 'PUT', url: '/api/v2/buyer/advertisers' });
    assert.equal(method.statusCode, 405);
    assert.equal(method.headers.allow, 'GET, HEAD, POST');
    assert.equal(envelopeError(method).code, 'BAD_REQUEST');
    const json = await h.bearer(h.demo.apiKey, {
      method: 'POST',
      url: '/api/v2/buyer/advertisers',
      headers: { 'content-type': 'application/json' },
      payload: '{"name":',
    });
    assert.equal(json.statusCode, 400);
    assert.equal(envelopeError(json).code, 'BAD_REQUEST');
    const large = await h.bearer(h.demo.apiKey, {
      method: 'POST',
      url: '/api/v2/buyer/advertisers',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }),
    });
    assert.equal(large.statusCode, 413);
    assert.equal(envelopeError(large).code, 'BAD_REQUEST');
    const media = await h.bearer(h.demo.apiKey, {
      method: 'POST',
      url: '/api/v2/buyer/advertisers',
      headers: { 'content-type': 'application/xml' },
      payload: '<advertiser/>',
    });
    assert.equal(media.statusCode, 415);
    assert.equal(envelopeError(media).code, 'BAD_REQUEST');
  });

  test(`429 RATE_LIMITED with Retry-After past ${REQUESTS_PER_MINUTE} requests a minute per credential`, async () => {
    const cookie = await h.signIn(h.demo.email, h.demo.password);
    const key = await h.createUserKey(cookie, 'rate');
    clock.advance(61_000);
    for (let i = 0; i < REQUESTS_PER_MINUTE; i++) {
      const res = await h.bearer(key, { url: '/api/v2/buyer/advertisers?take=1' });
      assert.equal(res.statusCode, 200, `request ${i}`);
    }
    const limited = await h.bearer(key, { url: '/api/v2/buyer/advertisers?take=1' });
    assert.equal(limited.statusCode, 429);
    assert.equal(envelopeError(limited).code, 'RATE_LIMITED');
    assert.ok(Number(limited.headers['retry-after']) >= 1);
    // Another credential has its own budget; the next window lets the key through again.
    assert.equal(
      (await h.bearer(h.demo.apiKey, { url: '/api/v2/buyer/advertisers?take=1' })).statusCode,
      200,
    );
    clock.advance(61_000);
    assert.equal((await h.bearer(key, { url: '/api/v2/buyer/advertisers?take=1' })).statusCode, 200);
  });
});
