import {
  eventIdOf,
  eventIds,
  type FightResult,
  finishRoundWeights,
  hash01,
  modelFor,
  phi,
  pricesCloseAt,
  type ScheduledGame,
  type SimulationModel,
  stateAt,
  winnerOf,
} from './game-model.ts';
import type { EventInput, EventUpdate, MarketInput, PriceInput } from './odds-writer.ts';
import { LEAGUE_NAMES, type SeedTeam, SPORTSBOOKS } from './reference-data.ts';
import { modelOf, type SportModel } from './sport-models.ts';

/**
 * The feed simulator's prices and events (spec F, "where the data comes from"): prices per sportsbook that are
 * consistent (two-way and three-way moneylines with each book's margin, spreads and totals around a main line with
 * alternates, team totals, player props, an MMA bout's method of victory and rounds), prices that move over time and
 * close at the start (or when the game is postponed or canceled), and the event row with its status and score.
 *
 * Everything is a pure function of `(seed, game, time)`: the same seed and clock give the same schedule, prices and
 * scores, so tests can assert on them and several workers agree. {@link eventStateAt} is the whole state of an event at
 * an instant; the service writes the difference to the database (the change log records every move). Which games exist
 * is `schedules.ts`; how a game plays is `game-model.ts`.
 */

/** Minutes per price bucket: a sportsbook re-prices at most once per bucket. */
export const PRICE_BUCKET_MINUTES = 10;
/** Chance per price bucket that a walk steps down (and, the same, up). */
const STEP_PROBABILITY = 0.1;
/** Markets open this long before the start (or when the teams become known, if later). */
export const MARKETS_OPEN_HOURS = 24;

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

/** Sum of the steps of walk `what` up to price bucket `bucket` (see {@link walks}). */
type Walks = (what: string, bucket: number) => number;

const BUCKET_MS = PRICE_BUCKET_MINUTES * 60_000;

/** When a game's markets open: 24 hours before its start, or when its teams become known if that is later. */
function opensAt(g: ScheduledGame): number {
  return Math.max(
    g.start.getTime() - MARKETS_OPEN_HOURS * 3_600_000,
    g.knownAt?.getTime() ?? Number.NEGATIVE_INFINITY,
  );
}

/** The price bucket in which the markets of a game open. */
function openBucketOf(g: ScheduledGame): number {
  return Math.floor(opensAt(g) / BUCKET_MS);
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
const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));
const teamLabel = (t: SeedTeam) => `${t.name} ${t.mascot}`.trim();

/**
 * The markets of a game at `now`, per sportsbook, before its prices close (after that they are closed at their last
 * value, `closedAt` the close: the actual start, or the postponement or cancellation). Prices move in 10-minute buckets
 * along a seeded random walk of the expected margin and total; each book sees the walk with its own lag (0-2 buckets)
 * and prices with its own margin (hold), so books differ a little and move at different times, as real books do.
 * `drift` lets several calls for one event share the walks (a replay of its buckets).
 */
function marketsAt(
  g: ScheduledGame,
  eventId: string,
  model: SimulationModel,
  now: Date,
  drift: Walks = walks(model.seed, eventId, openBucketOf(g)),
): MarketInput[] {
  const m = modelOf(g.sportId);
  const closesAt = pricesCloseAt(g);
  const closed = now.getTime() >= closesAt.getTime();
  const at = closed ? new Date(closesAt.getTime() - 1) : now;
  const openBucket = openBucketOf(g);
  const nowBucket = Math.floor(at.getTime() / BUCKET_MS);
  const board = new MarketBoard(closed ? closesAt : null);
  const sides: Sides = {
    away: { id: g.away.id, type: 'TYPE_TEAM', name: teamLabel(g.away) },
    home: { id: g.home.id, type: 'TYPE_TEAM', name: teamLabel(g.home) },
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
    if (model.fight) {
      fightMarkets(board, sides, q, model.fight);
      continue;
    }
    mainMarkets(board, sides, q);
    if (m.kind === 'soccer') soccerMarkets(board, sides, q);
    // Hockey: a regulation tie (about one game in five) is the draw of the three-way market.
    if (m.kind === 'hockey') threeWay(board, sides, q, clamp(0.23 - Math.abs(margin) * 0.04, 0.15, 0.25));
    if (m.teamTotals) teamTotals(board, sides, q);
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
  m: SportModel;
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
  /** `marketId:periodId:type:participantId:value` -> the line being built. */
  private readonly lines = new Map<string, MarketInput['participants'][number]['lines'][number]>();
  /** `marketId:periodId:type:participantId` -> the participant being built. */
  private readonly participants = new Map<string, MarketInput['participants'][number]>();

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
    const pKey = `${key}:${participant.type}:${participant.id}`;
    let p = this.participants.get(pKey);
    if (!p) {
      p = { ...participant, lines: [] };
      market.participants.push(p);
      this.participants.set(pKey, p);
    }
    const lKey = `${pKey}:${value}`;
    let line = this.lines.get(lKey);
    if (!line) {
      line = { value, prices: {} };
      p.lines.push(line);
      this.lines.set(lKey, line);
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
  const { m, book, margin, total, shade } = q;
  const [mlHome, mlAway] = q.two(q.pHome);
  board.add(1, 0, away, '', book, { price: mlAway, isMainLine: true });
  board.add(1, 0, home, '', book, { price: mlHome, isMainLine: true });
  const runLine = m.fixedSpread !== undefined;
  const mainSpread = m.fixedSpread ?? half(margin);
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

/** 563 three-way moneyline in regulation: away, home, draw (`TYPE_RESULT` 2), with the book's full margin. */
function threeWay(
  board: MarketBoard,
  { away, home }: Pick<Sides, 'away' | 'home'>,
  q: BookQuote,
  pDraw: number,
): void {
  const { book, hold, step, pHome } = q;
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
}

/**
 * Soccer: 563 three-way, 570 both teams to score, 571 double chance, 572 first-half moneyline, 573/574/577 corners,
 * cards and first-half goals over/under, 578 first-half spread.
 */
function soccerMarkets(board: MarketBoard, { away, home, over, under }: Sides, q: BookQuote): void {
  const { m, book, hold, step, margin, total, pHome } = q;
  const pDraw = Math.max(0.18, 0.3 - Math.abs(margin) * 0.06);
  threeWay(board, { away, home }, q, pDraw);
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

/**
 * MMA: 1 moneyline (two-way; a draw is void), 3 total rounds (2.5, or 4.5 in a five-round bout, with an alternate a
 * round lower; a line of 2.5 is over once the bout passes 2:30 of round 3), 580 method of victory (each fighter by
 * KO/TKO, submission or decision: six outcomes, `TYPE_TEAM` participants with the method as the line value) and 581
 * fight goes the distance (yes / no). The books price from the fighters' strengths and the bout's finish probability,
 * both drifting with the walks; the result itself was drawn at schedule time.
 */
function fightMarkets(
  board: MarketBoard,
  { away, home, over, under }: Sides,
  q: BookQuote,
  fight: FightResult,
): void {
  const { m, book, hold, step, pHome } = q;
  const [mlHome, mlAway] = q.two(pHome);
  board.add(1, 0, away, '', book, { price: mlAway, isMainLine: true });
  board.add(1, 0, home, '', book, { price: mlHome, isMainLine: true });
  const pFinish = clamp(q.total, 0.1, 0.9);
  const weights = finishRoundWeights(fight.rounds);
  /** Probability that the bout ends before `rounds` rounds: finishes spread over the rounds, uniform within one. */
  const endsBefore = (rounds: number) =>
    pFinish * weights.reduce((s, w, r) => s + w * clamp(rounds - r, 0, 1), 0);
  const main = fight.rounds === 5 ? 4.5 : 2.5;
  for (const line of [main, ...(m.alternateBooks.includes(book) ? [main - 1] : [])]) {
    const [op, up] = q.two(clamp(1 - endsBefore(line), 0.03, 0.97));
    board.add(3, 0, over, String(line), book, { price: op, isMainLine: line === main });
    board.add(3, 0, under, String(line), book, { price: up, isMainLine: line === main });
  }
  const k = 1 + hold * 1.5;
  for (const [side, p, ko] of [
    [away, 1 - pHome, fight.koShare.away],
    [home, pHome, fight.koShare.home],
  ] as const) {
    board.add(580, 0, side, 'KO/TKO', book, {
      price: americanFromProbability(p * pFinish * ko * k, step),
      isMainLine: true,
    });
    board.add(580, 0, side, 'Submission', book, {
      price: americanFromProbability(p * pFinish * (1 - ko) * k, step),
      isMainLine: true,
    });
    board.add(580, 0, side, 'Decision', book, {
      price: americanFromProbability(p * (1 - pFinish) * k, step),
      isMainLine: true,
    });
  }
  const [yes, no] = q.two(1 - pFinish);
  board.add(581, 0, { id: 0, type: 'TYPE_RESULT', name: 'Yes' }, '', book, { price: yes, isMainLine: true });
  board.add(581, 0, { id: 1, type: 'TYPE_RESULT', name: 'No' }, '', book, { price: no, isMainLine: true });
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

/** The event row of a simulated game at `now` (schedule, status, clock, score), without its markets. */
export function eventRowAt(seed: string, g: ScheduledGame, now: Date): EventInput {
  const ids = eventIds(seed, g);
  const model = modelFor(seed, g, ids.eventId);
  const state = stateAt(g, model, now);
  const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
  const winner = state.status === 'STATUS_FINAL' ? winnerOf(model) : null;
  const m = modelOf(g.sportId);
  const rotation = m.rotationBase + 2 * g.index;
  return {
    eventId: ids.eventId,
    eventUuid: ids.eventUuid,
    sportId: g.sportId,
    eventDate: g.start,
    rotationNumberAway: rotation,
    rotationNumberHome: rotation + 1,
    awayTeamId: g.away.id,
    homeTeamId: g.home.id,
    seasonType: g.seasonType ?? 'Regular Season',
    seasonYear:
      g.seasonYear ?? (g.start.getUTCMonth() >= 6 ? g.start.getUTCFullYear() : g.start.getUTCFullYear() - 1),
    eventName:
      g.eventName ??
      (m.kind === 'soccer'
        ? `${g.home.name} vs ${g.away.name}`
        : `${teamLabel(g.away)} at ${teamLabel(g.home)}`),
    leagueName: LEAGUE_NAMES[g.sportId] ?? '',
    gameNumber: g.gameNumber,
    gameType: g.gameType,
    status: state.status,
    statusDetail: state.detail,
    scoreAway: sum(state.awayBy),
    scoreHome: sum(state.homeBy),
    scoreAwayByPeriod: state.awayBy,
    scoreHomeByPeriod: state.homeBy,
    winnerAway: winner === 'away',
    winnerHome: winner === 'home',
    venueName: g.venue?.name ?? g.home.venueName,
    venueLocation: g.venue?.location ?? g.home.venueLocation,
    gameClock: state.clock,
    displayClock: state.display,
    gamePeriod: state.period,
    broadcast: m.broadcast[Math.floor(hash01(seed, 'tv', ids.eventId) * m.broadcast.length)]!,
    simulation: model,
  };
}

/**
 * What the markets of a game at `now` depend on: `none` before they open (or when they never do), the price bucket
 * while they are up (prices move only at bucket boundaries), `closed` once they closed. Two instants with the same key
 * have the same markets.
 */
export function marketsKey(g: ScheduledGame, now: Date): string {
  const t = now.getTime();
  const open = opensAt(g);
  const close = pricesCloseAt(g).getTime();
  if (t < open || close <= open) return 'none';
  return t >= close ? 'closed' : `bucket:${Math.floor(t / BUCKET_MS)}`;
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
  drift: Walks = walks(seed, eventIdOf(seed, g), openBucketOf(g)),
): EventUpdate {
  const event = eventRowAt(seed, g, now);
  const markets =
    marketsKey(g, now) === 'none'
      ? []
      : marketsAt(g, event.eventId, event.simulation as SimulationModel, now, drift);
  return { event, markets };
}

/**
 * The times in `(after, until]` at which a game's prices can move: the market opening, then every price-bucket
 * boundary, all before its prices close (at the actual start, or at a postponement or cancellation). Ascending.
 * @param afterMs exclusive lower bound, epoch ms (`-Infinity` for the whole pre-game).
 * @param untilMs inclusive upper bound, epoch ms.
 */
function priceMoveTimes(g: ScheduledGame, afterMs: number, untilMs: number): Date[] {
  const open = opensAt(g);
  const end = Math.min(untilMs, pricesCloseAt(g).getTime() - 1);
  const times: Date[] = [];
  if (open > afterMs && open <= end) times.push(new Date(open));
  // Boundaries strictly after both the opening and `after`.
  for (let t = (Math.floor(Math.max(open, afterMs) / BUCKET_MS) + 1) * BUCKET_MS; t <= end; t += BUCKET_MS)
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
 * opened gets its opening prices at the opening time and the prices of the last bucket before `now` (or before its
 * prices closed) at that bucket's time, so its openers and closing are right even when the service starts after the
 * game did; the moves in between are not in its history (the simulator did not watch them).
 * @param after the time of the game's last recorded price change, or null when it has none.
 */
export function eventUpdateSince(seed: string, g: ScheduledGame, after: Date | null, now: Date): EventUpdate {
  const drift = walks(seed, eventIdOf(seed, g), openBucketOf(g));
  const update = eventStateAt(seed, g, now, drift);
  if (update.markets.length === 0) return update;
  const model = update.event.simulation as SimulationModel;
  const missed = priceMoveTimes(g, after?.getTime() ?? Number.NEGATIVE_INFINITY, now.getTime());
  const times = missed.length > MAX_REPLAYED_MOVES ? [missed[0]!, missed[missed.length - 1]!] : missed;
  const history = times.map((at) => ({
    at,
    markets: marketsAt(g, update.event.eventId, model, at, drift),
  }));
  return { ...update, history };
}
