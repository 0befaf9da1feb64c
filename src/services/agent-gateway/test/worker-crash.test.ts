import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { TEST_OPERATOR_TOKEN } from '../../../../test/support/platform.ts';
import { waitUntil } from '../../../../test/support/wait.ts';
import { type CrashHarness, startCrashHarness } from './crash-harness.ts';

/**
 * A real crash (the harness: a child `--role worker` process): the worker gets SIGKILL while an agent step waits on a
 * slow tool call (`fetch_url` to a local server that holds its answer). Its claim stays `running`; the sweep (by the
 * API's clock, moved past the step lease) puts it back, a second worker runs it again (attempt 2), and the run
 * completes with the step applied once: one `step.completed`, one output.
 */
let h: CrashHarness;

before(async () => {
  h = await startCrashHarness('ag-crash-');
});

after(async () => {
  await h?.close();
});

test('a worker killed with SIGKILL mid-step: the step is retried by another worker, applied once, the run completes', async () => {
  const { app, call, clock, arrivals } = h;
  const agentId = await h.createFetcher();
  const started = await call('POST', '/api/v1/orchestration-runs', {
    target: { type: 'agent', id: agentId },
  });
  const runId = started.json().run.id as string;
  const pool = h.api.database.pool;

  await h.killWorkerMidStep();
  const [held] = (
    await pool.query(
      `select id, status, attempt from agent_gateway.run_steps where run_id = $1 and node_type = 'agent'`,
      [runId],
    )
  ).rows;
  assert.deepEqual([held.status, held.attempt], ['running', 1], 'the dead worker left its claim');

  // Within the lease the claim is respected; past it, the sweep queues the step again.
  clock.set(Date.now());
  const early = await app.inject({
    method: 'POST',
    url: '/_ops/runtime/tick',
    headers: { authorization: `Bearer ${TEST_OPERATOR_TOKEN}` },
  });
  assert.equal(early.json().reclaimedSteps, 0);
  await h.reclaimPastLease();

  await h.startWorker();
  const run = await waitUntil(
    'the run completes on the second worker',
    async () => {
      const r = (await call('GET', `/api/v1/orchestration-runs/${runId}`)).json().run;
      return r.status === 'completed' && r;
    },
    { timeoutMs: 60_000 },
  );
  assert.equal(run.output.text, 'ok after retry');
  const step = (
    await pool.query(`select status, attempt from agent_gateway.run_steps where id = $1`, [held.id])
  ).rows[0];
  assert.deepEqual([step.status, step.attempt], ['completed', 2]);
  const events = (await call('GET', `/api/v1/orchestration-runs/${runId}/events?limit=1000`)).json()
    .events as {
    type: string;
    stepId: string | null;
    data: { attempt?: number };
  }[];
  const ofStep = (type: string) => events.filter((e) => e.type === type && e.stepId === held.id);
  assert.deepEqual(
    ofStep('step.started').map((e) => e.data.attempt),
    [1, 2],
  );
  assert.equal(ofStep('step.reclaimed').length, 1);
  assert.equal(ofStep('step.completed').length, 1, 'applied once');
  assert.equal(events.filter((e) => e.type === 'run.completed').length, 1);
  assert.equal(arrivals.length, 2, 'the tool was called again by the retry, not more');
});
