import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Reference data of the sports-odds service (spec F; ids of the anchor, TheRundown API v2): sports, sportsbooks
 * (affiliates), market definitions, and the real teams (fighters in MMA), players and neutral venues of every listed
 * sport, used by the seed and by the feed simulator. The facts live in tab-separated files under `sports-data/`.
 */

/** Sport ids of the anchor. */
export const SPORTS: { id: number; name: string; abbreviation: string }[] = [
  { id: 1, name: 'NCAA Football', abbreviation: 'NCAAF' },
  { id: 2, name: 'NFL', abbreviation: 'NFL' },
  { id: 3, name: 'MLB', abbreviation: 'MLB' },
  { id: 4, name: 'NBA', abbreviation: 'NBA' },
  { id: 5, name: 'NCAA Basketball', abbreviation: 'NCAAB' },
  { id: 6, name: 'NHL', abbreviation: 'NHL' },
  { id: 7, name: 'UFC/MMA', abbreviation: 'MMA' },
  { id: 8, name: 'WNBA', abbreviation: 'WNBA' },
  { id: 9, name: 'CFL', abbreviation: 'CFL' },
  { id: 10, name: 'MLS', abbreviation: 'MLS' },
  { id: 11, name: 'English Premier League', abbreviation: 'EPL' },
  { id: 12, name: 'Ligue 1', abbreviation: 'FRA1' },
  { id: 13, name: 'Bundesliga', abbreviation: 'GER1' },
  { id: 14, name: 'La Liga', abbreviation: 'ESP1' },
  { id: 15, name: 'Serie A', abbreviation: 'ITA1' },
  { id: 16, name: 'UEFA Champions League', abbreviation: 'UEFA_CL' },
];

/** Soccer sport ids (default markets include 563). */
export const SOCCER_SPORT_IDS: readonly number[] = [10, 11, 12, 13, 14, 15, 16];
/** Hockey sport id (default markets include 563). */
export const HOCKEY_SPORT_ID = 6;

/** Sportsbooks (affiliates) of the anchor, with the hold (margin, fraction) the simulator prices with. */
export const SPORTSBOOKS: { id: number; name: string; url: string; hold: number }[] = [
  { id: 2, name: 'Bovada', url: 'https://www.bovada.lv', hold: 0.05 },
  { id: 3, name: 'Pinnacle', url: 'https://www.pinnacle.com', hold: 0.025 },
  { id: 4, name: 'Sportsbetting', url: 'https://www.sportsbetting.ag', hold: 0.045 },
  { id: 6, name: 'BetOnline', url: 'https://www.betonline.ag', hold: 0.045 },
  { id: 7, name: 'BookMaker', url: 'https://www.bookmaker.eu', hold: 0.035 },
  { id: 9, name: 'BetCRIS', url: 'https://www.betcris.com', hold: 0.04 },
  { id: 11, name: 'LowVig', url: 'https://www.lowvig.ag', hold: 0.025 },
  { id: 19, name: 'DraftKings', url: 'https://sportsbook.draftkings.com', hold: 0.048 },
  { id: 22, name: 'BetMGM', url: 'https://sports.betmgm.com', hold: 0.05 },
  { id: 23, name: 'FanDuel', url: 'https://sportsbook.fanduel.com', hold: 0.045 },
  { id: 25, name: 'Caesars', url: 'https://www.caesars.com/sportsbook-and-casino', hold: 0.05 },
];

/** Market definitions. 1, 2, 3, 563, 29, 35, 39 and 94 are the anchor's; the soccer (570-578) and MMA (580, 581) extras
 * are this service's. */
export const MARKETS: { id: number; name: string; description: string }[] = [
  { id: 1, name: 'moneyline', description: 'Moneyline: the winner (two-way; soccer: draw no bet)' },
  { id: 2, name: 'handicap', description: 'Point spread / handicap (run line, puck line, Asian handicap)' },
  { id: 3, name: 'totals', description: 'Total points, runs or goals: over / under' },
  { id: 29, name: 'player_points', description: 'Player points: over / under' },
  { id: 35, name: 'player_rebounds', description: 'Player rebounds: over / under' },
  { id: 39, name: 'player_assists', description: 'Player assists: over / under' },
  { id: 94, name: 'team_totals', description: 'Team total: over / under per team' },
  { id: 563, name: 'moneyline_3way', description: 'Three-way moneyline in regulation (home, away, draw)' },
  { id: 570, name: 'both_teams_to_score', description: 'Both teams to score: yes / no' },
  { id: 571, name: 'double_chance', description: 'Double chance: home or draw, away or draw, home or away' },
  { id: 572, name: 'draw_no_bet_1h', description: 'First-half winner (two-way)' },
  { id: 573, name: 'total_corners', description: 'Total corners: over / under' },
  { id: 574, name: 'total_cards', description: 'Total cards: over / under' },
  { id: 577, name: 'totals_1h', description: 'First-half total goals: over / under' },
  { id: 578, name: 'handicap_1h', description: 'First-half handicap' },
  {
    id: 580,
    name: 'method_of_victory',
    description: 'MMA method of victory: each fighter by KO/TKO, submission or decision',
  },
  { id: 581, name: 'fight_goes_distance', description: 'MMA fight goes the distance: yes / no' },
];

/** Event statuses of the anchor. */
export const EVENT_STATUSES = [
  'STATUS_SCHEDULED',
  'STATUS_DELAYED',
  'STATUS_POSTPONED',
  'STATUS_IN_PROGRESS',
  'STATUS_HALFTIME',
  'STATUS_END_PERIOD',
  'STATUS_OVERTIME',
  'STATUS_FINAL',
  'STATUS_CANCELED',
] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

/** Participant types of a market. */
export const PARTICIPANT_TYPES = ['TYPE_TEAM', 'TYPE_PLAYER', 'TYPE_RESULT'] as const;
export type ParticipantType = (typeof PARTICIPANT_TYPES)[number];

/** A team of the seed (a fighter in MMA). Ids: sport id x 100 + its line in the sport's data file (MMA 7000+). */
export interface SeedTeam {
  id: number;
  sportId: number;
  name: string;
  mascot: string;
  abbreviation: string;
  venueName: string;
  venueLocation: string;
  /** College conference, pro league conference (`AFC`, `Eastern Conference`); empty when the sport has none. */
  conference: string;
  /** Division (CFL `West Division`); an MMA fighter's weight class. */
  division: string;
}

/** A player of the seed (NBA, ids 10000+). */
export interface SeedPlayer {
  id: number;
  teamId: number;
  sportId: number;
  name: string;
  position: string;
  jerseyNumber: string;
}

const DATA_DIR = path.join(import.meta.dirname, 'sports-data');

/**
 * The rows of a tab-separated data file of `sports-data/` as objects keyed by its header line (the facts of the seed: teams,
 * fighters, players, venues).
 * @throws Error naming the file and line of a row whose field count differs from the header's.
 */
function readTsv(file: string): Record<string, string>[] {
  const [header, ...lines] = readFileSync(path.join(DATA_DIR, file), 'utf8')
    .split('\n')
    .filter((l) => l !== '');
  const columns = header!.split('\t');
  return lines.map((line, i) => {
    const fields = line.split('\t');
    if (fields.length !== columns.length)
      throw new Error(
        `sports-data/${file} line ${i + 2}: ${fields.length} fields, the header has ${columns.length}`,
      );
    return Object.fromEntries(columns.map((c, j) => [c, fields[j]!]));
  });
}

/** The data file and id base of each sport's teams (fighters in MMA). */
const TEAM_FILES: { sportId: number; base: number; file: string }[] = [
  { sportId: 1, base: 100, file: 'teams-ncaaf.tsv' },
  { sportId: 2, base: 200, file: 'teams-nfl.tsv' },
  { sportId: 3, base: 300, file: 'teams-mlb.tsv' },
  { sportId: 4, base: 400, file: 'teams-nba.tsv' },
  { sportId: 5, base: 500, file: 'teams-ncaab.tsv' },
  { sportId: 6, base: 600, file: 'teams-nhl.tsv' },
  { sportId: 7, base: 7000, file: 'fighters-ufc.tsv' },
  { sportId: 8, base: 800, file: 'teams-wnba.tsv' },
  { sportId: 9, base: 900, file: 'teams-cfl.tsv' },
  { sportId: 10, base: 1000, file: 'teams-mls.tsv' },
  { sportId: 11, base: 1100, file: 'teams-epl.tsv' },
  { sportId: 12, base: 1200, file: 'teams-fra1.tsv' },
  { sportId: 13, base: 1300, file: 'teams-ger1.tsv' },
  { sportId: 14, base: 1400, file: 'teams-esp1.tsv' },
  { sportId: 15, base: 1500, file: 'teams-ita1.tsv' },
  { sportId: 16, base: 1600, file: 'teams-ucl.tsv' },
];

/** Every team of the seed, every sport (ids stable: the order of the data files is kept). */
export const TEAMS: SeedTeam[] = TEAM_FILES.flatMap(({ sportId, base, file }) =>
  readTsv(file).map((r, i) => ({
    id: base + i + 1,
    sportId,
    name: r.name!,
    mascot: r.mascot!,
    abbreviation: r.abbreviation!,
    venueName: r.venue!,
    venueLocation: r.location!,
    conference: r.conference!,
    division: r.division!,
  })),
);

/** Every player of the seed (NBA players for props, two per team). */
export const PLAYERS: SeedPlayer[] = readTsv('players-nba.tsv').map((r, i) => {
  const team = TEAMS.find((t) => t.sportId === 4 && t.abbreviation === r.team);
  if (!team) throw new Error(`sports-data/players-nba.tsv: unknown NBA team ${r.team}`);
  return {
    id: 10001 + i,
    teamId: team.id,
    sportId: 4,
    name: r.name!,
    position: r.position!,
    jerseyNumber: r.jersey_number!,
  };
});

/** A neutral site: the name of the event held there (a bowl, a final) and its venue. */
export interface NeutralVenue {
  eventName: string;
  venueName: string;
  venueLocation: string;
}

const VENUE_ROWS = readTsv('venues.tsv');

/**
 * The neutral sites of `key` (`ncaaf-bowl`, `ucl-final`, ...) for the season starting in `seasonYear`: the rows of that
 * season when `sports-data/venues.tsv` has any, otherwise its rows for every season.
 */
export function neutralVenues(key: string, seasonYear: number): NeutralVenue[] {
  const rows = VENUE_ROWS.filter((r) => r.key === key);
  const ofYear = rows.filter((r) => r.season_year === String(seasonYear));
  return (ofYear.length > 0 ? ofYear : rows.filter((r) => r.season_year === '')).map((r) => ({
    eventName: r.event_name!,
    venueName: r.venue!,
    venueLocation: r.location!,
  }));
}

/** Fight-night venues with the UTC start of the main card (minutes after the card's Saturday 00:00 UTC). */
export const FIGHT_VENUES: { venueName: string; venueLocation: string; mainCardMinute: number }[] = readTsv(
  'venues-ufc.tsv',
).map((r) => {
  const [h, m] = r.main_card_utc!.split(':').map(Number);
  return { venueName: r.venue!, venueLocation: r.location!, mainCardMinute: h! * 60 + m! };
});

/** League names (`schedule.league_name`). */
export const LEAGUE_NAMES: Record<number, string> = {
  1: 'NCAA Division I FBS',
  2: 'National Football League',
  3: 'Major League Baseball',
  4: 'National Basketball Association',
  5: "NCAA Division I Men's Basketball",
  6: 'National Hockey League',
  7: 'Ultimate Fighting Championship',
  8: "Women's National Basketball Association",
  9: 'Canadian Football League',
  10: 'Major League Soccer',
  11: 'Premier League',
  12: 'Ligue 1',
  13: 'Bundesliga',
  14: 'LaLiga',
  15: 'Serie A',
  16: 'UEFA Champions League',
};
