/**
 * `npm run bench -- odds`: the default events query at 50 connections on two days, against a bare Fastify route
 * serving the same bytes in the same run (the ratio):
 * - an NBA day: 15 events x 3 markets (moneyline, spread, total, with alternates) x 11 sportsbooks;
 *   target >= 1,500 req/s;
 * - a heavy soccer day: 300 events x 12 markets x 8 sportsbooks (the default query answers markets 1,2,3,563);
 *   target p99 < 100 ms.
 * Prices come from the feed simulator's model; the answers are computed once per change-feed generation and then
 * served from the cache (the cold computation time is printed too).
 */
import { sql } from 'drizzle-orm';
import { ManualClock } from '../src/platform/clock.ts';
import { startTestPlatform } from '../src/platform/testing.ts';
import { oddsService } from '../src/services/odds/index.ts';
import { type EventUpdate, writeEvents } from '../src/services/odds/odds-writer.ts';
import { TEAMS } from '../src/services/odds/reference-data.ts';
import { eventStateAt, type ScheduledGame } from '../src/services/odds/simulator.ts';
import { bareServer, load, report } from './lib.ts';

const DAY = '2026-11-23';
const NOW = new Date('2026-11-23T09:00:00Z');

export async function benchOdds(durationSeconds: number): Promise<void> {
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
    const addr = app.server.address();
    if (!addr || typeof addr !== 'object') throw new Error('not listening');
    const base = `http://127.0.0.1:${addr.port}`;
    const headers = { 'x-odds-key': key };

    const soccerAll = `/api/v2/sports/11/events/${DAY}?market_ids=1,2,3,563,94,570,571,572,573,574,577,578`;
    const cases = [
      { label: 'NBA day, default query', path: `/api/v2/sports/4/events/${DAY}`, encoding: 'identity' },
      { label: 'NBA day, default query, gzip', path: `/api/v2/sports/4/events/${DAY}`, encoding: 'gzip' },
      { label: 'soccer day, default query', path: `/api/v2/sports/11/events/${DAY}`, encoding: 'identity' },
      { label: 'soccer day, default query, gzip', path: `/api/v2/sports/11/events/${DAY}`, encoding: 'gzip' },
      { label: 'soccer day, all 12 markets, gzip', path: soccerAll, encoding: 'gzip' },
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
      if (c.encoding === 'gzip') h['content-encoding'] = 'gzip';
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
    } finally {
      await bare.close();
    }
  } finally {
    await platform.close();
  }
}
