/**
 * Rules of the issue not covered elsewhere: boundaries of the shared parameters, filters applied before
 * `hide_no_markets`, snapshots with the scores-only sentinel and `main_line`, the event-start cutoff of period markets,
 * delta filters and limits, the plan's lookback on history and openers, and the ingest's baseball and join rules.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Json } from '../../../../test/support/json.ts';
import {
  assertError,
  CELTICS,
  deltaOf,
  type EventsBody,
  eventsOf,
  LAKERS,
  type MarketBody,
  nbaEvent,
  type OddsHarness,
  startOdds,
  TATUM,
} from './support.ts';

const T0 = Date.parse('2026-11-22T12:00:00Z');
const START = '2026-11-22T18:00:00Z';

let h: OddsHarness;
before(async () => {
  h = await startOdds(new Date(T0));
  const res = await h.ingest([withFirstHalf(nbaEvent('r1', START), -110)]);
  assert.equal(res.statusCode, 200, res.body);
});
after(async () => h?.close());

/** Adds a first-half spread (period 1) to an event, Lakers +2.5 at `price` (DraftKings). */
function withFirstHalf(event: ReturnType<typeof nbaEvent>, price: number) {
  const half = {
    market_id: 2,
    period_id: 1,
    participants: [
      {
        id: LAKERS,
        type: 'TYPE_TEAM',
        name: 'Los Angeles',
        lines: [{ value: '+2.5', prices: { '19': { price, is_main_line: true } } }],
      },
      {
        id: CELTICS,
        type: 'TYPE_TEAM',
        name: 'Boston',
        lines: [{ value: '-2.5', prices: { '19': { price: -110, is_main_line: true } } }],
      },
    ],
  };
  return { ...event, markets: [...event.markets, half] };
}

const ok = async (url: string, key?: string) => eventsOf(await h.get(url, key));
const market = (body: EventsBody, marketId: number, periodId = 0) =>
  body.events[0]!.markets.find((m) => m.market_id === marketId && m.period_id === periodId);
const lakersPrice = (m: MarketBody | undefined, value: string, book = '19') =>
  m?.participants.find((p) => p.id === LAKERS)?.lines.find((l) => l.value === value)?.prices[book];

describe('shared parameters: boundaries and order of filters', () => {
  test('participant_ids accepts exactly 99 ids (100 is a 400); market_ids counts distinct ids', async () => {
    const ids = Array.from({ length: 98 }, (_, i) => 100_000 + i).concat([LAKERS]);
    const body = await ok(`/api/v2/sports/4/events/2026-11-22?participant_ids=${ids.join(',')}`);
    assert.deepEqual(
      body.events[0]!.markets.flatMap((m) => m.participants.map((p) => p.id)),
      [LAKERS, LAKERS, LAKERS],
    );
    assertError(
      await h.get(`/api/v2/sports/4/events/2026-11-22?participant_ids=${[...ids, 7].join(',')}`),
      400,
      'validation_error',
      /at most 99/,
    );
    const repeated = Array.from({ length: 13 }, () => 1).join(',');
    assert.equal((await h.get(`/api/v2/sports/4/events/2026-11-22?market_ids=${repeated}`)).statusCode, 200);
  });

  test('a negative offset moves the day start before midnight UTC', async () => {
    // 18:00 UTC on the 22nd is 00:00 on the 23rd at UTC+6 (offset -360).
    assert.deepEqual(
      (await ok('/api/v2/sports/4/events/2026-11-23?offset=-360')).events.map((e) => e.event_id),
      ['r1'],
    );
    assert.equal((await ok('/api/v2/sports/4/events/2026-11-22?offset=-360')).events.length, 0);
    assert.equal((await ok('/api/v2/sports/4/events/2026-11-22?offset=-359')).events.length, 1);
  });

  test('hide_no_markets applies after the other filters; the scores-only sentinel keeps events', async () => {
    const players = await ok('/api/v2/sports/4/events/2026-11-22?participant_type=TYPE_PLAYER');
    assert.equal(players.events.length, 1, 'without hide_no_markets the event stays');
    assert.deepEqual(players.events[0]!.markets, [], 'the default markets have no player participants');
    const hidden = await ok(
      '/api/v2/sports/4/events/2026-11-22?participant_type=TYPE_PLAYER&hide_no_markets=true',
    );
    assert.equal(hidden.events.length, 0);
    const books = await ok('/api/v2/sports/4/events/2026-11-22?affiliate_ids=3');
    assert.deepEqual(
      books.events[0]!.markets.map((m) => m.market_id),
      [3],
      'Pinnacle prices only the total',
    );
    const scores = await ok('/api/v2/events/r1?affiliate_ids=0');
    assert.deepEqual(scores.events[0]!.markets, []);
    assert.equal(scores.events[0]!.score.event_status, 'STATUS_SCHEDULED');
  });

  test('the scores-only sentinel applies to openers and closing too', async () => {
    for (const kind of ['openers', 'closing']) {
      const body = await ok(`/api/v2/events/r1/${kind}?affiliate_ids=0`);
      assert.equal(body.events.length, 1, kind);
      assert.deepEqual(body.events[0]!.markets, [], kind);
      assert.equal(body.events[0]!.teams.length, 2, kind);
    }
  });
});

describe('snapshots on a recorded history', () => {
  test('closing: main_line selects the main lines of then; period markets are cut off at the event start', async () => {
    // 17:00: the main spread moves to +5.5 (+4.5 becomes an alternate); the first-half spread moves to -120.
    h.clock.set(Date.parse('2026-11-22T17:00:00Z'));
    const moved = withFirstHalf(nbaEvent('r1', START), -120);
    const spread = moved.markets.find((m) => m.market_id === 2)!;
    spread.participants[0]!.lines = [
      { value: '+4.5', prices: { '19': { price: -130, is_main_line: false } } },
      { value: '+5.5', prices: { '19': { price: -110, is_main_line: true } } },
    ];
    assert.equal((await h.ingest([moved])).statusCode, 200);
    // 18:30, in play: only the first half's spread moves (full-game markets are not named, so kept).
    h.clock.set(Date.parse('2026-11-22T18:30:00Z'));
    const live = withFirstHalf(
      nbaEvent('r1', START, { mlAway: 150, mlHome: -170, status: 'STATUS_IN_PROGRESS' }),
      200,
    );
    live.markets = live.markets.filter((m) => 'period_id' in m && m.period_id === 1);
    assert.equal((await h.ingest([live])).statusCode, 200);

    const closing = await ok('/api/v2/events/r1/closing?market_ids=2');
    assert.equal(closing.meta.provisional, false);
    assert.equal(
      lakersPrice(market(closing, 2, 1), '+2.5')!.price,
      -120,
      'first half: the last price before the start',
    );
    assert.equal(lakersPrice(market(closing, 2, 1), '+2.5')!.updated_at, '2026-11-22T17:00:00.000Z');
    assert.equal(lakersPrice(market(await ok('/api/v2/events/r1?market_ids=2'), 2, 1), '+2.5')!.price, 200);

    const mainClosing = await ok('/api/v2/events/r1/closing?market_ids=2&main_line=true');
    const values = mainClosing.events[0]!.markets.find((m) => m.period_id === 0)!
      .participants.find((p) => p.id === LAKERS)!
      .lines.map((l) => l.value);
    assert.deepEqual(values, ['+5.5'], 'the main line at the start');
    const mainOpeners = await ok('/api/v2/events/r1/openers?market_ids=2&main_line=true');
    const openValues = mainOpeners.events[0]!.markets.find((m) => m.period_id === 0)!
      .participants.find((p) => p.id === LAKERS)!
      .lines.map((l) => l.value);
    // Each line's first recorded price: +4.5 opened as the main line, +5.5 opened (later) as the main line too.
    assert.deepEqual(openValues, ['+4.5', '+5.5'], 'main lines when each line opened');
  });
});

describe('delta feed filters and limits', () => {
  test('event_id and sport_id narrow the feed; more than 12 market_ids is a 400', async () => {
    const cursor = (await ok('/api/v2/events/r1')).meta.delta_last_id as number;
    h.clock.advance(60_000);
    const other = nbaEvent('r2', '2026-11-22T23:00:00Z');
    assert.equal((await h.ingest([other])).statusCode, 200);
    const epl = {
      event_id: 'r-epl',
      sport_id: 11,
      event_date: '2026-11-22T20:00:00Z',
      teams: [
        { team_id: 1107, name: 'Chelsea', is_away: true, is_home: false },
        { team_id: 1101, name: 'Arsenal', is_away: false, is_home: true },
      ],
    };
    assert.equal((await h.ingest([epl])).statusCode, 200);
    const byEvent = deltaOf(await h.get(`/api/v2/markets/delta?last_id=${cursor}&event_id=r2`));
    assert.ok(byEvent.deltas.length > 0);
    assert.ok(byEvent.deltas.every((d) => d.event_id === 'r2'));
    const bySport = deltaOf(await h.get(`/api/v2/markets/delta?last_id=${cursor}&sport_id=11`));
    assert.deepEqual(
      bySport.deltas.map((d) => [d.event_id, d.kind, d.change_type]),
      [['r-epl', 'event', 'status']],
    );
    const thirteen = Array.from({ length: 13 }, (_, i) => i + 1).join(',');
    assertError(
      await h.get(`/api/v2/markets/delta?last_id=${cursor}&market_ids=${thirteen}`),
      400,
      'validation_error',
      /at most 12/,
    );
    assertError(await h.get('/api/v2/markets/delta'), 400, 'validation_error');
  });
});

describe('plans: lookback on every dated read', () => {
  test('a free key cannot read the openers or a line history of an event older than 7 days', async () => {
    const free = await h.issueKey('free');
    h.clock.set(Date.parse('2026-12-05T12:00:00Z'));
    const lineId = market(await ok('/api/v2/events/r1?market_ids=1'), 1)!.participants[0]!.lines[0]!.id;
    assertError(await h.get('/api/v2/events/r1/openers', free.key), 403, 'plan_lookback');
    assertError(await h.get(`/api/v2/lines/${lineId}/history`, free.key), 403, 'plan_lookback');
    assertError(await h.get('/api/v2/events/r1', free.key), 403, 'plan_lookback', /7 days/);
    assert.equal((await h.get(`/api/v2/lines/${lineId}/history`)).statusCode, 200, 'the pro key reaches it');
    // Teams, players and reference lists are not dated: no lookback.
    assert.equal((await h.get(`/api/v2/teams/${LAKERS}`, free.key)).statusCode, 200);
    h.clock.set(Date.parse('2026-11-22T19:00:00Z'));
  });
});

describe('ingest: baseball schedule fields and participant.id joins', () => {
  const mlb = (id: string, schedule: Record<string, Json>, sportId = 3) => ({
    event_id: id,
    sport_id: sportId,
    event_date: '2026-06-10T17:05:00Z',
    teams:
      sportId === 3
        ? [
            { team_id: 301, name: 'Arizona', is_away: true, is_home: false },
            { team_id: 304, name: 'Boston', is_away: false, is_home: true },
          ]
        : [
            { team_id: LAKERS, name: 'Los Angeles', is_away: true, is_home: false },
            { team_id: CELTICS, name: 'Boston', is_away: false, is_home: true },
          ],
    schedule,
  });

  test('game_type and game_number: baseball only, game_number 1 or 2, required for a doubleheader', async () => {
    assertError(
      await h.ingest([mlb('x-nba', { game_type: 'makeup' }, 4)]),
      400,
      'validation_error',
      /baseball/,
    );
    assertError(
      await h.ingest([mlb('x-3', { game_number: 3, game_type: 'doubleheader' })]),
      400,
      'validation_error',
      /1 or 2/,
    );
    assertError(
      await h.ingest([mlb('x-dh', { game_type: 'doubleheader' })]),
      400,
      'validation_error',
      /game_number/,
    );
    assert.equal((await h.ingest([mlb('x-makeup', { game_type: 'makeup' })])).statusCode, 200);
    const makeup = (await ok('/api/v2/events/x-makeup')).events[0]!;
    assert.equal(makeup.schedule.game_type, 'makeup');
    assert.ok(!('game_number' in makeup.schedule));
    const dh2 = await h.ingest([mlb('x-dh2', { game_type: 'doubleheader_makeup', game_number: 2 })]);
    assert.equal(dh2.statusCode, 200, dh2.body);
    const second = (await ok('/api/v2/events/x-dh2')).events[0]!;
    assert.deepEqual([second.schedule.game_number, second.schedule.game_type], [2, 'doubleheader_makeup']);
  });

  test('a team or player id of another sport is a 400 (ids join /teams and /players); the batch is kept out', async () => {
    const epl = {
      event_id: 'x-epl',
      sport_id: 11,
      event_date: '2026-11-22T20:00:00Z',
      teams: [
        { team_id: LAKERS, name: 'Los Angeles', is_away: true, is_home: false },
        { team_id: 1101, name: 'Arsenal', is_away: false, is_home: true },
      ],
    };
    assertError(await h.ingest([epl]), 400, 'validation_error', /belongs to sport 4/);
    assert.equal((await h.get(`/api/v2/teams/${LAKERS}`)).json().team.sport_id, 4);
    const same = {
      ...epl,
      teams: [
        { team_id: 1101, name: 'Arsenal', is_away: true, is_home: false },
        { team_id: 1101, name: 'Arsenal', is_away: false, is_home: true },
      ],
    };
    assertError(await h.ingest([same]), 400, 'validation_error', /must differ/);
    const prop = {
      ...epl,
      teams: [
        { team_id: 1107, name: 'Chelsea', is_away: true, is_home: false },
        { team_id: 1101, name: 'Arsenal', is_away: false, is_home: true },
      ],
      markets: [
        {
          market_id: 29,
          participants: [
            {
              id: TATUM,
              type: 'TYPE_PLAYER',
              name: 'Someone Else',
              lines: [{ value: 'Over 1.5', prices: {} }],
            },
          ],
        },
      ],
    };
    assertError(await h.ingest([prop]), 400, 'validation_error', /player 10003 belongs to sport 4/);
    assert.equal((await h.get(`/api/v2/players/${TATUM}`)).json().player.name, 'Jayson Tatum');
    // A brand-new team gets the event's sport; using it in another sport in the same batch is refused.
    const fresh = (id: string, sportId: number) => ({
      ...epl,
      event_id: id,
      sport_id: sportId,
      teams: [
        { team_id: 88_001, name: 'New A', is_away: true, is_home: false },
        { team_id: 88_002, name: 'New B', is_away: false, is_home: true },
      ],
    });
    assertError(
      await h.ingest([fresh('x-f1', 11), fresh('x-f2', 12)]),
      400,
      'validation_error',
      /belongs to sport 11/,
    );
    assertError(await h.get('/api/v2/teams/88001'), 404, 'not_found');
  });
});
