/**
 * The simulator's first step in a starting worker, which the service waits for before it is ready (and `npm start`
 * before its banner): today's and tomorrow's games; yesterday's, finished by then, come with the next step.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { scheduleFor } from '../schedules.ts';
import { eventsOf, type OddsHarness, startOdds } from './support.ts';

const SEED = 'warm-up';
const NOW = new Date('2026-11-25T20:00:00Z');
let h: OddsHarness;
before(async () => {
  // One sport keeps the step small; the interval is long so that only the steps of the test run.
  h = await startOdds(
    NOW,
    { ODDS_SIMULATOR: 'on', ODDS_SIM_SEED: SEED, ODDS_SIM_SPORTS: '4', ODDS_SIM_INTERVAL_SECONDS: '3600' },
    { runWorker: true },
  );
});
after(async () => h?.close());

const served = async (date: string) =>
  eventsOf(await h.get(`/api/v2/sports/4/events/${date}?affiliate_ids=0`)).events.length;

test("ready: today's and tomorrow's games are there; yesterday's follow with the next step", async () => {
  for (const date of ['2026-11-25', '2026-11-26']) {
    const games = scheduleFor(SEED, 4, date).length;
    assert.ok(games > 0);
    assert.equal(await served(date), games, date);
  }
  assert.equal(await served('2026-11-24'), 0, 'not in the first step');
  const step = await h.ops('POST', '/_ops/simulator/tick');
  assert.equal(step.statusCode, 200, step.body);
  assert.equal(await served('2026-11-24'), scheduleFor(SEED, 4, '2026-11-24').length);
});
