/**
 * Two api instances of the odds service on one database, as a scale-out deployment runs them: a change ingested on
 * instance A reaches a WebSocket subscriber of instance B (LISTEN/NOTIFY), B's cached answers follow it, heartbeats
 * flow on B, and a key revoked on A stops working on B at once.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import WebSocket from 'ws';
import { baseUrlOf, TEST_OPERATOR_TOKEN } from '../../../../test/support/platform.ts';
import { waitUntil } from '../../../../test/support/wait.ts';
import { loadConfig } from '../../../platform/config.ts';
import { createLogger } from '../../../platform/logger.ts';
import { type BootedPlatform, bootServices } from '../../../platform/runtime.ts';
import { oddsService } from '../index.ts';
import {
  assertError,
  type EventsBody,
  eventsOf,
  LAKERS,
  nbaEvent,
  type OddsHarness,
  type StreamMessageBody,
  startOdds,
} from './support.ts';

const START = '2026-11-23T00:30:00Z';

let a: OddsHarness;
let b: BootedPlatform;
let dataDir: string;
before(async () => {
  a = await startOdds(new Date('2026-11-22T12:00:00Z'));
  assert.equal((await a.ingest([nbaEvent('i1', START)])).statusCode, 200);
  // Instance B: the same database, its own process state (change feed, caches, LISTEN connection).
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'odds-b-'));
  const env = { DATA_DIR: dataDir, ODDS_SIMULATOR: 'off', ODDS_WS_HEARTBEAT_SECONDS: '0.2' };
  const config = loadConfig(env, {}, [
    { name: oddsService.name, envPrefix: oddsService.envPrefix, defaultPort: oddsService.defaultPort },
  ]);
  b = await bootServices({
    config,
    services: [oddsService],
    databaseUrl: a.platform.database.url,
    operatorToken: TEST_OPERATOR_TOKEN,
    secretsKey: randomBytes(32),
    logger: createLogger('silent'),
    clock: a.clock,
    serveHttp: true,
    listen: false,
    runWorker: false,
  });
  await b.services.get('odds')!.app!.listen({ port: 0, host: '127.0.0.1' });
});
after(async () => {
  await b?.stop();
  await a?.close();
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
});

const bApp = () => b.services.get('odds')!.app!;
const bGet = (url: string, key = a.key) =>
  bApp().inject({ method: 'GET', url, headers: { 'x-odds-key': key } });
const lakersMl = (body: EventsBody) =>
  body.events[0]!.markets.find((m) => m.market_id === 1)!.participants.find((p) => p.id === LAKERS)!.lines[0]!
    .prices['19']!.price;

test('a change ingested on instance A reaches a WebSocket client of instance B, and B serves it', async () => {
  // B caches the answer first, so following the change needs B to learn of it.
  assert.equal(lakersMl(eventsOf(await bGet('/api/v2/events/i1?market_ids=1'))), 150);
  const ws = new WebSocket(
    `${baseUrlOf(bApp()).replace('http', 'ws')}/api/v2/stream?event_id=i1&market_ids=1`,
    {
      headers: { 'x-odds-key': a.key },
    },
  );
  const messages: StreamMessageBody[] = [];
  ws.on('message', (data) => messages.push(JSON.parse(String(data))));
  await waitUntil('hello', () => messages.some((m) => m.type === 'hello'));

  a.clock.advance(60_000);
  assert.equal((await a.ingest([nbaEvent('i1', START, { mlAway: 175, mlHome: -200 })])).statusCode, 200);
  await waitUntil('the moneyline moves on B', () => messages.filter((m) => m.type === 'price').length >= 4);
  const lakers = messages.find(
    (m) => m.type === 'price' && m.data.participant_id === LAKERS && m.data.affiliate_id === 19,
  )!.data;
  assert.deepEqual([lakers.price, lakers.previous_price], [175, 150]);
  assert.ok(messages.every((m) => m.type !== 'price' || m.data.market_id === 1));
  assert.equal(lakersMl(eventsOf(await bGet('/api/v2/events/i1?market_ids=1'))), 175, "B's cache followed");
  await waitUntil('a heartbeat on B', () => messages.some((m) => m.type === 'heartbeat'));
  ws.close();

  // A move without a change-log row (the game clock) reaches B's cached answers too.
  const clocked = nbaEvent('i1', START, { mlAway: 175, mlHome: -200 });
  clocked.score = { ...clocked.score, game_clock: 95, display_clock: '1:35' } as never;
  assert.equal((await a.ingest([clocked])).json().changes, 0);
  await waitUntil(
    "B's cached answer to follow the game clock",
    async () => eventsOf(await bGet('/api/v2/events/i1?market_ids=1')).events[0]!.score.game_clock === 95,
    { timeoutMs: 2000 },
  );
});

test('a key revoked on instance A is refused by instance B at once', async () => {
  const key = await a.issueKey('free');
  assert.equal((await bGet('/api/v2/sports', key.key)).statusCode, 200, 'B has the key in its cache now');
  assert.equal((await a.ops('POST', `/_ops/keys/${key.id}/revoke`)).statusCode, 200);
  await waitUntil(
    'B to refuse the key',
    async () => (await bGet('/api/v2/sports', key.key)).statusCode !== 200,
    {
      timeoutMs: 2000,
    },
  );
  assertError(await bGet('/api/v2/sports', key.key), 401, 'unauthorized');
});
