/**
 * MCP `get_products` (issue 18, part 3): the catalog version the database keeps (`catalog_versions`, bumped by a
 * trigger once per transaction that writes products, storefronts or a Seller Account's public id), a repeat call that
 * reads its kept session without reading the catalog, pages in SQL over the available products in session order (a
 * product archived after the session started leaves later pages and counts), and the per-instance page cache staying
 * right when another instance on the same database changes the catalog.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { asc, eq, sql } from 'drizzle-orm';
import pg from 'pg';
import { baseUrlOf } from '../../../../test/support/platform.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { prefixedHexId } from '../../../platform/ids.ts';
import {
  advertisers,
  catalogVersions,
  discoverySessions,
  organizations,
  products,
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
    per_source?: { source: string; status: string; product_count: number }[];
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
    const ours = statements.filter((s) => !s.startsWith('[media_buying_caller'));
    assert.ok(
      ours.every((s) => !/from "media_buying"\."products"/.test(s)),
      `no read of the catalog: ${ours.join('\n')}`,
    );
    assert.ok(ours.length <= 2, `context and page only: ${ours.join('\n')}`);
    // The same page again is served from the instance's page cache: the context statement only.
    const third = await statementsOf(() => getProducts(client));
    assert.equal(third.filter((s) => !s.startsWith('[media_buying_caller')).length, 1, third.join('\n'));
    assert.equal((await version()).version, stored.version, 'reading never moves the version');
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
      perSource.reduce((n, s) => n + s.product_count, 0),
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
