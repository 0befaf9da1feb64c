import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { type CliProcess, startCli } from '../../../../test/support/cli-process.ts';
import { createTestDatabase, TEST_OPERATOR_TOKEN } from '../../../../test/support/platform.ts';
import { waitUntil } from '../../../../test/support/wait.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { loadConfig } from '../../../platform/config.ts';
import { createLogger } from '../../../platform/logger.ts';
import { bootServices } from '../../../platform/runtime.ts';
import { agentGatewayService } from '../index.ts';

/**
 * The real-crash harness of `worker-crash.test.ts` (a run's step) and `invocation-crash.test.ts` (an invocation's):
 * the API runs in this process on a {@link ManualClock} with no worker; workers are child processes
 * (`node --import tsx src/main.ts --role worker`, as `npm start` runs it); an agent calls `fetch_url` on a local
 * server that holds the first request (the worker is killed meanwhile) and answers later ones with `ok after retry`.
 * `tmpPrefix` names the DATA_DIR under the system temp folder. `close()` kills every worker left and drops the database.
 */
export async function startCrashHarness(tmpPrefix: string) {
  const database = await createTestDatabase();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), tmpPrefix));
  const clock = new ManualClock(Date.now());
  const secretsKey = randomBytes(32);
  const workers: CliProcess[] = [];
  const arrivals: http.ServerResponse[] = [];
  // The first request is held (the worker dies meanwhile); later ones are answered at once.
  const slow = http.createServer((_req, res) => {
    arrivals.push(res);
    if (arrivals.length > 1) res.end('ok after retry');
  });
  await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
  const slowUrl = `http://127.0.0.1:${(slow.address() as { port: number }).port}/slow`;
  const s = agentGatewayService;
  const api = await bootServices({
    config: loadConfig({ DATA_DIR: dataDir, OUTBOUND_ALLOW_PRIVATE: 'true' }, {}, [
      { name: s.name, envPrefix: s.envPrefix, defaultPort: s.defaultPort },
    ]),
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
  const app = api.services.get('agent-gateway')!.app!;
  const token = api.services.get('agent-gateway')!.credentials!.userToken as string;

  /** A request as the seeded user (bearer user token). */
  const call = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
    app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${token}` },
      ...(payload ? { payload: payload as object } : {}),
    });

  /** Starts a worker process and waits for its banner. */
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

  return {
    api,
    app,
    clock,
    arrivals,
    call,
    startWorker,

    /** Creates the `Fetcher` agent (one `fetch_url` call to the slow server, answering its body); returns its id. */
    async createFetcher(): Promise<string> {
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
      return agent.json().agent.id as string;
    },

    /** Starts a worker, waits until its tool call reaches the slow server, and kills it with SIGKILL. */
    async killWorkerMidStep(): Promise<void> {
      const first = await startWorker();
      await waitUntil('the first worker’s tool call reaches the slow server', () => arrivals.length >= 1, {
        timeoutMs: 60_000,
      });
      first.child.kill('SIGKILL');
      assert.equal(await first.exited(10_000), 128, 'killed by a signal');
      assert.equal(first.child.signalCode, 'SIGKILL');
    },

    /**
     * Moves the API's clock past the 120 s step lease (the worker wrote its claim with the system clock) and runs the
     * sweep (`POST /_ops/runtime/tick`), asserting it puts exactly one step back.
     */
    async reclaimPastLease(): Promise<void> {
      clock.set(Date.now() + 121_000);
      const tick = await app.inject({
        method: 'POST',
        url: '/_ops/runtime/tick',
        headers: { authorization: `Bearer ${TEST_OPERATOR_TOKEN}` },
      });
      assert.equal(tick.json().reclaimedSteps, 1, tick.body);
    },

    async close(): Promise<void> {
      for (const w of workers)
        if (w.child.exitCode === null && w.child.signalCode === null) {
          w.child.kill('SIGKILL');
          await w.exited(10_000).catch(() => undefined);
        }
      for (const res of arrivals) res.destroy();
      await new Promise((resolve) => slow.close(resolve));
      await api.stop();
      await database.drop();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** What {@link startCrashHarness} gives a test. */
export type CrashHarness = Awaited<ReturnType<typeof startCrashHarness>>;
