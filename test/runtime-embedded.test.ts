import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../src/platform/embedded-postgres.ts';
import { postgresProcessesFor, servicePorts, startCli } from './support/cli.ts';

/**
 * The default path of a new user: `npm start` with no DATABASE_URL starts embedded PostgreSQL under DATA_DIR,
 * and Ctrl-C leaves no PostgreSQL process behind. Start, use, stop, start again.
 */
describe('runtime: embedded PostgreSQL (no DATABASE_URL)', () => {
  let dataDir: string;
  let port: number;
  let ports: Record<string, string>;

  before(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'api-suite-embedded-'));
    port = await freePort();
    ports = await servicePorts({ COINS_PORT: String(port) });
  });
  after(async () => {
    for (const pid of postgresProcessesFor(dataDir)) process.kill(pid, 'SIGKILL');
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  const env = () => ({ DATA_DIR: dataDir, ...ports, LOG_LEVEL: 'warn' });

  test('start, use, Ctrl-C (nothing left running), start again with the same data and keys', async () => {
    const first = startCli([], env());
    await first.waitFor('Press Ctrl-C', 120_000);
    assert.match(first.stdout(), /embedded PostgreSQL on 127\.0\.0\.1:(\d+)/);
    const pgPort = Number(/embedded PostgreSQL on 127\.0\.0\.1:(\d+)/.exec(first.stdout())?.[1]);
    assert.notEqual(pgPort, 5432, 'never the default PostgreSQL port');
    const settings = JSON.parse(await fs.readFile(path.join(dataDir, 'postgres.json'), 'utf8'));
    assert.equal(statSync(path.join(dataDir, 'postgres.json')).mode & 0o777, 0o600);
    assert.ok(settings.password.length >= 24, 'a generated password');
    assert.equal(postgresProcessesFor(dataDir).length > 0, true);

    const creds = JSON.parse(await fs.readFile(path.join(dataDir, 'credentials.json'), 'utf8')).coins;
    const list = await fetch(`${creds.baseUrl}/api/v3/coins/list?include_platform=true`, {
      headers: { 'x-coin-demo-api-key': creds.demoKey },
    });
    assert.equal(list.status, 200);
    const coins = (await list.json()) as { id: string; platforms: Record<string, string> }[];
    assert.ok(coins.length > 4300);
    // Something the second start must still have: a key issued through the operator API.
    const token = (await fs.readFile(path.join(dataDir, 'operator-token'), 'utf8')).trim();
    const issued = await fetch(`${creds.baseUrl}/_ops/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tier: 'pro', label: 'kept across restarts' }),
    });
    assert.equal(issued.status, 201);
    const proKey = ((await issued.json()) as { key: string }).key;

    first.child.kill('SIGINT');
    assert.equal(await first.exited(15_000), 0);
    assert.deepEqual(postgresProcessesFor(dataDir), [], 'no PostgreSQL process left behind');

    const second = startCli([], env());
    await second.waitFor('Press Ctrl-C', 60_000);
    const creds2 = JSON.parse(await fs.readFile(path.join(dataDir, 'credentials.json'), 'utf8')).coins;
    assert.equal(creds2.demoKey, creds.demoKey);
    const again = await fetch(`${creds.baseUrl}/api/v3/coins/list`, {
      headers: { 'x-coin-pro-api-key': proKey },
    });
    assert.equal(again.status, 200, 'the key issued before the restart still works');
    second.child.kill('SIGTERM');
    assert.equal(await second.exited(15_000), 0);
    assert.deepEqual(postgresProcessesFor(dataDir), []);
  });

  test('a PostgreSQL left running by a killed api-suite is stopped and reused at the next start', async () => {
    const first = startCli([], env());
    await first.waitFor('Press Ctrl-C', 60_000);
    first.child.kill('SIGKILL');
    await first.exited();
    // Killed with SIGKILL the process could not stop its server: it is still there.
    assert.ok(postgresProcessesFor(dataDir).length > 0);
    const second = startCli([], env());
    await second.waitFor('Press Ctrl-C', 60_000);
    const creds = JSON.parse(await fs.readFile(path.join(dataDir, 'credentials.json'), 'utf8')).coins;
    const res = await fetch(`${creds.baseUrl}/api/v3/coins/list`, {
      headers: { 'x-coin-demo-api-key': creds.demoKey },
    });
    assert.equal(res.status, 200);
    second.child.kill('SIGINT');
    assert.equal(await second.exited(15_000), 0);
    assert.deepEqual(postgresProcessesFor(dataDir), []);
  });
});
