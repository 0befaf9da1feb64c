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
import { loadConfig } from '../../../platform/config.ts';
import { createLogger } from '../../../platform/logger.ts';
import { type BootedPlatform, bootServices } from '../../../platform/runtime.ts';
import { baseUrlOf, TEST_OPERATOR_TOKEN } from '../../../platform/testing.ts';
import { oddsService } from '../index.ts';
import { assertError, LAKERS, nbaEvent, type OddsHarness, startOdds } from './support.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests walk JSON answers freely
type Json = Record<string, any>;
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
const lakersMl = (body: Json) =>
  body.events[0].markets.find((m: Json) => m.market_id === 1).participants.find((p: Json) => p.id === LAKERS)
    .lines[0].prices['19'].price;

async function until(check: () => boolean, what: string, ms = 5000) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('a change ingested on instance A reaches a WebSocket client of instance B, and B serves it', async () => {
  // B caches the answer first, so following the change needs B to learn of it.
  assert.equal(lakersMl((await bGet('/api/v2/events/i1?market_ids=1')).json()), 150);
  const ws = new WebSocket(
    `${baseUrlOf(bApp()).replace('http', 'ws')}/api/v2/stream?event_id=i1&market_ids=1`,
    {
      headers: { 'x-odds-key': a.key },
    },
  );
  const messages: Json[] = [];
  ws.on('message', (data) => messages.push(JSON.parse(String(data))));
  await until(() => messages.some((m) => m.type === 'hello'), 'hello');

  a.clock.advance(60_000);
  assert.equal((await a.ingest([nbaEvent('i1', START, { mlAway: 175, mlHome: -200 })])).statusCode, 200);
  await until(() => messages.filter((m) => m.type === 'price').length >= 4, 'the moneyline moves on B');
  const lakers = messages.find(
    (m) => m.type === 'price' && m.data.participant_id === LAKERS && m.data.affiliate_id === 19,
  )!.data;
  assert.deepEqual([lakers.price, lakers.previous_price], [175, 150]);
  assert.ok(messages.every((m) => m.type !== 'price' || m.data.market_id === 1));
  assert.equal(lakersMl((await bGet('/api/v2/events/i1?market_ids=1')).json()), 175, "B's cache followed");
  await until(() => messages.some((m) => m.type === 'heartbeat'), 'a heartbeat on B');
  ws.close();

  // A move without a change-log row (the game clock) reaches B's cached answers too.
  const clocked = nbaEvent('i1', START, { mlAway: 175, mlHome: -200 });
  clocked.score = { ...clocked.score, game_clock: 95, display_clock: '1:35' } as never;
  assert.equal((await a.ingest([clocked])).json().changes, 0);
  let clock = 0;
  const deadline = Date.now() + 2000;
  while (clock !== 95 && Date.now() < deadline) {
    clock = (await bGet('/api/v2/events/i1?market_ids=1')).json().events[0].score.game_clock;
    if (clock !== 95) await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(clock, 95, "B's cached answer follows the game clock");
});

test('a key revoked on instance A is refused by instance B at once', async () => {
  const key = await a.issueKey('free');
  assert.equal((await bGet('/api/v2/sports', key.key)).statusCode, 200, 'B has the key in its cache now');
  assert.equal((await a.ops('DELETE', `/_ops/keys/${key.id}`)).statusCode, 200);
  let status = 200;
  const deadline = Date.now() + 2000;
  while (status === 200 && Date.now() < deadline) {
    status = (await bGet('/api/v2/sports', key.key)).statusCode;
    if (status === 200) await new Promise((r) => setTimeout(r, 20));
  }
  assertError(await bGet('/api/v2/sports', key.key), 401, 'unauthorized');
});
