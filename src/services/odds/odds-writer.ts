import { sql } from 'drizzle-orm';
import type { Executor } from '../../platform/database.ts';
import { lockChangeLog, notifyChanges } from './change-feed.ts';
import type { EventStatus, ParticipantType } from './reference-data.ts';

/**
 * One price of a line at one sportsbook, as written (integer American odds). Times are clamped: never after the write
 * time, and never before the price's previous recorded change (so each price's history stays in time order).
 */
export interface PriceInput {
  price: number;
  /**
   * Main line or alternate. Only lines with a value (spreads, totals, team totals, props) have alternates: on a line
   * whose value is empty (moneyline, three-way, yes/no, double chance) the writer stores `true` whatever is sent.
   */
  isMainLine: boolean;
  /** True when the line is off the board at this sportsbook. */
  closed?: boolean;
  /** When this value was recorded at its source (the price's `updated_at`); default: the time of its snapshot. */
  at?: Date;
  /** When a closed price went off the board; default: the time of its snapshot. */
  closedAt?: Date;
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

/** The state of (some of) an event's markets at one time: each market named is a full snapshot of that market. */
export interface MarketSnapshot {
  at: Date;
  markets: MarketInput[];
}

/**
 * An event with (some of) its markets at the write time. Markets not named are left as they are. `history` holds
 * earlier snapshots, oldest first, replayed before `markets` with their own times (the simulator's backfill of a
 * price history it did not write live).
 */
export interface EventUpdate {
  event: EventInput;
  markets: MarketInput[];
  history?: MarketSnapshot[];
}

/** What a write changed: change ids `firstId..lastId` (0 when nothing changed). */
export interface WriteResult {
  events: number;
  changes: number;
  lastId: number;
  /**
   * True when anything an answer shows changed: a change-log row, or a field without one (game clock, status
   * detail, venue, schedule, a participant's name). The commit notification is sent then, so every instance drops
   * its cached answers; call `OddsChangeFeed.committed` after the commit.
   */
  touched: boolean;
}

/** What a change row of a price names besides the price itself. */
interface PriceKey {
  lineId: number;
  emId: number;
  marketId: number;
  periodId: number;
  participantId: number;
  participantType: string;
  value: string;
  book: number;
}

/** A price while a write replays its snapshots: its stored state, then every change applied in memory. */
interface PriceState {
  key: PriceKey;
  /** Row id; null until a new price is inserted. */
  id: number | null;
  price: number;
  isMainLine: boolean;
  closed: boolean;
  /** Time (ms) of the price's last recorded change (`prices.updated_at`). */
  lastAt: number;
  /** Time (ms) it went off the board, when closed. */
  closedAt: number | null;
  /** Differs from the stored row. */
  dirty: boolean;
}

/** Most change rows per insert statement (keeps the array parameters of a large backfill small). */
const CHANGE_INSERT_CHUNK = 5000;

/** The columns of a change row as the writer collects them, with their PostgreSQL types (one array parameter each). */
const CHANGE_COLUMNS: [name: string, type: string][] = [
  ['kind', 'text'],
  ['change_type', 'text'],
  ['event_id', 'text'],
  ['sport_id', 'int'],
  ['price_id', 'bigint'],
  ['line_id', 'bigint'],
  ['affiliate_id', 'int'],
  ['market_id', 'int'],
  ['period_id', 'int'],
  ['participant_id', 'int'],
  ['participant_type', 'text'],
  ['line', 'text'],
  ['price', 'int'],
  ['previous_price', 'int'],
  ['is_main_line', 'boolean'],
  ['event_status', 'text'],
  ['score_away', 'int'],
  ['score_home', 'int'],
  ['recorded_at', 'timestamptz'],
];

/**
 * Writes events, markets, lines and prices in the caller's transaction and appends every difference to the change
 * log (spec F: "the full price history (every change with its time)"): a new price is `opened`, a new value
 * `changed`, going off the board `closed`, coming back `reopened`; a status change of the event `status`, a score
 * change `score`. Holds the change-log lock, and sends the commit notification; call
 * `OddsChangeFeed.committed` with `lastId` after the commit.
 *
 * Times: each change row carries `recorded_at`, the time of the change itself (what openers, closing and market
 * history read), and `logged_at`, the write time `now` (what the delta feed's 30-minute window reads). A price's
 * change is recorded at its {@link PriceInput.at} (or its snapshot's time), clamped to `[previous change of that
 * price, now]`. The snapshots of {@link EventUpdate.history} are replayed first, oldest first, then `markets` at `now`;
 * each market named in a snapshot is a full snapshot of that market (prices it no longer lists are closed at the
 * snapshot's time). A price first seen already closed is recorded as `opened` at its time and then `closed` (at its
 * {@link PriceInput.closedAt}), and an open price that arrives closed with a new value as `changed` then `closed`, so
 * the snapshots (which read the non-`closed` rows) see the value it had on the board.
 * @param now the write time: the time of status and score changes and the latest time any change may carry.
 */
export async function writeEvents(tx: Executor, updates: EventUpdate[], now: Date): Promise<WriteResult> {
  await lockChangeLog(tx);
  const session = new WriteSession(tx, now);
  for (const update of updates) await session.writeEvent(update);
  const lastId = await session.appendChanges();
  if (session.touched) await notifyChanges(tx, lastId);
  return { events: updates.length, changes: session.changeCount, lastId, touched: session.touched };
}

type ChangeType = 'opened' | 'changed' | 'closed' | 'reopened';

/** The ids of an event's markets and lines, read back after they are written. */
interface EventIds {
  /** `marketId:periodId` -> event market row id. */
  marketIdOf: Map<string, number>;
  /** Event market row id -> its market and period. */
  marketOfId: Map<number, { marketId: number; periodId: number }>;
  /** `emId:participantType:participantId:value` -> line row id. */
  lineIdOf: Map<string, number>;
}

/**
 * One {@link writeEvents} call: the change rows it collects (written at the end, in recorded-time order) and whether
 * anything an answer shows changed.
 */
class WriteSession {
  touched = false;
  private readonly changes: Record<string, unknown>[] = [];
  /** Change rows of prices not yet inserted get their `price_id` after the insert. */
  private readonly pending: { row: Record<string, unknown>; state: PriceState }[] = [];
  private readonly ts: string;
  private readonly nowMs: number;

  constructor(
    private readonly tx: Executor,
    now: Date,
  ) {
    this.ts = now.toISOString();
    this.nowMs = now.getTime();
  }

  get changeCount(): number {
    return this.changes.length;
  }

  /** A change time: `t`, not before `floor` (the price's previous change) and not after the write time. */
  private clamp(t: number, floor: number): number {
    return Math.min(this.nowMs, Math.max(t, floor));
  }

  /** Writes one event, then replays its snapshots (history, oldest first, then `markets` at the write time). */
  async writeEvent({ event, markets, history }: EventUpdate): Promise<void> {
    const created = await this.upsertEvent(event);
    const steps: MarketSnapshot[] = [...(history ?? []), { at: new Date(this.nowMs), markets }].filter(
      (s) => s.markets.length > 0,
    );
    if (steps.length === 0) return;
    const ids = await this.writeMarketsAndLines(event.eventId, steps);
    // An event created by this write has no prices yet, and its lines were all just inserted (their ids are known).
    const states = created ? new Map<string, PriceState>() : await this.readPrices(event.eventId, ids);
    for (const step of steps) this.replay(event, step, ids, states);
    await this.savePrices(event.eventId, states);
  }

  /** Inserts or updates the event row and records a `status` or `score` change; true when the event is new. */
  private async upsertEvent(event: EventInput): Promise<boolean> {
    const before = await this.tx.execute(
      sql`select status, score_away, score_home from odds.events where event_id = ${event.eventId} for update`,
    );
    const prev = before.rows[0] as { status: string; score_away: number; score_home: number } | undefined;
    const written = await this.tx.execute(sql`
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
        ${event.simulation === undefined ? null : JSON.stringify(event.simulation)}::jsonb, ${this.ts})
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
    if (written.rows.length > 0) this.touched = true;
    const statusChanged = !prev || prev.status !== event.status;
    const scoreChanged =
      !!prev && (prev.score_away !== event.scoreAway || prev.score_home !== event.scoreHome);
    if (!statusChanged && !scoreChanged) return !prev;
    this.changes.push({
      kind: 'event',
      change_type: statusChanged ? 'status' : 'score',
      event_id: event.eventId,
      sport_id: event.sportId,
      event_status: event.status,
      score_away: event.scoreAway,
      score_home: event.scoreHome,
      recorded_at: this.ts,
    });
    return !prev;
  }

  /**
   * Markets and lines of every snapshot: inserts the missing ones, then reads back every market id of the event; the
   * ids of the lines written now go to `lineIdOf` (the others are read with the prices).
   */
  private async writeMarketsAndLines(eventId: string, steps: MarketSnapshot[]): Promise<EventIds> {
    const marketKeys = new Map<string, { market_id: number; period_id: number }>();
    for (const s of steps)
      for (const m of s.markets)
        marketKeys.set(`${m.marketId}:${m.periodId}`, { market_id: m.marketId, period_id: m.periodId });
    await this.tx.execute(sql`
      insert into odds.event_markets (event_id, market_id, period_id)
      select ${eventId}, m.market_id, m.period_id
      from jsonb_to_recordset(${JSON.stringify([...marketKeys.values()])}::jsonb) as m(market_id int, period_id int)
      on conflict do nothing`);
    const marketRows = await this.tx.execute(
      sql`select id, market_id, period_id from odds.event_markets where event_id = ${eventId}`,
    );
    const ids: EventIds = { marketIdOf: new Map(), marketOfId: new Map(), lineIdOf: new Map() };
    for (const r of marketRows.rows as { id: string; market_id: number; period_id: number }[]) {
      ids.marketIdOf.set(`${r.market_id}:${r.period_id}`, Number(r.id));
      ids.marketOfId.set(Number(r.id), { marketId: r.market_id, periodId: r.period_id });
    }
    // One row per line key (a line may appear in several snapshots; the latest name wins).
    const lineRows = new Map<string, Record<string, unknown>>();
    for (const s of steps)
      for (const m of s.markets) {
        const emId = ids.marketIdOf.get(`${m.marketId}:${m.periodId}`)!;
        for (const p of m.participants)
          for (const l of p.lines)
            lineRows.set(`${emId}:${p.type}:${p.id}:${l.value}`, {
              em: emId,
              pid: p.id,
              ptype: p.type,
              pname: p.name,
              value: l.value,
            });
      }
    const linesWritten = await this.tx.execute(sql`
      insert into odds.lines (event_market_id, event_id, participant_id, participant_type, participant_name, value)
      select l.em, ${eventId}, l.pid, l.ptype, l.pname, l.value
      from jsonb_to_recordset(${JSON.stringify([...lineRows.values()])}::jsonb)
        as l(em bigint, pid int, ptype text, pname text, value text)
      on conflict (event_market_id, participant_type, participant_id, value)
      do update set participant_name = excluded.participant_name
      where odds.lines.participant_name <> excluded.participant_name
      returning id, event_market_id, participant_type, participant_id, value`);
    for (const r of linesWritten.rows as Record<string, unknown>[])
      ids.lineIdOf.set(
        `${r.event_market_id}:${r.participant_type}:${r.participant_id}:${r.value}`,
        Number(r.id),
      );
    if (linesWritten.rows.length > 0) this.touched = true;
    return ids;
  }

  /** The stored prices of the event by `lineId:sportsbook`; fills `ids.lineIdOf` with every line of the event. */
  private async readPrices(eventId: string, ids: EventIds): Promise<Map<string, PriceState>> {
    const existing = await this.tx.execute(sql`
      select l.id as line_id, l.event_market_id, l.participant_id, l.participant_type, l.value,
        p.id as price_id, p.sportsbook_id, p.price, p.is_main_line,
        (extract(epoch from p.closed_at) * 1000)::float8 as closed_ms,
        (extract(epoch from p.updated_at) * 1000)::float8 as updated_ms
      from odds.lines l left join odds.prices p on p.line_id = l.id
      where l.event_id = ${eventId}`);
    const states = new Map<string, PriceState>();
    for (const r of existing.rows as Record<string, unknown>[]) {
      ids.lineIdOf.set(
        `${r.event_market_id}:${r.participant_type}:${r.participant_id}:${r.value}`,
        Number(r.line_id),
      );
      if (r.price_id === null) continue;
      const market = ids.marketOfId.get(Number(r.event_market_id))!;
      states.set(`${r.line_id}:${r.sportsbook_id}`, {
        key: {
          lineId: Number(r.line_id),
          emId: Number(r.event_market_id),
          marketId: market.marketId,
          periodId: market.periodId,
          participantId: Number(r.participant_id),
          participantType: String(r.participant_type),
          value: String(r.value),
          book: Number(r.sportsbook_id),
        },
        id: Number(r.price_id),
        price: Number(r.price),
        isMainLine: r.is_main_line as boolean,
        closed: r.closed_ms !== null,
        lastAt: Number(r.updated_ms),
        closedAt: r.closed_ms === null ? null : Number(r.closed_ms),
        dirty: false,
      });
    }
    return states;
  }

  /**
   * Applies one snapshot to the price states: each price it lists is opened, changed, closed or reopened; a market
   * it names is a full snapshot, so prices that market no longer lists go off the board.
   */
  private replay(
    event: EventInput,
    step: MarketSnapshot,
    ids: EventIds,
    states: Map<string, PriceState>,
  ): void {
    const stepMs = step.at.getTime();
    const named = new Set<number>();
    const listed = new Set<string>();
    for (const m of step.markets) {
      const emId = ids.marketIdOf.get(`${m.marketId}:${m.periodId}`)!;
      named.add(emId);
      for (const p of m.participants) {
        for (const l of p.lines) {
          const lineId = ids.lineIdOf.get(`${emId}:${p.type}:${p.id}:${l.value}`)!;
          for (const [book, input] of Object.entries(l.prices)) {
            const stateKey = `${lineId}:${book}`;
            listed.add(stateKey);
            const key: PriceKey = {
              lineId,
              emId,
              marketId: m.marketId,
              periodId: m.periodId,
              participantId: p.id,
              participantType: p.type,
              value: l.value,
              book: Number(book),
            };
            const state = this.applyPrice(event, states.get(stateKey), key, input, stepMs);
            states.set(stateKey, state);
          }
        }
      }
    }
    for (const [stateKey, state] of states)
      if (!state.closed && named.has(state.key.emId) && !listed.has(stateKey))
        this.close(event, state, this.clamp(stepMs, state.lastAt));
  }

  /** One listed price against its state (undefined: first seen): records what changed and returns the new state. */
  private applyPrice(
    event: EventInput,
    current: PriceState | undefined,
    key: PriceKey,
    input: PriceInput,
    stepMs: number,
  ): PriceState {
    const closed = input.closed === true;
    // Lines without a value (moneyline-style) have no alternates: always the main line.
    const isMainLine = key.value === '' ? true : input.isMainLine;
    const valueAt = this.clamp(input.at?.getTime() ?? stepMs, current?.lastAt ?? Number.NEGATIVE_INFINITY);
    const closeAt = (from: number) => this.clamp(input.closedAt?.getTime() ?? stepMs, from);
    if (!current) {
      const state: PriceState = {
        key,
        id: null,
        price: input.price,
        isMainLine,
        closed: false,
        lastAt: valueAt,
        closedAt: null,
        dirty: true,
      };
      this.record(event, state, 'opened', valueAt, null);
      if (closed) this.close(event, state, closeAt(valueAt));
      return state;
    }
    const state = current;
    const moved = state.price !== input.price || state.isMainLine !== isMainLine;
    if (!moved && state.closed === closed) return state;
    const previous = state.price;
    state.price = input.price;
    state.isMainLine = isMainLine;
    if (closed && !state.closed) {
      if (moved) this.record(event, state, 'changed', valueAt, previous);
      this.close(event, state, closeAt(state.lastAt));
    } else if (!closed && state.closed) {
      state.closed = false;
      state.closedAt = null;
      this.record(event, state, 'reopened', valueAt, previous);
    } else {
      this.record(event, state, 'changed', valueAt, previous);
    }
    return state;
  }

  private close(event: EventInput, state: PriceState, at: number): void {
    state.closed = true;
    state.closedAt = at;
    this.record(event, state, 'closed', at, state.price);
  }

  /** Appends a price change row at `at` (ms) and marks the price as to be saved. */
  private record(
    event: EventInput,
    state: PriceState,
    changeType: ChangeType,
    at: number,
    previousPrice: number | null,
  ): void {
    const k = state.key;
    const row: Record<string, unknown> = {
      kind: 'price',
      change_type: changeType,
      event_id: event.eventId,
      sport_id: event.sportId,
      price_id: state.id,
      line_id: k.lineId,
      affiliate_id: k.book,
      market_id: k.marketId,
      period_id: k.periodId,
      participant_id: k.participantId,
      participant_type: k.participantType,
      line: k.value,
      price: state.price,
      previous_price: previousPrice,
      is_main_line: state.isMainLine,
      recorded_at: new Date(at).toISOString(),
    };
    this.changes.push(row);
    if (state.id === null) this.pending.push({ row, state });
    state.lastAt = at;
    state.dirty = true;
  }

  /** Inserts the new prices (learning their ids) and updates the changed ones. */
  private async savePrices(eventId: string, states: Map<string, PriceState>): Promise<void> {
    const inserts: PriceState[] = [];
    const updatesRows: Record<string, unknown>[] = [];
    for (const s of states.values()) {
      if (!s.dirty) continue;
      if (s.id === null) inserts.push(s);
      else updatesRows.push(priceRow(s));
    }
    if (inserts.length > 0) {
      const col = (f: (p: PriceState) => unknown) => sql.param(inserts.map(f));
      const inserted = await this.tx.execute(sql`
        insert into odds.prices (line_id, event_id, sportsbook_id, price, is_main_line, closed_at, updated_at)
        select v.line_id, ${eventId}, v.sportsbook_id, v.price, v.is_main_line, v.closed_at, v.updated_at
        from unnest(${col((p) => p.key.lineId)}::bigint[], ${col((p) => p.key.book)}::int[], ${col((p) => p.price)}::int[],
          ${col((p) => p.isMainLine)}::boolean[],
          ${col((p) => (p.closedAt === null ? null : new Date(p.closedAt).toISOString()))}::timestamptz[],
          ${col((p) => new Date(p.lastAt).toISOString())}::timestamptz[])
          as v(line_id, sportsbook_id, price, is_main_line, closed_at, updated_at)
        returning id, line_id, sportsbook_id`);
      const newId = new Map<string, number>();
      for (const r of inserted.rows as { id: string; line_id: string; sportsbook_id: number }[])
        newId.set(`${r.line_id}:${r.sportsbook_id}`, Number(r.id));
      for (const s of inserts) s.id = newId.get(`${s.key.lineId}:${s.key.book}`)!;
    }
    if (updatesRows.length > 0) {
      await this.tx.execute(sql`
        update odds.prices p set price = v.price, is_main_line = v.is_main_line, closed_at = v.closed_at,
          updated_at = v.updated_at
        from jsonb_to_recordset(${JSON.stringify(updatesRows)}::jsonb)
          as v(id bigint, price int, is_main_line boolean, closed_at timestamptz, updated_at timestamptz)
        where p.id = v.id`);
    }
  }

  /**
   * Appends the collected change rows to the change log, ids in recorded-time order (stable: equal times keep their
   * order, opened before closed), logged at the write time.
   * @returns the highest id written (0 when none).
   */
  async appendChanges(): Promise<number> {
    for (const { row, state } of this.pending) row.price_id = state.id;
    // Every recorded_at is `toISOString()` text (UTC, fixed width), so text order is time order: no parsing.
    this.changes.sort((a, b) => {
      const x = a.recorded_at as string;
      const y = b.recorded_at as string;
      return x < y ? -1 : x > y ? 1 : 0;
    });
    let lastId = 0;
    for (let i = 0; i < this.changes.length; i += CHANGE_INSERT_CHUNK) {
      const chunk = this.changes.slice(i, i + CHANGE_INSERT_CHUNK);
      const col = (name: string, type: string) =>
        sql`${sql.param(chunk.map((c) => c[name] ?? null))}::${sql.raw(type)}[]`;
      const result = await this.tx.execute(sql`
        insert into odds.changes (kind, change_type, event_id, sport_id, price_id, line_id, affiliate_id, market_id,
          period_id, participant_id, participant_type, line, price, previous_price, is_main_line, event_status,
          score_away, score_home, recorded_at, logged_at)
        select *, ${this.ts}::timestamptz
        from unnest(${sql.join(
          CHANGE_COLUMNS.map(([name, type]) => col(name, type)),
          sql`, `,
        )})
        returning id`);
      for (const r of result.rows as { id: string }[]) lastId = Math.max(lastId, Number(r.id));
      this.touched = true;
    }
    return lastId;
  }
}

/** A price as its `odds.prices` row (JSON for `jsonb_to_recordset`). */
function priceRow(s: PriceState) {
  return {
    id: s.id,
    line_id: s.key.lineId,
    sportsbook_id: s.key.book,
    price: s.price,
    is_main_line: s.isMainLine,
    closed_at: s.closedAt === null ? null : new Date(s.closedAt).toISOString(),
    updated_at: new Date(s.lastAt).toISOString(),
  };
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
