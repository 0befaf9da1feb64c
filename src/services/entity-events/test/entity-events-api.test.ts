import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestPlatform, type TestPlatform } from '../../../../test/support/platform.ts';
import { ManualClock } from '../../../platform/clock.ts';
import {
  OutboundHttp,
  type OutboundRequest,
  type OutboundResponse,
} from '../../../platform/outbound-http.ts';
import { entityEventsService } from '../index.ts';
import { CONNECTIVITY_CHECKS_PER_TENANT_PER_MINUTE, REQUESTS_PER_KEY_PER_MINUTE } from '../routes/context.ts';

/** The platform's outbound client (SSRF guard included) that also records every URL it is asked to call. */
class RecordingOutbound extends OutboundHttp {
  readonly sent: string[] = [];
  override async send(url: string, req: OutboundRequest = {}): Promise<OutboundResponse> {
    this.sent.push(url);
    return super.send(url, req);
  }
}

describe('entity-events: tenancy, webhooks, enrollments, fetch-events', () => {
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 12, 0, 0));
  const outbound = new RecordingOutbound({ allowPrivate: true, timeoutMs: 2000 });
  let platform: TestPlatform;
  let keyA: string;
  let keyB: string;
  let tenantB: { tenant_id: string; partner_id: string };

  const call = (method: string, url: string, key: string | undefined, payload?: unknown) =>
    platform.app('entity-events').inject({
      method: method as 'GET',
      url,
      headers: key ? { api_key: key } : {},
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const ops = (method: string, url: string, payload?: unknown) =>
    platform.app('entity-events').inject({
      method: method as 'POST',
      url,
      headers: { authorization: platform.operatorAuth },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  let seq = 0;
  const hook = async (key: string, extra: Record<string, unknown> = {}) => {
    const res = await call('POST', '/v2/webhooks', key, {
      name: `hook-${++seq}`,
      webhook_url: 'http://127.0.0.1:9/hook',
      ...extra,
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  };

  before(async () => {
    platform = await startTestPlatform({ services: [entityEventsService], clock, outbound });
    keyA = platform.credentials('entity-events').apiKey as string;
    const res = await ops('POST', '/_ops/tenants', { name: 'Tenant B' });
    assert.equal(res.statusCode, 201, res.body);
    tenantB = res.json();
    keyB = res.json().api_key;
  });
  after(async () => {
    await platform?.close();
    await outbound.close();
  });

  describe('authentication and response_context', () => {
    test('the seeded demo key works; the tenant comes from the key', async () => {
      const res = await call('GET', '/v2/webhooks', keyA);
      assert.equal(res.statusCode, 200, res.body);
      const ctx = res.json().response_context;
      assert.equal(ctx.request_status, 'success');
      assert.equal(ctx.correlation_id, res.headers['x-request-id']);
      assert.equal(typeof ctx.time_taken_in_seconds, 'number');
      assert.equal(platform.credentials('entity-events').apiKeyHeader, 'api_key');
    });

    test('missing, unknown and revoked keys are 401 with response_context', async () => {
      for (const key of [undefined, 'eek_wrong']) {
        const res = await call('GET', '/v2/webhooks', key);
        assert.equal(res.statusCode, 401);
        assert.equal(res.json().response_context.request_status, 'failure');
        assert.equal(res.json().error.code, 'unauthenticated');
      }
      // The platform's /_ops/keys routes (one shape in every service): the tenant is a body field.
      const issued = await ops('POST', '/_ops/keys', { tenantId: tenantB.tenant_id, label: 'tmp' });
      assert.equal(issued.statusCode, 201, issued.body);
      assert.equal(issued.json().tenantId, tenantB.tenant_id);
      assert.equal(issued.json().response_context.request_status, 'success');
      const listed = await ops('GET', `/_ops/keys?tenantId=${tenantB.tenant_id}`);
      assert.deepEqual(
        listed.json().keys.map((k: { tenantId: string }) => k.tenantId),
        listed.json().keys.map(() => tenantB.tenant_id),
      );
      assert.ok(listed.json().keys.some((k: { id: number }) => k.id === issued.json().id));
      assert.equal((await ops('POST', '/_ops/keys', { tenantId: 'tn_nope' })).statusCode, 404);
      assert.equal((await call('GET', '/v2/webhooks', issued.json().key)).statusCode, 200);
      assert.equal((await ops('POST', `/_ops/keys/${issued.json().id}/revoke`)).statusCode, 200);
      assert.equal((await call('GET', '/v2/webhooks', issued.json().key)).statusCode, 401);
    });

    test('unknown routes and validation errors carry response_context too', async () => {
      const nf = await call('GET', '/v2/nothing', keyA);
      assert.equal(nf.statusCode, 404);
      assert.equal(nf.json().response_context.request_status, 'failure');
      const bad = await call('POST', '/v2/webhooks', keyA, { webhook_url: 'http://x.test' });
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.json().response_context.correlation_id, bad.headers['x-request-id']);
      assert.match(bad.json().error.message, /name/);
      const missing = await call('GET', '/v2/webhooks/wh_00000000000000000000000000000000', keyA);
      assert.equal(missing.statusCode, 404);
      assert.equal(missing.json().response_context.request_status, 'failure');
      const noOperator = await platform.app('entity-events').inject({ method: 'POST', url: '/_ops/events' });
      assert.equal(noOperator.statusCode, 401);
      assert.equal(noOperator.json().response_context.request_status, 'failure');
      const okOps = await ops('GET', '/_ops/deliveries/stats');
      assert.equal(okOps.json().response_context.request_status, 'success');
      for (const res of [missing, noOperator, okOps]) {
        const ctx = res.json().response_context;
        assert.equal(ctx.correlation_id, res.headers['x-request-id']);
        assert.ok(ctx.time_taken_in_seconds >= 0);
      }
    });
  });

  test('OpenAPI: every operation has operationId, tags and summary; api_key is the security scheme', async () => {
    const doc = (await platform.app('entity-events').inject({ method: 'GET', url: '/openapi.json' })).json();
    const missing: string[] = [];
    let n = 0;
    for (const [route, opsOf] of Object.entries(
      doc.paths as Record<string, Record<string, Record<string, unknown>>>,
    ))
      for (const [method, op] of Object.entries(opsOf)) {
        n++;
        if (!op.operationId || !(op.tags as string[] | undefined)?.length || !op.summary)
          missing.push(`${method} ${route}`);
      }
    assert.deepEqual(missing, []);
    assert.ok(n >= 25, `${n} operations`);
    assert.equal(doc.components.securitySchemes.apiKey.name, 'api_key');
  });

  describe('webhooks', () => {
    test('create: 201 with a padded URL-safe base64 secret of 32 bytes; read never shows it', async () => {
      const created = await hook(keyA, { description: 'd', headers: ['X-Team: blue'] });
      assert.match(created.webhook_id, /^wh_[0-9a-f]{32}$/);
      assert.equal(created.payload_format, 'json');
      assert.equal(created.status, 'active');
      assert.deepEqual(created.scope, { type: 'tenant', id: created.scope.id });
      assert.match(created.webhook_secret, /^[A-Za-z0-9_-]{43}=$/);
      assert.equal(Buffer.from(created.webhook_secret, 'base64url').length, 32);
      const read = await call('GET', `/v2/webhooks/${created.webhook_id}`, keyA);
      assert.equal(read.statusCode, 200);
      assert.equal(read.json().webhook_secret, undefined);
      // Custom header values often carry the receiver's credentials: reads show the names only.
      assert.deepEqual(created.headers, ['X-Team: ********']);
      assert.deepEqual(read.json().headers, ['X-Team: ********']);
      const list = await call('GET', '/v2/webhooks', keyA);
      assert.ok(list.json().webhooks.every((w: Record<string, unknown>) => w.webhook_secret === undefined));
    });

    test('custom header values stay masked: sent back masked they are kept, replaced when given', async () => {
      const created = await hook(keyA, { headers: ['X-Token: s3cret', 'X-Team: blue'] });
      const url = `/v2/webhooks/${created.webhook_id}`;
      const listed = (await call('GET', '/v2/webhooks', keyA)).json().webhooks as {
        webhook_id: string;
        headers: string[];
      }[];
      assert.deepEqual(listed.find((w) => w.webhook_id === created.webhook_id)?.headers, [
        'X-Token: ********',
        'X-Team: ********',
      ]);
      assert.ok(!JSON.stringify(listed).includes('s3cret'));
      // What was read, sent back with one value changed: the masked one keeps its stored value.
      const updated = await call('PATCH', url, keyA, { headers: ['x-token: ********', 'X-Team: green'] });
      assert.equal(updated.statusCode, 200, updated.body);
      const stored = await platform.booted.database.pool.query(
        'select headers from entity_events.webhooks where id = $1',
        [created.webhook_id],
      );
      assert.deepEqual(stored.rows[0].headers, ['X-Token: s3cret', 'X-Team: green']);
      const unknown = await call('PATCH', url, keyA, { headers: ['X-New: ********'] });
      assert.equal(unknown.statusCode, 400);
      assert.equal(unknown.json().error.details.issues[0].field, 'headers/0');
    });

    test('a header value HTTP cannot carry (beyond Latin-1, e.g. an emoji) is refused on create and update', async () => {
      const emoji = await call('POST', '/v2/webhooks', keyA, {
        name: 'h-emoji',
        webhook_url: 'http://a.test',
        headers: ['X-Mood: \u{1F600}'],
      });
      assert.equal(emoji.statusCode, 400);
      assert.match(emoji.json().error.details.issues[0].message, /Latin-1/);
      const latin1 = await hook(keyA, { headers: ['X-City: Zürich café'] });
      const update = await call('PATCH', `/v2/webhooks/${latin1.webhook_id}`, keyA, {
        headers: ['X-City: 東京'],
      });
      assert.equal(update.statusCode, 400);
    });

    test('connectivity checks are limited per tenant (10 a minute, then 429 with Retry-After); keys per minute too', async () => {
      clock.advance(60_000); // a fresh window
      const created = await hook(keyB);
      const check = () => call('POST', `/v2/webhooks/${created.webhook_id}/check_connectivity`, keyB);
      for (let i = 0; i < CONNECTIVITY_CHECKS_PER_TENANT_PER_MINUTE; i++)
        assert.notEqual((await check()).statusCode, 429, `check ${i + 1}`);
      const refused = await check();
      assert.equal(refused.statusCode, 429);
      assert.equal(refused.json().error.code, 'rate_limited');
      assert.ok(Number(refused.headers['retry-after']) >= 1);
      const own = await hook(keyA);
      const otherTenant = await call('POST', `/v2/webhooks/${own.webhook_id}/check_connectivity`, keyA);
      assert.notEqual(otherTenant.statusCode, 429, 'another tenant has its own budget');
      clock.advance(60_000);
      assert.notEqual((await check()).statusCode, 429, 'a new window');
      // The key's own budget covers the other routes (a connectivity check counts against its tenant's budget).
      for (let i = 0; i < REQUESTS_PER_KEY_PER_MINUTE; i++) await call('GET', '/v2/webhooks', keyB);
      const overKey = await call('GET', '/v2/webhooks', keyB);
      assert.equal(overKey.statusCode, 429);
      assert.match(overKey.json().error.message, /requests per API key/);
      assert.equal((await call('GET', '/v2/webhooks', keyA)).statusCode, 200);
      clock.advance(60_000);
    });

    test('headers and urls are validated', async () => {
      for (const headers of [
        ['NoColon'],
        ['Bad Name: x'],
        ['X-Signature: forged'],
        ['x-delivery-id: dl_forged'],
        ['X-Replay-Of: dl_forged'],
        ['A: 1', 'a: 2'],
      ]) {
        const res = await call('POST', '/v2/webhooks', keyA, {
          name: 'h-x',
          webhook_url: 'http://a.test',
          headers,
        });
        assert.equal(res.statusCode, 400, JSON.stringify(headers));
      }
      for (const url of ['ftp://a.test/x', 'not a url', 'http://user:pw@a.test/']) {
        const res = await call('POST', '/v2/webhooks', keyA, { name: 'h-y', webhook_url: url });
        assert.equal(res.statusCode, 400, url);
      }
      // Every problem at once: the URL and every bad header, each with its pointer, on create, update and v1.
      const bad = {
        webhook_url: 'ftp://a.test/x',
        headers: ['NoColon', 'X-Fine: 1', 'X-Timestamp: 1', 'x-fine: 2', 'Bad Name: x'],
      };
      const expected = ['webhook_url', 'headers/0', 'headers/2', 'headers/3', 'headers/4'];
      const fields = (res: { json(): { error: { details: { issues: { field: string }[] } } } }) =>
        res.json().error.details.issues.map((i) => i.field);
      const created = await call('POST', '/v2/webhooks', keyA, { name: 'h-all', ...bad });
      assert.equal(created.statusCode, 400);
      assert.equal(created.json().error.code, 'validation_failed');
      assert.deepEqual(fields(created), expected);
      assert.equal(created.json().response_context.request_status, 'failure');
      const existing = await hook(keyA);
      const patched = await call('PATCH', `/v2/webhooks/${existing.webhook_id}`, keyA, bad);
      assert.equal(patched.statusCode, 400);
      assert.deepEqual(fields(patched), expected);
      assert.equal(
        (await call('GET', `/v2/webhooks/${existing.webhook_id}`, keyA)).json().webhook_url,
        existing.webhook_url,
      );
      const v1 = await call('POST', '/v1/webhooks', keyB, bad);
      assert.equal(v1.statusCode, 400);
      assert.deepEqual(fields(v1), expected);
      assert.equal((await call('GET', '/v1/webhooks', keyB)).json().webhook, null, 'nothing registered');
      const list = (await call('GET', '/v2/webhooks', keyA)).json().webhooks;
      assert.ok(
        list.every((w: { name: string }) => w.name !== 'h-all'),
        'nothing created',
      );
    });

    test('names are unique within the tenant (409) but not across tenants', async () => {
      const a = await call('POST', '/v2/webhooks', keyA, { name: 'same', webhook_url: 'http://a.test' });
      assert.equal(a.statusCode, 201);
      const again = await call('POST', '/v2/webhooks', keyA, { name: 'same', webhook_url: 'http://b.test' });
      assert.equal(again.statusCode, 409);
      assert.equal(again.json().error.code, 'webhook_name_taken');
      const other = await call('POST', '/v2/webhooks', keyB, { name: 'same', webhook_url: 'http://b.test' });
      assert.equal(other.statusCode, 201);
      const b = await call('POST', '/v2/webhooks', keyA, { name: 'other', webhook_url: 'http://a.test' });
      assert.equal(b.statusCode, 201);
      const renamed = await call('PATCH', `/v2/webhooks/${b.json().webhook_id}`, keyA, { name: 'same' });
      assert.equal(renamed.statusCode, 409, 'renaming onto a taken name is refused too');
      assert.equal(renamed.json().error.code, 'webhook_name_taken');
      assert.equal(renamed.json().response_context.request_status, 'failure');
      const kept = await call('PATCH', `/v2/webhooks/${b.json().webhook_id}`, keyA, { name: 'other' });
      assert.equal(kept.statusCode, 200, 'keeping its own name is not a clash');
      // deleting frees the name
      assert.equal((await call('DELETE', `/v2/webhooks/${a.json().webhook_id}`, keyA)).statusCode, 200);
      const reused = await call('PATCH', `/v2/webhooks/${b.json().webhook_id}`, keyA, { name: 'same' });
      assert.equal(reused.statusCode, 200, reused.body);
    });

    test('at most 10 webhooks per tenant: the 11th is 422; deleting one frees a slot', async () => {
      const fresh = (await ops('POST', '/_ops/tenants', { name: 'cap' })).json().api_key;
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) ids.push((await hook(fresh)).webhook_id);
      const eleventh = await call('POST', '/v2/webhooks', fresh, {
        name: 'eleven',
        webhook_url: 'http://a.test',
      });
      assert.equal(eleventh.statusCode, 422);
      assert.equal(eleventh.json().error.code, 'webhook_limit_reached');
      assert.equal((await call('DELETE', `/v2/webhooks/${ids[0]}`, fresh)).statusCode, 200);
      assert.equal(
        (await call('POST', '/v2/webhooks', fresh, { name: 'eleven', webhook_url: 'http://a.test' }))
          .statusCode,
        201,
      );
    });

    test("another tenant's webhook is 404 for every operation, deliveries and connectivity checks included (nothing sent)", async () => {
      const mine = await hook(keyA);
      const enrolled = await call('POST', '/v2/businesses/events/enrollments', keyA, {
        enrollment_key: 'xt',
        webhook_id: mine.webhook_id,
        event_types: ['new_product'],
        business_ids: ['xt-1'],
      });
      assert.equal(enrolled.statusCode, 201, enrolled.body);
      const stored = await ops('POST', '/_ops/events', {
        events: [
          {
            entity_type: 'business',
            entity_id: 'xt-1',
            event_name: 'new_product',
            event_time: '2026-05-01T00:00:00Z',
            data: { product_name: 'x' },
          },
        ],
      });
      assert.equal(stored.json().deliveries_created, 1, stored.body);
      const deliveryId = (await call('GET', `/v2/webhooks/${mine.webhook_id}/deliveries`, keyA)).json()
        .deliveries[0].delivery_id as string;
      assert.match(deliveryId, /^dl_/);
      const theirs = await hook(keyB);
      const sentBefore = outbound.sent.length;
      const w = `/v2/webhooks/${mine.webhook_id}`;
      for (const [m, u, body, code] of [
        ['GET', w, undefined, 'webhook_not_found'],
        ['PATCH', w, { name: 'stolen' }, 'webhook_not_found'],
        ['DELETE', w, undefined, 'webhook_not_found'],
        ['DELETE', `${w}?force=true`, undefined, 'webhook_not_found'],
        ['POST', `${w}/rotate_secret`, undefined, 'webhook_not_found'],
        ['POST', `${w}/check_connectivity`, undefined, 'webhook_not_found'],
        [
          'POST',
          `${w}/check_connectivity`,
          { simulation: { event_name: 'new_product', number_of_events: 2 } },
          'webhook_not_found',
        ],
        ['GET', `${w}/deliveries`, undefined, 'webhook_not_found'],
        ['GET', `${w}/deliveries/${deliveryId}`, undefined, 'webhook_not_found'],
        ['POST', `${w}/deliveries/${deliveryId}/replay`, undefined, 'webhook_not_found'],
        [
          'POST',
          `${w}/recover`,
          { since: new Date(clock.nowMs() - 3600_000).toISOString() },
          'webhook_not_found',
        ],
        [
          'GET',
          `/v2/webhooks/${theirs.webhook_id}/deliveries/${deliveryId}`,
          undefined,
          'delivery_not_found',
        ],
      ] as const) {
        const res = await call(m, u, keyB, body);
        assert.equal(res.statusCode, 404, `${m} ${u}`);
        assert.equal(res.json().error.code, code, `${m} ${u}`);
        assert.equal(res.json().response_context.request_status, 'failure');
      }
      assert.deepEqual(outbound.sent.slice(sentBefore), [], 'no outbound POST for another tenant');
      // The same calls with the owner's key succeed, and the connectivity check really goes out.
      assert.equal((await call('GET', w, keyA)).statusCode, 200);
      assert.equal((await call('GET', `${w}/deliveries/${deliveryId}`, keyA)).statusCode, 200);
      const own = await call('POST', `${w}/check_connectivity`, keyA);
      assert.equal(own.statusCode, 200, own.body);
      assert.deepEqual(outbound.sent.slice(sentBefore), [mine.webhook_url]);
    });

    test('update: status disabled keeps the destination; rotate gives a new secret', async () => {
      const h = await hook(keyA);
      const res = await call('PATCH', `/v2/webhooks/${h.webhook_id}`, keyA, { status: 'disabled' });
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().status, 'disabled');
      assert.equal(res.json().webhook_url, h.webhook_url);
      assert.equal(res.json().disabled_reason, 'caller');
      assert.equal(res.json().disabled_at, clock.now().toISOString());
      const enabled = await call('PATCH', `/v2/webhooks/${h.webhook_id}`, keyA, { status: 'active' });
      assert.deepEqual(
        [enabled.json().status, enabled.json().disabled_reason, enabled.json().disabled_at],
        ['active', null, null],
        're-enabling clears the reason and the time',
      );
      const rotated = await call('POST', `/v2/webhooks/${h.webhook_id}/rotate_secret`, keyA);
      assert.equal(rotated.statusCode, 200);
      assert.notEqual(rotated.json().webhook_secret, h.webhook_secret);
      assert.match(rotated.json().webhook_secret, /^[A-Za-z0-9_-]{43}=$/);
    });

    test('v1 registers one partner-level webhook listed read-only with legacy: true; re-registering overrides it', async () => {
      const first = await call('POST', '/v1/webhooks', keyA, { webhook_url: 'http://legacy.test/one' });
      assert.equal(first.statusCode, 201, first.body);
      assert.equal(first.json().legacy, true);
      const second = await call('POST', '/v1/webhooks', keyA, { webhook_url: 'http://legacy.test/two' });
      assert.equal(second.json().webhook_id, first.json().webhook_id);
      assert.notEqual(second.json().webhook_secret, first.json().webhook_secret);
      const list = (await call('GET', '/v2/webhooks', keyA)).json().webhooks;
      const legacy = list.filter((w: { legacy: boolean }) => w.legacy);
      assert.equal(legacy.length, 1);
      assert.equal(legacy[0].webhook_url, 'http://legacy.test/two');
      const sealed = async () =>
        (
          await platform.booted.database.pool.query(
            'select secret_sealed, deleted_at from entity_events.webhooks where id = $1',
            [legacy[0].webhook_id],
          )
        ).rows[0];
      const before = await sealed();
      const viewBefore = (await call('GET', '/v1/webhooks', keyA)).json().webhook;
      for (const [m, u, body] of [
        ['PATCH', `/v2/webhooks/${legacy[0].webhook_id}`, { name: 'x' }],
        ['PATCH', `/v2/webhooks/${legacy[0].webhook_id}`, { status: 'disabled' }],
        ['DELETE', `/v2/webhooks/${legacy[0].webhook_id}`, undefined],
        ['DELETE', `/v2/webhooks/${legacy[0].webhook_id}?force=true`, undefined],
        ['POST', `/v2/webhooks/${legacy[0].webhook_id}/rotate_secret`, undefined],
      ] as const) {
        const res = await call(m, u, keyA, body);
        assert.equal(res.statusCode, 422, `${m} ${u}`);
        assert.equal(res.json().error.code, 'legacy_webhook_read_only');
        assert.equal(res.json().response_context.request_status, 'failure');
      }
      assert.deepEqual(await sealed(), before, 'same secret, not deleted');
      assert.equal(before.deleted_at, null);
      assert.deepEqual((await call('GET', '/v1/webhooks', keyA)).json().webhook, viewBefore, 'unchanged');
      assert.ok(
        (await call('GET', '/v2/webhooks', keyA))
          .json()
          .webhooks.some((w: { webhook_id: string }) => w.webhook_id === legacy[0].webhook_id),
        'still listed',
      );
      // v2 creation never overrides it
      await hook(keyA);
      const after = (await call('GET', '/v1/webhooks', keyA)).json().webhook;
      assert.equal(after.webhook_url, 'http://legacy.test/two');
      // tenant B has its own partner: no legacy webhook visible
      const listB = (await call('GET', '/v2/webhooks', keyB)).json().webhooks;
      assert.ok(listB.every((w: { legacy: boolean }) => !w.legacy));
    });
  });

  describe('enrollments', () => {
    const ids = (n: number, p = 'b') => Array.from({ length: n }, (_, i) => `${p}${i}`);
    /** A new tenant of the demo partner (which has a legacy webhook), so each test stays under the webhook cap. */
    const freshKey = async () => {
      const partnerId = platform.credentials('entity-events').partnerId;
      const res = await ops('POST', '/_ops/tenants', { name: `T${++seq}`, partner_id: partnerId });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().api_key as string;
    };
    before(async () => {
      // A second tenant of the demo partner (the demo tenant used up its 10 webhooks above).
      const partnerId = platform.credentials('entity-events').partnerId;
      const res = await ops('POST', '/_ops/tenants', { name: 'Tenant A2', partner_id: partnerId });
      assert.equal(res.statusCode, 201, res.body);
      keyA = res.json().api_key;
    });

    test('201 with en_ id, key, webhook_id and status active', async () => {
      const h = await hook(keyA);
      const res = await call('POST', '/v2/businesses/events/enrollments', keyA, {
        enrollment_key: 'crm-sync',
        webhook_id: h.webhook_id,
        event_types: ['new_funding_round', 'ipo_announcement'],
        business_ids: ['acme', 'globex'],
      });
      assert.equal(res.statusCode, 201, res.body);
      const e = res.json();
      assert.match(e.enrollment_id, /^en_[0-9a-f]{32}$/);
      assert.equal(e.enrollment_key, 'crm-sync');
      assert.equal(e.webhook_id, h.webhook_id);
      assert.equal(e.status, 'active');
      assert.deepEqual(e.business_ids, ['acme', 'globex']);
      const list = (await call('GET', '/v2/businesses/events/enrollments', keyA)).json();
      assert.ok(list.enrollments.some((x: { enrollment_id: string }) => x.enrollment_id === e.enrollment_id));
      const listB = (await call('GET', '/v2/businesses/events/enrollments', keyB)).json();
      assert.ok(
        listB.enrollments.every((x: { enrollment_id: string }) => x.enrollment_id !== e.enrollment_id),
      );
      assert.equal(
        (await call('GET', `/v2/prospects/events/enrollments/${e.enrollment_id}`, keyA)).statusCode,
        404,
      );
    });

    test('webhook_id missing, of another tenant, disabled or legacy: 422; unknown: 404', async () => {
      const body = { enrollment_key: 'k', event_types: ['new_product'], business_ids: ['x'] };
      const missing = await call('POST', '/v2/businesses/events/enrollments', keyA, body);
      assert.equal(missing.statusCode, 422);
      const theirs = await hook(keyB);
      const foreign = await call('POST', '/v2/businesses/events/enrollments', keyA, {
        ...body,
        webhook_id: theirs.webhook_id,
      });
      assert.equal(foreign.statusCode, 422);
      const disabled = await hook(keyA, { name: 'disabled-one' });
      await call('PATCH', `/v2/webhooks/${disabled.webhook_id}`, keyA, { status: 'disabled' });
      const dis = await call('POST', '/v2/businesses/events/enrollments', keyA, {
        ...body,
        webhook_id: disabled.webhook_id,
      });
      assert.equal(dis.statusCode, 422);
      assert.equal(dis.json().error.code, 'webhook_not_active');
      const legacy = (await call('GET', '/v1/webhooks', keyA)).json().webhook;
      const leg = await call('POST', '/v2/businesses/events/enrollments', keyA, {
        ...body,
        webhook_id: legacy.webhook_id,
      });
      assert.equal(leg.statusCode, 422);
      const unknown = await call('POST', '/v2/businesses/events/enrollments', keyA, {
        ...body,
        webhook_id: 'wh_00000000000000000000000000000000',
      });
      assert.equal(unknown.statusCode, 404);
    });

    test('update follows the create rules: webhook_id unknown 404; foreign, disabled, legacy or null 422; ids capped', async () => {
      const keyA = await freshKey();
      const h = await hook(keyA);
      const created = await call('POST', '/v2/businesses/events/enrollments', keyA, {
        enrollment_key: 'upd',
        webhook_id: h.webhook_id,
        event_types: ['new_product'],
        business_ids: ['u1'],
      });
      assert.equal(created.statusCode, 201, created.body);
      const url = `/v2/businesses/events/enrollments/${created.json().enrollment_id}`;
      const theirs = await hook(keyB);
      const disabled = await hook(keyA);
      await call('PATCH', `/v2/webhooks/${disabled.webhook_id}`, keyA, { status: 'disabled' });
      const legacy = (await call('GET', '/v1/webhooks', keyA)).json().webhook;
      assert.ok(legacy, 'the partner registered a legacy webhook above');
      const cases: [unknown, number, string][] = [
        ['wh_00000000000000000000000000000000', 404, 'webhook_not_found'],
        [theirs.webhook_id, 422, 'webhook_out_of_scope'],
        [legacy.webhook_id, 422, 'webhook_out_of_scope'],
        [disabled.webhook_id, 422, 'webhook_not_active'],
        [null, 422, 'webhook_id_required'],
      ];
      for (const [webhookId, status, code] of cases) {
        const res = await call('PATCH', url, keyA, { webhook_id: webhookId, enrollment_key: 'changed' });
        assert.equal(res.statusCode, status, String(webhookId));
        assert.equal(res.json().error.code, code);
        assert.equal(res.json().response_context.request_status, 'failure');
      }
      const tooMany = await call('PATCH', url, keyA, { business_ids: ids(1001) });
      assert.equal(tooMany.statusCode, 400);
      assert.equal(tooMany.json().error.code, 'too_many_ids');
      const tooManyAdded = await call('PATCH', url, keyA, { add_business_ids: ids(1001) });
      assert.equal(tooManyAdded.json().error.code, 'too_many_ids');
      const unknownType = await call('PATCH', url, keyA, { event_types: ['prospect_changed_role'] });
      assert.equal(unknownType.json().error.code, 'unknown_event_type');
      const unchanged = (await call('GET', url, keyA)).json();
      assert.equal(unchanged.enrollment_key, 'upd', 'a refused update changes nothing');
      assert.equal(unchanged.webhook_id, h.webhook_id);
      assert.deepEqual(unchanged.business_ids, ['u1']);
      assert.equal(
        (await call('PATCH', url, keyB, { enrollment_key: 'stolen' })).statusCode,
        404,
        "another tenant's enrollment is not found",
      );
      assert.equal((await call('DELETE', url, keyB)).statusCode, 404);
    });

    test('a paused enrollment stays paused when re-pointed at a disabled webhook, and is refused', async () => {
      const keyA = await freshKey();
      const h = await hook(keyA);
      const e = await call('POST', '/v2/businesses/events/enrollments', keyA, {
        enrollment_key: 'p',
        webhook_id: h.webhook_id,
        event_types: ['new_product'],
        business_ids: ['p1'],
      });
      const url = `/v2/businesses/events/enrollments/${e.json().enrollment_id}`;
      await call('DELETE', `/v2/webhooks/${h.webhook_id}?force=true`, keyA);
      const disabled = await hook(keyA);
      await call('PATCH', `/v2/webhooks/${disabled.webhook_id}`, keyA, { status: 'disabled' });
      assert.equal((await call('PATCH', url, keyA, { webhook_id: disabled.webhook_id })).statusCode, 422);
      const other = await call('PATCH', url, keyA, { enrollment_key: 'p2' });
      assert.equal(other.json().status, 'paused', 'only re-pointing at an active webhook re-activates');
      assert.equal(
        (await call('PATCH', url, keyA, { webhook_id: h.webhook_id })).statusCode,
        404,
        'the deleted webhook is gone',
      );
    });

    test('a webhook deleted while enrollments are created never ends up with an active enrollment', async () => {
      const keyA = await freshKey();
      for (let i = 0; i < 12; i++) {
        const h = await hook(keyA);
        const [enrolled, deleted] = await Promise.all([
          call('POST', '/v2/businesses/events/enrollments', keyA, {
            enrollment_key: 'race',
            webhook_id: h.webhook_id,
            event_types: ['new_product'],
            business_ids: ['race'],
          }),
          call('DELETE', `/v2/webhooks/${h.webhook_id}`, keyA),
        ]);
        const outcome = `${enrolled.statusCode}/${deleted.statusCode}`;
        assert.ok(['201/409', '404/200'].includes(outcome), outcome);
        if (deleted.statusCode === 409) await call('DELETE', `/v2/webhooks/${h.webhook_id}?force=true`, keyA);
      }
    });

    test('event types are checked against the catalogue of the entity type', async () => {
      const h = await hook(keyA);
      const bad = await call('POST', '/v2/businesses/events/enrollments', keyA, {
        enrollment_key: 'k',
        webhook_id: h.webhook_id,
        event_types: ['prospect_changed_role'],
        business_ids: ['x'],
      });
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.json().error.code, 'unknown_event_type');
      assert.deepEqual(bad.json().error.details.issues, [
        {
          location: 'body',
          field: 'event_types/0',
          message: 'is not a business event type: prospect_changed_role',
          code: 'unknown_event_type',
        },
      ]);
      const good = await call('POST', '/v2/prospects/events/enrollments', keyA, {
        enrollment_key: 'k',
        webhook_id: h.webhook_id,
        event_types: ['prospect_changed_role', 'prospect_job_start_anniversary'],
        prospect_ids: ['p1'],
      });
      assert.equal(good.statusCode, 201, good.body);
      assert.deepEqual(good.json().prospect_ids, ['p1']);
      for (const t of [
        'hiring_in_legal_department',
        'decrease_in_customer_service_department',
        'increase_in_all_departments_department',
      ]) {
        const ok = await call('POST', '/v2/businesses/events/enrollments', keyA, {
          enrollment_key: 'k',
          webhook_id: h.webhook_id,
          event_types: [t],
          business_ids: ['x'],
        });
        assert.equal(ok.statusCode, 201, t);
      }
    });

    test('create and update report every bad id and every unknown event type at once; nothing is written', async () => {
      const keyA = await freshKey();
      const h = await hook(keyA);
      const res = await call('POST', '/v2/businesses/events/enrollments', keyA, {
        enrollment_key: 'all-issues',
        webhook_id: h.webhook_id,
        event_types: ['new_product', 'nope', 'prospect_changed_role'],
        business_ids: ['ok', 'bad id', 'ok-2', '', 'x'.repeat(129)],
      });
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().error.code, 'validation_failed', 'ids and event types: two kinds of problem');
      assert.deepEqual(
        res
          .json()
          .error.details.issues.map((i: { field: string; code?: string }) => [i.field, i.code ?? null]),
        [
          ['business_ids/1', null],
          ['business_ids/3', null],
          ['business_ids/4', null],
          ['event_types/1', 'unknown_event_type'],
          ['event_types/2', 'unknown_event_type'],
        ],
      );
      const tooManyAndBad = await call('POST', '/v2/businesses/events/enrollments', keyA, {
        enrollment_key: 'all-issues',
        webhook_id: h.webhook_id,
        event_types: ['nope'],
        business_ids: [...ids(1000), 'bad id'],
      });
      assert.equal(tooManyAndBad.json().error.code, 'validation_failed');
      assert.deepEqual(
        tooManyAndBad.json().error.details.issues.map((i: { field: string }) => i.field),
        ['business_ids', 'business_ids/1000', 'event_types/0'],
      );
      assert.equal(
        (await call('GET', '/v2/businesses/events/enrollments', keyA)).json().enrollments.length,
        0,
      );
      const created = await call('POST', '/v2/businesses/events/enrollments', keyA, {
        enrollment_key: 'k',
        webhook_id: h.webhook_id,
        event_types: ['new_product'],
        business_ids: ['a'],
      });
      const url = `/v2/businesses/events/enrollments/${created.json().enrollment_id}`;
      const patch = await call('PATCH', url, keyA, {
        business_ids: ['ok', 'bad id'],
        add_business_ids: ['bad/id'],
        remove_business_ids: ['fine', 'no way'],
        event_types: ['nope'],
      });
      assert.equal(patch.statusCode, 400);
      assert.deepEqual(
        patch.json().error.details.issues.map((i: { field: string }) => i.field),
        ['business_ids/1', 'add_business_ids/0', 'remove_business_ids/1', 'event_types/0'],
      );
      assert.deepEqual((await call('GET', url, keyA)).json().business_ids, ['a'], 'unchanged');
      const fetched = await call('POST', '/v2/businesses/events', keyA, {
        business_ids: ['fine', 'bad id'],
        event_types: ['nope'],
        from: 'yesterday',
        to: 'today',
      });
      assert.equal(fetched.statusCode, 400);
      assert.deepEqual(
        fetched.json().error.details.issues.map((i: { field: string }) => i.field),
        ['business_ids/1', 'event_types/0', 'from', 'to'],
      );
    });

    test('1,000 ids per request; 1,001 is 400; more can be added later (no cap on the total)', async () => {
      const h = await hook(keyA);
      const base = { enrollment_key: 'bulk', webhook_id: h.webhook_id, event_types: ['new_office'] };
      const tooMany = await call('POST', '/v2/businesses/events/enrollments', keyA, {
        ...base,
        business_ids: ids(1001),
      });
      assert.equal(tooMany.statusCode, 400);
      assert.equal(tooMany.json().error.code, 'too_many_ids');
      const created = await call('POST', '/v2/businesses/events/enrollments', keyA, {
        ...base,
        business_ids: ids(1000),
      });
      assert.equal(created.statusCode, 201);
      const id = created.json().enrollment_id;
      const more = await call('PATCH', `/v2/businesses/events/enrollments/${id}`, keyA, {
        add_business_ids: ids(1000, 'c'),
      });
      assert.equal(more.statusCode, 200, more.body);
      assert.equal(more.json().business_ids.length, 2000);
      const fewer = await call('PATCH', `/v2/businesses/events/enrollments/${id}`, keyA, {
        remove_business_ids: ['c0', 'c1'],
      });
      assert.equal(fewer.json().business_ids.length, 1998);
      const replaced = await call('PATCH', `/v2/businesses/events/enrollments/${id}`, keyA, {
        business_ids: ['only'],
        event_types: ['closing_office'],
        enrollment_key: 'k2',
      });
      assert.deepEqual(replaced.json().business_ids, ['only']);
      assert.deepEqual(replaced.json().event_types, ['closing_office']);
      assert.equal(replaced.json().enrollment_key, 'k2');
    });

    test('v1 enrollments have no webhook_id and cannot be given one', async () => {
      const v1 = await call('POST', '/v1/prospects/events/enrollments', keyA, {
        enrollment_key: 'old',
        event_types: ['prospect_changed_role'],
        prospect_ids: ['p-old'],
      });
      assert.equal(v1.statusCode, 201, v1.body);
      assert.equal(v1.json().webhook_id, null);
      assert.equal(v1.json().api_version, 'v1');
      const h = await hook(keyA);
      const patch = await call('PATCH', `/v2/prospects/events/enrollments/${v1.json().enrollment_id}`, keyA, {
        webhook_id: h.webhook_id,
      });
      assert.equal(patch.statusCode, 422);
      assert.equal(patch.json().error.code, 'v1_enrollment_has_no_webhook');
    });

    test('delete webhook: 409 with active enrollments; force pauses them (lists kept); re-pointing re-activates', async () => {
      const h = await hook(keyA);
      const mk = async () =>
        (
          await call('POST', '/v2/businesses/events/enrollments', keyA, {
            enrollment_key: 'x',
            webhook_id: h.webhook_id,
            event_types: ['new_product'],
            business_ids: ['e1', 'e2'],
          })
        ).json().enrollment_id as string;
      const e1 = await mk();
      const e2 = await mk();
      const refused = await call('DELETE', `/v2/webhooks/${h.webhook_id}`, keyA);
      assert.equal(refused.statusCode, 409);
      assert.equal(refused.json().error.code, 'webhook_in_use');
      assert.equal((await call('GET', `/v2/webhooks/${h.webhook_id}`, keyA)).statusCode, 200);
      const forced = await call('DELETE', `/v2/webhooks/${h.webhook_id}?force=true`, keyA);
      assert.equal(forced.statusCode, 200, forced.body);
      assert.deepEqual(forced.json().affected_enrollment_ids.sort(), [e1, e2].sort());
      assert.equal((await call('GET', `/v2/webhooks/${h.webhook_id}`, keyA)).statusCode, 404);
      const paused = (await call('GET', `/v2/businesses/events/enrollments/${e1}`, keyA)).json();
      assert.equal(paused.status, 'paused');
      assert.deepEqual(paused.business_ids, ['e1', 'e2']);
      const target = await hook(keyA);
      const repointed = await call('PATCH', `/v2/businesses/events/enrollments/${e1}`, keyA, {
        webhook_id: target.webhook_id,
      });
      assert.equal(repointed.statusCode, 200);
      assert.equal(repointed.json().status, 'active');
      assert.deepEqual(repointed.json().business_ids, ['e1', 'e2']);
      // a webhook with only paused enrollments can be deleted without force
      const h2 = await hook(keyA);
      await call('PATCH', `/v2/businesses/events/enrollments/${e2}`, keyA, { webhook_id: h2.webhook_id });
      await call('DELETE', `/v2/webhooks/${h2.webhook_id}?force=true`, keyA);
      const h3 = await hook(keyA);
      assert.equal((await call('DELETE', `/v2/webhooks/${h3.webhook_id}`, keyA)).statusCode, 200);
      assert.equal((await call('DELETE', `/v2/businesses/events/enrollments/${e2}`, keyA)).statusCode, 200);
      assert.equal((await call('GET', `/v2/businesses/events/enrollments/${e2}`, keyA)).statusCode, 404);
    });
  });

  describe('events: operator ingest and fetch-events', () => {
    const ev = (
      entity_id: string,
      event_name: string,
      event_time: string,
      data: Record<string, unknown> = {},
    ) => ({
      entity_type: 'business',
      entity_id,
      event_name,
      event_time,
      data,
    });
    const funding = {
      funding_stage: 'series_a',
      funding_date: '2026-05-01',
      amount: 5000000,
      investors: ['Accel'],
    };

    test('a batch is all-or-nothing: one bad item stores nothing and every problem is reported', async () => {
      const res = await ops('POST', '/_ops/events', {
        events: [
          ev('atomic-1', 'new_product', '2026-05-01T00:00:00Z', { product_name: 'p' }),
          ev('atomic-1', 'not_a_type', '2026-05-01T00:00:00Z'),
          ev('atomic-1', 'new_funding_round', '2026-05-01T00:00:00Z', { funding_stage: 'seed' }),
        ],
      });
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().error.code, 'validation_failed', 'an unknown type and bad data: two kinds');
      const fields = res.json().error.details.issues.map((i: { field: string }) => i.field);
      assert.deepEqual(fields, [
        'events/1/event_name',
        'events/2/data/funding_date',
        'events/2/data/amount',
        'events/2/data/investors',
      ]);
      const fetched = await call('POST', '/v2/businesses/events', keyA, { business_ids: ['atomic-1'] });
      assert.equal(fetched.json().events.length, 0);
    });

    test('data is type-checked per event type: a wrongly typed funding round is refused, every issue pointed at, nothing stored', async () => {
      const res = await ops('POST', '/_ops/events', {
        events: [
          ev('typed-1', 'new_product', '2026-05-01T00:00:00Z', { product_name: 'fine' }),
          ev('typed-1', 'new_funding_round', '2026-05-01T00:00:00Z', {
            funding_stage: 7,
            funding_date: '01/05/2026',
            amount: 2500000.5,
            investors: 'Accel, a16z',
            currency: 'EUR',
          }),
          ev('typed-1', 'new_funding_round', '2026-05-01T00:00:00Z', {
            ...funding,
            amount: -100,
            investors: ['Accel', 42],
          }),
          ev('typed-1', 'hiring_in_legal_department', '2026-05-01T00:00:00Z', {
            department: 'legal',
            open_positions: '12',
          }),
        ],
      });
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().error.code, 'validation_failed');
      assert.equal(res.json().response_context.request_status, 'failure');
      assert.deepEqual(
        res.json().error.details.issues.map((i: { field: string }) => i.field),
        [
          'events/1/data/funding_stage',
          'events/1/data/funding_date',
          'events/1/data/amount',
          'events/1/data/investors',
          'events/1/data/currency',
          'events/2/data/amount',
          'events/2/data/investors/1',
          'events/3/data/open_positions',
        ],
      );
      const amount = res
        .json()
        .error.details.issues.find((i: { field: string }) => i.field === 'events/2/data/amount');
      assert.match(amount.message, /non-negative integer \(whole US dollars\)/);
      const fetched = await call('POST', '/v2/businesses/events', keyA, { business_ids: ['typed-1'] });
      assert.equal(fetched.json().events.length, 0, 'nothing stored, not even the valid item');
      const ok = await ops('POST', '/_ops/events', {
        events: [ev('typed-1', 'new_funding_round', '2026-05-01T00:00:00Z', { ...funding, currency: 'USD' })],
      });
      assert.equal(ok.statusCode, 201, ok.body);
    });

    test('an event type outside the catalogue of its entity type is 400 unknown_event_type with its pointer', async () => {
      const res = await ops('POST', '/_ops/events', {
        events: [
          ev('unknown-1', 'new_product', '2026-05-01T00:00:00Z', { product_name: 'p' }),
          ev('unknown-1', 'no_such_event', '2026-05-01T00:00:00Z'),
          ev('unknown-1', 'prospect_changed_role', '2026-05-01T00:00:00Z', {
            previous_title: 'a',
            new_title: 'b',
          }),
        ],
      });
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().error.code, 'unknown_event_type');
      assert.deepEqual(
        res.json().error.details.issues.map((i: { field: string; code: string }) => [i.field, i.code]),
        [
          ['events/1/event_name', 'unknown_event_type'],
          ['events/2/event_name', 'unknown_event_type'],
        ],
      );
      const fetched = await call('POST', '/v2/businesses/events', keyA, { business_ids: ['unknown-1'] });
      assert.equal(fetched.json().events.length, 0);
    });

    test('events, deliveries and jobs commit together: a failing delivery insert stores no event of the batch (5xx, nothing leaked)', async () => {
      const pool = platform.booted.database.pool;
      const h = await hook(keyA);
      const enrolled = await call('POST', '/v2/businesses/events/enrollments', keyA, {
        enrollment_key: 'txn',
        webhook_id: h.webhook_id,
        event_types: ['new_product'],
        business_ids: ['txn-ok', 'txn-boom'],
      });
      assert.equal(enrolled.statusCode, 201, enrolled.body);
      const counts = async () =>
        (
          await pool.query(
            `select (select count(*)::int from entity_events.events where entity_id like 'txn-%') as events,
                    (select count(*)::int from entity_events.deliveries d join entity_events.events e
                       on e.id = d.event_id where e.entity_id like 'txn-%') as deliveries,
                    (select count(*)::int from graphile_worker._private_jobs) as jobs`,
          )
        ).rows[0];
      const before = await counts();
      await pool.query(`
        create function entity_events.test_fail_delivery() returns trigger language plpgsql as $$
        begin
          if exists (select 1 from entity_events.events e where e.id = new.event_id and e.entity_id = 'txn-boom') then
            raise exception 'test trigger: internal detail xyzzy';
          end if;
          return new;
        end $$;
        create trigger test_fail_delivery before insert on entity_events.deliveries
          for each row execute function entity_events.test_fail_delivery();`);
      try {
        const res = await ops('POST', '/_ops/events', {
          events: [
            ev('txn-ok', 'new_product', '2026-05-01T00:00:00Z', { product_name: 'a' }),
            ev('txn-boom', 'new_product', '2026-05-01T00:00:00Z', { product_name: 'b' }),
          ],
        });
        assert.equal(res.statusCode, 500);
        assert.equal(res.json().error.code, 'internal');
        assert.equal(res.json().response_context.request_status, 'failure');
        assert.equal(res.json().response_context.correlation_id, res.headers['x-request-id']);
        assert.doesNotMatch(
          res.body,
          /xyzzy|trigger|entity_events|deliveries|insert/i,
          'no internals echoed',
        );
        assert.deepEqual(await counts(), before, 'no event, delivery or job of the batch is stored');
      } finally {
        await pool.query(`drop trigger if exists test_fail_delivery on entity_events.deliveries;
          drop function if exists entity_events.test_fail_delivery();`);
      }
      const again = await ops('POST', '/_ops/events', {
        events: [
          ev('txn-ok', 'new_product', '2026-05-01T00:00:00Z', { product_name: 'a' }),
          ev('txn-boom', 'new_product', '2026-05-01T00:00:00Z', { product_name: 'b' }),
        ],
      });
      assert.equal(again.statusCode, 201, 'the same batch is stored once the fault is gone');
      assert.equal(again.json().deliveries_created, 2);
    });

    test('times must be RFC 3339 with an offset (no server-local guessing, no rolled-over dates)', async () => {
      for (const event_time of ['2026-05-01T10:00:00', '2026-05-01', '2026-02-30T10:00:00Z', 'May 1 2026']) {
        const res = await ops('POST', '/_ops/events', {
          events: [ev('tz-1', 'new_product', event_time, { product_name: 'p' })],
        });
        assert.equal(res.statusCode, 400, event_time);
        assert.equal(res.json().error.details.issues[0].field, 'events/0/event_time');
      }
      const ok = await ops('POST', '/_ops/events', {
        events: [ev('tz-1', 'new_product', '2026-05-01T12:00:00+02:00', { product_name: 'p' })],
      });
      assert.equal(ok.statusCode, 201, ok.body);
      assert.equal(ok.json().events[0].event_time, '2026-05-01T10:00:00.000Z');
      for (const from of ['2026-05-01T00:00:00', 'yesterday']) {
        const res = await call('POST', '/v2/businesses/events', keyA, { business_ids: ['tz-1'], from });
        assert.equal(res.statusCode, 400, from);
      }
      const ranged = await call('POST', '/v2/businesses/events', keyA, {
        business_ids: ['tz-1'],
        from: '2026-05-01T11:59:59+02:00',
        to: '2026-05-01T10:00:00Z',
      });
      assert.equal(ranged.json().events.length, 1, 'offsets are honoured; bounds are inclusive');
      const inverted = await call('POST', '/v2/businesses/events', keyA, {
        business_ids: ['tz-1'],
        from: '2026-05-02T00:00:00Z',
        to: '2026-05-01T00:00:00Z',
      });
      assert.equal(inverted.statusCode, 400);
    });

    test('a batch above 1,000 events is refused as a whole', async () => {
      const events = Array.from({ length: 1001 }, (_, i) =>
        ev(`big-${i}`, 'new_product', '2026-05-01T00:00:00Z', { product_name: 'p' }),
      );
      const res = await ops('POST', '/_ops/events', { events });
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().error.code, 'batch_too_large');
      const fetched = await call('POST', '/v2/businesses/events', keyA, { business_ids: ['big-0'] });
      assert.equal(fetched.json().events.length, 0);
    });

    test('fetch: up to 40 ids, filters by type and time, newest first, paged', async () => {
      const stored = await ops('POST', '/_ops/events', {
        events: [
          ev('f-1', 'new_funding_round', '2026-05-01T00:00:00Z', funding),
          ev('f-1', 'new_product', '2026-05-02T00:00:00Z', { product_name: 'x' }),
          ev('f-2', 'new_product', '2026-05-03T00:00:00Z', { product_name: 'y' }),
          ev('f-3', 'new_product', '2026-05-04T00:00:00Z', { product_name: 'z' }),
        ],
      });
      assert.equal(stored.statusCode, 201, stored.body);
      const all = (
        await call('POST', '/v2/businesses/events', keyB, { business_ids: ['f-1', 'f-2'] })
      ).json();
      assert.deepEqual(
        all.events.map((e: { event_time: string }) => e.event_time.slice(0, 10)),
        ['2026-05-03', '2026-05-02', '2026-05-01'],
      );
      assert.equal(all.events[2].business_id, 'f-1');
      assert.equal(all.events[2].data.funding_stage, 'series_a');
      const typed = (
        await call('POST', '/v2/businesses/events', keyA, {
          business_ids: ['f-1', 'f-2'],
          event_types: ['new_funding_round'],
        })
      ).json();
      assert.equal(typed.events.length, 1);
      const ranged = (
        await call('POST', '/v2/businesses/events', keyA, {
          business_ids: ['f-1', 'f-2', 'f-3'],
          from: '2026-05-02T00:00:00Z',
          to: '2026-05-03T00:00:00Z',
        })
      ).json();
      assert.equal(ranged.events.length, 2);
      const paged = (
        await call('POST', '/v2/businesses/events', keyA, {
          business_ids: ['f-1', 'f-2', 'f-3'],
          limit: 2,
          offset: 2,
        })
      ).json();
      assert.deepEqual(paged.page, { limit: 2, offset: 2, total: 4, has_more: false });
      assert.equal(paged.events.length, 2);
      const tooMany = await call('POST', '/v2/businesses/events', keyA, {
        business_ids: Array.from({ length: 41 }, (_, i) => `i${i}`),
      });
      assert.equal(tooMany.statusCode, 400);
      const forty = await call('POST', '/v2/businesses/events', keyA, {
        business_ids: Array.from({ length: 40 }, (_, i) => `i${i}`),
      });
      assert.equal(forty.statusCode, 200);
      const wrongType = await call('POST', '/v2/prospects/events', keyA, { prospect_ids: ['f-1'] });
      assert.equal(wrongType.json().events.length, 0, 'business events are not prospect events');
    });
  });
});
