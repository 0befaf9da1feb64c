import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { type CliProcess, startCli } from '../../../../test/support/cli-process.ts';
import {
  createTestDatabase,
  TEST_OPERATOR_TOKEN,
  type TestDatabase,
} from '../../../../test/support/platform.ts';
import { waitUntil } from '../../../../test/support/wait.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { loadConfig } from '../../../platform/config.ts';
import { createLogger } from '../../../platform/logger.ts';
import { type BootedPlatform, bootServices } from '../../../platform/runtime.ts';
import { agentGatewayService } from '../index.ts';

/**
 * An invocation survives a worker crash (issue 21): its run's agent step is held by a worker process that gets
 * SIGKILL (the same real crash as worker-crash.test.ts: a child `--role worker` process, a slow tool call). The
 * sweep puts the step back, a second worker finishes it, and the invocation ends `completed` with its result, each
 * move recorded once.
 *
 * The crash mechanics (part 1's): the worker is a child process (`node --import tsx src/main.ts --role worker`, as `npm start` runs it)
 * and gets SIGKILL while an agent step waits on a slow tool call (`fetch_url` to a local server that holds its answer).
 * Its claim stays `running`; the sweep (by the API's clock, moved past the step lease) puts it back, a second worker
 * runs it again (attempt 2), and the run completes with the step applied once: one `step.completed`, one output.
 */
let database: TestDatabase;
let dataDir: string;
let api: BootedPlatform;
const clock = new ManualClock(Date.now());
const secretsKey = randomBytes(32);
const workers: CliProcess[] = [];
const arrivals: http.ServerResponse[] = [];
let slow: http.Server;
let slowUrl: string;

before(async () => {
  database = await createTestDatabase();
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ag-invocation-crash-'));
  // The first request is held (the worker dies meanwhile); later ones are answered at once.
  slow = http.createServer((_req, res) => {
    arrivals.push(res);
    if (arrivals.length > 1) res.end('ok after retry');
  });
  await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
  slowUrl = `http://127.0.0.1:${(slow.address() as { port: number }).port}/slow`;
  const s = agentGatewayService;
  const env = { DATA_DIR: dataDir, OUTBOUND_ALLOW_PRIVATE: 'true' };
  api = await bootServices({
    config: loadConfig(env, {}, [{ name: s.name, envPrefix: s.envPrefix, defaultPort: s.defaultPort }]),
    services: [s],
    databaseUrl: database.url,
    operatorToken: TEST_OPERATOR_TOKEN,
    secretsKey,
    logger: createLogger('silent'),
    clock,
    serveHttp: true,
    listen: false,
    runWorker: false,
  });
});

after(async () => {
  for (const w of workers)
    if (w.child.exitCode === null && w.child.signalCode === null) {
      w.child.kill('SIGKILL');
      await w.exited(10_000).catch(() => undefined);
    }
  for (const res of arrivals) res.destroy();
  await new Promise((resolve) => slow?.close(resolve));
  await api?.stop();
  await database?.drop();
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
});

function startWorker(): Promise<CliProcess> {
  const cli = startCli(['--role', 'worker'], {
    DATABASE_URL: database.url,
    SERVICES: 'agent-gateway',
    DATA_DIR: dataDir,
    OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
    SECRETS_KEY: secretsKey.toString('hex'),
    OUTBOUND_ALLOW_PRIVATE: 'true',
    WORKER_CONCURRENCY: '2',
    LOG_LEVEL: 'warn',
  });
  workers.push(cli);
  return cli.waitFor('Press Ctrl-C', 90_000).then(() => cli);
}

test('a worker killed mid-step: the invocation still completes, each move once', async () => {
  const app = api.services.get('agent-gateway')!.app!;
  const token = api.services.get('agent-gateway')!.credentials!.userToken as string;
  const call = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
    app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${token}` },
      ...(payload ? { payload: payload as object } : {}),
    });
  const agent = await call('POST', '/api/v1/agents', {
    name: 'Fetcher',
    definition: {
      kind: 'tool_use',
      tools: ['fetch_url'],
      calls: [{ tool: 'fetch_url', args: { url: slowUrl } }],
      answer: '{{ results.fetch_url.body }}',
    },
  });
  assert.equal(agent.statusCode, 201, agent.body);
  const created = await call('POST', '/api/v1/endpoints', {
    slug: 'fetcher',
    invocationMode: 'job',
    targetType: 'agent',
    targetId: agent.json().agent.id,
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

  const first = await startWorker();
  await waitUntil('the first worker’s tool call reaches the slow server', () => arrivals.length >= 1, {
    timeoutMs: 60_000,
  });
  first.child.kill('SIGKILL');
  assert.equal(await first.exited(10_000), 128, 'killed by a signal');
  assert.equal((await view()).status, 'running', 'the crash is not the invocation’s end');

  // The worker wrote its claim with the system clock; the API's clock moves past the 120 s lease from now.
  clock.set(Date.now() + 121_000);
  const tick = await app.inject({
    method: 'POST',
    url: '/_ops/runtime/tick',
    headers: { authorization: `Bearer ${TEST_OPERATOR_TOKEN}` },
  });
  assert.equal(tick.json().reclaimedSteps, 1, tick.body);

  await startWorker();
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
