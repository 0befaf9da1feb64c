import {
  drawFate,
  eventIdOf,
  hash01,
  type Outcome,
  outcomeOf,
  type ScheduledGame,
  seededRandom,
  strengthOf,
} from './game-model.ts';
import { FIGHT_VENUES, type NeutralVenue, neutralVenues, type SeedTeam, TEAMS } from './reference-data.ts';
import { modelOf } from './sport-models.ts';
import { formatRecord, type Result, ranked, type TableLine, tableOf } from './standings.ts';

/**
 * The season of every listed sport as a pure function of `(seed, sport, season year)` (spec F: "a realistic schedule
 * from real league and team names"): its calendar, its regular season built the way the league builds it (daily
 * pairings, weekly rounds, double round-robins, college conference play, fight cards), the seeded fates of its games
 * with makeups of postponed ones, and its postseason (playoffs, bowls, tournaments, knockout ties) seeded from the
 * simulated standings. A plan is built once per season and kept (a few dozen per process); the simulator reads the
 * games of a day from it, the standings read its results.
 */

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

/** Midnight UTC of a calendar date (`month` 1-12). */
const utcDay = (year: number, month: number, day: number) => new Date(Date.UTC(year, month - 1, day));
const addDays = (d: Date, n: number) => new Date(d.getTime() + n * DAY_MS);
/** `day` (midnight UTC) plus `minutes` (may exceed a day: a US evening game starts after midnight UTC). */
const at = (day: Date, minutes: number) => new Date(day.getTime() + minutes * MINUTE_MS);
const hm = (h: number, m = 0) => h * 60 + m;
/** The UTC calendar date of an instant, `YYYY-MM-DD`. */
export const isoDate = (d: Date) => d.toISOString().slice(0, 10);
/** The first `weekday` (0 Sunday) on or after `d`. */
const onOrAfter = (d: Date, weekday: number) => addDays(d, (weekday - d.getUTCDay() + 7) % 7);
/** The `n`th `weekday` of a month (n = -1: the last). */
function nthWeekday(year: number, month: number, weekday: number, n: number): Date {
  if (n > 0) return addDays(onOrAfter(utcDay(year, month, 1), weekday), 7 * (n - 1));
  const last = utcDay(year, month + 1, 0);
  return addDays(last, -((last.getUTCDay() - weekday + 7) % 7));
}

/** A season's plan: every game, its event id and its outcome (null when never played). */
export interface SeasonPlan {
  sportId: number;
  year: number;
  games: ScheduledGame[];
  byDate: Map<string, ScheduledGame[]>;
  ids: Map<ScheduledGame, string>;
  outcomes: Map<ScheduledGame, Outcome | null>;
}

/** Where a postponed game may be made up: `minDays`..`maxDays` after it, at `minute` of that day (UTC), on a day
 * neither team plays within `rest` days of; before the last game of the regular season unless `pastLastRound` (a
 * league without playoffs adds a date after its last round). */
interface MakeupRule {
  minDays: number;
  maxDays: number;
  minute: number;
  rest: number;
  pastLastRound?: boolean;
}

/** What a league's planner works with. */
interface PlanContext {
  seed: string;
  sportId: number;
  year: number;
  teams: SeedTeam[];
  rand(...label: (string | number)[]): () => number;
}

/** How a league plays a season. */
interface League {
  /** First and last day (UTC) of the season starting in `year`; games may start up to a day after `last` (UTC). */
  window(year: number): { first: Date; last: Date };
  regular(ctx: PlanContext): ScheduledGame[];
  postseason?(ctx: PlanContext, played: Played): ScheduledGame[];
  makeup: MakeupRule;
}

/** The results of a plan so far, for a postseason to seed from. */
interface Played {
  /** The regular season's games (makeups included). */
  regular: readonly ScheduledGame[];
  outcome(g: ScheduledGame): Outcome | null;
  /** The table of `teams` over the played games among `games` (default: the regular season). */
  table(teams: readonly SeedTeam[], games?: readonly ScheduledGame[]): Map<number, TableLine>;
  /** When the last of `games` (default: the regular season) became final. */
  endOf(games?: readonly ScheduledGame[]): Date;
}

const game = (
  ctx: PlanContext,
  start: Date,
  away: SeedTeam,
  home: SeedTeam,
  extra: Partial<ScheduledGame> = {},
): ScheduledGame => ({
  sportId: ctx.sportId,
  start,
  away,
  home,
  gameNumber: null,
  gameType: null,
  index: 0,
  seasonYear: ctx.year,
  seasonType: 'Regular Season',
  ...extra,
});

function shuffled<T>(items: readonly T[], rand: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/**
 * The rounds of a single round-robin of `teams` (circle method): n - 1 rounds for an even n, n rounds (each with one
 * team idle) for an odd n; every pair meets once, home and away alternating. A pair is `[away, home]`.
 */
function roundRobin<T>(teams: readonly T[]): [T, T][][] {
  const list: (T | null)[] = teams.length % 2 === 0 ? [...teams] : [...teams, null];
  const n = list.length;
  const rounds: [T, T][][] = [];
  for (let r = 0; r < n - 1; r += 1) {
    const pairs: [T, T][] = [];
    for (let i = 0; i < n / 2; i += 1) {
      const a = list[i];
      const b = list[n - 1 - i];
      if (a === null || b === null || a === undefined || b === undefined) continue;
      pairs.push((r + i) % 2 === 0 ? [a, b] : [b, a]);
    }
    rounds.push(pairs);
    list.splice(1, 0, list.pop()!);
  }
  return rounds;
}

/** A double round-robin: the single one, then the same rounds with home and away swapped. */
const doubleRoundRobin = <T>(teams: readonly T[]): [T, T][][] => {
  const first = roundRobin(teams);
  return [...first, ...first.map((round) => round.map(([a, h]) => [h, a] as [T, T]))];
};

/**
 * Random pairs of `teams` for which `allowed(a, b)` holds (other conferences for non-conference games); a team left
 * without an allowed opponent sits out. A pair is `[away, home]`.
 */
function pairUp(
  teams: readonly SeedTeam[],
  rand: () => number,
  allowed: (a: SeedTeam, b: SeedTeam) => boolean,
) {
  const pool = shuffled(teams, rand);
  const pairs: [SeedTeam, SeedTeam][] = [];
  while (pool.length >= 2) {
    const a = pool.shift()!;
    const j = pool.findIndex((b) => allowed(a, b));
    if (j < 0) continue;
    const [b] = pool.splice(j, 1);
    pairs.push(rand() < 0.5 ? [a, b!] : [b!, a]);
  }
  return pairs;
}

// ---------------------------------------------------------------------------------------------------------------
// Daily leagues: NBA, NHL, MLB, WNBA. Each day of the window pairs the teams afresh (no team twice a day).
// ---------------------------------------------------------------------------------------------------------------

/** UTC start minutes of the day per daily sport (the count played that day is drawn first). */
function dailySlots(sportId: number, rand: () => number): number[] {
  switch (sportId) {
    case 4: {
      const n = 5 + Math.floor(rand() * 7);
      return [
        hm(0),
        hm(0, 30),
        hm(0, 30),
        hm(1),
        hm(1),
        hm(1, 30),
        hm(2),
        hm(2, 30),
        hm(3),
        hm(23),
        hm(23, 30),
      ].slice(0, n);
    }
    case 6: {
      const n = 4 + Math.floor(rand() * 8);
      return [
        hm(0),
        hm(0),
        hm(0, 30),
        hm(1),
        hm(1),
        hm(2),
        hm(2),
        hm(3),
        hm(3),
        hm(23),
        hm(23),
        hm(18),
      ].slice(0, n);
    }
    case 3: {
      const n = 12 + Math.floor(rand() * 3);
      const times = [
        hm(17, 5),
        hm(17, 35),
        hm(20, 10),
        hm(23, 5),
        hm(23, 5),
        hm(23, 10),
        hm(23, 40),
        hm(23, 45),
        hm(0, 10),
        hm(0, 40),
        hm(1, 10),
        hm(2, 10),
        hm(2, 40),
        hm(1, 40),
      ];
      return times.slice(0, n);
    }
    default: {
      const n = 1 + Math.floor(rand() * 4);
      return [hm(23), hm(23, 30), hm(0), hm(2), hm(2, 30), hm(19), hm(17)].slice(0, n);
    }
  }
}

/** A daily league: the season's days between two calendar dates, each with its own seeded pairing. */
function dailyLeague(window: (year: number) => { first: Date; last: Date }, makeupMinute: number): League {
  return {
    window,
    makeup: { minDays: 1, maxDays: 45, minute: makeupMinute, rest: 0 },
    regular(ctx) {
      const { first, last } = window(ctx.year);
      const games: ScheduledGame[] = [];
      for (let day = first; day <= last; day = addDays(day, 1)) games.push(...dailyGames(ctx, day));
      return games;
    },
  };
}

/**
 * The games of one day of a daily league: real teams paired without repeats at the league's usual UTC start times.
 * MLB days may carry a true doubleheader (the same teams twice, `game_number` 1 and 2) and a makeup game.
 */
function dailyGames(ctx: PlanContext, day: Date): ScheduledGame[] {
  const rand = seededRandom(ctx.seed, 'schedule', ctx.sportId, isoDate(day));
  const teams = shuffled(ctx.teams, rand);
  const starts = dailySlots(ctx.sportId, rand)
    .slice(0, Math.floor(teams.length / 2))
    .sort((a, b) => a - b);
  const games = starts.map((minutes, i) => game(ctx, at(day, minutes), teams[2 * i]!, teams[2 * i + 1]!));
  if (ctx.sportId === 3 && games.length > 2) {
    if (rand() < 0.35) {
      const first = games[0]!;
      first.gameNumber = 1;
      first.gameType = 'doubleheader';
      games.push({ ...first, start: new Date(first.start.getTime() + 4 * 3_600_000), gameNumber: 2 });
    }
    if (rand() < 0.25) games[1]!.gameType = 'makeup';
  }
  return games;
}

/** Every `md` (month * 100 + day) from `from` in `year` to `to` (the next year when earlier in the calendar). */
const between = (year: number, from: number, to: number) => ({
  first: utcDay(year, Math.floor(from / 100), from % 100),
  last: utcDay(to < from ? year + 1 : year, Math.floor(to / 100), to % 100),
});

// ---------------------------------------------------------------------------------------------------------------
// Knockouts: a bracket of teams resolved round by round from the simulated results.
// ---------------------------------------------------------------------------------------------------------------

/** A bracket: a team (a seed) or a tie between the winners of two brackets in round `round` (0 first). */
type Bracket = SeedTeam | { a: Bracket; b: Bracket; round: number };

/** A round of a knockout. */
interface KnockoutRound {
  name: string;
  /** Start of each tie's (first) game, used in the order the ties are resolved. */
  slots: Date[];
  /** Two legs, the second this many days after the first (soccer); absent: one game. */
  secondLegDays?: number;
  /** Neutral sites of the round's ties, in order (cycled); absent: the better seed hosts. */
  venues?: NeutralVenue[];
}

/**
 * Plays a knockout: resolves brackets depth first, creating each tie's games once its two teams are known (`knownAt`:
 * when the later feeder ended). The better-ranked team hosts a single game and the second leg; a two-legged soccer
 * tie goes to extra time and penalties in its second leg when the aggregate is level.
 */
class Knockout {
  readonly games: ScheduledGame[] = [];
  private readonly used: number[];

  constructor(
    private readonly ctx: PlanContext,
    private readonly played: Played,
    private readonly rank: Map<number, number>,
    private readonly rounds: KnockoutRound[],
    private readonly knownAt: Date,
  ) {
    this.used = rounds.map(() => 0);
  }

  /** The winner of `b` and when it was decided. */
  resolve(b: Bracket): { team: SeedTeam; at: Date } {
    if (!('a' in b)) return { team: b, at: this.knownAt };
    const x = this.resolve(b.a);
    const y = this.resolve(b.b);
    const round = this.rounds[b.round]!;
    const i = this.used[b.round]!;
    this.used[b.round] = i + 1;
    const start = round.slots[i % round.slots.length]!;
    const knownAt = new Date(Math.max(x.at.getTime(), y.at.getTime()));
    const rankOf = (t: SeedTeam) => this.rank.get(t.id) ?? 999;
    const [better, worse] = rankOf(x.team) <= rankOf(y.team) ? [x.team, y.team] : [y.team, x.team];
    const neutral = round.venues?.[i % round.venues.length];
    const extra: Partial<ScheduledGame> = { seasonType: 'Postseason', knownAt };
    if (neutral) {
      extra.venue = { name: neutral.venueName, location: neutral.venueLocation };
      extra.eventName = `${neutral.eventName}: ${teamLabel(worse)} vs ${teamLabel(better)}`;
    }
    if (round.secondLegDays === undefined) {
      const single = game(this.ctx, start, worse, better, { ...extra, knockout: { away: 0, home: 0 } });
      this.games.push(single);
      const o = this.played.outcome(single)!;
      return { team: o.advances === 'away' ? worse : better, at: o.finalAt };
    }
    const first = game(this.ctx, start, better, worse, extra);
    this.games.push(first);
    const o1 = this.played.outcome(first)!;
    const second = game(this.ctx, addDays(start, round.secondLegDays), worse, better, {
      ...extra,
      knockout: { away: o1.homeScore, home: o1.awayScore },
    });
    this.games.push(second);
    const o2 = this.played.outcome(second)!;
    return { team: o2.advances === 'away' ? worse : better, at: o2.finalAt };
  }
}

/** A bracket of seeds `order` (1-based positions into `seeds`) paired in twos, then the winners in twos, ... */
function balanced(seeds: SeedTeam[], order: number[], firstRound = 0): Bracket {
  let level: Bracket[] = order.map((s) => seeds[s - 1]!);
  let round = firstRound;
  while (level.length > 1) {
    const next: Bracket[] = [];
    for (let i = 0; i < level.length; i += 2) next.push({ a: level[i]!, b: level[i + 1]!, round });
    level = next;
    round += 1;
  }
  return level[0]!;
}

const teamLabel = (t: SeedTeam) => `${t.name} ${t.mascot}`.trim();

const rankMap = (teams: SeedTeam[]) => new Map(teams.map((t, i) => [t.id, i + 1]));

/** Slots: `count` starts cycling through `minutes` of `days` (each day's minutes in turn). */
function slotsOn(days: Date[], minutes: number[], count: number): Date[] {
  const out: Date[] = [];
  for (let i = 0; out.length < count; i += 1) {
    const day = days[Math.floor(i / minutes.length) % days.length]!;
    out.push(at(day, minutes[i % minutes.length]!));
  }
  return out.sort((a, b) => a.getTime() - b.getTime());
}

// ---------------------------------------------------------------------------------------------------------------
// NFL and CFL: weekly rounds, then playoffs.
// ---------------------------------------------------------------------------------------------------------------

/** NFL: week 1 on the Thursday after Labor Day (first Monday of September), 18 weeks, Super Bowl on the second Sunday
 * of February. */
const nflWeek1 = (year: number) => addDays(nthWeekday(year, 9, 1, 1), 3);
const superBowlDay = (year: number) => nthWeekday(year + 1, 2, 0, 2);

const NFL: League = {
  window: (year) => ({ first: nflWeek1(year), last: superBowlDay(year) }),
  makeup: { minDays: 1, maxDays: 9, minute: hm(24, 15), rest: 1 },
  regular(ctx) {
    // Every team has one bye, in weeks 5 to 14.
    const byeCounts = [2, 4, 4, 2, 4, 2, 4, 4, 2, 4];
    const byeOrder = shuffled(ctx.teams, ctx.rand('byes'));
    const byeWeek = new Map<number, number>();
    let k = 0;
    byeCounts.forEach((count, w) => {
      for (let i = 0; i < count; i += 1) byeWeek.set(byeOrder[k++]!.id, w + 4);
    });
    const games: ScheduledGame[] = [];
    for (let week = 0; week < 18; week += 1) {
      const thursday = addDays(nflWeek1(ctx.year), 7 * week);
      const sunday = addDays(thursday, 3);
      const playing = ctx.teams.filter((t) => byeWeek.get(t.id) !== week);
      const pairs = pairUp(playing, ctx.rand('week', week), () => true);
      const slots =
        week === 17
          ? pairs.map((_, i) => at(sunday, i < pairs.length - 3 ? hm(18) : hm(21, 25)))
          : [
              at(thursday, hm(24, 15)),
              ...Array.from({ length: pairs.length - 7 }, () => at(sunday, hm(18))),
              at(sunday, hm(21, 5)),
              at(sunday, hm(21, 5)),
              at(sunday, hm(21, 25)),
              at(sunday, hm(21, 25)),
              at(sunday, hm(24, 20)),
              at(sunday, hm(48, 15)),
            ];
      for (const [i, [a, h]] of pairs.entries()) games.push(game(ctx, slots[i]!, a, h));
    }
    return games;
  },
  postseason(ctx, played) {
    const table = played.table(ctx.teams);
    const lastSunday = addDays(nflWeek1(ctx.year), 7 * 17 + 3);
    const seedsOf = (conference: string) => {
      const lines = ranked(
        ctx.seed,
        2,
        [...table.values()].filter((l) => l.team.conference === conference),
      );
      const divisions = new Set(lines.map((l) => l.team.division));
      const winners = lines.filter((l) => lines.find((x) => x.team.division === l.team.division) === l);
      const wild = lines.filter((l) => !winners.includes(l)).slice(0, 7 - divisions.size);
      return [...winners, ...wild].map((l) => l.team);
    };
    const afc = seedsOf('AFC');
    const nfc = seedsOf('NFC');
    const rank = new Map<number, number>([...rankMap(afc), ...rankMap(nfc)]);
    const conferenceBracket = (s: SeedTeam[]): Bracket => ({
      a: { a: s[0]!, b: { a: s[3]!, b: s[4]!, round: 0 }, round: 1 },
      b: { a: { a: s[1]!, b: s[6]!, round: 0 }, b: { a: s[2]!, b: s[5]!, round: 0 }, round: 1 },
      round: 2,
    });
    const saturday = addDays(lastSunday, 6);
    const knockout = new Knockout(
      ctx,
      played,
      rank,
      [
        {
          name: 'Wild Card',
          slots: [
            at(saturday, hm(21, 30)),
            at(saturday, hm(25, 15)),
            at(saturday, hm(42)),
            at(saturday, hm(45, 30)),
            at(saturday, hm(49, 15)),
            at(saturday, hm(73, 15)),
          ],
        },
        {
          name: 'Divisional Round',
          slots: [
            at(addDays(saturday, 7), hm(21, 30)),
            at(addDays(saturday, 7), hm(25, 15)),
            at(addDays(saturday, 7), hm(44)),
            at(addDays(saturday, 7), hm(47, 30)),
          ],
        },
        {
          name: 'Conference Championship',
          slots: [at(addDays(saturday, 15), hm(20)), at(addDays(saturday, 15), hm(23, 30))],
        },
        {
          name: 'Super Bowl',
          slots: [at(superBowlDay(ctx.year), hm(23, 30))],
          venues: neutralVenues('nfl-super-bowl', ctx.year),
        },
      ],
      played.endOf(),
    );
    knockout.resolve({ a: conferenceBracket(afc), b: conferenceBracket(nfc), round: 3 });
    return knockout.games;
  },
};

/** CFL: 21 weeks from the first Thursday of June, four games a week (one team idle), three-team division playoffs. */
const cflWeek1 = (year: number) => nthWeekday(year, 6, 4, 1);
const CFL: League = {
  window: (year) => ({ first: cflWeek1(year), last: addDays(cflWeek1(year), 7 * 20 + 2 + 22) }),
  makeup: { minDays: 2, maxDays: 12, minute: hm(23, 30), rest: 3 },
  regular(ctx) {
    const base = roundRobin(shuffled(ctx.teams, ctx.rand('order')));
    const rounds = [
      ...base,
      ...base.map((r) => r.map(([a, h]) => [h, a] as [SeedTeam, SeedTeam])),
      ...base.slice(0, 3),
    ];
    const games: ScheduledGame[] = [];
    rounds.slice(0, 21).forEach((pairs, week) => {
      const thursday = addDays(cflWeek1(ctx.year), 7 * week);
      const slots = [hm(23, 30), hm(24 + 23, 30), hm(48 + 20), hm(48 + 23)];
      for (const [i, [a, h]] of pairs.entries()) games.push(game(ctx, at(thursday, slots[i % 4]!), a, h));
    });
    return games;
  },
  postseason(ctx, played) {
    const table = played.table(ctx.teams);
    const lastSaturday = addDays(cflWeek1(ctx.year), 7 * 20 + 2);
    const seeds = (division: string) =>
      ranked(
        ctx.seed,
        9,
        [...table.values()].filter((l) => l.team.division === division),
      )
        .slice(0, 3)
        .map((l) => l.team);
    const east = seeds('East Division');
    const west = seeds('West Division');
    const rank = new Map([...rankMap(east), ...rankMap(west)]);
    const knockout = new Knockout(
      ctx,
      played,
      rank,
      [
        {
          name: 'Division Semi-Final',
          slots: [at(addDays(lastSaturday, 7), hm(18)), at(addDays(lastSaturday, 7), hm(21, 30))],
        },
        {
          name: 'Division Final',
          slots: [at(addDays(lastSaturday, 15), hm(18)), at(addDays(lastSaturday, 15), hm(21, 30))],
        },
        {
          name: 'Grey Cup',
          slots: [at(addDays(lastSaturday, 22), hm(23))],
          venues: neutralVenues('cfl-grey-cup', ctx.year),
        },
      ],
      played.endOf(),
    );
    const division = (s: SeedTeam[]): Bracket => ({
      a: s[0]!,
      b: { a: s[1]!, b: s[2]!, round: 0 },
      round: 1,
    });
    knockout.resolve({ a: division(east), b: division(west), round: 2 });
    return knockout.games;
  },
};

// ---------------------------------------------------------------------------------------------------------------
// Soccer leagues: a double round-robin on weekends (and a few midweeks), international breaks and winter breaks off.
// ---------------------------------------------------------------------------------------------------------------

interface SoccerLeagueSpec {
  /** First matchday weekend: the Friday on or after this `md` (month * 100 + day). */
  opensAfter: number;
  /** Last weekend: the Friday on or before this `md` of the next year. */
  closesBefore: number;
  /** Weekend kick-offs, minutes after the Friday's midnight UTC, one per match of a round. */
  weekend: number[];
  /** Winter break: weekends whose Saturday falls in `[from, to]` (`md`) are off. */
  winterBreak?: [number, number];
}

/** International windows: weekends whose Saturday falls in these `md` ranges are off for the leagues. */
const INTERNATIONAL_BREAKS: [number, number][] = [
  [905, 911],
  [1010, 1016],
  [1114, 1120],
  [321, 327],
];
const mdOf = (d: Date) => (d.getUTCMonth() + 1) * 100 + d.getUTCDate();
const inRange = (md: number, [from, to]: [number, number]) =>
  from <= to ? md >= from && md <= to : md >= from || md <= to;

/** Round dates of a soccer league season: the Fridays of its match weekends and the Tuesdays of its midweek rounds. */
function soccerRoundDates(
  spec: SoccerLeagueSpec,
  year: number,
  rounds: number,
): { day: Date; midweek: boolean }[] {
  const opens = onOrAfter(utcDay(year, Math.floor(spec.opensAfter / 100), spec.opensAfter % 100), 5);
  const closesDay = utcDay(year + 1, Math.floor(spec.closesBefore / 100), spec.closesBefore % 100);
  const weekends: Date[] = [];
  const breaks: Date[] = [];
  for (let friday = opens; friday <= closesDay; friday = addDays(friday, 7)) {
    const md = mdOf(addDays(friday, 1));
    const off =
      INTERNATIONAL_BREAKS.some((r) => inRange(md, r)) || (spec.winterBreak && inRange(md, spec.winterBreak));
    (off ? breaks : weekends).push(friday);
  }
  const dates = weekends.slice(0, rounds).map((day) => ({ day, midweek: false }));
  const missing = rounds - dates.length;
  if (missing > 0) {
    // Midweek rounds on Tuesdays between October and April, spread evenly, never in a break week.
    const eligible = weekends
      .map((f) => addDays(f, 4))
      .filter((tue) => {
        const md = mdOf(tue);
        return (md >= 1001 || md <= 430) && tue < closesDay;
      });
    for (let i = 0; i < missing; i += 1)
      dates.push({ day: eligible[Math.floor(((i + 0.5) * eligible.length) / missing)]!, midweek: true });
  }
  return dates.sort((a, b) => a.day.getTime() - b.day.getTime());
}

function soccerLeague(spec: SoccerLeagueSpec): League {
  const window = (year: number) => {
    const first = onOrAfter(utcDay(year, Math.floor(spec.opensAfter / 100), spec.opensAfter % 100), 5);
    return {
      first,
      last: addDays(utcDay(year + 1, Math.floor(spec.closesBefore / 100), spec.closesBefore % 100), 4),
    };
  };
  return {
    window,
    makeup: { minDays: 2, maxDays: 60, minute: hm(19, 30), rest: 2, pastLastRound: true },
    regular(ctx) {
      const rounds = doubleRoundRobin(shuffled(ctx.teams, ctx.rand('order')));
      const dates = soccerRoundDates(spec, ctx.year, rounds.length);
      const games: ScheduledGame[] = [];
      rounds.forEach((pairs, r) => {
        const { day, midweek } = dates[r]!;
        pairs.forEach(([a, h], i) => {
          const start = midweek
            ? at(addDays(day, i < pairs.length / 2 ? 0 : 1), i % 2 === 0 ? hm(19, 30) : hm(20))
            : at(day, spec.weekend[i % spec.weekend.length]!);
          games.push(game(ctx, start, a, h));
        });
      });
      return games;
    },
  };
}

const fri = (h: number, m = 0) => hm(h, m);
const sat = (h: number, m = 0) => hm(24 + h, m);
const sun = (h: number, m = 0) => hm(48 + h, m);
const mon = (h: number, m = 0) => hm(72 + h, m);

// ---------------------------------------------------------------------------------------------------------------
// MLS: conference double round-robins plus six cross-conference rounds (34 games each), then conference playoffs.
// ---------------------------------------------------------------------------------------------------------------

/** The first MLS Saturday: the last Saturday of February. */
const mlsOpening = (year: number) => nthWeekday(year, 2, 6, -1);
/** Rounds played midweek (Wednesday) instead of a Saturday. */
const MLS_MIDWEEK_ROUNDS = new Set([8, 17, 26]);
const MLS_CROSS_ROUNDS = [3, 9, 15, 21, 27, 33];
const mlsLastSaturday = (year: number) => addDays(mlsOpening(year), 7 * (36 - MLS_MIDWEEK_ROUNDS.size - 1));

const MLS: League = {
  window: (year) => ({ first: mlsOpening(year), last: addDays(mlsLastSaturday(year), 49) }),
  makeup: { minDays: 2, maxDays: 21, minute: hm(23, 30), rest: 2 },
  regular(ctx) {
    const east = shuffled(
      ctx.teams.filter((t) => t.conference === 'Eastern Conference'),
      ctx.rand('east'),
    );
    const west = shuffled(
      ctx.teams.filter((t) => t.conference === 'Western Conference'),
      ctx.rand('west'),
    );
    const eastRounds = doubleRoundRobin(east);
    const westRounds = doubleRoundRobin(west);
    const offsets = shuffled(
      Array.from({ length: west.length }, (_, i) => i),
      ctx.rand('cross'),
    ).slice(0, MLS_CROSS_ROUNDS.length);
    const games: ScheduledGame[] = [];
    let conferenceRound = 0;
    let saturday = mlsOpening(ctx.year);
    for (let r = 0; r < 36; r += 1) {
      const midweek = MLS_MIDWEEK_ROUNDS.has(r);
      const day = midweek ? addDays(saturday, -3) : saturday;
      const cross = MLS_CROSS_ROUNDS.indexOf(r);
      const pairs: [SeedTeam, SeedTeam][] =
        cross >= 0
          ? east.map((e, i) => {
              const w = west[(i + offsets[cross]!) % west.length]!;
              return cross % 2 === 0 ? [w, e] : [e, w];
            })
          : [...eastRounds[conferenceRound]!, ...westRounds[conferenceRound++]!];
      const minutes = midweek
        ? [hm(23, 30), hm(26, 30)]
        : [
            hm(23, 30),
            hm(23, 30),
            hm(23, 30),
            hm(23, 30),
            hm(25, 30),
            hm(26, 30),
            hm(26, 30),
            hm(44),
            hm(47),
          ];
      for (const [i, [a, h]] of pairs.entries())
        games.push(game(ctx, at(day, minutes[i % minutes.length]!), a, h));
      if (!midweek) saturday = addDays(saturday, 7);
    }
    return games;
  },
  postseason(ctx, played) {
    const table = played.table(ctx.teams);
    const last = mlsLastSaturday(ctx.year);
    const seeds = (conference: string) =>
      ranked(
        ctx.seed,
        10,
        [...table.values()].filter((l) => l.team.conference === conference),
      )
        .slice(0, 9)
        .map((l) => l.team);
    const east = seeds('Eastern Conference');
    const west = seeds('Western Conference');
    // The better record (points) hosts, the final too: one order over both conferences.
    const rank = rankMap(ranked(ctx.seed, 10, table.values()).map((l) => l.team));
    const bracket = (s: SeedTeam[]): Bracket => ({
      a: {
        a: { a: s[0]!, b: { a: s[7]!, b: s[8]!, round: 0 }, round: 1 },
        b: { a: s[3]!, b: s[4]!, round: 1 },
        round: 2,
      },
      b: { a: { a: s[1]!, b: s[6]!, round: 1 }, b: { a: s[2]!, b: s[5]!, round: 1 }, round: 2 },
      round: 3,
    });
    const weekend = (days: number, minutes: number[], count: number) =>
      slotsOn([addDays(last, days), addDays(last, days + 1)], minutes, count);
    const knockout = new Knockout(
      ctx,
      played,
      rank,
      [
        { name: 'Wild Card', slots: [at(addDays(last, 4), hm(23, 30)), at(addDays(last, 4), hm(26, 30))] },
        { name: 'Round One', slots: weekend(7, [hm(19), hm(21, 30), hm(24), hm(26, 30)], 8) },
        { name: 'Conference Semifinals', slots: weekend(35, [hm(20), hm(23)], 4) },
        { name: 'Conference Finals', slots: weekend(42, [hm(20), hm(23)], 2) },
        { name: 'MLS Cup', slots: [at(addDays(last, 49), hm(20))] },
      ],
      played.endOf(),
    );
    knockout.resolve({ a: bracket(east), b: bracket(west), round: 4 });
    return knockout.games;
  },
};

// ---------------------------------------------------------------------------------------------------------------
// UEFA Champions League: a 36-team league phase (8 matchdays), then two-legged knockouts and a one-off final.
// ---------------------------------------------------------------------------------------------------------------

function uclDates(year: number) {
  const md1 = nthWeekday(year, 9, 2, 3);
  const md3 = nthWeekday(year, 10, 2, 3);
  const md7 = nthWeekday(year + 1, 1, 2, 3);
  const md6 = addDays(md3, 49);
  const matchdays = [
    md1,
    addDays(md1, 14),
    md3,
    addDays(md3, 14),
    addDays(md3, 35),
    md6,
    md7,
    addDays(md7, 7),
  ];
  const playoff = addDays(matchdays[7]!, 20);
  const r16 = addDays(playoff, 21);
  const qf = addDays(r16, 28);
  const sf = addDays(qf, 21);
  return { matchdays, playoff, r16, qf, sf, final: nthWeekday(year + 1, 5, 6, -1) };
}

const UCL: League = {
  window: (year) => ({ first: uclDates(year).matchdays[0]!, last: uclDates(year).final }),
  makeup: { minDays: 1, maxDays: 14, minute: hm(20), rest: 2 },
  regular(ctx) {
    const { matchdays } = uclDates(ctx.year);
    const rounds = roundRobin(shuffled(ctx.teams, ctx.rand('order'))).slice(0, 8);
    const games: ScheduledGame[] = [];
    rounds.forEach((pairs, md) => {
      pairs.forEach(([a, h], i) => {
        // Matchday 8 is played all at once on its Wednesday; the others on a Tuesday and a Wednesday.
        const day =
          md === 7 ? addDays(matchdays[md]!, 1) : addDays(matchdays[md]!, i < pairs.length / 2 ? 0 : 1);
        games.push(game(ctx, at(day, md !== 7 && i % 9 < 2 ? hm(17, 45) : hm(20)), a, h));
      });
    });
    return games;
  },
  postseason(ctx, played) {
    const d = uclDates(ctx.year);
    const order = ranked(ctx.seed, 16, played.table(ctx.teams).values()).map((l) => l.team);
    const two = (day: Date, count: number) => slotsOn([day, addDays(day, 1)], [hm(20)], count);
    const knockout = new Knockout(
      ctx,
      played,
      rankMap(order),
      [
        { name: 'Knockout Phase Play-offs', slots: two(d.playoff, 8), secondLegDays: 7 },
        { name: 'Round of 16', slots: two(d.r16, 8), secondLegDays: 7 },
        { name: 'Quarter-finals', slots: two(d.qf, 4), secondLegDays: 7 },
        { name: 'Semi-finals', slots: two(d.sf, 2), secondLegDays: 7 },
        { name: 'Final', slots: [at(d.final, hm(19))], venues: neutralVenues('ucl-final', ctx.year) },
      ],
      played.endOf(),
    );
    // Seeds 1-8 meet the play-off winners (9 v 24 ... 16 v 17); a fixed bracket from there.
    const r16 = (i: number): Bracket => ({
      a: order[i - 1]!,
      b: { a: order[16 - i]!, b: order[15 + i]!, round: 0 },
      round: 1,
    });
    const qf = (x: number, y: number): Bracket => ({ a: r16(x), b: r16(y), round: 2 });
    knockout.resolve({
      a: { a: qf(1, 8), b: qf(4, 5), round: 3 },
      b: { a: qf(2, 7), b: qf(3, 6), round: 3 },
      round: 4,
    });
    return knockout.games;
  },
};

// ---------------------------------------------------------------------------------------------------------------
// College football: Power Four conferences, non-conference weeks then conference play, championship games, bowls
// and a 12-team playoff.
// ---------------------------------------------------------------------------------------------------------------

/** Week 0: the last Saturday of August. */
const ncaafWeek0 = (year: number) => nthWeekday(year, 8, 6, -1);
/** Conference games per team. */
const NCAAF_CONFERENCE_GAMES: Record<string, number> = { SEC: 8, ACC: 8, 'Big Ten': 9, 'Big 12': 9 };
const NCAAF_SATURDAY = [
  hm(16),
  hm(16),
  hm(17),
  hm(19, 30),
  hm(19, 30),
  hm(20, 30),
  hm(23),
  hm(23, 30),
  hm(24),
  hm(24, 30),
  hm(27, 30),
];

const conferencesOf = (teams: SeedTeam[]) => [...new Set(teams.map((t) => t.conference))];

const NCAAF: League = {
  window: (year) => ({ first: addDays(ncaafWeek0(year), -2), last: nthWeekday(year + 1, 1, 1, 3) }),
  makeup: { minDays: 3, maxDays: 14, minute: hm(23, 30), rest: 2 },
  regular(ctx) {
    const games: ScheduledGame[] = [];
    const weekGames = (week: number, pairs: [SeedTeam, SeedTeam][]) => {
      const saturday = addDays(ncaafWeek0(ctx.year), 7 * week);
      const order = shuffled(pairs, ctx.rand('slots', week));
      order.forEach(([a, h], i) => {
        // One game on Thursday night and one on Friday night, the rest on Saturday.
        const start =
          i === 0
            ? at(addDays(saturday, -2), hm(23, 30))
            : i === 1
              ? at(addDays(saturday, -1), hm(24))
              : at(saturday, NCAAF_SATURDAY[(i - 2) % NCAAF_SATURDAY.length]!);
        games.push(game(ctx, start, a, h));
      });
    };
    // Weeks 0-3: non-conference games; a team with 9 conference games sits out one of them.
    const sitsOut = new Map<number, number>();
    for (const t of ctx.teams)
      if (NCAAF_CONFERENCE_GAMES[t.conference] === 9)
        sitsOut.set(t.id, Math.floor(hash01(ctx.seed, 'nc-bye', ctx.year, t.id) * 4));
    for (let week = 0; week < 4; week += 1) {
      const playing = ctx.teams.filter((t) => sitsOut.get(t.id) !== week);
      weekGames(
        week,
        pairUp(playing, ctx.rand('non-conference', week), (a, b) => a.conference !== b.conference),
      );
    }
    // Weeks 4-13: each conference plays its round-robin rounds, idle in the remaining weeks.
    const byWeek: [SeedTeam, SeedTeam][][] = Array.from({ length: 10 }, () => []);
    for (const conference of conferencesOf(ctx.teams)) {
      const members = shuffled(
        ctx.teams.filter((t) => t.conference === conference),
        ctx.rand('conference', conference),
      );
      const rounds = roundRobin(members).slice(0, NCAAF_CONFERENCE_GAMES[conference] ?? 8);
      const weeks = shuffled(
        Array.from({ length: 10 }, (_, i) => i),
        ctx.rand('conference-weeks', conference),
      )
        .slice(0, rounds.length)
        .sort((a, b) => a - b);
      for (const [r, pairs] of rounds.entries()) byWeek[weeks[r]!]!.push(...pairs);
    }
    for (const [w, pairs] of byWeek.entries()) weekGames(w + 4, pairs);
    return games;
  },
  postseason(ctx, played) {
    const regularEnd = played.endOf();
    const conferences = conferencesOf(ctx.teams);
    const championship = addDays(ncaafWeek0(ctx.year), 98);
    const ccgSlots = [hm(17), hm(21), hm(24), hm(25)];
    // Conference championships: the two best conference records meet at the conference's neutral site.
    const ccg: ScheduledGame[] = [];
    conferences.forEach((conference, i) => {
      const members = ctx.teams.filter((t) => t.conference === conference);
      const inConference = (g: ScheduledGame) =>
        g.away.conference === conference && g.home.conference === conference;
      const table = played.table(members, played.regular.filter(inConference));
      const [first, second] = ranked(ctx.seed, 1, table.values()).map((l) => l.team);
      const venue = neutralVenues(`ncaaf-conference-${conference}`, ctx.year)[0];
      ccg.push(
        game(ctx, at(championship, ccgSlots[i % ccgSlots.length]!), second!, first!, {
          seasonType: 'Postseason',
          knockout: { away: 0, home: 0 },
          knownAt: regularEnd,
          ...(venue
            ? {
                venue: { name: venue.venueName, location: venue.venueLocation },
                eventName: `${venue.eventName}: ${teamLabel(second!)} vs ${teamLabel(first!)}`,
              }
            : {}),
        }),
      );
    });
    const selection = played.endOf(ccg);
    const champions = ccg.map((g) => (played.outcome(g)!.advances === 'away' ? g.away : g.home));
    const afterCcg = played.table(ctx.teams, [...played.regular, ...ccg]);
    const byRecord = ranked(ctx.seed, 1, afterCcg.values()).map((l) => l.team);
    const field = [...champions, ...byRecord.filter((t) => !champions.includes(t))].slice(0, 12);
    const seeds = byRecord.filter((t) => field.includes(t));
    const y1 = ctx.year + 1;
    const firstRound = addDays(championship, 13);
    const knockout = new Knockout(
      ctx,
      played,
      rankMap(seeds),
      [
        {
          name: 'CFP First Round',
          slots: [
            at(firstRound, hm(25)),
            at(firstRound, hm(41)),
            at(firstRound, hm(45)),
            at(firstRound, hm(49)),
          ],
        },
        {
          name: 'CFP Quarterfinal',
          slots: [
            at(utcDay(y1, 1, 1), hm(0, 30)),
            at(utcDay(y1, 1, 1), hm(17)),
            at(utcDay(y1, 1, 1), hm(21)),
            at(utcDay(y1, 1, 2), hm(1)),
          ],
          venues: neutralVenues('ncaaf-cfp-quarterfinal', ctx.year),
        },
        {
          name: 'CFP Semifinal',
          slots: [at(utcDay(y1, 1, 9), hm(0, 30)), at(utcDay(y1, 1, 10), hm(0, 30))],
          venues: neutralVenues('ncaaf-cfp-semifinal', ctx.year),
        },
        {
          name: 'CFP National Championship',
          slots: [at(addDays(nthWeekday(y1, 1, 1, 3), 1), hm(0, 30))],
          venues: neutralVenues('ncaaf-cfp-final', ctx.year),
        },
      ],
      selection,
    );
    const s = seeds;
    const quarter = (top: number, x: number, y: number): Bracket => ({
      a: s[top - 1]!,
      b: { a: s[x - 1]!, b: s[y - 1]!, round: 0 },
      round: 1,
    });
    knockout.resolve({
      a: { a: quarter(1, 8, 9), b: quarter(4, 5, 12), round: 2 },
      b: { a: quarter(2, 7, 10), b: quarter(3, 6, 11), round: 2 },
      round: 3,
    });
    // Bowls: the other teams with six wins or more, paired by record (other conferences first), Dec 16-31.
    const bowlVenues = neutralVenues('ncaaf-bowl', ctx.year);
    const eligible = byRecord.filter((t) => !field.includes(t) && (afterCcg.get(t.id)?.wins ?? 0) >= 6);
    const bowls: ScheduledGame[] = [];
    const days = Array.from({ length: 16 }, (_, i) => utcDay(ctx.year, 12, 16 + i)).filter(
      (d) => d.getUTCDate() !== 24 && d.getUTCDate() !== 25,
    );
    const bowlTimes = [hm(19), hm(23), hm(26, 30)];
    while (eligible.length >= 2 && bowls.length < bowlVenues.length) {
      const a = eligible.shift()!;
      let j = eligible.findIndex((b) => b.conference !== a.conference);
      if (j < 0) j = 0;
      const [b] = eligible.splice(j, 1);
      const k = bowls.length;
      const venue = bowlVenues[k]!;
      const day = days[Math.floor((k * days.length) / bowlVenues.length)]!;
      bowls.push(
        game(ctx, at(day, bowlTimes[k % bowlTimes.length]!), b!, a, {
          seasonType: 'Postseason',
          knockout: { away: 0, home: 0 },
          knownAt: selection,
          venue: { name: venue.venueName, location: venue.venueLocation },
          eventName: `${venue.eventName}: ${teamLabel(b!)} vs ${teamLabel(a)}`,
        }),
      );
    }
    return [...ccg, ...knockout.games, ...bowls];
  },
};

// ---------------------------------------------------------------------------------------------------------------
// College basketball: non-conference play (November-December), conference double round-robins (January-March),
// then a 64-team NCAA tournament.
// ---------------------------------------------------------------------------------------------------------------

/** Final Four: the first Saturday of April (the final two days later). */
const finalFour = (year: number) => nthWeekday(year + 1, 4, 6, 1);
const ncaabOpening = (year: number) => nthWeekday(year, 11, 1, 1);
/** Conference games per team. */
const NCAAB_CONFERENCE_GAMES: Record<string, number> = {
  ACC: 20,
  'Big Ten': 20,
  'Big 12': 18,
  SEC: 18,
  'Big East': 20,
};
const NCAAB_TIMES = [hm(23), hm(24), hm(24, 30), hm(25), hm(26), hm(27), hm(17), hm(19), hm(21)];
/** The standard bracket order of seeds 1-16 in a region. */
const REGION_ORDER = [1, 16, 8, 9, 5, 12, 4, 13, 6, 11, 3, 14, 7, 10, 2, 15];

/** `count` days spread evenly from `first` to `last`. */
const spread = (first: Date, last: Date, count: number) =>
  Array.from({ length: count }, (_, i) =>
    addDays(first, Math.round((i * (last.getTime() - first.getTime())) / DAY_MS / Math.max(1, count - 1))),
  );

const NCAAB: League = {
  window: (year) => ({ first: ncaabOpening(year), last: addDays(finalFour(year), 2) }),
  makeup: { minDays: 2, maxDays: 10, minute: hm(24), rest: 1 },
  regular(ctx) {
    const games: ScheduledGame[] = [];
    const slotGames = (day: Date, pairs: [SeedTeam, SeedTeam][], label: string) => {
      for (const [i, [a, h]] of shuffled(pairs, ctx.rand('times', label)).entries())
        games.push(game(ctx, at(addDays(day, i % 2), NCAAB_TIMES[i % NCAAB_TIMES.length]!), a, h));
    };
    // Non-conference: 17 game days to December 22; each team plays about two in three of them.
    const nonConference = spread(ncaabOpening(ctx.year), utcDay(ctx.year, 12, 22), 17);
    nonConference.forEach((day, i) => {
      const rand = ctx.rand('non-conference', i);
      const playing = ctx.teams.filter(() => rand() < 0.7);
      slotGames(
        day,
        pairUp(playing, rand, (a, b) => a.conference !== b.conference),
        `nc${i}`,
      );
    });
    // Conference play: 22 game days from December 30 to the Saturday twelve days before the tournament.
    const regularEnd = addDays(finalFour(ctx.year), -28);
    const conferenceDays = spread(utcDay(ctx.year, 12, 30), regularEnd, 22);
    const byDay: [SeedTeam, SeedTeam][][] = conferenceDays.map(() => []);
    for (const conference of conferencesOf(ctx.teams)) {
      const members = shuffled(
        ctx.teams.filter((t) => t.conference === conference),
        ctx.rand('conference', conference),
      );
      const quota = NCAAB_CONFERENCE_GAMES[conference] ?? 18;
      // An odd-sized conference has one team idle per round: a double round-robin of 11 is 22 rounds of 20 games each.
      const rounds = doubleRoundRobin(members).slice(
        0,
        members.length % 2 === 0 ? quota : (quota * members.length) / (members.length - 1),
      );
      for (const [r, pairs] of rounds.entries())
        byDay[Math.floor((r * conferenceDays.length) / rounds.length)]!.push(...pairs);
    }
    for (const [i, pairs] of byDay.entries()) slotGames(conferenceDays[i]!, pairs, `c${i}`);
    return games;
  },
  postseason(ctx, played) {
    const order = ranked(ctx.seed, 5, played.table(ctx.teams).values())
      .slice(0, 64)
      .map((l) => l.team);
    // Four regions, seed lines by overall rank (serpentine over the regions).
    const regions: SeedTeam[][] = [[], [], [], []];
    order.forEach((t, r) => {
      const line = Math.floor(r / 4);
      regions[line % 2 === 0 ? r % 4 : 3 - (r % 4)]!.push(t);
    });
    const f4 = finalFour(ctx.year);
    const sites = neutralVenues('ncaab-tournament', ctx.year);
    const finalSite = neutralVenues('ncaab-final-four', ctx.year);
    const two = (offset: number, count: number, times: number[]) =>
      slotsOn([addDays(f4, offset), addDays(f4, offset + 1)], times, count);
    const early = [
      hm(16, 15),
      hm(18, 45),
      hm(21, 15),
      hm(23, 45),
      hm(25, 10),
      hm(26, 40),
      hm(19, 10),
      hm(24, 30),
    ];
    const knockout = new Knockout(
      ctx,
      played,
      rankMap(order),
      [
        { name: 'First Round', slots: two(-16, 32, early), venues: sites },
        { name: 'Second Round', slots: two(-14, 16, early), venues: sites },
        { name: 'Sweet 16', slots: two(-9, 8, [hm(23, 10), hm(25, 40)]), venues: sites },
        { name: 'Elite Eight', slots: two(-7, 4, [hm(22, 10), hm(24, 50)]), venues: sites },
        {
          name: 'Final Four',
          slots: [at(f4, hm(22, 10)), at(f4, hm(24, 50))],
          venues: finalSite,
        },
        {
          name: 'National Championship',
          slots: [at(addDays(f4, 3), hm(1, 20))],
          venues: finalSite.map((v) => ({ ...v, eventName: 'National Championship' })),
        },
      ],
      played.endOf(),
    );
    const region = (r: SeedTeam[]) => balanced(r, REGION_ORDER);
    knockout.resolve({
      a: { a: region(regions[0]!), b: region(regions[3]!), round: 4 },
      b: { a: region(regions[1]!), b: region(regions[2]!), round: 4 },
      round: 5,
    });
    return knockout.games;
  },
};

// ---------------------------------------------------------------------------------------------------------------
// MMA: a fight night most Saturdays, bouts within weight classes, fighters back every six weeks.
// ---------------------------------------------------------------------------------------------------------------

/** Weeks a fighter waits at least between bouts. */
const FIGHT_REST_WEEKS = 6;
/** Fighters of the sport by weight class. */
const weightClasses = (teams: SeedTeam[]) => {
  const by = new Map<string, SeedTeam[]>();
  for (const t of teams) by.set(t.division, [...(by.get(t.division) ?? []), t]);
  return [...by.values()];
};

const MMA: League = {
  window: (year) => ({ first: utcDay(year, 1, 1), last: utcDay(year, 12, 31) }),
  makeup: { minDays: 1, maxDays: 1, minute: 0, rest: 99 },
  regular(ctx) {
    const games: ScheduledGame[] = [];
    const model = modelOf(7);
    const strength = (t: SeedTeam) => strengthOf(ctx.seed, model, t);
    /** Week of each fighter's last bout this year; before the first, a seeded week of the first six. */
    const lastBout = new Map<number, number>(
      ctx.teams.map((f) => [
        f.id,
        Math.floor(hash01(ctx.seed, 'first-bout', ctx.year, f.id) * FIGHT_REST_WEEKS) - FIGHT_REST_WEEKS,
      ]),
    );
    let week = 0;
    for (
      let saturday = onOrAfter(utcDay(ctx.year, 1, 1), 6);
      saturday.getUTCFullYear() === ctx.year;
      saturday = addDays(saturday, 7)
    ) {
      week += 1;
      const date = isoDate(saturday);
      if (hash01(ctx.seed, 'card', date) < 0.15) continue;
      const bouts: [SeedTeam, SeedTeam][] = [];
      for (const fighters of weightClasses(ctx.teams)) {
        // One bout per weight class: the two rested fighters waiting longest (the others wait for the next card).
        const rested = fighters
          .filter((f) => week - lastBout.get(f.id)! >= FIGHT_REST_WEEKS)
          .sort((a, b) => lastBout.get(a.id)! - lastBout.get(b.id)!);
        const available = rested.slice(0, Math.min(rested.length - (rested.length % 2), 2));
        for (const [a, b] of pairUp(available, ctx.rand('bouts', date, fighters[0]!.division), () => true)) {
          lastBout.set(a.id, week);
          lastBout.set(b.id, week);
          // The red corner (home) is the stronger fighter.
          bouts.push(strength(a) <= strength(b) ? [a, b] : [b, a]);
        }
      }
      if (bouts.length === 0) continue;
      // Weakest pairings open the card; the strongest is the five-round main event.
      const power = ([a, b]: [SeedTeam, SeedTeam]) => strength(a) + strength(b);
      bouts.sort((x, y) => power(x) - power(y));
      const numbered = saturday.getUTCDate() >= 8 && saturday.getUTCDate() <= 14;
      const venues = numbered ? FIGHT_VENUES.filter((v) => v.venueName !== 'UFC APEX') : FIGHT_VENUES;
      const venue = venues[Math.floor(hash01(ctx.seed, 'card-venue', date) * venues.length)]!;
      const months = (ctx.year - 2024) * 12 + saturday.getUTCMonth() - 3;
      const card = numbered ? `UFC ${300 + months}` : 'UFC Fight Night';
      const mainCard = Math.min(5, bouts.length);
      bouts.forEach(([blue, red], i) => {
        const fromMain = i - (bouts.length - mainCard);
        const minute = venue.mainCardMinute + (fromMain >= 0 ? fromMain * 28 : fromMain * 25);
        games.push(
          game(ctx, at(saturday, minute), blue, red, {
            eventName: `${card}: ${red.name} vs ${blue.name}`,
            venue: { name: venue.venueName, location: venue.venueLocation },
            rounds: i === bouts.length - 1 ? 5 : 3,
          }),
        );
      });
    }
    return games;
  },
};

// ---------------------------------------------------------------------------------------------------------------

const LEAGUES: Record<number, League> = {
  1: NCAAF,
  2: NFL,
  3: dailyLeague((year) => between(year, 326, 1001), hm(17, 5)),
  4: dailyLeague((year) => between(year, 1020, 615), hm(0)),
  5: NCAAB,
  6: dailyLeague((year) => between(year, 1020, 615), hm(0)),
  7: MMA,
  8: dailyLeague((year) => between(year, 516, 1010), hm(23)),
  9: CFL,
  10: MLS,
  11: soccerLeague({
    opensAfter: 814,
    closesBefore: 522,
    weekend: [
      fri(20),
      sat(12, 30),
      sat(15),
      sat(15),
      sat(15),
      sat(17, 30),
      sun(14),
      sun(14),
      sun(16, 30),
      mon(20),
    ],
  }),
  12: soccerLeague({
    opensAfter: 814,
    closesBefore: 515,
    weekend: [
      fri(19, 45),
      sat(16),
      sat(18),
      sat(20, 5),
      sun(14),
      sun(16, 15),
      sun(16, 15),
      sun(16, 15),
      sun(19, 45),
    ],
    winterBreak: [1221, 102],
  }),
  13: soccerLeague({
    opensAfter: 821,
    closesBefore: 515,
    weekend: [
      fri(19, 30),
      sat(14, 30),
      sat(14, 30),
      sat(14, 30),
      sat(14, 30),
      sat(14, 30),
      sat(17, 30),
      sun(14, 30),
      sun(16, 30),
    ],
    winterBreak: [1220, 109],
  }),
  14: soccerLeague({
    opensAfter: 814,
    closesBefore: 522,
    weekend: [
      fri(20),
      sat(13),
      sat(15, 15),
      sat(17, 30),
      sat(20),
      sun(13),
      sun(15, 15),
      sun(17, 30),
      sun(20),
      mon(20),
    ],
  }),
  15: soccerLeague({
    opensAfter: 821,
    closesBefore: 522,
    weekend: [
      fri(19, 45),
      sat(14),
      sat(17),
      sat(19, 45),
      sun(11, 30),
      sun(14),
      sun(14),
      sun(17),
      sun(19, 45),
      mon(19, 45),
    ],
  }),
  16: UCL,
};

/** The first and last day of the season of `sportId` starting in `year` (games may start up to a day later, UTC). */
export function seasonWindow(sportId: number, year: number): { first: Date; last: Date } {
  const league = LEAGUES[sportId];
  if (!league) throw new Error(`no league calendar for sport ${sportId}`);
  return league.window(year);
}

/** How long after its last round a league without playoffs may still make up a postponed game. */
const MAKEUP_PAST_LAST_ROUND_DAYS = 14;

/** Makeups: each postponed game is played again (a new event) on the first day its rule allows, if any. */
function addMakeups(
  league: League,
  plan: { seed: string; ids: Map<ScheduledGame, string> },
  games: ScheduledGame[],
): ScheduledGame[] {
  const busy = new Map<number, Set<string>>();
  const book = (team: SeedTeam, d: Date) =>
    busy.set(team.id, (busy.get(team.id) ?? new Set()).add(isoDate(d)));
  for (const g of games) {
    book(g.away, g.start);
    book(g.home, g.start);
  }
  const lastDay = games.reduce((m, g) => (g.start > m ? g.start : m), games[0]?.start ?? new Date(0));
  const makeups: ScheduledGame[] = [];
  const { minDays, maxDays, minute, rest, pastLastRound } = league.makeup;
  for (const g of games) {
    if (g.fate?.kind !== 'postponed') continue;
    const day0 = new Date(Date.UTC(g.start.getUTCFullYear(), g.start.getUTCMonth(), g.start.getUTCDate()));
    for (let n = minDays; n <= maxDays; n += 1) {
      const day = addDays(day0, n);
      const start = at(day, minute);
      if (start > (pastLastRound ? addDays(lastDay, MAKEUP_PAST_LAST_ROUND_DAYS) : lastDay)) break;
      const free = (t: SeedTeam) => {
        for (let r = -rest; r <= rest; r += 1)
          if (busy.get(t.id)?.has(isoDate(addDays(day, r)))) return false;
        return true;
      };
      if (!free(g.away) || !free(g.home)) continue;
      const makeup: ScheduledGame = {
        ...g,
        start,
        gameNumber: null,
        gameType: g.sportId === 3 ? 'makeup' : null,
        makeupOf: plan.ids.get(g)!,
        knownAt: g.fate.at,
        fate: undefined,
      };
      const id = eventIdOf(plan.seed, makeup);
      plan.ids.set(makeup, id);
      makeup.fate = drawFate(plan.seed, makeup, id);
      book(g.away, start);
      book(g.home, start);
      makeups.push(makeup);
      break;
    }
  }
  return makeups;
}

/** Builds the season plan of `sportId` starting in `year` for `seed` (see the module comment). */
function buildPlan(seed: string, sportId: number, year: number): SeasonPlan {
  const league = LEAGUES[sportId]!;
  const ctx: PlanContext = {
    seed,
    sportId,
    year,
    teams: TEAMS.filter((t) => t.sportId === sportId),
    rand: (...label) => seededRandom(seed, 'season', sportId, year, ...label),
  };
  const ids = new Map<ScheduledGame, string>();
  const outcomes = new Map<ScheduledGame, Outcome | null>();
  const identify = (g: ScheduledGame) => {
    let id = ids.get(g);
    if (id === undefined) {
      id = eventIdOf(seed, g);
      ids.set(g, id);
      g.fate ??= drawFate(seed, g, id);
    }
    return id;
  };
  const regular = league.regular(ctx);
  for (const g of regular) identify(g);
  regular.push(...addMakeups(league, { seed, ids }, regular));
  const outcome = (g: ScheduledGame) => {
    if (!outcomes.has(g)) outcomes.set(g, outcomeOf(seed, g, identify(g)));
    return outcomes.get(g)!;
  };
  const results = (games: readonly ScheduledGame[]) =>
    games.flatMap((g) => {
      const o = outcome(g);
      return o ? [{ game: g, outcome: o }] : [];
    });
  const played: Played = {
    regular,
    outcome,
    table: (teams, games = regular) => tableOf(teams, results(games)),
    endOf(games = regular) {
      return new Date(results(games).reduce((m, r) => Math.max(m, r.outcome.finalAt.getTime()), 0));
    },
  };
  const post = league.postseason?.(ctx, played) ?? [];
  for (const g of post) identify(g);
  const games = [...regular, ...post];
  for (const g of games) outcome(g);
  games.sort((a, b) => a.start.getTime() - b.start.getTime());
  const byDate = new Map<string, ScheduledGame[]>();
  for (const g of games) {
    const date = isoDate(g.start);
    const day = byDate.get(date) ?? [];
    g.index = day.length;
    day.push(g);
    byDate.set(date, day);
  }
  return { sportId, year, games, byDate, ids, outcomes };
}

/** Plans kept per process (oldest dropped first): a few seasons of every sport for a few seeds. */
const MAX_PLANS = 96;
const plans = new Map<string, SeasonPlan>();

/** The season plan of `sportId` starting in `year` for `seed`, built once and kept. */
export function seasonPlan(seed: string, sportId: number, year: number): SeasonPlan {
  const key = `${seed}|${sportId}|${year}`;
  let plan = plans.get(key);
  if (plan) {
    plans.delete(key);
    plans.set(key, plan);
    return plan;
  }
  plan = buildPlan(seed, sportId, year);
  plans.set(key, plan);
  if (plans.size > MAX_PLANS) plans.delete(plans.keys().next().value!);
  return plan;
}

/** The season of `sportId` under way (or last finished) at `now`: the latest whose first day is not after it. */
export function currentSeasonYear(sportId: number, now: Date): number {
  let year = now.getUTCFullYear();
  while (seasonWindow(sportId, year).first > now) year -= 1;
  return year;
}

/**
 * The games of sport `sportId` starting on the UTC day `date` (`YYYY-MM-DD`) for `seed`, in start order; empty out of
 * season. Postseason games and makeups are included even before their teams are known (`knownAt`).
 */
export function scheduleFor(seed: string, sportId: number, date: string): ScheduledGame[] {
  if (!LEAGUES[sportId]) return [];
  const day = new Date(`${date}T00:00:00Z`);
  const games: ScheduledGame[] = [];
  for (const year of [day.getUTCFullYear() - 1, day.getUTCFullYear()]) {
    const { first, last } = seasonWindow(sportId, year);
    // Games may start a day after the window (UTC), and a league may make up a game after its last round.
    if (day < addDays(first, -1) || day > addDays(last, MAKEUP_PAST_LAST_ROUND_DAYS + 2)) continue;
    games.push(...(seasonPlan(seed, sportId, year).byDate.get(date) ?? []));
  }
  return games;
}

/** Per plan: its counted results in the order they became final, and the records last computed from them. */
const recordMemo = new WeakMap<
  SeasonPlan,
  { results: Result[]; counted: number; records: Map<number, string> }
>();

/**
 * Every team's record of sport `sportId` at `now` (`teams[].record`, in the sport's format), from the simulated results
 * of the season under way (or the last one, until the next begins): the games final by `now`, the regular season only
 * unless the sport's records count its postseason (college, MMA, the Champions League). Computed again only when
 * another game has become final since the last call.
 */
export function recordsAt(seed: string, sportId: number, now: Date): Map<number, string> {
  const m = modelOf(sportId);
  const plan = seasonPlan(seed, sportId, currentSeasonYear(sportId, now));
  let memo = recordMemo.get(plan);
  if (!memo) {
    const results: Result[] = [];
    for (const g of plan.games) {
      if (!m.recordCountsPostseason && g.seasonType === 'Postseason') continue;
      const outcome = plan.outcomes.get(g);
      if (outcome) results.push({ game: g, outcome });
    }
    results.sort((a, b) => a.outcome.finalAt.getTime() - b.outcome.finalAt.getTime());
    memo = { results, counted: -1, records: new Map() };
    recordMemo.set(plan, memo);
  }
  // The results final by now: a prefix of the list (binary search).
  let lo = 0;
  let hi = memo.results.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (memo.results[mid]!.outcome.finalAt <= now) lo = mid + 1;
    else hi = mid;
  }
  if (lo !== memo.counted) {
    const table = tableOf(
      TEAMS.filter((t) => t.sportId === sportId),
      memo.results.slice(0, lo),
    );
    memo.records = new Map([...table.values()].map((l) => [l.team.id, formatRecord(m.record, l)]));
    memo.counted = lo;
  }
  return memo.records;
}
