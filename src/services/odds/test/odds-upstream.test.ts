import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { baseUrlOf } from '../../../../test/support/platform.ts';
import { readOddsConfig } from '../odds-config.ts';
import { assertError, LAKERS, nbaEvent, type OddsHarness, startOdds } from './support.ts';

let upstream: OddsHarness;
let mirror: OddsHarness;
let bare: OddsHarness;
before(async () => {
  upstream = await startOdds(new Date('2026-11-22T12:00:00Z'), {}, { listen: true });
  const ev = nbaEvent('up-1', '2026-11-23T00:30:00Z');
  (ev.markets[0]!.participants[1]!.lines[0]!.prices as Record<string, Record<string, unknown>>)[
    '23'
  ]!.closed = true;
  // A recorded time of its own upstream, earlier than the mirror's clock.
  (ev.markets[0]!.participants[0]!.lines[0]!.prices as Record<string, Record<string, unknown>>)[
    '19'
  ]!.updated_at = '2026-11-22T09:15:00Z';
  assert.equal((await upstream.ingest([ev])).statusCode, 200);
  mirror = await startOdds(new Date('2026-11-22T12:00:00Z'), {
    ODDS_UPSTREAM_URL: baseUrlOf(upstream.platform.app('odds')),
    ODDS_UPSTREAM_KEY: upstream.key,
    ODDS_UPSTREAM_SPORTS: '4,6',
  });
  bare = await startOdds(new Date('2026-11-22T12:00:00Z'));
});
after(async () => {
  await mirror?.close();
  await upstream?.close();
  await bare?.close();
});

test("the upstream sync loads the upstream's events (same shape) through the ingest rules", async () => {
  const res = await mirror.ops('POST', '/_ops/upstream/sync');
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.json().fetched, 1);
  const ev = (await mirror.get('/api/v2/events/up-1?market_ids=1,2,3,29')).json().events[0];
  assert.deepEqual(
    ev.markets.map((m: { market_id: number }) => m.market_id),
    [1, 2, 3, 29],
  );
  const lakers = ev.markets[0].participants.find((p: { id: number }) => p.id === LAKERS);
  assert.equal(lakers.lines[0].prices['19'].price, 150);
  const celtics = ev.markets[0].participants.find((p: { id: number }) => p.id !== LAKERS);
  assert.ok(celtics.lines[0].prices['23'].closed_at, 'a closed upstream price stays closed');
  // The upstream's recorded times come along: a price changed at 09:15 upstream is not recorded at sync time.
  const source = (await upstream.get('/api/v2/events/up-1?market_ids=1')).json().events[0].markets[0];
  const sourceLakers = source.participants.find((p: { id: number }) => p.id === LAKERS).lines[0].prices['19'];
  const sourceCeltics = source.participants.find((p: { id: number }) => p.id !== LAKERS).lines[0].prices[
    '23'
  ];
  assert.equal(sourceLakers.updated_at, '2026-11-22T09:15:00.000Z');
  assert.equal(lakers.lines[0].prices['19'].updated_at, sourceLakers.updated_at);
  assert.equal(celtics.lines[0].prices['23'].closed_at, sourceCeltics.closed_at);
  const again = await mirror.ops('POST', '/_ops/upstream/sync');
  assert.equal(again.json().changes, 0, 'a second sync of the same data changes nothing');
  await upstream.ingest([nbaEvent('up-1', '2026-11-23T00:30:00Z', { mlAway: 175, mlHome: -200 })]);
  assert.ok((await mirror.ops('POST', '/_ops/upstream/sync')).json().changes > 0);
  const moved = (await mirror.get('/api/v2/events/up-1?market_ids=1')).json().events[0];
  assert.equal(
    moved.markets[0].participants.find((p: { id: number }) => p.id === LAKERS).lines[0].prices['19'].price,
    175,
  );
});

test('without an upstream the route is a 404; a bad key upstream is a 502; config is validated', async () => {
  assertError(await bare.ops('POST', '/_ops/upstream/sync'), 404, 'not_found');
  assert.throws(() => readOddsConfig({ ODDS_UPSTREAM_URL: 'http://x' }), /ODDS_UPSTREAM_KEY/);
  assert.throws(() => readOddsConfig({ ODDS_UPSTREAM_URL: 'ftp://x', ODDS_UPSTREAM_KEY: 'k' }), /http/);
  assert.throws(
    () => readOddsConfig({ ODDS_UPSTREAM_URL: 'not a url', ODDS_UPSTREAM_KEY: 'k' }),
    /ODDS_UPSTREAM_URL/,
  );
  assert.throws(() => readOddsConfig({ ODDS_SIMULATOR: 'maybe' }), /ODDS_SIMULATOR/);
  assert.throws(() => readOddsConfig({ ODDS_SIM_INTERVAL_SECONDS: '2.5' }), /ODDS_SIM_INTERVAL_SECONDS/);
  assert.throws(() => readOddsConfig({ ODDS_SIM_INTERVAL_SECONDS: '3601' }), /ODDS_SIM_INTERVAL_SECONDS/);
  assert.equal(readOddsConfig({ ODDS_SIM_INTERVAL_SECONDS: '3600' }).intervalSeconds, 3600);
  assert.deepEqual(readOddsConfig({}).simSports, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
  assert.deepEqual(readOddsConfig({ ODDS_SIM_SPORTS: '4, 6,4' }).simSports, [4, 6]);
  for (const bad of ['0', '17', '4,x', '4,,6', '1e1'])
    assert.throws(() => readOddsConfig({ ODDS_SIM_SPORTS: bad }), /ODDS_SIM_SPORTS/, bad);
  assert.equal(readOddsConfig({ ODDS_WS_HEARTBEAT_SECONDS: '0.05' }).heartbeatSeconds, 0.05);
  const wrongKey = await startOdds(new Date('2026-11-22T12:00:00Z'), {
    ODDS_UPSTREAM_URL: baseUrlOf(upstream.platform.app('odds')),
    ODDS_UPSTREAM_KEY: `odds_${'B'.repeat(43)}`,
  });
  try {
    assertError(await wrongKey.ops('POST', '/_ops/upstream/sync'), 502, 'upstream_failed', /HTTP 401/);
  } finally {
    await wrongKey.close();
  }
});
