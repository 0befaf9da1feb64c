import { sql } from 'drizzle-orm';
import type { Executor } from '../../platform/database.ts';
import { ChangeFeed, lockChangeLog } from './change-feed.ts';
import type { EventStatus, ParticipantType } from './reference-data.ts';

/** One price of a line at one sportsbook, as written (integer American odds). */
export interface PriceInput {
  price: number;
  isMainLine: boolean;
  /** True when the line is off the board at this sportsbook. */
  closed?: boolean;
}

/** A market of an event to write: participants, their lines, and prices keyed by sportsbook id. */
export interface MarketInput {
  marketId: number;
  periodId: number;
  participants: {
    id: number;
    type: ParticipantType;
    name: string;
    lines: { value: string; prices: Record<number, PriceInput> }[];
  }[];
}

/** The event fields to write (schedule, status and score). */
export interface EventInput {
  eventId: string;
  eventUuid: string;
  sportId: number;
  eventDate: Date;
  rotationNumberAway: number;
  rotationNumberHome: number;
  awayTeamId: number;
  homeTeamId: number;
  seasonType: string;
  seasonYear: number;
  eventName: string;
  leagueName: string;
  gameNumber: number | null;
  gameType: string | null;
  status: EventStatus;
  statusDetail: string;
  scoreAway: number;
  scoreHome: number;
  scoreAwayByPeriod: number[];
  scoreHomeByPeriod: number[];
  winnerAway: boolean;
  winnerHome: boolean;
  venueName: string;
  venueLocation: string;
  gameClock: number;
  displayClock: string;
  gamePeriod: number;
  broadcast: string;
  simulation?: unknown;
}

/** An event with (some of) its markets. Markets not named are left as they are. */
export interface EventUpdate {
  event: EventInput;
  markets: MarketInput[];
}

/** What a write changed: change ids `firstId..lastId` (0 when nothing changed). */
export interface WriteResult {
  events: number;
  changes: number;
  lastId: number;
  /**
   * True when anything an answer shows changed: a change-log row, or a field without one (game clock, status
   * detail, venue, schedule, a participant's name). The commit notification is sent then, so every instance drops
   * its cached answers; call {@link ChangeFeed.committed} after the commit.
   */
  touched: boolean;
}

interface ExistingPrice {
  id: number;
  price: number;
  is_main_line: boolean;
  closed: boolean;
}

/**
 * Writes events, markets, lines and prices in the caller's transaction and appends every difference to the change
 * log (spec F: "the full price history (every change with its time)"): a new price is `opened`, a new value
 * `changed`, going off the board `closed`, coming back `reopened`; a status change of the event `status`, a score
 * change `score`. Holds the change-log lock, and sends the commit notification; call
 * {@link ChangeFeed.committed} with `lastId` after the commit.
 * @param now the time recorded for every change.
 */
export async function writeEvents(tx: Executor, updates: EventUpdate[], now: Date): Promise<WriteResult> {
  await lockChangeLog(tx);
  const changes: Record<string, unknown>[] = [];
  const ts = now.toISOString();
  let touched = false;
  for (const { event, markets } of updates) {
    const before = await tx.execute(
      sql`select status, score_away, score_home from odds.events where event_id = ${event.eventId} for update`,
    );
    const prev = before.rows[0] as { status: string; score_away: number; score_home: number } | undefined;
    const written = await tx.execute(sql`
      insert into odds.events (event_id, event_uuid, sport_id, event_date, rotation_number_away, rotation_number_home,
        away_team_id, home_team_id, season_type, season_year, event_name, league_name, game_number, game_type, status,
        status_detail, score_away, score_home, score_away_by_period, score_home_by_period, winner_away, winner_home,
        venue_name, venue_location, game_clock, display_clock, game_period, broadcast, simulation, updated_at)
      values (${event.eventId}, ${event.eventUuid}, ${event.sportId}, ${event.eventDate.toISOString()},
        ${event.rotationNumberAway}, ${event.rotationNumberHome}, ${event.awayTeamId}, ${event.homeTeamId},
        ${event.seasonType}, ${event.seasonYear}, ${event.eventName}, ${event.leagueName}, ${event.gameNumber},
        ${event.gameType}, ${event.status}, ${event.statusDetail}, ${event.scoreAway}, ${event.scoreHome},
        ${JSON.stringify(event.scoreAwayByPeriod)}::jsonb, ${JSON.stringify(event.scoreHomeByPeriod)}::jsonb,
        ${event.winnerAway}, ${event.winnerHome}, ${event.venueName}, ${event.venueLocation}, ${event.gameClock},
        ${event.displayClock}, ${event.gamePeriod}, ${event.broadcast},
        ${event.simulation === undefined ? null : JSON.stringify(event.simulation)}::jsonb, ${ts})
      on conflict (event_id) do update set event_uuid = excluded.event_uuid, sport_id = excluded.sport_id,
        event_date = excluded.event_date, rotation_number_away = excluded.rotation_number_away,
        rotation_number_home = excluded.rotation_number_home, away_team_id = excluded.away_team_id,
        home_team_id = excluded.home_team_id, season_type = excluded.season_type, season_year = excluded.season_year,
        event_name = excluded.event_name, league_name = excluded.league_name, game_number = excluded.game_number,
        game_type = excluded.game_type, status = excluded.status, status_detail = excluded.status_detail,
        score_away = excluded.score_away, score_home = excluded.score_home,
        score_away_by_period = excluded.score_away_by_period, score_home_by_period = excluded.score_home_by_period,
        winner_away = excluded.winner_away, winner_home = excluded.winner_home, venue_name = excluded.venue_name,
        venue_location = excluded.venue_location, game_clock = excluded.game_clock,
        display_clock = excluded.display_clock, game_period = excluded.game_period, broadcast = excluded.broadcast,
        simulation = coalesce(excluded.simulation, odds.events.simulation),
        updated_at = case when (odds.events.status, odds.events.score_away, odds.events.score_home, odds.events.game_clock)
          is distinct from (excluded.status, excluded.score_away, excluded.score_home, excluded.game_clock)
          then excluded.updated_at else odds.events.updated_at end
      where (${sql.raw(EVENT_FIELDS.map((c) => `odds.events.${c}`).join(', '))})
          is distinct from (${sql.raw(EVENT_FIELDS.map((c) => `excluded.${c}`).join(', '))})
        or (excluded.simulation is not null and excluded.simulation is distinct from odds.events.simulation)
      returning event_id`);
    // A row comes back when the event was inserted or a field of it changed (a no-op update returns nothing).
    if (written.rows.length > 0) touched = true;
    const statusChanged = !prev || prev.status !== event.status;
    const scoreChanged =
      !!prev && (prev.score_away !== event.scoreAway || prev.score_home !== event.scoreHome);
    if (statusChanged || scoreChanged) {
      changes.push({
        kind: 'event',
        change_type: statusChanged ? 'status' : 'score',
        event_id: event.eventId,
        sport_id: event.sportId,
        event_status: event.status,
        score_away: event.scoreAway,
        score_home: event.scoreHome,
        recorded_at: ts,
      });
    }
    if (markets.length === 0) continue;

    // Markets and lines: insert the missing ones, then read back every id of the event.
    await tx.execute(sql`
      insert into odds.event_markets (event_id, market_id, period_id)
      select ${event.eventId}, m.market_id, m.period_id
      from jsonb_to_recordset(${JSON.stringify(markets.map((m) => ({ market_id: m.marketId, period_id: m.periodId })))}::jsonb)
        as m(market_id int, period_id int)
      on conflict do nothing`);
    const marketRows = await tx.execute(
      sql`select id, market_id, period_id from odds.event_markets where event_id = ${event.eventId}`,
    );
    const marketIdOf = new Map<string, number>();
    const marketOfId = new Map<number, { marketId: number; periodId: number }>();
    for (const r of marketRows.rows as { id: string; market_id: number; period_id: number }[]) {
      marketIdOf.set(`${r.market_id}:${r.period_id}`, Number(r.id));
      marketOfId.set(Number(r.id), { marketId: r.market_id, periodId: r.period_id });
    }
    const namedMarkets = new Set(markets.map((m) => marketIdOf.get(`${m.marketId}:${m.periodId}`)!));
    const lineRows: Record<string, unknown>[] = [];
    for (const m of markets) {
      const emId = marketIdOf.get(`${m.marketId}:${m.periodId}`)!;
      for (const p of m.participants)
        for (const l of p.lines)
          lineRows.push({ em: emId, pid: p.id, ptype: p.type, pname: p.name, value: l.value });
    }
    const linesWritten = await tx.execute(sql`
      insert into odds.lines (event_market_id, event_id, participant_id, participant_type, participant_name, value)
      select l.em, ${event.eventId}, l.pid, l.ptype, l.pname, l.value
      from jsonb_to_recordset(${JSON.stringify(lineRows)}::jsonb) as l(em bigint, pid int, ptype text, pname text, value text)
      on conflict (event_market_id, participant_type, participant_id, value)
      do update set participant_name = excluded.participant_name
      where odds.lines.participant_name <> excluded.participant_name
      returning id`);
    if (linesWritten.rows.length > 0) touched = true;
    const existing = await tx.execute(sql`
      select l.id as line_id, l.event_market_id, l.participant_id, l.participant_type, l.value,
        p.id as price_id, p.sportsbook_id, p.price, p.is_main_line, p.closed_at is not null as closed
      from odds.lines l left join odds.prices p on p.line_id = l.id
      where l.event_id = ${event.eventId}`);
    const lineIdOf = new Map<string, number>();
    const priceOf = new Map<string, ExistingPrice>();
    const untouched = new Map<string, Record<string, unknown>>();
    for (const r of existing.rows as Record<string, unknown>[]) {
      const lineKey = `${r.event_market_id}:${r.participant_type}:${r.participant_id}:${r.value}`;
      lineIdOf.set(lineKey, Number(r.line_id));
      if (r.price_id !== null) {
        priceOf.set(`${r.line_id}:${r.sportsbook_id}`, {
          id: Number(r.price_id),
          price: Number(r.price),
          is_main_line: r.is_main_line as boolean,
          closed: r.closed as boolean,
        });
        if (!r.closed && namedMarkets.has(Number(r.event_market_id)))
          untouched.set(`${r.line_id}:${r.sportsbook_id}`, r);
      }
    }

    const inserts: Record<string, unknown>[] = [];
    const updatesRows: Record<string, unknown>[] = [];
    for (const m of markets) {
      const emId = marketIdOf.get(`${m.marketId}:${m.periodId}`)!;
      for (const p of m.participants) {
        for (const l of p.lines) {
          const lineId = lineIdOf.get(`${emId}:${p.type}:${p.id}:${l.value}`)!;
          for (const [book, input] of Object.entries(l.prices)) {
            const closed = input.closed === true;
            const base = {
              line_id: lineId,
              sportsbook_id: Number(book),
              price: input.price,
              is_main_line: input.isMainLine,
              closed,
            };
            const change = {
              kind: 'price',
              event_id: event.eventId,
              sport_id: event.sportId,
              line_id: lineId,
              affiliate_id: Number(book),
              market_id: m.marketId,
              period_id: m.periodId,
              participant_id: p.id,
              participant_type: p.type,
              line: l.value,
              price: input.price,
              is_main_line: input.isMainLine,
              recorded_at: ts,
            };
            const current = priceOf.get(`${lineId}:${book}`);
            untouched.delete(`${lineId}:${book}`);
            if (!current) {
              inserts.push(base);
              changes.push({
                ...change,
                change_type: closed ? 'closed' : 'opened',
                previous_price: null,
                _new: true,
              });
            } else if (
              current.price !== input.price ||
              current.is_main_line !== input.isMainLine ||
              current.closed !== closed
            ) {
              updatesRows.push({ id: current.id, ...base });
              changes.push({
                ...change,
                price_id: current.id,
                previous_price: current.price,
                change_type:
                  closed && !current.closed ? 'closed' : !closed && current.closed ? 'reopened' : 'changed',
              });
            }
          }
        }
      }
    }
    // A market in an update is a full snapshot: prices it no longer lists go off the board.
    for (const r of untouched.values()) {
      const market = marketOfId.get(Number(r.event_market_id))!;
      updatesRows.push({
        id: Number(r.price_id),
        line_id: Number(r.line_id),
        sportsbook_id: Number(r.sportsbook_id),
        price: Number(r.price),
        is_main_line: r.is_main_line,
        closed: true,
      });
      changes.push({
        kind: 'price',
        change_type: 'closed',
        event_id: event.eventId,
        sport_id: event.sportId,
        price_id: Number(r.price_id),
        line_id: Number(r.line_id),
        affiliate_id: Number(r.sportsbook_id),
        market_id: market.marketId,
        period_id: market.periodId,
        participant_id: Number(r.participant_id),
        participant_type: r.participant_type,
        line: r.value,
        price: Number(r.price),
        previous_price: Number(r.price),
        is_main_line: r.is_main_line,
        recorded_at: ts,
      });
    }
    if (inserts.length > 0) {
      const inserted = await tx.execute(sql`
        insert into odds.prices (line_id, event_id, sportsbook_id, price, is_main_line, closed_at, updated_at)
        select v.line_id, ${event.eventId}, v.sportsbook_id, v.price, v.is_main_line,
          case when v.closed then ${ts}::timestamptz end, ${ts}::timestamptz
        from jsonb_to_recordset(${JSON.stringify(inserts)}::jsonb)
          as v(line_id bigint, sportsbook_id int, price int, is_main_line boolean, closed boolean)
        returning id, line_id, sportsbook_id`);
      const newId = new Map<string, number>();
      for (const r of inserted.rows as { id: string; line_id: string; sportsbook_id: number }[])
        newId.set(`${r.line_id}:${r.sportsbook_id}`, Number(r.id));
      for (const c of changes)
        if (c._new && c.event_id === event.eventId) {
          c.price_id = newId.get(`${c.line_id}:${c.affiliate_id}`);
          delete c._new;
        }
    }
    if (updatesRows.length > 0) {
      await tx.execute(sql`
        update odds.prices p set price = v.price, is_main_line = v.is_main_line,
          closed_at = case when v.closed then coalesce(p.closed_at, ${ts}::timestamptz) end,
          updated_at = ${ts}::timestamptz
        from jsonb_to_recordset(${JSON.stringify(updatesRows)}::jsonb)
          as v(id bigint, price int, is_main_line boolean, closed boolean)
        where p.id = v.id`);
    }
  }
  let lastId = 0;
  if (changes.length > 0) {
    const result = await tx.execute(sql`
      insert into odds.changes (kind, change_type, event_id, sport_id, price_id, line_id, affiliate_id, market_id,
        period_id, participant_id, participant_type, line, price, previous_price, is_main_line, event_status,
        score_away, score_home, recorded_at)
      select kind, change_type, event_id, sport_id, price_id, line_id, affiliate_id, market_id, period_id,
        participant_id, participant_type, line, price, previous_price, is_main_line, event_status, score_away,
        score_home, recorded_at
      from jsonb_to_recordset(${JSON.stringify(changes)}::jsonb) as c(kind text, change_type text, event_id text,
        sport_id int, price_id bigint, line_id bigint, affiliate_id int, market_id int, period_id int,
        participant_id int, participant_type text, line text, price int, previous_price int, is_main_line boolean,
        event_status text, score_away int, score_home int, recorded_at timestamptz)
      returning id`);
    for (const r of result.rows as { id: string }[]) lastId = Math.max(lastId, Number(r.id));
    touched = true;
  }
  if (touched) await ChangeFeed.notify(tx, lastId);
  return { events: updates.length, changes: changes.length, lastId, touched };
}

/** The event columns an answer shows (any difference in them is a change of the cached answers). */
const EVENT_FIELDS = [
  'event_uuid',
  'sport_id',
  'event_date',
  'rotation_number_away',
  'rotation_number_home',
  'away_team_id',
  'home_team_id',
  'season_type',
  'season_year',
  'event_name',
  'league_name',
  'game_number',
  'game_type',
  'status',
  'status_detail',
  'score_away',
  'score_home',
  'score_away_by_period',
  'score_home_by_period',
  'winner_away',
  'winner_home',
  'venue_name',
  'venue_location',
  'game_clock',
  'display_clock',
  'game_period',
  'broadcast',
] as const;
