/**
 * The simulator's seeded statuses through the API (README "Statuses"): a delayed game shows `STATUS_DELAYED` from its
 * scheduled start, keeps its pre-game prices on the board (they may still move) and closes them when it actually
 * starts; a postponed game shows `STATUS_POSTPONED` from the announcement, its prices close then and it gets no live
 * prices after, and a makeup game (a new event, `game_type: makeup` in baseball) is scheduled; a canceled game shows
 * `STATUS_CANCELED`, its prices close at the cancellation. The delta feed and the WebSocket stream carry each status
 * change and every price going off the board. The clock is moved, never slept.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import WebSocket from 'ws';
import { baseUrlOf } from '../../../../test/support/platform.ts';
import { waitUntil } from '../../../../test/support/wait.ts';
import { actualStart, type ScheduledGame } from '../game-model.ts';
import { seasonPlan } from '../schedules.ts';
import {
  deltaOf,
  type EventBody,
  eventsOf,
  type OddsHarness,
  type StreamMessageBody,
  startOdds,
} from './support.ts';

const SEED = 'statuses';
const MINUTE = 60_000;
const plan = seasonPlan(SEED, 3, 2026);
const idOf = (g: ScheduledGame) => plan.ids.get(g)!;
const after1July = plan.games.filter((g) => g.start >= new Date('2026-07-01T00:00:00Z'));
/** A delayed game (long enough to look inside the delay), then a canceled one whose prices were up, then a postponed
 * one with a makeup: each after the one before, so the clock only moves forward. */
const delayed = after1July.find((g) => g.fate?.kind === 'delayed' && g.fate.minutes >= 40)!;
const canceled = after1July.find(
  (g) =>
    g.start.getTime() > delayed.start.getTime() + 2 * 86_400_000 &&
    g.fate?.kind === 'canceled' &&
    g.fate.at.getTime() > g.start.getTime() - 23 * 60 * MINUTE,
)!;
const makeupOf = (g: ScheduledGame) => plan.games.find((m) => m.makeupOf === idOf(g));
const postponed = after1July.find(
  (g) =>
    g.start.getTime() > canceled.start.getTime() + 2 * 86_400_000 &&
    g.fate?.kind === 'postponed' &&
    makeupOf(g),
)!;
const makeup = makeupOf(postponed)!;
/** When a postponement or cancellation is announced (epoch ms). */
const atOf = (g: ScheduledGame): number => (g.fate && 'at' in g.fate ? g.fate.at.getTime() : 0);

let h: OddsHarness;
let ws: WebSocket;
const messages: StreamMessageBody[] = [];

async function tickAt(ms: number) {
  h.clock.set(ms);
  const res = await h.ops('POST', '/_ops/simulator/tick');
  assert.equal(res.statusCode, 200, res.body);
}
const eventOf = async (g: ScheduledGame): Promise<EventBody> =>
  eventsOf(await h.get(`/api/v2/events/${idOf(g)}?market_ids=1,2,3,94`)).events[0]!;
const prices = (e: EventBody, marketId?: number) =>
  e.markets
    .filter((m) => marketId === undefined || m.market_id === marketId)
    .flatMap((m) => m.participants.flatMap((p) => p.lines.flatMap((l) => Object.values(l.prices))));
/** Before a close: the moneyline is up at every book (spread and total lines that moved away are off the board). */
const upBeforeClose = (e: EventBody) =>
  prices(e, 1).length === 22 &&
  prices(e, 1).every((p) => !p.closed_at) &&
  prices(e).some((p) => !p.closed_at);
/** After a close at `at`: nothing is left on the board, and what was up went off at `at`. */
const closedAt = (e: EventBody, at: number) =>
  prices(e).every((p) => p.closed_at) &&
  prices(e, 1).every((p) => p.closed_at === new Date(at).toISOString());
const closedNow = (e: EventBody, at: number) =>
  prices(e).filter((p) => p.closed_at === new Date(at).toISOString()).length;
/** The delta feed's cursor now (before a transition): `meta.delta_last_id` of an events answer. */
const cursor = async (): Promise<number> => {
  const id = eventsOf(await h.get(`/api/v2/events/${idOf(delayed)}`)).meta.delta_last_id;
  assert.equal(typeof id, 'number');
  return id as number;
};
const since = async (last: number, g: ScheduledGame) =>
  deltaOf(await h.get(`/api/v2/markets/delta?last_id=${last}&event_id=${idOf(g)}&limit=5000`)).deltas;

before(async () => {
  assert.ok(delayed && canceled && postponed && makeup, 'the seed has one game of each fate');
  h = await startOdds(
    new Date(delayed.start.getTime() - 10 * MINUTE),
    { ODDS_SIMULATOR: 'on', ODDS_SIM_SEED: SEED, ODDS_SIM_SPORTS: '3' },
    { listen: true },
  );
  const base = baseUrlOf(h.platform.app('odds')).replace('http', 'ws');
  ws = new WebSocket(`${base}/api/v2/stream?event_id=${[delayed, canceled, postponed].map(idOf).join(',')}`, {
    headers: { 'x-odds-key': h.key },
  });
  ws.on('message', (data) => messages.push(JSON.parse(String(data))));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  await waitUntil('hello', () => messages.some((m) => m.type === 'hello'));
});
after(async () => {
  ws?.close();
  await h?.close();
});

const streamed = (g: ScheduledGame, type: 'status' | 'price') =>
  messages.filter((m) => m.type === type && m.data.event_id === idOf(g)).map((m) => m.data);

test('delayed: STATUS_DELAYED from the scheduled start, prices stay up (and move), then close at the actual start', async () => {
  const start = delayed.start.getTime();
  const begins = actualStart(delayed)!.getTime();
  await tickAt(start - 5 * MINUTE);
  const before = await eventOf(delayed);
  assert.equal(before.score.event_status, 'STATUS_SCHEDULED');
  assert.ok(upBeforeClose(before), 'prices up before the start');

  let last = await cursor();
  await tickAt(start + 25 * MINUTE);
  const waiting = await eventOf(delayed);
  assert.equal(waiting.score.event_status, 'STATUS_DELAYED');
  assert.equal(waiting.score.event_status_detail, 'Rain Delay');
  assert.ok(upBeforeClose(waiting), 'the pre-game prices are still on the board');
  const delayRows = await since(last, delayed);
  assert.deepEqual(
    delayRows.filter((d) => d.kind === 'event').map((d) => d.event_status),
    ['STATUS_DELAYED'],
  );
  assert.ok(
    delayRows.some(
      (d) => d.kind === 'price' && d.change_type === 'changed' && Date.parse(d.updated_at) > start,
    ),
    'prices moved after the scheduled start, during the delay',
  );

  last = await cursor();
  await tickAt(begins + 5 * MINUTE);
  const playing = await eventOf(delayed);
  assert.equal(playing.score.event_status, 'STATUS_IN_PROGRESS');
  assert.ok(closedAt(playing, begins), 'closed at the actual start');
  const startRows = await since(last, delayed);
  assert.deepEqual(
    startRows.filter((d) => d.kind === 'event').map((d) => d.event_status),
    ['STATUS_IN_PROGRESS'],
  );
  assert.equal(startRows.filter((d) => d.change_type === 'closed').length, closedNow(playing, begins));

  // The closing snapshot is the last price at or before the scheduled start (event_date), as the spec defines it.
  const closing = eventsOf(await h.get(`/api/v2/events/${idOf(delayed)}/closing?market_ids=1,2,3`));
  assert.equal(closing.meta.provisional, false);
  assert.ok(
    prices(closing.events[0]!).every((p) => Date.parse(p.updated_at) <= start),
    'closing: recorded at or before event_date',
  );

  // The stream: the event's creation (scheduled), then each status change.
  await waitUntil('the stream', () => streamed(delayed, 'status').length >= 3);
  assert.deepEqual(
    streamed(delayed, 'status').map((d) => d.event_status),
    ['STATUS_SCHEDULED', 'STATUS_DELAYED', 'STATUS_IN_PROGRESS'],
  );
  assert.ok(
    streamed(delayed, 'price').some((d) => d.change_type === 'closed'),
    'the closes are streamed',
  );
});

test('canceled: STATUS_CANCELED from the announcement, every price closed then, nothing after', async () => {
  const at = atOf(canceled);
  await tickAt(at - 10 * MINUTE);
  const before = await eventOf(canceled);
  assert.equal(before.score.event_status, 'STATUS_SCHEDULED');
  assert.ok(upBeforeClose(before), 'prices up before the cancellation');

  let last = await cursor();
  await tickAt(at + MINUTE);
  const called = await eventOf(canceled);
  assert.equal(called.score.event_status, 'STATUS_CANCELED');
  assert.equal(called.score.event_status_detail, 'Canceled');
  assert.ok(closedAt(called, at), 'closed at the cancellation');
  const rows = await since(last, canceled);
  assert.deepEqual(
    rows.filter((d) => d.kind === 'event').map((d) => d.event_status),
    ['STATUS_CANCELED'],
  );
  const closes = rows.filter((d) => d.kind === 'price');
  assert.ok(
    closes.every((d) => d.change_type === 'closed' && d.updated_at === new Date(at).toISOString()),
    'only closes, at the cancellation',
  );
  assert.equal(closes.length, closedNow(called, at));

  last = await cursor();
  await tickAt(canceled.start.getTime() + 4 * 60 * MINUTE);
  assert.equal((await eventOf(canceled)).score.event_status, 'STATUS_CANCELED', 'never played');
  assert.deepEqual(await since(last, canceled), [], 'no prices, no status after the cancellation');
  await waitUntil('the stream', () => streamed(canceled, 'status').length >= 2);
  assert.deepEqual(
    streamed(canceled, 'status').map((d) => d.event_status),
    ['STATUS_SCHEDULED', 'STATUS_CANCELED'],
  );
});

test('postponed: STATUS_POSTPONED from the announcement, prices closed, no live prices; a makeup event is scheduled', async () => {
  const at = atOf(postponed);
  await tickAt(at - 10 * MINUTE);
  const before = await eventOf(postponed);
  assert.equal(before.score.event_status, 'STATUS_SCHEDULED');
  assert.ok(upBeforeClose(before), 'prices up before the postponement');

  let last = await cursor();
  await tickAt(at + MINUTE);
  const off = await eventOf(postponed);
  assert.equal(off.score.event_status, 'STATUS_POSTPONED');
  assert.equal(off.score.event_status_detail, 'Postponed');
  assert.ok(closedAt(off, at), 'closed at the postponement');
  const rows = await since(last, postponed);
  assert.deepEqual(
    rows.filter((d) => d.kind === 'event').map((d) => d.event_status),
    ['STATUS_POSTPONED'],
  );
  assert.equal(rows.filter((d) => d.change_type === 'closed').length, closedNow(off, at));

  last = await cursor();
  await tickAt(postponed.start.getTime() + 3 * 60 * MINUTE);
  const later = await eventOf(postponed);
  assert.equal(later.score.event_status, 'STATUS_POSTPONED', 'it stays postponed');
  assert.deepEqual([later.score.score_away, later.score.score_home], [0, 0]);
  assert.deepEqual(await since(last, postponed), [], 'no live prices');

  await tickAt(makeup.start.getTime() - 2 * 60 * MINUTE);
  const replay = await eventOf(makeup);
  assert.notEqual(replay.event_id, idOf(postponed), 'the makeup is a new event');
  assert.deepEqual(
    replay.teams.map((t) => t.team_id),
    off.teams.map((t) => t.team_id),
  );
  assert.equal(replay.schedule.game_type, 'makeup');
  assert.equal(replay.score.event_status, 'STATUS_SCHEDULED');
  assert.ok(upBeforeClose(replay), 'its own markets are up');

  await waitUntil('the stream', () => streamed(postponed, 'status').length >= 2);
  assert.deepEqual(
    streamed(postponed, 'status').map((d) => d.event_status),
    ['STATUS_SCHEDULED', 'STATUS_POSTPONED'],
  );
  assert.equal(
    streamed(postponed, 'price').filter(
      (d) => d.change_type === 'closed' && d.updated_at === new Date(at).toISOString(),
    ).length,
    closedNow(off, at),
    'every price going off the board is streamed',
  );
});
