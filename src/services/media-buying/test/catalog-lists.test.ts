/**
 * Part 2's offset lists (spec "Lists and discovery", "Pagination meta"): `take` caps per endpoint (100 or 200),
 * `VALIDATION_ERROR` for a bad `take`/`skip`, `hasMore` at the edges, pages that never repeat or skip a row, and HEAD
 * parity of the advertiser routes. Also the seeded data model: two currencies, the seller account persisted on a buy,
 * and an audit row for each mutation.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { envelopeData, envelopeError, type MediaBuyingHarness, startMediaBuying } from './support/harness.ts';

interface Listed<T = Record<string, unknown>> {
  data: T[];
  error: null;
  meta: { pagination: { skip: number; take: number; total: number; hasMore: boolean } };
}

describe('media buying part 2: offset lists and HEAD', () => {
  let h: MediaBuyingHarness;
  let key: string;
  /** The human feedback entries as their creation answered them, in creation order. */
  const created: Record<string, unknown>[] = [];
  const get = (url: string) => h.bearer(key, { url });

  before(async () => {
    h = await startMediaBuying();
    key = h.demo.apiKey;
    for (let i = 1; i <= 7; i++) {
      const res = await h.bearer(key, {
        method: 'POST',
        url: '/api/v2/buyer/human-feedback',
        payload: {
          rating: (i % 5) + 1,
          comment: `feedback ${i}`,
          ...(i === 7 ? { mediaBuyId: h.demo.mediaBuyId } : {}),
        },
      });
      assert.equal(res.statusCode, 201, res.body);
      created.push(envelopeData<Record<string, unknown>>(res));
    }
  });
  after(() => h?.close());

  test('the seed: storefronts in two currencies, the seller account persisted on the buy, audited mutations', async () => {
    const buy = envelopeData<{
      sellerAccountId: string;
      operator: string;
      currency: string;
      packages: unknown[];
    }>(await get(`/api/v2/buyer/media-buys/${h.demo.mediaBuyId}`));
    assert.equal(buy.sellerAccountId, h.demo.sellerOrganizationId);
    assert.equal(buy.operator, 'demo-buyer.example');
    assert.equal(buy.currency, 'USD');
    assert.equal(buy.packages.length, 1);
    const discovered = envelopeData<{ productGroups: { storefront: { currency: string } }[] }>(
      await h.bearer(key, {
        method: 'POST',
        url: '/api/v2/buyer/discovery/new/discover-products',
        payload: { advertiserId: h.demo.advertiserId },
      }),
    );
    assert.deepEqual(
      new Set(discovered.productGroups.map((g) => g.storefront.currency)),
      new Set(['USD', 'EUR']),
    );
    const audit = (await get('/api/v2/buyer/audit-logs?take=200')).json() as Listed<{ action: string }>;
    const actions = audit.data.map((a) => a.action);
    for (const action of [
      'advertiser.created',
      'buyer_setup.operator_identity_set',
      'campaign.created',
      'media_buy.created',
      'creative.created',
      'human_feedback.created',
      'account.decided',
    ])
      assert.ok(actions.includes(action), `${action} in ${actions.join(', ')}`);
    assert.equal(actions.filter((a) => a === 'human_feedback.created').length, 7);
  });

  test('the human feedback list answers each entry as its creation did (every field), in creation order', async () => {
    const page = (await get('/api/v2/buyer/human-feedback')).json() as Listed;
    assert.deepEqual(page.data, created);
    assert.equal(typeof created[0]!.authorId, 'string');
    assert.equal(created[6]!.mediaBuyId, h.demo.mediaBuyId);
    assert.match(String(created[0]!.createdAt), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  test('pages of take 3 over 7 rows: hasMore true, true, false; no row repeated or skipped', async () => {
    const seen: string[] = [];
    const expectations = [true, true, false];
    for (const [i, hasMore] of expectations.entries()) {
      const res = await get(`/api/v2/buyer/human-feedback?take=3&skip=${i * 3}`);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json() as Listed<{ id: string }>;
      assert.deepEqual(body.meta.pagination, { skip: i * 3, take: 3, total: 7, hasMore });
      seen.push(...body.data.map((r) => r.id));
    }
    assert.equal(seen.length, 7);
    assert.equal(new Set(seen).size, 7);
    // Exactly at the end, and past it.
    const edge = (await get('/api/v2/buyer/human-feedback?take=7')).json() as Listed;
    assert.deepEqual(edge.meta.pagination, { skip: 0, take: 7, total: 7, hasMore: false });
    const six = (await get('/api/v2/buyer/human-feedback?take=6')).json() as Listed;
    assert.equal(six.meta.pagination.hasMore, true);
    const past = (await get('/api/v2/buyer/human-feedback?skip=50')).json() as Listed;
    assert.deepEqual(past.data, []);
    assert.deepEqual(past.meta.pagination, { skip: 50, take: 50, total: 7, hasMore: false });
  });

  test('take is capped per endpoint (200 for the audit log and metrics, 100 for the others)', async () => {
    const caps: [string, number][] = [
      ['/api/v2/buyer/audit-logs', 200],
      ['/api/v2/buyer/reporting/metrics', 200],
      ['/api/v2/buyer/creatives', 100],
      ['/api/v2/buyer/test-cohorts', 100],
      ['/api/v2/buyer/human-feedback', 100],
      ['/api/v2/buyer/advertiser-accounts', 100],
      ['/api/v2/buyer/campaigns', 100],
      ['/api/v2/buyer/advertisers', 100],
    ];
    for (const [url, cap] of caps) {
      const ok = await get(`${url}?take=${cap}`);
      assert.equal(ok.statusCode, 200, `${url} take=${cap}: ${ok.body}`);
      assert.equal((ok.json() as Listed).meta.pagination.take, cap);
      const over = await get(`${url}?take=${cap + 1}`);
      assert.equal(over.statusCode, 400, `${url} take=${cap + 1}`);
      assert.equal(envelopeError(over).code, 'VALIDATION_ERROR');
      assert.equal(envelopeError(over).field, 'query.take');
    }
  });

  test('a bad take or skip is VALIDATION_ERROR; the default page is take 50, skip 0', async () => {
    for (const query of [
      'take=0',
      'take=-1',
      'take=abc',
      'take=1.5',
      'skip=-1',
      'skip=x',
      'skip=99999999999',
    ]) {
      const res = await get(`/api/v2/buyer/creatives?${query}`);
      assert.equal(res.statusCode, 400, `${query}: ${res.body}`);
      assert.equal(envelopeError(res).code, 'VALIDATION_ERROR', query);
    }
    const res = (await get('/api/v2/buyer/creatives')).json() as Listed;
    assert.equal(res.meta.pagination.take, 50);
    assert.equal(res.meta.pagination.skip, 0);
    assert.equal(res.meta.pagination.total, 1);
  });

  test('the audit log is newest first with a total order', async () => {
    const all = (await get('/api/v2/buyer/audit-logs?take=200')).json() as Listed<{ id: string }>;
    const ids = all.data.map((r) => Number(r.id));
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => b - a),
    );
    const pages: number[] = [];
    for (let skip = 0; skip < all.meta.pagination.total; skip += 4)
      pages.push(
        ...(
          (await get(`/api/v2/buyer/audit-logs?take=4&skip=${skip}`)).json() as Listed<{ id: string }>
        ).data.map((r) => Number(r.id)),
      );
    assert.deepEqual(pages, ids);
  });

  test('HEAD of the advertiser routes: the same status and headers as GET, no body', async () => {
    const advertiser = h.demo.advertiserId;
    for (const url of [
      '/api/v2/buyer/advertisers',
      '/api/v2/buyer/advertisers?take=1',
      `/api/v2/buyer/advertisers/${advertiser}`,
      '/api/v2/buyer/advertisers/adv_unknown',
      '/api/v2/buyer/advertisers?take=0',
    ]) {
      const g = await get(url);
      const hd = await h.bearer(key, { method: 'HEAD', url });
      assert.equal(hd.statusCode, g.statusCode, url);
      assert.equal(hd.body, '', url);
      for (const header of ['content-type', 'content-length', 'cache-control'])
        assert.equal(hd.headers[header], g.headers[header], `${url} ${header}`);
    }
    const anonymous = await h.call({ method: 'HEAD', url: '/api/v2/buyer/advertisers' });
    assert.equal(anonymous.statusCode, 401);
    assert.equal(anonymous.body, '');
  });

  test('measurement-engine lists are an alpha feature', async () => {
    const res = await get('/api/v2/buyer/measurement-engine/studies');
    assert.equal(res.statusCode, 403);
    assert.equal(envelopeError(res).code, 'ALPHA_OPT_IN_REQUIRED');
  });

  test('every list: caps (the measurement-engine lists once opted in), hasMore at the edges, pages of one equal the whole', async () => {
    await h.ops({
      method: 'PUT',
      url: `/_ops/organizations/${h.demo.organizationId}/alpha/measurement-engine`,
    });
    for (const [path, name] of [
      ['studies', 'Lift A'],
      ['studies', 'Lift B'],
      ['event-sources', 'Pixel'],
    ]) {
      const made = await h.bearer(key, {
        method: 'POST',
        url: `/api/v2/buyer/measurement-engine/${path}`,
        payload: { name },
      });
      assert.equal(made.statusCode, 201, made.body);
    }
    const lists: [string, number][] = [
      ['/api/v2/buyer/measurement-engine/studies', 100],
      ['/api/v2/buyer/measurement-engine/event-sources', 100],
      ['/api/v2/buyer/media-buys', 100],
      ['/api/v2/buyer/audit-logs', 200],
      ['/api/v2/buyer/reporting/metrics', 200],
      ['/api/v2/buyer/creatives', 100],
      ['/api/v2/buyer/test-cohorts', 100],
      ['/api/v2/buyer/human-feedback', 100],
      ['/api/v2/buyer/advertiser-accounts', 100],
      ['/api/v2/buyer/campaigns', 100],
    ];
    const idOf = (row: Record<string, unknown>) =>
      JSON.stringify(row.id ?? row.mediaBuyId ?? row.accountId ?? row.creativeId ?? row);
    let walked = 0;
    for (const [url, cap] of lists) {
      assert.equal((await get(`${url}?take=${cap}`)).statusCode, 200, url);
      const over = await get(`${url}?take=${cap + 1}`);
      assert.equal(over.statusCode, 400, `${url} take=${cap + 1}`);
      assert.equal(envelopeError(over).code, 'VALIDATION_ERROR');
      const all = (await get(`${url}?take=${cap}`)).json() as Listed;
      const total = all.meta.pagination.total;
      assert.equal(all.data.length, total, url);
      if (total === 0) continue;
      const exact = (await get(`${url}?take=${total}`)).json() as Listed;
      assert.equal(exact.meta.pagination.hasMore, false, url);
      const past = (await get(`${url}?take=1&skip=${total}`)).json() as Listed;
      assert.deepEqual(
        [past.data, past.meta.pagination.hasMore, past.meta.pagination.total],
        [[], false, total],
      );
      const ones: string[] = [];
      for (let skip = 0; skip < total; skip++) {
        const one = (await get(`${url}?take=1&skip=${skip}`)).json() as Listed;
        assert.equal(one.meta.pagination.hasMore, skip < total - 1, `${url} skip=${skip}`);
        ones.push(...one.data.map(idOf));
      }
      assert.deepEqual(ones, all.data.map(idOf), `${url}: pages of one repeat or skip a row`);
      walked += 1;
    }
    assert.ok(walked >= 8, `only ${walked} lists had rows`);
  });
});
