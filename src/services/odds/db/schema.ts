import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgSchema,
  text,
  timestamp,
  unique,
} from 'drizzle-orm/pg-core';
import { credentialColumns } from '../../../platform/db/columns.ts';

/**
 * Tables of the sports-odds service (schema `odds`, spec document 002, section F; anchor TheRundown API v2).
 *
 * Reference data (sports, sportsbooks, market definitions, teams, players) uses the anchor's integer ids. An event has
 * markets (`event_markets`: one per market id and period), a market has lines (`lines`: one per participant and line
 * value), and a line has one current price per sportsbook (`prices`). Every change of a price or of an event's status
 * or score is appended to `changes`, whose monotonic `id` is the delta-feed cursor (`meta.delta_last_id`) and whose
 * price rows are the full price history (openers, closing, market history).
 */
export const oddsSchema = pgSchema('odds');

/** A sport (anchor ids: 1 NCAAF, 2 NFL, 3 MLB, 4 NBA, ... 16 UEFA Champions League). */
export const sports = oddsSchema.table('sports', {
  id: integer('id').primaryKey(),
  name: text('name').notNull(),
  abbreviation: text('abbreviation').notNull(),
});

/** A sportsbook (the anchor calls them affiliates): 2 Bovada, 3 Pinnacle, ... 25 Caesars. */
export const sportsbooks = oddsSchema.table('sportsbooks', {
  id: integer('id').primaryKey(),
  name: text('name').notNull(),
  url: text('url').notNull(),
});

/** A market definition: 1 Moneyline, 2 Spread, 3 Total, 563 three-way, props (29 points, ...). */
export const marketDefinitions = oddsSchema.table('market_definitions', {
  id: integer('id').primaryKey(),
  name: text('name').notNull(),
  description: text('description').notNull(),
});

/** A team of a sport. `record` is the win-loss text shown in `teams[]` (`"12-5"`). */
export const teams = oddsSchema.table(
  'teams',
  {
    id: integer('id').primaryKey(),
    sportId: integer('sport_id')
      .notNull()
      .references(() => sports.id),
    name: text('name').notNull(),
    mascot: text('mascot').notNull(),
    abbreviation: text('abbreviation').notNull(),
    record: text('record').notNull().default(''),
    conference: text('conference').notNull().default(''),
    division: text('division').notNull().default(''),
  },
  (t) => [index('teams_sport_idx').on(t.sportId)],
);

/** A player (the `participant.id` of `TYPE_PLAYER` participants). */
export const players = oddsSchema.table(
  'players',
  {
    id: integer('id').primaryKey(),
    teamId: integer('team_id').references(() => teams.id),
    sportId: integer('sport_id')
      .notNull()
      .references(() => sports.id),
    name: text('name').notNull(),
    position: text('position').notNull().default(''),
    jerseyNumber: text('jersey_number').notNull().default(''),
  },
  (t) => [index('players_team_idx').on(t.teamId)],
);

/**
 * An event: schedule, status and score. `event_id` is canonical; `event_uuid` is kept for compatibility only.
 * `simulation` holds the simulator's model of the event (null for ingested events).
 */
export const events = oddsSchema.table(
  'events',
  {
    eventId: text('event_id').primaryKey(),
    eventUuid: text('event_uuid').notNull(),
    sportId: integer('sport_id')
      .notNull()
      .references(() => sports.id),
    eventDate: timestamp('event_date', { withTimezone: true }).notNull(),
    rotationNumberAway: integer('rotation_number_away').notNull(),
    rotationNumberHome: integer('rotation_number_home').notNull(),
    awayTeamId: integer('away_team_id')
      .notNull()
      .references(() => teams.id),
    homeTeamId: integer('home_team_id')
      .notNull()
      .references(() => teams.id),
    seasonType: text('season_type').notNull(),
    seasonYear: integer('season_year').notNull(),
    eventName: text('event_name').notNull(),
    leagueName: text('league_name').notNull(),
    gameNumber: integer('game_number'),
    gameType: text('game_type'),
    status: text('status').notNull(),
    statusDetail: text('status_detail').notNull().default(''),
    scoreAway: integer('score_away').notNull().default(0),
    scoreHome: integer('score_home').notNull().default(0),
    scoreAwayByPeriod: jsonb('score_away_by_period').$type<number[]>().notNull().default([]),
    scoreHomeByPeriod: jsonb('score_home_by_period').$type<number[]>().notNull().default([]),
    winnerAway: boolean('winner_away').notNull().default(false),
    winnerHome: boolean('winner_home').notNull().default(false),
    venueName: text('venue_name').notNull().default(''),
    venueLocation: text('venue_location').notNull().default(''),
    gameClock: integer('game_clock').notNull().default(0),
    displayClock: text('display_clock').notNull().default(''),
    gamePeriod: integer('game_period').notNull().default(0),
    broadcast: text('broadcast').notNull().default(''),
    simulation: jsonb('simulation'),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    index('events_sport_date_idx').on(t.sportId, t.eventDate),
    check(
      'events_game_type_check',
      sql`${t.gameType} is null or ${t.gameType} in ('doubleheader', 'makeup', 'doubleheader_makeup')`,
    ),
  ],
);

/** A market of an event: one market definition in one period (`period_id` 0 = full game, 1 = first half, ...). */
export const eventMarkets = oddsSchema.table(
  'event_markets',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    eventId: text('event_id')
      .notNull()
      .references(() => events.eventId, { onDelete: 'cascade' }),
    marketId: integer('market_id')
      .notNull()
      .references(() => marketDefinitions.id),
    periodId: integer('period_id').notNull().default(0),
  },
  (t) => [unique('event_markets_key').on(t.eventId, t.marketId, t.periodId)],
);

/**
 * A line: one participant (`TYPE_TEAM` team id, `TYPE_PLAYER` player id, `TYPE_RESULT` outcome index) at one line
 * value (`"-5.5"`, `"221.5"`; empty for moneyline) in one event market.
 */
export const lines = oddsSchema.table(
  'lines',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    eventMarketId: bigint('event_market_id', { mode: 'number' })
      .notNull()
      .references(() => eventMarkets.id, { onDelete: 'cascade' }),
    eventId: text('event_id').notNull(),
    participantId: integer('participant_id').notNull(),
    participantType: text('participant_type', {
      enum: ['TYPE_TEAM', 'TYPE_PLAYER', 'TYPE_RESULT'],
    }).notNull(),
    participantName: text('participant_name').notNull(),
    value: text('value').notNull(),
  },
  (t) => [
    unique('lines_key').on(t.eventMarketId, t.participantType, t.participantId, t.value),
    index('lines_event_idx').on(t.eventId),
  ],
);

/** The current price of a line at one sportsbook (integer American odds). `closed_at` set: off the board. */
export const prices = oddsSchema.table(
  'prices',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    lineId: bigint('line_id', { mode: 'number' })
      .notNull()
      .references(() => lines.id, { onDelete: 'cascade' }),
    eventId: text('event_id').notNull(),
    sportsbookId: integer('sportsbook_id')
      .notNull()
      .references(() => sportsbooks.id),
    price: integer('price').notNull(),
    isMainLine: boolean('is_main_line').notNull(),
    closedAt: timestamp('closed_at', { withTimezone: true }),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    unique('prices_key').on(t.lineId, t.sportsbookId),
    index('prices_event_idx').on(t.eventId),
    check('prices_american_check', sql`${t.price} <= -100 or ${t.price} >= 100`),
  ],
);

/**
 * The change log: every price change (`kind = 'price'`: `opened`, `changed`, `closed`, `reopened`) and every status or
 * score change (`kind = 'event'`). `id` is the delta cursor; price rows are the price history. `recorded_at` may be
 * earlier than `logged_at` (a backfilled history, an ingested price with its own `updated_at`).
 */
export const changes = oddsSchema.table(
  'changes',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    kind: text('kind', { enum: ['price', 'event'] }).notNull(),
    changeType: text('change_type').notNull(),
    eventId: text('event_id').notNull(),
    sportId: integer('sport_id').notNull(),
    priceId: bigint('price_id', { mode: 'number' }),
    lineId: bigint('line_id', { mode: 'number' }),
    affiliateId: integer('affiliate_id'),
    marketId: integer('market_id'),
    periodId: integer('period_id'),
    participantId: integer('participant_id'),
    participantType: text('participant_type'),
    line: text('line'),
    price: integer('price'),
    previousPrice: integer('previous_price'),
    isMainLine: boolean('is_main_line'),
    eventStatus: text('event_status'),
    scoreAway: integer('score_away'),
    scoreHome: integer('score_home'),
    /** When the change happened (a price's own time when the source gave one): the time of the price history. */
    recordedAt: timestamp('recorded_at', { withTimezone: true }).notNull(),
    /** When the change was written (the delta feed's 30-minute window counts from it). */
    loggedAt: timestamp('logged_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    index('changes_price_idx').on(t.priceId, t.recordedAt),
    index('changes_line_idx').on(t.lineId, t.id),
    index('changes_event_idx').on(t.eventId, t.id),
  ],
);

/** API keys (`X-Odds-Key`), stored as SHA-256 hashes, each on a plan (lookback and requests per minute). */
export const apiKeys = oddsSchema.table('api_keys', {
  ...credentialColumns(),
  plan: text('plan', { enum: ['free', 'starter', 'pro', 'enterprise'] }).notNull(),
  rateLimitPerMinute: integer('rate_limit_per_minute'),
});
