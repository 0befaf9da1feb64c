import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Static } from '@sinclair/typebox';
import { bodyAs, type Json } from '../../../../test/support/json.ts';
import {
  AffiliatesResponse,
  type EventSchema,
  EventsEnvelope,
  MarketsResponse,
  PlayerResponse,
  PlayersResponse,
  SportsResponse,
  TeamResponse,
  TeamsResponse,
} from '../odds-schemas.ts';
import {
  ARSENAL,
  assertError,
  CELTICS,
  CHELSEA,
  LAKERS,
  nbaEvent,
  type OddsHarness,
  startOdds,
  TATUM,
} from './support.ts';

const START = '2026-11-23T03:00:00Z';

let h: OddsHarness;
before(async () => {
  h = await startOdds(new Date('2026-11-22T12:00:00Z'));
  const res = await h.ingest([
    nbaEvent('nba-1', START),
    {
      ...nbaEvent('nba-2', '2026-11-23T20:00:00Z', { mlAway: 120, mlHome: -140, status: 'STATUS_SCHEDULED' }),
      markets: [],
    },
  ]);
  assert.equal(res.statusCode, 200, res.body);
});
after(async () => h?.close());

const events = async (url: string) => {
  const res = await h.get(url);
  assert.equal(res.statusCode, 200, res.body);
  return bodyAs(res, EventsEnvelope);
};
const bookIds = (e: Static<typeof EventSchema>) =>
  new Set(
    e.markets.flatMap((m) => m.participants.flatMap((p) => p.lines.flatMap((l) => Object.keys(l.prices)))),
  );

describe('authentication and errors', () => {
  test('401 without X-Odds-Key, with an unknown key, and with a revoked key; body {error, message}', async () => {
    assertError(await h.get('/api/v2/sports', null), 401, 'unauthorized', /X-Odds-Key/);
    assertError(await h.get('/api/v2/sports', `odds_${'A'.repeat(43)}`), 401, 'unauthorized');
    const k = await h.issueKey('free');
    assert.equal((await h.get('/api/v2/sports', k.key)).statusCode, 200);
    assert.equal((await h.ops('POST', `/_ops/keys/${k.id}/revoke`)).statusCode, 200);
    assertError(await h.get('/api/v2/sports', k.key), 401, 'unauthorized');
  });

  test('unknown routes and events are 404 in the same body', async () => {
    assertError(await h.get('/api/v2/nothing'), 404, 'not_found');
    assertError(await h.get('/api/v2/events/nope'), 404, 'not_found');
    assertError(await h.get('/api/v2/sports/99/events/2026-11-23'), 404, 'not_found');
    assertError(await h.get('/api/v2/sports/4/events/2026-02-30'), 400, 'validation_error');
  });
});

describe('events by sport and date', () => {
  test('envelope {meta: {delta_last_id}, events}; default market_ids 1,2,3 (the prop is left out)', async () => {
    const body = await events('/api/v2/sports/4/events/2026-11-23');
    assert.ok(body.meta.delta_last_id! > 0);
    assert.deepEqual(
      body.events.map((e) => e.event_id),
      ['nba-1', 'nba-2'],
    );
    const e = body.events[0]!;
    assert.deepEqual(
      e.markets.map((m) => m.market_id),
      [1, 2, 3],
    );
    assert.equal(e.score.event_status, 'STATUS_SCHEDULED');
    assert.deepEqual(Object.keys(e.schedule).sort(), [
      'event_name',
      'league_name',
      'season_type',
      'season_year',
    ]);
  });

  test('soccer and hockey default to 1,2,3,563', async () => {
    const book = { '19': { price: 150 } };
    const res = await h.ingest([
      {
        event_id: 'epl-1',
        sport_id: 11,
        event_date: '2026-11-22T15:00:00Z',
        teams: [
          { team_id: CHELSEA, name: 'Chelsea', is_away: true, is_home: false },
          { team_id: ARSENAL, name: 'Arsenal', is_away: false, is_home: true },
        ],
        markets: [1, 3, 563, 570].map((market_id) => ({
          market_id,
          participants: [{ id: 0, type: 'TYPE_RESULT', name: 'X', lines: [{ value: '', prices: book }] }],
        })),
      },
    ]);
    assert.equal(res.statusCode, 200, res.body);
    const body = await events('/api/v2/sports/11/events/2026-11-22');
    assert.deepEqual(
      body.events[0]!.markets.map((m) => m.market_id),
      [1, 3, 563],
    );
  });

  test('market_ids selects markets; more than 12 is a 400; a non-integer is a 400', async () => {
    const body = await events('/api/v2/sports/4/events/2026-11-23?market_ids=29');
    assert.deepEqual(
      body.events[0]!.markets.map((m) => m.market_id),
      [29],
    );
    const twelve = Array.from({ length: 12 }, (_, i) => i + 1).join(',');
    assert.equal((await h.get(`/api/v2/sports/4/events/2026-11-23?market_ids=${twelve}`)).statusCode, 200);
    assertError(
      await h.get(`/api/v2/sports/4/events/2026-11-23?market_ids=${twelve},29`),
      400,
      'validation_error',
      /at most 12/,
    );
    assertError(await h.get('/api/v2/sports/4/events/2026-11-23?market_ids=1,x'), 400, 'validation_error');
  });

  test('affiliate_ids narrows sportsbooks; 0 alone is scores only; 0 with a sportsbook is a 400', async () => {
    const one = await events('/api/v2/sports/4/events/2026-11-23?affiliate_ids=23');
    assert.deepEqual([...bookIds(one.events[0]!)], ['23']);
    const all = await events('/api/v2/sports/4/events/2026-11-23');
    assert.deepEqual([...bookIds(all.events[0]!)].sort(), ['19', '23', '3']);
    const scores = await events('/api/v2/sports/4/events/2026-11-23?affiliate_ids=0');
    assert.equal(scores.events.length, 2);
    assert.deepEqual(scores.events[0]!.markets, []);
    assert.equal(scores.events[0]!.score.event_status, 'STATUS_SCHEDULED');
    assert.equal(scores.events[0]!.teams.length, 2);
    assertError(
      await h.get('/api/v2/sports/4/events/2026-11-23?affiliate_ids=0,19'),
      400,
      'validation_error',
    );
  });

  test('offset moves the day boundary (03:00 UTC belongs to the previous day at UTC-5)', async () => {
    const utc = await events('/api/v2/sports/4/events/2026-11-23');
    assert.ok(utc.events.some((e) => e.event_id === 'nba-1'));
    const eastern = await events('/api/v2/sports/4/events/2026-11-23?offset=300');
    assert.ok(!eastern.events.some((e) => e.event_id === 'nba-1'));
    const previous = await events('/api/v2/sports/4/events/2026-11-22?offset=300');
    assert.deepEqual(
      previous.events.map((e) => e.event_id),
      ['nba-1'],
    );
    assert.equal((await events('/api/v2/sports/4/events/2026-11-22')).events.length, 0);
    assertError(await h.get('/api/v2/sports/4/events/2026-11-22?offset=900'), 400, 'validation_error');
  });

  test('event_status is applied before exclude_status; an unknown status is a 400', async () => {
    await h.ingest([
      {
        ...nbaEvent('nba-2', '2026-11-23T20:00:00Z', { mlAway: 120, mlHome: -140, status: 'STATUS_FINAL' }),
        markets: [],
      },
    ]);
    const fin = await events('/api/v2/sports/4/events/2026-11-23?event_status=STATUS_FINAL');
    assert.deepEqual(
      fin.events.map((e) => e.event_id),
      ['nba-2'],
    );
    const both = await events(
      '/api/v2/sports/4/events/2026-11-23?event_status=STATUS_FINAL,STATUS_SCHEDULED&exclude_status=STATUS_FINAL',
    );
    assert.deepEqual(
      both.events.map((e) => e.event_id),
      ['nba-1'],
    );
    const excl = await events('/api/v2/sports/4/events/2026-11-23?exclude_status=STATUS_SCHEDULED');
    assert.deepEqual(
      excl.events.map((e) => e.event_id),
      ['nba-2'],
    );
    assertError(await h.get('/api/v2/sports/4/events/2026-11-23?event_status=LIVE'), 400, 'validation_error');
  });

  test('main_line=true keeps only main lines of spreads and totals', async () => {
    const all = await events('/api/v2/sports/4/events/2026-11-23?market_ids=2');
    const values = (b: typeof all) =>
      b.events[0]!.markets[0]!.participants.flatMap((p) => p.lines.map((l) => l.value)).sort();
    assert.deepEqual(values(all), ['+4.5', '+6.5', '-4.5', '-6.5']);
    const main = await events('/api/v2/sports/4/events/2026-11-23?market_ids=2&main_line=true');
    assert.deepEqual(values(main), ['+4.5', '-4.5']);
  });

  test('participant_ids (at most 99) and participant_type filter participants', async () => {
    const lakers = await events(`/api/v2/sports/4/events/2026-11-23?participant_ids=${LAKERS}`);
    for (const m of lakers.events[0]!.markets)
      assert.deepEqual(
        m.participants.map((p) => p.id),
        [LAKERS],
      );
    assert.deepEqual(
      lakers.events[0]!.markets.map((m) => m.market_id),
      [1, 2],
    );
    const over = await events(
      '/api/v2/sports/4/events/2026-11-23?participant_type=TYPE_RESULT&participant_ids=0',
    );
    assert.deepEqual(
      over.events[0]!.markets.map((m) => [m.market_id, m.participants[0]!.name]),
      [[3, 'Over']],
    );
    const players = await events(
      '/api/v2/sports/4/events/2026-11-23?market_ids=1,29&participant_type=TYPE_PLAYER',
    );
    assert.deepEqual(
      players.events[0]!.markets.map((m) => m.market_id),
      [29],
    );
    const ids = Array.from({ length: 100 }, (_, i) => i + 1).join(',');
    assertError(
      await h.get(`/api/v2/sports/4/events/2026-11-23?participant_ids=${ids}`),
      400,
      'validation_error',
      /99/,
    );
    assertError(
      await h.get('/api/v2/sports/4/events/2026-11-23?participant_type=TEAM'),
      400,
      'validation_error',
    );
  });

  test('hide_no_markets drops events without market data', async () => {
    const all = await events('/api/v2/sports/4/events/2026-11-23');
    assert.equal(all.events.length, 2);
    const hidden = await events('/api/v2/sports/4/events/2026-11-23?hide_no_markets=true');
    assert.deepEqual(
      hidden.events.map((e) => e.event_id),
      ['nba-1'],
    );
  });

  test('participant.id joins: TYPE_TEAM ids are teams[].team_id, TYPE_PLAYER ids resolve to players', async () => {
    const body = await events('/api/v2/sports/4/events/2026-11-23?market_ids=1,2,29');
    const e = body.events.find((x) => x.event_id === 'nba-1')!;
    const teamIds = e.teams.map((t) => t.team_id);
    assert.deepEqual(teamIds, [LAKERS, CELTICS]);
    assert.equal(e.teams[0]!.is_away, true);
    for (const m of e.markets.filter((x) => x.market_id !== 29))
      for (const p of m.participants) assert.ok(teamIds.includes(p.id));
    const prop = e.markets.find((x) => x.market_id === 29)!;
    assert.equal(prop.participants[0]!.id, TATUM);
    const { player } = bodyAs(await h.get(`/api/v2/players/${prop.participants[0]!.id}`), PlayerResponse);
    assert.equal(player.name, 'Jayson Tatum');
    assert.equal(player.team_id, CELTICS);
  });

  test('a cached answer is recomputed after a change', async () => {
    const first = await events('/api/v2/sports/4/events/2026-11-23?market_ids=1&affiliate_ids=19');
    const price = () =>
      first.events[0]!.markets[0]!.participants.find((p) => p.id === LAKERS)!.lines[0]!.prices['19']!.price;
    assert.equal(price(), 150);
    await h.ingest([nbaEvent('nba-1', START, { mlAway: 165, mlHome: -185 })]);
    const second = await events('/api/v2/sports/4/events/2026-11-23?market_ids=1&affiliate_ids=19');
    assert.equal(
      second.events[0]!.markets[0]!.participants.find((p) => p.id === LAKERS)!.lines[0]!.prices['19']!.price,
      165,
    );
    assert.ok(second.meta.delta_last_id! > first.meta.delta_last_id!);
    await h.ingest([nbaEvent('nba-1', START)]);
  });
});

describe('baseball schedule fields and ingest validation', () => {
  const mlb = (id: string, schedule: Record<string, Json>) => ({
    event_id: id,
    sport_id: 3,
    event_date: '2026-06-10T17:05:00Z',
    teams: [
      { team_id: 301, name: 'Arizona', is_away: true, is_home: false },
      { team_id: 304, name: 'Boston', is_away: false, is_home: true },
    ],
    schedule,
  });

  test('game_number and game_type only for doubleheaders and makeups', async () => {
    const res = await h.ingest([
      mlb('mlb-dh1', { game_number: 1, game_type: 'doubleheader' }),
      mlb('mlb-plain', {}),
    ]);
    assert.equal(res.statusCode, 200, res.body);
    const dh = (await events('/api/v2/events/mlb-dh1')).events[0]!;
    assert.equal(dh.schedule.game_number, 1);
    assert.equal(dh.schedule.game_type, 'doubleheader');
    const plain = (await events('/api/v2/events/mlb-plain')).events[0]!;
    assert.ok(!('game_number' in plain.schedule) && !('game_type' in plain.schedule));
    assertError(await h.ingest([mlb('mlb-bad', { game_number: 2 })]), 400, 'validation_error', /game_number/);
  });

  test('ingest is all-or-nothing: one bad event rejects the batch', async () => {
    const bad = nbaEvent('nba-bad', START);
    (bad.markets[0]!.participants[0]!.lines[0]! as { prices: unknown }).prices = {
      '999': { price: 150, is_main_line: true },
    };
    const res = await h.ingest([nbaEvent('nba-good', START), bad]);
    assertError(res, 400, 'validation_error', /sportsbook 999/);
    assertError(await h.get('/api/v2/events/nba-good'), 404, 'not_found');
    const odd = nbaEvent('nba-odd', START, { mlAway: 50, mlHome: -170 });
    assertError(await h.ingest([odd]), 400, 'validation_error', /American/);
    const stranger = nbaEvent('nba-x', START);
    stranger.markets[0]!.participants[0]!.id = 999;
    assertError(await h.ingest([stranger]), 400, 'validation_error', /not one of the event's teams/);
  });
});

describe('teams, players and reference lists', () => {
  test("teams, a team's players, a sport's teams", async () => {
    assert.equal(bodyAs(await h.get(`/api/v2/teams/${CELTICS}`), TeamResponse).team.mascot, 'Celtics');
    const { players } = bodyAs(await h.get(`/api/v2/teams/${CELTICS}/players`), PlayersResponse);
    assert.deepEqual(players.map((p) => p.name).sort(), ['Jaylen Brown', 'Jayson Tatum']);
    assert.equal(bodyAs(await h.get('/api/v2/sports/4/teams'), TeamsResponse).teams.length, 30);
    assertError(await h.get('/api/v2/teams/9999'), 404, 'not_found');
    assertError(await h.get('/api/v2/players/9999'), 404, 'not_found');
  });

  test('sports, sportsbooks and markets carry the anchor ids', async () => {
    const { sports } = bodyAs(await h.get('/api/v2/sports'), SportsResponse);
    assert.equal(sports.find((s) => s.sport_id === 4)!.abbreviation, 'NBA');
    assert.equal(sports.length, 16);
    const books = bodyAs(await h.get('/api/v2/affiliates'), AffiliatesResponse).affiliates;
    assert.deepEqual(
      books.map((b) => b.affiliate_id),
      [2, 3, 4, 6, 7, 9, 11, 19, 22, 23, 25],
    );
    const { markets } = bodyAs(await h.get('/api/v2/markets'), MarketsResponse);
    assert.equal(markets.find((m) => m.id === 563)!.name, 'moneyline_3way');
  });
});
