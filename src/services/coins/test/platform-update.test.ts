import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import {
  createTestDatabase,
  TEST_OPERATOR_TOKEN,
  type TestDatabase,
} from '../../../../test/support/platform.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { loadConfig } from '../../../platform/config.ts';
import { createLogger } from '../../../platform/logger.ts';
import { bootServices } from '../../../platform/runtime.ts';
import { LIST_PLATFORMS_UPDATE } from '../coin-store.ts';
import { coinsService } from '../index.ts';
import { listPlatformMap } from '../seed-data.ts';

/**
 * The token lists' platform map reaches a database seeded before it: each start applies the current map once
 * (recorded by digest in coins.seed_updates), adding missing coins and missing platforms, never replacing one.
 */
describe('coins: the platform map on an existing database', () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const secretsKey = randomBytes(32);
  let database: TestDatabase;
  let dataDir: string;
  let client: pg.Client;

  const start = async () => {
    const booted = await bootServices({
      config: loadConfig({ DATA_DIR: dataDir }, {}, [
        { name: 'coins', envPrefix: 'COINS', defaultPort: coinsService.defaultPort },
      ]),
      services: [coinsService],
      databaseUrl: database.url,
      operatorToken: TEST_OPERATOR_TOKEN,
      secretsKey,
      logger: createLogger('silent'),
      clock,
      serveHttp: false,
      listen: false,
      runWorker: false,
    });
    await booted.stop();
  };
  const platforms = async (id: string) =>
    (await client.query('select platforms from coins.coins where id = $1', [id])).rows[0]?.platforms as
      | Record<string, string>
      | undefined;
  const digest = async () =>
    (await client.query('select digest from coins.seed_updates where name = $1', [LIST_PLATFORMS_UPDATE]))
      .rows[0]?.digest as string | undefined;

  before(async () => {
    database = await createTestDatabase();
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'coins-platform-update-'));
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  });
  after(async () => {
    await client?.end();
    await database?.drop();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  test('a first start seeds the map and records its digest', async () => {
    await start();
    assert.equal(await digest(), listPlatformMap().digest);
    assert.equal((await platforms('maker'))?.ethereum, '0x9f8f72aa9304c8b593d555f12ef6589cc3a579a2');
    assert.equal((await platforms('shiba-inu'))?.ethereum, '0x95ad61b0a150d79219dcf64e1e6cc01f0b64c4ce');
  });

  test('a database seeded before the map gets it at the next start, keeping the platforms it has', async () => {
    // As a database seeded by the previous version: no token-list coins or platforms, no digest, and an address the
    // operator imported for matic-network on Ethereum.
    const operatorAddress = `0x${'1'.repeat(40)}`;
    await client.query(`delete from coins.seed_updates`);
    await client.query(`delete from coins.coins where id = 'shiba-inu'`);
    await client.query(`update coins.coins set platforms = '{}' where id in ('maker', 'aave')`);
    await client.query(`update coins.coins set platforms = $1 where id = 'matic-network'`, [
      JSON.stringify({ ethereum: operatorAddress }),
    ]);
    await start();
    assert.equal(await digest(), listPlatformMap().digest);
    assert.deepEqual(
      await platforms('maker'),
      listPlatformMap().map.coins.find((c) => c.id === 'maker')?.platforms,
    );
    assert.equal((await platforms('aave'))?.ethereum, '0x7fc66500c84a76ad7e9c93437bfc5ac33e2ddae9');
    assert.equal((await platforms('shiba-inu'))?.ethereum, '0x95ad61b0a150d79219dcf64e1e6cc01f0b64c4ce');
    const matic = await platforms('matic-network');
    assert.equal(matic?.ethereum, operatorAddress, 'a platform the coin has is never replaced');
    assert.equal(
      matic?.['binance-smart-chain'],
      '0xcc42724c6683b7e57334c4e856f4c9965ed682bd',
      'missing ones are added',
    );
  });

  test('once applied, later starts leave the data alone (an operator change survives a restart)', async () => {
    await client.query(`update coins.coins set platforms = '{}' where id = 'maker'`);
    await start();
    assert.deepEqual(await platforms('maker'), {});
  });
});
