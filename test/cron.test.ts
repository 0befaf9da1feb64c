/**
 * The recurring jobs of every service (docs/architecture.md, "Jobs"): each service's schedule is what its README
 * promises, every scheduled task exists, and a started worker registers every schedule with Graphile Worker
 * (`known_crontabs`), so dropping a `cron:` line, misspelling a task or changing a pattern fails here rather than
 * silently never running.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { implementedServices } from '../src/services/index.ts';
import { startTestPlatform, type TestPlatform } from './support/platform.ts';
import { waitUntil } from './support/wait.ts';

/** identifier -> crontab pattern (UTC), as documented in each service README. */
const EXPECTED_SCHEDULE: Record<string, string> = {
  'platform:prune-idempotency': '17 * * * *',
  'media-buying:prune-sign-in-throttle': '43 * * * *',
  'media-buying:simulate-delivery': '7 * * * *',
  'media-buying:prune-discovery-and-enrolments': '47 * * * *',
  'media-buying:text-retention': '7 * * * *',
  'media-buying:text-send-sweep': '* * * * *',
  'payments:expire-intents': '* * * * *',
  'deposits:expire-due': '* * * * *',
  'coins:mirror-upstream': '*/15 * * * *',
  'agent-gateway:sweep': '* * * * *',
  'agent-gateway:invocation-sweep': '* * * * *',
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
        const identifier = c.identifier === undefined ? c.task.name : `${name}:${c.identifier}`;
        declared[identifier] = c.pattern;
        assert.ok(c.task.name.startsWith(`${name}:`), `task ${c.task.name} is in the ${name} namespace`);
        assert.ok(platform.booted.tasks[c.task.name], `task ${c.task.name} is registered`);
      }
    }
    assert.deepEqual(declared, EXPECTED_SCHEDULE);
    assert.ok(platform.booted.tasks['platform:prune-idempotency']);
  });

  test('the running worker registers every schedule in known_crontabs', async () => {
    const pool = platform.booted.database.pool;
    const expected = Object.keys(EXPECTED_SCHEDULE).sort();
    // Registration happens as the worker's cron starts, just after bootServices returns.
    const known = await waitUntil('every schedule in known_crontabs', async () => {
      const { rows } = await pool.query<{ identifier: string }>(
        'select identifier from graphile_worker._private_known_crontabs order by identifier',
      );
      const ids = rows.map((r) => r.identifier);
      return expected.every((id) => ids.includes(id)) && ids;
    });
    assert.deepEqual(known, expected);
  });
});
