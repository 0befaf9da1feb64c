/**
 * Buyer Setup step 1 (`BUYER_SETUP_REQUIRED` with each reason, never substituting the platform's domain), the buying
 * checks of a media buy (`PRICING_NOT_CONFIGURED`, `CURRENCY_MISMATCH`, `INSUFFICIENT_MEDIA_BUDGET`), historical buys
 * keeping their persisted seller account and operator, the storefront REST for sellers and account-link decisions,
 * and discovery paging, sessions and their expiry at the end of the UTC day (by the clock).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../../platform/clock.ts';
import { platformDomainsOf } from '../catalog/index.ts';
import {
  envelopeData,
  envelopeError,
  type MediaBuyingHarness,
  STRONG_PASSWORD,
  startMediaBuying,
} from './support/harness.ts';

const UI = 'https://app.media-buying.test';
const SETUP_DETAILS = { readinessCheck: 'operator_identity', setupStep: 1, setupPage: 'buyer_setup' };

interface Discovered {
  discoveryId: string;
  productGroups: {
    storefront: { id: string; currency: string };
    totalProducts: number;
    hasMoreProducts: boolean;
    products: {
      productId: string;
      quoteId: string;
      available: boolean;
      pricingOptions: { pricingOptionId: string }[];
      quotes: { pricedForDay: string; pricingOptionId: string; price: number | null }[];
    }[];
  }[];
  totalGroups: number;
  hasMoreGroups: boolean;
  summary: { totalProducts: number };
}

describe('media buying part 2: Buyer Setup, buying checks, storefronts, discovery', () => {
  let h: MediaBuyingHarness;
  const clock = new ManualClock(new Date('2026-11-24T12:00:00Z'));
  let buyer: string; // session of a new Buyer Account's administrator
  let advertiserId: string;
  let buyerOrg: string;

  const as = (cookie: string, method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, payload?: unknown) =>
    h.session(cookie, { method, url, ...(payload === undefined ? {} : { payload }) });
  const discover = (cookie: string, id: string, body: Record<string, unknown>) =>
    as(cookie, 'POST', `/api/v2/buyer/discovery/${id}/discover-products`, body);

  before(async () => {
    h = await startMediaBuying({
      clock,
      env: { MEDIA_BUYING_UI_ORIGIN: UI, MEDIA_BUYING_COOKIE_DOMAIN: 'media-buying.test' },
    });
    buyerOrg = await h.createOrganization('buyer', 'Acme Agency');
    await h.addMember(buyerOrg, 'acme-admin@example.com', 'admin');
    buyer = await h.signInAccepted('acme-admin@example.com', STRONG_PASSWORD);
    advertiserId = envelopeData<{ id: string }>(
      await as(buyer, 'POST', '/api/v2/buyer/advertisers', { name: 'Acme Shoes' }),
    ).id;
  });
  after(() => h?.close());

  const campaignBody = (total: number, currency = 'USD') => ({
    advertiserId,
    name: 'Spring',
    budget: { total, currency },
    flightStart: '2026-11-25T00:00:00Z',
    flightEnd: '2026-12-25T00:00:00Z',
  });

  test('BUYER_SETUP_REQUIRED missing_operator_identity on every buying route until step 1 is done', async () => {
    const setup = envelopeData<{ complete: boolean; reason: string }>(
      await as(buyer, 'GET', '/api/v2/buyer/setup'),
    );
    assert.deepEqual([setup.complete, setup.reason], [false, 'missing_operator_identity']);
    for (const res of [
      await as(buyer, 'POST', '/api/v2/buyer/campaigns', campaignBody(1000)),
      await as(buyer, 'POST', '/api/v2/buyer/media-buys', {
        campaignId: h.demo.campaignId,
        packages: [{ productId: 'prd_x', pricingOptionId: 'x', budget: 1 }],
      }),
      await discover(buyer, 'new', { advertiserId }),
      await as(buyer, 'POST', '/api/v2/buyer/advertiser-accounts', {
        advertiserId,
        storefrontId: 'sf_00000000000000000000000000000000',
      }),
    ]) {
      assert.equal(res.statusCode, 409, res.body);
      const error = envelopeError(res);
      assert.equal(error.code, 'BUYER_SETUP_REQUIRED');
      assert.deepEqual(error.details, { reason: 'missing_operator_identity', ...SETUP_DETAILS });
    }
  });

  test("the platform's own domain is refused, never substituted: platform_operator_not_allowed", async () => {
    // The UI host, a subdomain of it, the configured parent domain (the apex) and any other host under it.
    for (const domain of [
      'app.media-buying.test',
      'eu.app.media-buying.test',
      'media-buying.test',
      'MEDIA-BUYING.test',
      'api.media-buying.test',
    ]) {
      const res = await as(buyer, 'PUT', '/api/v2/buyer/setup/operator-identity', { domain, name: 'Us' });
      assert.equal(res.statusCode, 422, res.body);
      assert.equal(envelopeError(res).field, 'domain');
    }
    // Migrated data naming the platform's domain: buying routes refuse it with the second reason.
    const forced = await h.ops({
      method: 'PUT',
      url: `/_ops/organizations/${buyerOrg}/operator-identity`,
      payload: { domain: 'APP.media-buying.test', name: 'Legacy' },
    });
    assert.equal(forced.statusCode, 200, forced.body);
    const res = await as(buyer, 'POST', '/api/v2/buyer/campaigns', campaignBody(1000));
    assert.equal(res.statusCode, 409);
    assert.deepEqual(envelopeError(res).details, {
      reason: 'platform_operator_not_allowed',
      ...SETUP_DETAILS,
    });
    const setup = envelopeData<{ reason: string }>(await as(buyer, 'GET', '/api/v2/buyer/setup'));
    assert.equal(setup.reason, 'platform_operator_not_allowed');
  });

  test('after step 1: a campaign and a media buy; each buying check; history keeps its seller account', async () => {
    const set = await as(buyer, 'PUT', '/api/v2/buyer/setup/operator-identity', {
      domain: 'Acme-Agency.example',
      name: 'Acme Agency Ltd',
    });
    assert.equal(set.statusCode, 200, set.body);
    assert.equal(envelopeData<{ domain: string }>(set).domain, 'acme-agency.example');
    const campaign = envelopeData<{ id: string; budget: { total: number; currency: string } }>(
      await as(buyer, 'POST', '/api/v2/buyer/campaigns', campaignBody(1000.5)),
    );
    assert.deepEqual(campaign.budget, { total: 1000.5, currency: 'USD' });
    const tooPrecise = await as(buyer, 'POST', '/api/v2/buyer/campaigns', campaignBody(10.001));
    assert.equal(tooPrecise.statusCode, 422);

    const d = envelopeData<Discovered>(await discover(buyer, 'new', { advertiserId, productsPerGroup: 50 }));
    const usd = d.productGroups.find((g) => g.storefront.currency === 'USD')!.products[0]!;
    const eur = d.productGroups.find((g) => g.storefront.currency === 'EUR')!.products[0]!;
    const pkg = (p: typeof usd, budget: number) => ({
      productId: p.productId,
      pricingOptionId: p.pricingOptions[0]!.pricingOptionId,
      budget,
    });
    const mismatch = await as(buyer, 'POST', '/api/v2/buyer/media-buys', {
      campaignId: campaign.id,
      packages: [pkg(eur, 10)],
    });
    assert.equal(mismatch.statusCode, 400, mismatch.body);
    assert.equal(envelopeError(mismatch).code, 'CURRENCY_MISMATCH');
    const over = await as(buyer, 'POST', '/api/v2/buyer/media-buys', {
      campaignId: campaign.id,
      packages: [pkg(usd, 1000.51)],
    });
    assert.equal(over.statusCode, 409);
    assert.equal(envelopeError(over).code, 'INSUFFICIENT_MEDIA_BUDGET');
    assert.deepEqual(envelopeError(over).details, {
      campaignId: campaign.id,
      currency: 'USD',
      budgetTotal: 1000.5,
      committed: 0,
      requested: 1000.51,
    });
    // The buy runs inside the campaign's flight (2026-11-25 .. 2026-12-25).
    for (const [times, field] of [
      [{ startTime: '2026-11-20T00:00:00Z' }, 'startTime'],
      [{ endTime: '2027-01-01T00:00:00Z' }, 'endTime'],
    ] as const) {
      const outside = await as(buyer, 'POST', '/api/v2/buyer/media-buys', {
        campaignId: campaign.id,
        ...times,
        packages: [pkg(usd, 1)],
      });
      assert.equal(outside.statusCode, 422, outside.body);
      assert.equal(envelopeError(outside).field, field);
    }
    // A product whose own sales agent is archived cannot be bought.
    const pool = h.platform.booted.services.get('media-buying')!.ctx.pool;
    const agentOf = `(select a.id from media_buying.sales_agents a join media_buying.products p
      on p.storefront_id = a.storefront_id where p.public_id = $1 order by a.id limit 1)`;
    await pool.query(`update media_buying.products set sales_agent_id = ${agentOf} where public_id = $1`, [
      usd.productId,
    ]);
    await pool.query(`update media_buying.sales_agents set archived_at = now() where id = ${agentOf}`, [
      usd.productId,
    ]);
    const archivedAgent = await as(buyer, 'POST', '/api/v2/buyer/media-buys', {
      campaignId: campaign.id,
      packages: [pkg(usd, 1)],
    });
    assert.equal(archivedAgent.statusCode, 422, archivedAgent.body);
    assert.equal(envelopeError(archivedAgent).field, 'packages.0.productId');
    await pool.query(`update media_buying.sales_agents set archived_at = null where id = ${agentOf}`, [
      usd.productId,
    ]);
    const made = await as(buyer, 'POST', '/api/v2/buyer/media-buys', {
      campaignId: campaign.id,
      packages: [pkg(usd, 600)],
    });
    assert.equal(made.statusCode, 201, made.body);
    const buy = envelopeData<{
      mediaBuyId: string;
      sellerAccountId: string;
      operator: string;
      status: string;
    }>(made);
    assert.equal(buy.sellerAccountId, h.demo.sellerOrganizationId);
    assert.equal(buy.operator, 'acme-agency.example');
    assert.equal(buy.status, 'pending_start');
    const second = await as(buyer, 'POST', '/api/v2/buyer/media-buys', {
      campaignId: campaign.id,
      packages: [pkg(usd, 400.51)],
    });
    assert.equal(envelopeError(second).code, 'INSUFFICIENT_MEDIA_BUDGET');
    assert.equal(envelopeError(second).details?.committed, 600);

    // A later operator identity does not rewrite the historical buy.
    await as(buyer, 'PUT', '/api/v2/buyer/setup/operator-identity', {
      domain: 'acme-new.example',
      name: 'Acme',
    });
    const again = envelopeData<{ operator: string; sellerAccountId: string }>(
      await as(buyer, 'GET', `/api/v2/buyer/media-buys/${buy.mediaBuyId}`),
    );
    assert.deepEqual(again, {
      ...again,
      operator: 'acme-agency.example',
      sellerAccountId: h.demo.sellerOrganizationId,
    });
  });

  test('storefront REST: a seller adds a storefront, agent and product; no pricing rule is PRICING_NOT_CONFIGURED', async () => {
    const sellerOrg = await h.createOrganization('seller', 'Riverside Media');
    await h.addMember(sellerOrg, 'river-admin@example.com', 'admin');
    const seller = await h.signInAccepted('river-admin@example.com', STRONG_PASSWORD);
    const sf = envelopeData<{ id: string; status: string }>(
      await as(seller, 'POST', '/api/v2/storefront/storefronts', { name: 'River News', currency: 'USD' }),
    );
    assert.equal(sf.status, 'active');
    const agent = envelopeData<{ id: string; pricingConfigured: boolean }>(
      await as(seller, 'POST', `/api/v2/storefront/storefronts/${sf.id}/sales-agents`, {
        name: 'River agent',
        capabilities: ['pause'],
      }),
    );
    assert.equal(agent.pricingConfigured, false);
    const wrongCurrency = await as(seller, 'POST', `/api/v2/storefront/storefronts/${sf.id}/products`, {
      name: 'Front page',
      description: 'The front page',
      deliveryType: 'guaranteed',
      channels: ['display'],
      formatIds: [{ agentUrl: 'https://creative.example', id: 'display_300x250' }],
      publisherProperties: [{ publisherDomain: 'river.example', selectionType: 'all' }],
      pricingOptions: [{ pricingOptionId: 'cpm', pricingModel: 'cpm', currency: 'EUR', fixedPrice: 5 }],
    });
    assert.equal(wrongCurrency.statusCode, 422);
    const product = envelopeData<{ productId: string }>(
      await as(seller, 'POST', `/api/v2/storefront/storefronts/${sf.id}/products`, {
        name: 'Front page',
        description: 'The front page',
        deliveryType: 'guaranteed',
        channels: ['display'],
        formatIds: [{ agentUrl: 'https://creative.example', id: 'display_300x250' }],
        publisherProperties: [{ publisherDomain: 'river.example', selectionType: 'all' }],
        pricingOptions: [{ pricingOptionId: 'cpm', pricingModel: 'cpm', currency: 'USD', fixedPrice: 5 }],
      }),
    );
    const listed = (await as(seller, 'GET', `/api/v2/storefront/storefronts/${sf.id}/products`)).json() as {
      data: { productId: string }[];
      meta: { pagination: { total: number } };
    };
    assert.deepEqual(
      listed.data.map((p) => p.productId),
      [product.productId],
    );
    // A buyer is refused seller routes.
    const refused = await as(buyer, 'GET', '/api/v2/storefront/storefronts');
    assert.equal(refused.statusCode, 403);

    const campaign = envelopeData<{ id: string }>(
      await as(buyer, 'POST', '/api/v2/buyer/campaigns', campaignBody(500)),
    );
    const unpriced = await as(buyer, 'POST', '/api/v2/buyer/media-buys', {
      campaignId: campaign.id,
      packages: [{ productId: product.productId, pricingOptionId: 'cpm', budget: 100 }],
    });
    assert.equal(unpriced.statusCode, 409, unpriced.body);
    assert.equal(envelopeError(unpriced).code, 'PRICING_NOT_CONFIGURED');
    const rule = await as(seller, 'PUT', `/api/v2/storefront/sales-agents/${agent.id}/pricing-rule`, {
      platformFeeBps: 1200,
    });
    assert.equal(rule.statusCode, 200, rule.body);
    const priced = await as(buyer, 'POST', '/api/v2/buyer/media-buys', {
      campaignId: campaign.id,
      packages: [{ productId: product.productId, pricingOptionId: 'cpm', budget: 100 }],
    });
    assert.equal(priced.statusCode, 201, priced.body);
    const buyId = envelopeData<{ mediaBuyId: string }>(priced).mediaBuyId;
    // Replacing the storefront later leaves the buy's persisted seller account as it was.
    const replaced = await as(seller, 'PATCH', `/api/v2/storefront/storefronts/${sf.id}`, {
      status: 'replaced',
    });
    assert.equal(envelopeData<{ status: string }>(replaced).status, 'replaced');
    const back = await as(seller, 'PATCH', `/api/v2/storefront/storefronts/${sf.id}`, { status: 'active' });
    assert.equal(back.statusCode, 409);
    const buy = envelopeData<{ sellerAccountId: string }>(
      await as(buyer, 'GET', `/api/v2/buyer/media-buys/${buyId}`),
    );
    assert.equal(buy.sellerAccountId, sellerOrg);
  });

  test('account-link decisions by the seller follow the statuses; rejected and closed are final', async () => {
    const demo = await h.signIn(h.demo.email, h.demo.password);
    await as(demo, 'POST', '/api/v2/organizations/active', { organizationId: h.demo.sellerOrganizationId });
    const links = (await as(demo, 'GET', '/api/v2/storefront/account-links')).json() as {
      data: { accountId: string; status: string }[];
    };
    const id = links.data[0]!.accountId;
    assert.equal(links.data[0]!.status, 'active');
    const decide = (decision: string) =>
      as(demo, 'POST', `/api/v2/storefront/account-links/${id}/decision`, { decision });
    assert.equal(envelopeData<{ status: string }>(await decide('suspend')).status, 'suspended');
    assert.equal((await decide('require_payment')).statusCode, 409);
    assert.equal(envelopeData<{ status: string }>(await decide('reactivate')).status, 'active');
    assert.equal(
      envelopeData<{ status: string }>(await decide('require_payment')).status,
      'payment_required',
    );
    assert.equal(envelopeData<{ status: string }>(await decide('mark_paid')).status, 'active');
    assert.equal(envelopeData<{ status: string }>(await decide('close')).status, 'closed');
    const final = await decide('reactivate');
    assert.equal(final.statusCode, 409);
    assert.equal(envelopeError(final).details?.reason, 'illegal_transition');
  });

  test('a buyer requests an account link over REST; the seller decides it; media buys are an offset list', async () => {
    const d = envelopeData<Discovered>(await discover(buyer, 'new', { advertiserId }));
    const storefrontId = d.productGroups.find(
      (g) => (g.storefront as { sellerAccountId?: string }).sellerAccountId === h.demo.sellerOrganizationId,
    )!.storefront.id;
    const request = (body: Record<string, unknown>) =>
      as(buyer, 'POST', '/api/v2/buyer/advertiser-accounts', body);
    const created = await request({ advertiserId, storefrontId, name: 'Acme EU' });
    assert.equal(created.statusCode, 201, created.body);
    const link = envelopeData<{ accountId: string; status: string; storefrontId: string; operator: string }>(
      created,
    );
    assert.deepEqual([link.status, link.storefrontId], ['pending_approval', storefrontId]);
    assert.equal(link.operator, 'acme-new.example');
    const again = await request({ advertiserId, storefrontId });
    assert.equal(again.statusCode, 200);
    assert.equal(envelopeData<{ accountId: string }>(again).accountId, link.accountId);
    assert.equal((await request({ advertiserId, storefrontId: 'sf_unknown' })).statusCode, 404);
    assert.equal(
      (await request({ advertiserId: h.demo.advertiserId, storefrontId })).statusCode,
      404,
      "another account's advertiser",
    );
    assert.equal((await request({ advertiserId, storefrontId, extra: 1 })).statusCode, 400);
    const listed = envelopeData<{ accountId: string }[]>(
      await as(buyer, 'GET', '/api/v2/buyer/advertiser-accounts'),
    );
    assert.deepEqual(
      listed.map((a) => a.accountId),
      [link.accountId],
    );
    // The seller sees the request and approves it; the buyer's link follows.
    const demo = await h.signIn(h.demo.email, h.demo.password);
    await as(demo, 'POST', '/api/v2/organizations/active', { organizationId: h.demo.sellerOrganizationId });
    const approved = await as(demo, 'POST', `/api/v2/storefront/account-links/${link.accountId}/decision`, {
      decision: 'approve',
    });
    assert.equal(approved.statusCode, 200, approved.body);
    const after = envelopeData<{ status: string }[]>(
      await as(buyer, 'GET', '/api/v2/buyer/advertiser-accounts'),
    );
    assert.equal(after[0]!.status, 'active');

    // Media buys: the buy made earlier, with its packages and persisted seller account; paging and caps.
    const usd = d.productGroups.find((g) => g.storefront.currency === 'USD')!.products[0]!;
    const campaign = envelopeData<{ id: string }>(
      await as(buyer, 'POST', '/api/v2/buyer/campaigns', campaignBody(100)),
    );
    const second = envelopeData<{ mediaBuyId: string }>(
      await as(buyer, 'POST', '/api/v2/buyer/media-buys', {
        campaignId: campaign.id,
        packages: [
          { productId: usd.productId, pricingOptionId: usd.pricingOptions[0]!.pricingOptionId, budget: 50 },
        ],
      }),
    );
    type Buys = {
      data: {
        mediaBuyId: string;
        sellerAccountId: string;
        packages: { productId: string; budget: number }[];
      }[];
      meta: { pagination: { skip: number; take: number; total: number; hasMore: boolean } };
    };
    const all = (await as(buyer, 'GET', '/api/v2/buyer/media-buys')).json() as Buys;
    const n = all.meta.pagination.total;
    assert.ok(n >= 2, 'the buys made in earlier tests and this one');
    assert.equal(all.data.length, n);
    assert.equal(all.data.at(-1)!.mediaBuyId, second.mediaBuyId, 'creation order');
    assert.deepEqual(all.data.at(-1)!.packages, [
      { ...all.data.at(-1)!.packages[0]!, productId: usd.productId, budget: 50 },
    ]);
    assert.ok(all.data.every((b) => b.packages.length >= 1));
    assert.ok(all.data.every((b) => b.sellerAccountId.length > 0));
    const firstPage = (await as(buyer, 'GET', '/api/v2/buyer/media-buys?take=1')).json() as Buys;
    const lastPage = (await as(buyer, 'GET', `/api/v2/buyer/media-buys?take=1&skip=${n - 1}`)).json() as Buys;
    const past = (await as(buyer, 'GET', `/api/v2/buyer/media-buys?take=1&skip=${n}`)).json() as Buys;
    assert.deepEqual(firstPage.meta.pagination, { skip: 0, take: 1, total: n, hasMore: true });
    assert.deepEqual(lastPage.meta.pagination, { skip: n - 1, take: 1, total: n, hasMore: false });
    assert.deepEqual([past.data, past.meta.pagination.total], [[], n]);
    assert.deepEqual(
      [firstPage.data[0]!.mediaBuyId, lastPage.data[0]!.mediaBuyId],
      [all.data[0]!.mediaBuyId, second.mediaBuyId],
    );
    const tooMany = await as(buyer, 'GET', '/api/v2/buyer/media-buys?take=101');
    assert.equal(tooMany.statusCode, 400);
    assert.equal(envelopeError(tooMany).code, 'VALIDATION_ERROR');
    // Another Buyer Account sees only its own.
    const demoBuys = (
      await h.bearer(h.demo.apiKey, { url: '/api/v2/buyer/media-buys?take=100' })
    ).json() as Buys;
    assert.ok(!demoBuys.data.some((b) => all.data.some((o) => o.mediaBuyId === b.mediaBuyId)));
  });

  test('discovery: group and product paging, the kept session, expiry at the end of the UTC day', async () => {
    const first = envelopeData<Discovered>(
      await discover(buyer, 'new', { advertiserId, groupLimit: 2, productsPerGroup: 2 }),
    );
    assert.equal(first.totalGroups, 3); // the seeded storefronts (River News was replaced: not active)
    assert.equal(first.productGroups.length, 2);
    assert.equal(first.hasMoreGroups, true);
    const total = first.summary.totalProducts;
    assert.equal(total, 6);
    const big = first.productGroups[0]!;
    assert.equal(big.totalProducts, 3);
    assert.equal(big.products.length, 2);
    assert.equal(big.hasMoreProducts, true);
    assert.equal(big.products[0]!.quotes[0]!.pricedForDay, '2026-11-24');
    const rest = envelopeData<Discovered>(
      await discover(buyer, first.discoveryId, {
        advertiserId,
        groupOffset: 2,
        groupLimit: 2,
        productOffset: 2,
        productsPerGroup: 2,
      }),
    );
    assert.equal(rest.discoveryId, first.discoveryId);
    assert.equal(rest.hasMoreGroups, false);
    assert.equal(rest.productGroups.length, first.totalGroups - 2);
    const tail = envelopeData<Discovered>(
      await discover(buyer, first.discoveryId, {
        advertiserId,
        groupLimit: 1,
        productOffset: 2,
        productsPerGroup: 2,
      }),
    );
    assert.equal(tail.productGroups[0]!.products.length, 1);
    assert.equal(tail.productGroups[0]!.hasMoreProducts, false);
    assert.equal(tail.summary.totalProducts, total);

    // The kept session is fixed: after a seller adds a product, reprices one, archives one and archives a
    // storefront, the same pages answer the same products, quote ids and prices; what became unavailable keeps its
    // place with no quote.
    const pool = h.platform.booted.services.get('media-buying')!.ctx.pool;
    const page = async () =>
      envelopeData<Discovered>(
        await discover(buyer, first.discoveryId, { advertiserId, groupLimit: 50, productsPerGroup: 50 }),
      );
    const before = await page();
    const [repriced, archived] = before.productGroups[0]!.products;
    const quoted = repriced!.quotes[0]!;
    await pool.query(
      `insert into media_buying.products (public_id, organization_id, storefront_id, sales_agent_id, name, description,
         delivery_type, channels, format_ids, publisher_properties, pricing_options, status, created_at, updated_at)
       select 'prd_' || md5(random()::text), organization_id, storefront_id, sales_agent_id, 'Added later', description,
         delivery_type, channels, format_ids, publisher_properties, pricing_options, 'active', created_at, updated_at
       from media_buying.products where public_id = $1`,
      [repriced!.productId],
    );
    await pool.query(
      `update media_buying.products set pricing_options = jsonb_set(pricing_options, '{0,fixedPrice}', '999')
       where public_id = $1`,
      [repriced!.productId],
    );
    await pool.query(`update media_buying.products set status = 'archived' where public_id = $1`, [
      archived!.productId,
    ]);
    const closedStorefront = before.productGroups[1]!.storefront.id;
    await pool.query(`update media_buying.storefronts set status = 'archived' where public_id = $1`, [
      closedStorefront,
    ]);
    const after = await page();
    assert.equal(after.summary.totalProducts, total, 'a product added later does not shift the kept session');
    assert.deepEqual(
      after.productGroups.map((g) => g.products.map((p) => [p.productId, p.quoteId])),
      before.productGroups.map((g) => g.products.map((p) => [p.productId, p.quoteId])),
    );
    const keptQuote = after.productGroups[0]!.products[0]!.quotes[0]!;
    assert.deepEqual([keptQuote.pricingOptionId, keptQuote.price], [quoted.pricingOptionId, quoted.price]);
    assert.notEqual(quoted.price, 999);
    const gone = after.productGroups[0]!.products[1]!;
    assert.deepEqual([gone.productId, gone.available, gone.quotes], [archived!.productId, false, []]);
    for (const p of after.productGroups[1]!.products) assert.deepEqual([p.available, p.quotes], [false, []]);
    assert.ok(after.productGroups[2]!.products.every((p) => p.available && p.quotes.length > 0));
    // A new session sees the catalog as it is now: the added product and the new price, without the archived ones.
    const now = envelopeData<Discovered>(
      await discover(buyer, 'new', { advertiserId, groupLimit: 50, productsPerGroup: 50 }),
    );
    assert.equal(now.totalGroups, first.totalGroups - 1);
    assert.ok(!now.productGroups.some((g) => g.storefront.id === closedStorefront));
    const fresh0 = now.productGroups[0]!.products;
    assert.equal(fresh0.find((p) => p.productId === repriced!.productId)?.quotes[0]?.price, 999);
    assert.ok(!fresh0.some((p) => p.productId === archived!.productId));
    assert.equal(fresh0.length, 3);
    const foreign = await discover(buyer, 'dsc_unknown', { advertiserId });
    assert.equal(foreign.statusCode, 404);
    // The next UTC day: the session's quotes expired.
    clock.set(new Date('2026-11-25T00:00:00Z'));
    const expired = await discover(buyer, first.discoveryId, { advertiserId });
    assert.equal(expired.statusCode, 409);
    assert.equal(envelopeError(expired).details?.reason, 'discovery_expired');
    const fresh = envelopeData<Discovered>(await discover(buyer, 'new', { advertiserId }));
    assert.equal(fresh.productGroups[0]!.products[0]!.quotes[0]!.pricedForDay, '2026-11-25');
    // The hourly prune deletes sessions (and their quotes) expired more than 7 days ago; later ones are kept.
    const prune = async () => {
      await pool.query(
        `select graphile_worker.add_job('media-buying:prune-discovery-and-enrolments', '{}'::json)`,
      );
      await h.platform.runDueJobs();
    };
    const sessions = async () =>
      (
        await pool.query(
          `select s.public_id, count(q.id)::int as quotes from media_buying.discovery_sessions s
           left join media_buying.discovery_quotes q on q.session_id = s.id
           where s.public_id = any($1) group by s.public_id order by s.public_id`,
          [[first.discoveryId, fresh.discoveryId]],
        )
      ).rows as { public_id: string; quotes: number }[];
    clock.set(new Date('2026-12-01T23:59:00Z'));
    await prune();
    assert.equal((await sessions()).length, 2, 'kept 7 days after expiry');
    clock.set(new Date('2026-12-02T00:00:01Z'));
    await prune();
    const left = await sessions();
    assert.deepEqual(
      left.map((r) => r.public_id),
      [fresh.discoveryId],
    );
    assert.ok(left[0]!.quotes > 0);
    const orphans = await pool.query(
      `select count(*)::int as n from media_buying.discovery_quotes q
       where not exists (select 1 from media_buying.discovery_sessions s where s.id = q.session_id)`,
    );
    assert.equal((orphans.rows[0] as { n: number }).n, 0);
  });
});

test("the platform's domains: each host, its registrable domain (Public Suffix List, private suffixes too), the parent", () => {
  assert.deepEqual(platformDomainsOf(['API.Adsuite.co.uk', 'app.adsuite.co.uk'], undefined), [
    'api.adsuite.co.uk',
    'adsuite.co.uk',
    'app.adsuite.co.uk',
  ]);
  // A private suffix (a hosting platform's): the apex is the app's own name, never every tenant of the host.
  assert.deepEqual(platformDomainsOf(['mediabuy.herokuapp.com'], undefined), ['mediabuy.herokuapp.com']);
  // An address or localhost has no registrable domain.
  assert.deepEqual(platformDomainsOf(['127.0.0.1', 'localhost'], 'Example.com'), [
    '127.0.0.1',
    'localhost',
    'example.com',
  ]);
});

describe('Buyer Setup without a configured parent domain: the apex comes from the Public Suffix List', () => {
  let h: MediaBuyingHarness;
  let buyer: string;
  before(async () => {
    h = await startMediaBuying({ env: { MEDIA_BUYING_UI_ORIGIN: 'https://app.adsuite.co.uk' } });
    const org = await h.createOrganization('buyer', 'Apex Agency');
    await h.addMember(org, 'apex-admin@example.com', 'admin');
    buyer = await h.signInAccepted('apex-admin@example.com', STRONG_PASSWORD);
  });
  after(() => h?.close());

  test('the UI host apex and any host under it are refused; a domain beside it under the same suffix is not', async () => {
    const put = (domain: string) =>
      h.session(buyer, {
        method: 'PUT',
        url: '/api/v2/buyer/setup/operator-identity',
        payload: { domain, name: 'Us' },
      });
    for (const domain of ['adsuite.co.uk', 'www.adsuite.co.uk', 'AdSuite.co.uk']) {
      const res = await put(domain);
      assert.equal(res.statusCode, 422, `${domain}: ${res.body}`);
      assert.equal(envelopeError(res).field, 'domain');
    }
    const res = await put('other-agency.co.uk');
    assert.equal(res.statusCode, 200, res.body);
  });
});
