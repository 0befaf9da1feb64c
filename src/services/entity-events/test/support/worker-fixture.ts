/**
 * What the worker tests (restart, SIGKILL, Ctrl-C) share: a database, a DATA_DIR, the Python receiver and one
 * secrets key; the API (or a worker) booted in this process; worker processes started as `npm start` runs them.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type CliProcess, startCli } from '../../../../../test/support/cli-process.ts';
import {
  createTestDatabase,
  TEST_OPERATOR_TOKEN,
  type TestDatabase,
} from '../../../../../test/support/platform.ts';
import { loadConfig } from '../../../../platform/config.ts';
import { createLogger } from '../../../../platform/logger.ts';
import { type BootedPlatform, bootServices } from '../../../../platform/runtime.ts';
import { entityEventsService } from '../../index.ts';
import { type PythonReceiver, startPythonReceiver } from './receiver.ts';

/** The shared parts, from {@link startWorkerFixture}. */
export interface WorkerFixture {
  database: TestDatabase;
  receiver: PythonReceiver;
  /** Boots entity-events in this process: `api` serves HTTP (not listening), `worker` runs jobs. */
  boot(role: 'api' | 'worker'): Promise<BootedPlatform>;
  /**
   * Starts a worker process (`--role worker`, 4 jobs at once) on the database; resolves once its banner is out.
   * @param options.npm through `npm start` as its own process group (to signal it as a terminal's Ctrl-C does).
   * @param options.logLevel its LOG_LEVEL (default `warn`).
   */
  startWorkerProcess(options?: { npm?: boolean; logLevel?: string }): Promise<CliProcess>;
  /** Stops what was booted or started (killing processes still alive), the receiver, the database, the files. */
  close(): Promise<void>;
}

/** Sets up a {@link WorkerFixture} with DATA_DIR under `<tmp>/<prefix>...`. */
export async function startWorkerFixture(prefix: string): Promise<WorkerFixture> {
  const database = await createTestDatabase();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  const receiver = await startPythonReceiver();
  const secretsKey = randomBytes(32);
  const booted: BootedPlatform[] = [];
  const processes: CliProcess[] = [];
  return {
    database,
    receiver,
    async boot(role) {
      const s = entityEventsService;
      const env = {
        DATA_DIR: dataDir,
        OUTBOUND_ALLOW_PRIVATE: 'true',
        WORKER_CONCURRENCY: '4',
        ENTITY_EVENTS_SIMULATOR_EVENTS_PER_MINUTE: '0',
      };
      const platform = await bootServices({
        config: loadConfig(env, {}, [{ name: s.name, envPrefix: s.envPrefix, defaultPort: s.defaultPort }]),
        services: [s],
        databaseUrl: database.url,
        operatorToken: TEST_OPERATOR_TOKEN,
        secretsKey,
        logger: createLogger('silent'),
        serveHttp: role === 'api',
        listen: false,
        runWorker: role === 'worker',
      });
      booted.push(platform);
      return platform;
    },
    async startWorkerProcess(options = {}) {
      const cli = startCli(
        ['--role', 'worker'],
        {
          DATABASE_URL: database.url,
          SERVICES: 'entity-events',
          DATA_DIR: dataDir,
          OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
          SECRETS_KEY: secretsKey.toString('hex'), // the API's key: the worker opens the sealed webhook secrets
          OUTBOUND_ALLOW_PRIVATE: 'true',
          ENTITY_EVENTS_SIMULATOR_EVENTS_PER_MINUTE: '0',
          WORKER_CONCURRENCY: '4',
          LOG_LEVEL: options.logLevel ?? 'warn',
        },
        { npm: options.npm },
      );
      processes.push(cli);
      await cli.waitFor('Press Ctrl-C', 90_000);
      return cli;
    },
    async close() {
      for (const cli of processes) {
        if (cli.child.exitCode !== null || cli.child.signalCode !== null) continue;
        try {
          process.kill(cli.child.spawnargs[0] === 'npm' ? -cli.child.pid! : cli.child.pid!, 'SIGKILL');
        } catch {
          // already gone
        }
        await cli.exited(10_000).catch(() => undefined);
      }
      for (const platform of booted) await platform.stop().catch(() => undefined);
      await receiver.stop();
      await database.drop();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}
