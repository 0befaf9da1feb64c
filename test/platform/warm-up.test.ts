import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/platform/config.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { type BootedPlatform, bootServices } from '../../src/platform/runtime.ts';
import type { ServiceDefinition } from '../../src/platform/service.ts';
import { createTestDatabase, TEST_OPERATOR_TOKEN, type TestDatabase } from '../support/platform.ts';

describe('platform: a service is ready (/readyz 200, the banner printed) once its warm-up is done', () => {
  let database: TestDatabase;
  let tmp: string;
  let booted: BootedPlatform;
  let finishWarmUp: () => void = () => undefined;
  let failWarmUp: (err: Error) => void = () => undefined;

  /** A service with no tables whose warm-up the test finishes (or fails). */
  const service = (name: string, outcome: 'finish' | 'fail', defaultPort: number): ServiceDefinition => ({
    name,
    envPrefix: name.toUpperCase(),
    title: name,
    description: name,
    version: '0.0.1',
    defaultPort,
    migrations: { schema: name, folder: tmp },
    formatError: (error) => ({ body: { code: error.code } }),
    setup: () => ({
      warmUp: () =>
        new Promise<void>((resolve, reject) => {
          if (outcome === 'finish') finishWarmUp = resolve;
          else failWarmUp = reject;
        }),
    }),
  });

  before(async () => {
    database = await createTestDatabase();
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'platform-warm-up-'));
    await fs.mkdir(path.join(tmp, 'meta'));
    await fs.writeFile(
      path.join(tmp, 'meta', '_journal.json'),
      JSON.stringify({ version: '7', dialect: 'postgresql', entries: [] }),
    );
    const services = [service('warmsvc', 'finish', 4997), service('coldsvc', 'fail', 4998)];
    booted = await bootServices({
      config: loadConfig(
        { DATA_DIR: tmp },
        {},
        services.map((s) => ({ name: s.name, envPrefix: s.envPrefix, defaultPort: s.defaultPort })),
      ),
      services,
      databaseUrl: database.url,
      operatorToken: TEST_OPERATOR_TOKEN,
      secretsKey: randomBytes(32),
      logger: createLogger('silent'),
      serveHttp: true,
      listen: false,
      runWorker: false,
    });
  });
  after(async () => {
    await booted?.stop();
    await database?.drop();
    await fs.rm(tmp, { recursive: true, force: true });
  });

  const readyz = (name: string) => booted.services.get(name)!.app!.inject({ url: '/readyz' });

  test('503 until the warm-up settles; a failed warm-up is logged and the service is ready anyway', async () => {
    let settled = false;
    void booted.warmedUp.then(() => {
      settled = true;
    });
    assert.equal((await readyz('warmsvc')).statusCode, 503);
    assert.equal((await readyz('coldsvc')).statusCode, 503);
    assert.equal((await booted.services.get('warmsvc')!.app!.inject({ url: '/healthz' })).statusCode, 200);
    failWarmUp(new Error('upstream cache unavailable'));
    finishWarmUp();
    await booted.warmedUp;
    assert.ok(settled);
    assert.equal((await readyz('warmsvc')).statusCode, 200);
    assert.equal((await readyz('coldsvc')).statusCode, 200);
  });
});
