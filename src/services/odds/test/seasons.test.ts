/**
 * The seasons of every listed sport, as pure functions of the seed (no database): each sport's calendar, the way its
 * league builds a season (conferences, round-robins, fight cards, knockouts seeded from the simulated table), the
 * seeded fates of games, and records computed from the simulated results.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { drawFate, eventIdOf, outcomeOf, type ScheduledGame } from '../game-model.ts';
import { neutralVenues, TEAMS } from '../reference-data.ts';
import { recordsAt, scheduleFor, seasonPlan, seasonWindow } from '../schedules.ts';

const SEED = 'seasons-test';
const day = (iso: string) => new Date(`${iso}T00:00:00Z`);
const dates = (from: string, to: string) => {
  const out: string[] = [];
  for (let d = day(from); d <= day(to); d = new Date(d.getTime() + 86_400_000))
    out.push(d.toISOString().slice(0, 10));
  return out;
};
const gamesBetween = (sportId: number, from: string, to: string) =>
  dates(from, to).flatMap((d) => scheduleFor(SEED, sportId, d));
const regular = (g: ScheduledGame) => (g.seasonType ?? 'Regular Season') === 'Regular Season';
const pairKey = (g: ScheduledGame) => [g.away.id, g.home.id].sort((a, b) => a - b).join('-');

describe('calendars: every listed sport plays in its season and not outside it', () => {
  // The documented windows (README "Seasons"), season 2026 (-27): a date inside, and dates outside.
  const seasons: [sport: number, name: string, inSeason: [string, string], offSeason: [string, string]][] = [
    [1, 'NCAAF Aug-Jan', ['2026-08-27', '2027-01-19'], ['2027-02-01', '2027-08-20']],
    [2, 'NFL Sep-Feb', ['2026-09-10', '2027-02-14'], ['2027-02-20', '2027-09-01']],
    [3, 'MLB late Mar-Sep', ['2026-03-26', '2026-10-01'], ['2026-10-05', '2027-03-20']],
    [4, 'NBA Oct-Jun', ['2026-10-20', '2027-06-15'], ['2027-06-20', '2027-10-15']],
    [5, 'NCAAB Nov-Apr', ['2026-11-02', '2027-04-06'], ['2027-04-10', '2027-10-31']],
    [6, 'NHL Oct-Jun', ['2026-10-20', '2027-06-15'], ['2027-06-20', '2027-10-15']],
    [8, 'WNBA May-Oct', ['2026-05-16', '2026-10-10'], ['2026-10-15', '2027-05-10']],
    [9, 'CFL Jun-Nov', ['2026-06-04', '2026-11-15'], ['2026-11-20', '2027-05-31']],
    [10, 'MLS Feb-Dec', ['2026-02-28', '2026-11-28'], ['2026-12-10', '2027-02-20']],
    [11, 'EPL Aug-May', ['2026-08-14', '2027-05-24'], ['2027-05-30', '2027-08-10']],
    [12, 'Ligue 1 Aug-May', ['2026-08-14', '2027-05-17'], ['2027-05-25', '2027-08-10']],
    [13, 'Bundesliga Aug-May', ['2026-08-21', '2027-05-17'], ['2027-05-25', '2027-08-17']],
    [14, 'LaLiga Aug-May', ['2026-08-14', '2027-05-24'], ['2027-05-30', '2027-08-10']],
    [15, 'Serie A Aug-May', ['2026-08-21', '2027-05-24'], ['2027-05-30', '2027-08-17']],
    [16, 'Champions League Sep-May', ['2026-09-15', '2027-05-29'], ['2027-06-05', '2027-09-10']],
  ];
  for (const [sportId, name, [from, to], [offFrom, offTo]] of seasons)
    test(`${name}: games from ${from} to ${to}, none from ${offFrom} to ${offTo}`, () => {
      const season = gamesBetween(sportId, from, to);
      assert.ok(season.length > 0);
      const first = season[0]!.start.toISOString().slice(0, 10);
      assert.ok(first <= dates(from, to)[7]!, `the season opens in its first week (${first})`);
      const last = season[season.length - 1]!.start.toISOString();
      assert.ok(last.slice(0, 10) >= dates(from, to).at(-3)!, `the season runs to its end (${last})`);
      assert.deepEqual(gamesBetween(sportId, offFrom, offTo), [], 'nothing off season');
      const { first: opens } = seasonWindow(sportId, 2026);
      assert.equal(opens.toISOString().slice(0, 10) <= first, true);
    });

  test('MMA: a fight night most Saturdays of the year (Saturday evening in the arena, UTC Saturday or Sunday)', () => {
    const bouts = gamesBetween(7, '2026-01-01', '2026-12-31');
    const cards = new Set(
      bouts.map((g) => g.eventName!.split(':')[0] + g.venue!.name + Math.floor(g.start.getTime() / 6.048e8)),
    );
    assert.ok(cards.size >= 38 && cards.size <= 50, `${cards.size} cards`);
    for (const g of bouts) assert.ok([0, 6].includes(g.start.getUTCDay()), g.start.toISOString());
  });
});

describe('schedules respect how each league plays', () => {
  test('college football: conference sizes, non-conference weeks, then conference games only', () => {
    const sizes = (sportId: number) => {
      const by: Record<string, number> = {};
      for (const t of TEAMS.filter((x) => x.sportId === sportId))
        by[t.conference] = (by[t.conference] ?? 0) + 1;
      return by;
    };
    assert.deepEqual(sizes(1), { ACC: 17, 'Big Ten': 18, 'Big 12': 16, SEC: 16 });
    assert.deepEqual(sizes(5), { ACC: 18, 'Big Ten': 18, 'Big 12': 16, SEC: 16, 'Big East': 11 });
    const plan = seasonPlan(SEED, 1, 2026).games.filter((g) => regular(g) && !g.makeupOf);
    const septemberWeeks = plan.filter((g) => g.start < day('2026-09-22'));
    assert.ok(
      septemberWeeks.every((g) => g.away.conference !== g.home.conference || g.away.conference === ''),
    );
    const conferencePlay = plan.filter((g) => g.start > day('2026-09-24'));
    assert.ok(conferencePlay.length > 200);
    for (const g of conferencePlay)
      assert.equal(g.away.conference, g.home.conference, `${g.away.name} at ${g.home.name}`);
    const quota: Record<string, number> = { SEC: 8, ACC: 8, 'Big Ten': 9, 'Big 12': 9 };
    for (const t of TEAMS.filter((x) => x.sportId === 1)) {
      const played = conferencePlay.filter((g) => g.away.id === t.id || g.home.id === t.id);
      assert.equal(
        new Set(played.map(pairKey)).size,
        played.length,
        `${t.name} meets a conference rival once`,
      );
      // ACC has 17 members: the circle method leaves one team idle per round.
      assert.ok(played.length === quota[t.conference]! || (t.conference === 'ACC' && played.length === 7));
    }
  });

  test('college football postseason: conference championships, a 12-team playoff to a January final, bowls', () => {
    const post = seasonPlan(SEED, 1, 2026).games.filter((g) => g.seasonType === 'Postseason');
    const named = (key: string) => new Set(neutralVenues(key, 2026).map((v) => v.eventName));
    const prefix = (g: ScheduledGame) => g.eventName?.split(':')[0] ?? '';
    const ccg = post.filter((g) => /^(ACC|Big Ten|Big 12|SEC) Championship$/.test(prefix(g)));
    assert.equal(ccg.length, 4);
    for (const g of ccg) assert.equal(g.away.conference, g.home.conference);
    // The playoff: four campus games (seeds 5-12), then quarterfinal and semifinal bowls, then the final.
    const campus = post.filter((g) => !g.eventName);
    const bowls = (key: string) => post.filter((g) => named(key).has(prefix(g)));
    assert.equal(campus.length, 4);
    assert.equal(bowls('ncaaf-cfp-quarterfinal').length, 4);
    assert.equal(bowls('ncaaf-cfp-semifinal').length, 2);
    const final = bowls('ncaaf-cfp-final');
    assert.equal(final.length, 1);
    assert.equal(
      final[0]!.start.toISOString(),
      '2027-01-19T00:30:00.000Z',
      'the night of the third Monday of January',
    );
    const field = new Set(
      [...campus, ...bowls('ncaaf-cfp-quarterfinal')].flatMap((g) => [g.away.id, g.home.id]),
    );
    assert.equal(field.size, 12, 'twelve teams');
    const others = bowls('ncaaf-bowl');
    assert.ok(others.length >= 8, `${others.length} other bowls`);
    for (const g of others)
      assert.ok(!field.has(g.away.id) && !field.has(g.home.id), 'playoff teams play no other bowl');
    for (const g of post) assert.ok(g.knownAt && g.knownAt < g.start, 'known once its teams are decided');
  });

  test('college basketball: conference play from January is within conferences; Big East is a double round-robin', () => {
    const plan = seasonPlan(SEED, 5, 2026).games.filter((g) => regular(g) && !g.makeupOf);
    const conference = plan.filter((g) => g.start >= day('2026-12-30'));
    for (const g of conference) assert.equal(g.away.conference, g.home.conference);
    const bigEast = TEAMS.filter((t) => t.sportId === 5 && t.conference === 'Big East');
    for (const t of bigEast) {
      const games = conference.filter((g) => g.away.id === t.id || g.home.id === t.id);
      assert.equal(games.length, 20, `${t.name} plays the ten others twice`);
      assert.equal(games.filter((g) => g.home.id === t.id).length, 10, 'home and away');
    }
    const tournament = seasonPlan(SEED, 5, 2026).games.filter((g) => g.seasonType === 'Postseason');
    assert.equal(tournament.length, 63, 'a 64-team single elimination');
    const finalGame = tournament.at(-1)!;
    assert.equal(
      finalGame.start.toISOString(),
      '2027-04-06T01:20:00.000Z',
      'the Monday after the Final Four',
    );
  });

  test('European leagues: a double round-robin, every pair twice, home and away', () => {
    for (const [sportId, teams] of [
      [11, 20],
      [12, 18],
      [13, 18],
      [14, 20],
      [15, 20],
    ] as const) {
      const games = seasonPlan(SEED, sportId, 2026).games.filter((g) => g.fate?.kind !== 'postponed');
      assert.equal(games.length, teams * (teams - 1), `sport ${sportId}`);
      const directed = new Set(games.map((g) => `${g.away.id}>${g.home.id}`));
      assert.equal(directed.size, teams * (teams - 1), `sport ${sportId}: each team hosts each other once`);
    }
  });

  test('Champions League: eight league-phase opponents each, then knockouts of the table, a one-off final in May', () => {
    const plan = seasonPlan(SEED, 16, 2026).games;
    const league = plan.filter(regular);
    for (const t of TEAMS.filter((x) => x.sportId === 16)) {
      const games = league.filter((g) => g.away.id === t.id || g.home.id === t.id);
      assert.equal(games.length, 8);
      assert.equal(new Set(games.map(pairKey)).size, 8, 'eight different opponents');
    }
    const knockouts = plan.filter((g) => !regular(g));
    // Play-offs and four rounds of two legs (8 + 8 + 4 + 2 ties), then the final.
    assert.equal(knockouts.length, 2 * (8 + 8 + 4 + 2) + 1);
    const final = knockouts.at(-1)!;
    assert.equal(final.start.toISOString().slice(0, 10), '2027-05-29', 'the last Saturday of May');
    assert.ok(final.venue, 'at a neutral venue');
    for (const leg of knockouts.filter((g) => g.knockout))
      assert.ok(
        leg.knownAt! < leg.start,
        'the second legs and the final are known once the ties before them end',
      );
  });

  test('MMA: two fighters of one weight class per bout, the last bout of a card is the five-round main event', () => {
    const card = gamesBetween(7, '2026-11-14', '2026-11-16');
    assert.ok(card.length >= 6);
    for (const g of card) {
      assert.equal(g.away.division, g.home.division);
      assert.notEqual(g.away.id, g.home.id);
    }
    assert.equal(card.at(-1)!.rounds, 5);
    assert.ok(card.slice(0, -1).every((g) => g.rounds === 3));
    const fighters = card.flatMap((g) => [g.away.id, g.home.id]);
    assert.equal(new Set(fighters).size, fighters.length, 'a fighter fights once a card');
  });

  test('NFL, CFL and MLS playoffs are seeded from the simulated standings and end in their final', () => {
    const nfl = seasonPlan(SEED, 2, 2026).games.filter((g) => !regular(g));
    assert.equal(nfl.length, 13);
    const superBowl = nfl.at(-1)!;
    assert.equal(superBowl.start.toISOString().slice(0, 10), '2027-02-14');
    assert.notEqual(superBowl.away.conference, superBowl.home.conference, 'AFC meets NFC');
    const cfl = seasonPlan(SEED, 9, 2026).games.filter((g) => !regular(g));
    assert.equal(cfl.length, 5);
    assert.notEqual(cfl.at(-1)!.away.division, cfl.at(-1)!.home.division, 'the Grey Cup: East meets West');
    const mls = seasonPlan(SEED, 10, 2026).games.filter((g) => !regular(g));
    assert.equal(mls.length, 2 + 8 + 4 + 2 + 1);
    assert.notEqual(mls.at(-1)!.away.conference, mls.at(-1)!.home.conference);
  });
});

describe('fates: delayed, postponed and canceled games are seeded', () => {
  const plan = seasonPlan(SEED, 3, 2026);
  const kinds = (seed: string) =>
    seasonPlan(seed, 3, 2026).games.flatMap((g) => (g.fate ? [`${eventIdOf(seed, g)}:${g.fate.kind}`] : []));

  test('each kind occurs, and the same seed draws the same fates', () => {
    const seen = new Set(plan.games.map((g) => g.fate?.kind));
    for (const kind of ['delayed', 'postponed', 'canceled']) assert.ok(seen.has(kind as never), kind);
    for (const g of plan.games)
      assert.deepEqual(drawFate(SEED, g, plan.ids.get(g)!), g.fate, 'drawn again: the same fate');
    const other = kinds('another-seed');
    assert.notDeepEqual(other, kinds(SEED), 'another seed: other games');
  });

  test('a postponed game is made up later by the same teams (a new event), or stays postponed', () => {
    const postponed = plan.games.filter((g) => g.fate?.kind === 'postponed');
    const makeups = plan.games.filter((g) => g.makeupOf);
    assert.ok(makeups.length > 0);
    for (const m of makeups) {
      const original = postponed.find((g) => plan.ids.get(g) === m.makeupOf)!;
      assert.ok(original, 'a makeup replays a postponed game');
      assert.deepEqual([m.away.id, m.home.id], [original.away.id, original.home.id]);
      assert.ok(m.start > original.start);
      assert.equal(m.gameType, 'makeup');
      assert.equal(
        m.knownAt!.getTime(),
        original.fate!.kind === 'postponed' ? original.fate!.at.getTime() : 0,
      );
      const sameDay = scheduleFor(SEED, 3, m.start.toISOString().slice(0, 10));
      const teams = sameDay.flatMap((g) => [g.away.id, g.home.id]);
      assert.equal(
        teams.filter((id) => id === m.home.id).length,
        1,
        'neither team plays another game that day',
      );
    }
    assert.equal(outcomeOf(SEED, postponed[0]!), null, 'a postponed or canceled event is never played');
  });
});

describe('records from the simulated results', () => {
  test('formats by sport: W-L, W-L-OTL (hockey), W-L-D (soccer, MMA); 0-0 before the first game ends', () => {
    const at = new Date('2026-11-25T12:00:00Z');
    const shape: Record<number, RegExp> = {
      4: /^\d+-\d+$/,
      6: /^\d+-\d+-\d+$/,
      11: /^\d+-\d+-\d+$/,
      7: /^\d+-\d+-\d+$/,
    };
    for (const [sportId, re] of Object.entries(shape))
      for (const record of recordsAt(SEED, Number(sportId), at).values()) assert.match(record, re);
    const opening = seasonWindow(4, 2026).first;
    assert.ok([...recordsAt(SEED, 4, opening).values()].every((r) => r === '0-0'));
  });

  test('a season adds up: wins equal losses, each team counts its played games, canceled and postponed ones never', () => {
    const end = new Date('2027-06-01T00:00:00Z');
    const epl = [...recordsAt(SEED, 11, end).values()].map((r) => r.split('-').map(Number));
    for (const [w, l, d] of epl) assert.equal(w! + l! + d!, 38, 'every game played once the season is over');
    const sum = (i: number) => epl.reduce((s, r) => s + r[i]!, 0);
    assert.equal(sum(0), sum(1));
    assert.equal(sum(2) % 2, 0);
    const nhlAt = new Date('2027-01-15T12:00:00Z');
    const nhlPlan = seasonPlan(SEED, 6, 2026);
    const final = nhlPlan.games.filter((g) => {
      const o = nhlPlan.outcomes.get(g);
      return o && o.finalAt <= nhlAt;
    });
    const records = recordsAt(SEED, 6, nhlAt);
    let wins = 0;
    for (const t of TEAMS.filter((x) => x.sportId === 6)) {
      const [w, l, otl] = records.get(t.id)!.split('-').map(Number);
      wins += w!;
      const played = final.filter((g) => g.away.id === t.id || g.home.id === t.id).length;
      assert.equal(w! + l! + otl!, played, `${t.name}: one result per final game`);
    }
    assert.equal(wins, final.length, 'one winner per final game');
    const dropped = nhlPlan.games.filter((g) => g.fate?.kind === 'canceled' || g.fate?.kind === 'postponed');
    assert.ok(dropped.every((g) => nhlPlan.outcomes.get(g) === null));
  });
});
