import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import {
  createTestDatabase,
  TEST_OPERATOR_TOKEN,
  type TestDatabase,
} from '../../../../test/support/platform.ts';
import { waitUntil } from '../../../../test/support/wait.ts';
import { loadConfig } from '../../../platform/config.ts';
import { createLogger } from '../../../platform/logger.ts';
import { type BootedPlatform, bootServices } from '../../../platform/runtime.ts';
import { agentGatewayService } from '../index.ts';

/** Logout stops a token at once on every instance (two API instances on one database). */
let database: TestDatabase;
let dataDir: string;
const instances: BootedPlatform[] = [];

before(async () => {
  database = await createTestDatabase();
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ag-instances-'));
  const secretsKey = randomBytes(32);
  const s = agentGatewayService;
  for (let i = 0; i < 2; i++)
    instances.push(
      await bootServices({
        config: loadConfig({ DATA_DIR: dataDir }, {}, [
          { name: s.name, envPrefix: s.envPrefix, defaultPort: s.defaultPort },
        ]),
        services: [s],
        databaseUrl: database.url,
        operatorToken: TEST_OPERATOR_TOKEN,
        secretsKey,
        logger: createLogger('silent'),
        serveHttp: true,
        listen: false,
        runWorker: false,
      }),
    );
});
after(async () => {
  for (const i of instances) await i.stop();
  await database?.drop();
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
});

test('a token signed out on one instance stops at once on the other (its cached resolution dropped)', async () => {
  const [a, b] = instances.map((i) => i.services.get('agent-gateway')!.app!);
  const seeded = instances[0]!.services.get('agent-gateway')!.credentials!;
  const login = await a!.inject({
    method: 'POST',
    url: '/api/auth/login',
    payload: { username: seeded.username as string, password: seeded.password as string },
  });
  const token = login.json().token as string;
  const me = (app: typeof a) =>
    app!.inject({ url: '/api/auth/me', headers: { authorization: `Bearer ${token}` } });
  assert.equal((await me(a)).statusCode, 200, 'instance A resolved (and cached) the token');
  assert.equal((await me(b)).statusCode, 200);
  const out = await b!.inject({
    method: 'POST',
    url: '/api/auth/logout',
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(out.statusCode, 204);
  assert.equal((await me(b)).statusCode, 401);
  // The revocation reaches A by NOTIFY when B's transaction commits.
  await waitUntil('instance A refuses the token', async () => (await me(a)).statusCode === 401);
  assert.equal((await me(a)).json().code, 'token_revoked');
});
