/**
 * The recurring jobs of every service (DESIGN.md "Jobs"): each service's schedule is what its README promises, every
 * scheduled task exists, and a started worker registers every schedule with Graphile Worker (`known_crontabs`), so
 * dropping a `cron:` line, misspelling a task or changing a pattern fails here rather than silently never running.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestPlatform, type TestPlatform } from '../src/platform/testing.ts';
import { implementedServices } from '../src/services/index.ts';

/** identifier -> crontab pattern (UTC), as documented in each service README. */
const EXPECTED_SCHEDULE: Record<string, string> = {
  'platform:prune-idempotency': '17 * * * *',
  'payments:expire-intents': '* * * * *',
  'deposits:expire-due': '* * * * *',
  'coins:mirror-upstream': '*/15 * * * *',
  'odds:simulator-tick': '* * * * *',
  'entity-events:sweep-due': '* * * * *',
};

describe('cron: every service schedule is registered with the worker', () => {
  let platform: TestPlatform;

  before(async () => {
    platform = await startTestPlatform({
      services: [...implementedServices],
      // The coin mirror is scheduled only when an upstream is configured (nothing is fetched before its first tick).
      env: { COINS_UPSTREAM_URL: 'http://127.0.0.1:9/api/v3' },
      runWorker: true,
    });
  });
  after(async () => {
    await platform?.close();
  });

  test('each service declares exactly the documented schedule, and every scheduled task exists', () => {
    const declared: Record<string, string> = { 'platform:prune-idempotency': '17 * * * *' };
    for (const [name, service] of platform.booted.services) {
      for (const c of service.module.cron ?? []) {
        const identifier = `${name}:${c.identifier ?? c.task}`;
        declared[identifier] = c.pattern;
        assert.ok(platform.booted.tasks[`${name}:${c.task}`], `task ${name}:${c.task} is registered`);
      }
    }
    assert.deepEqual(declared, EXPECTED_SCHEDULE);
    assert.ok(platform.booted.tasks['platform:prune-idempotency']);
  });

  test('the running worker registers every schedule in known_crontabs', async () => {
    const pool = platform.booted.database.pool;
    const expected = Object.keys(EXPECTED_SCHEDULE).sort();
    let known: string[] = [];
    // Registration happens as the worker's cron starts, just after bootServices returns: poll, bounded.
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const { rows } = await pool.query<{ identifier: string }>(
        'select identifier from graphile_worker._private_known_crontabs order by identifier',
      );
      known = rows.map((r) => r.identifier);
      if (expected.every((id) => known.includes(id))) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual(known, expected);
  });
});
