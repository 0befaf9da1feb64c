/**
 * Test support for the odds service: boots it alone on a fresh database with a ManualClock, and builds ingest
 * bodies for hand-made events.
 */
import assert from 'node:assert/strict';
import type { Static } from '@sinclair/typebox';
import { bodyAs } from '../../../../test/support/json.ts';
import { startTestPlatform, type TestPlatform } from '../../../../test/support/platform.ts';
import { ManualClock } from '../../../platform/clock.ts';
import type { ChangeRecord } from '../change-feed.ts';
import { oddsService } from '../index.ts';
import { DeltaResponse, EventsEnvelope } from '../odds-schemas.ts';

export type Answer = Awaited<ReturnType<ReturnType<TestPlatform['app']>['inject']>>;

/** An events answer (`{meta, events}`), typed by its response schema. */
export type EventsBody = Static<typeof EventsEnvelope>;
/** One event of an events answer. */
export type EventBody = EventsBody['events'][number];
/** One market of an event. */
export type MarketBody = EventBody['markets'][number];

/**
 * A message of the WebSocket stream as a client reads it: `hello` (filters, delta_last_id), `price` and `status`
 * (a change in `data`), `heartbeat` (ts). Loosely typed for tests: `data` is only there on price and status.
 */
export interface StreamMessageBody {
  type: 'hello' | 'price' | 'status' | 'heartbeat';
  data: ChangeRecord;
  filters: {
    event_id: string[] | null;
    sport_id: number | null;
    market_ids: number[] | null;
    affiliate_ids: number[] | null;
  };
  delta_last_id: number;
  ts: string;
}

/** The events answer of `res`: 200, checked against and typed by the response schema. */
export function eventsOf(res: Answer): EventsBody {
  assert.equal(res.statusCode, 200, res.body);
  return bodyAs(res, EventsEnvelope);
}

/** The delta feed answer of `res`: 200, checked against and typed by the response schema. */
export function deltaOf(res: Answer): Static<typeof DeltaResponse> {
  assert.equal(res.statusCode, 200, res.body);
  return bodyAs(res, DeltaResponse);
}

export interface OddsHarness {
  platform: TestPlatform;
  clock: ManualClock;
  /** The demo key of the seed (plan `pro`). */
  key: string;
  get(url: string, key?: string | null): Promise<Answer>;
  ops(method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown): Promise<Answer>;
  ingest(events: unknown[]): Promise<Answer>;
  issueKey(plan: string, rateLimitPerMinute?: number): Promise<{ id: number; key: string }>;
  close(): Promise<void>;
}

/**
 * Boots the odds service at `start` (simulator off unless `env` turns it on). With `runWorker` the worker role runs
 * too (the simulator's background steps), and the boot returns once the service is warm, as `npm start` does.
 */
export async function startOdds(
  start: Date,
  env: Record<string, string> = {},
  options: { listen?: boolean; runWorker?: boolean } = {},
): Promise<OddsHarness> {
  const clock = new ManualClock(start);
  const platform = await startTestPlatform({
    services: [oddsService],
    clock,
    env: { ODDS_SIMULATOR: 'off', ...env },
    listen: options.listen,
    runWorker: options.runWorker,
  });
  const app = platform.app('odds');
  const key = String(platform.credentials('odds').apiKey);
  const ops: OddsHarness['ops'] = (method, url, payload) =>
    app.inject({
      method,
      url,
      headers: { authorization: platform.operatorAuth },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  return {
    platform,
    clock,
    key,
    get: (url, k = key) => app.inject({ method: 'GET', url, headers: k === null ? {} : { 'x-odds-key': k } }),
    ops,
    ingest: (events) => ops('POST', '/_ops/ingest', { events }),
    async issueKey(plan, rateLimitPerMinute) {
      const res = await ops('POST', '/_ops/keys', {
        plan,
        ...(rateLimitPerMinute ? { rateLimitPerMinute } : {}),
      });
      assert.equal(res.statusCode, 201, res.body);
      return { id: res.json().id, key: res.json().key };
    },
    close: () => platform.close(),
  };
}

/** Asserts `{error, message}` (exactly those keys) with `status` and `error`. */
export function assertError(res: Answer, status: number, error: string, message?: RegExp) {
  assert.equal(res.statusCode, status, res.body);
  const body = res.json();
  assert.deepEqual(Object.keys(body).sort(), ['error', 'message'], res.body);
  assert.equal(body.error, error, res.body);
  if (message) assert.match(body.message, message);
  return body;
}

/** Team ids of the seed used by hand-made events. */
export const CELTICS = 402;
export const LAKERS = 414;
export const ARSENAL = 1101;
export const CHELSEA = 1107;
export const TATUM = 10003;

/** A hand-made NBA event with moneyline, spread (main + alternate), total and a player prop. */
export function nbaEvent(
  eventId: string,
  eventDate: string,
  prices: { mlAway: number; mlHome: number; spread?: number; status?: string } = {
    mlAway: 150,
    mlHome: -170,
  },
) {
  const book = (price: number, main = true) => ({ price, is_main_line: main });
  return {
    event_id: eventId,
    sport_id: 4,
    event_date: eventDate,
    rotation_number_away: 501,
    rotation_number_home: 502,
    score: { event_status: prices.status ?? 'STATUS_SCHEDULED', score_away: 0, score_home: 0 },
    teams: [
      {
        team_id: LAKERS,
        name: 'Los Angeles',
        mascot: 'Lakers',
        abbreviation: 'LAL',
        is_away: true,
        is_home: false,
      },
      {
        team_id: CELTICS,
        name: 'Boston',
        mascot: 'Celtics',
        abbreviation: 'BOS',
        is_away: false,
        is_home: true,
      },
    ],
    schedule: {
      season_type: 'Regular Season',
      season_year: 2026,
      event_name: 'Lakers at Celtics',
      league_name: 'NBA',
    },
    markets: [
      {
        market_id: 1,
        participants: [
          {
            id: LAKERS,
            type: 'TYPE_TEAM',
            name: 'Los Angeles',
            lines: [{ value: '', prices: { '19': book(prices.mlAway), '23': book(prices.mlAway + 5) } }],
          },
          {
            id: CELTICS,
            type: 'TYPE_TEAM',
            name: 'Boston',
            lines: [{ value: '', prices: { '19': book(prices.mlHome), '23': book(prices.mlHome - 5) } }],
          },
        ],
      },
      {
        market_id: 2,
        participants: [
          {
            id: LAKERS,
            type: 'TYPE_TEAM',
            name: 'Los Angeles',
            lines: [
              { value: '+4.5', prices: { '19': book(prices.spread ?? -110) } },
              { value: '+6.5', prices: { '19': book(-150, false) } },
            ],
          },
          {
            id: CELTICS,
            type: 'TYPE_TEAM',
            name: 'Boston',
            lines: [
              { value: '-4.5', prices: { '19': book(-110) } },
              { value: '-6.5', prices: { '19': book(130, false) } },
            ],
          },
        ],
      },
      {
        market_id: 3,
        participants: [
          {
            id: 0,
            type: 'TYPE_RESULT',
            name: 'Over',
            lines: [{ value: '224.5', prices: { '19': book(-110), '3': book(-105) } }],
          },
          {
            id: 1,
            type: 'TYPE_RESULT',
            name: 'Under',
            lines: [{ value: '224.5', prices: { '19': book(-110), '3': book(-105) } }],
          },
        ],
      },
      {
        market_id: 29,
        participants: [
          {
            id: TATUM,
            type: 'TYPE_PLAYER',
            name: 'Jayson Tatum',
            lines: [
              { value: 'Over 27.5', prices: { '19': book(-115) } },
              { value: 'Under 27.5', prices: { '19': book(-105) } },
            ],
          },
        ],
      },
    ],
  };
}
