import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import WebSocket from 'ws';
import { baseUrlOf } from '../../../../test/support/platform.ts';
import { waitUntil } from '../../../../test/support/wait.ts';
import { type EventUpdate, writeEvents } from '../odds-writer.ts';
import { matchesFilter } from '../routes/index.ts';
import {
  assertError,
  deltaOf,
  eventsOf,
  LAKERS,
  nbaEvent,
  type OddsHarness,
  type StreamMessageBody,
  startOdds,
} from './support.ts';

let h: OddsHarness;
let base: string;
before(async () => {
  h = await startOdds(
    new Date('2026-11-22T12:00:00Z'),
    { ODDS_WS_HEARTBEAT_SECONDS: '0.2' },
    { listen: true },
  );
  base = baseUrlOf(h.platform.app('odds')).replace('http', 'ws');
  assert.equal(
    (await h.ingest([nbaEvent('w1', '2026-11-23T00:30:00Z'), nbaEvent('w2', '2026-11-23T01:00:00Z')]))
      .statusCode,
    200,
  );
});
after(async () => h?.close());

/**
 * Waits until every frame the server sent `ws` before now has arrived: a ping's pong travels behind them on the same
 * connection (RFC 6455 frames are delivered in order). The positive sign that a client was sent nothing more.
 */
async function flush(ws: WebSocket): Promise<void> {
  await new Promise<void>((resolve) => {
    ws.once('pong', () => resolve());
    ws.ping();
  });
}

/** Opens a client and collects its messages. */
async function client(query: string, key: string | null = h.key) {
  const ws = new WebSocket(`${base}/api/v2/stream${query}`, key ? { headers: { 'x-odds-key': key } } : {});
  const messages: StreamMessageBody[] = [];
  ws.on('message', (data) => messages.push(JSON.parse(String(data))));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
  });
  return { ws, messages };
}

test('the upgrade needs a valid key (401 before any WebSocket)', async () => {
  await assert.rejects(client('?event_id=w1', null), /HTTP 401/);
  const res = await h.platform.app('odds').inject({ method: 'GET', url: '/api/v2/stream' });
  assertError(res, 401, 'unauthorized');
  const plain = await h.get('/api/v2/stream?event_id=w1');
  assertError(plain, 426, 'upgrade_required', /WebSocket/);
});

test('a client filtered by event_id (and sportsbook, market) receives only its changes; heartbeats flow', async () => {
  const w1 = await client('?event_id=w1');
  const w1dk = await client('?event_id=w1&affiliate_ids=23&market_ids=1');
  const w2 = await client('?event_id=w2');
  await waitUntil('hello', () => w1.messages.some((m) => m.type === 'hello'));
  assert.deepEqual(w1.messages[0]!.filters.event_id, ['w1']);

  h.clock.advance(60_000);
  await h.ingest([
    nbaEvent('w1', '2026-11-23T00:30:00Z', { mlAway: 170, mlHome: -190, status: 'STATUS_DELAYED' }),
  ]);
  await waitUntil('w1 prices', () => w1.messages.filter((m) => m.type === 'price').length >= 4);
  await waitUntil('w1 DraftKings... FanDuel price', () => w1dk.messages.some((m) => m.type === 'price'));
  // The feed hands a batch to every socket in one turn: once w1 has it, the others were sent theirs.
  for (const c of [w1, w1dk, w2]) await flush(c.ws);

  const prices = w1.messages.filter((m) => m.type === 'price').map((m) => m.data);
  assert.ok(prices.every((d) => d.event_id === 'w1'));
  const lakers = prices.find(
    (d) => d.affiliate_id === 19 && d.participant_id === LAKERS && d.market_id === 1,
  )!;
  assert.deepEqual([lakers.price, lakers.previous_price, lakers.change_type], [170, 150, 'changed']);
  assert.ok(w1.messages.some((m) => m.type === 'status' && m.data.event_status === 'STATUS_DELAYED'));
  const filtered = w1dk.messages.filter((m) => m.type === 'price').map((m) => m.data);
  assert.ok(filtered.length >= 2);
  assert.ok(filtered.every((d) => d.affiliate_id === 23 && d.market_id === 1));
  assert.equal(
    w2.messages.filter((m) => m.type === 'price' || m.type === 'status').length,
    0,
    'w2 saw nothing',
  );
  await waitUntil('a heartbeat', () => w2.messages.some((m) => m.type === 'heartbeat'));
  for (const c of [w1, w1dk, w2]) c.ws.close();
});

test('sport_id and a list of event ids filter too', async () => {
  const hockey = await client('?sport_id=6');
  const both = await client('?event_id=w1,w2&market_ids=3');
  await waitUntil('hello', () => both.messages.some((m) => m.type === 'hello'));
  h.clock.advance(60_000);
  const w1 = nbaEvent('w1', '2026-11-23T00:30:00Z', { mlAway: 180, mlHome: -200, status: 'STATUS_DELAYED' });
  const w2 = nbaEvent('w2', '2026-11-23T01:00:00Z');
  for (const e of [w1, w2]) {
    const totals = e.markets.find((m) => m.market_id === 3)!;
    for (const p of totals.participants)
      (p.lines[0]!.prices as Record<string, { price: number }>)['19']!.price = -120;
  }
  await h.ingest([w1, w2]);
  await waitUntil(
    'totals of both events',
    () => new Set(both.messages.filter((m) => m.type === 'price').map((m) => m.data.event_id)).size === 2,
  );
  for (const c of [hockey, both]) await flush(c.ws);
  assert.ok(both.messages.filter((m) => m.type === 'price').every((m) => m.data.market_id === 3));
  assert.equal(hockey.messages.filter((m) => m.type === 'price' || m.type === 'status').length, 0);
  hockey.ws.close();
  both.ws.close();
});

test('changes committed elsewhere (another instance) reach subscribers through LISTEN/NOTIFY', async () => {
  const w2 = await client('?event_id=w2');
  await waitUntil('hello', () => w2.messages.some((m) => m.type === 'hello'));
  // Write as another instance would: its own transaction and NOTIFY, without telling this instance's feed.
  const db = h.platform.booted.database.db;
  const update: EventUpdate = {
    event: {
      eventId: 'w2',
      eventUuid: 'w2',
      sportId: 4,
      eventDate: new Date('2026-11-23T01:00:00Z'),
      rotationNumberAway: 501,
      rotationNumberHome: 502,
      awayTeamId: 414,
      homeTeamId: 402,
      seasonType: 'Regular Season',
      seasonYear: 2026,
      eventName: 'x',
      leagueName: 'NBA',
      gameNumber: null,
      gameType: null,
      status: 'STATUS_IN_PROGRESS',
      statusDetail: '',
      scoreAway: 3,
      scoreHome: 0,
      scoreAwayByPeriod: [3],
      scoreHomeByPeriod: [0],
      winnerAway: false,
      winnerHome: false,
      venueName: '',
      venueLocation: '',
      gameClock: 600,
      displayClock: '10:00',
      gamePeriod: 1,
      broadcast: '',
    },
    markets: [],
  };
  await db.transaction((tx) => writeEvents(tx, [update], h.clock.now()));
  await waitUntil('the remote status change', () => w2.messages.some((m) => m.type === 'status'));
  const status = w2.messages.find((m) => m.type === 'status')!.data;
  assert.deepEqual([status.event_status, status.score_away], ['STATUS_IN_PROGRESS', 3]);
  // hello.delta_last_id is the socket's starting cursor: the delta feed from it holds what the socket received.
  const hello = w2.messages.find((m) => m.type === 'hello')!;
  assert.equal(typeof hello.delta_last_id, 'number');
  assert.ok(status.id > hello.delta_last_id);
  const delta = deltaOf(await h.get(`/api/v2/markets/delta?last_id=${hello.delta_last_id}&event_id=w2`));
  assert.deepEqual(
    delta.deltas.map((d) => d.id),
    w2.messages.filter((m) => m.type === 'status' || m.type === 'price').map((m) => m.data.id),
  );
  // The cache of this instance was invalidated by the notification too.
  const ev = eventsOf(await h.get('/api/v2/events/w2'));
  assert.equal(ev.events[0]!.score.event_status, 'STATUS_IN_PROGRESS');
  w2.ws.close();
});

test('revoking a key closes its open streams at once (1008); other keys keep theirs', async () => {
  const doomed = await h.issueKey('pro');
  const kept = await client('?event_id=w1');
  const revokedClient = await client('?event_id=w1', doomed.key);
  let closed: { code: number; reason: string } | undefined;
  revokedClient.ws.on('close', (code, reason) => {
    closed = { code, reason: String(reason) };
  });
  await waitUntil('hello', () => revokedClient.messages.some((m) => m.type === 'hello'));
  assert.equal((await h.ops('POST', `/_ops/keys/${doomed.id}/revoke`)).statusCode, 200);
  // The clock does not move: the revocation itself closes the stream, not a later check.
  await waitUntil('the revoked stream to close', () => closed !== undefined);
  assert.deepEqual(closed, { code: 1008, reason: 'credential revoked' });
  assert.equal(kept.ws.readyState, WebSocket.OPEN);
  kept.ws.close();
});

test('filter rule: market and sportsbook filters apply to price changes only', () => {
  const base = { id: 1, event_id: 'e', sport_id: 4, market_id: 1, affiliate_id: 19 } as never;
  const f = { eventIds: new Set(['e']), sportId: 4, marketIds: new Set([2]), affiliateIds: null };
  assert.equal(matchesFilter({ ...(base as object), kind: 'price' } as never, f), false);
  assert.equal(matchesFilter({ ...(base as object), kind: 'event', market_id: null } as never, f), true);
  assert.equal(matchesFilter({ ...(base as object), kind: 'event', sport_id: 3 } as never, f), false);
});
