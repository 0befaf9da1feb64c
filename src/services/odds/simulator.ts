import { createHash } from 'node:crypto';
import type { EventInput, EventUpdate, MarketInput, PriceInput } from './odds-writer.ts';
import type { EventStatus } from './reference-data.ts';
import { LEAGUE_NAMES, PLAYERS, type SeedTeam, SPORTSBOOKS, TEAMS } from './reference-data.ts';

/**
 * The feed simulator's model (spec F, "where the data comes from"): a realistic schedule from real league and team
 * names, prices per sportsbook that are consistent (two-way and three-way moneylines with each book's margin, spreads
 * and totals around a main line with alternates, team totals and player props), prices that move over time, and
 * events that move through their statuses and scores to `STATUS_FINAL`.
 *
 * Everything is a pure function of `(seed, event, time)`: the same seed and clock give the same schedule, prices and
 * scores, so tests can assert on them and several workers agree. {@link eventStateAt} is the whole state of an event at
 * an instant; the service writes the difference to the database (the change log records every move).
 */

/** Minutes per price bucket: a sportsbook re-prices at most once per bucket. */
export const PRICE_BUCKET_MINUTES = 10;
/** Chance per price bucket that a walk steps down (and, the same, up). */
export const STEP_PROBABILITY = 0.1;
/** Markets open this long before the start. */
export const MARKETS_OPEN_HOURS = 24;

/** Deterministic number in [0, 1) from the parts. */
export function hash01(...parts: (string | number)[]): number {
  const h = createHash('sha256').update(parts.join('|')).digest();
  return h.readUInt32BE(0) / 2 ** 32;
}

function hashHex(...parts: (string | number)[]): string {
  return createHash('sha256').update(parts.join('|')).digest('hex');
}

/** A small seeded PRNG (mulberry32). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Standard normal CDF (Abramowitz-Stegun 7.1.26). */
function phi(x: number): number {
  const t = 1 / (1 + 0.3275911 * Math.abs(x / Math.SQRT2));
  const y =
    1 -
    ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) *
      t *
      Math.exp(-(x * x) / 2);
  return x >= 0 ? (1 + y) / 2 : (1 - y) / 2;
}

/**
 * American odds from an implied probability (already including the book's margin), rounded to 5 cents like US books
 * (Pinnacle and LowVig to 1). `q` 0.5 gives -100; favourites are <= -100, underdogs >= +100.
 */
export function americanFromProbability(q: number, step = 5): number {
  const p = Math.min(0.985, Math.max(0.015, q));
  if (p >= 0.5) {
    const v = -Math.round((100 * p) / (1 - p) / step) * step;
    return Math.min(-100, v);
  }
  const v = Math.round((100 * (1 - p)) / p / step) * step;
  return Math.max(100, v);
}

/** Implied probability of American odds. */
export function probabilityFromAmerican(price: number): number {
  return price < 0 ? -price / (-price + 100) : 100 / (price + 100);
}

/** One segment of a game's timeline: a period of play or a break. */
interface Segment {
  status: EventStatus;
  minutes: number;
  period: number;
}

/** Sport rules of the simulator. */
interface SportModel {
  sportId: number;
  periods: number;
  periodMinutes: number;
  breakAfter: Record<number, { status: EventStatus; minutes: number }>;
  /** Mean total and standard deviation of the final total; standard deviation of the margin. */
  meanTotal: number;
  sdTotal: number;
  sdMargin: number;
  /** Home advantage in points. */
  homeEdge: number;
  /** Line step (0.5) and alternates offsets for spreads and totals. */
  spreadAlternates: number[];
  totalAlternates: number[];
  draws: boolean;
  overtimeMinutes: number;
  broadcast: string[];
  /** Number of books pricing it (soccer: fewer) and how many carry alternates. */
  books: number[];
  alternateBooks: number[];
}

const ALL_BOOKS = SPORTSBOOKS.map((b) => b.id);

const MODELS: Record<number, SportModel> = {
  4: {
    sportId: 4,
    periods: 4,
    periodMinutes: 32,
    breakAfter: {
      1: { status: 'STATUS_END_PERIOD', minutes: 3 },
      2: { status: 'STATUS_HALFTIME', minutes: 15 },
      3: { status: 'STATUS_END_PERIOD', minutes: 3 },
    },
    meanTotal: 226,
    sdTotal: 18,
    sdMargin: 12,
    homeEdge: 2.5,
    spreadAlternates: [-2, -1, 1, 2],
    totalAlternates: [-5, 5],
    draws: false,
    overtimeMinutes: 12,
    broadcast: ['ESPN', 'TNT', 'NBA TV', 'Prime Video', 'NBC'],
    books: ALL_BOOKS,
    alternateBooks: ALL_BOOKS,
  },
  2: {
    sportId: 2,
    periods: 4,
    periodMinutes: 45,
    breakAfter: {
      1: { status: 'STATUS_END_PERIOD', minutes: 3 },
      2: { status: 'STATUS_HALFTIME', minutes: 20 },
      3: { status: 'STATUS_END_PERIOD', minutes: 3 },
    },
    meanTotal: 45,
    sdTotal: 10,
    sdMargin: 13,
    homeEdge: 1.5,
    spreadAlternates: [-1, 1],
    totalAlternates: [-3, 3],
    draws: false,
    overtimeMinutes: 25,
    broadcast: ['CBS', 'FOX', 'NBC', 'ESPN', 'Prime Video'],
    books: ALL_BOOKS,
    alternateBooks: ALL_BOOKS,
  },
  3: {
    sportId: 3,
    periods: 9,
    periodMinutes: 19,
    breakAfter: {},
    meanTotal: 8.6,
    sdTotal: 3,
    sdMargin: 4,
    homeEdge: 0.2,
    spreadAlternates: [1],
    totalAlternates: [-1, 1],
    draws: false,
    overtimeMinutes: 20,
    broadcast: ['ESPN', 'FOX', 'TBS', 'Apple TV', 'MLB Network'],
    books: ALL_BOOKS,
    alternateBooks: ALL_BOOKS,
  },
  6: {
    sportId: 6,
    periods: 3,
    periodMinutes: 36,
    breakAfter: {
      1: { status: 'STATUS_END_PERIOD', minutes: 18 },
      2: { status: 'STATUS_END_PERIOD', minutes: 18 },
    },
    meanTotal: 6.1,
    sdTotal: 2.3,
    sdMargin: 2.5,
    homeEdge: 0.2,
    spreadAlternates: [1],
    totalAlternates: [-1, 1],
    draws: false,
    overtimeMinutes: 12,
    broadcast: ['ESPN', 'TNT', 'NHL Network', 'Sportsnet'],
    books: ALL_BOOKS,
    alternateBooks: ALL_BOOKS,
  },
  11: {
    sportId: 11,
    periods: 2,
    periodMinutes: 49,
    breakAfter: { 1: { status: 'STATUS_HALFTIME', minutes: 15 } },
    meanTotal: 2.8,
    sdTotal: 1.6,
    sdMargin: 1.7,
    homeEdge: 0.3,
    spreadAlternates: [-1, 1],
    totalAlternates: [-1, 1],
    draws: true,
    overtimeMinutes: 0,
    broadcast: ['NBC', 'Peacock', 'USA Network', 'Sky Sports', 'TNT Sports'],
    books: [2, 3, 6, 7, 19, 22, 23, 25],
    alternateBooks: [3, 19, 23],
  },
};

/** Sports the simulator schedules. */
export const SIMULATED_SPORTS = Object.keys(MODELS).map(Number);

/** The simulator's model of one event, stored with it (`events.simulation`). */
export interface SimulationModel {
  seed: string;
  /** Expected home margin and total at the open. */
  margin: number;
  total: number;
  /** Final scores per period (regulation, then overtime when any). */
  away: number[];
  home: number[];
  overtime: boolean;
  /** Props: player id, stat market id, base line. */
  props: { playerId: number; name: string; marketId: number; base: number }[];
}

/** A scheduled game before it is an event. */
export interface ScheduledGame {
  sportId: number;
  start: Date;
  away: SeedTeam;
  home: SeedTeam;
  gameNumber: number | null;
  gameType: 'doubleheader' | 'makeup' | 'doubleheader_makeup' | null;
  index: number;
}

function inSeason(sportId: number, month: number, day: number): boolean {
  const md = month * 100 + day;
  switch (sportId) {
    case 4:
    case 6:
      return md >= 1020 || md <= 615;
    case 2:
      return md >= 905 || md <= 210;
    case 3:
      return md >= 326 && md <= 1001;
    case 11:
      return md >= 815 || md <= 524;
    default:
      return false;
  }
}

/** UTC start minutes of the day per sport and weekday (0 Sunday). */
function slots(sportId: number, weekday: number, rand: () => number): number[] {
  const at = (h: number, m = 0) => h * 60 + m;
  switch (sportId) {
    case 4: {
      const n = 5 + Math.floor(rand() * 7);
      const times = [
        at(0),
        at(0, 30),
        at(0, 30),
        at(1),
        at(1),
        at(1, 30),
        at(2),
        at(2, 30),
        at(3),
        at(23),
        at(23, 30),
      ];
      return times.slice(0, n);
    }
    case 6: {
      const n = 4 + Math.floor(rand() * 8);
      const times = [
        at(0),
        at(0),
        at(0, 30),
        at(1),
        at(1),
        at(2),
        at(2),
        at(3),
        at(3),
        at(23),
        at(23),
        at(18),
      ];
      return times.slice(0, n);
    }
    case 3: {
      const n = 12 + Math.floor(rand() * 3);
      const times = [
        at(17, 5),
        at(17, 35),
        at(20, 10),
        at(23, 5),
        at(23, 5),
        at(23, 10),
        at(23, 40),
        at(23, 45),
        at(0, 10),
        at(0, 40),
        at(1, 10),
        at(2, 10),
        at(2, 40),
        at(1, 40),
      ];
      return times.slice(0, n);
    }
    case 2:
      if (weekday === 0) return [...Array(9).fill(at(18)), at(21, 5), at(21, 5), at(21, 25), at(21, 25)];
      if (weekday === 1) return [at(1, 20)];
      if (weekday === 2 || weekday === 5) return [at(1, 15)];
      return [];
    case 11:
      if (weekday === 6) return [at(12, 30), at(15), at(15), at(15), at(15), at(17, 30)];
      if (weekday === 0) return [at(14), at(14), at(14), at(16, 30)];
      if (weekday === 1) return [at(20)];
      return [];
    default:
      return [];
  }
}

/**
 * The games of sport `sportId` starting on the UTC day `date` (`YYYY-MM-DD`) for `seed`: real teams paired without
 * repeats, realistic start times for the league and weekday, in season only. MLB days may carry a true doubleheader
 * (the same teams twice, `game_number` 1 and 2) and a makeup game.
 */
export function scheduleFor(seed: string, sportId: number, date: string): ScheduledGame[] {
  const day = new Date(`${date}T00:00:00Z`);
  if (!MODELS[sportId] || !inSeason(sportId, day.getUTCMonth() + 1, day.getUTCDate())) return [];
  const rand = prng(Math.floor(hash01(seed, 'schedule', sportId, date) * 2 ** 32));
  const teams = TEAMS.filter((t) => t.sportId === sportId);
  for (let i = teams.length - 1; i > 0; i -= 1) {
    const j = Math.floor(rand() * (i + 1));
    [teams[i], teams[j]] = [teams[j]!, teams[i]!];
  }
  const starts = slots(sportId, day.getUTCDay(), rand).slice(0, Math.floor(teams.length / 2));
  const games: ScheduledGame[] = starts
    .sort((a, b) => a - b)
    .map((minutes, i) => ({
      sportId,
      start: new Date(day.getTime() + minutes * 60_000),
      away: teams[2 * i]!,
      home: teams[2 * i + 1]!,
      gameNumber: null,
      gameType: null,
      index: i,
    }));
  if (sportId === 3 && games.length > 2) {
    if (rand() < 0.35) {
      const first = games[0]!;
      first.gameNumber = 1;
      first.gameType = 'doubleheader';
      games.push({
        ...first,
        start: new Date(first.start.getTime() + 4 * 3_600_000),
        gameNumber: 2,
        index: games.length,
      });
    }
    if (rand() < 0.25) games[1]!.gameType = 'makeup';
  }
  return games;
}

/** Canonical `event_id` (32 hex) and compatibility `event_uuid` (a UUID that differs from it) of a game. */
export function eventIds(
  seed: string,
  g: { sportId: number; start: Date; away: { id: number }; home: { id: number } },
) {
  const h = hashHex(seed, 'event', g.sportId, g.start.toISOString(), g.away.id, g.home.id);
  const u = hashHex(seed, 'uuid', h);
  return {
    eventId: h.slice(0, 32),
    eventUuid: `${u.slice(0, 8)}-${u.slice(8, 12)}-4${u.slice(13, 16)}-a${u.slice(17, 20)}-${u.slice(20, 32)}`,
  };
}

function poissonish(rand: () => number, mean: number): number {
  // Knuth's Poisson sampler; mean is small per period.
  const l = Math.exp(-mean);
  let k = 0;
  let p = 1;
  do {
    k += 1;
    p *= rand();
  } while (p > l);
  return k - 1;
}

/** Football touchdown-ish totals of a half-score draw (index: points / 2, capped at 7). */
const FOOTBALL_PERIOD_POINTS = [0, 3, 7, 7, 10, 14, 3, 6];

/**
 * Final scores per regulation period, away and home, drawn from `rand` in order: basketball (4) and football (2)
 * around their per-period means with noise (football snapped to plausible totals), other sports Poisson.
 */
function regulationScores(
  sportId: number,
  periods: number,
  perPeriod: number,
  share: number,
  rand: () => number,
): { away: number[]; home: number[] } {
  const away: number[] = [];
  const home: number[] = [];
  for (let p = 0; p < periods; p += 1) {
    if (sportId === 4 || sportId === 2) {
      const noise = () => (rand() - 0.5) * (sportId === 4 ? 14 : 10);
      const a = Math.max(0, Math.round(perPeriod * (1 - share) + noise()));
      const h = Math.max(0, Math.round(perPeriod * share + noise()));
      away.push(sportId === 2 ? FOOTBALL_PERIOD_POINTS[Math.min(7, Math.round(a / 2))]! : a);
      home.push(sportId === 2 ? FOOTBALL_PERIOD_POINTS[Math.min(7, Math.round(h / 2))]! : h);
    } else {
      away.push(poissonish(rand, perPeriod * (1 - share)));
      home.push(poissonish(rand, perPeriod * share));
    }
  }
  return { away, home };
}

/** Player props of a basketball game (points 29, rebounds 35, assists 39) around per-player bases. */
function playerProps(seed: string, g: ScheduledGame): SimulationModel['props'] {
  if (g.sportId !== 4) return [];
  const props: SimulationModel['props'] = [];
  for (const p of PLAYERS.filter((x) => x.teamId === g.away.id || x.teamId === g.home.id)) {
    const r = hash01(seed, 'player', p.id);
    props.push({ playerId: p.id, name: p.name, marketId: 29, base: 14 + Math.round(r * 18) + 0.5 });
    props.push({
      playerId: p.id,
      name: p.name,
      marketId: 35,
      base: 3 + Math.round(hash01(seed, 'reb', p.id) * 9) + 0.5,
    });
    props.push({
      playerId: p.id,
      name: p.name,
      marketId: 39,
      base: 2 + Math.round(hash01(seed, 'ast', p.id) * 7) + 0.5,
    });
  }
  return props;
}

/** Builds the model of a game: expected margin and total, final scores per period, props. */
export function modelFor(seed: string, g: ScheduledGame, eventId: string): SimulationModel {
  const m = MODELS[g.sportId]!;
  const strength = (team: SeedTeam) => (hash01(seed, 'strength', team.id) - 0.5) * 2 * m.sdMargin * 0.6;
  const margin = m.homeEdge + strength(g.home) - strength(g.away);
  const total = m.meanTotal * (0.9 + hash01(seed, 'pace', eventId) * 0.2);
  const rand = prng(Math.floor(hash01(seed, 'score', eventId) * 2 ** 32));
  const share = Math.min(0.8, Math.max(0.2, 0.5 + margin / (total * 1.5)));
  const { away, home } = regulationScores(g.sportId, m.periods, total / m.periods, share, rand);
  const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
  let overtime = false;
  if (!m.draws && sum(away) === sum(home)) {
    overtime = true;
    const homeWins = rand() < share;
    const points = g.sportId === 4 ? 8 + Math.floor(rand() * 6) : g.sportId === 2 ? 3 : 1;
    away.push(homeWins ? (g.sportId === 4 ? points - 4 : 0) : points);
    home.push(homeWins ? points : g.sportId === 4 ? points - 4 : 0);
  }
  return { seed, margin, total, away, home, overtime, props: playerProps(seed, g) };
}

function timeline(sportId: number, model: SimulationModel): Segment[] {
  const m = MODELS[sportId]!;
  const segments: Segment[] = [];
  for (let p = 1; p <= m.periods; p += 1) {
    segments.push({ status: 'STATUS_IN_PROGRESS', minutes: m.periodMinutes, period: p });
    const brk = m.breakAfter[p];
    if (brk) segments.push({ status: brk.status, minutes: brk.minutes, period: p });
  }
  if (model.overtime) {
    segments.push({ status: 'STATUS_END_PERIOD', minutes: 3, period: m.periods });
    segments.push({ status: 'STATUS_OVERTIME', minutes: m.overtimeMinutes, period: m.periods + 1 });
  }
  return segments;
}

/** Status, clock and score of an event at `now` (before the start: scheduled; after the timeline: final). */
export function scoreAt(sportId: number, model: SimulationModel, start: Date, now: Date) {
  const elapsed = (now.getTime() - start.getTime()) / 60_000;
  const awayBy: number[] = [];
  const homeBy: number[] = [];
  if (elapsed < 0)
    return {
      status: 'STATUS_SCHEDULED' as EventStatus,
      period: 0,
      clock: 0,
      display: '',
      awayBy,
      homeBy,
      detail: 'Scheduled',
    };
  let t = 0;
  for (const seg of timeline(sportId, model)) {
    const idx = seg.period - 1;
    if (elapsed < t + seg.minutes) {
      const periodMinutes = MODELS[sportId]!.periodMinutes;
      for (let p = 0; p < idx; p += 1) {
        awayBy.push(model.away[p]!);
        homeBy.push(model.home[p]!);
      }
      if (seg.status === 'STATUS_IN_PROGRESS' || seg.status === 'STATUS_OVERTIME') {
        const fraction = (elapsed - t) / seg.minutes;
        awayBy.push(Math.floor(model.away[idx]! * fraction));
        homeBy.push(Math.floor(model.home[idx]! * fraction));
        const clockSeconds = Math.max(0, Math.round((1 - fraction) * periodMinutes * 60 * 0.375));
        const display = `${Math.floor(clockSeconds / 60)}:${String(clockSeconds % 60).padStart(2, '0')}`;
        return {
          status: seg.status,
          period: seg.period,
          clock: clockSeconds,
          display,
          awayBy,
          homeBy,
          detail: `${ordinal(seg.period)} period`,
        };
      }
      awayBy.push(model.away[idx]!);
      homeBy.push(model.home[idx]!);
      const detail = seg.status === 'STATUS_HALFTIME' ? 'Halftime' : `End of ${ordinal(seg.period)} period`;
      return { status: seg.status, period: seg.period, clock: 0, display: '0:00', awayBy, homeBy, detail };
    }
    t += seg.minutes;
  }
  return {
    status: 'STATUS_FINAL' as EventStatus,
    period: model.away.length,
    clock: 0,
    display: '0:00',
    awayBy: [...model.away],
    homeBy: [...model.home],
    detail: model.overtime ? 'Final/OT' : 'Final',
  };
}

function ordinal(n: number): string {
  return n === 1 ? '1st' : n === 2 ? '2nd' : n === 3 ? '3rd' : `${n}th`;
}

/** Sum of the steps of walk `what` up to price bucket `bucket` (see {@link walks}). */
export type Walks = (what: string, bucket: number) => number;

const BUCKET_MS = PRICE_BUCKET_MINUTES * 60_000;

/** The price bucket in which the markets of a game starting at `start` open. */
function openBucketOf(start: Date): number {
  return Math.floor((start.getTime() - MARKETS_OPEN_HOURS * 3_600_000) / BUCKET_MS);
}

/**
 * Random walks of an event (steps -1/0/+1 per price bucket since the open, each with {@link STEP_PROBABILITY}), memoised per walk: `at(what, bucket)` is
 * the sum of the steps of walk `what` up to `bucket`.
 */
function walks(seed: string, eventId: string, openBucket: number): Walks {
  const cache = new Map<string, number[]>();
  return (what: string, bucket: number): number => {
    let sums = cache.get(what);
    const n = bucket - openBucket;
    if (n <= 0) return 0;
    if (!sums) {
      sums = [0];
      cache.set(what, sums);
    }
    for (let i = sums.length; i <= n; i += 1) {
      const r = hash01(seed, what, eventId, openBucket + i);
      sums.push(sums[i - 1]! + (r < STEP_PROBABILITY ? -1 : r > 1 - STEP_PROBABILITY ? 1 : 0));
    }
    return sums[n]!;
  };
}

const fmt = (x: number) => (x > 0 ? `+${x}` : `${x}`);
const half = (x: number) => Math.round(x - 0.5) + 0.5;

/**
 * The markets of an event at `now`, per sportsbook, before the start (after it the pre-game prices are closed at
 * their last value, `closedAt` the start). Prices move in 10-minute buckets along a seeded random walk of the expected
 * margin and total; each book sees the walk with its own lag (0-2 buckets) and prices with its own margin (hold), so
 * books differ a little and move at different times, as real books do. `drift` lets several calls for one event
 * share the walks (a replay of its buckets).
 */
export function marketsAt(
  sportId: number,
  eventId: string,
  model: SimulationModel,
  teams: { away: SeedTeam; home: SeedTeam },
  start: Date,
  now: Date,
  drift: Walks = walks(model.seed, eventId, openBucketOf(start)),
): MarketInput[] {
  const m = MODELS[sportId]!;
  const closed = now.getTime() >= start.getTime();
  const at = closed ? new Date(start.getTime() - 1) : now;
  const openBucket = openBucketOf(start);
  const nowBucket = Math.floor(at.getTime() / BUCKET_MS);
  const board = new MarketBoard(closed ? start : null);
  const teamName = (t: SeedTeam) => `${t.name} ${t.mascot}`.trim();
  const sides: Sides = {
    away: { id: teams.away.id, type: 'TYPE_TEAM', name: teamName(teams.away) },
    home: { id: teams.home.id, type: 'TYPE_TEAM', name: teamName(teams.home) },
    over: { id: 0, type: 'TYPE_RESULT', name: 'Over' },
    under: { id: 1, type: 'TYPE_RESULT', name: 'Under' },
  };
  for (const book of m.books) {
    const info = SPORTSBOOKS.find((b) => b.id === book)!;
    const lag = Math.floor(hash01(model.seed, 'lag', book) * 3);
    const b = Math.max(openBucket, nowBucket - lag);
    const margin = model.margin + 0.5 * drift('margin', b) * (m.sdMargin / 12);
    const total = model.total + drift('total', b) * (m.sdTotal / 18);
    const shade = (hash01(model.seed, 'shade', eventId, book) - 0.5) * 0.02;
    const step = book === 3 || book === 11 ? 1 : 5;
    const q: BookQuote = {
      sportId,
      m,
      book,
      hold: info.hold,
      step,
      bucket: b,
      margin,
      total,
      shade,
      pHome: Math.min(0.97, Math.max(0.03, phi(margin / m.sdMargin) + shade)),
      two: (p: number): [number, number] => {
        const k = 1 + info.hold / 2;
        return [americanFromProbability(p * k, step), americanFromProbability((1 - p) * k, step)];
      },
    };
    mainMarkets(board, sides, q);
    if (m.draws) soccerMarkets(board, sides, q);
    teamTotals(board, sides, q);
    playerPropMarkets(board, model, drift, q);
  }
  return board.markets();
}

type Side = { id: number; type: 'TYPE_TEAM' | 'TYPE_PLAYER' | 'TYPE_RESULT'; name: string };

/** The participants every game's markets name. */
interface Sides {
  away: Side;
  home: Side;
  over: Side;
  under: Side;
}

/** What one sportsbook prices from at one time: its drifted margin and total, hold, price step and shading. */
interface BookQuote {
  sportId: number;
  m: (typeof MODELS)[number];
  book: number;
  hold: number;
  /** Price step: 1 for the books that quote every cent, 5 otherwise. */
  step: number;
  /** The drift bucket of this book's prices (its lag applied). */
  bucket: number;
  margin: number;
  total: number;
  shade: number;
  /** Probability of a home win. */
  pHome: number;
  /** Two-way prices (with half the hold on each side) for probability `p` of the first side. */
  two(p: number): [number, number];
}

/**
 * The markets of an event being built: market -> participant -> line -> price by sportsbook, in the order added.
 * Prices of a game that has started are closed at its start (`closedAt`).
 */
class MarketBoard {
  private readonly byKey = new Map<string, MarketInput>();

  constructor(private readonly closedAt: Date | null) {}

  add(
    marketId: number,
    periodId: number,
    participant: Side,
    value: string,
    book: number,
    price: PriceInput,
  ): void {
    const key = `${marketId}:${periodId}`;
    let market = this.byKey.get(key);
    if (!market) {
      market = { marketId, periodId, participants: [] };
      this.byKey.set(key, market);
    }
    let p = market.participants.find((x) => x.id === participant.id && x.type === participant.type);
    if (!p) {
      p = { ...participant, lines: [] };
      market.participants.push(p);
    }
    let line = p.lines.find((l) => l.value === value);
    if (!line) {
      line = { value, prices: {} };
      p.lines.push(line);
    }
    const closed = this.closedAt !== null;
    line.prices[book] = this.closedAt ? { ...price, closed, closedAt: this.closedAt } : { ...price, closed };
  }

  markets(): MarketInput[] {
    return [...this.byKey.values()];
  }
}

/** 1 moneyline (soccer: draw no bet), 2 spread with alternates, 3 totals with alternates. */
function mainMarkets(board: MarketBoard, { away, home, over, under }: Sides, q: BookQuote): void {
  const { sportId, m, book, margin, total, shade } = q;
  const [mlHome, mlAway] = q.two(q.pHome);
  board.add(1, 0, away, '', book, { price: mlAway, isMainLine: true });
  board.add(1, 0, home, '', book, { price: mlHome, isMainLine: true });
  const runLine = sportId === 3 || sportId === 6;
  const mainSpread = runLine ? 1.5 : half(margin);
  const favHome = margin >= 0;
  for (const o of [0, ...(m.alternateBooks.includes(book) ? m.spreadAlternates : [])]) {
    const line = mainSpread + o;
    const homeLine = runLine ? (favHome ? -line : line) : -line;
    const pCover = Math.min(0.97, Math.max(0.03, phi((margin + homeLine) / m.sdMargin) + shade));
    const [hp, ap] = q.two(pCover);
    board.add(2, 0, home, fmt(homeLine), book, { price: hp, isMainLine: o === 0 });
    board.add(2, 0, away, fmt(-homeLine), book, { price: ap, isMainLine: o === 0 });
  }
  const mainTotal = half(total);
  for (const o of [0, ...(m.alternateBooks.includes(book) ? m.totalAlternates : [])]) {
    const line = mainTotal + o;
    const pOver = Math.min(0.97, Math.max(0.03, 1 - phi((line - total) / m.sdTotal)));
    const [op, up] = q.two(pOver);
    board.add(3, 0, over, String(line), book, { price: op, isMainLine: o === 0 });
    board.add(3, 0, under, String(line), book, { price: up, isMainLine: o === 0 });
  }
}

/**
 * Soccer: 563 three-way, 570 both teams to score, 571 double chance, 572 first-half moneyline, 573/574/577 corners,
 * cards and first-half goals over/under, 578 first-half spread.
 */
function soccerMarkets(board: MarketBoard, { away, home, over, under }: Sides, q: BookQuote): void {
  const { m, book, hold, step, margin, total, pHome } = q;
  const pDraw = Math.max(0.18, 0.3 - Math.abs(margin) * 0.06);
  const k = 1 + hold;
  board.add(563, 0, away, '', book, {
    price: americanFromProbability((1 - pHome) * (1 - pDraw) * k, step),
    isMainLine: true,
  });
  board.add(563, 0, home, '', book, {
    price: americanFromProbability(pHome * (1 - pDraw) * k, step),
    isMainLine: true,
  });
  board.add(563, 0, { id: 2, type: 'TYPE_RESULT', name: 'Draw' }, '', book, {
    price: americanFromProbability(pDraw * k, step),
    isMainLine: true,
  });
  const pBtts = Math.min(0.75, Math.max(0.3, total / 5.2));
  const [yes, no] = q.two(pBtts);
  board.add(570, 0, { id: 0, type: 'TYPE_RESULT', name: 'Yes' }, '', book, { price: yes, isMainLine: true });
  board.add(570, 0, { id: 1, type: 'TYPE_RESULT', name: 'No' }, '', book, { price: no, isMainLine: true });
  const pH3 = pHome * (1 - pDraw);
  const pA3 = (1 - pHome) * (1 - pDraw);
  const double = (id: number, name: string, p: number) =>
    board.add(571, 0, { id, type: 'TYPE_RESULT', name }, '', book, {
      price: americanFromProbability(p * (1 + hold / 3), step),
      isMainLine: true,
    });
  double(0, 'Home or Draw', pH3 + pDraw);
  double(1, 'Away or Draw', pA3 + pDraw);
  double(2, 'Home or Away', pH3 + pA3);
  const [h1, a1] = q.two(Math.min(0.9, Math.max(0.1, 0.5 + (pHome - 0.5) * 0.7)));
  board.add(572, 1, away, '', book, { price: a1, isMainLine: true });
  board.add(572, 1, home, '', book, { price: h1, isMainLine: true });
  for (const [id, line, mean, sd] of [
    [573, 9.5, 10 + (total - 2.8), 3],
    [574, 4.5, 4.2, 1.8],
    [577, 1.5, total * 0.45, 0.9],
  ] as const) {
    const [op, up] = q.two(Math.min(0.95, Math.max(0.05, 1 - phi((line - mean) / sd))));
    board.add(id, id === 577 ? 1 : 0, over, String(line), book, { price: op, isMainLine: true });
    board.add(id, id === 577 ? 1 : 0, under, String(line), book, { price: up, isMainLine: true });
  }
  const h1Line = half(margin * 0.45);
  const [hh, ah] = q.two(Math.min(0.9, Math.max(0.1, phi((margin * 0.45 - h1Line) / (m.sdMargin * 0.7)))));
  board.add(578, 1, home, fmt(-h1Line), book, { price: hh, isMainLine: true });
  board.add(578, 1, away, fmt(h1Line), book, { price: ah, isMainLine: true });
}

/** 94 team totals (every sport): over / under per team. */
function teamTotals(board: MarketBoard, { away, home }: Sides, q: BookQuote): void {
  const { m, book, margin, total } = q;
  for (const [team, share] of [
    [away, 0.5 - margin / (2 * total)],
    [home, 0.5 + margin / (2 * total)],
  ] as const) {
    const mean = total * share;
    const line = half(mean);
    const [op, up] = q.two(Math.min(0.95, Math.max(0.05, 1 - phi((line - mean) / (m.sdTotal * 0.7)))));
    board.add(94, 0, team, `Over ${line}`, book, { price: op, isMainLine: true });
    board.add(94, 0, team, `Under ${line}`, book, { price: up, isMainLine: true });
  }
}

/** Player props (NBA): over / under per player, their lines drifting with the game. */
function playerPropMarkets(board: MarketBoard, model: SimulationModel, drift: Walks, q: BookQuote): void {
  for (const prop of model.props) {
    const move = 0.5 * drift(`prop${prop.playerId}:${prop.marketId}`, q.bucket);
    const mean = prop.base + move * 0.5;
    const line = half(prop.base + Math.round(move) * 0.5 - 0.25);
    const [op, up] = q.two(Math.min(0.9, Math.max(0.1, 1 - phi((line - mean) / 3))));
    const player: Side = { id: prop.playerId, type: 'TYPE_PLAYER', name: prop.name };
    board.add(prop.marketId, 0, player, `Over ${line}`, q.book, { price: op, isMainLine: true });
    board.add(prop.marketId, 0, player, `Under ${line}`, q.book, { price: up, isMainLine: true });
  }
}

/**
 * The whole state of a simulated game at `now`: the event row and its markets.
 * @param drift the game's random walks ({@link walks}); a caller that also replays earlier times passes its own, so
 *   the walks are computed once.
 */
export function eventStateAt(
  seed: string,
  g: ScheduledGame,
  now: Date,
  drift: Walks = walks(seed, eventIds(seed, g).eventId, openBucketOf(g.start)),
): EventUpdate {
  const ids = eventIds(seed, g);
  const model = modelFor(seed, g, ids.eventId);
  const score = scoreAt(g.sportId, model, g.start, now);
  const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
  const final = score.status === 'STATUS_FINAL';
  const m = MODELS[g.sportId]!;
  const rotationBase =
    501 + 2 * g.index + (g.sportId === 3 ? 400 : g.sportId === 6 ? 50 : g.sportId === 11 ? 2000 : 0);
  const event: EventInput = {
    eventId: ids.eventId,
    eventUuid: ids.eventUuid,
    sportId: g.sportId,
    eventDate: g.start,
    rotationNumberAway: rotationBase,
    rotationNumberHome: rotationBase + 1,
    awayTeamId: g.away.id,
    homeTeamId: g.home.id,
    seasonType: 'Regular Season',
    seasonYear: g.start.getUTCMonth() >= 6 ? g.start.getUTCFullYear() : g.start.getUTCFullYear() - 1,
    eventName:
      g.sportId === 11
        ? `${g.home.name} vs ${g.away.name}`
        : `${g.away.name} ${g.away.mascot} at ${g.home.name} ${g.home.mascot}`,
    leagueName: LEAGUE_NAMES[g.sportId] ?? '',
    gameNumber: g.gameNumber,
    gameType: g.gameType,
    status: score.status,
    statusDetail: score.detail,
    scoreAway: sum(score.awayBy),
    scoreHome: sum(score.homeBy),
    scoreAwayByPeriod: score.awayBy,
    scoreHomeByPeriod: score.homeBy,
    winnerAway: final && sum(score.awayBy) > sum(score.homeBy),
    winnerHome: final && sum(score.homeBy) > sum(score.awayBy),
    venueName: g.home.venueName,
    venueLocation: g.home.venueLocation,
    gameClock: score.clock,
    displayClock: score.display,
    gamePeriod: score.period,
    broadcast: m.broadcast[Math.floor(hash01(seed, 'tv', ids.eventId) * m.broadcast.length)]!,
    simulation: model,
  };
  const opensAt = g.start.getTime() - MARKETS_OPEN_HOURS * 3_600_000;
  const markets =
    now.getTime() < opensAt ? [] : marketsAt(g.sportId, ids.eventId, model, g, g.start, now, drift);
  return { event, markets };
}

/**
 * The times in `(after, until]` at which a game's prices can move: the market opening (24 h before the start), then
 * every price-bucket boundary, all before the start (at the start the prices close and stop moving). Ascending.
 * @param afterMs exclusive lower bound, epoch ms (`-Infinity` for the whole pre-game).
 * @param untilMs inclusive upper bound, epoch ms.
 */
export function priceMoveTimes(start: Date, afterMs: number, untilMs: number): Date[] {
  const opensAt = start.getTime() - MARKETS_OPEN_HOURS * 3_600_000;
  const end = Math.min(untilMs, start.getTime() - 1);
  const times: Date[] = [];
  if (opensAt > afterMs && opensAt <= end) times.push(new Date(opensAt));
  // Boundaries strictly after both the opening and `after`.
  for (let t = (Math.floor(Math.max(opensAt, afterMs) / BUCKET_MS) + 1) * BUCKET_MS; t <= end; t += BUCKET_MS)
    times.push(new Date(t));
  return times;
}

/**
 * Most missed price-move times a tick replays per game: the first and the last (see {@link eventUpdateSince}).
 * Replaying every 10-minute bucket of a day for every game of three days would write about 700,000 change rows on a
 * fresh start (measured: 42 s on the 2-core dev machine); the first and last give the same openers and closing.
 */
const MAX_REPLAYED_MOVES = 2;

/**
 * The state of a simulated game at `now` ({@link eventStateAt}) with `history`: its markets at the times its prices
 * could move after `after` ({@link priceMoveTimes}), so a writer records each move at the time it happened, not when
 * the simulator ran. A running simulator ticks more often than the 10-minute price buckets, so it replays one bucket
 * at a time and records every move. After a gap (a game seen for the first time, a restart after a pause) only the
 * first and the last missed times are replayed ({@link MAX_REPLAYED_MOVES}): a game first seen after its markets
 * opened gets its opening prices at the opening time and the prices of the last bucket before `now` (or before the
 * start, once it began) at that bucket's time, so its openers and closing are right even when the service starts
 * after the game did; the moves in between are not in its history (the simulator did not watch them).
 * @param after the time of the game's last recorded price change, or null when it has none.
 */
export function eventUpdateSince(seed: string, g: ScheduledGame, after: Date | null, now: Date): EventUpdate {
  const drift = walks(seed, eventIds(seed, g).eventId, openBucketOf(g.start));
  const update = eventStateAt(seed, g, now, drift);
  if (update.markets.length === 0) return update;
  const model = update.event.simulation as SimulationModel;
  const missed = priceMoveTimes(g.start, after?.getTime() ?? Number.NEGATIVE_INFINITY, now.getTime());
  const times = missed.length > MAX_REPLAYED_MOVES ? [missed[0]!, missed[missed.length - 1]!] : missed;
  const history = times.map((at) => ({
    at,
    markets: marketsAt(g.sportId, update.event.eventId, model, g, g.start, at, drift),
  }));
  return { ...update, history };
}
