import { type SQL, sql } from 'drizzle-orm';
import type { Db } from '../../platform/database.ts';
import type { OddsChangeFeed } from './change-feed.ts';
import { defaultMarketIds, type EventQuery, statusSelected } from './odds-query.ts';
import { MARKETS } from './reference-data.ts';

/** A price of a line at one sportsbook (spec F "price"). `closed_at` is present only when the line is off the board. */
export interface PriceRecord {
  id: number;
  price: number;
  is_main_line: boolean;
  updated_at: string;
  closed_at?: string;
}

/** A line (spec F "line"): `value` is empty for moneyline; `prices` is keyed by sportsbook id. */
export interface LineRecord {
  id: number;
  value: string;
  prices: Record<string, PriceRecord>;
}

/** A participant: `id` is the join key (team id, player id, or outcome index). */
export interface ParticipantRecord {
  id: number;
  type: string;
  name: string;
  lines: LineRecord[];
}

/** A market of an event (spec F "markets[]"). */
export interface MarketRecord {
  id: number;
  market_id: number;
  period_id: number;
  name: string;
  market_description: string;
  participants: ParticipantRecord[];
}

/** One element of `events` (spec F, "Event"). Times are ISO 8601 UTC. */
export interface EventRecord {
  event_id: string;
  sport_id: number;
  event_uuid: string;
  event_date: string;
  rotation_number_away: number;
  rotation_number_home: number;
  score: Record<string, unknown>;
  teams: {
    team_id: number;
    name: string;
    mascot: string;
    abbreviation: string;
    record: string;
    is_away: boolean;
    is_home: boolean;
  }[];
  schedule: Record<string, unknown>;
  markets: MarketRecord[];
}

const MARKET_BY_ID = new Map(MARKETS.map((m) => [m.id, m]));

/** Which prices a markets read takes: current ones, or a snapshot from the price history. */
export type PriceSource = { kind: 'current' } | { kind: 'openers' } | { kind: 'closing'; cutoff: Date };

const intArray = (values: readonly number[]) => `{${values.join(',')}}`;

/**
 * A timestamptz column as ISO 8601 UTC text with milliseconds (`2026-11-23T09:00:00.000Z`, what `toISOString` gives),
 * formatted by PostgreSQL: tens of thousands of prices are not parsed into `Date`s and printed again.
 */
const isoText = (column: SQL) => sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * Read side of the odds service: builds `events[]` from the tables for the events endpoints (spec F, "Events"),
 * applying the shared query parameters. Every answer carries `delta_last_id`, read before the data so a client that
 * continues from it with the delta feed never misses a change (it may see one twice).
 */
export class OddsReader {
  constructor(
    private readonly db: Db,
    private readonly feed: OddsChangeFeed,
  ) {}

  /** Events of sport `sportId` starting in `[start, end)`, filtered by status, with their markets. */
  async eventsInWindow(
    sportId: number,
    window: { start: Date; end: Date },
    q: EventQuery,
  ): Promise<{ deltaLastId: number; events: EventRecord[] }> {
    const deltaLastId = await this.feed.lastId();
    const rows = await this.eventRows(
      sql`e.sport_id = ${sportId} and e.event_date >= ${window.start.toISOString()} and e.event_date < ${window.end.toISOString()}`,
    );
    const selected = rows.filter((r) => statusSelected(String(r.status), q));
    const events = await this.withMarkets(selected, q, { kind: 'current' });
    return { deltaLastId, events };
  }

  /** The event `eventId` (null when there is none) with its markets from `source`. */
  async eventById(
    eventId: string,
    q: EventQuery,
    source: PriceSource = { kind: 'current' },
  ): Promise<{ deltaLastId: number; events: EventRecord[] } | null> {
    const deltaLastId = await this.feed.lastId();
    const rows = await this.eventRows(sql`e.event_id = ${eventId}`);
    if (rows.length === 0) return null;
    const selected = rows.filter((r) => statusSelected(String(r.status), q));
    return { deltaLastId, events: await this.withMarkets(selected, q, source) };
  }

  /** The start time and sport of event `eventId`, or null. */
  async eventHeader(eventId: string): Promise<{ eventDate: Date; sportId: number } | null> {
    const result = await this.db.execute(
      sql`select event_date, sport_id from odds.events where event_id = ${eventId}`,
    );
    const row = result.rows[0] as { event_date: string | Date; sport_id: number } | undefined;
    return row ? { eventDate: new Date(row.event_date), sportId: row.sport_id } : null;
  }

  private async eventRows(where: SQL): Promise<Record<string, unknown>[]> {
    const result = await this.db.execute(sql`
      select e.*, ta.name as away_name, ta.mascot as away_mascot, ta.abbreviation as away_abbreviation,
        ta.record as away_record, th.name as home_name, th.mascot as home_mascot,
        th.abbreviation as home_abbreviation, th.record as home_record
      from odds.events e
      join odds.teams ta on ta.id = e.away_team_id
      join odds.teams th on th.id = e.home_team_id
      where ${where}
      order by e.event_date, e.rotation_number_away, e.event_id`);
    return result.rows as Record<string, unknown>[];
  }

  private async withMarkets(
    rows: Record<string, unknown>[],
    q: EventQuery,
    source: PriceSource,
  ): Promise<EventRecord[]> {
    const events = rows.map(toEvent);
    if (events.length === 0 || q.scoresOnly) return q.hideNoMarkets && q.scoresOnly ? [] : events;
    const bySport = new Map<number, EventRecord[]>();
    for (const e of events) bySport.set(e.sport_id, [...(bySport.get(e.sport_id) ?? []), e]);
    const byId = new Map(events.map((e) => [e.event_id, e]));
    for (const [sportId, list] of bySport) {
      assembleMarkets(await this.priceRows(sportId, list, q, source), byId);
    }
    return q.hideNoMarkets ? events.filter((e) => e.markets.length > 0) : events;
  }

  /**
   * The price rows of `events` (one sport) that `q` selects, from `source`: current prices, or the openers or
   * closing snapshot read from the change log.
   */
  private async priceRows(
    sportId: number,
    list: EventRecord[],
    q: EventQuery,
    source: PriceSource,
  ): Promise<Record<string, unknown>[]> {
    const marketIds = q.marketIds ?? defaultMarketIds(sportId);
    const conditions: SQL[] = [
      sql`l.event_id = any(array(select jsonb_array_elements_text(${JSON.stringify(list.map((e) => e.event_id))}::jsonb)))`,
      sql`em.market_id = any(${intArray(marketIds)}::int[])`,
    ];
    if (q.affiliateIds) conditions.push(sql`p.sportsbook_id = any(${intArray(q.affiliateIds)}::int[])`);
    if (q.participantIds) conditions.push(sql`l.participant_id = any(${intArray(q.participantIds)}::int[])`);
    if (q.participantType) conditions.push(sql`l.participant_type = ${q.participantType}`);
    if (q.hideClosed) conditions.push(sql`p.closed_at is null`);
    const where = sql.join(conditions, sql` and `);
    let result: { rows: unknown[] };
    if (source.kind === 'current') {
      if (q.mainLine) conditions.push(sql`p.is_main_line`);
      result = await this.db.execute(sql`
        select l.event_id, em.id as em_id, em.market_id, em.period_id, l.id as line_id, l.participant_id,
          l.participant_type, l.participant_name, l.value, p.id as price_id, p.sportsbook_id, p.price,
          p.is_main_line, ${isoText(sql`p.updated_at`)} as updated_at, ${isoText(sql`p.closed_at`)} as closed_at
        from odds.prices p
        join odds.lines l on l.id = p.line_id
        join odds.event_markets em on em.id = l.event_market_id
        where ${sql.join(conditions, sql` and `)}`);
    } else {
      const first = source.kind === 'openers';
      const cutoff =
        source.kind === 'closing' ? sql`and c.recorded_at <= ${source.cutoff.toISOString()}` : sql``;
      const order = first ? sql`c.recorded_at asc, c.id asc` : sql`c.recorded_at desc, c.id desc`;
      const main = q.mainLine ? sql`and s.is_main_line` : sql``;
      result = await this.db.execute(sql`
        with s as (
          select distinct on (c.price_id) c.price_id, c.price, c.is_main_line, c.recorded_at
          from odds.changes c
          where c.kind = 'price' and c.change_type <> 'closed'
            and c.event_id = any(array(select jsonb_array_elements_text(${JSON.stringify(list.map((e) => e.event_id))}::jsonb)))
            ${cutoff}
          order by c.price_id, ${order})
        select l.event_id, em.id as em_id, em.market_id, em.period_id, l.id as line_id, l.participant_id,
          l.participant_type, l.participant_name, l.value, p.id as price_id, p.sportsbook_id, s.price,
          s.is_main_line, ${isoText(sql`s.recorded_at`)} as updated_at, null as closed_at
        from s
        join odds.prices p on p.id = s.price_id
        join odds.lines l on l.id = p.line_id
        join odds.event_markets em on em.id = l.event_market_id
        where ${where} ${main}`);
    }
    return result.rows as Record<string, unknown>[];
  }
}

const iso = (v: unknown) => new Date(v as string | Date).toISOString();

function toEvent(r: Record<string, unknown>): EventRecord {
  const schedule: Record<string, unknown> = {
    season_type: r.season_type,
    season_year: r.season_year,
    event_name: r.event_name,
    league_name: r.league_name,
  };
  // Baseball: game_number and game_type only for doubleheaders and makeups (spec F, schedule).
  if (r.game_type !== null && r.game_type !== undefined) {
    if (r.game_number !== null) schedule.game_number = r.game_number;
    schedule.game_type = r.game_type;
  }
  return {
    event_id: String(r.event_id),
    sport_id: Number(r.sport_id),
    event_uuid: String(r.event_uuid),
    event_date: iso(r.event_date),
    rotation_number_away: Number(r.rotation_number_away),
    rotation_number_home: Number(r.rotation_number_home),
    score: {
      event_id: r.event_id,
      event_status: r.status,
      score_away: r.score_away,
      score_home: r.score_home,
      winner_away: r.winner_away,
      winner_home: r.winner_home,
      score_away_by_period: r.score_away_by_period,
      score_home_by_period: r.score_home_by_period,
      venue_name: r.venue_name,
      venue_location: r.venue_location,
      game_clock: r.game_clock,
      display_clock: r.display_clock,
      game_period: r.game_period,
      broadcast: r.broadcast,
      event_status_detail: r.status_detail,
      updated_at: iso(r.updated_at),
    },
    teams: [
      {
        team_id: Number(r.away_team_id),
        name: String(r.away_name),
        mascot: String(r.away_mascot),
        abbreviation: String(r.away_abbreviation),
        record: String(r.away_record),
        is_away: true,
        is_home: false,
      },
      {
        team_id: Number(r.home_team_id),
        name: String(r.home_name),
        mascot: String(r.home_mascot),
        abbreviation: String(r.home_abbreviation),
        record: String(r.home_record),
        is_away: false,
        is_home: true,
      },
    ],
    schedule,
    markets: [],
  };
}

const compareNumbers = (a: number, b: number) => a - b;

/**
 * Nests price rows (in any order: sorting tens of thousands of rows in PostgreSQL spills to disk, grouping here does
 * not) into markets -> participants -> lines -> prices on their events, then orders each level as the API shows it:
 * markets by `market_id`, `period_id`; participants by `type`, `id`; lines by `id`; prices by sportsbook id (object
 * keys that are integers enumerate in ascending order).
 */
function assembleMarkets(rows: Record<string, unknown>[], byId: Map<string, EventRecord>): void {
  const markets = new Map<number, { market: MarketRecord; participants: Map<string, ParticipantRecord> }>();
  const lines = new Map<number, LineRecord>();
  const touched = new Set<EventRecord>();
  for (const r of rows) {
    const emId = Number(r.em_id);
    let m = markets.get(emId);
    if (!m) {
      const def = MARKET_BY_ID.get(Number(r.market_id));
      const market: MarketRecord = {
        id: emId,
        market_id: Number(r.market_id),
        period_id: Number(r.period_id),
        name: def?.name ?? `market_${r.market_id}`,
        market_description: def?.description ?? '',
        participants: [],
      };
      m = { market, participants: new Map() };
      markets.set(emId, m);
      const event = byId.get(String(r.event_id));
      if (event) {
        event.markets.push(market);
        touched.add(event);
      }
    }
    const pKey = `${r.participant_type}:${r.participant_id}`;
    let participant = m.participants.get(pKey);
    if (!participant) {
      participant = {
        id: Number(r.participant_id),
        type: String(r.participant_type),
        name: String(r.participant_name),
        lines: [],
      };
      m.participants.set(pKey, participant);
      m.market.participants.push(participant);
    }
    const lineId = Number(r.line_id);
    let line = lines.get(lineId);
    if (!line) {
      line = { id: lineId, value: String(r.value), prices: {} };
      lines.set(lineId, line);
      participant.lines.push(line);
    }
    const price: PriceRecord = {
      id: Number(r.price_id),
      price: Number(r.price),
      is_main_line: r.is_main_line as boolean,
      updated_at: String(r.updated_at),
    };
    if (r.closed_at) price.closed_at = String(r.closed_at);
    line.prices[String(r.sportsbook_id)] = price;
  }
  for (const event of touched)
    event.markets.sort((a, b) => a.market_id - b.market_id || a.period_id - b.period_id || a.id - b.id);
  for (const { market } of markets.values()) {
    market.participants.sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : a.id - b.id));
    for (const p of market.participants)
      if (p.lines.length > 1) p.lines.sort((a, b) => compareNumbers(a.id, b.id));
  }
}
