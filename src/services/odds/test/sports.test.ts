/**
 * Every listed sport through the API, with the simulator on for all sixteen and the clock moved (never slept): each
 * has events on an in-season date, MMA bouts are two fighters with method-of-victory props, hockey has the three-way
 * market 563, and team records follow the results the events endpoint serves.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventIdOf, type ScheduledGame } from '../game-model.ts';
import { TEAMS } from '../reference-data.ts';
import { scheduleFor } from '../schedules.ts';
import { type EventBody, eventsOf, type OddsHarness, startOdds } from './support.ts';

const SEED = 'every-sport';
const HOUR = 3_600_000;
const isoDay = (t: number) => new Date(t).toISOString().slice(0, 10);
/** The three UTC days a tick at `t` simulates. */
const windowOf = (t: number) => [-1, 0, 1].map((d) => isoDay(t + d * 24 * HOUR));
/** The games of `sportId` a tick at `t` writes (teams known by then), by day. */
const known = (sportId: number, t: number) =>
  windowOf(t).map((date) => ({
    date,
    games: scheduleFor(SEED, sportId, date).filter((g) => !g.knownAt || g.knownAt.getTime() <= t),
  }));

/** A Saturday 20:00 UTC from `from` on with an MMA card that night: September's sports. */
function septemberSaturday(): number {
  for (let t = Date.parse('2026-09-12T20:00:00Z'); ; t += 7 * 24 * HOUR)
    if (known(7, t).some((d) => d.games.length > 0)) return t;
}
/** Wednesday of the Champions League's fifth matchday: November's sports. */
const NOVEMBER = Date.parse('2026-11-25T18:00:00Z');
const SEPTEMBER = septemberSaturday();

/** Which tick shows each sport in season: September (the autumn start) or late November. */
const CASES: [sportId: number, name: string, at: number][] = [
  [1, 'NCAAF', SEPTEMBER],
  [2, 'NFL', SEPTEMBER],
  [3, 'MLB', SEPTEMBER],
  [4, 'NBA', NOVEMBER],
  [5, 'NCAAB', NOVEMBER],
  [6, 'NHL', NOVEMBER],
  [7, 'MMA', SEPTEMBER],
  [8, 'WNBA', SEPTEMBER],
  [9, 'CFL', SEPTEMBER],
  [10, 'MLS', SEPTEMBER],
  [11, 'EPL', SEPTEMBER],
  [12, 'Ligue 1', SEPTEMBER],
  [13, 'Bundesliga', SEPTEMBER],
  [14, 'LaLiga', SEPTEMBER],
  [15, 'Serie A', SEPTEMBER],
  [16, 'Champions League', NOVEMBER],
];

const impliedSum = (prices: number[]) =>
  prices.reduce((s, p) => s + (p < 0 ? -p / (-p + 100) : 100 / (p + 100)), 0);

let h: OddsHarness;
/** Answers read after the September tick (later ticks move the clock on). */
const september = new Map<number, EventBody[]>();
before(async () => {
  h = await startOdds(new Date(SEPTEMBER), { ODDS_SIMULATOR: 'on', ODDS_SIM_SEED: SEED });
  const tick = await h.ops('POST', '/_ops/simulator/tick');
  assert.equal(tick.statusCode, 200, tick.body);
  for (const [sportId, , at] of CASES) {
    if (at !== SEPTEMBER) continue;
    const events: EventBody[] = [];
    for (const date of windowOf(at))
      events.push(...eventsOf(await h.get(`/api/v2/sports/${sportId}/events/${date}`)).events);
    september.set(sportId, events);
  }
});
after(async () => h?.close());

describe('every listed sport has events on an in-season date', () => {
  test('/api/v2/sports lists the sixteen sports', async () => {
    const sports = (await h.get('/api/v2/sports')).json().sports as { sport_id: number }[];
    assert.deepEqual(
      sports.map((s) => s.sport_id),
      CASES.map(([id]) => id),
    );
  });

  test('in September: college and pro football, MLB, MMA, WNBA, CFL, MLS and the European leagues', () => {
    for (const [sportId, name, at] of CASES) {
      if (at !== SEPTEMBER) continue;
      const expected = known(sportId, at).flatMap((d) => d.games);
      assert.ok(expected.length > 0, `${name} plays around ${new Date(at).toISOString()}`);
      const served = september.get(sportId)!;
      assert.equal(served.length, expected.length, `${name}: every simulated game is served`);
      assert.deepEqual(
        new Set(served.map((e) => e.event_id)),
        new Set(expected.map((g) => eventIdOf(SEED, g))),
      );
      assert.ok(
        served.some((e) => e.markets.length > 0),
        `${name}: markets are open for the next day's games`,
      );
    }
  });

  test('MMA: a bout is two fighters of one weight class, with method-of-victory props', async () => {
    const bout = september.get(7)!.find((e) => e.markets.length > 0)!;
    assert.equal(bout.teams.length, 2);
    const fighters = bout.teams.map((t) => TEAMS.find((x) => x.id === t.team_id)!);
    assert.ok(fighters.every((f) => f.sportId === 7));
    assert.equal(fighters[0]!.division, fighters[1]!.division);
    assert.match(String(bout.schedule.event_name), /^UFC .*: .+ vs .+$/);
    {
      const event = eventsOf(await h.get(`/api/v2/events/${bout.event_id}?market_ids=1,3,580,581`))
        .events[0]!;
      const market = (id: number) => event.markets.find((m) => m.market_id === id)!;
      const mov = market(580);
      assert.deepEqual(mov.participants.map((p) => p.id).sort(), bout.teams.map((t) => t.team_id).sort());
      for (const p of mov.participants) {
        assert.equal(p.type, 'TYPE_TEAM');
        assert.deepEqual(
          p.lines.map((l) => l.value),
          ['KO/TKO', 'Submission', 'Decision'],
        );
      }
      const at19 = mov.participants.flatMap((p) => p.lines.map((l) => l.prices['19']!.price));
      assert.equal(at19.length, 6);
      const sum = impliedSum(at19);
      assert.ok(sum > 1 && sum < 1.6, `six outcomes with the book's margin (${sum})`);
      assert.deepEqual(
        market(1)
          .participants.map((p) => p.id)
          .sort(),
        bout.teams.map((t) => t.team_id).sort(),
      );
      assert.deepEqual(
        market(581).participants.map((p) => [p.type, p.name]),
        [
          ['TYPE_RESULT', 'Yes'],
          ['TYPE_RESULT', 'No'],
        ],
      );
      assert.ok(
        market(3).participants[0]!.lines.some((l) => ['2.5', '4.5'].includes(l.value)),
        'total rounds',
      );
    }
  });
});

describe('November: basketball, hockey and the Champions League', () => {
  let recordsBefore: Map<number, string>;
  let eventsBefore: Map<string, EventBody>;
  const nhlDays = [-1, 0, 1, 2].map((d) => isoDay(NOVEMBER + d * 24 * HOUR));
  const nhlEvents = async () => {
    const all: EventBody[] = [];
    for (const date of nhlDays)
      all.push(...eventsOf(await h.get(`/api/v2/sports/6/events/${date}?affiliate_ids=0`)).events);
    return new Map(all.map((e) => [e.event_id, e]));
  };
  const nhlRecords = async () =>
    new Map(
      ((await h.get('/api/v2/sports/6/teams')).json().teams as { team_id: number; record: string }[]).map(
        (t) => [t.team_id, t.record],
      ),
    );

  before(async () => {
    h.clock.set(NOVEMBER);
    const tick = await h.ops('POST', '/_ops/simulator/tick');
    assert.equal(tick.statusCode, 200, tick.body);
    recordsBefore = await nhlRecords();
    eventsBefore = await nhlEvents();
  });

  test('NBA, NCAAB, NHL and the Champions League have events', async () => {
    for (const [sportId, name, at] of CASES) {
      if (at !== NOVEMBER) continue;
      const expected = known(sportId, at);
      assert.ok(
        expected.some((d) => d.games.length > 0),
        `${name} plays around ${new Date(at).toISOString()}`,
      );
      for (const { date, games } of expected) {
        const served = eventsOf(
          await h.get(`/api/v2/sports/${sportId}/events/${date}?affiliate_ids=0`),
        ).events;
        assert.equal(served.length, games.length, `${name} on ${date}`);
      }
    }
  });

  test('hockey: market 563 (regulation three-way) by default, away, home and the draw at every book', async () => {
    const game = known(6, NOVEMBER)
      .flatMap((d) => d.games)
      .find((g: ScheduledGame) => g.start.getTime() > NOVEMBER)!;
    const event = eventsOf(await h.get(`/api/v2/events/${eventIdOf(SEED, game)}`)).events[0]!;
    assert.deepEqual(
      event.markets.map((m) => m.market_id),
      [1, 2, 3, 563],
    );
    const threeWay = event.markets.find((m) => m.market_id === 563)!;
    assert.deepEqual(
      new Set(threeWay.participants.map((p) => `${p.type}:${p.id}`)),
      new Set([`TYPE_TEAM:${game.away.id}`, `TYPE_TEAM:${game.home.id}`, 'TYPE_RESULT:2']),
    );
    assert.equal(threeWay.participants.find((p) => p.type === 'TYPE_RESULT')!.name, 'Draw');
    const books = Object.keys(threeWay.participants[0]!.lines[0]!.prices);
    assert.equal(books.length, 11);
    for (const book of books) {
      const sum = impliedSum(threeWay.participants.map((p) => p.lines[0]!.prices[book]!.price));
      assert.ok(sum > 1 && sum < 1.2, `book ${book}: three outcomes with its margin (${sum})`);
    }
  });

  test("a day later, each team's record moved by exactly the results served for its finished games", async () => {
    for (const record of recordsBefore.values()) assert.match(record, /^\d+-\d+-\d+$/, 'W-L-OTL');
    h.clock.set(NOVEMBER + 26 * HOUR);
    const tick = await h.ops('POST', '/_ops/simulator/tick');
    assert.equal(tick.statusCode, 200, tick.body);
    const recordsAfter = await nhlRecords();
    const expected = new Map([...recordsBefore].map(([id, r]) => [id, r.split('-').map(Number)]));
    let finished = 0;
    for (const [id, e] of await nhlEvents()) {
      if (
        e.score.event_status !== 'STATUS_FINAL' ||
        eventsBefore.get(id)?.score.event_status === 'STATUS_FINAL'
      )
        continue;
      finished += 1;
      const score = e.score as { winner_away: boolean; winner_home: boolean; score_away_by_period: number[] };
      assert.notEqual(score.winner_away, score.winner_home, 'a hockey game has one winner');
      const overtime = score.score_away_by_period.length > 3;
      for (const team of e.teams) {
        const won = team.is_away ? score.winner_away : score.winner_home;
        expected.get(team.team_id)![won ? 0 : overtime ? 2 : 1]! += 1;
      }
    }
    assert.ok(finished >= 4, `${finished} games finished in the day`);
    for (const [id, counts] of expected) assert.equal(recordsAfter.get(id), counts.join('-'), `team ${id}`);
    const events = eventsOf(await h.get(`/api/v2/sports/6/events/${nhlDays[1]}?affiliate_ids=0`)).events;
    assert.equal(
      events[0]!.teams[0]!.record,
      recordsAfter.get(events[0]!.teams[0]!.team_id),
      'events show it too',
    );
  });
});
