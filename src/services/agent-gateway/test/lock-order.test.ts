/**
 * Lock order of the event-log lock (`EVENT_LOG_LOCK`, run-events.ts) against an invocation's row lock (review):
 * a run's end whose automation starts another run inside the flush (a nested flush) and a cancel or timeout of the
 * run's invocation, forced to overlap. The event-log lock must be the last lock a transaction takes: taken by the
 * nested start's flush in the middle of the outer one, before the outer one's invocation observer locked the
 * invocation row, it closed a cycle with a cancel or timeout (invocation row, then event-log lock), and PostgreSQL
 * aborted one of them ("deadlock detected", 40P01): a 500 here.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { ManualClock } from '../../../platform/clock.ts';
import { type GatewayHarness, startGateway } from './support.ts';

const clock = new ManualClock(new Date('2026-11-24T12:00:00Z'));
let h: GatewayHarness;
let admin: string;
const scope = { 'x-platform-tenant': 'demo', 'x-platform-namespace': 'default' };
const api = (method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown) =>
  h.api(admin, method, url, body, scope);

before(async () => {
  h = await startGateway({ clock });
  admin = (await h.user('admin', { tenant: 'demo', namespace: 'default' })).token;
});
after(() => h?.close());

test('a run end whose automation starts a run and a cancel or timeout of its invocation, overlapping, never deadlock', {
  timeout: 60_000,
}, async () => {
  // An automation that starts a run when a workflow run completes (inside the flush of the run's end).
  const agent = await api('POST', '/api/v1/agents', {
    name: 'Echo',
    definition: { kind: 'json_transform', output: { ok: true } },
  });
  assert.equal(agent.statusCode, 201, agent.body);
  const automation = await api('POST', '/api/v1/automations', {
    name: 'After each workflow',
    trigger: {
      type: 'event',
      event: 'run.completed',
      filter: { path: 'event.data.target.type', op: 'eq', value: 'orchestration' },
    },
    target: { type: 'agent', id: agent.json().agent.id },
  });
  assert.equal(automation.statusCode, 201, automation.body);
  // A workflow waiting for a signal, published on a job endpoint.
  const definition = await api('POST', '/api/v1/orchestration-definitions', {
    name: 'Wait for go',
    graph: {
      nodes: [
        { id: 'start', type: 'start' },
        { id: 'wait', type: 'signal', signal: 'go' },
        { id: 'end', type: 'end' },
      ],
      edges: [
        { from: 'start', to: 'wait' },
        { from: 'wait', to: 'end' },
      ],
    },
  });
  assert.equal(definition.statusCode, 201, definition.body);
  const workflow = definition.json().definition;
  const published = await api('POST', `/api/v1/orchestration-definitions/${workflow.id}/publish`, {
    expectedVersion: workflow.version,
  });
  assert.equal(published.statusCode, 200, published.body);
  const created = await api('POST', '/api/v1/endpoints', {
    slug: 'lock-order',
    invocationMode: 'job',
    targetType: 'orchestration_revision',
    targetId: workflow.id,
    timeoutSeconds: 60,
  });
  assert.equal(created.statusCode, 201, created.body);
  const endpoint = created.json().endpoint;
  const live = await api('POST', `/api/v1/endpoints/${endpoint.id}/publish`, { version: endpoint.version });
  assert.equal(live.statusCode, 200, live.body);
  const key = (await api('POST', `/api/v1/endpoints/${endpoint.id}/keys`, {})).json().key as string;
  const cred = { 'x-api-key': key };
  const app = h.platform.app('agent-gateway');
  const view = async (url: string) => (await app.inject({ url, headers: cred })).json().invocation;

  const blocker = new pg.Client({ connectionString: h.platform.database.url });
  const watcher = new pg.Client({ connectionString: h.platform.database.url });
  await blocker.connect();
  await watcher.connect();
  /** Waits (bounded) until `n` sessions of this database wait for a lock. */
  const waiters = async (n: number, what: string) => {
    for (let i = 0; i < 500; i++) {
      const { rows } = await watcher.query(
        `select count(*)::int as n from pg_locks l join pg_stat_activity a on a.pid = l.pid
          where not l.granted and a.datname = current_database()`,
      );
      if (rows[0].n >= n) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.fail(`${what} did not wait for a lock`);
  };
  try {
    for (const [i, stop] of (['cancel', 'timeout', 'cancel', 'timeout'] as const).entries()) {
      const ack = await app.inject({
        method: 'POST',
        url: '/invoke/v1/endpoints/lock-order/jobs',
        headers: { ...cred, 'idempotency-key': `lock-order-${i}` },
        payload: { title: `round ${i}`, input: {} },
      });
      assert.equal(ack.statusCode, 202, ack.body);
      const statusUrl = ack.json().statusUrl as string;
      await h.drive(async () => (await view(statusUrl)).status === 'waiting');
      const { runId, id } = await view(statusUrl);
      // The event-log lock is held here, so each path stops at its first attempt to take it, in a known order.
      await blocker.query('begin');
      await blocker.query(`select pg_advisory_xact_lock(hashtext('agent_gateway:event_logs'))`);
      // First the run's end (the signal completes the workflow; the automation starts its run in the same flush),
      const end = api('POST', `/api/v1/orchestration-runs/${runId}/signals`, { name: 'go' });
      await waiters(1, 'the run end');
      // then the invocation's cancel, or its timeout at the deadline on the injected clock.
      if (stop === 'timeout') clock.advance(61_000);
      const halt =
        stop === 'cancel'
          ? app.inject({ method: 'POST', url: `/invoke/v1/invocations/${id}/cancel`, headers: cred })
          : h.ops('POST', '/_ops/invocations/tick');
      await waiters(2, `the ${stop}`);
      await blocker.query('commit');
      const [ended, halted] = await Promise.all([end, halt]);
      assert.equal(ended.statusCode, 202, `round ${i}, the run end: ${ended.body}`);
      assert.ok(halted.statusCode < 500, `round ${i}, the ${stop}: ${halted.statusCode} ${halted.body}`);
      const settled = await view(statusUrl);
      assert.ok(
        ['completed', 'cancelled', 'timed_out'].includes(settled.status),
        `round ${i}: ${settled.status}`,
      );
    }
    const runs = (await api('GET', '/api/v1/orchestration-runs?limit=100')).json().runs as {
      automationId: string | null;
    }[];
    assert.equal(
      runs.filter((r) => r.automationId === automation.json().automation.id).length,
      4,
      'each run end started the automation once',
    );
  } finally {
    await blocker.query('rollback').catch(() => undefined);
    await blocker.end();
    await watcher.end();
  }
});
