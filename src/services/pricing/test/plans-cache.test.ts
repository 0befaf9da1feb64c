/**
 * `GET /plans` answers are cached per project and instance, keyed by the project's `catalog_version`. Two api
 * instances on one database, as a scale-out deployment runs them: after any write on instance B, the very next
 * `GET /plans` on instance A (whose answer is cached) shows it; a refused write leaves the version, and so the cache,
 * as it was; a successful one moves it by exactly one.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { bodyAs } from '../../../../test/support/json.ts';
import { TEST_OPERATOR_TOKEN } from '../../../../test/support/platform.ts';
import { loadConfig } from '../../../platform/config.ts';
import { createLogger } from '../../../platform/logger.ts';
import { type BootedPlatform, bootServices } from '../../../platform/runtime.ts';
import { pricingService } from '../index.ts';
import { PlanListResponse } from '../pricing-schemas.ts';
import { type Method, type PricingHarness, startPricing, type TestProject } from './support.ts';

let a: PricingHarness;
let b: BootedPlatform;
let dataDir: string;
let sql: pg.Client;
let project: TestProject;
before(async () => {
  a = await startPricing();
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'pricing-b-'));
  const config = loadConfig({ DATA_DIR: dataDir }, {}, [
    {
      name: pricingService.name,
      envPrefix: pricingService.envPrefix,
      defaultPort: pricingService.defaultPort,
    },
  ]);
  b = await bootServices({
    config,
    services: [pricingService],
    databaseUrl: a.platform.database.url,
    operatorToken: TEST_OPERATOR_TOKEN,
    secretsKey: randomBytes(32),
    logger: createLogger('silent'),
    serveHttp: true,
    listen: false,
    runWorker: false,
  });
  sql = new pg.Client({ connectionString: a.platform.database.url });
  await sql.connect();
  project = await a.project('cache-test');
});
after(async () => {
  await sql?.end();
  await b?.stop();
  await a?.close();
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
});

/** Calls the public API of instance B with the project's read_write key. */
const onB = (method: Method, urlPath: string, payload?: unknown) =>
  b.services.get('pricing')!.app!.inject({
    method,
    url: `/api/v1/projects/${project.slug}${urlPath}`,
    headers: { authorization: `Bearer ${project.writeKey}` },
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
const plansOn = async (instance: 'a' | 'b') => {
  const res =
    instance === 'a'
      ? await a.api(project.readKey, 'GET', project.slug, '/plans')
      : await onB('GET', '/plans');
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
  return bodyAs(res, PlanListResponse).plans;
};
const version = async (): Promise<number> => {
  const { rows } = await sql.query('select catalog_version from pricing.projects where slug = $1', [
    project.slug,
  ]);
  return Number(rows[0].catalog_version);
};

test('every kind of write on instance B is in the next GET /plans of instance A, whose answer was cached', async () => {
  const write = async (method: Method, urlPath: string, payload?: unknown) => {
    await plansOn('a'); // A caches its answer at the current version
    const before = await version();
    const res = await onB(method, urlPath, payload);
    assert.ok(res.statusCode < 300, `${method} ${urlPath}: ${res.statusCode} ${res.body}`);
    assert.equal(await version(), before + 1, `${method} ${urlPath} bumps the catalog version once`);
    const seenOnA = await plansOn('a');
    assert.deepEqual(seenOnA, await plansOn('b'), `${method} ${urlPath}: A answers what B answers`);
    return { res: res.statusCode === 204 ? null : (res.json() as { id: number }), plans: seenOnA };
  };
  const plan = (await write('POST', '/plans', { name: 'Starter', basePrice: 10 })).res!;
  let seen = (await write('PATCH', `/plans/${plan.id}`, { name: 'Starter+' })).plans;
  assert.deepEqual(
    seen.map((p) => p.name),
    ['Starter+'],
  );
  const feature = (await write('POST', '/features', { name: 'Seats', featureType: 'Limits', basePrice: 2 }))
    .res!;
  seen = (await write('POST', `/plans/${plan.id}/features`, { featureId: feature.id, multiplier: 3 })).plans;
  assert.deepEqual(
    seen[0]!.planFeatures.map((pf) => [pf.feature.name, pf.multiplier]),
    [['Seats', 3]],
  );
  seen = (await write('PATCH', `/plans/${plan.id}/features/${feature.id}`, { multiplier: 4 })).plans;
  assert.equal(seen[0]!.planFeatures[0]!.multiplier, 4);
  seen = (await write('PATCH', `/features/${feature.id}`, { name: 'Team seats' })).plans;
  assert.equal(seen[0]!.planFeatures[0]!.feature.name, 'Team seats', 'a feature renamed shows in its plans');
  seen = (await write('POST', `/plans/${plan.id}/duplicate`)).plans;
  assert.deepEqual(
    seen.map((p) => p.name),
    ['Starter+', 'Starter+ (Copy)'],
  );
  seen = (await write('DELETE', `/plans/${plan.id}/features/${feature.id}`)).plans;
  assert.deepEqual(
    seen.map((p) => p.planFeatures.length),
    [0, 1],
  );
  seen = (await write('DELETE', `/features/${feature.id}`)).plans;
  assert.deepEqual(
    seen.map((p) => p.planFeatures.length),
    [0, 0],
  );
  seen = (await write('DELETE', `/plans/${plan.id}`)).plans;
  assert.deepEqual(
    seen.map((p) => p.name),
    ['Starter+ (Copy)'],
  );
});

test('a refused write leaves the catalog version (and the cached answers) as they were', async () => {
  const plans = await plansOn('a');
  const before = await version();
  const planId = plans[0]!.id;
  assert.equal((await onB('PATCH', `/plans/${planId}/features/999999`, { multiplier: 2 })).statusCode, 404);
  assert.equal((await onB('POST', '/plans', { name: '' })).statusCode, 400);
  assert.equal((await onB('DELETE', '/plans/999999')).statusCode, 404);
  assert.equal(await version(), before);
  assert.deepEqual(await plansOn('a'), plans);
});

test('a change made outside the API is seen once the catalog version moves, and only then', async () => {
  const plans = await plansOn('a');
  const planId = plans[0]!.id;
  await sql.query("update pricing.plans set name = 'Renamed in SQL' where id = $1", [planId]);
  assert.equal(
    (await plansOn('a'))[0]!.name,
    plans[0]!.name,
    'the cached answer is served at the same version',
  );
  await sql.query('update pricing.projects set catalog_version = catalog_version + 1 where slug = $1', [
    project.slug,
  ]);
  assert.equal((await plansOn('a'))[0]!.name, 'Renamed in SQL');
});
