/**
 * The demo credentials written on the first start (`credentials.json`): `readKey` is a `read` key (403 on a mutating
 * call, nothing changed) and `readWriteKey` is a `read_write` key (it can write).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../../platform/clock.ts';
import { assertError, type PricingHarness, startPricing } from './support.ts';

describe('pricing: the seeded demo credentials', () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0));
  let h: PricingHarness;
  let slug: string;
  let readKey: string;
  let readWriteKey: string;

  const planNames = async (key: string): Promise<string[]> => {
    const res = await h.api(key, 'GET', slug, '/plans');
    assert.equal(res.statusCode, 200, res.body);
    return res.json().plans.map((p: { name: string }) => p.name);
  };

  before(async () => {
    h = await startPricing(clock);
    const creds = h.platform.credentials('pricing');
    slug = creds.projectSlug as string;
    readKey = creds.readKey as string;
    readWriteKey = creds.readWriteKey as string;
    assert.equal(typeof slug, 'string');
    assert.equal(typeof readKey, 'string');
    assert.equal(typeof readWriteKey, 'string');
  });
  after(async () => h?.close());

  test('readKey reads, but gets 403 forbidden on a mutating call and changes nothing', async () => {
    const listed = await planNames(readKey);
    const res = await h.api(readKey, 'GET', slug, '/plans');
    const planId = res.json().plans[0].id as number;
    assertError(await h.api(readKey, 'POST', slug, `/plans/${planId}/duplicate`, {}), 403, 'forbidden');
    assertError(
      await h.api(readKey, 'POST', slug, '/plans', { name: 'Not allowed', basePrice: 1 }),
      403,
      'forbidden',
    );
    assert.deepEqual(await planNames(readKey), listed);
  });

  test('readWriteKey can write: it duplicates a demo plan (201), and the copy is listed', async () => {
    const listed = await planNames(readWriteKey);
    const first = (await h.api(readWriteKey, 'GET', slug, '/plans')).json().plans[0] as {
      id: number;
      name: string;
    };
    const res = await h.api(readWriteKey, 'POST', slug, `/plans/${first.id}/duplicate`, {});
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().name, `${first.name} (Copy)`);
    assert.deepEqual(await planNames(readKey), [...listed, `${first.name} (Copy)`]);
  });
});
