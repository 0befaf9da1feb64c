import { sql } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.ts';
import type { Db, Executor } from '../../platform/database.ts';
import type { FieldIssue } from '../../platform/errors.ts';
import { parseRfc3339DateTime, RFC3339_DATE_TIME_MESSAGE } from '../../platform/schemas.ts';
import { notifyChanges, type OddsChangeFeed } from './change-feed.ts';
import { derivedEventUuid } from './event-uuid.ts';
import { invalidFields } from './odds-errors.ts';
import {
  type EventInput,
  type EventUpdate,
  type MarketInput,
  type WriteResult,
  writeEvents,
} from './odds-writer.ts';
import {
  EVENT_STATUSES,
  type EventStatus,
  MARKETS,
  type ParticipantType,
  SPORTSBOOKS,
} from './reference-data.ts';

/** Most events per ingest request. */
export const MAX_INGEST_EVENTS = 500;

/**
 * A price in the ingest body: integer American odds. `updated_at` (RFC 3339 with an offset) is when the source
 * recorded this value: the price history records the change at that time (never later than the ingest, never before
 * the price's previous change); without it, at the ingest time. `closed_at` likewise for a closed price.
 */
export interface IngestPrice {
  price: number;
  is_main_line?: boolean;
  closed?: boolean;
  updated_at?: string;
  closed_at?: string;
}

/**
 * One event of the ingest body: the service's own `events[]` shape (spec F, Event), so a recorded feed (or a saved
 * answer of this API) can be loaded. Ids inside markets (`markets[].id`, `lines[].id`, `prices[].id`) are ignored:
 * this service assigns its own.
 */
export interface IngestEvent {
  event_id: string;
  /**
   * Compatibility id of the source, served as given. Absent (or empty): the event keeps the one stored, and a new
   * event gets {@link derivedEventUuid} (UUID v5 of `event_id`).
   */
  event_uuid?: string;
  sport_id: number;
  event_date: string;
  rotation_number_away?: number;
  rotation_number_home?: number;
  score?: {
    event_status?: string;
    score_away?: number;
    score_home?: number;
    winner_away?: boolean;
    winner_home?: boolean;
    score_away_by_period?: number[];
    score_home_by_period?: number[];
    venue_name?: string;
    venue_location?: string;
    game_clock?: number;
    display_clock?: string;
    game_period?: number;
    broadcast?: string;
    event_status_detail?: string;
  };
  teams: {
    team_id: number;
    name: string;
    mascot?: string;
    abbreviation?: string;
    record?: string;
    is_away: boolean;
    is_home: boolean;
  }[];
  schedule?: {
    season_type?: string;
    season_year?: number;
    event_name?: string;
    league_name?: string;
    game_number?: number;
    game_type?: string;
  };
  markets?: {
    market_id: number;
    period_id?: number;
    participants: {
      id: number;
      type: string;
      name: string;
      lines: { value: string; prices: Record<string, IngestPrice> }[];
    }[];
  }[];
}

/** The sport whose schedule may carry `game_number` and `game_type` (spec F: baseball; MLB is sport 3). */
const BASEBALL_SPORT_ID = 3;
const BOOK_IDS = new Set(SPORTSBOOKS.map((b) => b.id));
const MARKET_IDS = new Set(MARKETS.map((m) => m.id));

/**
 * The operator ingest (spec F / issue: "an operator ingest route that accepts events in the service's own JSON shape,
 * validated, all-or-nothing"). Every event is checked first, every issue reported at once; then teams, players,
 * events, markets, lines and prices are written in one transaction with their changes logged.
 */
export class IngestService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly feed: OddsChangeFeed,
  ) {}

  /**
   * Validates and writes `events`.
   * @throws ApiError 400 `validation_error` listing every broken rule (unknown sport, sportsbook or market id, a team
   *   participant that is not one of the event's teams, odds that are not American, duplicate lines, ...). Nothing
   *   is written then.
   */
  async ingest(events: IngestEvent[]): Promise<WriteResult> {
    const check = await IngestCheck.load(this.db, events);
    const updates = check.events(events);
    if (check.issues.length > 0) throw invalidFields(check.issues);
    const now = this.clock.now();
    const result = await this.db.transaction(async (tx) => {
      const teamsChanged = await writeTeamsAndPlayers(tx, events);
      const written = await writeEvents(tx, updates, now);
      if (teamsChanged && !written.touched) await notifyChanges(tx, written.lastId);
      return { ...written, touched: written.touched || teamsChanged };
    });
    if (result.touched) this.feed.committed(result.lastId);
    return result;
  }
}

/**
 * Writes the teams and players of `events` (names, records). Returns true when a team's name or record changed:
 * they show in every answer of the team's events.
 */
async function writeTeamsAndPlayers(tx: Executor, events: IngestEvent[]): Promise<boolean> {
  let teamsChanged = false;
  for (const e of events) {
    for (const t of e.teams) {
      const team = await tx.execute(sql`
        insert into odds.teams (id, sport_id, name, mascot, abbreviation, record)
        values (${t.team_id}, ${e.sport_id}, ${t.name}, ${t.mascot ?? ''}, ${t.abbreviation ?? ''}, ${t.record ?? ''})
        on conflict (id) do update set name = excluded.name, mascot = excluded.mascot,
          abbreviation = excluded.abbreviation, record = excluded.record
        where (odds.teams.name, odds.teams.mascot, odds.teams.abbreviation, odds.teams.record)
          is distinct from (excluded.name, excluded.mascot, excluded.abbreviation, excluded.record)
        returning id`);
      if (team.rows.length > 0) teamsChanged = true;
    }
    for (const m of e.markets ?? [])
      for (const p of m.participants)
        if (p.type === 'TYPE_PLAYER')
          await tx.execute(sql`
            insert into odds.players (id, sport_id, name) values (${p.id}, ${e.sport_id}, ${p.name})
            on conflict (id) do update set name = excluded.name`);
  }
  return teamsChanged;
}

/** Reads `id, sport_id` rows of `table` for `ids` into a map (a known team or player keeps its sport). */
async function sportsOf(
  db: Db,
  table: 'odds.teams' | 'odds.players',
  ids: number[],
): Promise<Map<number, number>> {
  const map = new Map<number, number>();
  if (ids.length === 0) return map;
  const rows = await db.execute(
    sql`select id, sport_id from ${sql.raw(table)} where id = any(${`{${ids.join(',')}}`}::int[])`,
  );
  for (const r of rows.rows as { id: number; sport_id: number }[]) map.set(Number(r.id), Number(r.sport_id));
  return map;
}

type IngestTeam = IngestEvent['teams'][number];
type IngestMarket = NonNullable<IngestEvent['markets']>[number];
type IngestParticipant = IngestMarket['participants'][number];
type IngestLine = IngestParticipant['lines'][number];
type Participant = MarketInput['participants'][number];
type Line = Participant['lines'][number];

/**
 * One validation pass over an ingest batch: what the database already knows (sports; teams' and players' sports, so
 * `participant.id` joins `/teams/{team_id}` and `/players/{player_id}`; stored `event_uuid`s), and every issue found,
 * in request order.
 */
class IngestCheck {
  readonly issues: FieldIssue[] = [];
  /** Teams first seen in this batch, with the sport they arrive with. */
  private readonly newTeamSport = new Map<number, number>();
  private readonly seen = new Set<string>();

  private constructor(
    private readonly sports: Set<number>,
    private readonly teamSport: Map<number, number>,
    private readonly playerSport: Map<number, number>,
    private readonly storedUuid: Map<string, string>,
  ) {}

  /** Reads what the checks of `events` need. */
  static async load(db: Db, events: IngestEvent[]): Promise<IngestCheck> {
    const sportRows = await db.execute(sql`select id from odds.sports`);
    const sports = new Set((sportRows.rows as { id: number }[]).map((r) => r.id));
    const teams = [...new Set(events.flatMap((e) => e.teams.map((t) => t.team_id)))];
    const players = [
      ...new Set(
        events.flatMap((e) =>
          (e.markets ?? []).flatMap((m) =>
            m.participants.filter((p) => p.type === 'TYPE_PLAYER').map((p) => p.id),
          ),
        ),
      ),
    ];
    // `event_uuid` (compatibility only, spec F): the source's, else the one already stored, else derived.
    const storedUuid = new Map<string, string>();
    const askedEvents = [...new Set(events.map((e) => e.event_id))];
    if (askedEvents.length > 0) {
      const eventRows = await db.execute(
        sql`select event_id, event_uuid from odds.events
            where event_id = any(array(select jsonb_array_elements_text(${JSON.stringify(askedEvents)}::jsonb)))`,
      );
      // A stored copy of the event_id is the fallback of earlier versions, not a UUID of the source.
      for (const r of eventRows.rows as { event_id: string; event_uuid: string }[])
        if (r.event_uuid !== r.event_id) storedUuid.set(r.event_id, r.event_uuid);
    }
    return new IngestCheck(
      sports,
      await sportsOf(db, 'odds.teams', teams),
      await sportsOf(db, 'odds.players', players),
      storedUuid,
    );
  }

  private issue(field: string, message: string): void {
    this.issues.push({ location: 'body', field, message });
  }

  /** Checks every event; returns the writer's updates (complete only when no issue was found). */
  events(events: IngestEvent[]): EventUpdate[] {
    if (events.length > MAX_INGEST_EVENTS)
      this.issue('events', `accepts at most ${MAX_INGEST_EVENTS} events per request`);
    const updates: EventUpdate[] = [];
    events.forEach((e, i) => {
      const update = this.event(e, `events/${i}`);
      if (update) updates.push(update);
    });
    return updates;
  }

  /** One event: its fields, teams, schedule and markets; its update when nothing is wrong so far. */
  private event(e: IngestEvent, at: string): EventUpdate | undefined {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(e.event_id))
      this.issue(`${at}/event_id`, 'must be 1-64 letters, digits, _ or -');
    if (this.seen.has(e.event_id)) this.issue(`${at}/event_id`, 'appears twice in this request');
    this.seen.add(e.event_id);
    if (!this.sports.has(e.sport_id)) this.issue(`${at}/sport_id`, `unknown sport ${e.sport_id}`);
    const date = parseRfc3339DateTime(e.event_date) ?? new Date(Number.NaN);
    if (Number.isNaN(date.getTime())) this.issue(`${at}/event_date`, RFC3339_DATE_TIME_MESSAGE);
    const { away, home } = this.teams(e, at);
    const status = e.score?.event_status ?? 'STATUS_SCHEDULED';
    if (!(EVENT_STATUSES as readonly string[]).includes(status))
      this.issue(`${at}/score/event_status`, `'${status}' is not a status`);
    this.schedule(e, at);
    const teamIds = new Set(e.teams.map((t) => t.team_id));
    const marketKeys = new Set<string>();
    const markets = (e.markets ?? []).map((m, mi) =>
      this.market(e, m, `${at}/markets/${mi}`, teamIds, marketKeys),
    );
    if (this.issues.length > 0 || !away || !home) return undefined;
    return { event: toEventInput(e, date, away, home, this.storedUuid), markets };
  }

  /** Exactly one away and one home team, different, each of the event's sport. */
  private teams(e: IngestEvent, at: string): { away?: IngestTeam; home?: IngestTeam } {
    const away = e.teams.filter((t) => t.is_away && !t.is_home);
    const home = e.teams.filter((t) => t.is_home && !t.is_away);
    if (e.teams.length !== 2 || away.length !== 1 || home.length !== 1)
      this.issue(`${at}/teams`, 'must hold exactly one away team and one home team');
    if (away.length === 1 && home.length === 1 && away[0]!.team_id === home[0]!.team_id)
      this.issue(`${at}/teams`, 'the away and home teams must differ');
    e.teams.forEach((t, ti) => {
      const known = this.teamSport.get(t.team_id) ?? this.newTeamSport.get(t.team_id);
      if (known === undefined) this.newTeamSport.set(t.team_id, e.sport_id);
      else if (known !== e.sport_id)
        this.issue(
          `${at}/teams/${ti}/team_id`,
          `team ${t.team_id} belongs to sport ${known}, not ${e.sport_id}`,
        );
    });
    return away.length === 1 && home.length === 1 ? { away: away[0], home: home[0] } : {};
  }

  /** Baseball's `game_type` and `game_number` (doubleheaders and makeups). */
  private schedule(e: IngestEvent, at: string): void {
    const gameType = e.schedule?.game_type;
    if (gameType !== undefined && !['doubleheader', 'makeup', 'doubleheader_makeup'].includes(gameType))
      this.issue(`${at}/schedule/game_type`, 'must be doubleheader, makeup or doubleheader_makeup');
    const gameNumber = e.schedule?.game_number;
    if (gameNumber !== undefined && gameType === undefined)
      this.issue(`${at}/schedule/game_number`, 'is only for doubleheaders and makeups (send game_type too)');
    if (gameNumber !== undefined && gameNumber !== 1 && gameNumber !== 2)
      this.issue(`${at}/schedule/game_number`, 'must be 1 or 2 (the game of a doubleheader)');
    if (gameNumber === undefined && (gameType === 'doubleheader' || gameType === 'doubleheader_makeup'))
      this.issue(`${at}/schedule/game_number`, `is required with game_type '${gameType}' (1 or 2)`);
    if ((gameType !== undefined || gameNumber !== undefined) && e.sport_id !== BASEBALL_SPORT_ID)
      this.issue(`${at}/schedule/game_type`, 'game_number and game_type are for baseball (sport 3) only');
  }

  /** One market of an event: a known market id, once per period (`keys`: the event's so far), its participants. */
  private market(
    e: IngestEvent,
    m: IngestMarket,
    at: string,
    teamIds: Set<number>,
    keys: Set<string>,
  ): MarketInput {
    if (!MARKET_IDS.has(m.market_id)) this.issue(`${at}/market_id`, `unknown market ${m.market_id}`);
    const key = `${m.market_id}:${m.period_id ?? 0}`;
    if (keys.has(key)) this.issue(`${at}`, 'market and period appear twice in this event');
    keys.add(key);
    const participantKeys = new Set<string>();
    const participants = m.participants.map((p, pi) =>
      this.participant(e, p, `${at}/participants/${pi}`, teamIds, participantKeys),
    );
    return { marketId: m.market_id, periodId: m.period_id ?? 0, participants };
  }

  /** One participant: its type, a team of the event or a player of the sport, once per market; its lines. */
  private participant(
    e: IngestEvent,
    p: IngestParticipant,
    at: string,
    teamIds: Set<number>,
    participantKeys: Set<string>,
  ): Participant {
    if (!['TYPE_TEAM', 'TYPE_PLAYER', 'TYPE_RESULT'].includes(p.type))
      this.issue(`${at}/type`, 'must be TYPE_TEAM, TYPE_PLAYER or TYPE_RESULT');
    if (p.type === 'TYPE_TEAM' && !teamIds.has(p.id))
      this.issue(`${at}/id`, `team participant ${p.id} is not one of the event's teams`);
    if (p.type === 'TYPE_PLAYER') {
      const known = this.playerSport.get(p.id);
      if (known === undefined) this.playerSport.set(p.id, e.sport_id);
      else if (known !== e.sport_id)
        this.issue(`${at}/id`, `player ${p.id} belongs to sport ${known}, not ${e.sport_id}`);
    }
    const pkey = `${p.type}:${p.id}`;
    if (participantKeys.has(pkey)) this.issue(at, 'participant appears twice in this market');
    participantKeys.add(pkey);
    const values = new Set<string>();
    const lines = p.lines.map((l, li) => {
      const lat = `${at}/lines/${li}`;
      if (values.has(l.value)) this.issue(`${lat}/value`, 'line value appears twice for this participant');
      values.add(l.value);
      return { value: l.value, prices: this.prices(l.prices, lat) };
    });
    return { id: p.id, type: p.type as ParticipantType, name: p.name, lines };
  }

  /** The prices of a line by sportsbook: known books, American odds, RFC 3339 times. */
  private prices(raw: IngestLine['prices'], at: string): Line['prices'] {
    const prices: Line['prices'] = {};
    for (const [book, price] of Object.entries(raw)) {
      if (!/^\d+$/.test(book) || !BOOK_IDS.has(Number(book)))
        this.issue(`${at}/prices/${book}`, `unknown sportsbook ${book}`);
      if (!Number.isInteger(price.price) || (price.price > -100 && price.price < 100))
        this.issue(`${at}/prices/${book}/price`, 'must be integer American odds (<= -100 or >= 100)');
      const updatedAt = price.updated_at === undefined ? undefined : parseRfc3339DateTime(price.updated_at);
      if (price.updated_at !== undefined && !updatedAt)
        this.issue(`${at}/prices/${book}/updated_at`, RFC3339_DATE_TIME_MESSAGE);
      const closedAt = price.closed_at === undefined ? undefined : parseRfc3339DateTime(price.closed_at);
      if (price.closed_at !== undefined && !closedAt)
        this.issue(`${at}/prices/${book}/closed_at`, RFC3339_DATE_TIME_MESSAGE);
      prices[Number(book)] = {
        price: price.price,
        isMainLine: price.is_main_line ?? true,
        closed: price.closed === true,
        ...(updatedAt ? { at: updatedAt } : {}),
        ...(closedAt ? { closedAt } : {}),
      };
    }
    return prices;
  }
}

/** The writer's event of a valid ingest event (defaults for what the source leaves out). */
function toEventInput(
  e: IngestEvent,
  date: Date,
  away: IngestTeam,
  home: IngestTeam,
  storedUuid: Map<string, string>,
): EventInput {
  const s = e.score ?? {};
  return {
    eventId: e.event_id,
    eventUuid: e.event_uuid || (storedUuid.get(e.event_id) ?? derivedEventUuid(e.event_id)),
    sportId: e.sport_id,
    eventDate: date,
    rotationNumberAway: e.rotation_number_away ?? 0,
    rotationNumberHome: e.rotation_number_home ?? 0,
    awayTeamId: away.team_id,
    homeTeamId: home.team_id,
    seasonType: e.schedule?.season_type ?? 'Regular Season',
    seasonYear: e.schedule?.season_year ?? date.getUTCFullYear(),
    eventName: e.schedule?.event_name ?? `${away.name} at ${home.name}`,
    leagueName: e.schedule?.league_name ?? '',
    gameNumber: e.schedule?.game_number ?? null,
    gameType: e.schedule?.game_type ?? null,
    status: (e.score?.event_status ?? 'STATUS_SCHEDULED') as EventStatus,
    statusDetail: s.event_status_detail ?? '',
    scoreAway: s.score_away ?? 0,
    scoreHome: s.score_home ?? 0,
    scoreAwayByPeriod: s.score_away_by_period ?? [],
    scoreHomeByPeriod: s.score_home_by_period ?? [],
    winnerAway: s.winner_away ?? false,
    winnerHome: s.winner_home ?? false,
    venueName: s.venue_name ?? '',
    venueLocation: s.venue_location ?? '',
    gameClock: s.game_clock ?? 0,
    displayClock: s.display_clock ?? '',
    gamePeriod: s.game_period ?? 0,
    broadcast: s.broadcast ?? '',
  };
}
