import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { waitUntil } from '../../../../test/support/wait.ts';
import { type CrashHarness, startCrashHarness } from './crash-harness.ts';

/**
 * An invocation survives a worker crash (issue 21): its run's agent step is held by a worker process that gets
 * SIGKILL (the same real crash as worker-crash.test.ts, through the same harness). The sweep puts the step back, a
 * second worker finishes it, and the invocation ends `completed` with its result, each move recorded once.
 */
let h: CrashHarness;

before(async () => {
  h = await startCrashHarness('ag-invocation-crash-');
});

after(async () => {
  await h?.close();
});

test('a worker killed mid-step: the invocation still completes, each move once', async () => {
  const { app, call } = h;
  const agentId = await h.createFetcher();
  const created = await call('POST', '/api/v1/endpoints', {
    slug: 'fetcher',
    invocationMode: 'job',
    targetType: 'agent',
    targetId: agentId,
  });
  assert.equal(created.statusCode, 201, created.body);
  const endpointId = created.json().endpoint.id as string;
  assert.equal(
    (await call('POST', `/api/v1/endpoints/${endpointId}/publish`, { version: 1 })).statusCode,
    200,
  );
  const key = (await call('POST', `/api/v1/endpoints/${endpointId}/keys`, {})).json().key as string;
  const ack = await app.inject({
    method: 'POST',
    url: '/invoke/v1/endpoints/fetcher/jobs',
    headers: { 'x-api-key': key, 'idempotency-key': 'crash-1' },
    payload: { title: 'fetch', input: {} },
  });
  assert.equal(ack.statusCode, 202, ack.body);
  const statusUrl = ack.json().statusUrl as string;
  const view = async () =>
    (await app.inject({ url: statusUrl, headers: { 'x-api-key': key } })).json().invocation;

  await h.killWorkerMidStep();
  assert.equal((await view()).status, 'running', 'the crash is not the invocation’s end');
  await h.reclaimPastLease();

  await h.startWorker();
  const done = await waitUntil(
    'the invocation completes on the second worker',
    async () => {
      const v = await view();
      return ['completed', 'failed', 'cancelled', 'timed_out'].includes(v.status) && v;
    },
    { timeoutMs: 60_000 },
  );
  assert.equal(done.status, 'completed', JSON.stringify(done.error));
  assert.equal(done.result.text, 'ok after retry');
  assert.deepEqual(
    done.history.map((m: { status: string }) => m.status),
    ['accepted', 'dispatching', 'running', 'completed'],
  );
});
