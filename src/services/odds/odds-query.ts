import { isCalendarDate } from '../../platform/schemas.ts';
import { invalid } from './odds-errors.ts';
import {
  EVENT_STATUSES,
  type EventStatus,
  HOCKEY_SPORT_ID,
  PARTICIPANT_TYPES,
  type ParticipantType,
  SOCCER_SPORT_IDS,
} from './reference-data.ts';

/** Most `market_ids` per request (spec F, Limits). */
export const MAX_MARKET_IDS = 12;
/** Most `participant_ids` per request (spec F, Limits). */
export const MAX_PARTICIPANT_IDS = 99;
/** Accepted `offset` range in minutes (UTC-14:00 .. UTC+14:00, either sign). */
export const MAX_OFFSET_MINUTES = 840;
/** The scores-only sentinel of `affiliate_ids`. */
export const SCORES_ONLY_AFFILIATE = 0;

/** The shared query parameters of the events endpoints, raw as the HTTP layer received them. */
export interface RawEventQuery {
  market_ids?: string;
  affiliate_ids?: string;
  offset?: number;
  event_status?: string;
  exclude_status?: string;
  main_line?: boolean;
  participant_ids?: string;
  participant_type?: string;
  hide_no_markets?: boolean;
  hide_closed?: boolean;
}

/** The shared query parameters, validated (spec F, "Shared query parameters"). */
export interface EventQuery {
  /** Explicit market ids, or null for the sport's default (`1,2,3`; soccer and hockey `1,2,3,563`). */
  marketIds: number[] | null;
  /** Sportsbook ids, or null for all. */
  affiliateIds: number[] | null;
  /** `affiliate_ids=0`: events, scores and status kept, markets omitted. */
  scoresOnly: boolean;
  /** Minutes added to midnight UTC to find the start of the requested day. */
  offsetMinutes: number;
  eventStatus: EventStatus[] | null;
  excludeStatus: EventStatus[] | null;
  mainLine: boolean;
  participantIds: number[] | null;
  participantType: ParticipantType | null;
  hideNoMarkets: boolean;
  hideClosed: boolean;
}

function intList(field: string, raw: string, options: { min: number; max?: number }): number[] {
  const parts = raw.split(',').map((s) => s.trim());
  const out: number[] = [];
  for (const part of parts) {
    if (!/^\d{1,9}$/.test(part))
      throw invalid('query', field, `must be a comma-separated list of integers (got '${part}')`);
    const n = Number(part);
    if (n < options.min) throw invalid('query', field, `values must be at least ${options.min}`);
    if (!out.includes(n)) out.push(n);
  }
  if (options.max !== undefined && out.length > options.max)
    throw invalid('query', field, `accepts at most ${options.max} ids (got ${out.length})`);
  return out;
}

function statusList(field: string, raw: string): EventStatus[] {
  const out: EventStatus[] = [];
  for (const part of raw.split(',').map((s) => s.trim())) {
    if (!(EVENT_STATUSES as readonly string[]).includes(part))
      throw invalid('query', field, `'${part}' is not a status; use ${EVENT_STATUSES.join(', ')}`);
    out.push(part as EventStatus);
  }
  return out;
}

/**
 * Validates the shared query parameters.
 * @throws ApiError 400 `validation_error`: more than 12 `market_ids`, more than 99 `participant_ids`, a list item that
 *   is not an integer, the sentinel `0` mixed with sportsbook ids, an unknown status or participant type, an `offset`
 *   outside +-840 minutes.
 */
export function parseEventQuery(raw: RawEventQuery): EventQuery {
  const marketIds =
    raw.market_ids === undefined
      ? null
      : intList('market_ids', raw.market_ids, { min: 1, max: MAX_MARKET_IDS });
  let affiliateIds: number[] | null = null;
  let scoresOnly = false;
  if (raw.affiliate_ids !== undefined) {
    affiliateIds = intList('affiliate_ids', raw.affiliate_ids, { min: 0 });
    if (affiliateIds.includes(SCORES_ONLY_AFFILIATE)) {
      if (affiliateIds.length > 1)
        throw invalid('query', 'affiliate_ids', "'0' (scores only) cannot be combined with sportsbook ids");
      scoresOnly = true;
    }
  }
  // An integer within +-MAX_OFFSET_MINUTES: the route schema (EventQuerySchema) has refused anything else.
  const offset = raw.offset ?? 0;
  let participantType: ParticipantType | null = null;
  if (raw.participant_type !== undefined) {
    if (!(PARTICIPANT_TYPES as readonly string[]).includes(raw.participant_type))
      throw invalid('query', 'participant_type', `must be one of ${PARTICIPANT_TYPES.join(', ')}`);
    participantType = raw.participant_type as ParticipantType;
  }
  return {
    marketIds,
    affiliateIds,
    scoresOnly,
    offsetMinutes: offset,
    eventStatus: raw.event_status === undefined ? null : statusList('event_status', raw.event_status),
    excludeStatus: raw.exclude_status === undefined ? null : statusList('exclude_status', raw.exclude_status),
    mainLine: raw.main_line === true,
    participantIds:
      raw.participant_ids === undefined
        ? null
        : intList('participant_ids', raw.participant_ids, { min: 0, max: MAX_PARTICIPANT_IDS }),
    participantType,
    hideNoMarkets: raw.hide_no_markets === true,
    hideClosed: raw.hide_closed === true,
  };
}

/** The default `market_ids` of a sport: `1,2,3`, and `1,2,3,563` for soccer and hockey (spec F). */
export function defaultMarketIds(sportId: number): number[] {
  return sportId === HOCKEY_SPORT_ID || SOCCER_SPORT_IDS.includes(sportId) ? [1, 2, 3, 563] : [1, 2, 3];
}

/**
 * The UTC window of the day `date` (`YYYY-MM-DD`) whose boundary is moved by `offsetMinutes`: with `offset=300` the
 * day starts at 05:00 UTC (midnight at UTC-5), as the anchor's examples (300, 240, 360, 420) for US time zones.
 * @throws ApiError 400 when `date` is not a real calendar date.
 */
export function dayWindow(date: string, offsetMinutes: number): { start: Date; end: Date } {
  if (!isCalendarDate(date)) throw invalid('params', 'date', 'must be a calendar date YYYY-MM-DD');
  // Parsed as an ISO date-only string (UTC midnight): Date.UTC would read years 0-99 as 1900-1999.
  const start = Date.parse(date) + offsetMinutes * 60_000;
  return { start: new Date(start), end: new Date(start + 86_400_000) };
}

/** True when `status` passes `event_status` (applied first) and then `exclude_status`. */
export function statusSelected(status: string, q: EventQuery): boolean {
  if (q.eventStatus && !q.eventStatus.includes(status as EventStatus)) return false;
  if (q.excludeStatus?.includes(status as EventStatus)) return false;
  return true;
}
