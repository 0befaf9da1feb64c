import type { EventStatus } from './reference-data.ts';
import { SPORTSBOOKS } from './reference-data.ts';

/**
 * The simulator's rules per sport (spec F, "where the data comes from"): how a game is played (periods, breaks,
 * overtime), how it scores, how the books price it (which sportsbooks, alternates, market set), how its record is
 * written, and how often the seeded statuses `STATUS_DELAYED`, `STATUS_POSTPONED` and `STATUS_CANCELED` happen.
 */

/** How a sport scores and what its markets are: it selects the score model and the market builders. */
export type SportKind = 'football' | 'baseball' | 'basketball' | 'hockey' | 'soccer' | 'mma';

/** The team record format of a sport (`teams[].record`): wins and losses first, then draws or overtime losses. */
export type RecordFormat = 'W-L' | 'W-L-OTL' | 'W-L-D';

/** How often a regular-season game is delayed, postponed or canceled (fractions), and how long a delay lasts. */
export interface FateRates {
  delayed: number;
  postponed: number;
  canceled: number;
  /** Delay before the actual start, minutes (uniform in the range). */
  delayMinutes: [number, number];
  /** `event_status_detail` while delayed. */
  delayDetail: string;
}

/** Sport rules of the simulator. */
export interface SportModel {
  sportId: number;
  kind: SportKind;
  /** Regulation periods (MMA: the rounds of an ordinary bout; a main event has 5). */
  periods: number;
  /** Real-time minutes of one period. */
  periodMinutes: number;
  breakAfter: Record<number, { status: EventStatus; minutes: number }>;
  /** Mean total and standard deviation of the final total; standard deviation of the margin. MMA: the finish
   * probability is `total`, moved by the total walk in steps of `sdTotal / 18`. */
  meanTotal: number;
  sdTotal: number;
  sdMargin: number;
  /** Home advantage in points. */
  homeEdge: number;
  /** Team strengths are spread over +-`strengthSpread` x `sdMargin`. */
  strengthSpread: number;
  /** Random spread of one period's points around its mean (basketball and football). */
  periodNoise: number;
  /** Alternate offsets for spreads and totals around the main line. */
  spreadAlternates: number[];
  totalAlternates: number[];
  /** A fixed main spread (baseball run line, hockey puck line: 1.5); absent: the nearest half point of the margin. */
  fixedSpread?: number;
  draws: boolean;
  overtimeMinutes: number;
  broadcast: string[];
  /** Sportsbooks pricing it, and those among them that carry alternates. */
  books: number[];
  alternateBooks: number[];
  /** Three-way regulation moneyline (563): soccer and hockey. */
  threeWay: boolean;
  /** Team totals (94). */
  teamTotals: boolean;
  record: RecordFormat;
  /** True when `record` counts postseason games too (college and cup competitions), false when regular season only. */
  recordCountsPostseason: boolean;
  fates: FateRates;
  /** First rotation number of a day (the next games count up by two). */
  rotationBase: number;
}

const ALL_BOOKS = SPORTSBOOKS.map((b) => b.id);
/** The US-facing books (every book but BetCRIS and LowVig): college, WNBA, MMA. */
const US_BOOKS = [2, 3, 4, 6, 7, 19, 22, 23, 25];
const SOCCER_BOOKS = [2, 3, 6, 7, 19, 22, 23, 25];
/** The books that price the smaller soccer leagues (MLS, Ligue 1, Bundesliga, LaLiga, Serie A). */
const LEAGUE_BOOKS = [2, 3, 19, 22, 23, 25];
const ALTERNATE_BOOKS = [3, 19, 23];

const INDOOR: FateRates = {
  delayed: 0.01,
  postponed: 0.004,
  canceled: 0.002,
  delayMinutes: [10, 45],
  delayDetail: 'Delayed',
};
const OUTDOOR: FateRates = {
  delayed: 0.03,
  postponed: 0.01,
  canceled: 0.002,
  delayMinutes: [15, 90],
  delayDetail: 'Weather Delay',
};
/** A league match is never canceled: a postponed one is made up. */
const SOCCER_FATES: FateRates = {
  delayed: 0.01,
  postponed: 0.008,
  canceled: 0,
  delayMinutes: [10, 45],
  delayDetail: 'Delayed',
};

const basketball = (
  sportId: number,
  periods: number,
  periodMinutes: number,
  o: Partial<SportModel> & Pick<SportModel, 'meanTotal' | 'sdTotal' | 'sdMargin' | 'homeEdge' | 'broadcast'>,
): SportModel => ({
  sportId,
  kind: 'basketball',
  periods,
  periodMinutes,
  breakAfter:
    periods === 4
      ? {
          1: { status: 'STATUS_END_PERIOD', minutes: 3 },
          2: { status: 'STATUS_HALFTIME', minutes: 15 },
          3: { status: 'STATUS_END_PERIOD', minutes: 3 },
        }
      : { 1: { status: 'STATUS_HALFTIME', minutes: 20 } },
  strengthSpread: 0.6,
  periodNoise: 14,
  spreadAlternates: [-2, -1, 1, 2],
  totalAlternates: [-5, 5],
  draws: false,
  overtimeMinutes: 12,
  books: ALL_BOOKS,
  alternateBooks: ALL_BOOKS,
  threeWay: false,
  teamTotals: true,
  record: 'W-L',
  recordCountsPostseason: false,
  fates: INDOOR,
  rotationBase: 501,
  ...o,
});

const football = (
  sportId: number,
  o: Partial<SportModel> & Pick<SportModel, 'meanTotal' | 'sdTotal' | 'sdMargin' | 'homeEdge' | 'broadcast'>,
): SportModel => ({
  sportId,
  kind: 'football',
  periods: 4,
  periodMinutes: 45,
  breakAfter: {
    1: { status: 'STATUS_END_PERIOD', minutes: 3 },
    2: { status: 'STATUS_HALFTIME', minutes: 20 },
    3: { status: 'STATUS_END_PERIOD', minutes: 3 },
  },
  strengthSpread: 0.6,
  periodNoise: 10,
  spreadAlternates: [-1, 1],
  totalAlternates: [-3, 3],
  draws: false,
  overtimeMinutes: 25,
  books: ALL_BOOKS,
  alternateBooks: ALL_BOOKS,
  threeWay: false,
  teamTotals: true,
  record: 'W-L',
  recordCountsPostseason: false,
  fates: OUTDOOR,
  rotationBase: 501,
  ...o,
});

const soccer = (
  sportId: number,
  o: Partial<SportModel> & Pick<SportModel, 'meanTotal' | 'broadcast' | 'rotationBase'>,
): SportModel => ({
  sportId,
  kind: 'soccer',
  periods: 2,
  periodMinutes: 49,
  breakAfter: { 1: { status: 'STATUS_HALFTIME', minutes: 15 } },
  sdTotal: 1.6,
  sdMargin: 1.7,
  homeEdge: 0.3,
  strengthSpread: 0.6,
  periodNoise: 0,
  spreadAlternates: [-1, 1],
  totalAlternates: [-1, 1],
  draws: true,
  overtimeMinutes: 33,
  books: SOCCER_BOOKS,
  alternateBooks: ALTERNATE_BOOKS,
  threeWay: true,
  teamTotals: true,
  record: 'W-L-D',
  recordCountsPostseason: false,
  fates: SOCCER_FATES,
  ...o,
});

/** The model of every listed sport (anchor ids 1-16). */
export const MODELS: Record<number, SportModel> = {
  1: football(1, {
    meanTotal: 54,
    sdTotal: 14,
    sdMargin: 16,
    homeEdge: 2.5,
    strengthSpread: 0.9,
    broadcast: ['ABC', 'ESPN', 'FOX', 'CBS', 'NBC', 'Big Ten Network', 'SEC Network', 'ACC Network'],
    books: US_BOOKS,
    alternateBooks: ALTERNATE_BOOKS,
    recordCountsPostseason: true,
    rotationBase: 101,
  }),
  2: football(2, {
    meanTotal: 45,
    sdTotal: 10,
    sdMargin: 13,
    homeEdge: 1.5,
    broadcast: ['CBS', 'FOX', 'NBC', 'ESPN', 'Prime Video'],
  }),
  3: {
    sportId: 3,
    kind: 'baseball',
    periods: 9,
    periodMinutes: 19,
    breakAfter: {},
    meanTotal: 8.6,
    sdTotal: 3,
    sdMargin: 4,
    homeEdge: 0.2,
    strengthSpread: 0.6,
    periodNoise: 0,
    spreadAlternates: [1],
    totalAlternates: [-1, 1],
    fixedSpread: 1.5,
    draws: false,
    overtimeMinutes: 20,
    broadcast: ['ESPN', 'FOX', 'TBS', 'Apple TV', 'MLB Network'],
    books: ALL_BOOKS,
    alternateBooks: ALL_BOOKS,
    threeWay: false,
    teamTotals: true,
    record: 'W-L',
    recordCountsPostseason: false,
    fates: {
      ...OUTDOOR,
      delayed: 0.04,
      postponed: 0.015,
      delayDetail: 'Rain Delay',
      delayMinutes: [20, 120],
    },
    rotationBase: 901,
  },
  4: basketball(4, 4, 32, {
    meanTotal: 226,
    sdTotal: 18,
    sdMargin: 12,
    homeEdge: 2.5,
    broadcast: ['ESPN', 'TNT', 'NBA TV', 'Prime Video', 'NBC'],
  }),
  5: basketball(5, 2, 50, {
    meanTotal: 145,
    sdTotal: 15,
    sdMargin: 11,
    homeEdge: 3.5,
    strengthSpread: 0.9,
    periodNoise: 16,
    overtimeMinutes: 15,
    spreadAlternates: [-1, 1],
    totalAlternates: [-4, 4],
    broadcast: ['ESPN', 'CBS', 'FOX', 'FS1', 'Peacock', 'Big Ten Network', 'SEC Network', 'ACC Network'],
    books: US_BOOKS,
    alternateBooks: ALTERNATE_BOOKS,
    recordCountsPostseason: true,
    rotationBase: 601,
  }),
  6: {
    sportId: 6,
    kind: 'hockey',
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
    strengthSpread: 0.6,
    periodNoise: 0,
    spreadAlternates: [1],
    totalAlternates: [-1, 1],
    fixedSpread: 1.5,
    draws: false,
    overtimeMinutes: 12,
    broadcast: ['ESPN', 'TNT', 'NHL Network', 'Sportsnet'],
    books: ALL_BOOKS,
    alternateBooks: ALL_BOOKS,
    threeWay: true,
    teamTotals: true,
    record: 'W-L-OTL',
    recordCountsPostseason: false,
    fates: INDOOR,
    rotationBase: 551,
  },
  7: {
    sportId: 7,
    kind: 'mma',
    periods: 3,
    periodMinutes: 5,
    breakAfter: {},
    meanTotal: 0.5,
    sdTotal: 0.18,
    sdMargin: 1,
    homeEdge: 0,
    strengthSpread: 0.6,
    periodNoise: 0,
    spreadAlternates: [],
    totalAlternates: [-1],
    draws: false,
    overtimeMinutes: 0,
    broadcast: ['ESPN+', 'Paramount+', 'CBS'],
    books: US_BOOKS,
    alternateBooks: ALTERNATE_BOOKS,
    threeWay: false,
    teamTotals: false,
    record: 'W-L-D',
    recordCountsPostseason: true,
    // A bout falls through (injury, missed weight): canceled; fight nights are neither delayed nor postponed here.
    fates: { delayed: 0, postponed: 0, canceled: 0.04, delayMinutes: [0, 0], delayDetail: '' },
    rotationBase: 9001,
  },
  8: basketball(8, 4, 28, {
    meanTotal: 163,
    sdTotal: 14,
    sdMargin: 11,
    homeEdge: 2,
    periodNoise: 10,
    spreadAlternates: [-1, 1],
    totalAlternates: [-4, 4],
    broadcast: ['ESPN', 'ABC', 'ION', 'CBS', 'NBC', 'Prime Video'],
    books: US_BOOKS,
    alternateBooks: ALTERNATE_BOOKS,
    rotationBase: 611,
  }),
  9: football(9, {
    meanTotal: 50,
    sdTotal: 12,
    sdMargin: 13,
    homeEdge: 2,
    broadcast: ['TSN', 'CBS Sports Network', 'RDS'],
    books: [2, 3, 6, 7, 9, 19, 23],
    alternateBooks: [3],
    rotationBase: 451,
  }),
  10: soccer(10, {
    books: LEAGUE_BOOKS,
    alternateBooks: [3, 19],
    meanTotal: 3.0,
    broadcast: ['Apple TV', 'FOX', 'FS1'],
    rotationBase: 2301,
  }),
  11: soccer(11, {
    meanTotal: 2.8,
    broadcast: ['NBC', 'Peacock', 'USA Network', 'Sky Sports', 'TNT Sports'],
    rotationBase: 2501,
  }),
  12: soccer(12, {
    books: LEAGUE_BOOKS,
    alternateBooks: [3, 19],
    meanTotal: 2.8,
    broadcast: ['beIN Sports', 'Ligue 1+', 'DAZN'],
    rotationBase: 2701,
  }),
  13: soccer(13, {
    books: LEAGUE_BOOKS,
    alternateBooks: [3, 19],
    meanTotal: 3.1,
    broadcast: ['ESPN+', 'Sky Sport', 'DAZN'],
    rotationBase: 2901,
  }),
  14: soccer(14, {
    books: LEAGUE_BOOKS,
    alternateBooks: [3, 19],
    meanTotal: 2.6,
    broadcast: ['ESPN+', 'Movistar+', 'DAZN'],
    rotationBase: 3101,
  }),
  15: soccer(15, {
    books: LEAGUE_BOOKS,
    alternateBooks: [3, 19],
    meanTotal: 2.6,
    broadcast: ['CBS Sports', 'Paramount+', 'DAZN'],
    rotationBase: 3301,
  }),
  16: soccer(16, {
    meanTotal: 3.0,
    broadcast: ['CBS', 'Paramount+', 'TNT Sports', 'Canal+'],
    recordCountsPostseason: true,
    // Cup nights are delayed now and then; a league-phase or knockout match is not moved here.
    fates: { ...SOCCER_FATES, postponed: 0, canceled: 0 },
    rotationBase: 3501,
  }),
};

/** Every sport the simulator can schedule (all the anchor's listed sports). */
export const SIMULATED_SPORTS: readonly number[] = Object.keys(MODELS).map(Number);

/** The model of `sportId`. @throws Error for a sport without one. */
export function modelOf(sportId: number): SportModel {
  const m = MODELS[sportId];
  if (!m) throw new Error(`no simulator model for sport ${sportId}`);
  return m;
}
