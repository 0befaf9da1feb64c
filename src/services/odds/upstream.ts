import { Value } from '@sinclair/typebox/value';
import type { Clock } from '../../platform/clock.ts';
import type { OutboundHttp } from '../../platform/outbound-http.ts';
// The platform gives TypeBox's `date-time` format (the ingest schema's `event_date`) its meaning.
import '../../platform/schemas.ts';
import type { IngestEvent, IngestService } from './ingest.ts';
import { IngestBody } from './odds-schemas.ts';

/** Largest upstream answer accepted per sport and day (bytes). */
export const MAX_UPSTREAM_BYTES = 32 * 1024 * 1024;

/** Upstream settings: `ODDS_UPSTREAM_URL`, `ODDS_UPSTREAM_KEY`, `ODDS_UPSTREAM_SPORTS`. */
export interface UpstreamConfig {
  /** Base URL of an API with this service's shape (another api-suite odds instance, a recorded feed server). */
  url: string;
  key: string;
  sportIds: number[];
}

/** What one sync did. */
export interface UpstreamSyncResult {
  fetched: number;
  events: number;
  changes: number;
  lastId: number;
}

type UpstreamPrice = { price: number; is_main_line?: boolean; updated_at?: string; closed_at?: string };

/**
 * The optional upstream sync (issue: "optional upstream sync when `ODDS_UPSTREAM_URL` and a key are configured"):
 * for each configured sport, reads today's and tomorrow's (UTC) events from
 * `GET {url}/api/v2/sports/{sport}/events/{date}` with `X-Odds-Key`, through the platform's guarded outbound client,
 * and loads them with the same validated, all-or-nothing ingest as the operator route (a price with `closed_at` is
 * loaded as closed; each price keeps the upstream's `updated_at` and `closed_at` as its recorded times). Differences go to the change log like any other write.
 */
export class UpstreamSync {
  constructor(
    private readonly outbound: OutboundHttp,
    private readonly ingest: IngestService,
    private readonly clock: Clock,
    private readonly config: UpstreamConfig,
  ) {}

  /**
   * One sync run.
   * @throws Error when the upstream answers other than 200, too large, not JSON, or not in this service's shape;
   *   ApiError 400 when the events break an ingest rule (nothing is written then).
   */
  async sync(): Promise<UpstreamSyncResult> {
    const now = this.clock.nowMs();
    const events: IngestEvent[] = [];
    for (const sportId of this.config.sportIds) {
      for (const offset of [0, 1]) {
        const date = new Date(now + offset * 86_400_000).toISOString().slice(0, 10);
        const url = `${this.config.url.replace(/\/$/, '')}/api/v2/sports/${sportId}/events/${date}?market_ids=${[1, 2, 3, 563, 29, 35, 39, 94].join(',')}`;
        const res = await this.outbound.send(url, {
          headers: { 'x-odds-key': this.config.key, accept: 'application/json' },
          timeoutMs: 30_000,
          maxBodyBytes: MAX_UPSTREAM_BYTES,
        });
        if (res.status !== 200)
          throw new Error(`upstream answered HTTP ${res.status} for sport ${sportId} on ${date}`);
        if (res.truncated) throw new Error(`upstream answer for sport ${sportId} on ${date} is too large`);
        let body: { events?: unknown[] };
        try {
          body = JSON.parse(res.body.toString('utf8')) as { events?: unknown[] };
        } catch {
          throw new Error(`upstream answer for sport ${sportId} on ${date} is not JSON`);
        }
        for (const e of body.events ?? []) events.push(toIngest(e as Record<string, unknown>));
      }
    }
    const problem = Value.Errors(IngestBody, { events }).First();
    if (problem)
      throw new Error(
        `upstream events are not in this service's shape (${problem.path}: ${problem.message})`,
      );
    if (events.length === 0) return { fetched: 0, events: 0, changes: 0, lastId: 0 };
    const result = await this.ingest.ingest(events);
    return { fetched: events.length, ...result };
  }
}

/** Maps an upstream `events[]` element (answer shape) to the ingest shape. */
function toIngest(e: Record<string, unknown>): IngestEvent {
  const score = { ...((e.score as Record<string, unknown>) ?? {}) };
  delete score.event_id;
  delete score.updated_at;
  const markets = ((e.markets as Record<string, unknown>[]) ?? []).map((m) => ({
    market_id: m.market_id as number,
    period_id: m.period_id as number,
    participants: ((m.participants as Record<string, unknown>[]) ?? []).map((p) => ({
      id: p.id as number,
      type: p.type as string,
      name: p.name as string,
      lines: ((p.lines as Record<string, unknown>[]) ?? []).map((l) => ({
        value: l.value as string,
        prices: Object.fromEntries(
          Object.entries((l.prices as Record<string, UpstreamPrice>) ?? {}).map(([book, price]) => [
            book,
            {
              price: price.price,
              is_main_line: price.is_main_line ?? true,
              closed: Boolean(price.closed_at),
              // The upstream's own times, so a price is recorded when it changed there, not when it was synced.
              ...(price.updated_at ? { updated_at: price.updated_at } : {}),
              ...(price.closed_at ? { closed_at: price.closed_at } : {}),
            },
          ]),
        ),
      })),
    })),
  }));
  return {
    event_id: e.event_id as string,
    event_uuid: e.event_uuid as string,
    sport_id: e.sport_id as number,
    event_date: e.event_date as string,
    rotation_number_away: e.rotation_number_away as number,
    rotation_number_home: e.rotation_number_home as number,
    score: score as IngestEvent['score'],
    teams: e.teams as IngestEvent['teams'],
    schedule: e.schedule as IngestEvent['schedule'],
    markets,
  };
}
