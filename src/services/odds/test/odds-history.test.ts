import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bodyAs } from '../../../../test/support/json.ts';
import { LineHistoryResponse } from '../odds-schemas.ts';
import {
  assertError,
  deltaOf,
  type EventsBody,
  eventsOf,
  LAKERS,
  nbaEvent,
  type OddsHarness,
  startOdds,
} from './support.ts';

const T0 = Date.parse('2026-11-22T12:00:00Z');
const START = '2026-11-22T18:00:00Z';
const lakersMl = (body: EventsBody, book = '19') =>
  body.events[0]!.markets.find((m) => m.market_id === 1)?.participants.find((p) => p.id === LAKERS)?.lines[0]
    ?.prices[book];

describe('openers, closing, market history and the delta feed on a recorded price history', () => {
  let h: OddsHarness;
  before(async () => {
    h = await startOdds(new Date(T0));
    // 12:00 opens at +150; 14:00 moves to +160; 17:30 moves to +170; 18:00 start; 19:00 in-play +240.
    assert.equal((await h.ingest([nbaEvent('g1', START)])).statusCode, 200);
  });
  after(async () => h?.close());

  test('closing before the start is provisional (latest so far); openers are the first price', async () => {
    h.clock.set(T0 + 2 * 3_600_000);
    await h.ingest([nbaEvent('g1', START, { mlAway: 160, mlHome: -180 })]);
    const closing = eventsOf(await h.get('/api/v2/events/g1/closing'));
    assert.equal(closing.meta.provisional, true);
    assert.equal(lakersMl(closing)!.price, 160);
    const openers = eventsOf(await h.get('/api/v2/events/g1/openers'));
    assert.equal(lakersMl(openers)!.price, 150);
    assert.equal(lakersMl(openers)!.updated_at, '2026-11-22T12:00:00.000Z');
  });

  test('closing is the latest price at or before the start, not an in-play move', async () => {
    h.clock.set(Date.parse('2026-11-22T17:30:00Z'));
    await h.ingest([nbaEvent('g1', START, { mlAway: 170, mlHome: -190 })]);
    h.clock.set(Date.parse('2026-11-22T19:00:00Z'));
    await h.ingest([nbaEvent('g1', START, { mlAway: 240, mlHome: -280, status: 'STATUS_IN_PROGRESS' })]);
    const closing = eventsOf(await h.get('/api/v2/events/g1/closing'));
    assert.equal(closing.meta.provisional, false);
    assert.equal(lakersMl(closing)!.price, 170);
    assert.equal(lakersMl(closing)!.updated_at, '2026-11-22T17:30:00.000Z');
    assert.equal(lakersMl(eventsOf(await h.get('/api/v2/events/g1/openers')))!.price, 150);
    assert.equal(lakersMl(eventsOf(await h.get('/api/v2/events/g1')))!.price, 240, 'current price');
  });

  test('hide_closed leaves out lines that are currently closed', async () => {
    const ev = nbaEvent('g1', START, { mlAway: 240, mlHome: -280, status: 'STATUS_IN_PROGRESS' });
    (ev.markets[0]!.participants[0]!.lines[0]!.prices as Record<string, { closed?: boolean }>)['19']!.closed =
      true;
    await h.ingest([ev]);
    const current = eventsOf(await h.get('/api/v2/events/g1?market_ids=1'));
    assert.ok(lakersMl(current)!.closed_at, 'the current answer marks it closed');
    assert.equal(lakersMl(eventsOf(await h.get('/api/v2/events/g1/openers')))!.price, 150);
    assert.equal(lakersMl(eventsOf(await h.get('/api/v2/events/g1/openers?hide_closed=true'))), undefined);
    assert.ok(lakersMl(eventsOf(await h.get('/api/v2/events/g1/openers?hide_closed=true')), '23'));
    assert.equal(lakersMl(eventsOf(await h.get('/api/v2/events/g1/closing')))!.price, 170);
  });

  test('market history lists every change of a line, oldest first', async () => {
    const current = eventsOf(await h.get('/api/v2/events/g1?market_ids=1'));
    const lineId = current.events[0]!.markets[0]!.participants.find((p) => p.id === LAKERS)!.lines[0]!.id;
    const res = await h.get(`/api/v2/lines/${lineId}/history?affiliate_ids=19`);
    assert.equal(res.statusCode, 200, res.body);
    const { history } = bodyAs(res, LineHistoryResponse);
    assert.deepEqual(
      history.map((c) => [c.change_type, c.price, c.previous_price]),
      [
        ['opened', 150, null],
        ['changed', 160, 150],
        ['changed', 170, 160],
        ['changed', 240, 170],
        ['closed', 240, 240],
      ],
    );
    assertError(await h.get('/api/v2/lines/999999/history'), 404, 'not_found');
  });

  test('delta feed: continue from meta.delta_last_id; filters; limit and has_more', async () => {
    const snap = eventsOf(await h.get('/api/v2/events/g1'));
    const cursor = snap.meta.delta_last_id!;
    const empty = deltaOf(await h.get(`/api/v2/markets/delta?last_id=${cursor}`));
    assert.deepEqual(empty, { meta: { delta_last_id: cursor, count: 0, has_more: false }, deltas: [] });
    h.clock.advance(60_000);
    await h.ingest([nbaEvent('g1', START, { mlAway: 250, mlHome: -300, status: 'STATUS_HALFTIME' })]);
    const all = deltaOf(await h.get(`/api/v2/markets/delta?last_id=${cursor}`));
    assert.ok(all.deltas.length >= 3);
    assert.ok(all.deltas.every((d) => d.id > cursor));
    assert.ok(all.deltas.some((d) => d.kind === 'event' && d.event_status === 'STATUS_HALFTIME'));
    const reopened = all.deltas.find(
      (d) => d.affiliate_id === 19 && d.participant_id === LAKERS && d.market_id === 1,
    )!;
    assert.equal(reopened.change_type, 'reopened');
    assert.equal(reopened.previous_price, 240);
    assert.equal(reopened.price, 250);
    const dk = deltaOf(await h.get(`/api/v2/markets/delta?last_id=${cursor}&affiliate_ids=23&market_ids=1`));
    assert.ok(dk.deltas.every((d) => d.kind === 'event' || (d.affiliate_id === 23 && d.market_id === 1)));
    const page = deltaOf(await h.get(`/api/v2/markets/delta?last_id=${cursor}&limit=1`));
    assert.equal(page.meta.has_more, true);
    assert.equal(page.meta.delta_last_id, page.deltas[0]!.id);
    assert.equal(all.meta.delta_last_id, all.deltas.at(-1)!.id);
    assertError(await h.get(`/api/v2/markets/delta?last_id=${cursor}&limit=5001`), 400, 'validation_error');
  });

  test('an unknown cursor and a cursor older than 30 minutes are 400s asking to re-bootstrap', async () => {
    const snap = eventsOf(await h.get('/api/v2/events/g1'));
    assertError(
      await h.get(`/api/v2/markets/delta?last_id=${snap.meta.delta_last_id! + 1000}`),
      400,
      'unknown_cursor',
      /re-bootstrap/,
    );
    const cursor = snap.meta.delta_last_id;
    await h.ingest([nbaEvent('g1', START, { mlAway: 260, mlHome: -320, status: 'STATUS_HALFTIME' })]);
    h.clock.advance(29 * 60_000);
    assert.equal((await h.get(`/api/v2/markets/delta?last_id=${cursor}`)).statusCode, 200);
    h.clock.advance(2 * 60_000);
    assertError(await h.get(`/api/v2/markets/delta?last_id=${cursor}`), 400, 'stale_cursor', /re-bootstrap/);
    const fresh = eventsOf(await h.get('/api/v2/events/g1')).meta.delta_last_id;
    assert.equal((await h.get(`/api/v2/markets/delta?last_id=${fresh}`)).statusCode, 200);
  });
});

describe('plans: lookback and requests per minute', () => {
  let h: OddsHarness;
  before(async () => {
    h = await startOdds(new Date('2026-11-22T12:00:00Z'));
    await h.ingest([nbaEvent('old', '2026-11-10T00:30:00Z'), nbaEvent('recent', '2026-11-20T00:30:00Z')]);
  });
  after(async () => h?.close());

  test('a free key (7 days) cannot read older days or events; a pro key can', async () => {
    const free = await h.issueKey('free');
    assertError(await h.get('/api/v2/sports/4/events/2026-11-10', free.key), 403, 'plan_lookback', /7 days/);
    assertError(await h.get('/api/v2/events/old', free.key), 403, 'plan_lookback');
    assertError(await h.get('/api/v2/events/old/closing', free.key), 403, 'plan_lookback');
    assert.equal((await h.get('/api/v2/sports/4/events/2026-11-20', free.key)).statusCode, 200);
    assert.equal(
      (await h.get('/api/v2/sports/4/events/2026-11-15', free.key)).statusCode,
      200,
      'exactly 7 days back',
    );
    assertError(await h.get('/api/v2/sports/4/events/2026-11-14', free.key), 403, 'plan_lookback');
    assert.equal((await h.get('/api/v2/sports/4/events/2026-11-10', h.key)).statusCode, 200);
    assert.equal((await h.get('/api/v2/events/old', h.key)).statusCode, 200);
    // Moving time moves the window: `recent` leaves the free plan's reach after 7 more days.
    h.clock.advance(8 * 86_400_000);
    assertError(await h.get('/api/v2/events/recent', free.key), 403, 'plan_lookback');
  });

  test("past the plan's requests per minute: 429 with Retry-After; the next window is open again", async () => {
    const key = await h.issueKey('free', 3);
    for (let i = 0; i < 3; i += 1) assert.equal((await h.get('/api/v2/sports', key.key)).statusCode, 200);
    const limited = await h.get('/api/v2/sports', key.key);
    assertError(limited, 429, 'rate_limited', /3 requests per minute/);
    assert.equal(limited.headers['retry-after'], '60');
    h.clock.advance(30_000);
    assert.equal((await h.get('/api/v2/sports', key.key)).headers['retry-after'], '30');
    h.clock.advance(30_000);
    assert.equal((await h.get('/api/v2/sports', key.key)).statusCode, 200);
    const other = await h.issueKey('free', 3);
    assert.equal((await h.get('/api/v2/sports', other.key)).statusCode, 200, 'limits are per key');
  });

  test('the free plan allows 60 requests per minute by default', async () => {
    const key = await h.issueKey('free');
    for (let i = 0; i < 60; i += 1) assert.equal((await h.get('/api/v2/markets', key.key)).statusCode, 200);
    assertError(await h.get('/api/v2/markets', key.key), 429, 'rate_limited', /60 requests/);
  });
});
