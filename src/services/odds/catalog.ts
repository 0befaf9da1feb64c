import { sql } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.ts';
import type { Db } from '../../platform/database.ts';
import { ApiError } from '../../platform/errors.ts';
import { type ChangeRecord, changeFromRow } from './change-feed.ts';
import { notFound, OddsErrorName } from './odds-errors.ts';

/** How long a delta cursor stays usable (the anchor's: a cursor older than 30 minutes is a 400). */
export const DELTA_WINDOW_MS = 30 * 60_000;
/** Default and largest `limit` of the delta feed (the anchor's: `limit` <= 5000). */
export const DELTA_DEFAULT_LIMIT = 1000;
export const DELTA_MAX_LIMIT = 5000;

/** A team (`/teams/{team_id}`, `/sports/{sportID}/teams`). */
export interface TeamRecord {
  team_id: number;
  sport_id: number;
  name: string;
  mascot: string;
  abbreviation: string;
  record: string;
  conference: string;
  division: string;
}

/** A player (`/players/{player_id}`, `/teams/{team_id}/players`). `player_id` is the participant id of props. */
export interface PlayerRecord {
  player_id: number;
  team_id: number | null;
  sport_id: number;
  name: string;
  position: string;
  jersey_number: string;
}

/** Filters of the delta feed (the anchor's delta endpoint). */
export interface DeltaQuery {
  lastId: number;
  sportId?: number;
  eventId?: string;
  affiliateIds?: number[];
  marketIds?: number[];
  limit: number;
}

const team = (r: Record<string, unknown>): TeamRecord => ({
  team_id: Number(r.id),
  sport_id: Number(r.sport_id),
  name: String(r.name),
  mascot: String(r.mascot),
  abbreviation: String(r.abbreviation),
  record: String(r.record),
  conference: String(r.conference),
  division: String(r.division),
});

const player = (r: Record<string, unknown>): PlayerRecord => ({
  player_id: Number(r.id),
  team_id: r.team_id === null ? null : Number(r.team_id),
  sport_id: Number(r.sport_id),
  name: String(r.name),
  position: String(r.position),
  jersey_number: String(r.jersey_number),
});

/**
 * Reference data, teams and players, market history and the delta feed (spec F, "Other paths mentioned"; their
 * shapes are not shown in the spec and follow the anchor, documented in the README).
 */
export class OddsCatalog {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  private async rows(query: ReturnType<typeof sql>): Promise<Record<string, unknown>[]> {
    return (await this.db.execute(query)).rows as Record<string, unknown>[];
  }

  /** Every sport: `{sport_id, sport_name, abbreviation}`. */
  async sports() {
    const rows = await this.rows(sql`select id, name, abbreviation from odds.sports order by id`);
    return rows.map((r) => ({
      sport_id: Number(r.id),
      sport_name: String(r.name),
      abbreviation: String(r.abbreviation),
    }));
  }

  /** Every sportsbook (affiliate): `{affiliate_id, affiliate_name, affiliate_url}`. */
  async sportsbooks() {
    const rows = await this.rows(sql`select id, name, url from odds.sportsbooks order by id`);
    return rows.map((r) => ({
      affiliate_id: Number(r.id),
      affiliate_name: String(r.name),
      affiliate_url: String(r.url),
    }));
  }

  /** Every market definition: `{id, name, description}`. */
  async markets() {
    const rows = await this.rows(sql`select id, name, description from odds.market_definitions order by id`);
    return rows.map((r) => ({ id: Number(r.id), name: String(r.name), description: String(r.description) }));
  }

  /** @throws ApiError 404 when there is no team `id`. */
  async team(id: number): Promise<TeamRecord> {
    const [r] = await this.rows(sql`select * from odds.teams where id = ${id}`);
    if (!r) throw notFound(`Team ${id} not found.`);
    return team(r);
  }

  /** The teams of sport `sportId`, by name. @throws ApiError 404 when there is no such sport. */
  async sportTeams(sportId: number): Promise<TeamRecord[]> {
    const [s] = await this.rows(sql`select id from odds.sports where id = ${sportId}`);
    if (!s) throw notFound(`Sport ${sportId} not found.`);
    const rows = await this.rows(
      sql`select * from odds.teams where sport_id = ${sportId} order by name, mascot, id`,
    );
    return rows.map(team);
  }

  /** The players of team `teamId`. @throws ApiError 404 when there is no such team. */
  async teamPlayers(teamId: number): Promise<PlayerRecord[]> {
    await this.team(teamId);
    const rows = await this.rows(sql`select * from odds.players where team_id = ${teamId} order by name, id`);
    return rows.map(player);
  }

  /** @throws ApiError 404 when there is no player `id`. */
  async player(id: number): Promise<PlayerRecord> {
    const [r] = await this.rows(sql`select * from odds.players where id = ${id}`);
    if (!r) throw notFound(`Player ${id} not found.`);
    return player(r);
  }

  /** The event and market of line `lineId` (for the lookback check), or 404. */
  async lineHeader(lineId: number): Promise<{ eventId: string; eventDate: Date }> {
    const [r] = await this.rows(sql`
      select l.event_id, e.event_date from odds.lines l join odds.events e on e.event_id = l.event_id
      where l.id = ${lineId}`);
    if (!r) throw notFound(`Line ${lineId} not found.`);
    return { eventId: String(r.event_id), eventDate: new Date(r.event_date as string) };
  }

  /**
   * Market history of one line: every recorded price change at every sportsbook (or `affiliateIds`), oldest first.
   */
  async lineHistory(lineId: number, affiliateIds: number[] | null): Promise<ChangeRecord[]> {
    const books = affiliateIds ? sql`and affiliate_id = any(${`{${affiliateIds.join(',')}}`}::int[])` : sql``;
    const rows = await this.rows(
      sql`select * from odds.changes where kind = 'price' and line_id = ${lineId} ${books} order by recorded_at, id`,
    );
    return rows.map(changeFromRow);
  }

  /**
   * The delta feed: changes after `lastId` matching the filters, oldest first, at most `limit`.
   * `delta_last_id` is the cursor for the next call: the last returned id when `has_more`, otherwise the newest id
   * scanned (so a filtered client moves past changes it does not want).
   * @throws ApiError 400 `unknown_cursor` when `lastId` is beyond the newest change; 400 `stale_cursor` when the first
   *   change after `lastId` was written more than 30 minutes ago (the client missed changes no longer served:
   *   re-bootstrap).
   */
  async delta(
    q: DeltaQuery,
  ): Promise<{ meta: { delta_last_id: number; count: number; has_more: boolean }; deltas: ChangeRecord[] }> {
    const [max] = await this.rows(sql`select coalesce(max(id), 0)::bigint as id from odds.changes`);
    const maxId = Number(max!.id);
    if (q.lastId > maxId)
      throw new ApiError(
        400,
        OddsErrorName.unknownCursor,
        `Delta cursor ${q.lastId} was never issued; re-bootstrap from the events endpoint and use its meta.delta_last_id.`,
      );
    // The window counts from when the next change was written (`logged_at`), not from its own time: a backfilled
    // history or an ingested price carries an earlier `recorded_at` and is still news to a client polling now.
    const [next] = await this.rows(
      sql`select id, logged_at from odds.changes where id > ${q.lastId} order by id limit 1`,
    );
    if (next && new Date(next.logged_at as string).getTime() < this.clock.nowMs() - DELTA_WINDOW_MS)
      throw new ApiError(
        400,
        OddsErrorName.staleCursor,
        `Delta cursor ${q.lastId} is older than 30 minutes; re-bootstrap from the events endpoint and use its meta.delta_last_id.`,
      );
    const filters = [sql`id > ${q.lastId}`, sql`id <= ${maxId}`];
    if (q.sportId !== undefined) filters.push(sql`sport_id = ${q.sportId}`);
    if (q.eventId !== undefined) filters.push(sql`event_id = ${q.eventId}`);
    if (q.affiliateIds)
      filters.push(sql`(kind = 'event' or affiliate_id = any(${`{${q.affiliateIds.join(',')}}`}::int[]))`);
    if (q.marketIds)
      filters.push(sql`(kind = 'event' or market_id = any(${`{${q.marketIds.join(',')}}`}::int[]))`);
    const rows = await this.rows(
      sql`select * from odds.changes where ${sql.join(filters, sql` and `)} order by id limit ${q.limit + 1}`,
    );
    const hasMore = rows.length > q.limit;
    const deltas = rows.slice(0, q.limit).map(changeFromRow);
    const cursor = hasMore ? deltas[deltas.length - 1]!.id : Math.max(maxId, q.lastId);
    return { meta: { delta_last_id: cursor, count: deltas.length, has_more: hasMore }, deltas };
  }
}
