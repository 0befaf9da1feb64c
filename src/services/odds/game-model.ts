import { createHash } from 'node:crypto';
import type { EventStatus, SeedTeam } from './reference-data.ts';
import { PLAYERS } from './reference-data.ts';
import { modelOf, type SportModel } from './sport-models.ts';

/**
 * One simulated game as a pure function of `(seed, game)`: its identifiers, its fate (played, delayed, postponed or
 * canceled, seeded), the final score drawn once per period (with overtime, shootouts, extra time and penalties, or an
 * MMA bout's winner, method and round), and its status, clock and score at any instant. The schedules
 * (`schedules.ts`) decide which games exist; the prices (`simulator.ts`) read the model; the standings
 * (`standings.ts`) add up the outcomes.
 */

/** Deterministic number in [0, 1) from the parts. */
export function hash01(...parts: (string | number)[]): number {
  const h = createHash('sha256').update(parts.join('|')).digest();
  return h.readUInt32BE(0) / 2 ** 32;
}

/** Two independent deterministic numbers in [0, 1) from the parts (one digest). */
function hash01x2(...parts: (string | number)[]): [number, number] {
  const h = createHash('sha256').update(parts.join('|')).digest();
  return [h.readUInt32BE(0) / 2 ** 32, h.readUInt32BE(4) / 2 ** 32];
}

function hashHex(...parts: (string | number)[]): string {
  return createHash('sha256').update(parts.join('|')).digest('hex');
}

/** A small seeded PRNG (mulberry32). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A PRNG seeded from the parts (see {@link hash01}). */
export function seededRandom(...parts: (string | number)[]): () => number {
  return prng(Math.floor(hash01(...parts) * 2 ** 32));
}

/** Standard normal CDF (Abramowitz-Stegun 7.1.26). */
export function phi(x: number): number {
  const t = 1 / (1 + 0.3275911 * Math.abs(x / Math.SQRT2));
  const y =
    1 -
    ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) *
      t *
      Math.exp(-(x * x) / 2);
  return x >= 0 ? (1 + y) / 2 : (1 - y) / 2;
}

/**
 * What happens to a game besides being played on time (seeded; see `SportModel.fates`):
 * - `delayed`: it starts `minutes` after its scheduled start (`STATUS_DELAYED` meanwhile), then plays;
 * - `postponed`: at `at` (before the start) it becomes `STATUS_POSTPONED` and is never played under this event; the
 *   schedule may add a makeup game (a new event);
 * - `canceled`: at `at` it becomes `STATUS_CANCELED` and is never played.
 */
export type Fate =
  | { kind: 'delayed'; minutes: number }
  | { kind: 'postponed'; at: Date }
  | { kind: 'canceled'; at: Date };

/** A scheduled game before it is an event. */
export interface ScheduledGame {
  sportId: number;
  /** Scheduled start (`event_date`). */
  start: Date;
  away: SeedTeam;
  home: SeedTeam;
  gameNumber: number | null;
  gameType: 'doubleheader' | 'makeup' | 'doubleheader_makeup' | null;
  /** Position in its UTC day (rotation numbers). */
  index: number;
  /** The season's start year (`schedule.season_year`); default: the start's year, or the year before before July. */
  seasonYear?: number;
  /** `schedule.season_type`; default `Regular Season`. */
  seasonType?: 'Regular Season' | 'Postseason';
  /** `schedule.event_name` when it is not "Away at Home" (a bowl, a final, a fight card). */
  eventName?: string;
  /** A neutral site; default: the home team's venue. */
  venue?: { name: string; location: string };
  /** Knockout: the game must have a winner. Soccer: the goals of earlier legs of the tie (away and home here), so a
   * level aggregate goes to extra time and penalties. */
  knockout?: { away: number; home: number };
  /** MMA: scheduled rounds (3, or 5 for a main event). */
  rounds?: number;
  /** When its teams became known (a knockout game once its feeders ended, a makeup once the game was postponed):
   * it is not written, and its markets do not open, before then. */
  knownAt?: Date;
  /** The `event_id` of the postponed game this one makes up. */
  makeupOf?: string;
  fate?: Fate;
}

type GameKey = { sportId: number; start: Date; away: { id: number }; home: { id: number } };

const eventHash = (seed: string, g: GameKey) =>
  hashHex(seed, 'event', g.sportId, g.start.toISOString(), g.away.id, g.home.id);

/** Canonical `event_id` of a game (32 hex): from the seed, sport, start and teams. */
export function eventIdOf(seed: string, g: GameKey): string {
  return eventHash(seed, g).slice(0, 32);
}

/** Canonical `event_id` (32 hex) and compatibility `event_uuid` (a UUID that differs from it) of a game. */
export function eventIds(seed: string, g: GameKey) {
  const h = eventHash(seed, g);
  const u = hashHex(seed, 'uuid', h);
  return {
    eventId: h.slice(0, 32),
    eventUuid: `${u.slice(0, 8)}-${u.slice(8, 12)}-4${u.slice(13, 16)}-a${u.slice(17, 20)}-${u.slice(20, 32)}`,
  };
}

/**
 * The seeded fate of a game: regular-season games that are not makeups draw from their sport's rates (delayed,
 * postponed, canceled); knockout and postseason games and makeups are only ever delayed. Postponements are announced
 * 30 minutes to 6 hours before the start, cancellations 1 to 30 hours before (2 to 48 for an MMA bout).
 */
export function drawFate(seed: string, g: ScheduledGame, eventId: string): Fate | undefined {
  const m = modelOf(g.sportId);
  const [r, u] = hash01x2(seed, 'fate', eventId);
  const ordinary = (g.seasonType ?? 'Regular Season') === 'Regular Season' && !g.makeupOf && !g.knockout;
  const { canceled, postponed, delayed, delayMinutes } = m.fates;
  if (ordinary && r < canceled) {
    const [lo, hi] = m.kind === 'mma' ? [2, 48] : [1, 30];
    return {
      kind: 'canceled',
      at: new Date(g.start.getTime() - Math.round((lo + u * (hi - lo)) * 60) * 60_000),
    };
  }
  if (ordinary && r < canceled + postponed)
    return { kind: 'postponed', at: new Date(g.start.getTime() - Math.round(30 + u * 330) * 60_000) };
  const delayRate = ordinary ? delayed : delayed / 2;
  if (r >= canceled + postponed && r < canceled + postponed + delayRate)
    return {
      kind: 'delayed',
      minutes: Math.round(delayMinutes[0] + u * (delayMinutes[1] - delayMinutes[0])),
    };
  return undefined;
}

/** When a game actually starts (its scheduled start plus any delay); null when it is never played. */
export function actualStart(g: ScheduledGame): Date | null {
  if (g.fate?.kind === 'postponed' || g.fate?.kind === 'canceled') return null;
  return g.fate?.kind === 'delayed' ? new Date(g.start.getTime() + g.fate.minutes * 60_000) : g.start;
}

/** When a game's pre-game prices go off the board: its actual start, or the postponement or cancellation. */
export function pricesCloseAt(g: ScheduledGame): Date {
  return g.fate?.kind === 'postponed' || g.fate?.kind === 'canceled' ? g.fate.at : actualStart(g)!;
}

/** An MMA bout's result. */
export interface FightResult {
  winner: 'away' | 'home' | null;
  method: 'KO/TKO' | 'Submission' | 'Decision' | 'Draw';
  /** The round it ended in, and the seconds into that round. */
  round: number;
  second: number;
  rounds: number;
  /** Probability that a fighter finishes the bout (the books' view at the open); KO share of finishes, per side. */
  finish: number;
  koShare: { away: number; home: number };
}

/** The simulator's model of one event, stored with it (`events.simulation`). */
export interface SimulationModel {
  seed: string;
  /** Expected home margin and total at the open (MMA: total is the finish probability). */
  margin: number;
  total: number;
  /** Final scores per period: regulation, then overtime / extra time, then a shootout or penalties, when any. */
  away: number[];
  home: number[];
  overtime: boolean;
  /** Beyond regulation: `overtime` (or extra time), `shootout` (hockey), `penalties` (soccer knockouts). */
  decidedBy?: 'overtime' | 'shootout' | 'penalties';
  /** The winner of a level game on penalties. */
  penaltiesWinner?: 'away' | 'home';
  /** Props: player id, stat market id, base line. */
  props: { playerId: number; name: string; marketId: number; base: number }[];
  fight?: FightResult;
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
 * Final scores per regulation period, away and home, drawn from `rand` in order: basketball and football around their
 * per-period means with noise (football snapped to plausible totals), other sports Poisson.
 */
function regulationScores(
  m: SportModel,
  perPeriod: number,
  share: number,
  rand: () => number,
): { away: number[]; home: number[] } {
  const away: number[] = [];
  const home: number[] = [];
  for (let p = 0; p < m.periods; p += 1) {
    if (m.kind === 'basketball' || m.kind === 'football') {
      const noise = () => (rand() - 0.5) * m.periodNoise;
      const a = Math.max(0, Math.round(perPeriod * (1 - share) + noise()));
      const h = Math.max(0, Math.round(perPeriod * share + noise()));
      away.push(m.kind === 'football' ? FOOTBALL_PERIOD_POINTS[Math.min(7, Math.round(a / 2))]! : a);
      home.push(m.kind === 'football' ? FOOTBALL_PERIOD_POINTS[Math.min(7, Math.round(h / 2))]! : h);
    } else {
      away.push(poissonish(rand, perPeriod * (1 - share)));
      home.push(poissonish(rand, perPeriod * share));
    }
  }
  return { away, home };
}

/** Player props (NBA): points 29, rebounds 35, assists 39 around per-player bases, for the players of both teams. */
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

/** How often a bout ends inside the distance, and how many of those finishes are knockouts, per weight class. */
const FINISH_RATES: Record<string, [finish: number, ko: number]> = {
  Heavyweight: [0.7, 0.85],
  'Light Heavyweight': [0.62, 0.75],
  Middleweight: [0.56, 0.68],
  Welterweight: [0.5, 0.6],
  Lightweight: [0.5, 0.55],
  Featherweight: [0.47, 0.55],
  Bantamweight: [0.42, 0.52],
  Flyweight: [0.42, 0.45],
  "Women's Bantamweight": [0.45, 0.55],
  "Women's Flyweight": [0.36, 0.45],
  "Women's Strawweight": [0.33, 0.4],
};

/** Weights of the round a finish happens in (earlier rounds more often), for a 3- or 5-round bout. */
export function finishRoundWeights(rounds: number): number[] {
  return rounds === 5 ? [0.35, 0.25, 0.18, 0.12, 0.1] : [0.45, 0.3, 0.25];
}

const strengths = new Map<string, number>();

/** Team (fighter) strength in points of margin: seeded per team, spread over +-`strengthSpread` x `sdMargin`. */
export function strengthOf(seed: string, m: SportModel, team: SeedTeam): number {
  const key = `${seed}|${team.id}`;
  let base = strengths.get(key);
  if (base === undefined) {
    if (strengths.size > 20_000) strengths.clear();
    base = hash01(seed, 'strength', team.id);
    strengths.set(key, base);
  }
  return (base - 0.5) * 2 * m.sdMargin * m.strengthSpread;
}

/** An MMA bout: who wins, how, when, drawn at schedule time from the fighters' strengths and their weight class. */
function fightModel(seed: string, g: ScheduledGame, eventId: string, margin: number): SimulationModel {
  const m = modelOf(g.sportId);
  const rounds = g.rounds ?? m.periods;
  const [baseFinish, baseKo] = FINISH_RATES[g.home.division] ?? [0.5, 0.55];
  const finish = Math.min(0.85, Math.max(0.2, baseFinish + (hash01(seed, 'finish', eventId) - 0.5) * 0.2));
  const ko = (t: SeedTeam) => Math.min(0.9, Math.max(0.2, baseKo + (hash01(seed, 'ko', t.id) - 0.5) * 0.4));
  const rand = seededRandom(seed, 'score', eventId);
  const pHome = phi(margin / m.sdMargin);
  const winner: 'away' | 'home' = rand() < pHome ? 'home' : 'away';
  const koShare = { away: ko(g.away), home: ko(g.home) };
  let fight: FightResult;
  if (rand() < finish) {
    const weights = finishRoundWeights(rounds);
    let x = rand();
    let round = 1;
    while (round < rounds && x >= weights[round - 1]!) {
      x -= weights[round - 1]!;
      round += 1;
    }
    const method = rand() < koShare[winner] ? 'KO/TKO' : 'Submission';
    fight = { winner, method, round, second: 1 + Math.floor(rand() * 299), rounds, finish, koShare };
  } else {
    const draw = rand() < 0.015;
    fight = {
      winner: draw ? null : winner,
      method: draw ? 'Draw' : 'Decision',
      round: rounds,
      second: 300,
      rounds,
      finish,
      koShare,
    };
  }
  const away = Array.from({ length: fight.round }, () => 0);
  const home = Array.from({ length: fight.round }, () => 0);
  if (fight.winner === 'away') away[fight.round - 1] = 1;
  if (fight.winner === 'home') home[fight.round - 1] = 1;
  return { seed, margin, total: finish, away, home, overtime: false, props: [], fight };
}

/**
 * Builds the model of a game: expected margin and total, final scores per period, props (MMA: the bout's result).
 * @param withProps false to leave out the player props (a result needs none).
 */
export function modelFor(seed: string, g: ScheduledGame, eventId: string, withProps = true): SimulationModel {
  const m = modelOf(g.sportId);
  const margin = (g.venue ? 0 : m.homeEdge) + strengthOf(seed, m, g.home) - strengthOf(seed, m, g.away);
  if (m.kind === 'mma') return fightModel(seed, g, eventId, margin);
  const total = m.meanTotal * (0.9 + hash01(seed, 'pace', eventId) * 0.2);
  const rand = seededRandom(seed, 'score', eventId);
  const share = Math.min(0.8, Math.max(0.2, 0.5 + margin / (total * 1.5)));
  const { away, home } = regulationScores(m, total / m.periods, share, rand);
  const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
  const props = withProps ? playerProps(seed, g) : [];
  const model: SimulationModel = { seed, margin, total, away, home, overtime: false, props };
  if (m.kind === 'soccer') {
    const level = () => sum(away) + (g.knockout?.away ?? 0) === sum(home) + (g.knockout?.home ?? 0);
    if (!g.knockout || !level()) return model;
    // Extra time (two halves of 15 minutes, one period here), then penalties when the tie is still level.
    const mean = (total / 3) * 0.8;
    away.push(poissonish(rand, mean * (1 - share)));
    home.push(poissonish(rand, mean * share));
    model.overtime = true;
    model.decidedBy = 'overtime';
    if (level()) {
      away.push(0);
      home.push(0);
      model.decidedBy = 'penalties';
      model.penaltiesWinner = rand() < 0.5 + (share - 0.5) * 0.3 ? 'home' : 'away';
    }
    return model;
  }
  if (sum(away) !== sum(home)) return model;
  model.overtime = true;
  model.decidedBy = 'overtime';
  const homeWins = rand() < share;
  if (m.kind === 'hockey' && rand() >= 0.6) {
    // No goal in the five minutes of overtime: a shootout, whose winner is credited one goal.
    away.push(0, homeWins ? 0 : 1);
    home.push(0, homeWins ? 1 : 0);
    model.decidedBy = 'shootout';
    return model;
  }
  const points = m.kind === 'basketball' ? 8 + Math.floor(rand() * 6) : m.kind === 'football' ? 3 : 1;
  const loser = m.kind === 'basketball' ? points - 4 : 0;
  away.push(homeWins ? loser : points);
  home.push(homeWins ? points : loser);
  return model;
}

/** One segment of a game's timeline: a period of play or a break. */
interface Segment {
  status: EventStatus;
  minutes: number;
  period: number;
  /** `event_status_detail` while it lasts. */
  detail: string;
}

function ordinal(n: number): string {
  return n === 1 ? '1st' : n === 2 ? '2nd' : n === 3 ? '3rd' : `${n}th`;
}

/** The segments of a played game from its actual start to its end. */
function timeline(m: SportModel, model: SimulationModel): Segment[] {
  const segments: Segment[] = [];
  if (model.fight) {
    for (let r = 1; r <= model.fight.round; r += 1) {
      const last = r === model.fight.round;
      segments.push({
        status: 'STATUS_IN_PROGRESS',
        minutes: last ? model.fight.second / 60 : 5,
        period: r,
        detail: `Round ${r}`,
      });
      if (!last)
        segments.push({ status: 'STATUS_END_PERIOD', minutes: 1, period: r, detail: `End of Round ${r}` });
    }
    return segments;
  }
  for (let p = 1; p <= m.periods; p += 1) {
    segments.push({
      status: 'STATUS_IN_PROGRESS',
      minutes: m.periodMinutes,
      period: p,
      detail: `${ordinal(p)} period`,
    });
    const brk = m.breakAfter[p];
    if (brk)
      segments.push({
        status: brk.status,
        minutes: brk.minutes,
        period: p,
        detail: brk.status === 'STATUS_HALFTIME' ? 'Halftime' : `End of ${ordinal(p)} period`,
      });
  }
  for (let p = m.periods + 1; p <= model.away.length; p += 1) {
    const shootout = p > m.periods + 1;
    segments.push({
      status: 'STATUS_END_PERIOD',
      minutes: m.kind === 'soccer' ? 5 : 3,
      period: p - 1,
      detail: p === m.periods + 1 ? 'End of Regulation' : 'End of Overtime',
    });
    segments.push({
      status: 'STATUS_OVERTIME',
      minutes: shootout ? 12 : m.overtimeMinutes,
      period: p,
      detail: shootout
        ? model.decidedBy === 'penalties'
          ? 'Penalties'
          : 'Shootout'
        : m.kind === 'soccer'
          ? 'Extra Time'
          : 'Overtime',
    });
  }
  return segments;
}

/** Minutes from the actual start to the end of a played game. */
export function playingMinutes(sportId: number, model: SimulationModel): number {
  return timeline(modelOf(sportId), model).reduce((s, x) => s + x.minutes, 0);
}

/** The status, clock, period, score by period and detail of a game at one instant. */
export interface GameState {
  status: EventStatus;
  period: number;
  clock: number;
  display: string;
  awayBy: number[];
  homeBy: number[];
  detail: string;
}

function finalDetail(m: SportModel, model: SimulationModel): string {
  if (model.fight) {
    const f = model.fight;
    if (f.method === 'Decision' || f.method === 'Draw') return `Final - ${f.method}`;
    return `Final - ${f.method} R${f.round} ${Math.floor(f.second / 60)}:${String(f.second % 60).padStart(2, '0')}`;
  }
  if (model.decidedBy === 'penalties') return 'Final/Pens';
  if (model.decidedBy === 'shootout') return 'Final/SO';
  if (model.overtime) return m.kind === 'soccer' ? 'Final/AET' : 'Final/OT';
  return 'Final';
}

/** The state of a game that is not being played at `now` (scheduled, delayed, postponed, canceled), else null. */
function stateBeforePlay(g: ScheduledGame, now: Date): GameState | null {
  const empty = (status: EventStatus, detail: string): GameState => ({
    status,
    period: 0,
    clock: 0,
    display: '',
    awayBy: [],
    homeBy: [],
    detail,
  });
  const t = now.getTime();
  if ((g.fate?.kind === 'postponed' || g.fate?.kind === 'canceled') && t >= g.fate.at.getTime())
    return g.fate.kind === 'postponed'
      ? empty('STATUS_POSTPONED', 'Postponed')
      : empty('STATUS_CANCELED', 'Canceled');
  if (t < g.start.getTime()) return empty('STATUS_SCHEDULED', 'Scheduled');
  if (t < actualStart(g)!.getTime())
    return empty('STATUS_DELAYED', modelOf(g.sportId).fates.delayDetail || 'Delayed');
  return null;
}

/**
 * Status, clock and score of a game at `now`: scheduled before its start; `STATUS_DELAYED` between the scheduled and
 * the actual start of a delayed game; `STATUS_POSTPONED` / `STATUS_CANCELED` from the announcement on; then the
 * periods and breaks of its timeline; final after it.
 */
export function stateAt(g: ScheduledGame, model: SimulationModel, now: Date): GameState {
  const m = modelOf(g.sportId);
  const before = stateBeforePlay(g, now);
  if (before) return before;
  const t = now.getTime();
  const begin = actualStart(g)!;
  const elapsed = (t - begin.getTime()) / 60_000;
  const awayBy: number[] = [];
  const homeBy: number[] = [];
  let at = 0;
  for (const seg of timeline(m, model)) {
    const idx = seg.period - 1;
    if (elapsed < at + seg.minutes) {
      for (let p = 0; p < idx; p += 1) {
        awayBy.push(model.away[p]!);
        homeBy.push(model.home[p]!);
      }
      if (seg.status === 'STATUS_IN_PROGRESS' || seg.status === 'STATUS_OVERTIME') {
        const fraction = (elapsed - at) / seg.minutes;
        // A bout's deciding score is shown at its end, not during the round.
        awayBy.push(model.fight ? 0 : Math.floor(model.away[idx]! * fraction));
        homeBy.push(model.fight ? 0 : Math.floor(model.home[idx]! * fraction));
        const periodSeconds = model.fight ? 300 : m.periodMinutes * 60 * 0.375;
        const clockSeconds = model.fight
          ? Math.max(0, Math.round(300 - (elapsed - at) * 60))
          : Math.max(0, Math.round((1 - fraction) * periodSeconds));
        const display = `${Math.floor(clockSeconds / 60)}:${String(clockSeconds % 60).padStart(2, '0')}`;
        return {
          status: seg.status,
          period: seg.period,
          clock: clockSeconds,
          display,
          awayBy,
          homeBy,
          detail: seg.detail,
        };
      }
      awayBy.push(model.away[idx]!);
      homeBy.push(model.home[idx]!);
      return {
        status: seg.status,
        period: seg.period,
        clock: 0,
        display: '0:00',
        awayBy,
        homeBy,
        detail: seg.detail,
      };
    }
    at += seg.minutes;
  }
  return {
    status: 'STATUS_FINAL',
    period: model.away.length,
    clock: 0,
    display: '0:00',
    awayBy: [...model.away],
    homeBy: [...model.home],
    detail: finalDetail(m, model),
  };
}

/** The winner of a finished game's model: more points, else the shootout or penalties winner; null for a draw. */
export function winnerOf(model: SimulationModel): 'away' | 'home' | null {
  if (model.fight) return model.fight.winner;
  const a = model.away.reduce((s, x) => s + x, 0);
  const h = model.home.reduce((s, x) => s + x, 0);
  if (a !== h) return a > h ? 'away' : 'home';
  return model.penaltiesWinner ?? null;
}

/** The result of a played game, as standings and records count it. */
export interface Outcome {
  /** When it became final. */
  finalAt: Date;
  awayScore: number;
  homeScore: number;
  winner: 'away' | 'home' | null;
  /** Decided after regulation (overtime, shootout, extra time, penalties). */
  extra: boolean;
  /** Knockout: the side that goes through (on aggregate over the legs, then penalties); otherwise the winner. */
  advances: 'away' | 'home' | null;
}

/** The outcome of a game: null when it is never played (postponed or canceled). */
export function outcomeOf(seed: string, g: ScheduledGame, eventId = eventIdOf(seed, g)): Outcome | null {
  const begin = actualStart(g);
  if (!begin) return null;
  const model = modelFor(seed, g, eventId, false);
  const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
  const winner = winnerOf(model);
  let advances = winner;
  if (g.knockout) {
    const away = sum(model.away) + g.knockout.away;
    const home = sum(model.home) + g.knockout.home;
    advances = away === home ? (model.penaltiesWinner ?? winner) : away > home ? 'away' : 'home';
  }
  return {
    finalAt: new Date(begin.getTime() + Math.ceil(playingMinutes(g.sportId, model) * 60_000)),
    awayScore: sum(model.away),
    homeScore: sum(model.home),
    winner,
    extra: model.overtime,
    advances,
  };
}
