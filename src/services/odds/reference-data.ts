/**
 * Reference data of the sports-odds service (spec F; ids of the anchor, TheRundown API v2): sports,
 * sportsbooks (affiliates), market definitions, and real teams of the NFL, MLB, NBA, NHL and English Premier League
 * with a few real NBA players, used by the seed and by the feed simulator.
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

/** Market definitions. 1, 2, 3, 563, 29, 35, 39 and 94 are the anchor's; the soccer extras are this service's. */
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

/** A team row of the seed: `"Name|Mascot|ABR|Venue|City"`. */
type TeamLine = string;

const NFL: TeamLine[] = [
  'Arizona|Cardinals|ARI|State Farm Stadium|Glendale, AZ',
  'Atlanta|Falcons|ATL|Mercedes-Benz Stadium|Atlanta, GA',
  'Baltimore|Ravens|BAL|M&T Bank Stadium|Baltimore, MD',
  'Buffalo|Bills|BUF|Highmark Stadium|Orchard Park, NY',
  'Carolina|Panthers|CAR|Bank of America Stadium|Charlotte, NC',
  'Chicago|Bears|CHI|Soldier Field|Chicago, IL',
  'Cincinnati|Bengals|CIN|Paycor Stadium|Cincinnati, OH',
  'Cleveland|Browns|CLE|Huntington Bank Field|Cleveland, OH',
  'Dallas|Cowboys|DAL|AT&T Stadium|Arlington, TX',
  'Denver|Broncos|DEN|Empower Field at Mile High|Denver, CO',
  'Detroit|Lions|DET|Ford Field|Detroit, MI',
  'Green Bay|Packers|GB|Lambeau Field|Green Bay, WI',
  'Houston|Texans|HOU|NRG Stadium|Houston, TX',
  'Indianapolis|Colts|IND|Lucas Oil Stadium|Indianapolis, IN',
  'Jacksonville|Jaguars|JAX|EverBank Stadium|Jacksonville, FL',
  'Kansas City|Chiefs|KC|GEHA Field at Arrowhead Stadium|Kansas City, MO',
  'Las Vegas|Raiders|LV|Allegiant Stadium|Las Vegas, NV',
  'Los Angeles|Chargers|LAC|SoFi Stadium|Inglewood, CA',
  'Los Angeles|Rams|LAR|SoFi Stadium|Inglewood, CA',
  'Miami|Dolphins|MIA|Hard Rock Stadium|Miami Gardens, FL',
  'Minnesota|Vikings|MIN|U.S. Bank Stadium|Minneapolis, MN',
  'New England|Patriots|NE|Gillette Stadium|Foxborough, MA',
  'New Orleans|Saints|NO|Caesars Superdome|New Orleans, LA',
  'New York|Giants|NYG|MetLife Stadium|East Rutherford, NJ',
  'New York|Jets|NYJ|MetLife Stadium|East Rutherford, NJ',
  'Philadelphia|Eagles|PHI|Lincoln Financial Field|Philadelphia, PA',
  'Pittsburgh|Steelers|PIT|Acrisure Stadium|Pittsburgh, PA',
  "San Francisco|49ers|SF|Levi's Stadium|Santa Clara, CA",
  'Seattle|Seahawks|SEA|Lumen Field|Seattle, WA',
  'Tampa Bay|Buccaneers|TB|Raymond James Stadium|Tampa, FL',
  'Tennessee|Titans|TEN|Nissan Stadium|Nashville, TN',
  'Washington|Commanders|WSH|Northwest Stadium|Landover, MD',
];

const MLB: TeamLine[] = [
  'Arizona|Diamondbacks|ARI|Chase Field|Phoenix, AZ',
  'Atlanta|Braves|ATL|Truist Park|Atlanta, GA',
  'Baltimore|Orioles|BAL|Oriole Park at Camden Yards|Baltimore, MD',
  'Boston|Red Sox|BOS|Fenway Park|Boston, MA',
  'Chicago|Cubs|CHC|Wrigley Field|Chicago, IL',
  'Chicago|White Sox|CWS|Rate Field|Chicago, IL',
  'Cincinnati|Reds|CIN|Great American Ball Park|Cincinnati, OH',
  'Cleveland|Guardians|CLE|Progressive Field|Cleveland, OH',
  'Colorado|Rockies|COL|Coors Field|Denver, CO',
  'Detroit|Tigers|DET|Comerica Park|Detroit, MI',
  'Houston|Astros|HOU|Daikin Park|Houston, TX',
  'Kansas City|Royals|KC|Kauffman Stadium|Kansas City, MO',
  'Los Angeles|Angels|LAA|Angel Stadium|Anaheim, CA',
  'Los Angeles|Dodgers|LAD|Dodger Stadium|Los Angeles, CA',
  'Miami|Marlins|MIA|loanDepot park|Miami, FL',
  'Milwaukee|Brewers|MIL|American Family Field|Milwaukee, WI',
  'Minnesota|Twins|MIN|Target Field|Minneapolis, MN',
  'New York|Mets|NYM|Citi Field|Queens, NY',
  'New York|Yankees|NYY|Yankee Stadium|Bronx, NY',
  'Athletics|Athletics|ATH|Sutter Health Park|West Sacramento, CA',
  'Philadelphia|Phillies|PHI|Citizens Bank Park|Philadelphia, PA',
  'Pittsburgh|Pirates|PIT|PNC Park|Pittsburgh, PA',
  'San Diego|Padres|SD|Petco Park|San Diego, CA',
  'San Francisco|Giants|SF|Oracle Park|San Francisco, CA',
  'Seattle|Mariners|SEA|T-Mobile Park|Seattle, WA',
  'St. Louis|Cardinals|STL|Busch Stadium|St. Louis, MO',
  'Tampa Bay|Rays|TB|George M. Steinbrenner Field|Tampa, FL',
  'Texas|Rangers|TEX|Globe Life Field|Arlington, TX',
  'Toronto|Blue Jays|TOR|Rogers Centre|Toronto, ON',
  'Washington|Nationals|WSH|Nationals Park|Washington, DC',
];

const NBA: TeamLine[] = [
  'Atlanta|Hawks|ATL|State Farm Arena|Atlanta, GA',
  'Boston|Celtics|BOS|TD Garden|Boston, MA',
  'Brooklyn|Nets|BKN|Barclays Center|Brooklyn, NY',
  'Charlotte|Hornets|CHA|Spectrum Center|Charlotte, NC',
  'Chicago|Bulls|CHI|United Center|Chicago, IL',
  'Cleveland|Cavaliers|CLE|Rocket Arena|Cleveland, OH',
  'Dallas|Mavericks|DAL|American Airlines Center|Dallas, TX',
  'Denver|Nuggets|DEN|Ball Arena|Denver, CO',
  'Detroit|Pistons|DET|Little Caesars Arena|Detroit, MI',
  'Golden State|Warriors|GSW|Chase Center|San Francisco, CA',
  'Houston|Rockets|HOU|Toyota Center|Houston, TX',
  'Indiana|Pacers|IND|Gainbridge Fieldhouse|Indianapolis, IN',
  'LA|Clippers|LAC|Intuit Dome|Inglewood, CA',
  'Los Angeles|Lakers|LAL|Crypto.com Arena|Los Angeles, CA',
  'Memphis|Grizzlies|MEM|FedExForum|Memphis, TN',
  'Miami|Heat|MIA|Kaseya Center|Miami, FL',
  'Milwaukee|Bucks|MIL|Fiserv Forum|Milwaukee, WI',
  'Minnesota|Timberwolves|MIN|Target Center|Minneapolis, MN',
  'New Orleans|Pelicans|NOP|Smoothie King Center|New Orleans, LA',
  'New York|Knicks|NYK|Madison Square Garden|New York, NY',
  'Oklahoma City|Thunder|OKC|Paycom Center|Oklahoma City, OK',
  'Orlando|Magic|ORL|Kia Center|Orlando, FL',
  'Philadelphia|76ers|PHI|Xfinity Mobile Arena|Philadelphia, PA',
  'Phoenix|Suns|PHX|PHX Arena|Phoenix, AZ',
  'Portland|Trail Blazers|POR|Moda Center|Portland, OR',
  'Sacramento|Kings|SAC|Golden 1 Center|Sacramento, CA',
  'San Antonio|Spurs|SAS|Frost Bank Center|San Antonio, TX',
  'Toronto|Raptors|TOR|Scotiabank Arena|Toronto, ON',
  'Utah|Jazz|UTA|Delta Center|Salt Lake City, UT',
  'Washington|Wizards|WAS|Capital One Arena|Washington, DC',
];

const NHL: TeamLine[] = [
  'Anaheim|Ducks|ANA|Honda Center|Anaheim, CA',
  'Boston|Bruins|BOS|TD Garden|Boston, MA',
  'Buffalo|Sabres|BUF|KeyBank Center|Buffalo, NY',
  'Calgary|Flames|CGY|Scotiabank Saddledome|Calgary, AB',
  'Carolina|Hurricanes|CAR|Lenovo Center|Raleigh, NC',
  'Chicago|Blackhawks|CHI|United Center|Chicago, IL',
  'Colorado|Avalanche|COL|Ball Arena|Denver, CO',
  'Columbus|Blue Jackets|CBJ|Nationwide Arena|Columbus, OH',
  'Dallas|Stars|DAL|American Airlines Center|Dallas, TX',
  'Detroit|Red Wings|DET|Little Caesars Arena|Detroit, MI',
  'Edmonton|Oilers|EDM|Rogers Place|Edmonton, AB',
  'Florida|Panthers|FLA|Amerant Bank Arena|Sunrise, FL',
  'Los Angeles|Kings|LAK|Crypto.com Arena|Los Angeles, CA',
  'Minnesota|Wild|MIN|Grand Casino Arena|St. Paul, MN',
  'Montreal|Canadiens|MTL|Bell Centre|Montreal, QC',
  'Nashville|Predators|NSH|Bridgestone Arena|Nashville, TN',
  'New Jersey|Devils|NJD|Prudential Center|Newark, NJ',
  'New York|Islanders|NYI|UBS Arena|Elmont, NY',
  'New York|Rangers|NYR|Madison Square Garden|New York, NY',
  'Ottawa|Senators|OTT|Canadian Tire Centre|Ottawa, ON',
  'Philadelphia|Flyers|PHI|Xfinity Mobile Arena|Philadelphia, PA',
  'Pittsburgh|Penguins|PIT|PPG Paints Arena|Pittsburgh, PA',
  'San Jose|Sharks|SJS|SAP Center|San Jose, CA',
  'Seattle|Kraken|SEA|Climate Pledge Arena|Seattle, WA',
  'St. Louis|Blues|STL|Enterprise Center|St. Louis, MO',
  'Tampa Bay|Lightning|TBL|Amalie Arena|Tampa, FL',
  'Toronto|Maple Leafs|TOR|Scotiabank Arena|Toronto, ON',
  'Utah|Mammoth|UTA|Delta Center|Salt Lake City, UT',
  'Vancouver|Canucks|VAN|Rogers Arena|Vancouver, BC',
  'Vegas|Golden Knights|VGK|T-Mobile Arena|Las Vegas, NV',
  'Washington|Capitals|WSH|Capital One Arena|Washington, DC',
  'Winnipeg|Jets|WPG|Canada Life Centre|Winnipeg, MB',
];

const EPL: TeamLine[] = [
  'Arsenal||ARS|Emirates Stadium|London',
  'Aston Villa||AVL|Villa Park|Birmingham',
  'AFC Bournemouth||BOU|Vitality Stadium|Bournemouth',
  'Brentford||BRE|Gtech Community Stadium|London',
  'Brighton & Hove Albion||BHA|American Express Stadium|Brighton',
  'Burnley||BUR|Turf Moor|Burnley',
  'Chelsea||CHE|Stamford Bridge|London',
  'Crystal Palace||CRY|Selhurst Park|London',
  'Everton||EVE|Hill Dickinson Stadium|Liverpool',
  'Fulham||FUL|Craven Cottage|London',
  'Leeds United||LEE|Elland Road|Leeds',
  'Liverpool||LIV|Anfield|Liverpool',
  'Manchester City||MCI|Etihad Stadium|Manchester',
  'Manchester United||MUN|Old Trafford|Manchester',
  "Newcastle United||NEW|St James' Park|Newcastle upon Tyne",
  'Nottingham Forest||NFO|City Ground|Nottingham',
  'Sunderland||SUN|Stadium of Light|Sunderland',
  'Tottenham Hotspur||TOT|Tottenham Hotspur Stadium|London',
  'West Ham United||WHU|London Stadium|London',
  'Wolverhampton Wanderers||WOL|Molineux Stadium|Wolverhampton',
];

/** NBA players for props: `"ABR|Name|Position|Number"`, two per team. */
const NBA_PLAYERS: string[] = [
  'ATL|Trae Young|G|11',
  'ATL|Jalen Johnson|F|1',
  'BOS|Jayson Tatum|F|0',
  'BOS|Jaylen Brown|G|7',
  'BKN|Cam Thomas|G|24',
  'BKN|Michael Porter Jr.|F|17',
  'CHA|LaMelo Ball|G|1',
  'CHA|Brandon Miller|F|24',
  'CHI|Coby White|G|0',
  'CHI|Josh Giddey|G|3',
  'CLE|Donovan Mitchell|G|45',
  'CLE|Evan Mobley|F|4',
  'DAL|Anthony Davis|F|3',
  'DAL|Cooper Flagg|F|32',
  'DEN|Nikola Jokic|C|15',
  'DEN|Jamal Murray|G|27',
  'DET|Cade Cunningham|G|2',
  'DET|Jalen Duren|C|0',
  'GSW|Stephen Curry|G|30',
  'GSW|Jimmy Butler|F|10',
  'HOU|Kevin Durant|F|7',
  'HOU|Alperen Sengun|C|28',
  'IND|Pascal Siakam|F|43',
  'IND|Andrew Nembhard|G|2',
  'LAC|James Harden|G|1',
  'LAC|Kawhi Leonard|F|2',
  'LAL|Luka Doncic|G|77',
  'LAL|LeBron James|F|23',
  'MEM|Ja Morant|G|12',
  'MEM|Jaren Jackson Jr.|F|13',
  'MIA|Bam Adebayo|C|13',
  'MIA|Tyler Herro|G|14',
  'MIL|Giannis Antetokounmpo|F|34',
  'MIL|Kyle Kuzma|F|18',
  'MIN|Anthony Edwards|G|5',
  'MIN|Julius Randle|F|30',
  'NOP|Zion Williamson|F|1',
  'NOP|Trey Murphy III|F|25',
  'NYK|Jalen Brunson|G|11',
  'NYK|Karl-Anthony Towns|C|32',
  'OKC|Shai Gilgeous-Alexander|G|2',
  'OKC|Chet Holmgren|C|7',
  'ORL|Paolo Banchero|F|5',
  'ORL|Franz Wagner|F|22',
  'PHI|Tyrese Maxey|G|0',
  'PHI|Joel Embiid|C|21',
  'PHX|Devin Booker|G|1',
  'PHX|Jalen Green|G|4',
  'POR|Deni Avdija|F|8',
  'POR|Shaedon Sharpe|G|17',
  'SAC|Zach LaVine|G|8',
  'SAC|Domantas Sabonis|C|10',
  'SAS|Victor Wembanyama|C|1',
  "SAS|De'Aaron Fox|G|4",
  'TOR|Scottie Barnes|F|4',
  'TOR|Brandon Ingram|F|3',
  'UTA|Lauri Markkanen|F|23',
  'UTA|Keyonte George|G|3',
  'WAS|Alex Sarr|C|20',
  'WAS|CJ McCollum|G|3',
];

/** A team of the seed. Ids: NFL 200+, MLB 300+, NBA 400+, NHL 600+, EPL 1100+ (by list order). */
export interface SeedTeam {
  id: number;
  sportId: number;
  name: string;
  mascot: string;
  abbreviation: string;
  venueName: string;
  venueLocation: string;
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

function teamsOf(sportId: number, base: number, list: TeamLine[]): SeedTeam[] {
  return list.map((line, i) => {
    const [name, mascot, abbreviation, venueName, venueLocation] = line.split('|') as [
      string,
      string,
      string,
      string,
      string,
    ];
    return { id: base + i + 1, sportId, name, mascot, abbreviation, venueName, venueLocation };
  });
}

/** Every team of the seed. */
export const TEAMS: SeedTeam[] = [
  ...teamsOf(2, 200, NFL),
  ...teamsOf(3, 300, MLB),
  ...teamsOf(4, 400, NBA),
  ...teamsOf(6, 600, NHL),
  ...teamsOf(11, 1100, EPL),
];

/** Every player of the seed. */
export const PLAYERS: SeedPlayer[] = NBA_PLAYERS.map((line, i) => {
  const [abr, name, position, jerseyNumber] = line.split('|') as [string, string, string, string];
  const team = TEAMS.find((t) => t.sportId === 4 && t.abbreviation === abr);
  if (!team) throw new Error(`unknown NBA team ${abr}`);
  return { id: 10001 + i, teamId: team.id, sportId: 4, name, position, jerseyNumber };
});

/** League names per simulated sport (`schedule.league_name`). */
export const LEAGUE_NAMES: Record<number, string> = {
  2: 'National Football League',
  3: 'Major League Baseball',
  4: 'National Basketball Association',
  6: 'National Hockey League',
  11: 'Premier League',
};
