/**
 * When a price change is recorded: at the time it happened (a source's `updated_at`, the simulator's price bucket),
 * not when the service wrote it; and the delta feed's 30-minute window counts from the write. Openers and closing
 * read those times, so they are right for data that arrives late (a recorded feed, a service started after a game).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bodyAs, type Json } from '../../../../test/support/json.ts';
import { eventIds } from '../game-model.ts';
import { LineHistoryResponse } from '../odds-schemas.ts';
import { scheduleFor } from '../schedules.ts';
import { eventStateAt, MARKETS_OPEN_HOURS, PRICE_BUCKET_MINUTES } from '../simulator.ts';
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

const START = '2026-11-22T18:00:00Z';
const lakersMl = (body: EventsBody, book = '19') =>
  body.events[0]!.markets.find((m) => m.market_id === 1)?.participants.find((p) => p.id === LAKERS)?.lines[0]
    ?.prices[book];
/** The Lakers moneyline event with every price of book 19 given `extra` fields (updated_at, closed...). */
const withBook19 = (event: ReturnType<typeof nbaEvent>, extra: Record<string, Json>) => {
  for (const m of event.markets)
    for (const p of m.participants)
      for (const l of p.lines) {
        const book19 = (l.prices as Record<string, object>)['19'];
        if (book19) Object.assign(book19, extra);
      }
  return event;
};
const historyOf = async (h: OddsHarness, eventId: string, book = 19) => {
  const current = eventsOf(await h.get(`/api/v2/events/${eventId}?market_ids=1`));
  const lineId = current.events[0]!.markets[0]!.participants.find((p) => p.id === LAKERS)!.lines[0]!.id;
  const res = await h.get(`/api/v2/lines/${lineId}/history?affiliate_ids=${book}`);
  assert.equal(res.statusCode, 200, res.body);
  return bodyAs(res, LineHistoryResponse).history;
};

describe('ingest: a price is recorded at its updated_at', () => {
  let h: OddsHarness;
  before(async () => {
    h = await startOdds(new Date('2026-11-22T14:00:00Z'));
  });
  after(async () => h?.close());

  test('openers carry the source time; a later time is clamped to the write, an earlier one to the previous change', async () => {
    const first = withBook19(nbaEvent('t1', START), { updated_at: '2026-11-22T12:30:00Z' });
    assert.equal((await h.ingest([first])).statusCode, 200);
    const openers = eventsOf(await h.get('/api/v2/events/t1/openers'));
    assert.equal(lakersMl(openers)!.updated_at, '2026-11-22T12:30:00.000Z', 'the source time, not 14:00');
    assert.equal(
      lakersMl(openers, '23')!.updated_at,
      '2026-11-22T14:00:00.000Z',
      'no updated_at: the write time',
    );

    h.clock.set(Date.parse('2026-11-22T15:00:00Z'));
    const future = withBook19(nbaEvent('t1', START, { mlAway: 160, mlHome: -180 }), {
      updated_at: '2026-11-22T16:00:00+00:00',
    });
    assert.equal((await h.ingest([future])).statusCode, 200);
    h.clock.set(Date.parse('2026-11-22T15:10:00Z'));
    const past = withBook19(nbaEvent('t1', START, { mlAway: 170, mlHome: -190 }), {
      updated_at: '2026-11-22T13:00:00+01:00', // 12:00 UTC: before the 15:00 change
    });
    assert.equal((await h.ingest([past])).statusCode, 200);
    assert.deepEqual(
      (await historyOf(h, 't1')).map((c) => [c.change_type, c.price, c.updated_at]),
      [
        ['opened', 150, '2026-11-22T12:30:00.000Z'],
        ['changed', 160, '2026-11-22T15:00:00.000Z'],
        ['changed', 170, '2026-11-22T15:00:00.000Z'],
      ],
    );
  });

  test('a price recorded before the start is the closing even when it arrives after the start', async () => {
    h.clock.set(Date.parse('2026-11-22T19:00:00Z'));
    const late = withBook19(
      nbaEvent('t2', START, { mlAway: 130, mlHome: -150, status: 'STATUS_IN_PROGRESS' }),
      {
        updated_at: '2026-11-22T17:45:00Z',
        closed: true,
        closed_at: '2026-11-22T18:00:00Z',
      },
    );
    assert.equal((await h.ingest([late])).statusCode, 200);
    const closing = eventsOf(await h.get('/api/v2/events/t2/closing'));
    assert.equal(closing.meta.provisional, false);
    assert.equal(lakersMl(closing)!.price, 130);
    assert.equal(lakersMl(closing)!.updated_at, '2026-11-22T17:45:00.000Z');
    assert.equal(lakersMl(closing, '23'), undefined, 'book 23 was first seen after the start: no closing');
    assert.deepEqual(
      (await historyOf(h, 't2')).map((c) => [c.change_type, c.updated_at]),
      [
        ['opened', '2026-11-22T17:45:00.000Z'],
        ['closed', '2026-11-22T18:00:00.000Z'],
      ],
    );
  });

  test('an open price that arrives closed with a new value: changed at its updated_at, then closed at its closed_at', async () => {
    h.clock.set(Date.parse('2026-11-22T16:00:00Z'));
    const open = withBook19(nbaEvent('t5', START), { updated_at: '2026-11-22T15:30:00Z' });
    assert.equal((await h.ingest([open])).statusCode, 200);
    h.clock.set(Date.parse('2026-11-22T18:30:00Z'));
    const closedLate = withBook19(
      nbaEvent('t5', START, { mlAway: 140, mlHome: -160, status: 'STATUS_IN_PROGRESS' }),
      { updated_at: '2026-11-22T17:50:00Z', closed: true, closed_at: '2026-11-22T17:59:00Z' },
    );
    assert.equal((await h.ingest([closedLate])).statusCode, 200);
    assert.deepEqual(
      (await historyOf(h, 't5')).map((c) => [c.change_type, c.price, c.updated_at]),
      [
        ['opened', 150, '2026-11-22T15:30:00.000Z'],
        ['changed', 140, '2026-11-22T17:50:00.000Z'],
        ['closed', 140, '2026-11-22T17:59:00.000Z'],
      ],
    );
    assert.equal(lakersMl(eventsOf(await h.get('/api/v2/events/t5/closing')))!.price, 140);
  });

  test('updated_at and closed_at must be RFC 3339 with an offset; nothing of the batch is stored', async () => {
    const bad = withBook19(nbaEvent('t3', START), { updated_at: '2026-11-22 12:00:00' });
    const res = await h.ingest([bad]);
    const body = assertError(res, 400, 'validation_error', /updated_at/);
    assert.match(body.message, /RFC 3339/);
    const badClose = withBook19(nbaEvent('t3', START), { closed: true, closed_at: 'yesterday' });
    assertError(await h.ingest([badClose]), 400, 'validation_error', /closed_at/);
    assertError(await h.get('/api/v2/events/t3'), 404, 'not_found');
  });

  test('the delta window counts from the write: a change recorded an hour ago but written now is served', async () => {
    h.clock.set(Date.parse('2026-11-22T20:00:00Z'));
    const cursor = eventsOf(await h.get('/api/v2/events/t1')).meta.delta_last_id;
    h.clock.set(Date.parse('2026-11-22T21:00:00Z'));
    const backfill = withBook19(nbaEvent('t1', START, { mlAway: 200, mlHome: -230 }), {
      updated_at: '2026-11-22T20:05:00Z',
    });
    assert.equal((await h.ingest([backfill])).statusCode, 200);
    const delta = deltaOf(await h.get(`/api/v2/markets/delta?last_id=${cursor}`));
    const moved = delta.deltas.find((d) => d.affiliate_id === 19 && d.participant_id === LAKERS)!;
    assert.equal(moved.price, 200);
    // 31 minutes after the write the same cursor is stale, whatever the change's own time.
    h.clock.set(Date.parse('2026-11-22T21:31:00Z'));
    assertError(await h.get(`/api/v2/markets/delta?last_id=${cursor}`), 400, 'stale_cursor');
  });

  test('a moneyline (no line value) is always the main line: main_line=true keeps it', async () => {
    const ev = nbaEvent('t4', START);
    for (const p of ev.markets[0]!.participants)
      for (const l of p.lines)
        for (const price of Object.values(l.prices) as { is_main_line?: boolean }[])
          price.is_main_line = false;
    assert.equal((await h.ingest([ev])).statusCode, 200);
    const main = eventsOf(await h.get('/api/v2/events/t4?market_ids=1&main_line=true'));
    assert.equal(lakersMl(main)!.is_main_line, true);
  });
});

describe('simulator: a game under way when the service first sees it', () => {
  const seed = 'recorded-times';
  const game = scheduleFor(seed, 4, '2026-11-23')[0]!;
  const start = game.start.getTime();
  const opensAt = start - MARKETS_OPEN_HOURS * 3_600_000;
  const bucketMs = PRICE_BUCKET_MINUTES * 60_000;
  const { eventId } = eventIds(seed, game);
  let h: OddsHarness;
  before(async () => {
    h = await startOdds(new Date(start + 37 * 60_000), {
      ODDS_SIMULATOR: 'on',
      ODDS_SIM_SEED: seed,
      ODDS_SIM_SPORTS: '4',
    });
    const tick = await h.ops('POST', '/_ops/simulator/tick');
    assert.equal(tick.statusCode, 200, tick.body);
  });
  after(async () => h?.close());

  const awayMl = (body: EventsBody, book = '19') =>
    body.events[0]!.markets.find((m) => m.market_id === 1)?.participants.find((p) => p.id === game.away.id)
      ?.lines[0]?.prices[book];
  const modelAwayMl = (at: number) =>
    eventStateAt(seed, game, new Date(at))
      .markets.find((m) => m.marketId === 1)!
      .participants.find((p) => p.id === game.away.id)!.lines[0]!.prices[19]!.price;

  test('openers are the opening prices at the opening time; closing is the model price just before the start', async () => {
    const openers = eventsOf(await h.get(`/api/v2/events/${eventId}/openers`));
    assert.equal(awayMl(openers)!.updated_at, new Date(opensAt).toISOString());
    assert.equal(awayMl(openers)!.price, modelAwayMl(opensAt));
    const closing = eventsOf(await h.get(`/api/v2/events/${eventId}/closing`));
    assert.equal(closing.meta.provisional, false);
    assert.equal(awayMl(closing)!.price, modelAwayMl(start - 1));
    const closedAt = Date.parse(awayMl(closing)!.updated_at);
    assert.ok(
      closedAt >= opensAt && closedAt < start,
      `recorded before the start (${awayMl(closing)!.updated_at})`,
    );
    assert.equal(closedAt % bucketMs, 0, 'at a price-bucket boundary, not at the tick');
  });

  test('a tick after a pause records the missed moves at their bucket times, never at the tick', async () => {
    const later = scheduleFor(seed, 4, '2026-11-24')[0]!;
    const laterId = eventIds(seed, later).eventId;
    h.clock.set(later.start.getTime() - 20 * 3_600_000 + 3 * 60_000); // markets open, off a bucket boundary
    await h.ops('POST', '/_ops/simulator/tick');
    h.clock.advance(3 * 3_600_000);
    await h.ops('POST', '/_ops/simulator/tick');
    const now = h.clock.nowMs();
    const current = eventsOf(await h.get(`/api/v2/events/${laterId}?market_ids=1`));
    const line = current.events[0]!.markets[0]!.participants[0]!.lines[0]!;
    const { history } = bodyAs(await h.get(`/api/v2/lines/${line.id}/history`), LineHistoryResponse);
    assert.ok(history.length >= 11, 'every book opened');
    for (const c of history) {
      const t = Date.parse(c.updated_at);
      assert.ok(t < now, 'never at the tick');
      assert.equal(t % bucketMs, 0, `${c.change_type} at ${c.updated_at} is on a bucket boundary`);
    }
    for (const [book, price] of Object.entries(line.prices)) {
      const model = eventStateAt(seed, later, new Date(now))
        .markets.find((m) => m.marketId === 1)!
        .participants.find((p) => p.id === current.events[0]!.markets[0]!.participants[0]!.id)!.lines[0]!
        .prices[Number(book)]!.price;
      assert.equal(price.price, model, `book ${book} has the model price after the replay`);
    }
  });
});
