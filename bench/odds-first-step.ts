/**
 * `npm run bench -- odds-first-step`: how long the odds simulator's first step takes on a fresh database, the step a
 * starting worker runs before the service is ready (and `npm start` before its banner). Not a load test: each case
 * boots the service alone (simulator off, so nothing else steps) on a new database and drives a `FeedSimulator` on
 * it with a fixed clock, on busy days of the calendar:
 * - the warm-up step (today and tomorrow, every sport), then the next step (adds yesterday), then a step a minute
 *   later (the steady state: a few moves);
 * - a first step of all three days at once, every sport (what a warm-up would cost without its narrower days);
 * - the same with only NFL, MLB, NBA, NHL and EPL, the five sports the simulator had before issue 15 (the old volume).
 * Each line prints milliseconds, events written and change rows appended. The figure to compare between runs is the
 * ratio of the rows, and the times of the same run (the machine's load moves absolute times a lot).
 */
import { ManualClock } from '../src/platform/clock.ts';
import { createLogger } from '../src/platform/logger.ts';
import { createChangeFeed } from '../src/services/odds/change-feed.ts';
import { FeedSimulator, WARM_UP_DAYS } from '../src/services/odds/feed-simulator.ts';
import { oddsService } from '../src/services/odds/index.ts';
import { startTestPlatform } from '../test/support/platform.ts';

const SEED = 'api-suite';
const ALL = Array.from({ length: 16 }, (_, i) => i + 1);
const BEFORE_ISSUE_15 = [2, 3, 4, 6, 11];
/** A Saturday and a Sunday of November, a Saturday of September, a Champions League Wednesday. */
const DATES = [
  '2026-11-21T20:00:00Z',
  '2026-11-22T20:00:00Z',
  '2026-09-19T20:00:00Z',
  '2026-11-25T18:00:00Z',
];

/** Boots a fresh database and returns a simulator of `sports` on it at `now`. */
async function simulatorAt(now: string, sports: number[]) {
  const clock = new ManualClock(new Date(now));
  const platform = await startTestPlatform({
    services: [oddsService],
    clock,
    env: { ODDS_SIMULATOR: 'off' },
  });
  const db = platform.booted.database.db;
  const logger = createLogger('silent');
  const simulator = new FeedSimulator(db, clock, createChangeFeed(db, logger), logger, SEED, sports);
  return { platform, clock, simulator };
}

async function timed(label: string, step: () => Promise<{ events: number; changes: number }>) {
  const t0 = performance.now();
  const r = await step();
  console.log(
    `${label.padEnd(58)} ${String(Math.round(performance.now() - t0)).padStart(6)} ms | ${String(r.events).padStart(4)} events | ${String(r.changes).padStart(7)} changes`,
  );
}

export async function benchOddsFirstStep(): Promise<void> {
  console.log(
    `# seed ${SEED}; load average ${(await import('node:os')).loadavg()[0]!.toFixed(1)} at the start`,
  );
  for (const now of DATES) {
    console.log(`# ${now}`);
    {
      const { platform, clock, simulator } = await simulatorAt(now, ALL);
      try {
        await timed('warm-up step (today, tomorrow; 16 sports)', () => simulator.tick(WARM_UP_DAYS));
        await timed('next step (adds yesterday)', () => simulator.tick());
        clock.advance(60_000);
        await timed('a step a minute later', () => simulator.tick());
      } finally {
        await platform.close();
      }
    }
    for (const [label, sports] of [
      ['first step of all three days (16 sports)', ALL],
      ['first step of all three days (the 5 sports of before)', BEFORE_ISSUE_15],
    ] as const) {
      const { platform, simulator } = await simulatorAt(now, [...sports]);
      try {
        await timed(label, () => simulator.tick());
      } finally {
        await platform.close();
      }
    }
  }
}
