/**
 * The MCP buying tools (issue 18): `create_media_buy`, `update_media_buy`, `sync_creatives`, `sync_accounts`,
 * `list_accounts` called with a real caller and database through a harness that does what the MCP layer does
 * (`support/mcp-tools.ts`). Every error code reached through the simulator with its `recovery` and details, each
 * mutation-outcome row and what it does to the key, two instances racing one key (one effect), the account-link
 * transitions, key expiry by the clock; every argument and result validated against AdCP's own schemas.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { and, count, eq } from 'drizzle-orm';
import { ManualClock } from '../../../platform/clock.ts';
import { openDatabase } from '../../../platform/database.ts';
import type { ServiceContext } from '../../../platform/service.ts';
import { convertMinor } from '../catalog/index.ts';
import {
  advertiserAccounts,
  buyerOperatorIdentities,
  campaigns,
  creatives,
  deliveryMetrics,
  discoveryQuotes,
  discoverySessions,
  mediaBuys,
  organizations,
  pricingRules,
  products,
  salesAgents,
  storefronts,
} from '../db/schema.ts';
import type { McpTool, McpToolContext } from '../mcp/contract.ts';
import { adcpSchemaErrors } from './support/adcp-schemas.ts';
import {
  envelopeData,
  type MediaBuyingHarness,
  STRONG_PASSWORD,
  startMediaBuying,
} from './support/harness.ts';
import { adcpError, buildTools, callTool, contextsOf, ok, type ToolResult } from './support/mcp-tools.ts';

const SCHEMAS: Record<string, [string, string]> = {
  create_media_buy: ['media-buy/create-media-buy-request.json', 'media-buy/create-media-buy-response.json'],
  update_media_buy: ['media-buy/update-media-buy-request.json', 'media-buy/update-media-buy-response.json'],
  sync_creatives: ['creative/sync-creatives-request.json', 'creative/sync-creatives-response.json'],
  sync_accounts: ['account/sync-accounts-request.json', 'account/sync-accounts-response.json'],
  list_accounts: ['account/list-accounts-request.json', 'account/list-accounts-response.json'],
};

type Sf = { id: number; publicId: string; organizationId: number };

describe('MCP buying tools (issue 18)', () => {
  const clock = new ManualClock(new Date('2026-11-24T12:00:00Z'));
  let h: MediaBuyingHarness;
  let svc: ServiceContext;
  let tools: Map<string, McpTool>;
  let buyer: McpToolContext;
  let at: (sf: Sf) => McpToolContext;
  let demoSf: Sf;
  let streamingSf: Sf;
  let europeSf: Sf;
  let homepage: string;
  let streamingProduct: string;
  let europeProduct: string;
  let demoAccount: string;
  let keyN = 0;
  const key = () => `test-key-${String(++keyN).padStart(8, '0')}-${Date.now()}`;

  /** Calls a tool, validating its arguments and its result against AdCP's schemas. */
  const call = async (ctx: McpToolContext, name: string, args: Record<string, unknown>, t = tools) => {
    const [request, response] = SCHEMAS[name]!;
    assert.deepEqual(adcpSchemaErrors(request, args), [], `${name} arguments`);
    const result = await callTool(t, ctx, name, args);
    if (!result.isError)
      assert.deepEqual(adcpSchemaErrors(response, result.structuredContent), [], `${name} result`);
    else {
      const error = adcpError(result);
      assert.deepEqual(adcpSchemaErrors('core/error.json', error), [], `${name} error`);
      // Spec "Errors": a buyer-actionable error of these tools carries a buyer_reason (an AdCP code). The MCP
      // layer's own argument validation (VALIDATION_ERROR, mcp-core's) is not the tool's.
      if (
        error.recovery === 'correctable' &&
        error.code !== 'VALIDATION_ERROR' &&
        !['sync_accounts', 'list_accounts'].includes(name)
      )
        assert.ok(error.buyer_reason?.code, `${name} ${error.code} without buyer_reason`);
    }
    return result;
  };
  const ops = (method: 'PUT' | 'POST', url: string, payload?: unknown) =>
    h.ops({ method, url, ...(payload === undefined ? {} : { payload }) });
  const faults = async (sf: Sf, body: Record<string, unknown>) => {
    const res = await ops('PUT', `/_ops/ad-platform-faults/storefront/${sf.publicId}`, body);
    assert.equal(res.statusCode, 200, res.body);
  };
  const settings = async (sf: Sf, body: Record<string, unknown>) => {
    const res = await ops('PUT', `/_ops/storefronts/${sf.publicId}/buying-settings`, {
      approvalRequired: false,
      managed: false,
      supportedTargeting: null,
      destinationProfile: null,
      ...body,
    });
    assert.equal(res.statusCode, 200, res.body);
  };
  const restBuy = async (id: string) =>
    envelopeData<{ mediaBuyId: string; status: string; totalBudget: number }>(
      await h.bearer(h.demo.apiKey, { url: `/api/v2/buyer/media-buys/${id}` }),
    );
  const buyCount = async () => (await svc.db.select({ n: count() }).from(mediaBuys))[0]!.n;
  const createArgs = (over: Record<string, unknown> = {}, pkg: Record<string, unknown> = {}) => ({
    adcp_version: '3.1',
    idempotency_key: key(),
    account: { account_id: demoAccount },
    brand: { domain: 'demo-buyer.example' },
    start_time: 'asap',
    end_time: '2026-12-10T00:00:00Z',
    packages: [{ product_id: homepage, pricing_option_id: 'cpm_usd', budget: 1000, ...pkg }],
    ...over,
  });

  before(async () => {
    h = await startMediaBuying({ clock });
    svc = h.platform.booted.services.get('media-buying')!.ctx;
    tools = buildTools(svc.db, clock);
    const contexts = await contextsOf(svc, h.demo.apiKey);
    buyer = contexts.buyer;
    at = contexts.storefront;
    const sfs = await svc.db
      .select({
        id: storefronts.id,
        publicId: storefronts.publicId,
        organizationId: storefronts.organizationId,
        name: storefronts.name,
      })
      .from(storefronts);
    const sf = (name: string) => sfs.find((s) => s.name === name)!;
    demoSf = sf('Demo Storefront');
    streamingSf = sf('Demo Streaming');
    europeSf = sf('Demo Europe');
    const prods = await svc.db.select({ publicId: products.publicId, name: products.name }).from(products);
    const prod = (name: string) => prods.find((p) => p.name === name)!.publicId;
    homepage = prod('Homepage takeover');
    streamingProduct = prod('Connected TV prime time');
    europeProduct = prod('Premium news EU');
    const [link] = await svc.db
      .select({ publicId: advertiserAccounts.publicId })
      .from(advertiserAccounts)
      .where(eq(advertiserAccounts.storefrontId, demoSf.id));
    demoAccount = link!.publicId;
  });
  after(() => h?.close());

  test('create_media_buy on a storefront endpoint: a buy on the REST lists; replay marked replayed; changed body IDEMPOTENCY_CONFLICT', async () => {
    const args = createArgs({ name: 'MCP buy one' });
    const before = await buyCount();
    const first = ok(await call(at(demoSf), 'create_media_buy', args));
    assert.equal(first.replayed, false);
    assert.equal(first.media_buy_status, 'active');
    assert.equal(first.total_budget, 1000);
    assert.equal((first.account as { account_id: string }).account_id, demoAccount);
    const rest = await restBuy(String(first.media_buy_id));
    assert.equal(rest.mediaBuyId, first.media_buy_id);
    // Key order does not matter (RFC 8785 canonical JSON), the version envelope neither.
    const reordered = Object.fromEntries(Object.entries({ ...args, adcp_version: '3.0' }).reverse());
    const again = ok(await call(at(demoSf), 'create_media_buy', reordered));
    assert.equal(again.media_buy_id, first.media_buy_id);
    assert.equal(again.replayed, true);
    assert.equal(await buyCount(), before + 1);
    const changed = adcpError(
      await call(at(demoSf), 'create_media_buy', {
        ...args,
        packages: [{ ...args.packages[0]!, budget: 1001 }],
      }),
    );
    assert.deepEqual(
      [changed.code, changed.recovery, changed.field],
      ['IDEMPOTENCY_CONFLICT', 'correctable', 'idempotency_key'],
    );
    // Keys are scoped per endpoint (another storefront is another seller) and per tool.
    const elsewhere = ok(await call(buyer, 'create_media_buy', args));
    assert.notEqual(elsewhere.media_buy_id, first.media_buy_id);
  });

  test('ACCOUNT_NOT_FOUND (correctable, account_not_authorized_for_buyer) and PRODUCT_NOT_FOUND on another storefront', async () => {
    const other = adcpError(
      await call(
        at(demoSf),
        'create_media_buy',
        createArgs({ account: { account_id: 'acc_00000000000000000000000000000000' } }),
      ),
    );
    assert.deepEqual(
      [other.code, other.recovery, other.details?.reason],
      ['ACCOUNT_NOT_FOUND', 'correctable', 'account_not_authorized_for_buyer'],
    );
    const product = adcpError(
      await call(
        at(demoSf),
        'create_media_buy',
        createArgs({}, { product_id: streamingProduct, pricing_option_id: 'cpm_usd' }),
      ),
    );
    assert.deepEqual(
      [product.code, product.recovery, product.buyer_reason?.code],
      ['PRODUCT_NOT_FOUND', 'correctable', 'PRODUCT_NOT_FOUND'],
    );
    assert.equal(product.details?.mutation_outcome, 'not_dispatched');
  });

  test('CURRENCY_MISMATCH and INSUFFICIENT_MEDIA_BUDGET (buyer_reason agreeing; correctable: the create key is released)', async () => {
    const mismatch = adcpError(
      await call(
        at(demoSf),
        'create_media_buy',
        createArgs({ total_budget: { amount: 1000, currency: 'EUR' } }),
      ),
    );
    assert.deepEqual([mismatch.code, mismatch.recovery], ['CURRENCY_MISMATCH', 'correctable']);
    const args = createArgs({}, { budget: 49_000 });
    const over = adcpError(await call(at(demoSf), 'create_media_buy', args));
    assert.equal(over.code, 'INSUFFICIENT_MEDIA_BUDGET');
    assert.deepEqual([over.recovery, over.buyer_reason?.code], ['correctable', 'BUDGET_EXCEEDED']);
    assert.equal(over.details?.requested, 49_000);
    assert.equal(typeof over.details?.committed, 'number');
    // Released: the same key with a corrected body runs.
    const fixed = ok(
      await call(at(demoSf), 'create_media_buy', {
        ...args,
        packages: [{ ...args.packages[0]!, budget: 500 }],
      }),
    );
    assert.equal(fixed.replayed, false);
  });

  test('unsupported_targeting: UNSUPPORTED_FEATURE with buyer_reason, correctable, nothing created', async () => {
    await settings(demoSf, { supportedTargeting: ['geo_countries'] });
    const before = await buyCount();
    const refused = adcpError(
      await call(
        at(demoSf),
        'create_media_buy',
        createArgs({}, { targeting_overlay: { geo_regions: ['US-CA'] } }),
      ),
    );
    assert.deepEqual(
      [refused.code, refused.recovery, refused.buyer_reason?.code],
      ['UNSUPPORTED_FEATURE', 'correctable', 'unsupported_targeting'],
    );
    assert.equal(await buyCount(), before);
    ok(
      await call(
        at(demoSf),
        'create_media_buy',
        createArgs({}, { targeting_overlay: { geo_countries: ['US'] } }),
      ),
    );
    await settings(demoSf, {});
  });

  test('create outcomes: not_dispatched transient keeps the key, a correctable source rejection releases it (its code passed through), rolled_back keeps it, unknown keeps the buy for cleanup', async () => {
    await faults(demoSf, { create: 'not_dispatched' });
    const transientArgs = createArgs();
    const transient = adcpError(await call(at(demoSf), 'create_media_buy', transientArgs));
    assert.deepEqual(
      [transient.recovery, transient.details?.mutation_outcome, transient.details?.retry_safe],
      ['transient', 'not_dispatched', true],
    );
    await faults(demoSf, {});
    const replayed = adcpError(await call(at(demoSf), 'create_media_buy', transientArgs));
    assert.deepEqual([replayed.code, replayed.details?.replayed], [transient.code, true]);

    await faults(demoSf, {
      rejectCreate: { code: 'X_ACME_DEAL_CLOSED', message: 'The deal is closed.', recovery: 'correctable' },
    });
    const before = await buyCount();
    const rejectArgs = createArgs();
    const rejected = adcpError(await call(at(demoSf), 'create_media_buy', rejectArgs));
    assert.deepEqual(
      [rejected.recovery, rejected.buyer_reason?.code, rejected.details?.mutation_outcome],
      ['correctable', 'X_ACME_DEAL_CLOSED', 'not_dispatched'],
    );
    assert.equal(await buyCount(), before);
    await faults(demoSf, {});
    assert.equal(ok(await call(at(demoSf), 'create_media_buy', rejectArgs)).replayed, false);

    await faults(demoSf, { create: 'rolled_back' });
    const rolledArgs = createArgs();
    const rolled = adcpError(await call(at(demoSf), 'create_media_buy', rolledArgs));
    assert.equal(rolled.details?.mutation_outcome, 'rolled_back');
    const count2 = await buyCount();
    await faults(demoSf, {});
    assert.equal(adcpError(await call(at(demoSf), 'create_media_buy', rolledArgs)).details?.replayed, true);
    assert.equal(await buyCount(), count2);

    await faults(demoSf, { create: 'unknown' });
    const unknownArgs = createArgs();
    const unknown = adcpError(await call(at(demoSf), 'create_media_buy', unknownArgs));
    assert.deepEqual(
      [
        unknown.code,
        unknown.recovery,
        unknown.details?.mutation_outcome,
        unknown.details?.cleanup_required,
        unknown.details?.retry_safe,
        unknown.details?.reason,
      ],
      ['SERVICE_UNAVAILABLE', 'terminal', 'unknown', true, false, 'adapter_update_outcome_unknown'],
    );
    assert.equal(
      (await restBuy(String(unknown.details?.media_buy_id))).mediaBuyId,
      unknown.details?.media_buy_id,
    );
    await faults(demoSf, {});
    assert.equal(adcpError(await call(at(demoSf), 'create_media_buy', unknownArgs)).details?.replayed, true);
  });

  test('update outcomes: unknown (kept, never resent, change not applied), rolled_back (kept), not_dispatched (released: the same key reruns)', async () => {
    const buy = ok(await call(at(demoSf), 'create_media_buy', createArgs()));
    const id = String(buy.media_buy_id);
    const pause = (k: string) => ({
      idempotency_key: k,
      account: { account_id: demoAccount },
      media_buy_id: id,
      paused: true,
    });
    await faults(demoSf, { update: 'unknown' });
    const k1 = key();
    const unknown = adcpError(await call(at(demoSf), 'update_media_buy', pause(k1)));
    assert.deepEqual(
      [
        unknown.recovery,
        unknown.details?.mutation_outcome,
        unknown.details?.cleanup_required,
        unknown.details?.retry_safe,
      ],
      ['terminal', 'unknown', true, false],
    );
    assert.equal((await restBuy(id)).status, 'active');
    await faults(demoSf, {});
    assert.equal(adcpError(await call(at(demoSf), 'update_media_buy', pause(k1))).details?.replayed, true);

    await faults(demoSf, { update: 'rolled_back' });
    const k2 = key();
    assert.equal(
      adcpError(await call(at(demoSf), 'update_media_buy', pause(k2))).details?.mutation_outcome,
      'rolled_back',
    );
    await faults(demoSf, {});
    assert.equal(adcpError(await call(at(demoSf), 'update_media_buy', pause(k2))).details?.replayed, true);

    await faults(demoSf, { update: 'not_dispatched' });
    const k3 = key();
    assert.equal(
      adcpError(await call(at(demoSf), 'update_media_buy', pause(k3))).details?.mutation_outcome,
      'not_dispatched',
    );
    await faults(demoSf, {});
    const paused = ok(await call(at(demoSf), 'update_media_buy', pause(k3)));
    assert.deepEqual([paused.media_buy_status, paused.replayed], ['paused', false]);
    assert.equal((await restBuy(id)).status, 'paused');
  });

  test('update rules: CAPABILITY_NOT_SUPPORTED upfront (unsupported[], no change), PRICING_NOT_CONFIGURED (unpricedBuyIds), SPEND_DENOMINATION_UNRESOLVED, CURRENCY_MISMATCH, ACCOUNT_NOT_FOUND', async () => {
    const buy = ok(await call(at(demoSf), 'create_media_buy', createArgs()));
    const id = String(buy.media_buy_id);
    const base = () => ({ idempotency_key: key(), account: { account_id: demoAccount }, media_buy_id: id });
    const [agent] = await svc.db.select().from(salesAgents).where(eq(salesAgents.storefrontId, demoSf.id));
    await svc.db
      .update(salesAgents)
      .set({ capabilities: ['pause'] })
      .where(eq(salesAgents.id, agent!.id));
    const cap = adcpError(
      await call(at(demoSf), 'update_media_buy', {
        ...base(),
        end_time: '2026-12-08T00:00:00Z',
        total_budget: { amount: 900, currency: 'USD' },
      }),
    );
    assert.deepEqual([cap.code, cap.recovery], ['CAPABILITY_NOT_SUPPORTED', 'correctable']);
    assert.deepEqual((cap.details!.unsupported as { field: string }[]).map((u) => u.field).sort(), [
      'end_time',
      'total_budget',
    ]);
    assert.deepEqual(Object.keys((cap.details!.unsupported as object[])[0]!).sort(), [
      'field',
      'mediaBuyId',
      'reason',
      'salesAgentId',
    ]);
    assert.equal((await restBuy(id)).totalBudget, 1000);
    await svc.db
      .update(salesAgents)
      .set({ capabilities: agent!.capabilities })
      .where(eq(salesAgents.id, agent!.id));

    const [rule] = await svc.db
      .delete(pricingRules)
      .where(eq(pricingRules.salesAgentId, agent!.id))
      .returning();
    const unpriced = adcpError(
      await call(at(demoSf), 'update_media_buy', {
        ...base(),
        total_budget: { amount: 900, currency: 'USD' },
      }),
    );
    assert.deepEqual([unpriced.code, unpriced.details?.unpricedBuyIds], ['PRICING_NOT_CONFIGURED', [id]]);
    const created = adcpError(await call(at(demoSf), 'create_media_buy', createArgs()));
    assert.equal(created.code, 'PRICING_NOT_CONFIGURED');
    const { id: _id, ...restored } = rule!;
    await svc.db.insert(pricingRules).values(restored);

    await faults(demoSf, { unresolvedSpend: true });
    const spend = adcpError(
      await call(at(demoSf), 'update_media_buy', {
        ...base(),
        total_budget: { amount: 900, currency: 'USD' },
      }),
    );
    assert.deepEqual(
      [spend.code, spend.recovery, spend.details?.mediaBuyIds, spend.details?.unresolvedCount],
      ['SPEND_DENOMINATION_UNRESOLVED', 'terminal', [id], 1],
    );
    await faults(demoSf, {});
    const mismatch = adcpError(
      await call(at(demoSf), 'update_media_buy', {
        ...base(),
        total_budget: { amount: 900, currency: 'EUR' },
      }),
    );
    assert.equal(mismatch.code, 'CURRENCY_MISMATCH');
    const account = adcpError(
      await call(at(demoSf), 'update_media_buy', {
        ...base(),
        account: { account_id: 'acc_ffffffffffffffffffffffffffffffff' },
        paused: true,
      }),
    );
    assert.deepEqual(
      [account.code, account.recovery, account.details?.reason],
      ['ACCOUNT_NOT_FOUND', 'correctable', 'account_not_authorized_for_buyer'],
    );
    const budget = ok(
      await call(at(demoSf), 'update_media_buy', {
        ...base(),
        total_budget: { amount: 900, currency: 'USD' },
      }),
    );
    assert.equal(budget.total_budget, 900);
  });

  test('sync_accounts -> pending_approval, resubmit unchanged; seller decisions on REST; list_accounts pages; 3.2 identity VERSION_UNSUPPORTED', async () => {
    const entry = {
      brand: { domain: 'demo-buyer.example', brand_id: h.demo.advertiserId },
      operator: 'demo-buyer.example',
      billing: 'operator',
    };
    const v32 = adcpError(
      await call(at(streamingSf), 'sync_accounts', {
        idempotency_key: key(),
        accounts: [{ ...entry, operator_unit: { id: 'seat-1' } }],
      }),
    );
    assert.deepEqual(
      [v32.code, v32.field, v32.details?.reason, v32.details?.unsupported_fields],
      [
        'VERSION_UNSUPPORTED',
        'accounts[0].operator_unit',
        'adcp_3_2_account_identity_not_supported',
        ['accounts[0].operator_unit'],
      ],
    );
    const first = ok(
      await call(at(streamingSf), 'sync_accounts', { idempotency_key: key(), accounts: [entry] }),
    );
    const item = (first.accounts as { account_id: string; action: string; status: string }[])[0]!;
    assert.deepEqual([item.action, item.status], ['created', 'pending_approval']);
    const again = ok(
      await call(at(streamingSf), 'sync_accounts', { idempotency_key: key(), accounts: [entry] }),
    );
    assert.deepEqual(
      (again.accounts as { action: string; status: string }[]).map((a) => [a.action, a.status]),
      [['unchanged', 'pending_approval']],
    );

    const seller = h.platform.credentials('media-buying').sellerApiKey as string;
    const decide = async (decision: string, expected: number, extra: Record<string, unknown> = {}) => {
      const res = await h.bearer(seller, {
        method: 'POST',
        url: `/api/v2/storefront/account-links/${item.account_id}/decision`,
        payload: { decision, ...extra },
      });
      assert.equal(res.statusCode, expected, res.body);
      return res.statusCode === 200 ? envelopeData<{ status: string }>(res).status : null;
    };
    assert.equal(await decide('approve', 200), 'active');
    assert.equal(await decide('require_payment', 200, { balanceDue: 300 }), 'payment_required');
    assert.equal(await decide('reactivate', 409), null);
    // Payments reduce the balance; the link is active again once it is cleared (never below 0).
    const pay = async (amount: number) => {
      const res = await h.bearer(seller, {
        method: 'POST',
        url: `/api/v2/storefront/account-links/${item.account_id}/payments`,
        payload: { amount },
      });
      assert.equal(res.statusCode, 200, res.body);
      const data = envelopeData<{ status: string; balanceDue: number }>(res);
      return [data.status, data.balanceDue];
    };
    assert.deepEqual(await pay(100), ['payment_required', 200]);
    assert.deepEqual(await pay(250), ['active', 0]);
    assert.equal(await decide('require_payment', 200, { balanceDue: 10 }), 'payment_required');
    assert.equal(await decide('mark_paid', 200), 'active');
    assert.equal(await decide('suspend', 200), 'suspended');
    assert.equal(await decide('approve', 409), null);
    assert.equal(await decide('reactivate', 200), 'active');
    assert.equal(await decide('close', 200), 'closed');
    assert.equal(await decide('reactivate', 409), null);
    const closed = ok(
      await call(at(streamingSf), 'sync_accounts', { idempotency_key: key(), accounts: [entry] }),
    );
    assert.deepEqual(
      (closed.accounts as { action: string; status: string }[]).map((a) => [a.action, a.status]),
      [['unchanged', 'closed']],
    );

    // Europe: a link the seller approves (used below for FX), listed with AdCP pagination.
    ok(await call(at(europeSf), 'sync_accounts', { idempotency_key: key(), accounts: [entry] }));
    const page1 = ok(await call(buyer, 'list_accounts', { pagination: { max_results: 2 } }));
    const pagination = page1.pagination as { has_more: boolean; cursor: string; total_count: number };
    assert.deepEqual(
      [(page1.accounts as unknown[]).length, pagination.has_more, pagination.total_count],
      [2, true, 3],
    );
    const page2 = ok(
      await call(buyer, 'list_accounts', { pagination: { max_results: 2, cursor: pagination.cursor } }),
    );
    assert.equal((page2.accounts as unknown[]).length, 1);
    assert.equal((page2.pagination as { has_more: boolean }).has_more, false);
    const pending = ok(await call(at(europeSf), 'list_accounts', { status: 'pending_approval' }));
    const eu = (pending.accounts as { account_id: string }[])[0]!;
    const [europeOrg] = await svc.db
      .select()
      .from(organizations)
      .where(eq(organizations.id, europeSf.organizationId));
    assert.ok(europeOrg);
    await svc.db
      .update(advertiserAccounts)
      .set({ status: 'active' })
      .where(eq(advertiserAccounts.publicId, eu.account_id));
  });

  test('FX: a EUR buy funded by a USD campaign; FX_RATE_UNAVAILABLE transient (create key kept); FX_QUOTE_EXPIRED by UTC day', async () => {
    const eur = (k = key()) =>
      createArgs(
        {
          idempotency_key: k,
          account: {
            brand: { domain: 'demo-buyer.example', brand_id: h.demo.advertiserId },
            operator: 'demo-buyer.example',
          },
          total_budget: { amount: 800, currency: 'EUR' },
        },
        { product_id: europeProduct, pricing_option_id: 'cpm_eur', budget: 800 },
      );
    const made = ok(await call(at(europeSf), 'create_media_buy', eur()));
    assert.deepEqual([made.currency, made.total_budget], ['EUR', 800]);
    // A REST create on the campaign that funds the EUR buy counts it at the ad platform's rate (no crash).
    const [madeRow] = await svc.db
      .select({ campaign: campaigns.publicId })
      .from(mediaBuys)
      .innerJoin(campaigns, eq(campaigns.id, mediaBuys.campaignId))
      .where(eq(mediaBuys.publicId, String(made.media_buy_id)));
    const rest = await h.bearer(h.demo.apiKey, {
      method: 'POST',
      url: '/api/v2/buyer/media-buys',
      payload: {
        campaignId: madeRow!.campaign,
        packages: [{ productId: homepage, pricingOptionId: 'cpm_usd', budget: 10 }],
      },
    });
    assert.equal(rest.statusCode, 201, rest.body);
    await faults(europeSf, { fxRateGaps: ['USD/EUR'] });
    const args = eur();
    const gap = adcpError(await call(at(europeSf), 'create_media_buy', args));
    assert.deepEqual(
      [gap.code, gap.recovery, gap.details?.mutation_outcome],
      ['FX_RATE_UNAVAILABLE', 'transient', 'not_dispatched'],
    );
    await faults(europeSf, {});
    assert.equal(adcpError(await call(at(europeSf), 'create_media_buy', args)).details?.replayed, true);

    const now = clock.now();
    const [session] = await svc.db
      .insert(discoverySessions)
      .values({
        publicId: `dsc_${'a'.repeat(32)}`,
        organizationId: buyer.caller.organization!.id,
        advertiserId: (
          await svc.db.select().from(advertiserAccounts).where(eq(advertiserAccounts.storefrontId, demoSf.id))
        )[0]!.advertiserId,
        quoteDay: '2026-11-23',
        groups: [],
        createdAt: now,
        expiresAt: now,
      })
      .returning();
    const [p] = await svc.db.select().from(products).where(eq(products.publicId, homepage));
    await svc.db.insert(discoveryQuotes).values({
      publicId: `dqt_${'b'.repeat(32)}`,
      sessionId: session!.id,
      groupIndex: 0,
      position: 0,
      productId: p!.id,
      product: {} as never,
      storefront: {} as never,
      options: [],
    });
    const expired = adcpError(
      await call(
        at(demoSf),
        'create_media_buy',
        createArgs({}, { ext: { quote_id: `dqt_${'b'.repeat(32)}` } }),
      ),
    );
    assert.deepEqual(
      [expired.code, expired.recovery, expired.details?.priced_for_day],
      ['FX_QUOTE_EXPIRED', 'correctable', '2026-11-23'],
    );
  });

  test('buyer endpoint: one buy per storefront source, per_source[] for the failed leg; all_sources_failed when every leg fails', async () => {
    const natural = {
      brand: { domain: 'demo-buyer.example', brand_id: h.demo.advertiserId },
      operator: 'demo-buyer.example',
    };
    const two = createArgs({ account: natural }, {});
    two.packages.push({ product_id: streamingProduct, pricing_option_id: 'cpm_usd', budget: 100 } as never);
    const partial = ok(await call(buyer, 'create_media_buy', two));
    const ext = partial.ext as {
      media_buys: unknown[];
      per_source: { source_id: string; error: { code: string }; recovery: string }[];
    };
    assert.equal(ext.media_buys.length, 1);
    assert.deepEqual(
      ext.per_source.map((s) => [s.source_id, s.error.code, s.recovery]),
      [[streamingSf.publicId, 'ACCOUNT_SETUP_REQUIRED', 'terminal']],
    );
    // total_budget is the whole request's (1000 + 100), not each leg's.
    const withTotal = ok(
      await call(buyer, 'create_media_buy', {
        ...two,
        idempotency_key: key(),
        total_budget: { amount: 1100, currency: 'USD' },
      }),
    );
    assert.equal((withTotal.ext as { media_buys: unknown[] }).media_buys.length, 1);
    const mismatch = adcpError(
      await call(buyer, 'create_media_buy', {
        ...two,
        idempotency_key: key(),
        total_budget: { amount: 1000, currency: 'USD' },
      }),
    );
    assert.deepEqual([mismatch.code, mismatch.details?.reason], ['INVALID_REQUEST', 'total_budget_mismatch']);
    await faults(demoSf, { create: 'not_dispatched' });
    const none = adcpError(await call(buyer, 'create_media_buy', { ...two, idempotency_key: key() }));
    assert.equal(none.details?.reason, 'all_sources_failed');
    assert.equal((none.details!.per_source as unknown[]).length, 2);
    await faults(demoSf, {});
  });

  test('two instances racing one key make one buy', async () => {
    const second = openDatabase(h.platform.database.url, { max: 4 });
    try {
      const otherTools = buildTools(second.db, clock);
      const args = createArgs({ name: 'raced buy' });
      const results: ToolResult[] = await Promise.all([
        callTool(tools, at(demoSf), 'create_media_buy', args),
        callTool(otherTools, at(demoSf), 'create_media_buy', args),
      ]);
      const [a, b] = results.map(ok);
      assert.equal(a!.media_buy_id, b!.media_buy_id);
      assert.deepEqual([a!.replayed, b!.replayed].sort(), [false, true]);
      const [raced] = await svc.db
        .select({ n: count() })
        .from(mediaBuys)
        .where(eq(mediaBuys.name, 'raced buy'));
      assert.equal(raced!.n, 1);
    } finally {
      await second.close();
    }
  });

  test('sync_creatives: per-creative errors (X_PLATFORM_*, destination_*, MANAGED_ACCOUNT_LINKAGE_REQUIRED); delete_missing blocked when mixed', async () => {
    await settings(demoSf, {
      managed: true,
      destinationProfile: {
        vastVersions: ['4.2'],
        renditions: ['1920x1080'],
        certifiedFormatIds: ['video_30s'],
      },
    });
    const agent = 'https://creative.adcontextprotocol.org';
    const banner = (id: string, assets: Record<string, unknown>) => ({
      creative_id: id,
      name: id,
      format_id: { agent_url: agent, id: 'display_300x250' },
      assets,
    });
    const video = (id: string, format: string, size: [number, number], vast?: string) => ({
      creative_id: id,
      name: id,
      format_id: { agent_url: agent, id: format },
      assets: {
        video: { asset_type: 'video', url: 'https://cdn.example/v.mp4', width: size[0], height: size[1] },
        ...(vast
          ? {
              vast: {
                asset_type: 'vast',
                delivery_type: 'url',
                url: 'https://ads.example/vast.xml',
                vast_version: vast,
              },
            }
          : {}),
      },
    });
    const image = {
      image: { asset_type: 'image', url: 'https://cdn.example/b.png', width: 300, height: 250 },
      click_url: { asset_type: 'url', url: 'https://example.com' },
    };
    await faults(demoSf, {
      creativeRejections: [
        {
          creativeId: 'generic',
          code: 'X_PLATFORM_CREATIVE_VALIDATION_FAILED_GENERIC',
          message: 'Rejected by review.',
        },
      ],
    });
    const creatives = [
      banner('good', image),
      banner('no-click', { image: image.image }),
      banner('small', { ...image, image: { ...image.image, width: 320 } }),
      banner('generic', image),
      video('uncertified', 'video_15s', [1920, 1080], '4.2'),
      video('no-vast', 'video_30s', [1920, 1080]),
      video('wrong-size', 'video_30s', [1280, 720], '4.2'),
      video('ok-video', 'video_30s', [1920, 1080], '4.2'),
    ];
    const res = ok(
      await call(at(demoSf), 'sync_creatives', {
        idempotency_key: key(),
        account: { account_id: demoAccount },
        creatives,
      }),
    );
    const byId = Object.fromEntries(
      (res.creatives as { creative_id: string; action: string; errors?: { code: string }[] }[]).map((c) => [
        c.creative_id,
        c.errors?.[0]?.code ?? c.action,
      ]),
    );
    assert.deepEqual(byId, {
      good: 'created',
      'no-click': 'X_PLATFORM_CREATIVE_MISSING_CLICK_URL',
      small: 'X_PLATFORM_CREATIVE_SIZE_MISMATCH',
      generic: 'X_PLATFORM_CREATIVE_VALIDATION_FAILED_GENERIC',
      uncertified: 'destination_profile_not_certified',
      'no-vast': 'destination_profile_rejected',
      'wrong-size': 'destination_rendition_required',
      'ok-video': 'created',
    });
    const blocked = adcpError(
      await call(at(demoSf), 'sync_creatives', {
        idempotency_key: key(),
        account: { account_id: demoAccount },
        delete_missing: true,
        creatives: [banner('good', image), banner('no-click', { image: image.image })],
      }),
    );
    assert.equal(blocked.code, 'destination_destructive_sync_blocked');
    const unchanged = ok(
      await call(at(demoSf), 'sync_creatives', {
        idempotency_key: key(),
        account: { account_id: demoAccount },
        creatives: [banner('good', image)],
      }),
    );
    assert.equal((unchanged.creatives as { action: string }[])[0]!.action, 'unchanged');
    await faults(demoSf, {});
    // A managed storefront without an active link: every creative fails with MANAGED_ACCOUNT_LINKAGE_REQUIRED.
    await settings(streamingSf, { managed: true });
    const natural = {
      brand: { domain: 'demo-buyer.example', brand_id: h.demo.advertiserId },
      operator: 'demo-buyer.example',
    };
    const linkage = ok(
      await call(at(streamingSf), 'sync_creatives', {
        idempotency_key: key(),
        account: natural,
        creatives: [banner('good', image)],
      }),
    );
    assert.equal(
      (linkage.creatives as { errors: { code: string }[] }[])[0]!.errors[0]!.code,
      'MANAGED_ACCOUNT_LINKAGE_REQUIRED',
    );
    await settings(demoSf, {});
  });

  test('approval hold: provisional buy; past end_time at approval is flight_window_elapsed (never resent); a past start_time alone is sent as a start', async () => {
    await settings(demoSf, { approvalRequired: true });
    const late = ok(
      await call(at(demoSf), 'create_media_buy', createArgs({ end_time: '2026-11-26T00:00:00Z' })),
    );
    assert.deepEqual([late.media_buy_status, late.confirmed_at], ['pending_start', null]);
    const fine = ok(
      await call(at(demoSf), 'create_media_buy', createArgs({ start_time: '2026-11-24T13:00:00Z' })),
    );
    await settings(demoSf, {});
    clock.set(new Date('2026-11-26T06:00:00Z'));
    const failed = await ops('POST', `/_ops/media-buys/${late.media_buy_id}/approval`);
    assert.equal(failed.statusCode, 200, failed.body);
    const body = failed.json() as { state: string; error: { details: Record<string, unknown> } };
    assert.equal(body.state, 'failed');
    const update = adcpError(
      await call(at(demoSf), 'update_media_buy', {
        idempotency_key: key(),
        account: { account_id: demoAccount },
        media_buy_id: late.media_buy_id,
        paused: true,
      }),
    );
    assert.deepEqual(
      [
        update.recovery,
        update.details?.reason,
        update.details?.source_outcome,
        (update.details!.forward_error as { code: string }).code,
      ],
      ['correctable', 'storefront_forwarding_failed', 'precondition_failed', 'flight_window_elapsed'],
    );
    assert.equal((await restBuy(String(late.media_buy_id))).status, 'rejected');
    const dispatched = await ops('POST', `/_ops/media-buys/${fine.media_buy_id}/approval`);
    assert.equal((dispatched.json() as { state: string }).state, 'dispatched');
    assert.equal((await restBuy(String(fine.media_buy_id))).status, 'active');
  });

  test('a held buy stays provisional under the delivery cron (no spend); paused or canceled while held it is not sent on approval', async () => {
    await settings(demoSf, { approvalRequired: true });
    const hold = async () =>
      ok(await call(at(demoSf), 'create_media_buy', createArgs())).media_buy_id as string;
    const [waiting, canceled, paused] = [await hold(), await hold(), await hold()];
    await settings(demoSf, {});
    const change = async (id: string, body: Record<string, unknown>) =>
      ok(
        await call(at(demoSf), 'update_media_buy', {
          idempotency_key: key(),
          account: { account_id: demoAccount },
          media_buy_id: id,
          ...body,
        }),
      );
    // Any call to the ad platform would fail now: changes to a held buy are local.
    await faults(demoSf, { update: 'not_dispatched' });
    await change(canceled, { canceled: true });
    await change(paused, { paused: true });
    await faults(demoSf, {});
    clock.advance(2 * 86_400_000);
    const res = await ops('POST', '/_ops/ad-platform/deliver');
    assert.equal(res.statusCode, 202, res.body);
    await h.platform.runDueJobs();
    const rowOf = async (id: string) =>
      (await svc.db.select().from(mediaBuys).where(eq(mediaBuys.publicId, id)))[0]!;
    const spent = async (id: string) =>
      (
        await svc.db
          .select({ n: count() })
          .from(deliveryMetrics)
          .where(eq(deliveryMetrics.mediaBuyId, (await rowOf(id)).id))
      )[0]!.n;
    assert.equal((await restBuy(waiting)).status, 'pending_start');
    assert.equal(await spent(waiting), 0);
    assert.equal((await ops('POST', `/_ops/media-buys/${canceled}/approval`)).statusCode, 404);
    assert.equal((await restBuy(canceled)).status, 'canceled');
    assert.equal((await ops('POST', `/_ops/media-buys/${paused}/approval`)).statusCode, 404);
    assert.equal((await restBuy(paused)).status, 'paused');
    await change(paused, { paused: false });
    assert.equal((await restBuy(paused)).status, 'pending_start', 'resumed, it is still held');
    const approved = await ops('POST', `/_ops/media-buys/${paused}/approval`);
    assert.equal((approved.json() as { state: string }).state, 'dispatched');
    assert.equal((await restBuy(paused)).status, 'active');
  });

  test('concurrent update_media_buy calls on one buy are serialized: a committed cancel is never undone by a resume', async () => {
    for (let i = 0; i < 4; i++) {
      const id = ok(await call(at(demoSf), 'create_media_buy', createArgs())).media_buy_id as string;
      const upd = (body: Record<string, unknown>) =>
        call(at(demoSf), 'update_media_buy', {
          idempotency_key: key(),
          account: { account_id: demoAccount },
          media_buy_id: id,
          ...body,
        });
      ok(await upd({ paused: true }));
      const [cancel] = await Promise.all([upd({ canceled: true }), upd({ paused: false })]);
      assert.notEqual(cancel.isError, true);
      assert.equal((await restBuy(id)).status, 'canceled');
    }
  });

  test('an unknown currency is refused as a correctable error, never a 5xx; FX converts across minor-unit exponents', async () => {
    const xyz = adcpError(
      await call(
        at(demoSf),
        'create_media_buy',
        createArgs({ total_budget: { amount: 1000, currency: 'XYZ' } }),
      ),
    );
    assert.equal(xyz.recovery, 'correctable', JSON.stringify(xyz));
    assert.notEqual(xyz.code, 'INTERNAL_ERROR');
    // JPY 10,000 (exponent 0) at 0.0067 USD is USD 67.00 = 6,700 cents; USD 1.00 at 150 JPY is JPY 150.
    assert.equal(convertMinor(10_000, 'JPY', 'USD', 0.0067), 6700);
    assert.equal(convertMinor(100, 'USD', 'JPY', 150), 150);
    assert.equal(convertMinor(100, 'EUR', 'USD', 1.1), 110);
  });

  test("sync_creatives: delete_missing archives only the account's creatives (advertiser x storefront); concurrent syncs of one new creative_id never fail", async () => {
    await settings(demoSf, {});
    await settings(europeSf, {});
    await faults(demoSf, {});
    await faults(europeSf, {});
    const [euLink] = await svc.db
      .select({ publicId: advertiserAccounts.publicId })
      .from(advertiserAccounts)
      .where(
        and(
          eq(advertiserAccounts.storefrontId, europeSf.id),
          eq(advertiserAccounts.organizationId, buyer.caller.organization!.id),
        ),
      );
    const creative = (id: string) => ({
      creative_id: id,
      name: id,
      format_id: { agent_url: 'https://creative.adcontextprotocol.org', id: 'display_300x250' },
      assets: {
        image: { asset_type: 'image', url: 'https://cdn.example/b.png', width: 300, height: 250 },
        click_url: { asset_type: 'url', url: 'https://example.com' },
      },
    });
    const sync = (sf: Sf, account: string, ids: string[], deleteMissing = false) =>
      call(at(sf), 'sync_creatives', {
        idempotency_key: key(),
        account: { account_id: account },
        creatives: ids.map(creative),
        ...(deleteMissing ? { delete_missing: true } : {}),
      });
    ok(await sync(demoSf, demoAccount, ['scoped-demo']));
    ok(await sync(europeSf, euLink!.publicId, ['scoped-eu']));
    const swept = ok(await sync(europeSf, euLink!.publicId, ['scoped-eu'], true)) as {
      creatives: { creative_id: string; action: string }[];
    };
    assert.deepEqual(
      swept.creatives.filter((c) => c.action === 'deleted').map((c) => c.creative_id),
      [],
      'nothing of the demo storefront is deleted',
    );
    const [demoCreative] = await svc.db
      .select({ status: creatives.status })
      .from(creatives)
      .where(eq(creatives.buyerCreativeId, 'scoped-demo'));
    assert.equal(demoCreative!.status, 'approved');

    const raced = await Promise.all([
      sync(demoSf, demoAccount, ['raced-new']),
      sync(demoSf, demoAccount, ['raced-new']),
    ]);
    for (const r of raced) assert.notEqual(r.isError, true, r.content[0]?.text);
    const actions = raced.map((r) => (ok(r) as { creatives: { action: string }[] }).creatives[0]!.action);
    assert.deepEqual(actions.sort(), ['created', 'unchanged']);
  });

  test('BUYER_SETUP_REQUIRED as in REST (buyer_reason ACCOUNT_SETUP_REQUIRED); a seller credential cannot buy', async () => {
    const org = await h.createOrganization('buyer', 'No Setup Agency');
    await h.addMember(org, 'no-setup@example.com', 'admin');
    const cookie = await h.signInAccepted('no-setup@example.com', STRONG_PASSWORD);
    const contexts = await contextsOf(svc, await h.createUserKey(cookie));
    const setup = adcpError(await call(contexts.storefront(demoSf), 'create_media_buy', createArgs()));
    assert.deepEqual(
      [setup.code, setup.recovery, setup.buyer_reason?.code, setup.details?.reason],
      ['BUYER_SETUP_REQUIRED', 'correctable', 'ACCOUNT_SETUP_REQUIRED', 'missing_operator_identity'],
    );
    const seller = await contextsOf(svc, h.platform.credentials('media-buying').sellerApiKey as string);
    const denied = adcpError(await call(seller.storefront(demoSf), 'create_media_buy', createArgs()));
    assert.deepEqual([denied.code, denied.recovery], ['PERMISSION_DENIED', 'terminal']);
    // Buyer Setup is checked before a replay too (it is read with the key, in one statement).
    const args = createArgs();
    assert.notEqual((await call(at(demoSf), 'create_media_buy', args)).isError, true);
    const identity = async (domain: string) =>
      assert.equal(
        (
          await ops('PUT', `/_ops/organizations/${h.demo.organizationId}/operator-identity`, {
            domain,
            name: 'Demo Buyer',
          })
        ).statusCode,
        200,
      );
    const [own] = await svc.db
      .select()
      .from(buyerOperatorIdentities)
      .innerJoin(organizations, eq(organizations.id, buyerOperatorIdentities.organizationId))
      .where(eq(organizations.publicId, h.demo.organizationId));
    await identity('app.media-buying.test');
    try {
      const refused = adcpError(await call(at(demoSf), 'create_media_buy', args));
      assert.deepEqual(
        [refused.code, refused.details?.reason],
        ['BUYER_SETUP_REQUIRED', 'platform_operator_not_allowed'],
      );
    } finally {
      await identity(own!.buyer_operator_identities.domain);
    }
    assert.equal(ok(await call(at(demoSf), 'create_media_buy', args)).replayed, true);
  });

  test('an activation-sandbox credential is refused: UNBOUND_FREE_SPEND_PROHIBITED on buys, UNBOUND_FREE_WRITE_PROHIBITED otherwise', async () => {
    const sandboxed = (ctx: McpToolContext): McpToolContext => ({
      ...ctx,
      caller: { ...ctx.caller, sandbox: { registrationId: 1, state: 'unbound_free' } },
    });
    const spend = adcpError(await call(sandboxed(at(demoSf)), 'create_media_buy', createArgs()));
    assert.equal(spend.code, 'UNBOUND_FREE_SPEND_PROHIBITED');
    const write = adcpError(
      await call(sandboxed(at(demoSf)), 'sync_creatives', {
        idempotency_key: key(),
        account: { account_id: demoAccount },
        creatives: [
          {
            creative_id: 'sandboxed',
            name: 'sandboxed',
            format_id: { agent_url: 'https://creative.adcontextprotocol.org', id: 'display_300x250' },
            assets: {},
          },
        ],
      }),
    );
    assert.equal(write.code, 'UNBOUND_FREE_WRITE_PROHIBITED');
  });

  test('list_accounts needs buyer read access: PERMISSION_DENIED without it', async () => {
    const noBuyer: McpToolContext = { ...buyer, caller: { ...buyer.caller, access: {} } };
    const denied = adcpError(await call(noBuyer, 'list_accounts', {}));
    assert.deepEqual([denied.code, denied.recovery], ['PERMISSION_DENIED', 'terminal']);
    assert.equal((ok(await call(buyer, 'list_accounts', {})).accounts as unknown[]).length > 0, true);
  });

  test('stored answers expire after 24 hours (by the clock): the key runs again', async () => {
    const args = createArgs({ end_time: '2026-12-20T00:00:00Z' });
    const first = ok(await call(at(demoSf), 'create_media_buy', args));
    clock.advance(86_400_000 - 1000);
    assert.equal(ok(await call(at(demoSf), 'create_media_buy', args)).replayed, true);
    clock.advance(2000);
    const fresh = ok(await call(at(demoSf), 'create_media_buy', args));
    assert.equal(fresh.replayed, false);
    assert.notEqual(fresh.media_buy_id, first.media_buy_id);
    const [n] = await svc.db
      .select({ n: count() })
      .from(mediaBuys)
      .where(and(eq(mediaBuys.storefrontId, demoSf.id)));
    assert.ok(n!.n > 0);
  });
});
