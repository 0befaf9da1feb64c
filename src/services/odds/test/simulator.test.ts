import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { scheduleFor } from '../schedules.ts';
import { americanFromProbability, eventStateAt, probabilityFromAmerican } from '../simulator.ts';
import { type OddsHarness, startOdds } from './support.ts';

describe('simulator model (pure)', () => {
  test('the same seed gives the same schedule; another seed another one', () => {
    const a = scheduleFor('s1', 4, '2026-11-23');
    const b = scheduleFor('s1', 4, '2026-11-23');
    const c = scheduleFor('s2', 4, '2026-11-23');
    assert.ok(a.length >= 5 && a.length <= 11);
    assert.deepEqual(
      a.map((g) => [g.start.toISOString(), g.away.id, g.home.id]),
      b.map((g) => [g.start.toISOString(), g.away.id, g.home.id]),
    );
    assert.notDeepEqual(
      a.map((g) => [g.away.id, g.home.id]),
      c.map((g) => [g.away.id, g.home.id]),
    );
    const teams = a.flatMap((g) => [g.away.id, g.home.id]);
    assert.equal(new Set(teams).size, teams.length, 'a team plays once a day');
    assert.deepEqual(scheduleFor('s1', 3, '2026-12-15'), [], 'MLB is out of season in December');
  });

  test("moneyline pairs carry each book's margin (implied probabilities sum above 1)", () => {
    const g = scheduleFor('s1', 4, '2026-11-23')[0]!;
    const st = eventStateAt('s1', g, new Date(g.start.getTime() - 3_600_000));
    const ml = st.markets.find((m) => m.marketId === 1)!;
    const [away, home] = ml.participants;
    for (const book of Object.keys(away!.lines[0]!.prices)) {
      const sum =
        probabilityFromAmerican(away!.lines[0]!.prices[Number(book)]!.price) +
        probabilityFromAmerican(home!.lines[0]!.prices[Number(book)]!.price);
      assert.ok(sum > 1.0 && sum < 1.09, `book ${book} overround ${sum}`);
    }
    // One favourite, one underdog.
    const p = (x: typeof away) => x!.lines[0]!.prices[19]!.price;
    assert.ok(p(away) < 0 !== p(home) < 0 || p(away) === p(home));
    assert.equal(americanFromProbability(0.5), -100);
    assert.ok(americanFromProbability(0.6) <= -145 && americanFromProbability(0.4) >= 145);
  });

  test('spreads and totals have one main line per book plus alternates; props per player', () => {
    const g = scheduleFor('s1', 4, '2026-11-23')[0]!;
    const st = eventStateAt('s1', g, new Date(g.start.getTime() - 3_600_000));
    for (const id of [2, 3]) {
      const m = st.markets.find((x) => x.marketId === id)!;
      const p = m.participants[0]!;
      const mains = p.lines.filter((l) => l.prices[19]?.isMainLine);
      const alts = p.lines.filter((l) => l.prices[19] && !l.prices[19].isMainLine);
      assert.equal(mains.length, 1, `market ${id} has one main line at DraftKings`);
      assert.ok(alts.length >= 2, `market ${id} has alternates`);
    }
    const props = st.markets.filter((m) => [29, 35, 39].includes(m.marketId));
    assert.equal(props.length, 3);
    assert.ok(props[0]!.participants.every((p) => p.type === 'TYPE_PLAYER'));
  });

  test('status and score move through the game to STATUS_FINAL with a winner', () => {
    const g = scheduleFor('s1', 4, '2026-11-23')[0]!;
    const at = (min: number) => eventStateAt('s1', g, new Date(g.start.getTime() + min * 60_000)).event;
    assert.equal(at(-1).status, 'STATUS_SCHEDULED');
    assert.equal(at(10).status, 'STATUS_IN_PROGRESS');
    assert.equal(at(80).status, 'STATUS_HALFTIME');
    const final = at(400);
    assert.equal(final.status, 'STATUS_FINAL');
    assert.ok(final.winnerAway !== final.winnerHome);
    assert.equal(
      final.scoreAway,
      final.scoreAwayByPeriod.reduce((s, x) => s + x, 0),
    );
    assert.ok(at(100).scoreHome >= at(10).scoreHome, 'scores never go down');
  });

  test('prices move over time before the start and freeze (closed) at the start', () => {
    const g = scheduleFor('s1', 4, '2026-11-23')[0]!;
    const prices = (min: number) =>
      JSON.stringify(
        eventStateAt('s1', g, new Date(g.start.getTime() + min * 60_000)).markets.map((m) =>
          m.participants.map((p) => p.lines.map((l) => Object.values(l.prices).map((x) => x.price))),
        ),
      );
    const seen = new Set([-600, -500, -400, -300, -200, -100].map(prices));
    assert.ok(seen.size > 1, 'prices moved during the pre-game');
    const atStart = eventStateAt('s1', g, g.start).markets;
    assert.ok(
      atStart.every((m) =>
        m.participants.every((p) => p.lines.every((l) => Object.values(l.prices).every((x) => x.closed))),
      ),
    );
    assert.equal(prices(0), prices(60), 'no moves after the start');
  });

  test('baseball doubleheaders carry game_number and game_type; ordinary games neither', () => {
    let found = false;
    for (let d = 1; d <= 30 && !found; d += 1) {
      const games = scheduleFor('s1', 3, `2026-06-${String(d).padStart(2, '0')}`);
      const dh = games.filter((g) => g.gameType === 'doubleheader');
      if (dh.length === 2) {
        found = true;
        assert.deepEqual(dh.map((g) => g.gameNumber).sort(), [1, 2]);
        assert.equal(dh[0]!.home.id, dh[1]!.home.id);
        assert.ok(games.some((g) => g.gameType === null && g.gameNumber === null));
      }
    }
    assert.ok(found, 'a doubleheader in June');
  });
});

describe('simulator against the database', () => {
  let h: OddsHarness;
  before(async () => {
    h = await startOdds(new Date('2026-11-22T20:00:00Z'), {
      ODDS_SIMULATOR: 'on',
      ODDS_SIM_SEED: 'test-seed',
      ODDS_SIM_SPORTS: '4',
    });
  });
  after(async () => h?.close());

  test("a tick schedules today's games with markets; later ticks move prices and finish games", async () => {
    const first = await h.ops('POST', '/_ops/simulator/tick');
    assert.equal(first.statusCode, 200, first.body);
    assert.ok(first.json().events > 10);
    const again = await h.ops('POST', '/_ops/simulator/tick');
    assert.equal(again.json().changes, 0, 'a second tick at the same time changes nothing');
    // No game is under way at 20:00 UTC: within the price bucket nothing can change, so nothing is even rewritten.
    assert.equal(again.json().events, 0, 'nothing rewritten');
    h.clock.advance(60_000);
    assert.equal((await h.ops('POST', '/_ops/simulator/tick')).json().events, 0, 'the same price bucket');
    h.clock.advance(10 * 60_000);
    assert.ok((await h.ops('POST', '/_ops/simulator/tick')).json().events > 0, 'the next bucket: re-priced');

    const day = await h.get('/api/v2/sports/4/events/2026-11-23');
    assert.equal(day.statusCode, 200);
    const games = scheduleFor('test-seed', 4, '2026-11-23');
    assert.equal(day.json().events.length, games.length);
    const ev = day.json().events[0];
    assert.equal(ev.teams[0].team_id, games[0]!.away.id);
    assert.equal(ev.score.event_status, 'STATUS_SCHEDULED');
    assert.deepEqual(
      ev.markets.map((m: { market_id: number }) => m.market_id),
      [1, 2, 3],
    );
    assert.equal(Object.keys(ev.markets[0].participants[0].lines[0].prices).length, 11);

    const before = day.json().meta.delta_last_id;
    h.clock.advance(60 * 60_000);
    const moved = await h.ops('POST', '/_ops/simulator/tick');
    assert.ok(moved.json().changes > 0, 'prices moved in an hour');
    const delta = await h.get(`/api/v2/markets/delta?last_id=${before}&event_id=${ev.event_id}`);
    assert.equal(delta.statusCode, 200, delta.body);
    assert.ok(delta.json().deltas.some((d: { change_type: string }) => d.change_type === 'changed'));

    h.clock.set(new Date('2026-11-23T12:00:00Z'));
    await h.ops('POST', '/_ops/simulator/tick');
    const done = await h.get('/api/v2/sports/4/events/2026-11-23?event_status=STATUS_FINAL');
    const expected = games.filter((g) => g.start.getTime() < Date.parse('2026-11-23T08:00:00Z')).length;
    assert.ok(expected > 0);
    assert.equal(done.json().events.length, expected, 'the games of the night are final');
    for (const e of done.json().events) {
      assert.ok(e.score.winner_away !== e.score.winner_home);
      for (const m of e.markets)
        for (const p of m.participants)
          for (const l of p.lines)
            for (const pr of Object.values(l.prices)) assert.ok((pr as { closed_at?: string }).closed_at);
    }
    const closing = await h.get(`/api/v2/events/${ev.event_id}/closing`);
    assert.equal(closing.json().meta.provisional, false);
    assert.ok(closing.json().events[0].markets.length === 3);
  });
});
