/**
 * `npm run bench -- odds`: the default events query at 50 connections on two days, against a bare Fastify route
 * serving the same bytes in the same run (the ratio):
 * - an NBA day: 15 events x 3 markets (moneyline, spread, total, with alternates) x 11 sportsbooks;
 *   target >= 1,500 req/s;
 * - a heavy soccer day: 300 events x 12 markets x 8 sportsbooks (the default query answers markets 1,2,3,563);
 *   target p99 < 100 ms.
 * Each in identity, gzip and br (what a client sending Accept-Encoding gets). Prices come from the feed simulator's
 * model; the answers are computed once per change-feed generation and then served from the cache (the cold
 * computation time, or the compression time for a coding of an answer already computed, is printed too).
 * Every case runs twice: with autocannon (as the other benchmarks), then with a client that does not decode bodies
 * (autocannon turns each body into a string, which for compressed bytes is slower than the server).
 */
import { Worker } from 'node:worker_threads';
import { sql } from 'drizzle-orm';
import { ManualClock } from '../src/platform/clock.ts';
import type { ScheduledGame } from '../src/services/odds/game-model.ts';
import { oddsService } from '../src/services/odds/index.ts';
import { type EventUpdate, writeEvents } from '../src/services/odds/odds-writer.ts';
import { TEAMS } from '../src/services/odds/reference-data.ts';
import { eventStateAt } from '../src/services/odds/simulator.ts';
import { startTestPlatform } from '../test/support/platform.ts';
import { bareServer, type LoadResult, load, report } from './lib.ts';

const DAY = '2026-11-23';
const NOW = new Date('2026-11-23T09:00:00Z');

/** Boots the odds service alone (simulator off) and loads the NBA and heavy soccer days; returns an enterprise key. */
export async function setupOddsDays() {
  const platform = await startTestPlatform({
    services: [oddsService],
    clock: new ManualClock(NOW),
    env: { ODDS_SIMULATOR: 'off' },
    listen: true,
  });
  try {
    const app = platform.app('odds');
    const db = platform.booted.database.db;
    const seed = 'bench';

    // NBA day: the 30 real teams in 15 games, evening start times; markets 1, 2, 3 only.
    const nba = TEAMS.filter((t) => t.sportId === 4);
    const nbaGames: ScheduledGame[] = Array.from({ length: 15 }, (_, i) => ({
      sportId: 4,
      start: new Date(Date.parse(`${DAY}T17:00:00Z`) + (i % 6) * 30 * 60_000),
      away: nba[2 * i]!,
      home: nba[2 * i + 1]!,
      gameNumber: null,
      gameType: null,
      index: i,
    }));
    const nbaUpdates: EventUpdate[] = nbaGames.map((g) => {
      const state = eventStateAt(seed, g, NOW);
      return { ...state, markets: state.markets.filter((m) => [1, 2, 3].includes(m.marketId)) };
    });
    await db.transaction((tx) => writeEvents(tx, nbaUpdates, NOW));

    // Heavy soccer day: 300 events between 600 clubs (synthetic names), 12 markets each.
    await db.execute(sql`
      insert into odds.teams (id, sport_id, name, mascot, abbreviation)
      select 50000 + n, 11, 'Bench Club ' || n, '', 'B' || n from generate_series(1, 600) n
      on conflict do nothing`);
    const club = (n: number) => ({
      id: 50000 + n,
      sportId: 11,
      name: `Bench Club ${n}`,
      mascot: '',
      abbreviation: `B${n}`,
      venueName: `Ground ${n}`,
      venueLocation: 'Benchtown',
      conference: '',
      division: '',
    });
    const soccer: EventUpdate[] = Array.from({ length: 300 }, (_, i) =>
      eventStateAt(
        seed,
        {
          sportId: 11,
          start: new Date(Date.parse(`${DAY}T11:00:00Z`) + (i % 20) * 15 * 60_000),
          away: club(2 * i + 1),
          home: club(2 * i + 2),
          gameNumber: null,
          gameType: null,
          index: i,
        },
        NOW,
      ),
    );
    for (let i = 0; i < soccer.length; i += 50)
      await db.transaction((tx) => writeEvents(tx, soccer.slice(i, i + 50), NOW));
    // Let the commit notifications arrive so the cache generation is settled before measuring.
    await new Promise((r) => setTimeout(r, 500));

    const issued = await app.inject({
      method: 'POST',
      url: '/_ops/keys',
      headers: { authorization: platform.operatorAuth },
      payload: { plan: 'enterprise', label: 'bench', rateLimitPerMinute: 1_000_000 },
    });
    const key = (issued.json() as { key: string }).key;
    return { platform, app, key };
  } catch (err) {
    await platform.close();
    throw err;
  }
}

export async function benchOdds(durationSeconds: number): Promise<void> {
  const { platform, app, key } = await setupOddsDays();
  try {
    const addr = app.server.address();
    if (!addr || typeof addr !== 'object') throw new Error('not listening');
    const base = `http://127.0.0.1:${addr.port}`;
    const headers = { 'x-odds-key': key };

    const soccerAll = `/api/v2/sports/11/events/${DAY}?market_ids=1,2,3,563,94,570,571,572,573,574,577,578`;
    const cases = [
      { label: 'NBA day, default query', path: `/api/v2/sports/4/events/${DAY}`, encoding: 'identity' },
      { label: 'NBA day, default query, gzip', path: `/api/v2/sports/4/events/${DAY}`, encoding: 'gzip' },
      { label: 'NBA day, default query, br', path: `/api/v2/sports/4/events/${DAY}`, encoding: 'br' },
      { label: 'soccer day, default query', path: `/api/v2/sports/11/events/${DAY}`, encoding: 'identity' },
      { label: 'soccer day, default query, gzip', path: `/api/v2/sports/11/events/${DAY}`, encoding: 'gzip' },
      { label: 'soccer day, default query, br', path: `/api/v2/sports/11/events/${DAY}`, encoding: 'br' },
      { label: 'soccer day, all 12 markets, br', path: soccerAll, encoding: 'br' },
    ];
    const captured = [];
    for (const c of cases) {
      const t0 = performance.now();
      const res = await app.inject({
        method: 'GET',
        url: c.path,
        headers: { ...headers, 'accept-encoding': c.encoding },
      });
      const coldMs = performance.now() - t0;
      if (res.statusCode !== 200)
        throw new Error(`${c.label}: HTTP ${res.statusCode} ${res.body.slice(0, 200)}`);
      const identity = await app.inject({ method: 'GET', url: c.path, headers });
      const events = (identity.json() as { events: { markets: unknown[] }[] }).events;
      console.log(
        `# ${c.label}: ${events.length} events, ${events.reduce((n, e) => n + e.markets.length, 0)} markets, ` +
          `${res.rawPayload.length} bytes on the wire, first answer in ${coldMs.toFixed(0)} ms`,
      );
      const h: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
      if (c.encoding !== 'identity') h['content-encoding'] = c.encoding;
      if (res.headers['content-encoding'] !== (c.encoding === 'identity' ? undefined : c.encoding))
        throw new Error(`${c.label}: answered in ${res.headers['content-encoding'] ?? 'identity'}`);
      captured.push({ ...c, body: res.rawPayload, headers: h, route: `/case${captured.length}` });
    }
    const bare = await bareServer(captured.map((c) => ({ path: c.route, body: c.body, headers: c.headers })));
    try {
      console.log(
        `# 50 connections, ${durationSeconds} s per run; baseline = bare Fastify route, same bytes`,
      );
      for (const c of captured) {
        const baseline = await load(`baseline: ${c.label}`, `${bare.url}${c.route}`, { durationSeconds });
        report(baseline);
        const result = await load(`odds: ${c.label}`, `${base}${c.path}`, {
          durationSeconds,
          headers: { ...headers, 'accept-encoding': c.encoding },
        });
        report(result, baseline);
      }
      // autocannon appends every body chunk to a string (`req.body += data`): UTF-8 decoding of compressed (binary)
      // bytes runs at ~55 MB/s on this machine against ~900 MB/s for ASCII JSON, so its compressed rows measure the
      // load generator. The same cases again with a client that keeps the bytes as they come (node:http, llhttp).
      console.log('# the same cases with a byte-level client (node:http in a worker, bodies not decoded)');
      for (const c of captured) {
        const baseline = await rawLoad(`baseline: ${c.label}`, `${bare.url}${c.route}`, {}, durationSeconds);
        report(baseline);
        const result = await rawLoad(
          `odds: ${c.label}`,
          `${base}${c.path}`,
          { ...headers, 'accept-encoding': c.encoding },
          durationSeconds,
        );
        report(result, baseline);
      }
    } finally {
      await bare.close();
    }
  } finally {
    await platform.close();
  }
}

/** The load loop of {@link rawLoad}, run in a worker thread (CommonJS, eval). */
const RAW_LOAD_WORKER = `
const http = require('node:http');
const { parentPort, workerData } = require('node:worker_threads');
const { url, headers, connections, durationMs } = workerData;
const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
const latencies = [];
let bytes = 0, errors = 0, non2xx = 0;
const deadline = Date.now() + durationMs;
function one() {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const req = http.get(url, { agent, headers }, (res) => {
      res.on('data', (chunk) => { bytes += chunk.length; });
      res.on('end', () => {
        if (res.statusCode < 200 || res.statusCode > 299) non2xx += 1;
        latencies.push(performance.now() - t0);
        resolve();
      });
      res.on('error', () => { errors += 1; resolve(); });
    });
    req.on('error', () => { errors += 1; resolve(); });
  });
}
async function loop() { while (Date.now() < deadline) await one(); }
Promise.all(Array.from({ length: connections }, loop)).then(() => {
  agent.destroy();
  parentPort.postMessage({ latencies, bytes, errors, non2xx });
});
`;

/**
 * A load run with a client that does not decode bodies: `connections` keep-alive loops of node:http GETs in a worker
 * thread (so it does not share the server's event loop) for `durationSeconds`; the same figures as `load`.
 */
async function rawLoad(
  label: string,
  url: string,
  headers: Record<string, string>,
  durationSeconds: number,
  connections = 50,
): Promise<LoadResult> {
  const worker = new Worker(RAW_LOAD_WORKER, {
    eval: true,
    workerData: { url, headers, connections, durationMs: durationSeconds * 1000 },
  });
  const out = await new Promise<{ latencies: number[]; bytes: number; errors: number; non2xx: number }>(
    (resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    },
  );
  await worker.terminate();
  const sorted = out.latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0);
  return {
    label,
    requestsPerSecond: sorted.length / durationSeconds,
    p50: at(0.5),
    p99: at(0.99),
    errors: out.errors,
    non2xx: out.non2xx,
    bytesPerSecond: out.bytes / durationSeconds,
  };
}
