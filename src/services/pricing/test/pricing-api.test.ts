import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../../platform/clock.ts';
import { type Answer, assertError, type PricingHarness, startPricing, type TestProject } from './support.ts';

const START = Date.UTC(2026, 0, 1, 12, 0, 0);
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const PLAN_KEYS = [
  'basePrice',
  'createdAt',
  'description',
  'id',
  'isFree',
  'isPopular',
  'isVisible',
  'name',
  'planFeatures',
  'updatedAt',
];
const FEATURE_KEYS = [
  'basePrice',
  'countableData',
  'createdAt',
  'description',
  'featureType',
  'id',
  'isCountable',
  'name',
  'updatedAt',
];

interface Feature {
  id: number;
  name: string;
  description: string;
  basePrice: number;
  featureType: string;
  isCountable: boolean;
  countableData: { unit: string; amount: number } | null;
  createdAt: string;
  updatedAt: string;
}
interface PlanFeature {
  id: number;
  multiplier: number;
  feature: Feature;
}
interface Plan {
  id: number;
  name: string;
  description: string;
  basePrice: number;
  isPopular: boolean;
  isVisible: boolean;
  isFree: boolean;
  planFeatures: PlanFeature[];
  createdAt: string;
  updatedAt: string;
}

function assertPlanShape(plan: Plan) {
  assert.deepEqual(Object.keys(plan).sort(), PLAN_KEYS);
  assert.equal(typeof plan.id, 'number');
  assert.equal(typeof plan.basePrice, 'number');
  assert.match(plan.createdAt, ISO);
  assert.match(plan.updatedAt, ISO);
  for (const pf of plan.planFeatures) {
    assert.deepEqual(Object.keys(pf).sort(), ['feature', 'id', 'multiplier']);
    assert.equal(typeof pf.id, 'number');
    assert.equal(typeof pf.multiplier, 'number');
    assertFeatureShape(pf.feature);
  }
}

function assertFeatureShape(feature: Feature) {
  assert.deepEqual(Object.keys(feature).sort(), FEATURE_KEYS);
  assert.equal(typeof feature.id, 'number');
  assert.equal(typeof feature.basePrice, 'number');
  assert.ok(['Standart', 'Limits', 'Usage Based'].includes(feature.featureType));
  assert.equal(feature.isCountable, feature.countableData !== null);
  assert.match(feature.createdAt, ISO);
  assert.match(feature.updatedAt, ISO);
}

describe('pricing: plans and features', () => {
  const clock = new ManualClock(START);
  let h: PricingHarness;
  let demo: { slug: string; readKey: string; writeKey: string };
  let acme: TestProject;

  /** Calls the acme project with its read_write key. */
  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, payload?: unknown) =>
    h.api(acme.writeKey, method, acme.slug, path, payload);
  const created = (res: Answer) => {
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  };
  const ok = (res: Answer) => {
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };
  const plans = async (): Promise<Plan[]> => ok(await call('GET', '/plans')).plans;
  const feature = async (input: Record<string, unknown>): Promise<Feature> =>
    created(await call('POST', '/features', input));
  const plan = async (input: Record<string, unknown>): Promise<Plan> =>
    created(await call('POST', '/plans', input));
  const assign = async (planId: number, featureId: number, multiplier?: number): Promise<PlanFeature> =>
    created(
      await call('POST', `/plans/${planId}/features`, {
        featureId,
        ...(multiplier === undefined ? {} : { multiplier }),
      }),
    );

  before(async () => {
    h = await startPricing(clock);
    const creds = h.platform.credentials('pricing');
    demo = {
      slug: creds.projectSlug as string,
      readKey: creds.readKey as string,
      writeKey: creds.readWriteKey as string,
    };
    acme = await h.project('acme', 10_000);
  });
  after(async () => h?.close());

  describe('the demo project of the first start', () => {
    test('credentials: the demo slug, a read key and a read_write key (cpk_...)', () => {
      assert.equal(demo.slug, 'demo');
      assert.match(demo.readKey, /^cpk_[A-Za-z0-9_-]{43}$/);
      assert.match(demo.writeKey, /^cpk_[A-Za-z0-9_-]{43}$/);
      assert.notEqual(demo.readKey, demo.writeKey);
    });

    test('GET /plans: Free, Pro (popular), Business with features of all three types and multipliers', async () => {
      const res = await h.api(demo.readKey, 'GET', 'demo', '/plans');
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(Object.keys(res.json()), ['plans']);
      const list: Plan[] = res.json().plans;
      assert.deepEqual(
        list.map((p) => p.name),
        ['Free', 'Pro', 'Business'],
      );
      for (const p of list) assertPlanShape(p);
      const [free, pro, business] = list as [Plan, Plan, Plan];
      assert.deepEqual(
        list.map((p) => p.isPopular),
        [false, true, false],
      );
      assert.equal(free.isFree, true);
      assert.equal(free.basePrice, 0);
      assert.equal(pro.basePrice, 29);
      assert.equal(business.basePrice, 99);
      const types = new Set(list.flatMap((p) => p.planFeatures.map((pf) => pf.feature.featureType)));
      assert.deepEqual([...types].sort(), ['Limits', 'Standart', 'Usage Based']);
      const seats = (p: Plan) => p.planFeatures.find((pf) => pf.feature.name === 'Team members')!.multiplier;
      assert.deepEqual([seats(free), seats(pro), seats(business)], [1, 5, 25]);
      assert.ok(business.planFeatures.length > pro.planFeatures.length);
      const sms = pro.planFeatures.find((pf) => pf.feature.name === 'SMS notifications')!.feature;
      assert.equal(sms.basePrice, 0.0075, 'fractional prices come back as the same number');
      assert.deepEqual(sms.countableData, { unit: 'message', amount: 1 });
    });
  });

  describe('plans', () => {
    test('create: 201 with defaults, trimmed name, times from the clock; get answers the same', async () => {
      clock.set(START + 1000);
      const p = await plan({ name: '  Starter  ', basePrice: 9.99 });
      assertPlanShape(p);
      assert.equal(p.name, 'Starter');
      assert.equal(p.description, '');
      assert.equal(p.basePrice, 9.99);
      assert.equal(p.isPopular, false);
      assert.equal(p.isVisible, true);
      assert.equal(p.isFree, false);
      assert.deepEqual(p.planFeatures, []);
      assert.equal(p.createdAt, new Date(START + 1000).toISOString());
      assert.equal(p.updatedAt, p.createdAt);
      assert.deepEqual(ok(await call('GET', `/plans/${p.id}`)), p);
      const free = await plan({ name: 'Hobby', basePrice: 0 });
      assert.equal(free.isFree, true, 'isFree defaults to basePrice being 0');
    });

    test('list: every plan of the project, ordered by id', async () => {
      const a = await plan({ name: 'Order A', basePrice: 3 });
      const b = await plan({ name: 'Order B', basePrice: 1 });
      const ids = (await plans()).map((p) => p.id);
      assert.deepEqual(
        ids,
        [...ids].sort((x, y) => x - y),
      );
      assert.ok(ids.indexOf(a.id) < ids.indexOf(b.id));
    });

    test('update: only the fields sent change; updatedAt moves, createdAt stays', async () => {
      clock.set(START + 2000);
      const p = await plan({ name: 'Team', basePrice: 49, description: 'For teams' });
      clock.set(START + 3000);
      const updated: Plan = ok(
        await call('PATCH', `/plans/${p.id}`, { basePrice: 59.5, isPopular: true, isVisible: false }),
      );
      assert.deepEqual(updated, {
        ...p,
        basePrice: 59.5,
        isPopular: true,
        isVisible: false,
        updatedAt: new Date(START + 3000).toISOString(),
      });
      assert.deepEqual(ok(await call('GET', `/plans/${p.id}`)), updated);
    });

    test('update: a free plan costs 0; a rejected update changes nothing', async () => {
      const free = await plan({ name: 'Gratis', basePrice: 0 });
      assertError(
        await call('PATCH', `/plans/${free.id}`, { basePrice: 5 }),
        400,
        'validation_error',
        /basePrice/,
      );
      const paid = await plan({ name: 'Paid', basePrice: 5 });
      assertError(
        await call('PATCH', `/plans/${paid.id}`, { isFree: true }),
        400,
        'validation_error',
        /isFree/,
      );
      assert.deepEqual(ok(await call('GET', `/plans/${free.id}`)), free);
      assert.deepEqual(ok(await call('GET', `/plans/${paid.id}`)), paid);
      const charged: Plan = ok(await call('PATCH', `/plans/${free.id}`, { basePrice: 5, isFree: false }));
      assert.equal(charged.basePrice, 5);
      assert.equal(charged.isFree, false);
    });

    test('delete: {success: true}; the plan is gone, its features stay; a second delete is 404', async () => {
      const f = await feature({ name: 'Kept feature', featureType: 'Standart' });
      const p = await plan({ name: 'Doomed', basePrice: 1 });
      await assign(p.id, f.id, 2);
      assert.deepEqual(ok(await call('DELETE', `/plans/${p.id}`)), { success: true });
      assertError(await call('GET', `/plans/${p.id}`), 404, 'not_found', new RegExp(`Plan ${p.id}`));
      assert.ok(!(await plans()).some((x) => x.id === p.id));
      assert.equal(ok(await call('GET', `/features/${f.id}`)).id, f.id);
      assertError(await call('DELETE', `/plans/${p.id}`), 404, 'not_found');
    });

    test('unknown plan ids are 404 on every plan route', async () => {
      const missing = 999_999;
      for (const [method, path, payload] of [
        ['GET', `/plans/${missing}`, undefined],
        ['PATCH', `/plans/${missing}`, { name: 'x' }],
        ['DELETE', `/plans/${missing}`, undefined],
        ['POST', `/plans/${missing}/duplicate`, {}],
        ['POST', `/plans/${missing}/features`, { featureId: 1 }],
        ['PATCH', `/plans/${missing}/features/1`, { multiplier: 2 }],
        ['DELETE', `/plans/${missing}/features/1`, undefined],
      ] as const) {
        assertError(await call(method, path, payload), 404, 'not_found', /Plan 999999 not found/);
      }
    });
  });

  describe('features', () => {
    test('create every type; countable features carry countableData; list and get', async () => {
      clock.set(START + 5000);
      const standart = await feature({ name: 'Webhooks', featureType: 'Standart', basePrice: 15 });
      const limits = await feature({
        name: 'Seats',
        featureType: 'Limits',
        basePrice: 8,
        countableData: { unit: 'seat', amount: 1 },
      });
      const usage = await feature({
        name: 'Emails',
        description: 'Per 1,000 emails',
        featureType: 'Usage Based',
        basePrice: 0.0125,
        isCountable: true,
        countableData: { unit: 'email', amount: 1000 },
      });
      for (const f of [standart, limits, usage]) assertFeatureShape(f);
      assert.equal(standart.isCountable, false);
      assert.equal(standart.countableData, null);
      assert.equal(limits.isCountable, true);
      assert.deepEqual(usage.countableData, { unit: 'email', amount: 1000 });
      assert.equal(usage.basePrice, 0.0125);
      assert.equal(usage.createdAt, new Date(START + 5000).toISOString());
      const list = ok(await call('GET', '/features'));
      assert.deepEqual(Object.keys(list), ['features']);
      const ids = list.features.map((f: Feature) => f.id);
      assert.deepEqual(
        ids,
        [...ids].sort((x: number, y: number) => x - y),
      );
      assert.deepEqual(
        list.features.filter((f: Feature) => [standart.id, limits.id, usage.id].includes(f.id)),
        [standart, limits, usage],
      );
      assert.deepEqual(ok(await call('GET', `/features/${limits.id}`)), limits);
      assertError(await call('GET', '/features/999999'), 404, 'not_found', /Feature 999999 not found/);
    });

    test('featureType must be exactly Standart, Limits or Usage Based', async () => {
      for (const bad of ['Standard', 'limits', 'Usage based', '']) {
        assertError(
          await call('POST', '/features', { name: 'x', featureType: bad }),
          400,
          'validation_error',
          /featureType must be one of "Standart", "Limits", "Usage Based"/,
        );
      }
    });

    test('update: fields sent change; plans holding the feature show it; isCountable false clears countableData', async () => {
      const f = await feature({
        name: 'Storage',
        featureType: 'Limits',
        countableData: { unit: 'GB', amount: 5 },
      });
      const p = await plan({ name: 'Storage plan', basePrice: 4 });
      await assign(p.id, f.id, 3);
      clock.set(START + 6000);
      const renamed: Feature = ok(await call('PATCH', `/features/${f.id}`, { name: 'Disk', basePrice: 1.5 }));
      assert.equal(renamed.name, 'Disk');
      assert.equal(renamed.basePrice, 1.5);
      assert.equal(renamed.updatedAt, new Date(START + 6000).toISOString());
      assert.equal(renamed.createdAt, f.createdAt);
      const inPlan: Plan = ok(await call('GET', `/plans/${p.id}`));
      assert.deepEqual(inPlan.planFeatures[0]!.feature, renamed);
      const flat: Feature = ok(await call('PATCH', `/features/${f.id}`, { isCountable: false }));
      assert.equal(flat.isCountable, false);
      assert.equal(flat.countableData, null);
      assertError(
        await call('PATCH', `/features/${f.id}`, { isCountable: true }),
        400,
        'validation_error',
        /countableData is required when isCountable is true/,
      );
      const again: Feature = ok(
        await call('PATCH', `/features/${f.id}`, { countableData: { unit: 'TB', amount: 1 } }),
      );
      assert.equal(again.isCountable, true);
      assert.deepEqual(again.countableData, { unit: 'TB', amount: 1 });
      assertError(await call('PATCH', '/features/999999', { name: 'x' }), 404, 'not_found');
    });
  });

  describe('features on a plan', () => {
    test('add with a multiplier (default 1), change it, remove it; the plan shows each step', async () => {
      const p = await plan({ name: 'Assign', basePrice: 10 });
      const seats = await feature({
        name: 'Assign seats',
        featureType: 'Limits',
        countableData: { unit: 'seat', amount: 1 },
      });
      const sso = await feature({ name: 'Assign SSO', featureType: 'Standart' });
      clock.set(START + 7000);
      const link = await assign(p.id, seats.id, 2.5);
      assert.deepEqual(Object.keys(link).sort(), ['feature', 'id', 'multiplier']);
      assert.equal(link.multiplier, 2.5);
      assert.deepEqual(link.feature, seats);
      const other = await assign(p.id, sso.id);
      assert.equal(other.multiplier, 1, 'default multiplier');
      let current: Plan = ok(await call('GET', `/plans/${p.id}`));
      assert.deepEqual(current.planFeatures, [link, other], 'ordered by association id');
      assert.equal(current.updatedAt, new Date(START + 7000).toISOString());

      clock.set(START + 8000);
      const changed: PlanFeature = ok(
        await call('PATCH', `/plans/${p.id}/features/${seats.id}`, { multiplier: 10 }),
      );
      assert.deepEqual(changed, { ...link, multiplier: 10 }, 'same association id, new multiplier');
      current = ok(await call('GET', `/plans/${p.id}`));
      assert.equal(current.planFeatures[0]!.multiplier, 10);
      assert.equal(current.updatedAt, new Date(START + 8000).toISOString());

      assert.deepEqual(ok(await call('DELETE', `/plans/${p.id}/features/${seats.id}`)), { success: true });
      current = ok(await call('GET', `/plans/${p.id}`));
      assert.deepEqual(current.planFeatures, [other]);
      assert.equal(
        ok(await call('GET', `/features/${seats.id}`)).id,
        seats.id,
        'the feature stays in the project',
      );
      assertError(
        await call('DELETE', `/plans/${p.id}/features/${seats.id}`),
        404,
        'not_found',
        /is not on plan/,
      );
      assertError(
        await call('PATCH', `/plans/${p.id}/features/${seats.id}`, { multiplier: 2 }),
        404,
        'not_found',
        /is not on plan/,
      );
    });

    test('a feature is on a plan once (409); an unknown feature is 404; neither writes anything', async () => {
      const p = await plan({ name: 'Once', basePrice: 10 });
      const f = await feature({ name: 'Once feature', featureType: 'Standart' });
      await assign(p.id, f.id, 2);
      const before = ok(await call('GET', `/plans/${p.id}`));
      assertError(
        await call('POST', `/plans/${p.id}/features`, { featureId: f.id, multiplier: 3 }),
        409,
        'conflict',
      );
      assertError(
        await call('POST', `/plans/${p.id}/features`, { featureId: 999_999 }),
        404,
        'not_found',
        /Feature 999999 not found/,
      );
      assert.deepEqual(ok(await call('GET', `/plans/${p.id}`)), before);
    });

    test('multipliers must be above 0 with at most 4 decimal places', async () => {
      const p = await plan({ name: 'Multipliers', basePrice: 10 });
      const f = await feature({ name: 'Multiplier feature', featureType: 'Standart' });
      for (const bad of [0, -2, 1.00001, 2_000_000, 'x']) {
        assertError(
          await call('POST', `/plans/${p.id}/features`, { featureId: f.id, multiplier: bad }),
          400,
          'validation_error',
          /multiplier/,
        );
      }
      await assign(p.id, f.id, 1);
      assertError(
        await call('PATCH', `/plans/${p.id}/features/${f.id}`, { multiplier: 0 }),
        400,
        'validation_error',
        /multiplier/,
      );
      assertError(
        await call('PATCH', `/plans/${p.id}/features/${f.id}`, {}),
        400,
        'validation_error',
        /multiplier/,
      );
    });
  });

  describe('POST /plans/{planId}/duplicate', () => {
    let pro: Plan;
    const proFeatures: Feature[] = [];

    before(async () => {
      for (const [name, featureType, countableData] of [
        ['Dup seats', 'Limits', { unit: 'seat', amount: 1 }],
        ['Dup API', 'Usage Based', { unit: 'request', amount: 1000 }],
        ['Dup SSO', 'Standart', null],
      ] as const)
        proFeatures.push(await feature({ name, featureType, countableData, basePrice: 2 }));
      const p = await plan({ name: 'Pro', basePrice: 29, description: 'Most teams', isPopular: true });
      for (const [i, f] of proFeatures.entries()) await assign(p.id, f.id, [5, 2.5, 1][i]);
      pro = ok(await call('GET', `/plans/${p.id}`));
    });

    test('"Pro" (popular) gives "Pro (Copy)": not popular, new association ids, same features and multipliers', async () => {
      clock.set(START + 20_000);
      const res = await call('POST', `/plans/${pro.id}/duplicate`);
      assert.equal(res.statusCode, 201, res.body);
      const copy: Plan = res.json();
      assertPlanShape(copy);
      assert.notEqual(copy.id, pro.id);
      assert.equal(copy.name, 'Pro (Copy)');
      assert.equal(copy.isPopular, false);
      assert.equal(pro.isPopular, true);
      assert.equal(copy.basePrice, pro.basePrice);
      assert.equal(copy.description, pro.description);
      assert.equal(copy.isVisible, pro.isVisible);
      assert.equal(copy.isFree, pro.isFree);
      assert.equal(copy.createdAt, new Date(START + 20_000).toISOString());
      assert.deepEqual(
        copy.planFeatures.map((pf) => [pf.feature, pf.multiplier]),
        pro.planFeatures.map((pf) => [pf.feature, pf.multiplier]),
        'same features, same multipliers, same order',
      );
      assert.deepEqual(
        copy.planFeatures.map((pf) => pf.multiplier),
        [5, 2.5, 1],
      );
      const originalIds = new Set(pro.planFeatures.map((pf) => pf.id));
      assert.ok(
        copy.planFeatures.every((pf) => !originalIds.has(pf.id)),
        'new association ids',
      );
      assert.equal(new Set(copy.planFeatures.map((pf) => pf.id)).size, copy.planFeatures.length);
      assert.deepEqual(ok(await call('GET', `/plans/${pro.id}`)), pro, 'the original is unchanged');
      assert.deepEqual(ok(await call('GET', `/plans/${copy.id}`)), copy);
      assert.ok(
        (await plans()).some((p) => p.id === copy.id),
        'the copy is listed',
      );
    });

    test('the copy is independent: changing its multipliers leaves the original alone', async () => {
      const copy: Plan = created(await call('POST', `/plans/${pro.id}/duplicate`, {}));
      await call('PATCH', `/plans/${copy.id}/features/${proFeatures[0]!.id}`, { multiplier: 50 });
      await call('DELETE', `/plans/${copy.id}/features/${proFeatures[1]!.id}`);
      assert.deepEqual(ok(await call('GET', `/plans/${pro.id}`)), pro);
    });

    test('a custom name (trimmed); no body, an empty JSON body and {} all use the default', async () => {
      const named: Plan = created(await call('POST', `/plans/${pro.id}/duplicate`, { name: '  Pro 2027 ' }));
      assert.equal(named.name, 'Pro 2027');
      assert.equal(named.planFeatures.length, 3);
      const empty = await h.api(acme.writeKey, 'POST', acme.slug, `/plans/${pro.id}/duplicate`, undefined, {
        'content-type': 'application/json',
      });
      assert.equal(created(empty).name, 'Pro (Copy)');
      assert.equal(created(await call('POST', `/plans/${pro.id}/duplicate`, {})).name, 'Pro (Copy)');
    });

    test('a plan without features duplicates to a plan without features', async () => {
      const bare = await plan({ name: 'Bare', basePrice: 0 });
      const copy: Plan = created(await call('POST', `/plans/${bare.id}/duplicate`));
      assert.equal(copy.name, 'Bare (Copy)');
      assert.deepEqual(copy.planFeatures, []);
      assert.equal(copy.isFree, true);
    });

    test('404 for an unknown plan; 400 for a bad name or body; nothing is created', async () => {
      const count = (await plans()).length;
      assertError(await call('POST', '/plans/999999/duplicate'), 404, 'not_found', /Plan 999999 not found/);
      assertError(
        await call('POST', `/plans/${pro.id}/duplicate`, { name: '   ' }),
        400,
        'validation_error',
        /name/,
      );
      assertError(
        await call('POST', `/plans/${pro.id}/duplicate`, { name: '' }),
        400,
        'validation_error',
        /name/,
      );
      assertError(
        await call('POST', `/plans/${pro.id}/duplicate`, { name: 'x', color: 'red' }),
        400,
        'validation_error',
        /color/,
      );
      assertError(await call('POST', '/plans/abc/duplicate'), 400, 'validation_error', /planId/);
      const notJson = await h.api(
        acme.writeKey,
        'POST',
        acme.slug,
        `/plans/${pro.id}/duplicate`,
        '{"name":',
        {
          'content-type': 'application/json',
        },
      );
      assertError(notJson, 400, 'bad_request');
      assert.equal((await plans()).length, count);
    });
  });

  describe('DELETE /features/{featureId}', () => {
    test('removes the feature from the project and from every plan holding it, permanently', async () => {
      const gone = await feature({
        name: 'Cascade me',
        featureType: 'Limits',
        countableData: { unit: 'x', amount: 1 },
      });
      const stays = await feature({ name: 'Stay', featureType: 'Standart' });
      const holders: Plan[] = [];
      for (const [i, name] of ['Cascade A', 'Cascade B', 'Cascade C'].entries()) {
        const p = await plan({ name, basePrice: 10 + i });
        await assign(p.id, gone.id, i + 1);
        await assign(p.id, stays.id, 7);
        holders.push(p);
      }
      const bystander = await plan({ name: 'Cascade bystander', basePrice: 1 });
      await assign(bystander.id, stays.id, 2);
      const bystanderBefore = ok(await call('GET', `/plans/${bystander.id}`));

      clock.set(START + 30_000);
      const res = await call('DELETE', `/features/${gone.id}`);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { success: true });

      const all = await plans();
      assert.ok(
        all.every((p) => p.planFeatures.every((pf) => pf.feature.id !== gone.id)),
        'gone from every plan',
      );
      for (const holder of holders) {
        const now: Plan = all.find((p) => p.id === holder.id)!;
        assert.deepEqual(
          now.planFeatures.map((pf) => [pf.feature.id, pf.multiplier]),
          [[stays.id, 7]],
          'other assignments stay',
        );
        assert.equal(now.updatedAt, new Date(START + 30_000).toISOString(), 'the plans it left changed');
      }
      assert.deepEqual(
        ok(await call('GET', `/plans/${bystander.id}`)),
        bystanderBefore,
        'other plans untouched',
      );
      assertError(await call('GET', `/features/${gone.id}`), 404, 'not_found');
      assert.ok(!ok(await call('GET', '/features')).features.some((f: Feature) => f.id === gone.id));
      const rows = await h.platform.booted.database.pool.query(
        'select count(*)::int as n from pricing.plan_features where feature_id = $1',
        [gone.id],
      );
      assert.equal(rows.rows[0].n, 0);
      assertError(await call('DELETE', `/features/${gone.id}`), 404, 'not_found', /Feature \d+ not found/);
      assertError(
        await call('POST', `/plans/${bystander.id}/features`, { featureId: gone.id }),
        404,
        'not_found',
      );
    });

    test('in one transaction: a failure part-way leaves the feature and every assignment in place', async () => {
      const f = await feature({ name: 'Atomic', featureType: 'Standart' });
      const a = await plan({ name: 'Atomic A', basePrice: 1 });
      const boom = await plan({ name: 'Atomic boom', basePrice: 1 });
      await assign(a.id, f.id, 2);
      await assign(boom.id, f.id, 3);
      const pool = h.platform.booted.database.pool;
      // Make the last step of the delete (touching the plans it left) fail, after its associations and the
      // feature row were deleted.
      await pool.query(`
        create function pricing.test_fail_boom() returns trigger language plpgsql as $$
        begin
          if new.name = 'Atomic boom' then raise exception 'injected failure'; end if;
          return new;
        end $$;
        create trigger test_fail_boom before update on pricing.plans
          for each row execute function pricing.test_fail_boom();`);
      try {
        assertError(await call('DELETE', `/features/${f.id}`), 500, 'internal_error');
      } finally {
        await pool.query(
          'drop trigger test_fail_boom on pricing.plans; drop function pricing.test_fail_boom();',
        );
      }
      assert.deepEqual(ok(await call('GET', `/features/${f.id}`)), f, 'the feature is still there');
      for (const [p, m] of [
        [a, 2],
        [boom, 3],
      ] as const) {
        const now: Plan = ok(await call('GET', `/plans/${p.id}`));
        assert.deepEqual(
          now.planFeatures.map((pf) => [pf.feature.id, pf.multiplier]),
          [[f.id, m]],
          `still on ${p.name}`,
        );
      }
      assert.deepEqual(
        ok(await call('DELETE', `/features/${f.id}`)),
        { success: true },
        'and it deletes later',
      );
    });
  });

  describe('at most 50 features per project', () => {
    test('the 51st create is a 400; deleting one makes room again', async () => {
      const p = await h.project('capped', 10_000);
      const create = (name: string) =>
        h.api(p.writeKey, 'POST', p.slug, '/features', { name, featureType: 'Standart' });
      let first: Feature | undefined;
      for (let i = 1; i <= 50; i++) {
        const res = await create(`F${i}`);
        assert.equal(res.statusCode, 201, `feature ${i}: ${res.body}`);
        first ??= res.json();
      }
      assertError(await create('F51'), 400, 'feature_limit_reached', /at most 50 features/);
      const list = await h.api(p.readKey, 'GET', p.slug, '/features');
      assert.equal(list.json().features.length, 50);
      assert.equal((await h.api(p.writeKey, 'DELETE', p.slug, `/features/${first!.id}`)).statusCode, 200);
      assert.equal((await create('F51 after a delete')).statusCode, 201);
      assertError(await create('F52'), 400, 'feature_limit_reached');
    });

    test('concurrent creates never exceed 50', async () => {
      const p = await h.project('racing', 10_000);
      for (let i = 1; i <= 44; i++) {
        const res = await h.api(p.writeKey, 'POST', p.slug, '/features', {
          name: `F${i}`,
          featureType: 'Limits',
          countableData: { unit: 'u', amount: i },
        });
        assert.equal(res.statusCode, 201, res.body);
      }
      const answers = await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          h.api(p.writeKey, 'POST', p.slug, '/features', { name: `Race ${i}`, featureType: 'Standart' }),
        ),
      );
      const codes = answers.map((r) => r.statusCode);
      assert.equal(codes.filter((c) => c === 201).length, 6, codes.join(','));
      assert.equal(codes.filter((c) => c === 400).length, 18, codes.join(','));
      for (const r of answers.filter((x) => x.statusCode === 400))
        assertError(r, 400, 'feature_limit_reached');
      const rows = await h.platform.booted.database.pool.query(
        'select count(*)::int as n from pricing.features f join pricing.projects p on p.id = f.project_id where p.slug = $1',
        [p.slug],
      );
      assert.equal(rows.rows[0].n, 50);
    });
  });

  describe('validation: 400 {error: "validation_error", message naming the field}; nothing written', () => {
    test('bad bodies and path parameters', async () => {
      const p = await plan({ name: 'Validation target', basePrice: 10 });
      const f = await feature({ name: 'Validation feature', featureType: 'Standart' });
      const cases: [string, string, unknown, RegExp][] = [
        ['POST', '/plans', {}, /body\.name is required/],
        ['POST', '/plans', { name: 'x' }, /body\.basePrice is required/],
        ['POST', '/plans', { name: '   ', basePrice: 1 }, /body\.name must not be blank/],
        ['POST', '/plans', { name: 'x', basePrice: -1 }, /body\.basePrice must be >= 0/],
        [
          'POST',
          '/plans',
          { name: 'x', basePrice: 1.23456 },
          /body\.basePrice must have at most 4 decimal places/,
        ],
        ['POST', '/plans', { name: 'x', basePrice: 'ten' }, /body\.basePrice must be number/],
        ['POST', '/plans', { name: 'x', basePrice: 2_000_000_000 }, /body\.basePrice must be <= 1000000000/],
        ['POST', '/plans', { name: 'x', basePrice: 10, isFree: true }, /body\.isFree must be false/],
        ['POST', '/plans', { name: 'x', basePrice: 1, isPopular: 'very' }, /body\.isPopular must be boolean/],
        ['POST', '/plans', { name: 'x', basePrice: 1, tier: 'gold' }, /body\.tier is not an allowed field/],
        ['POST', '/plans', { name: 'x'.repeat(201), basePrice: 1 }, /body\.name/],
        ['PATCH', `/plans/${p.id}`, {}, /body must NOT have fewer than 1 properties/],
        ['PATCH', `/plans/${p.id}`, { name: ' ' }, /body\.name must not be blank/],
        ['PATCH', `/plans/${p.id}`, { basePrice: -5 }, /body\.basePrice/],
        ['GET', '/plans/abc', undefined, /params\.planId must be integer/],
        ['GET', '/plans/0', undefined, /params\.planId must be >= 1/],
        // An integer path parameter is written in decimal digits: one plan, one spelling.
        ['GET', '/plans/1.5', undefined, /params\.planId must be an integer in decimal digits/],
        [
          'GET',
          `/plans/0x${p.id.toString(16)}`,
          undefined,
          /params\.planId must be an integer in decimal digits/,
        ],
        ['GET', `/plans/+${p.id}`, undefined, /params\.planId must be an integer in decimal digits/],
        ['GET', `/plans/${p.id}e0`, undefined, /params\.planId must be an integer in decimal digits/],
        ['GET', `/plans/0${p.id}`, undefined, /params\.planId must be an integer in decimal digits/],
        ['GET', '/plans/99999999999999999999', undefined, /params\.planId must be <=/],
        ['GET', '/features/x', undefined, /params\.featureId must be integer/],
        ['POST', '/features', { featureType: 'Standart' }, /body\.name is required/],
        ['POST', '/features', { name: 'x' }, /body\.featureType is required/],
        [
          'POST',
          '/features',
          { name: 'x', featureType: 'Limits', isCountable: true },
          /body\.countableData is required when isCountable is true/,
        ],
        [
          'POST',
          '/features',
          { name: 'x', featureType: 'Limits', countableData: { unit: 'seat' } },
          /body\.countableData\.amount is required/,
        ],
        [
          'POST',
          '/features',
          { name: 'x', featureType: 'Limits', countableData: { unit: 'seat', amount: -1 } },
          /body\.countableData\.amount must be >= 0/,
        ],
        ['POST', '/features', { name: 'x', featureType: 'Standart', basePrice: 0.00001 }, /body\.basePrice/],
        ['PATCH', `/features/${f.id}`, {}, /body must NOT have fewer than 1 properties/],
        ['PATCH', `/features/${f.id}`, { featureType: 'Premium' }, /body\.featureType must be one of/],
        ['POST', `/plans/${p.id}/features`, {}, /body\.featureId is required/],
        ['POST', `/plans/${p.id}/features`, { featureId: 'abc' }, /body\.featureId must be integer/],
        ['PATCH', `/plans/${p.id}/features/${f.id}`, { multiplier: -1 }, /body\.multiplier must be > 0/],
      ];
      const before = { plans: await plans(), features: ok(await call('GET', '/features')).features };
      for (const [method, path, payload, message] of cases) {
        const res = await call(method as 'GET', path, payload);
        assertError(res, 400, 'validation_error', message);
      }
      const afterState = { plans: await plans(), features: ok(await call('GET', '/features')).features };
      assert.deepEqual(afterState, before, 'no rejected request wrote anything');
    });

    test('a body that is not JSON is a 400 bad_request', async () => {
      const res = await h.api(acme.writeKey, 'POST', acme.slug, '/plans', '{"name": "x",', {
        'content-type': 'application/json',
      });
      assertError(res, 400, 'bad_request');
    });
  });
});
