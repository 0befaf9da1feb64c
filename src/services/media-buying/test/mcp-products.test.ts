/**
 * MCP `get_products` (issue 18, part 3): the catalog version the database keeps (`catalog_versions`, bumped by a
 * trigger once per transaction that writes products, storefronts or a Seller Account's public id), a repeat call that
 * reads its kept session without reading the catalog, pages in SQL over the available products in session order (a
 * product archived after the session started leaves later pages and counts), and the per-instance page cache staying
 * right when another instance on the same database changes the catalog.
 */
import assert from 'node:assert/strict';
import { after, before, describe, mock, test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { asc, eq, sql } from 'drizzle-orm';
import pg from 'pg';
import { baseUrlOf } from '../../../../test/support/platform.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { prefixedHexId } from '../../../platform/ids.ts';
import { SimulatedBuyingPlatform } from '../buying/index.ts';
import {
  advertisers,
  catalogVersions,
  discoverySessions,
  organizations,
  products,
  salesAgents,
  storefronts,
} from '../db/schema.ts';
import { adcpSchemaErrors } from './support/adcp-schemas.ts';
import { type MediaBuyingHarness, startMediaBuying } from './support/harness.ts';

interface ToolResult {
  isError?: boolean;
  structuredContent: Record<string, unknown>;
}
interface ProductsAnswer {
  products: { product_id: string; ext: { quote_id: string; storefront_id: string } }[];
  pagination: { has_more: boolean; total_count: number; cursor?: string };
  ext: {
    discovery_id: string;
    per_source?: {
      source_id: string;
      status: string;
      product_count?: number;
      error?: { code: string };
      recovery?: string;
    }[];
  };
}

/** Records the text (or name) of every statement node-postgres sends while `fn` runs. */
async function statementsOf(fn: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const q = args[0] as string | { text?: string; name?: string };
    seen.push(typeof q === 'string' ? q : `${q.name ? `[${q.name}] ` : ''}${q.text ?? ''}`);
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    await fn();
  } finally {
    pg.Client.prototype.query = original;
  }
  return seen;
}

/** The caller's statements of authentication (credentials/caller.ts), which every request makes. */
const AUTHENTICATION = /^\[media_buying_(live_user|caller_)/;
describe('media buying part 3: get_products over the catalog version', () => {
  let h: MediaBuyingHarness;
  let base: string;
  const clock = new ManualClock(new Date('2026-11-25T12:00:00Z'));
  const clients: Client[] = [];
  const db = () => h.platform.booted.services.get('media-buying')!.ctx.db;

  async function connect(url: string, credential = h.demo.apiKey): Promise<Client> {
    const client = new Client(
      { name: 'products-test', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: `Bearer ${credential}` } },
      }),
    );
    clients.push(client);
    return client;
  }
  async function getProducts(client: Client, args: Record<string, unknown> = {}): Promise<ProductsAnswer> {
    const result = (await client.callTool({
      name: 'get_products',
      arguments: { buying_mode: 'brief', brief: 'any', adcp_version: '3.1', ...args },
    })) as unknown as ToolResult;
    assert.equal(result.isError, undefined, JSON.stringify(result.structuredContent));
    assert.deepEqual(adcpSchemaErrors('media-buy/get-products-response.json', result.structuredContent), []);
    return result.structuredContent as unknown as ProductsAnswer;
  }
  /** Every page of a discovery from its first call, `size` at a time. */
  async function allPages(client: Client, size: number, args: Record<string, unknown> = {}) {
    const pages: ProductsAnswer[] = [
      await getProducts(client, { ...args, pagination: { max_results: size } }),
    ];
    while (pages.at(-1)!.pagination.cursor)
      pages.push(
        await getProducts(client, {
          ...args,
          pagination: { max_results: size, cursor: pages.at(-1)!.pagination.cursor },
        }),
      );
    return pages;
  }
  const version = async () => (await db().select().from(catalogVersions))[0]!;
  const activeStorefronts = () =>
    db().select().from(storefronts).where(eq(storefronts.status, 'active')).orderBy(asc(storefronts.id));
  /** Adds `n` active products to a storefront, copies of its first product (one transaction). */
  async function addProducts(storefrontId: number, n: number): Promise<string[]> {
    const [model] = await db()
      .select()
      .from(products)
      .where(eq(products.storefrontId, storefrontId))
      .orderBy(asc(products.id))
      .limit(1);
    const { id: _id, ...rest } = model!;
    const rows = Array.from({ length: n }, (_, i) => ({
      ...rest,
      publicId: prefixedHexId('prd'),
      name: `${model!.name} ${i}`,
      status: 'active' as const,
    }));
    await db().insert(products).values(rows);
    return rows.map((r) => r.publicId);
  }

  before(async () => {
    h = await startMediaBuying({ clock, listen: true });
    base = baseUrlOf(h.platform.app('media-buying'));
  });
  after(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await h?.close();
  });

  test('the catalog version moves once per transaction that writes the catalog, at its commit, and only then', async () => {
    const start = await version();
    const [sf] = await activeStorefronts();
    // Two product writes in one transaction: one bump.
    await addProducts(sf!.id, 2);
    const afterInsert = await version();
    assert.equal(afterInsert.version, start.version + 1);
    assert.equal(afterInsert.fingerprint, null, 'the fingerprint of the old version is cleared');
    await db().transaction(async (tx) => {
      await tx.update(storefronts).set({ name: sf!.name }).where(eq(storefronts.id, sf!.id));
      await tx
        .update(products)
        .set({ name: sql`${products.name}` })
        .where(eq(products.storefrontId, sf!.id));
    });
    assert.equal(
      (await version()).version,
      start.version + 2,
      'a storefront and its products in one transaction',
    );
    // A rolled-back write leaves it; so does a write elsewhere (an advertiser).
    await assert.rejects(
      db().transaction(async (tx) => {
        await tx.update(products).set({ status: 'archived' }).where(eq(products.storefrontId, sf!.id));
        throw new Error('roll back');
      }),
    );
    await db()
      .update(advertisers)
      .set({ name: sql`${advertisers.name}` });
    assert.equal((await version()).version, start.version + 2);
    // A Seller Account's public id is part of the catalog (the groups name it); its other columns are not.
    const [seller] = await db().select().from(organizations).where(eq(organizations.id, sf!.organizationId));
    await db().update(organizations).set({ name: seller!.name }).where(eq(organizations.id, seller!.id));
    assert.equal((await version()).version, start.version + 2);
    await db()
      .update(organizations)
      .set({ publicId: seller!.publicId })
      .where(eq(organizations.id, seller!.id));
    assert.equal((await version()).version, start.version + 3);
  });

  test('a repeat call reads its context and one page, never the catalog; the fingerprint is stored once per version', async () => {
    const client = await connect(`${base}/mcp/v3`);
    const first = await getProducts(client);
    const stored = await version();
    assert.ok(stored.fingerprint, 'the first call after a change stores the fingerprint');
    const [session] = await db()
      .select()
      .from(discoverySessions)
      .where(eq(discoverySessions.publicId, first.ext.discovery_id));
    assert.equal(session!.catalogFingerprint, stored.fingerprint);
    let second: ProductsAnswer | undefined;
    const statements = await statementsOf(async () => {
      second = await getProducts(client);
    });
    assert.equal(second!.ext.discovery_id, first.ext.discovery_id);
    assert.deepEqual(second!.products, first.products);
    const ours = statements.filter((s) => !AUTHENTICATION.test(s));
    assert.ok(
      ours.every((s) => !/from "media_buying"\."products"/.test(s)),
      `no read of the catalog: ${ours.join('\n')}`,
    );
    assert.ok(ours.length <= 2, `context and page only: ${ours.join('\n')}`);
    // The same page again is served from the instance's page cache: the context statement only.
    const third = await statementsOf(() => getProducts(client));
    assert.equal(third.filter((s) => !AUTHENTICATION.test(s)).length, 1, third.join('\n'));
    assert.equal((await version()).version, stored.version, 'reading never moves the version');
  });

  test('concurrent first calls after a catalog change keep one session between them', async () => {
    const [sf] = await activeStorefronts();
    await addProducts(sf!.id, 1);
    const before = (await db().select({ id: discoverySessions.id }).from(discoverySessions)).length;
    const callers = await Promise.all(Array.from({ length: 8 }, () => connect(`${base}/mcp/v3`)));
    const answers = await Promise.all(callers.map((c) => getProducts(c)));
    const ids = new Set(answers.map((a) => a.ext.discovery_id));
    assert.equal(ids.size, 1, `one kept session, not ${[...ids].join(', ')}`);
    const after = (await db().select({ id: discoverySessions.id }).from(discoverySessions)).length;
    assert.equal(after - before, 1, 'one session started');
  });

  test('pages in SQL: every available product once, in session order; an archived product leaves later pages and counts', async () => {
    const [sf] = await activeStorefronts();
    await addProducts(sf!.id, 7);
    const client = await connect(`${base}/mcp/v3`);
    const pages = await allPages(client, 3);
    const all = pages.flatMap((p) => p.products);
    const total = pages[0]!.pagination.total_count;
    assert.equal(all.length, total);
    assert.equal(new Set(all.map((p) => p.ext.quote_id)).size, total, 'no product twice');
    assert.ok(pages.every((p) => p.pagination.total_count === total));
    assert.ok(
      pages.every((p) => p.ext.discovery_id === pages[0]!.ext.discovery_id),
      'one session',
    );
    // Session order: storefronts in creation order, their products in creation order.
    const live = await db()
      .select({ id: products.publicId })
      .from(products)
      .innerJoin(storefronts, eq(storefronts.id, products.storefrontId))
      .where(sql`${products.status} = 'active' and ${storefronts.status} = 'active'`)
      .orderBy(asc(storefronts.id), asc(products.id));
    assert.deepEqual(
      all.map((p) => p.product_id),
      live.map((r) => r.id),
    );
    const perSource = pages[0]!.ext.per_source!;
    assert.equal(
      perSource.reduce((n, s) => n + (s.product_count ?? 0), 0),
      total,
    );
    // A product of the second page archived after the session started: the later pages of that session skip it and
    // count without it; the first call after the change starts a new session for the new catalog.
    const gone = pages[1]!.products[0]!;
    await db().update(products).set({ status: 'archived' }).where(eq(products.publicId, gone.product_id));
    try {
      const again = await getProducts(client, {
        pagination: { max_results: 3, cursor: pages[0]!.pagination.cursor },
      });
      assert.equal(again.ext.discovery_id, pages[0]!.ext.discovery_id);
      assert.equal(again.pagination.total_count, total - 1);
      assert.deepEqual(
        again.products.map((p) => p.product_id),
        all
          .slice(3)
          .filter((p) => p.product_id !== gone.product_id)
          .slice(0, 3)
          .map((p) => p.product_id),
      );
      const fresh = await getProducts(client);
      assert.notEqual(fresh.ext.discovery_id, pages[0]!.ext.discovery_id);
      assert.equal(fresh.pagination.total_count, total - 1);
      assert.ok(!fresh.products.some((p) => p.product_id === gone.product_id));
    } finally {
      await db().update(products).set({ status: 'active' }).where(eq(products.publicId, gone.product_id));
    }
    // Back to the catalog of the first session: it is reused, every product available again.
    const back = await getProducts(client, { pagination: { max_results: 3 } });
    assert.equal(back.ext.discovery_id, pages[0]!.ext.discovery_id);
    assert.deepEqual(back.products, pages[0]!.products);
  });

  test('a storefront endpoint pages its own products only', async () => {
    const [, second] = await activeStorefronts();
    await addProducts(second!.id, 4);
    const client = await connect(`${base}/mcp/v3/storefronts/${second!.publicId}`);
    const pages = await allPages(client, 2);
    const all = pages.flatMap((p) => p.products);
    const own = await db()
      .select({ id: products.publicId })
      .from(products)
      .where(sql`${products.storefrontId} = ${second!.id} and ${products.status} = 'active'`)
      .orderBy(asc(products.id));
    assert.deepEqual(
      all.map((p) => p.product_id),
      own.map((r) => r.id),
    );
    assert.equal(pages[0]!.pagination.total_count, own.length);
    assert.ok(all.every((p) => p.ext.storefront_id === second!.publicId));
    assert.equal(pages[0]!.ext.per_source, undefined, 'per_source is the buyer endpoint’s');
  });

  test('two instances on one database: a page cached by one follows catalog changes made by the other', async () => {
    const other = await h.platform.anotherInstance();
    const appB = other.app('media-buying');
    await appB.listen({ port: 0, host: '127.0.0.1' });
    const a = await connect(`${base}/mcp/v3`);
    const b = await connect(`${baseUrlOf(appB)}/mcp/v3`);
    const first = await getProducts(a, { pagination: { max_results: 2 } });
    const page2 = { pagination: { max_results: 2, cursor: first.pagination.cursor } };
    const cached = await getProducts(a, page2);
    assert.deepEqual((await getProducts(b, page2)).products, cached.products, 'B serves the same page');
    // A product of page 2 archived on another connection than A's pool.
    const gone = cached.products[0]!.product_id;
    const outside = new pg.Client({ connectionString: h.platform.database.url });
    await outside.connect();
    try {
      await outside.query(`update media_buying.products set status = 'archived' where public_id = $1`, [
        gone,
      ]);
      const afterChange = await getProducts(a, page2);
      assert.ok(!afterChange.products.some((p) => p.product_id === gone), 'A does not serve its cached page');
      assert.equal(afterChange.pagination.total_count, first.pagination.total_count - 1);
      const keptOnA = await getProducts(a);
      assert.notEqual(
        keptOnA.ext.discovery_id,
        first.ext.discovery_id,
        'A starts a session of the new catalog',
      );
      assert.equal((await getProducts(b)).ext.discovery_id, keptOnA.ext.discovery_id, 'B reuses it');
    } finally {
      await outside.query(`update media_buying.products set status = 'active' where public_id = $1`, [gone]);
      await outside.end();
    }
    // A product added through instance B's REST API: A's next call starts a session that has it.
    const before = await getProducts(a, { pagination: { max_results: 100 } });
    const [sf] = await activeStorefronts();
    const { sellerApiKey } = h.platform.credentials('media-buying') as { sellerApiKey: string };
    const [model] = await db().select().from(products).where(eq(products.storefrontId, sf!.id)).limit(1);
    const created = await appB.inject({
      method: 'POST',
      url: `/api/v2/storefront/storefronts/${sf!.publicId}/products`,
      headers: { authorization: `Bearer ${sellerApiKey}` },
      payload: {
        name: 'Added through B',
        description: 'A product made on the other instance',
        deliveryType: model!.deliveryType,
        channels: model!.channels,
        formatIds: model!.formatIds,
        publisherProperties: model!.publisherProperties,
        pricingOptions: model!.pricingOptions,
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    const added = (created.json() as { data: { productId: string } }).data.productId;
    const afterAdd = await getProducts(a, { pagination: { max_results: 100 } });
    assert.notEqual(afterAdd.ext.discovery_id, before.ext.discovery_id);
    assert.equal(afterAdd.pagination.total_count, before.pagination.total_count + 1);
    assert.ok(afterAdd.products.some((p) => p.product_id === added));
  });
});

describe('media buying part 3: get_products buying modes, sources and terms', () => {
  let h: MediaBuyingHarness;
  let base: string;
  const clock = new ManualClock(new Date('2026-11-25T12:00:00Z'));
  const clients: Client[] = [];
  const db = () => h.platform.booted.services.get('media-buying')!.ctx.db;

  async function connect(path: string): Promise<Client> {
    const client = new Client(
      { name: 'modes-test', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(path, base), {
        requestInit: { headers: { authorization: `Bearer ${h.demo.apiKey}` } },
      }),
    );
    clients.push(client);
    return client;
  }
  /** Calls get_products; checks the arguments and the answer (or the error) against AdCP's schemas. */
  async function call(client: Client, args: Record<string, unknown>): Promise<ToolResult> {
    const a = { adcp_version: '3.1', ...args };
    const result = (await client.callTool({ name: 'get_products', arguments: a })) as unknown as ToolResult;
    if (result.isError)
      assert.deepEqual(adcpSchemaErrors('core/error.json', result.structuredContent.adcp_error), []);
    else {
      assert.deepEqual(adcpSchemaErrors('media-buy/get-products-request.json', a), [], 'request');
      assert.deepEqual(
        adcpSchemaErrors('media-buy/get-products-response.json', result.structuredContent),
        [],
        JSON.stringify(result.structuredContent),
      );
    }
    return result;
  }
  const answer = (r: ToolResult) => {
    assert.equal(r.isError, undefined, JSON.stringify(r.structuredContent));
    return r.structuredContent as unknown as ProductsAnswer & {
      wholesale_feed_version: string;
      unchanged?: boolean;
      incomplete?: { scope: string; description: string }[];
      errors?: { code: string; recovery: string; details: { source_id: string } }[];
      refinement_applied?: { scope: string; product_id?: string; proposal_id?: string; status: string }[];
    };
  };
  const error = (r: ToolResult) => {
    assert.equal(r.isError, true, JSON.stringify(r.structuredContent));
    return r.structuredContent.adcp_error as {
      code: string;
      recovery: string;
      field?: string;
      details?: {
        reason?: string;
        per_source?: { source_id: string; status: string; error: { code: string } }[];
      };
    };
  };
  const ids = (a: ProductsAnswer) => a.products.map((p) => p.product_id);
  const activeStorefronts = () =>
    db().select().from(storefronts).where(eq(storefronts.status, 'active')).orderBy(asc(storefronts.id));
  const fault = async (storefrontId: string, faults: Record<string, unknown>, scope = 'storefront') =>
    h.ops({ method: 'PUT', url: `/_ops/ad-platform-faults/${scope}/${storefrontId}`, payload: faults });
  const down = { code: 'X_PLATFORM_DOWN', message: 'The ad server is down.', recovery: 'transient' };

  before(async () => {
    h = await startMediaBuying({ clock, listen: true });
    base = baseUrlOf(h.platform.app('media-buying'));
  });
  after(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await h?.close();
  });

  test('each buying mode takes its own fields: INVALID_REQUEST otherwise; finalizing a proposal is PROPOSAL_NOT_FOUND', async () => {
    const client = await connect('/mcp/v3');
    const cases: [Record<string, unknown>, string, string][] = [
      [{ buying_mode: 'brief' }, 'INVALID_REQUEST', 'brief'],
      [{ buying_mode: 'brief', brief: '  ' }, 'INVALID_REQUEST', 'brief'],
      [
        { buying_mode: 'brief', brief: 'video', refine: [{ scope: 'request', ask: 'more' }] },
        'INVALID_REQUEST',
        'refine',
      ],
      [{ buying_mode: 'wholesale', brief: 'video' }, 'INVALID_REQUEST', 'brief'],
      [{ buying_mode: 'refine' }, 'INVALID_REQUEST', 'refine'],
      [
        { buying_mode: 'refine', brief: 'video', refine: [{ scope: 'request', ask: 'more' }] },
        'INVALID_REQUEST',
        'brief',
      ],
      [
        {
          buying_mode: 'refine',
          refine: [
            { scope: 'proposal', proposal_id: 'prop_1', action: 'finalize' },
            { scope: 'request', ask: 'more video' },
          ],
        },
        'INVALID_REQUEST',
        'refine',
      ],
      [
        { buying_mode: 'refine', refine: [{ scope: 'proposal', proposal_id: 'prop_1', action: 'finalize' }] },
        'PROPOSAL_NOT_FOUND',
        'refine[0].proposal_id',
      ],
      // Schema-level (AdCP's own conditions): the feed versions are for wholesale reads, the pricing one with the feed one.
      [
        { buying_mode: 'brief', brief: 'video', if_wholesale_feed_version: 'x' },
        'VALIDATION_ERROR',
        'buying_mode',
      ],
      [
        { buying_mode: 'wholesale', if_pricing_version: 'x' },
        'VALIDATION_ERROR',
        'if_wholesale_feed_version',
      ],
      [{ buying_mode: 'refine', refine: [] }, 'VALIDATION_ERROR', 'refine'],
    ];
    for (const [args, code, field] of cases) {
      const e = error(await call(client, args));
      assert.deepEqual([e.code, e.recovery, e.field], [code, 'correctable', field], JSON.stringify(args));
    }
    const capabilities = (await client.callTool({
      name: 'get_adcp_capabilities',
      arguments: { adcp_version: '3.1' },
    })) as unknown as ToolResult;
    const declared = capabilities.structuredContent as {
      media_buy: { buying_modes: string[] };
      wholesale_feed_versioning: { supported: boolean };
    };
    assert.deepEqual(declared.media_buy.buying_modes, ['brief', 'wholesale', 'refine']);
    assert.equal(declared.wholesale_feed_versioning.supported, true);
  });

  test('wholesale: the whole priced feed, paged, with its version; unchanged while the version holds', async () => {
    const client = await connect('/mcp/v3');
    const brief = answer(
      await call(client, { buying_mode: 'brief', brief: 'anything', pagination: { max_results: 100 } }),
    );
    const first = answer(await call(client, { buying_mode: 'wholesale', pagination: { max_results: 2 } }));
    assert.equal(first.pagination.total_count, brief.pagination.total_count, 'the whole feed');
    assert.equal(first.wholesale_feed_version, brief.wholesale_feed_version, 'one feed, one version');
    const second = answer(
      await call(client, {
        buying_mode: 'wholesale',
        pagination: { max_results: 2, cursor: first.pagination.cursor },
      }),
    );
    assert.equal(second.wholesale_feed_version, first.wholesale_feed_version, 'every page carries it');
    assert.deepEqual([...ids(first), ...ids(second)], ids(brief).slice(0, 4));
    const unchanged = answer(
      await call(client, {
        buying_mode: 'wholesale',
        if_wholesale_feed_version: first.wholesale_feed_version,
      }),
    );
    assert.equal(unchanged.unchanged, true);
    assert.equal(unchanged.wholesale_feed_version, first.wholesale_feed_version);
    assert.equal(unchanged.products, undefined);
    assert.equal(unchanged.pagination, undefined);
    // A catalog change moves the version: the whole payload again.
    const [sf] = await activeStorefronts();
    await db()
      .update(storefronts)
      .set({ name: `${sf!.name} (renamed)` })
      .where(eq(storefronts.id, sf!.id));
    const moved = answer(
      await call(client, {
        buying_mode: 'wholesale',
        if_wholesale_feed_version: first.wholesale_feed_version,
      }),
    );
    assert.equal(moved.unchanged, undefined);
    assert.notEqual(moved.wholesale_feed_version, first.wholesale_feed_version);
    assert.equal(moved.products.length, Math.min(50, moved.pagination.total_count));
  });

  test('refine: the products the entries name (omit first, similar ones for more_like_this), each entry answered', async () => {
    const client = await connect('/mcp/v3');
    const all = answer(await call(client, { buying_mode: 'wholesale', pagination: { max_results: 100 } }));
    const rows = (await db().select().from(products).where(eq(products.status, 'active'))) as {
      publicId: string;
      deliveryType: string;
      channels: string[];
    }[];
    const byId = new Map(rows.map((r) => [r.publicId, r]));
    const [a, b, c] = ids(all);
    const similarToC = ids(all).filter(
      (id) =>
        id !== c &&
        byId.get(id)!.deliveryType === byId.get(c!)!.deliveryType &&
        byId.get(id)!.channels.some((ch) => byId.get(c!)!.channels.includes(ch)),
    );
    const refine = [
      { scope: 'request', ask: 'more video' },
      { scope: 'product', product_id: a },
      { scope: 'product', product_id: b, ask: 'add a 16:9 format' },
      { scope: 'product', product_id: c, action: 'more_like_this' },
      {
        scope: 'product',
        product_id: a === similarToC[0] ? similarToC[1] : (similarToC[0] ?? 'prd_none'),
        action: 'omit',
      },
      { scope: 'product', product_id: `prd_${'0'.repeat(32)}` },
      { scope: 'proposal', proposal_id: 'prop_1', ask: 'cheaper' },
    ];
    const omitted = refine[4]!.product_id!;
    const refined = answer(
      await call(client, { buying_mode: 'refine', refine, pagination: { max_results: 100 } }),
    );
    const expected = ids(all).filter(
      (id) => (id === a || id === b || id === c || similarToC.includes(id)) && id !== omitted,
    );
    assert.deepEqual(ids(refined), expected, 'session order');
    assert.equal(refined.pagination.total_count, expected.length);
    assert.deepEqual(
      refined.refinement_applied!.map((r) => [r.scope, r.product_id ?? r.proposal_id ?? null, r.status]),
      [
        ['request', null, 'unable'],
        ['product', a, 'applied'],
        ['product', b, 'partial'],
        ['product', c, similarToC.filter((id) => id !== omitted).length > 0 ? 'applied' : 'partial'],
        ['product', omitted, 'applied'],
        ['product', `prd_${'0'.repeat(32)}`, 'unable'],
        ['proposal', 'prop_1', 'unable'],
      ],
    );
    // Paged in SQL over the refined products, in session order.
    const page1 = answer(
      await call(client, { buying_mode: 'refine', refine, pagination: { max_results: 2 } }),
    );
    const page2 = answer(
      await call(client, {
        buying_mode: 'refine',
        refine,
        pagination: { max_results: 2, cursor: page1.pagination.cursor },
      }),
    );
    assert.deepEqual([...ids(page1), ...ids(page2)], expected.slice(0, 4));
    // Only omissions: every other product.
    const onlyOmit = answer(
      await call(client, {
        buying_mode: 'refine',
        refine: [{ scope: 'product', product_id: a, action: 'omit' }],
        pagination: { max_results: 100 },
      }),
    );
    assert.deepEqual(
      ids(onlyOmit),
      ids(all).filter((id) => id !== a),
    );
  });

  test('a source whose ad platform fails shows failed in per_source with its error while the others answer; none answering is all_sources_failed', async () => {
    const client = await connect('/mcp/v3');
    const sfs = await activeStorefronts();
    const before = answer(
      await call(client, { buying_mode: 'brief', brief: 'any', pagination: { max_results: 100 } }),
    );
    assert.ok(before.ext.per_source!.every((s) => s.status === 'ok'));
    assert.equal((await fault(sfs[1]!.publicId, { discovery: down })).statusCode, 200);
    try {
      const partial = answer(
        await call(client, { buying_mode: 'brief', brief: 'any', pagination: { max_results: 100 } }),
      );
      const failed = partial.ext.per_source!.find((s) => s.source_id === sfs[1]!.publicId)!;
      assert.deepEqual(
        [failed.status, failed.error?.code, failed.recovery],
        ['failed', 'X_PLATFORM_DOWN', 'transient'],
      );
      assert.ok(partial.ext.per_source!.filter((s) => s !== failed).every((s) => s.status === 'ok'));
      assert.ok(partial.products.length > 0);
      assert.ok(
        partial.products.every((p) => p.ext.storefront_id !== sfs[1]!.publicId),
        'its products are left out',
      );
      assert.equal(
        partial.pagination.total_count,
        before.products.filter((p) => p.ext.storefront_id !== sfs[1]!.publicId).length,
      );
      assert.equal(partial.incomplete![0]!.scope, 'products');
      assert.deepEqual(
        partial.errors!.map((e) => [e.code, e.details.source_id]),
        [['X_PLATFORM_DOWN', sfs[1]!.publicId]],
      );
      assert.notEqual(
        partial.wholesale_feed_version,
        before.wholesale_feed_version,
        'a partial feed is another version',
      );
      const wholesale = answer(await call(client, { buying_mode: 'wholesale' }));
      assert.equal(wholesale.incomplete![0]!.scope, 'wholesale_feed');
      // That storefront's own endpoint: no source answers.
      const own = error(
        await call(await connect(`/mcp/v3/storefronts/${sfs[1]!.publicId}`), {
          buying_mode: 'brief',
          brief: 'any',
        }),
      );
      assert.deepEqual(
        [own.code, own.recovery, own.details?.reason],
        ['X_PLATFORM_DOWN', 'transient', 'all_sources_failed'],
      );
      assert.deepEqual(
        own.details?.per_source?.map((s) => [s.source_id, s.status]),
        [[sfs[1]!.publicId, 'failed']],
      );
      // Every storefront down: all_sources_failed with every source, the codes kept when they agree.
      for (const sf of sfs)
        await fault(sf.publicId, { discovery: { ...down, code: sf === sfs[0] ? 'X_OTHER' : down.code } });
      const none = error(await call(client, { buying_mode: 'brief', brief: 'any' }));
      assert.deepEqual(
        [none.code, none.recovery, none.details?.reason],
        ['SERVICE_UNAVAILABLE', 'transient', 'all_sources_failed'],
      );
      assert.deepEqual(
        none.details!.per_source!.map((s) => s.source_id),
        sfs.map((sf) => sf.publicId),
      );
    } finally {
      for (const sf of sfs) await fault(sf.publicId, {});
    }
    const recovered = answer(
      await call(client, { buying_mode: 'brief', brief: 'any', pagination: { max_results: 100 } }),
    );
    assert.ok(recovered.ext.per_source!.every((s) => s.status === 'ok'));
    assert.equal(recovered.wholesale_feed_version, before.wholesale_feed_version);
    // A discovery fault is a storefront's: refused on a sales agent.
    const [agent] = await db().select().from(salesAgents).limit(1);
    assert.equal((await fault(agent!.publicId, { discovery: down }, 'sales_agent')).statusCode, 422);
  });

  test('an ad platform whose discovery check throws leaves every source it covers failed (all_sources_failed), never an internal error', async () => {
    const client = await connect('/mcp/v3');
    const sfs = await activeStorefronts();
    const check = mock.method(SimulatedBuyingPlatform.prototype, 'discoveryFailures', async () => {
      throw new Error('connect ECONNREFUSED 10.0.0.7:443');
    });
    try {
      const failed = error(await call(client, { buying_mode: 'brief', brief: 'any' }));
      assert.deepEqual(
        [failed.code, failed.recovery, failed.details?.reason],
        ['SERVICE_UNAVAILABLE', 'transient', 'all_sources_failed'],
      );
      assert.deepEqual(
        failed.details!.per_source!.map((s) => [s.source_id, s.status, s.error.code]),
        sfs.map((sf) => [sf.publicId, 'failed', 'SERVICE_UNAVAILABLE']),
      );
      assert.ok(!JSON.stringify(failed).includes('ECONNREFUSED'), 'the error itself is never shown');
      assert.ok(check.mock.callCount() > 0);
    } finally {
      check.mock.restore();
    }
    answer(await call(client, { buying_mode: 'brief', brief: 'any' }));
  });

  test('a fault set through another instance is seen by this one at once (the discovery state version moves)', async () => {
    const other = await h.platform.anotherInstance();
    const client = await connect('/mcp/v3');
    const sfs = await activeStorefronts();
    answer(await call(client, { buying_mode: 'brief', brief: 'any' }));
    const res = await other.app('media-buying').inject({
      method: 'PUT',
      url: `/_ops/ad-platform-faults/storefront/${sfs[0]!.publicId}`,
      headers: { authorization: h.platform.operatorAuth },
      payload: { discovery: down },
    });
    assert.equal(res.statusCode, 200, res.body);
    try {
      const seen = answer(await call(client, { buying_mode: 'brief', brief: 'any' }));
      assert.equal(seen.ext.per_source!.find((s) => s.source_id === sfs[0]!.publicId)!.status, 'failed');
    } finally {
      await fault(sfs[0]!.publicId, {});
    }
  });

  test('like REST discover-products, get_products is refused while the caller has Terms of Service to accept; reads are not', async () => {
    const client = await connect('/mcp/v3');
    const published = await h.ops({
      method: 'POST',
      url: '/_ops/terms',
      payload: { version: '2026-12-01', title: 'Terms of Service', body: 'New terms.' },
    });
    assert.equal(published.statusCode, 201, published.body);
    const refused = error(await call(client, { buying_mode: 'brief', brief: 'any' }));
    assert.deepEqual([refused.code, refused.recovery], ['TOS_ACCEPTANCE_REQUIRED', 'terminal']);
    const [adv] = await db().select().from(advertisers).limit(1);
    const rest = await h.bearer(h.demo.apiKey, {
      method: 'POST',
      url: '/api/v2/buyer/discovery/new/discover-products',
      payload: { advertiserId: adv!.publicId },
    });
    assert.equal(rest.statusCode, 403, rest.body);
    assert.equal((rest.json() as { error: { code: string } }).error.code, 'TOS_ACCEPTANCE_REQUIRED');
    const read = (await client.callTool({ name: 'list_creatives', arguments: {} })) as unknown as ToolResult;
    assert.equal(read.isError, undefined, 'a read tool answers');
    await h.signInAccepted(h.demo.email, h.demo.password);
    answer(await call(client, { buying_mode: 'brief', brief: 'any' }));
  });
});
