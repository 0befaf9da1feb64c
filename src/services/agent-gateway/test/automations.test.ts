import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../../platform/clock.ts';
import { type GatewayHarness, startGateway } from './support.ts';

/** Automations: cron schedules fired by the injected clock, event triggers, versions. */
describe('agent-gateway automations', () => {
  const clock = new ManualClock(new Date('2026-11-24T12:00:30Z'));
  let h: GatewayHarness;
  let token: string;
  let greeter: string;
  const api = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) =>
    h.api(token, method, url, payload);
  const runsOf = async (automationId: string) =>
    (await api('GET', '/api/v1/orchestration-runs?limit=100'))
      .json()
      .runs.filter((r: { automationId: string }) => r.automationId === automationId);

  before(async () => {
    h = await startGateway({ clock });
    token = h.demoToken;
    greeter = (await api('GET', '/api/v1/agents'))
      .json()
      .agents.find((a: { name: string }) => a.name === 'Greeter').id;
  });
  after(() => h?.close());

  test('a cron schedule fires once per due time by the clock, and computes the next time', async () => {
    const created = await api('POST', '/api/v1/automations', {
      name: 'Every 5 minutes',
      trigger: { type: 'schedule', cron: '*/5 * * * *' },
      target: { type: 'agent', id: greeter },
      input: { message: 'tick' },
    });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().automation.id;
    assert.equal(created.json().automation.nextFireAt, '2026-11-24T12:05:00.000Z');
    await h.ops('POST', '/_ops/runtime/tick');
    assert.equal((await runsOf(id)).length, 0, 'not due yet');
    clock.set(new Date('2026-11-24T12:05:00Z'));
    const tick = await h.ops('POST', '/_ops/runtime/tick');
    assert.equal(tick.json().firedAutomations, 1, tick.body);
    const again = await h.ops('POST', '/_ops/runtime/tick');
    assert.equal(again.json().firedAutomations, 0, 'fired once for that time');
    const fired = await runsOf(id);
    assert.equal(fired.length, 1);
    assert.deepEqual(fired[0].input, {
      message: 'tick',
      schedule: { scheduledAt: '2026-11-24T12:05:00.000Z' },
    });
    const automation = (await api('GET', `/api/v1/automations/${id}`)).json().automation;
    assert.equal(automation.nextFireAt, '2026-11-24T12:10:00.000Z');
    assert.equal(automation.fireCount, 1);
    // Down for an hour: one run, not twelve.
    clock.set(new Date('2026-11-24T13:07:00Z'));
    await h.ops('POST', '/_ops/runtime/tick');
    assert.equal((await runsOf(id)).length, 2);
    // Disabling needs the version; a disabled automation never fires.
    const stale = await api('PATCH', `/api/v1/automations/${id}`, { expectedVersion: 5, enabled: false });
    assert.equal(stale.statusCode, 409);
    assert.equal(stale.json().details.currentVersion, 1);
    const disabled = await api('PATCH', `/api/v1/automations/${id}`, { expectedVersion: 1, enabled: false });
    assert.equal(disabled.json().automation.nextFireAt, null);
    clock.advance(3600_000);
    await h.ops('POST', '/_ops/runtime/tick');
    assert.equal((await runsOf(id)).length, 2);
  });

  test('schedules with a time zone; bad cron expressions and zones are 400', async () => {
    const paris = await api('POST', '/api/v1/automations', {
      name: 'Paris 9am',
      trigger: { type: 'schedule', cron: '0 9 * * *', timezone: 'Europe/Paris' },
      target: { type: 'agent', id: greeter },
    });
    assert.equal(paris.statusCode, 201, paris.body);
    assert.match(
      paris.json().automation.nextFireAt,
      /T08:00:00.000Z$/,
      '09:00 in Paris is 08:00 UTC in November',
    );
    for (const trigger of [
      { type: 'schedule', cron: 'every day' },
      { type: 'schedule', cron: '0 0 0 * * *' },
      { type: 'schedule', cron: '61 * * * *' },
      { type: 'schedule', cron: '0 9 * * *', timezone: 'Mars/Olympus' },
    ]) {
      const res = await api('POST', '/api/v1/automations', {
        name: 'bad',
        trigger,
        target: { type: 'agent', id: greeter },
      });
      assert.equal(res.statusCode, 400, `${JSON.stringify(trigger)}: ${res.body}`);
      assert.equal(res.json().code, 'invalid_cron');
    }
  });

  test('event triggers: an issue event and a component’s custom event start runs; filters select', async () => {
    const onIssue = (
      await api('POST', '/api/v1/automations', {
        name: 'On new issue',
        trigger: { type: 'event', event: 'issue.created' },
        target: { type: 'agent', id: greeter },
      })
    ).json().automation;
    const onDeploy = (
      await api('POST', '/api/v1/automations', {
        name: 'On prod deploy',
        trigger: {
          type: 'event',
          event: 'custom.deploy',
          filter: { path: 'event.data.env', op: 'eq', value: 'prod' },
        },
        target: { type: 'agent', id: greeter },
      })
    ).json().automation;
    await api('POST', '/api/v1/issues', { title: 'New thing' });
    const issueRuns = await runsOf(onIssue.id);
    assert.equal(issueRuns.length, 1);
    assert.equal(issueRuns[0].input.event.type, 'issue.created');

    const internal = h.platform.credentials('agent-gateway').internalToken as string;
    const post = (data: unknown) =>
      h.platform.app('agent-gateway').inject({
        method: 'POST',
        url: '/api/internal/v1/events',
        headers: { authorization: `Bearer ${internal}` },
        payload: { tenant: 'demo', namespace: 'default', type: 'custom.deploy', data },
      });
    const staging = await post({ env: 'staging' });
    assert.equal(staging.statusCode, 202, staging.body);
    assert.deepEqual(staging.json().fired, []);
    const prod = await post({ env: 'prod' });
    assert.deepEqual(
      prod.json().fired.map((f: { automationId: string }) => f.automationId),
      [onDeploy.id],
    );
    const unknownScope = await h.platform.app('agent-gateway').inject({
      method: 'POST',
      url: '/api/internal/v1/events',
      headers: { authorization: `Bearer ${internal}` },
      payload: { tenant: 'nope', namespace: 'default', type: 'custom.deploy' },
    });
    assert.equal(unknownScope.statusCode, 404);
  });
  test('PATCH of a schedule recomputes nextFireAt; enabling again starts from now; two instances fire a due time once', async () => {
    clock.set(new Date('2026-11-24T15:00:30Z'));
    const created = await api('POST', '/api/v1/automations', {
      name: 'Hourly',
      trigger: { type: 'schedule', cron: '0 * * * *' },
      target: { type: 'agent', id: greeter },
    });
    const id = created.json().automation.id;
    assert.equal(created.json().automation.nextFireAt, '2026-11-24T16:00:00.000Z');
    const moved = await api('PATCH', `/api/v1/automations/${id}`, {
      expectedVersion: 1,
      trigger: { type: 'schedule', cron: '30 15 * * *' },
    });
    assert.equal(moved.statusCode, 200, moved.body);
    assert.equal(
      moved.json().automation.nextFireAt,
      '2026-11-24T15:30:00.000Z',
      'recomputed from the new cron',
    );
    const zoned = await api('PATCH', `/api/v1/automations/${id}`, {
      expectedVersion: 2,
      trigger: { type: 'schedule', cron: '30 15 * * *', timezone: 'Europe/Paris' },
    });
    assert.equal(
      zoned.json().automation.nextFireAt,
      '2026-11-25T14:30:00.000Z',
      '15:30 in Paris is 14:30 UTC',
    );
    const off = await api('PATCH', `/api/v1/automations/${id}`, { expectedVersion: 3, enabled: false });
    assert.equal(off.json().automation.nextFireAt, null);
    // Disabled across its due time: nothing fires, and enabling again does not fire the missed time.
    clock.set(new Date('2026-11-25T14:31:00Z'));
    await h.ops('POST', '/_ops/runtime/tick');
    assert.equal((await runsOf(id)).length, 0);
    const on = await api('PATCH', `/api/v1/automations/${id}`, { expectedVersion: 4, enabled: true });
    assert.equal(on.json().automation.nextFireAt, '2026-11-26T14:30:00.000Z');
    await h.ops('POST', '/_ops/runtime/tick');
    assert.equal((await runsOf(id)).length, 0);

    // Two instances sweep at the same due time: one run.
    const b = (await h.platform.anotherInstance()).app('agent-gateway');
    clock.set(new Date('2026-11-26T14:30:00Z'));
    const tick = (app: typeof b) =>
      app.inject({
        method: 'POST',
        url: '/_ops/runtime/tick',
        headers: { authorization: h.platform.operatorAuth },
      });
    const answers = await Promise.all([tick(h.platform.app('agent-gateway')), tick(b), tick(b)]);
    for (const res of answers) assert.equal(res.statusCode, 200, res.body);
    assert.equal((await runsOf(id)).length, 1, 'one run of this automation for the due time');
    assert.equal((await api('GET', `/api/v1/automations/${id}`)).json().automation.fireCount, 1);
  });
});
