/**
 * Delivery metrics follow the ad-platform simulator through the delivery job, on the injected clock: a day is reported
 * once it has ended, never twice, with the simulator's numbers, and `/reporting/metrics` moves when the clock does.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../../platform/clock.ts';
import { SimulatedAdPlatform } from '../catalog/index.ts';
import { envelopeData, type MediaBuyingHarness, startMediaBuying } from './support/harness.ts';

interface Metric {
  mediaBuyId: string;
  packageId: string;
  date: string;
  impressions: number;
  clicks: number;
  spend: number;
  currency: string;
}

describe('media buying part 2: delivery from the ad-platform simulator', () => {
  let h: MediaBuyingHarness;
  const clock = new ManualClock(new Date('2026-11-24T12:00:00Z'));
  const metrics = async () =>
    (
      await h.bearer(h.demo.apiKey, {
        url: `/api/v2/buyer/reporting/metrics?take=200&mediaBuyId=${h.demo.mediaBuyId}`,
      })
    ).json() as {
      data: Metric[];
      meta: { pagination: { total: number } };
    };
  const deliver = async () => {
    const res = await h.ops({ method: 'POST', url: '/_ops/ad-platform/deliver' });
    assert.equal(res.statusCode, 202, res.body);
    await h.platform.runDueJobs();
  };

  before(async () => {
    h = await startMediaBuying({ clock });
  });
  after(() => h?.close());

  test('no day is reported before it ends; then each ended day once, with the simulator numbers', async () => {
    await deliver();
    assert.equal((await metrics()).meta.pagination.total, 0, 'the first day has not ended');

    clock.set(new Date('2026-11-27T01:00:00Z'));
    await deliver();
    const after3 = await metrics();
    assert.deepEqual(
      after3.data.map((m) => m.date),
      ['2026-11-26', '2026-11-25', '2026-11-24'],
    );
    const buy = envelopeData<{ packages: { packageId: string; budget: number }[]; status: string }>(
      await h.bearer(h.demo.apiKey, { url: `/api/v2/buyer/media-buys/${h.demo.mediaBuyId}` }),
    );
    const pkg = buy.packages[0]!;
    // The seeded buy: USD 15,000 over 2026-11-24..2026-12-24 (31 days) at a USD 12.50 CPM.
    const expected = await new SimulatedAdPlatform().dailyDelivery({
      mediaBuyId: h.demo.mediaBuyId,
      packageId: pkg.packageId,
      day: '2026-11-24',
      pricingModel: 'cpm',
      unitPrice: 12.5,
      currency: 'USD',
      remainingMinor: 1_500_000,
      dailyBudgetMinor: Math.floor(1_500_000 / 31),
    });
    const first = after3.data.find((m) => m.date === '2026-11-24')!;
    assert.deepEqual(
      { impressions: first.impressions, clicks: first.clicks, spend: first.spend },
      { impressions: expected.impressions, clicks: expected.clicks, spend: expected.spendMinor / 100 },
    );
    assert.ok(first.impressions > 0 && first.spend > 0 && first.clicks > 0);

    // Again without moving the clock: nothing new, nothing twice.
    await deliver();
    assert.equal((await metrics()).meta.pagination.total, 3);
    clock.advance(86_400_000);
    await deliver();
    const after4 = await metrics();
    assert.equal(after4.meta.pagination.total, 4);
    assert.equal(after4.data[0]!.date, '2026-11-27');
    const spent = after4.data.reduce((n, m) => n + m.spend, 0);
    assert.ok(spent <= pkg.budget);
  });

  test('past the end: the whole flight reported within budget, and the buy completed', async () => {
    clock.set(new Date('2027-01-05T00:00:00Z'));
    await deliver();
    const all = await metrics();
    assert.equal(all.meta.pagination.total, 31);
    const spent = all.data.reduce((n, m) => n + Math.round(m.spend * 100), 0);
    assert.ok(spent <= 1_500_000 && spent > 1_000_000, String(spent));
    const buy = envelopeData<{ status: string }>(
      await h.bearer(h.demo.apiKey, { url: `/api/v2/buyer/media-buys/${h.demo.mediaBuyId}` }),
    );
    assert.equal(buy.status, 'completed');
  });

  test('a flight ending at 00:00 UTC does not deliver on that day; start and completion are audit-logged', async () => {
    const seeded = envelopeData<{
      advertiserId: string;
      packages: { productId: string; pricingOptionId: string }[];
    }>(await h.bearer(h.demo.apiKey, { url: `/api/v2/buyer/media-buys/${h.demo.mediaBuyId}` }));
    const campaign = await h.bearer(h.demo.apiKey, {
      method: 'POST',
      url: '/api/v2/buyer/campaigns',
      payload: {
        advertiserId: seeded.advertiserId,
        name: 'Three days',
        budget: { total: 300, currency: 'USD' },
        flightStart: '2027-01-06T00:00:00Z',
        flightEnd: '2027-02-01T00:00:00Z',
      },
    });
    assert.equal(campaign.statusCode, 201, campaign.body);
    const made = await h.bearer(h.demo.apiKey, {
      method: 'POST',
      url: '/api/v2/buyer/media-buys',
      payload: {
        campaignId: envelopeData<{ id: string }>(campaign).id,
        startTime: '2027-01-10T00:00:00Z',
        endTime: '2027-01-13T00:00:00Z',
        packages: [
          {
            productId: seeded.packages[0]!.productId,
            pricingOptionId: seeded.packages[0]!.pricingOptionId,
            budget: 300,
          },
        ],
      },
    });
    assert.equal(made.statusCode, 201, made.body);
    const buyId = envelopeData<{ mediaBuyId: string }>(made).mediaBuyId;
    clock.set(new Date('2027-01-20T00:00:00Z'));
    await deliver();
    const rows = (
      (
        await h.bearer(h.demo.apiKey, { url: `/api/v2/buyer/reporting/metrics?take=200&mediaBuyId=${buyId}` })
      ).json() as { data: Metric[] }
    ).data;
    assert.deepEqual(
      rows.map((m) => m.date),
      ['2027-01-12', '2027-01-11', '2027-01-10'],
    );
    const buy = envelopeData<{ status: string }>(
      await h.bearer(h.demo.apiKey, { url: `/api/v2/buyer/media-buys/${buyId}` }),
    );
    assert.equal(buy.status, 'completed');
    const audit = (
      (await h.bearer(h.demo.apiKey, { url: '/api/v2/buyer/audit-logs?take=200' })).json() as {
        data: { action: string; targetId: string | null }[];
      }
    ).data.filter((e) => e.targetId === buyId);
    assert.deepEqual(
      audit.map((e) => e.action),
      ['media_buy.completed', 'media_buy.started', 'media_buy.created'],
    );
  });
});
