/**
 * Bounds of the odds API: `offset` (-840..840 minutes), the delta feed's `limit` (default 1000, 1..5000), the plan's
 * requests per minute counted per key across every route and the WebSocket upgrade, and the derived `event_uuid`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Static } from '@sinclair/typebox';
import { sql } from 'drizzle-orm';
import WebSocket from 'ws';
import type { OpenApiDoc } from '../../../../test/support/json.ts';
import { baseUrlOf } from '../../../../test/support/platform.ts';
import { DELTA_DEFAULT_LIMIT, DELTA_MAX_LIMIT } from '../catalog.ts';
import { derivedEventUuid, EVENT_UUID_NAMESPACE } from '../event-uuid.ts';
import { dayWindow } from '../odds-query.ts';
import type { DeltaResponse } from '../odds-schemas.ts';
import {
  type Answer,
  assertError,
  deltaOf,
  type EventsBody,
  eventsOf,
  nbaEvent,
  type OddsHarness,
  startOdds,
} from './support.ts';

let h: OddsHarness;
let wsBase: string;
before(async () => {
  h = await startOdds(new Date('2026-11-22T12:00:00Z'), {}, { listen: true });
  wsBase = baseUrlOf(h.platform.app('odds')).replace('http', 'ws');
  const res = await h.ingest([
    // 14:00 UTC is midnight at UTC-14 (offset 840); 10:00 UTC the day before is midnight at UTC+14 (offset -840).
    nbaEvent('o-east', '2026-11-23T14:00:00Z'),
    nbaEvent('o-west', '2026-11-22T10:00:00Z'),
  ]);
  assert.equal(res.statusCode, 200, res.body);
});
after(async () => h?.close());

const ok = async (url: string, key?: string) => eventsOf(await h.get(url, key));
const delta = async (url: string) => deltaOf(await h.get(url));
const ids = (body: EventsBody): string[] => body.events.map((e) => e.event_id);

describe('offset: -840..840 minutes (UTC-14..UTC+14), integers only', () => {
  test('both bounds are accepted and move the day window exactly', async () => {
    // offset=840: the 23rd is [23T14:00Z, 24T14:00Z).
    assert.deepEqual(ids(await ok('/api/v2/sports/4/events/2026-11-23?offset=840')), ['o-east']);
    assert.deepEqual(ids(await ok('/api/v2/sports/4/events/2026-11-22?offset=840')), [], 'end is exclusive');
    // offset=-840: the 23rd is [22T10:00Z, 23T10:00Z).
    assert.deepEqual(ids(await ok('/api/v2/sports/4/events/2026-11-23?offset=-840')), ['o-west']);
    assert.deepEqual(ids(await ok('/api/v2/sports/4/events/2026-11-22?offset=-840')), [], 'end is exclusive');
    assert.equal((await ok('/api/v2/events/o-east?offset=840')).events.length, 1);
    assert.equal((await ok('/api/v2/events/o-east/openers?offset=-840')).events.length, 1);
  });

  test('+-841 and non-integers are 400 validation_error {error, message}, on every events route', async () => {
    const bad = ['841', '-841', '1000', '840.5', '1.5', '-0.5', 'abc', '', '%2B841'];
    for (const path of [
      '/api/v2/sports/4/events/2026-11-23',
      '/api/v2/events/o-east',
      '/api/v2/events/o-east/openers',
      '/api/v2/events/o-east/closing',
    ])
      for (const value of bad)
        assertError(await h.get(`${path}?offset=${value}`), 400, 'validation_error', /offset/);
  });

  test('the OpenAPI document states the range', async () => {
    const doc = (
      await h.platform.app('odds').inject({ method: 'GET', url: '/openapi.json' })
    ).json() as OpenApiDoc;
    const param = doc.paths['/api/v2/sports/{sportID}/events/{date}']!.get!.parameters!.find(
      (p) => p.name === 'offset' && p.in === 'query',
    )!;
    assert.equal(param.schema.type, 'integer');
    assert.deepEqual([param.schema.minimum, param.schema.maximum], [-840, 840]);
  });
});

describe('delta feed limit: default 1000, 1..5000', () => {
  let cursor: number;
  let total: Static<typeof DeltaResponse>['deltas'];
  before(async () => {
    cursor = (await ok('/api/v2/sports/4/events/2026-11-28')).meta.delta_last_id!;
    // 14 prices per event: 370 events make more than 5000 change rows.
    const events = Array.from({ length: 370 }, (_, i) => nbaEvent(`dl-${i}`, '2026-11-28T00:30:00Z'));
    const res = await h.ingest(events);
    assert.equal(res.statusCode, 200, res.body);
    total = [];
    let last = cursor;
    for (;;) {
      const page = await delta(`/api/v2/markets/delta?last_id=${last}&limit=${DELTA_MAX_LIMIT}`);
      total.push(...page.deltas);
      last = page.meta.delta_last_id;
      if (!page.meta.has_more) break;
    }
    assert.ok(total.length > DELTA_MAX_LIMIT, `${total.length} changes`);
  });

  test('without limit: the first 1000 changes, has_more, the cursor is the last returned id', async () => {
    const page = await delta(`/api/v2/markets/delta?last_id=${cursor}`);
    assert.equal(page.meta.count, 1000);
    assert.equal(page.deltas.length, 1000);
    assert.equal(page.meta.has_more, true);
    assert.equal(page.meta.delta_last_id, page.deltas[999]!.id);
    assert.deepEqual(
      page.deltas.map((d) => d.id),
      total.slice(0, 1000).map((d) => d.id),
    );
  });

  test('limit=5000 (the max) returns 5000; limit=1 returns 1', async () => {
    const max = await delta(`/api/v2/markets/delta?last_id=${cursor}&limit=5000`);
    assert.equal(max.meta.count, 5000);
    assert.equal(max.meta.has_more, true);
    assert.equal(max.meta.delta_last_id, total[4999]!.id);
    const one = await delta(`/api/v2/markets/delta?last_id=${cursor}&limit=1`);
    assert.deepEqual([one.meta.count, one.meta.has_more, one.meta.delta_last_id], [1, true, total[0]!.id]);
  });

  test('limit 0, negative, above 5000 or not an integer: 400 validation_error {error, message}', async () => {
    for (const value of ['0', '-1', '-1000', '5001', '100000', '1.5', 'abc', ''])
      assertError(
        await h.get(`/api/v2/markets/delta?last_id=${cursor}&limit=${value}`),
        400,
        'validation_error',
        /limit/,
      );
  });

  test('the OpenAPI document states the range and the default', async () => {
    const doc = (
      await h.platform.app('odds').inject({ method: 'GET', url: '/openapi.json' })
    ).json() as OpenApiDoc;
    const param = doc.paths['/api/v2/markets/delta']!.get!.parameters!.find((p) => p.name === 'limit')!;
    assert.deepEqual(
      [param.schema.minimum, param.schema.maximum, param.schema.default],
      [1, DELTA_MAX_LIMIT, DELTA_DEFAULT_LIMIT],
    );
  });
});

/** Opens a WebSocket on the stream; resolves with the socket when open or with the refusal (status, headers, body). */
function upgrade(
  key: string,
  via: 'header' | 'query' = 'header',
): Promise<{ ws: WebSocket } | { status: number; headers: Record<string, unknown>; body: string }> {
  const url = `${wsBase}/api/v2/stream?event_id=o-east${via === 'query' ? `&key=${key}` : ''}`;
  const ws = new WebSocket(url, via === 'header' ? { headers: { 'x-odds-key': key } } : {});
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws }));
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
  });
}

const openSockets = () => h.platform.app('odds').websocketServer.clients.size;

function assertLimited(res: Answer) {
  assertError(res, 429, 'rate_limited');
  const retry = Number(res.headers['retry-after']);
  assert.ok(
    Number.isInteger(retry) && retry >= 1 && retry <= 60,
    `Retry-After ${res.headers['retry-after']}`,
  );
}

describe("requests per minute: one budget per key across every route (the key's plan)", () => {
  test('a mix of routes exhausts it together: 429 with Retry-After on every route', async () => {
    const event = await ok('/api/v2/events/o-east');
    const lineId = event.events[0]!.markets[0]!.participants[0]!.lines[0]!.id;
    const cursor = event.meta.delta_last_id;
    const routes = [
      '/api/v2/sports/4/events/2026-11-23',
      '/api/v2/events/o-east',
      '/api/v2/events/o-east/openers',
      '/api/v2/events/o-east/closing',
      `/api/v2/lines/${lineId}/history`,
      `/api/v2/markets/delta?last_id=${cursor}`,
      '/api/v2/teams/402',
    ];
    const key = await h.issueKey('free', routes.length);
    for (const url of routes) assert.equal((await h.get(url, key.key)).statusCode, 200, url);
    // None of these routes was asked twice: a per-route budget would still answer.
    assertLimited(await h.get('/api/v2/sports', key.key));
    assertLimited(await h.get('/api/v2/teams/402/players', key.key));
    for (const url of routes) assertLimited(await h.get(url, key.key));
    // Another key of the same plan has its own budget; answers refused by validation or not found count too.
    const other = await h.issueKey('free', 2);
    assertError(await h.get('/api/v2/markets/delta?last_id=x', other.key), 400, 'validation_error');
    assertError(await h.get('/api/v2/events/nope', other.key), 404, 'not_found');
    assertLimited(await h.get('/api/v2/sports', other.key));
    // Past the limit the 429 comes first (the limit runs before validation).
    assertLimited(await h.get('/api/v2/markets/delta?last_id=x', other.key));
  });

  test('the WebSocket upgrade counts; past the limit it is a 429 before the upgrade (no socket)', async () => {
    const key = await h.issueKey('free', 3);
    assert.equal((await h.get('/api/v2/teams/402', key.key)).statusCode, 200);
    const first = await upgrade(key.key);
    assert.ok('ws' in first, 'the second request of the minute upgrades');
    assert.equal(openSockets(), 1);
    assert.equal((await h.get('/api/v2/sports', key.key)).statusCode, 200);
    // Three requests so far (GET, upgrade, GET): the upgrade was counted.
    assertLimited(await h.get('/api/v2/markets', key.key));
    const refused = await upgrade(key.key);
    assert.ok('status' in refused, 'no WebSocket past the limit');
    assert.equal(refused.status, 429);
    const retry = Number(refused.headers['retry-after']);
    assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 60, `Retry-After ${retry}`);
    const body = JSON.parse(refused.body);
    assert.deepEqual(Object.keys(body).sort(), ['error', 'message']);
    assert.equal(body.error, 'rate_limited');
    assert.equal(openSockets(), 1, 'the refused upgrade opened no socket');
    // The key given as ?key= (browsers) is the same budget.
    const byQuery = await upgrade(key.key, 'query');
    assert.ok('status' in byQuery && byQuery.status === 429);
    // The next window opens again, for upgrades too.
    h.clock.advance(60_000);
    const again = await upgrade(key.key, 'query');
    assert.ok('ws' in again, 'the next window upgrades');
    for (const s of [first, again]) if ('ws' in s) s.ws.close();
  });
});

describe('event_uuid: a compatibility UUID v5 derived from event_id when the source gives none', () => {
  const V5 = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  test('the namespace never changes (it would change every derived event_uuid)', () => {
    assert.equal(EVENT_UUID_NAMESPACE, '1a4f43e0-0a65-4152-bcc4-c059e5ae22a6');
  });

  test('served event_uuid: v5 of event_id, fixed across instances, distinct per event, not event_id', async () => {
    const res = await h.ingest([
      nbaEvent('u1', '2026-11-24T00:30:00Z'),
      nbaEvent('u2', '2026-11-24T01:00:00Z'),
    ]);
    assert.equal(res.statusCode, 200, res.body);
    const u1 = (await ok('/api/v2/events/u1')).events[0]!.event_uuid;
    const u2 = (await ok('/api/v2/events/u2')).events[0]!.event_uuid;
    // Pinned values: any instance, after any restart, serves these for these ids.
    assert.equal(u1, 'a3a369fc-01a7-584f-918b-c72fd2fa2cd5');
    assert.equal(u2, 'cb8fdbbf-1bad-583b-9010-2668f2d86055');
    assert.equal(u1, derivedEventUuid('u1'));
    assert.match(u1, V5);
    assert.match(u2, V5);
    assert.notEqual(u1, u2);
    assert.notEqual(u1, 'u1');
    const day = await ok('/api/v2/sports/4/events/2026-11-24');
    assert.deepEqual(
      day.events.map((e) => [e.event_id, e.event_uuid]),
      [
        ['u1', u1],
        ['u2', u2],
      ],
    );
    // A later ingest of the same event (new prices) keeps it.
    h.clock.advance(1000);
    await h.ingest([nbaEvent('u1', '2026-11-24T00:30:00Z', { mlAway: 160, mlHome: -180 })]);
    assert.equal((await ok('/api/v2/events/u1')).events[0]!.event_uuid, u1);
  });

  test("a source's own event_uuid is served as given and kept by later ingests without one", async () => {
    const given = '0f3c6b0e-6a3e-4c47-9d7e-2b1f0a7c9e11';
    await h.ingest([{ ...nbaEvent('u3', '2026-11-24T02:00:00Z'), event_uuid: given }]);
    assert.equal((await ok('/api/v2/events/u3')).events[0]!.event_uuid, given);
    h.clock.advance(1000);
    await h.ingest([nbaEvent('u3', '2026-11-24T02:00:00Z', { mlAway: 160, mlHome: -180 })]);
    assert.equal((await ok('/api/v2/events/u3')).events[0]!.event_uuid, given);
  });

  test('a stored copy of event_id (the fallback of earlier versions) is replaced by the derived UUID', async () => {
    await h.platform.booted.database.db.execute(
      sql`update odds.events set event_uuid = event_id where event_id = 'u2'`,
    );
    h.clock.advance(1000);
    await h.ingest([nbaEvent('u2', '2026-11-24T01:00:00Z', { mlAway: 170, mlHome: -190 })]);
    assert.equal((await ok('/api/v2/events/u2')).events[0]!.event_uuid, derivedEventUuid('u2'));
  });
});

describe('day windows (dayWindow)', () => {
  test('years 0000-0099 are those years (Date.UTC would read 0050 as 1950); the offset moves the boundary', () => {
    const { start, end } = dayWindow('0050-03-01', 300);
    assert.equal(start.toISOString(), '0050-03-01T05:00:00.000Z');
    assert.equal(end.toISOString(), '0050-03-02T05:00:00.000Z');
    assert.equal(dayWindow('2026-11-23', 0).start.toISOString(), '2026-11-23T00:00:00.000Z');
    for (const bad of ['0050-02-29', '2026-02-30', '2026-1-01'])
      assert.throws(() => dayWindow(bad, 0), /calendar date/, bad);
  });
});
