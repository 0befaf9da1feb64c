import { sql } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.ts';
import type { Db } from '../../platform/database.ts';
import type { FieldIssue } from '../../platform/errors.ts';
import { parseRfc3339DateTime, RFC3339_DATE_TIME_MESSAGE } from '../../platform/schemas.ts';
import { ChangeFeed } from './change-feed.ts';
import { derivedEventUuid } from './event-uuid.ts';
import { invalidFields } from './odds-errors.ts';
import { type EventUpdate, type MarketInput, type WriteResult, writeEvents } from './odds-writer.ts';
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
    private readonly feed: ChangeFeed,
  ) {}

  /**
   * Validates and writes `events`.
   * @throws ApiError 400 `validation_error` listing every broken rule (unknown sport, sportsbook or market id, a team
   *   participant that is not one of the event's teams, odds that are not American, duplicate lines, ...). Nothing
   *   is written then.
   */
  async ingest(events: IngestEvent[]): Promise<WriteResult> {
    const issues: FieldIssue[] = [];
    const issue = (field: string, message: string) => issues.push({ location: 'body', field, message });
    if (events.length > MAX_INGEST_EVENTS)
      issue('events', `accepts at most ${MAX_INGEST_EVENTS} events per request`);
    const sportRows = await this.db.execute(sql`select id from odds.sports`);
    const sports = new Set((sportRows.rows as { id: number }[]).map((r) => r.id));
    // A known team keeps its sport: `teams[].team_id` joins `/teams/{team_id}` and `participant.id`.
    const askedTeams = [...new Set(events.flatMap((e) => e.teams.map((t) => t.team_id)))];
    const teamSport = new Map<number, number>();
    if (askedTeams.length > 0) {
      const teamRows = await this.db.execute(
        sql`select id, sport_id from odds.teams where id = any(${`{${askedTeams.join(',')}}`}::int[])`,
      );
      for (const r of teamRows.rows as { id: number; sport_id: number }[])
        teamSport.set(Number(r.id), Number(r.sport_id));
    }
    const newTeamSport = new Map<number, number>();
    // A known player keeps its sport too (`participant.id` of TYPE_PLAYER joins `/players/{player_id}`).
    const askedPlayers = [
      ...new Set(
        events.flatMap((e) =>
          (e.markets ?? []).flatMap((m) =>
            m.participants.filter((p) => p.type === 'TYPE_PLAYER').map((p) => p.id),
          ),
        ),
      ),
    ];
    const playerSport = new Map<number, number>();
    if (askedPlayers.length > 0) {
      const playerRows = await this.db.execute(
        sql`select id, sport_id from odds.players where id = any(${`{${askedPlayers.join(',')}}`}::int[])`,
      );
      for (const r of playerRows.rows as { id: number; sport_id: number }[])
        playerSport.set(Number(r.id), Number(r.sport_id));
    }
    // `event_uuid` (compatibility only, spec F): the source's, else the one already stored, else derived.
    const storedUuid = new Map<string, string>();
    const askedEvents = [...new Set(events.map((e) => e.event_id))];
    if (askedEvents.length > 0) {
      const eventRows = await this.db.execute(
        sql`select event_id, event_uuid from odds.events
            where event_id = any(array(select jsonb_array_elements_text(${JSON.stringify(askedEvents)}::jsonb)))`,
      );
      // A stored copy of the event_id is the fallback of earlier versions, not a UUID of the source.
      for (const r of eventRows.rows as { event_id: string; event_uuid: string }[])
        if (r.event_uuid !== r.event_id) storedUuid.set(r.event_id, r.event_uuid);
    }
    const seen = new Set<string>();
    const updates: EventUpdate[] = [];
    events.forEach((e, i) => {
      const at = `events/${i}`;
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(e.event_id))
        issue(`${at}/event_id`, 'must be 1-64 letters, digits, _ or -');
      if (seen.has(e.event_id)) issue(`${at}/event_id`, 'appears twice in this request');
      seen.add(e.event_id);
      if (!sports.has(e.sport_id)) issue(`${at}/sport_id`, `unknown sport ${e.sport_id}`);
      const date = new Date(e.event_date);
      if (Number.isNaN(date.getTime())) issue(`${at}/event_date`, 'must be an ISO 8601 UTC timestamp');
      const away = e.teams.filter((t) => t.is_away && !t.is_home);
      const home = e.teams.filter((t) => t.is_home && !t.is_away);
      if (e.teams.length !== 2 || away.length !== 1 || home.length !== 1)
        issue(`${at}/teams`, 'must hold exactly one away team and one home team');
      if (away.length === 1 && home.length === 1 && away[0]!.team_id === home[0]!.team_id)
        issue(`${at}/teams`, 'the away and home teams must differ');
      e.teams.forEach((t, ti) => {
        const known = teamSport.get(t.team_id) ?? newTeamSport.get(t.team_id);
        if (known === undefined) newTeamSport.set(t.team_id, e.sport_id);
        else if (known !== e.sport_id)
          issue(
            `${at}/teams/${ti}/team_id`,
            `team ${t.team_id} belongs to sport ${known}, not ${e.sport_id}`,
          );
      });
      const status = e.score?.event_status ?? 'STATUS_SCHEDULED';
      if (!(EVENT_STATUSES as readonly string[]).includes(status))
        issue(`${at}/score/event_status`, `'${status}' is not a status`);
      const gameType = e.schedule?.game_type;
      if (gameType !== undefined && !['doubleheader', 'makeup', 'doubleheader_makeup'].includes(gameType))
        issue(`${at}/schedule/game_type`, 'must be doubleheader, makeup or doubleheader_makeup');
      const gameNumber = e.schedule?.game_number;
      if (gameNumber !== undefined && gameType === undefined)
        issue(`${at}/schedule/game_number`, 'is only for doubleheaders and makeups (send game_type too)');
      if (gameNumber !== undefined && gameNumber !== 1 && gameNumber !== 2)
        issue(`${at}/schedule/game_number`, 'must be 1 or 2 (the game of a doubleheader)');
      if (gameNumber === undefined && (gameType === 'doubleheader' || gameType === 'doubleheader_makeup'))
        issue(`${at}/schedule/game_number`, `is required with game_type '${gameType}' (1 or 2)`);
      if ((gameType !== undefined || gameNumber !== undefined) && e.sport_id !== BASEBALL_SPORT_ID)
        issue(`${at}/schedule/game_type`, 'game_number and game_type are for baseball (sport 3) only');
      const teamIds = new Set(e.teams.map((t) => t.team_id));
      const markets: MarketInput[] = [];
      const marketKeys = new Set<string>();
      (e.markets ?? []).forEach((m, mi) => {
        const mat = `${at}/markets/${mi}`;
        if (!MARKET_IDS.has(m.market_id)) issue(`${mat}/market_id`, `unknown market ${m.market_id}`);
        const key = `${m.market_id}:${m.period_id ?? 0}`;
        if (marketKeys.has(key)) issue(`${mat}`, 'market and period appear twice in this event');
        marketKeys.add(key);
        const participantKeys = new Set<string>();
        const participants: MarketInput['participants'] = [];
        m.participants.forEach((p, pi) => {
          const pat = `${mat}/participants/${pi}`;
          if (!['TYPE_TEAM', 'TYPE_PLAYER', 'TYPE_RESULT'].includes(p.type))
            issue(`${pat}/type`, 'must be TYPE_TEAM, TYPE_PLAYER or TYPE_RESULT');
          if (p.type === 'TYPE_TEAM' && !teamIds.has(p.id))
            issue(`${pat}/id`, `team participant ${p.id} is not one of the event's teams`);
          if (p.type === 'TYPE_PLAYER') {
            const known = playerSport.get(p.id);
            if (known === undefined) playerSport.set(p.id, e.sport_id);
            else if (known !== e.sport_id)
              issue(`${pat}/id`, `player ${p.id} belongs to sport ${known}, not ${e.sport_id}`);
          }
          const pkey = `${p.type}:${p.id}`;
          if (participantKeys.has(pkey)) issue(pat, 'participant appears twice in this market');
          participantKeys.add(pkey);
          const values = new Set<string>();
          const lines: MarketInput['participants'][number]['lines'] = [];
          p.lines.forEach((l, li) => {
            const lat = `${pat}/lines/${li}`;
            if (values.has(l.value)) issue(`${lat}/value`, 'line value appears twice for this participant');
            values.add(l.value);
            const prices: MarketInput['participants'][number]['lines'][number]['prices'] = {};
            for (const [book, price] of Object.entries(l.prices)) {
              if (!/^\d+$/.test(book) || !BOOK_IDS.has(Number(book)))
                issue(`${lat}/prices/${book}`, `unknown sportsbook ${book}`);
              if (!Number.isInteger(price.price) || (price.price > -100 && price.price < 100))
                issue(`${lat}/prices/${book}/price`, 'must be integer American odds (<= -100 or >= 100)');
              const at = price.updated_at === undefined ? undefined : parseRfc3339DateTime(price.updated_at);
              if (price.updated_at !== undefined && !at)
                issue(`${lat}/prices/${book}/updated_at`, RFC3339_DATE_TIME_MESSAGE);
              const closedAt =
                price.closed_at === undefined ? undefined : parseRfc3339DateTime(price.closed_at);
              if (price.closed_at !== undefined && !closedAt)
                issue(`${lat}/prices/${book}/closed_at`, RFC3339_DATE_TIME_MESSAGE);
              prices[Number(book)] = {
                price: price.price,
                isMainLine: price.is_main_line ?? true,
                closed: price.closed === true,
                ...(at ? { at } : {}),
                ...(closedAt ? { closedAt } : {}),
              };
            }
            lines.push({ value: l.value, prices });
          });
          participants.push({ id: p.id, type: p.type as ParticipantType, name: p.name, lines });
        });
        markets.push({ marketId: m.market_id, periodId: m.period_id ?? 0, participants });
      });
      if (issues.length > 0 || away.length !== 1 || home.length !== 1) return;
      const s = e.score ?? {};
      updates.push({
        event: {
          eventId: e.event_id,
          eventUuid: e.event_uuid || (storedUuid.get(e.event_id) ?? derivedEventUuid(e.event_id)),
          sportId: e.sport_id,
          eventDate: date,
          rotationNumberAway: e.rotation_number_away ?? 0,
          rotationNumberHome: e.rotation_number_home ?? 0,
          awayTeamId: away[0]!.team_id,
          homeTeamId: home[0]!.team_id,
          seasonType: e.schedule?.season_type ?? 'Regular Season',
          seasonYear: e.schedule?.season_year ?? date.getUTCFullYear(),
          eventName: e.schedule?.event_name ?? `${away[0]!.name} at ${home[0]!.name}`,
          leagueName: e.schedule?.league_name ?? '',
          gameNumber: e.schedule?.game_number ?? null,
          gameType: gameType ?? null,
          status: status as EventStatus,
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
        },
        markets,
      });
    });
    if (issues.length > 0) throw invalidFields(issues);
    const now = this.clock.now();
    const result = await this.db.transaction(async (tx) => {
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
          // Team names and records show in every answer of the team's events.
          if (team.rows.length > 0) teamsChanged = true;
        }
        for (const m of e.markets ?? [])
          for (const p of m.participants)
            if (p.type === 'TYPE_PLAYER')
              await tx.execute(sql`
                insert into odds.players (id, sport_id, name) values (${p.id}, ${e.sport_id}, ${p.name})
                on conflict (id) do update set name = excluded.name`);
      }
      const written = await writeEvents(tx, updates, now);
      if (teamsChanged && !written.touched) await ChangeFeed.notify(tx, written.lastId);
      return { ...written, touched: written.touched || teamsChanged };
    });
    if (result.touched) this.feed.committed(result.lastId);
    return result;
  }
}
