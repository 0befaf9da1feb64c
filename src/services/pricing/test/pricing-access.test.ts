import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../../platform/clock.ts';
import { assertError, type Method, type PricingHarness, startPricing, type TestProject } from './support.ts';

const START = Date.UTC(2026, 2, 1, 9, 0, 0);
const MINUTE = 60_000;
const PREFIX = '/api/v1/projects/{slug}';

interface Operation {
  method: Method;
  /** OpenAPI path, `/api/v1/projects/{slug}/plans/{planId}`. */
  path: string;
  operationId: string;
}

describe('pricing: keys, tenancy, permissions, rate limits, operator API, OpenAPI', () => {
  const clock = new ManualClock(START);
  let h: PricingHarness;
  let alpha: TestProject;
  let beta: TestProject;
  /** Every public operation, read from the service's own OpenAPI document. */
  let operations: Operation[];
  /** Ids of a plan and a feature of alpha (the feature is on the plan). */
  let alphaPlanId: number;
  let alphaFeatureId: number;
  let doc: {
    paths: Record<string, Record<string, { operationId?: string; tags?: string[]; summary?: string }>>;
    components: { securitySchemes: Record<string, { type: string; scheme?: string }> };
  };

  /** A concrete path (below the prefix) for an operation, with alpha's ids. */
  const concrete = (op: Operation, ids = { planId: alphaPlanId, featureId: alphaFeatureId }) =>
    op.path
      .slice(PREFIX.length)
      .replace('{planId}', String(ids.planId))
      .replace('{featureId}', String(ids.featureId));

  /** A valid body for an operation (so a rejection is never about the body). */
  const bodyFor = (op: Operation): unknown => {
    switch (op.operationId) {
      case 'createPlan':
        return { name: 'Body plan', basePrice: 1 };
      case 'updatePlan':
        return { name: 'Renamed' };
      case 'duplicatePlan':
        return {};
      case 'addPlanFeature':
        return { featureId: alphaFeatureId, multiplier: 2 };
      case 'updatePlanFeature':
        return { multiplier: 3 };
      case 'createFeature':
        return { name: 'Body feature', featureType: 'Standart' };
      case 'updateFeature':
        return { name: 'Renamed feature' };
      default:
        return undefined;
    }
  };

  /** What alpha's API shows (plans and features), to prove a rejected call changed nothing. */
  const snapshot = async () => {
    const plans = await h.api(alpha.readKey, 'GET', alpha.slug, '/plans');
    const features = await h.api(alpha.readKey, 'GET', alpha.slug, '/features');
    assert.equal(plans.statusCode, 200);
    assert.equal(features.statusCode, 200);
    return { plans: plans.json(), features: features.json() };
  };

  before(async () => {
    h = await startPricing(clock);
    alpha = await h.project('alpha', 100_000);
    beta = await h.project('beta', 100_000);
    const plan = await h.api(alpha.writeKey, 'POST', alpha.slug, '/plans', {
      name: 'Alpha plan',
      basePrice: 5,
    });
    const feature = await h.api(alpha.writeKey, 'POST', alpha.slug, '/features', {
      name: 'Alpha feature',
      featureType: 'Limits',
      countableData: { unit: 'seat', amount: 1 },
    });
    alphaPlanId = plan.json().id;
    alphaFeatureId = feature.json().id;
    const link = await h.api(alpha.writeKey, 'POST', alpha.slug, `/plans/${alphaPlanId}/features`, {
      featureId: alphaFeatureId,
      multiplier: 4,
    });
    assert.equal(link.statusCode, 201, link.body);
    doc = (await h.platform.app('pricing').inject({ method: 'GET', url: '/openapi.json' })).json();
    operations = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith(PREFIX))
      .flatMap(([path, methods]) =>
        Object.entries(methods).map(([method, op]) => ({
          method: method.toUpperCase() as Method,
          path,
          operationId: op.operationId ?? '',
        })),
      );
  });
  after(async () => h?.close());

  test('the OpenAPI lists every route with operationId, tags and summary; the spec operations are there', () => {
    const missing: string[] = [];
    for (const [path, methods] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(methods))
        if (!op.operationId || !op.tags?.length || !op.summary) missing.push(`${method} ${path}`);
    assert.deepEqual(missing, []);
    assert.deepEqual(operations.map((o) => o.operationId).sort(), [
      'addPlanFeature',
      'createFeature',
      'createPlan',
      'deleteFeature',
      'deletePlan',
      'duplicatePlan',
      'getFeature',
      'getPlan',
      'listFeatures',
      'listPlans',
      'removePlanFeature',
      'updateFeature',
      'updatePlan',
      'updatePlanFeature',
    ]);
    assert.equal(doc.paths[`${PREFIX}/plans`]?.get?.operationId, 'listPlans');
    assert.equal(doc.paths[`${PREFIX}/plans/{planId}/duplicate`]?.post?.operationId, 'duplicatePlan');
    assert.equal(doc.paths[`${PREFIX}/features/{featureId}`]?.delete?.operationId, 'deleteFeature');
    for (const op of ['opsCreateProject', 'opsListProjects', 'opsIssueKey', 'opsListKeys', 'opsRevokeKey'])
      assert.ok(
        Object.values(doc.paths).some((m) => Object.values(m).some((o) => o.operationId === op)),
        op,
      );
    assert.deepEqual(doc.components.securitySchemes.apiKey, {
      type: 'http',
      scheme: 'bearer',
      description: 'A project API key (`cpk_...`) with `read` or `read_write` permission',
    });
  });

  describe('401: missing, invalid or revoked key', () => {
    test('every route answers 401 {error: "unauthorized"} without a valid key, whatever the body', async () => {
      const revoked = await h.issueKey(alpha.slug, 'read_write');
      assert.equal((await h.ops('POST', `/_ops/keys/${revoked.id}/revoke`)).statusCode, 200);
      const wrong = `cpk_${'A'.repeat(43)}`;
      const before = await snapshot();
      for (const op of operations) {
        const path = concrete(op);
        const payload = bodyFor(op);
        assertError(
          await h.api(undefined, op.method, 'alpha', path, payload),
          401,
          'unauthorized',
          /Missing API key/,
        );
        for (const header of ['Basic dXNlcjpwYXNz', 'Bearer', `Token ${alpha.writeKey}`])
          assertError(
            await h.api(undefined, op.method, 'alpha', path, payload, { authorization: header }),
            401,
            'unauthorized',
          );
        for (const key of [wrong, 'not-a-key', alpha.writeKey.slice(0, -1)])
          assertError(
            await h.api(key, op.method, 'alpha', path, payload),
            401,
            'unauthorized',
            /Invalid API key/,
          );
        assertError(
          await h.api(revoked.key, op.method, 'alpha', path, payload),
          401,
          'unauthorized',
          /revoked/,
        );
        // 401 comes before validation: a bad body or id without a key is still a 401.
        assertError(
          await h.api(undefined, op.method, 'alpha', concrete(op, { planId: 0, featureId: 0 }), { x: 1 }),
          401,
          'unauthorized',
        );
      }
      assert.deepEqual(await snapshot(), before);
    });

    test('a key works until it is revoked, then it is a 401 at once (cached lookups are dropped)', async () => {
      const key = await h.issueKey(alpha.slug, 'read');
      assert.equal((await h.api(key.key, 'GET', 'alpha', '/plans')).statusCode, 200);
      assert.equal((await h.api(key.key, 'GET', 'alpha', '/plans')).statusCode, 200);
      const revoked = await h.ops('POST', `/_ops/keys/${key.id}/revoke`);
      assert.equal(revoked.statusCode, 200);
      assert.match(revoked.json().revokedAt, /^\d{4}-/);
      assertError(await h.api(key.key, 'GET', 'alpha', '/plans'), 401, 'unauthorized', /revoked/);
      const again = await h.ops('POST', `/_ops/keys/${key.id}/revoke`);
      assert.equal(again.json().revokedAt, revoked.json().revokedAt, 'revoking twice changes nothing');
      assertError(await h.ops('POST', '/_ops/keys/999999/revoke'), 404, 'not_found');
    });
  });

  describe('tenancy: a key never sees another project', () => {
    test("another project's slug answers 404 exactly like an unknown slug, on every route", async () => {
      const before = await snapshot();
      for (const op of operations) {
        const path = concrete(op);
        const payload = bodyFor(op);
        for (const key of [beta.readKey, beta.writeKey]) {
          const other = assertError(await h.api(key, op.method, 'alpha', path, payload), 404, 'not_found');
          const unknown = assertError(
            await h.api(key, op.method, 'no-such-project', path, payload),
            404,
            'not_found',
          );
          assert.equal(other.message, "Project 'alpha' not found.", `${op.operationId}`);
          assert.equal(unknown.message, "Project 'no-such-project' not found.");
          assert.equal(other.message.replace('alpha', 'X'), unknown.message.replace('no-such-project', 'X'));
        }
        // Even alpha's own key cannot reach another slug.
        assertError(await h.api(alpha.writeKey, op.method, 'beta', path, payload), 404, 'not_found');
      }
      assert.deepEqual(await snapshot(), before, "beta's keys changed nothing in alpha");
    });

    test("alpha's plan and feature ids are 404 through beta's own slug, and cannot be combined with beta's", async () => {
      const betaPlan = await h.api(beta.writeKey, 'POST', 'beta', '/plans', {
        name: 'Beta plan',
        basePrice: 1,
      });
      const betaPlanId = betaPlan.json().id as number;
      const before = await snapshot();
      for (const op of operations.filter(
        (o) => o.path.includes('{planId}') || o.path.includes('{featureId}'),
      )) {
        const res = await h.api(beta.writeKey, op.method, 'beta', concrete(op), bodyFor(op));
        assertError(res, 404, 'not_found', /(Plan|Feature) \d+ not found/);
      }
      assertError(
        await h.api(beta.writeKey, 'POST', 'beta', `/plans/${betaPlanId}/features`, {
          featureId: alphaFeatureId,
        }),
        404,
        'not_found',
        new RegExp(`Feature ${alphaFeatureId} not found`),
      );
      const betaPlans = (await h.api(beta.readKey, 'GET', 'beta', '/plans')).json().plans as { id: number }[];
      assert.deepEqual(
        betaPlans.map((p) => p.id),
        [betaPlanId],
      );
      assert.deepEqual((await h.api(beta.readKey, 'GET', 'beta', '/features')).json(), { features: [] });
      assert.deepEqual(await snapshot(), before);
    });
  });

  describe('permissions', () => {
    test('a read key gets 403 {error: "forbidden"} on every mutating route and changes nothing', async () => {
      const mutating = operations.filter((o) => o.method !== 'GET');
      assert.equal(mutating.length, 10);
      const before = await snapshot();
      for (const op of mutating) {
        assertError(
          await h.api(alpha.readKey, op.method, 'alpha', concrete(op), bodyFor(op)),
          403,
          'forbidden',
          /read_write/,
        );
        // 403 comes before validation: a read key never learns whether its body was valid.
        assertError(
          await h.api(alpha.readKey, op.method, 'alpha', concrete(op), { nonsense: true }),
          403,
          'forbidden',
        );
      }
      assert.deepEqual(await snapshot(), before);
    });

    test('a read key may call every read-only route', async () => {
      const reads = operations.filter((o) => o.method === 'GET');
      assert.equal(reads.length, 4);
      for (const op of reads) {
        const res = await h.api(alpha.readKey, 'GET', 'alpha', concrete(op));
        assert.equal(res.statusCode, 200, `${op.operationId}: ${res.body}`);
      }
    });

    test('a read_write key may call every route', async () => {
      const called = new Set<string>();
      const call = async (operationId: string, path: string, payload?: unknown) => {
        const op = operations.find((o) => o.operationId === operationId)!;
        const res = await h.api(alpha.writeKey, op.method, 'alpha', path, payload);
        assert.ok(
          res.statusCode === 200 || res.statusCode === 201,
          `${operationId}: ${res.statusCode} ${res.body}`,
        );
        called.add(operationId);
        return res.json();
      };
      const plan = await call('createPlan', '/plans', { name: 'RW plan', basePrice: 2 });
      const feature = await call('createFeature', '/features', {
        name: 'RW feature',
        featureType: 'Usage Based',
      });
      await call('listPlans', '/plans');
      await call('getPlan', `/plans/${plan.id}`);
      await call('updatePlan', `/plans/${plan.id}`, { isVisible: false });
      await call('listFeatures', '/features');
      await call('getFeature', `/features/${feature.id}`);
      await call('updateFeature', `/features/${feature.id}`, { basePrice: 0.01 });
      await call('addPlanFeature', `/plans/${plan.id}/features`, { featureId: feature.id, multiplier: 2 });
      await call('updatePlanFeature', `/plans/${plan.id}/features/${feature.id}`, { multiplier: 3 });
      const copy = await call('duplicatePlan', `/plans/${plan.id}/duplicate`);
      await call('removePlanFeature', `/plans/${plan.id}/features/${feature.id}`);
      await call('deleteFeature', `/features/${feature.id}`);
      await call('deletePlan', `/plans/${copy.id}`);
      assert.deepEqual([...called].sort(), operations.map((o) => o.operationId).sort());
    });
  });

  describe('rate limits: per key, per minute', () => {
    test('over the limit: 429 {error: "rate_limited"} with Retry-After; the window resets after a minute', async () => {
      clock.set(START + 100 * MINUTE);
      const key = await h.issueKey(alpha.slug, 'read', 3);
      const other = await h.issueKey(alpha.slug, 'read', 3);
      assert.equal((await h.api(key.key, 'GET', 'alpha', '/plans')).statusCode, 200);
      assert.equal((await h.api(key.key, 'GET', 'alpha', '/features')).statusCode, 200);
      assert.equal((await h.api(key.key, 'GET', 'alpha', `/plans/${alphaPlanId}`)).statusCode, 200);
      const limited = await h.api(key.key, 'GET', 'alpha', '/plans');
      assertError(limited, 429, 'rate_limited', /3 requests per minute/);
      assert.equal(limited.headers['retry-after'], '60');
      assert.equal(limited.headers['x-ratelimit-limit'], '3');
      assert.equal(
        (await h.api(other.key, 'GET', 'alpha', '/plans')).statusCode,
        200,
        'keys are counted apart',
      );

      clock.advance(30_000);
      const later = await h.api(key.key, 'GET', 'alpha', '/plans');
      assertError(later, 429, 'rate_limited');
      assert.equal(later.headers['retry-after'], '30');
      clock.advance(29_000);
      assert.equal((await h.api(key.key, 'GET', 'alpha', '/plans')).headers['retry-after'], '1');
      clock.advance(1_000);
      assert.equal((await h.api(key.key, 'GET', 'alpha', '/plans')).statusCode, 200, 'a new window');
    });

    test('the default is 100 requests per minute per key', async () => {
      clock.set(START + 200 * MINUTE);
      const key = await h.issueKey(alpha.slug, 'read');
      const codes: number[] = [];
      for (let i = 0; i < 101; i++)
        codes.push((await h.api(key.key, 'GET', 'alpha', '/features')).statusCode);
      assert.equal(codes.filter((c) => c === 200).length, 100);
      assert.equal(codes[100], 429);
      clock.advance(MINUTE);
      assert.equal((await h.api(key.key, 'GET', 'alpha', '/features')).statusCode, 200);
    });

    test('rejected calls of a key count too (a read key cannot flood mutating routes)', async () => {
      clock.set(START + 300 * MINUTE);
      const key = await h.issueKey(alpha.slug, 'read', 2);
      assertError(await h.api(key.key, 'DELETE', 'alpha', `/features/${alphaFeatureId}`), 403, 'forbidden');
      assertError(await h.api(key.key, 'GET', 'beta', '/plans'), 404, 'not_found');
      assertError(await h.api(key.key, 'GET', 'alpha', '/plans'), 429, 'rate_limited');
    });
  });

  describe('operator API', () => {
    test('needs the operator token; errors use the service body', async () => {
      const app = h.platform.app('pricing');
      assertError(await app.inject({ method: 'GET', url: '/_ops/projects' }), 401, 'unauthorized');
      assertError(
        await app.inject({
          method: 'GET',
          url: '/_ops/projects',
          headers: { authorization: `Bearer ${alpha.writeKey}` },
        }),
        401,
        'unauthorized',
      );
    });

    test('projects: create (slug rules, 409 for a taken slug) and list with counts', async () => {
      const created = await h.ops('POST', '/_ops/projects', { slug: 'gamma-2', name: '  Gamma  ' });
      assert.equal(created.statusCode, 201, created.body);
      assert.equal(created.json().slug, 'gamma-2');
      assert.equal(created.json().name, 'Gamma');
      assertError(await h.ops('POST', '/_ops/projects', { slug: 'gamma-2', name: 'Again' }), 409, 'conflict');
      for (const slug of ['Gamma', 'gamma_3', '-gamma', 'gamma--3', 'gamma-', ''])
        assertError(
          await h.ops('POST', '/_ops/projects', { slug, name: 'x' }),
          400,
          'validation_error',
          /slug/,
        );
      const list = (await h.ops('GET', '/_ops/projects')).json().projects as {
        slug: string;
        plans: number;
        features: number;
        activeKeys: number;
      }[];
      assert.deepEqual(
        list.map((p) => p.slug),
        [...list.map((p) => p.slug)].sort(),
      );
      const demo = list.find((p) => p.slug === 'demo')!;
      assert.deepEqual([demo.plans, demo.features, demo.activeKeys], [3, 9, 2]);
      assert.equal(list.find((p) => p.slug === 'gamma-2')!.activeKeys, 0);
    });

    test('keys: issued once (cpk_...), stored hashed, listed without the key, 404 for an unknown project', async () => {
      // The platform's /_ops/keys routes (one shape in every service): the project is a body field and a filter.
      const res = await h.ops('POST', '/_ops/keys', {
        projectSlug: 'alpha',
        permission: 'read_write',
        label: 'ci',
        rateLimitPerMinute: 500,
      });
      assert.equal(res.statusCode, 201, res.body);
      const issued = res.json();
      assert.match(issued.key, /^cpk_[A-Za-z0-9_-]{43}$/);
      assert.equal(issued.hint, issued.key.slice(-4));
      assert.equal(issued.projectSlug, 'alpha');
      assert.equal(issued.permission, 'read_write');
      assert.equal(issued.rateLimitPerMinute, 500);
      const listed = await h.ops('GET', '/_ops/keys?projectSlug=alpha');
      assert.equal(listed.statusCode, 200);
      assert.ok(listed.json().keys.some((k: { id: number }) => k.id === issued.id));
      assert.ok(!listed.body.includes(issued.key));
      assert.equal((await h.ops('POST', `/_ops/keys/${issued.id}/revoke`)).statusCode, 200);
      const active = (await h.ops('GET', '/_ops/keys?projectSlug=alpha')).json().keys as { id: number }[];
      assert.ok(!active.some((k) => k.id === issued.id), 'revoked keys are left out by default');
      const withRevoked = await h.ops('GET', '/_ops/keys?projectSlug=alpha&include_revoked=true');
      const revoked = withRevoked.json().keys.find((k: { id: number }) => k.id === issued.id);
      assert.match(revoked.revokedAt, /^\d{4}-/);
      const rows = await h.platform.booted.database.pool.query('select key_hash from pricing.api_keys');
      assert.ok(rows.rows.every((r: { key_hash: string }) => /^[0-9a-f]{64}$/.test(r.key_hash)));
      assert.ok(!JSON.stringify(rows.rows).includes(issued.key));
      assertError(
        await h.ops('POST', '/_ops/keys', { projectSlug: 'nope', permission: 'read' }),
        404,
        'not_found',
      );
      assertError(await h.ops('GET', '/_ops/keys?projectSlug=nope'), 404, 'not_found');
      assertError(
        await h.ops('POST', '/_ops/keys', { projectSlug: 'alpha', permission: 'admin' }),
        400,
        'validation_error',
        /permission/,
      );
    });
  });

  test('unknown routes are 404 in the service body', async () => {
    assertError(await h.api(alpha.readKey, 'GET', 'alpha', '/nothing-here'), 404, 'not_found');
  });
});
