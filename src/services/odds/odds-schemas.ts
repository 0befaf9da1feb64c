import { type TSchema, Type } from '@sinclair/typebox';
import { INT4_MAX, Int4 } from '../../platform/schemas.ts';
import { DELTA_DEFAULT_LIMIT, DELTA_MAX_LIMIT } from './catalog.ts';
import { MAX_OFFSET_MINUTES } from './odds-query.ts';

/** `{error, message}` (spec F errors; anchor TheRundown). */
export const OddsErrorBody = Type.Object(
  { error: Type.String(), message: Type.String() },
  { $id: 'OddsError', description: 'Error body: a short stable name and a human message' },
);

const IdList = (description: string) =>
  Type.String({ pattern: '^\\s*\\d+\\s*(,\\s*\\d+\\s*)*$', description });

/** The shared query parameters of the events endpoints (spec F). */
export const EventQuerySchema = Type.Object(
  {
    market_ids: Type.Optional(
      IdList('Comma-separated market ids, at most 12. Default 1,2,3 (soccer and hockey 1,2,3,563).'),
    ),
    affiliate_ids: Type.Optional(
      IdList('Sportsbook ids; 0 alone = scores only (markets omitted). Default all.'),
    ),
    offset: Type.Optional(
      Type.Integer({
        minimum: -MAX_OFFSET_MINUTES,
        maximum: MAX_OFFSET_MINUTES,
        description:
          'Minutes added to midnight UTC for the day boundary (300 = UTC-5, -840 = UTC+14), an integer from -840 ' +
          'to 840. Default 0.',
      }),
    ),
    event_status: Type.Optional(
      Type.String({ description: 'Comma-separated statuses to include (applied before exclude_status).' }),
    ),
    exclude_status: Type.Optional(Type.String({ description: 'Comma-separated statuses to exclude.' })),
    main_line: Type.Optional(
      Type.Boolean({ description: 'Only main lines of spreads and totals. Default false.' }),
    ),
    participant_ids: Type.Optional(
      IdList('Comma-separated participant ids (team, player or outcome), at most 99.'),
    ),
    participant_type: Type.Optional(Type.String({ description: 'TYPE_TEAM, TYPE_PLAYER or TYPE_RESULT.' })),
    hide_no_markets: Type.Optional(
      Type.Boolean({ description: 'Drop events without market data. Default false.' }),
    ),
  },
  { additionalProperties: false },
);

/** Snapshot endpoints add `hide_closed`. */
export const SnapshotQuerySchema = Type.Object(
  {
    ...EventQuerySchema.properties,
    hide_closed: Type.Optional(
      Type.Boolean({ description: 'Exclude lines that are currently closed. Default false.' }),
    ),
  },
  { additionalProperties: false },
);

const Price = Type.Object({
  id: Type.Integer(),
  price: Type.Integer({ description: 'American odds' }),
  is_main_line: Type.Boolean(),
  updated_at: Type.String({ format: 'date-time' }),
  closed_at: Type.Optional(
    Type.String({ format: 'date-time', description: 'Present when the line is off the board' }),
  ),
});
const Line = Type.Object({
  id: Type.Integer(),
  value: Type.String({ description: 'Empty for moneyline' }),
  prices: Type.Record(Type.String(), Price, { description: 'Keyed by sportsbook (affiliate) id' }),
});
const Participant = Type.Object({
  id: Type.Integer({
    description: 'Join key: team id (TYPE_TEAM), player id (TYPE_PLAYER), outcome index (TYPE_RESULT)',
  }),
  type: Type.String(),
  name: Type.String(),
  lines: Type.Array(Line),
});
const Market = Type.Object({
  id: Type.Integer(),
  market_id: Type.Integer(),
  period_id: Type.Integer(),
  name: Type.String(),
  market_description: Type.String(),
  participants: Type.Array(Participant),
});
const Team = Type.Object({
  team_id: Type.Integer(),
  name: Type.String(),
  mascot: Type.String(),
  abbreviation: Type.String(),
  record: Type.String(),
  is_away: Type.Boolean(),
  is_home: Type.Boolean(),
});
const Score = Type.Object({
  event_id: Type.String(),
  event_status: Type.String(),
  score_away: Int4(),
  score_home: Int4(),
  winner_away: Type.Boolean(),
  winner_home: Type.Boolean(),
  score_away_by_period: Type.Array(Int4()),
  score_home_by_period: Type.Array(Int4()),
  venue_name: Type.String(),
  venue_location: Type.String(),
  game_clock: Int4({ description: 'Seconds' }),
  display_clock: Type.String(),
  game_period: Int4(),
  broadcast: Type.String(),
  event_status_detail: Type.String(),
  updated_at: Type.String({ format: 'date-time' }),
});
const Schedule = Type.Object({
  season_type: Type.String(),
  season_year: Int4({ minimum: 1, maximum: 9999 }),
  event_name: Type.String(),
  league_name: Type.String(),
  game_number: Type.Optional(Int4({ minimum: 1, description: 'Baseball doubleheaders and makeups only' })),
  game_type: Type.Optional(
    Type.String({ description: 'doubleheader, makeup or doubleheader_makeup; omitted otherwise' }),
  ),
});
/** One element of `events` (spec F, Event). */
export const EventSchema = Type.Object({
  event_id: Type.String(),
  sport_id: Type.Integer(),
  event_uuid: Type.String(),
  event_date: Type.String({ format: 'date-time' }),
  rotation_number_away: Type.Integer(),
  rotation_number_home: Type.Integer(),
  score: Score,
  teams: Type.Array(Team),
  schedule: Schedule,
  markets: Type.Array(Market),
});

/** `{meta: {delta_last_id?}, events: [...]}` (spec F). */
export const EventsEnvelope = Type.Object({
  meta: Type.Object({
    delta_last_id: Type.Optional(Type.Integer({ description: 'Cursor for GET /api/v2/markets/delta' })),
    provisional: Type.Optional(Type.Boolean({ description: 'Closing snapshot taken before the start' })),
  }),
  events: Type.Array(EventSchema),
});

export const SportEventsParams = Type.Object({
  sportID: Int4({ minimum: 1 }),
  date: Type.String({ format: 'date', description: 'YYYY-MM-DD, years 0001 to 9999' }),
});
export const EventParams = Type.Object({ eventID: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }) });
export const SportParams = Type.Object({ sportID: Int4({ minimum: 1 }) });
export const TeamParams = Type.Object({ teamID: Int4({ minimum: 1 }) });
export const PlayerParams = Type.Object({ playerID: Int4({ minimum: 1 }) });
export const LineParams = Type.Object({
  lineID: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
});
export const HistoryQuery = Type.Object(
  { affiliate_ids: Type.Optional(IdList('Sportsbook ids (default all)')) },
  { additionalProperties: false },
);

export const TeamRecordSchema = Type.Object({
  team_id: Type.Integer(),
  sport_id: Type.Integer(),
  name: Type.String(),
  mascot: Type.String(),
  abbreviation: Type.String(),
  record: Type.String(),
  conference: Type.String(),
  division: Type.String(),
});
export const PlayerRecordSchema = Type.Object({
  player_id: Type.Integer(),
  team_id: Type.Union([Type.Integer(), Type.Null()]),
  sport_id: Type.Integer(),
  name: Type.String(),
  position: Type.String(),
  jersey_number: Type.String(),
});

const nullable = (t: TSchema) => Type.Union([t, Type.Null()]);
/** One row of the delta feed, market history and WebSocket stream. */
export const ChangeSchema = Type.Object({
  id: Type.Integer(),
  kind: Type.String({ description: 'price or event' }),
  change_type: Type.String({
    description: 'opened, changed, closed, reopened (price); status, score (event)',
  }),
  event_id: Type.String(),
  sport_id: Type.Integer(),
  affiliate_id: nullable(Type.Integer()),
  market_id: nullable(Type.Integer()),
  period_id: nullable(Type.Integer()),
  line_id: nullable(Type.Integer()),
  price_id: nullable(Type.Integer()),
  participant_id: nullable(Type.Integer()),
  participant_type: nullable(Type.String()),
  line: nullable(Type.String()),
  price: nullable(Type.Integer()),
  previous_price: nullable(Type.Integer()),
  is_main_line: nullable(Type.Boolean()),
  event_status: nullable(Type.String()),
  score_away: nullable(Type.Integer()),
  score_home: nullable(Type.Integer()),
  updated_at: Type.String({ format: 'date-time' }),
});

export const DeltaQuerySchema = Type.Object(
  {
    last_id: Type.Integer({
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      description: 'meta.delta_last_id of the last answer',
    }),
    sport_id: Type.Optional(Int4({ minimum: 1 })),
    event_id: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' })),
    affiliate_ids: Type.Optional(IdList('Sportsbook ids')),
    market_ids: Type.Optional(IdList('Market ids, at most 12')),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: DELTA_MAX_LIMIT,
        default: DELTA_DEFAULT_LIMIT,
        description: 'Most changes per answer: an integer from 1 to 5000, default 1000.',
      }),
    ),
  },
  { additionalProperties: false },
);
export const DeltaResponse = Type.Object({
  meta: Type.Object({ delta_last_id: Type.Integer(), count: Type.Integer(), has_more: Type.Boolean() }),
  deltas: Type.Array(ChangeSchema),
});

export const StreamQuerySchema = Type.Object(
  {
    event_id: Type.Optional(Type.String({ description: 'Comma-separated event ids' })),
    sport_id: Type.Optional(Int4({ minimum: 1 })),
    market_ids: Type.Optional(IdList('Market ids')),
    affiliate_ids: Type.Optional(IdList('Sportsbook ids')),
    key: Type.Optional(Type.String({ description: 'The API key, for clients that cannot set X-Odds-Key' })),
  },
  { additionalProperties: false },
);

const IngestPriceSchema = Type.Object({
  id: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
  price: Int4({ minimum: -INT4_MAX, description: 'American odds' }),
  is_main_line: Type.Optional(Type.Boolean()),
  closed: Type.Optional(Type.Boolean()),
  updated_at: Type.Optional(Type.String()),
  closed_at: Type.Optional(Type.String()),
});
/** The ingest body: `{events: [...]}` in the service's own event shape (ids inside markets are ignored). */
export const IngestBody = Type.Object(
  {
    events: Type.Array(
      Type.Object({
        event_id: Type.String({ minLength: 1, maxLength: 64 }),
        event_uuid: Type.Optional(Type.String({ maxLength: 64 })),
        sport_id: Int4({ minimum: 1 }),
        event_date: Type.String({ format: 'date-time' }),
        rotation_number_away: Type.Optional(Int4()),
        rotation_number_home: Type.Optional(Int4()),
        score: Type.Optional(Type.Partial(Type.Omit(Score, ['event_id', 'updated_at']))),
        teams: Type.Array(
          Type.Object({
            team_id: Int4({ minimum: 1 }),
            name: Type.String({ minLength: 1 }),
            mascot: Type.Optional(Type.String()),
            abbreviation: Type.Optional(Type.String()),
            record: Type.Optional(Type.String()),
            is_away: Type.Boolean(),
            is_home: Type.Boolean(),
          }),
        ),
        schedule: Type.Optional(Type.Partial(Schedule)),
        markets: Type.Optional(
          Type.Array(
            Type.Object({
              id: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
              market_id: Int4({ minimum: 1 }),
              period_id: Type.Optional(Int4()),
              name: Type.Optional(Type.String()),
              market_description: Type.Optional(Type.String()),
              participants: Type.Array(
                Type.Object({
                  id: Int4(),
                  type: Type.String(),
                  name: Type.String(),
                  lines: Type.Array(
                    Type.Object({
                      id: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
                      value: Type.String({ maxLength: 40 }),
                      prices: Type.Record(Type.String(), IngestPriceSchema),
                    }),
                  ),
                }),
              ),
            }),
          ),
        ),
      }),
      { maxItems: 500 },
    ),
  },
  { additionalProperties: false },
);
export const IngestResponse = Type.Object({
  events: Type.Integer(),
  changes: Type.Integer(),
  delta_last_id: Type.Integer(),
});

/** `GET /api/v2/teams/{teamID}`. */
export const TeamResponse = Type.Object({ team: TeamRecordSchema });
/** `GET /api/v2/teams/{teamID}/players`. */
export const PlayersResponse = Type.Object({ players: Type.Array(PlayerRecordSchema) });
/** `GET /api/v2/players/{playerID}`. */
export const PlayerResponse = Type.Object({ player: PlayerRecordSchema });
/** `GET /api/v2/sports/{sportID}/teams`. */
export const TeamsResponse = Type.Object({ teams: Type.Array(TeamRecordSchema) });
/** `GET /api/v2/sports`. */
export const SportsResponse = Type.Object({
  sports: Type.Array(
    Type.Object({
      sport_id: Type.Integer(),
      sport_name: Type.String(),
      abbreviation: Type.String(),
    }),
  ),
});
/** `GET /api/v2/affiliates`. */
export const AffiliatesResponse = Type.Object({
  affiliates: Type.Array(
    Type.Object({
      affiliate_id: Type.Integer(),
      affiliate_name: Type.String(),
      affiliate_url: Type.String(),
    }),
  ),
});
/** `GET /api/v2/markets`. */
export const MarketsResponse = Type.Object({
  markets: Type.Array(Type.Object({ id: Type.Integer(), name: Type.String(), description: Type.String() })),
});
/** `GET /api/v2/lines/{lineID}/history`. */
export const LineHistoryResponse = Type.Object({
  meta: Type.Object({ line_id: Type.Integer(), event_id: Type.String() }),
  history: Type.Array(ChangeSchema),
});
