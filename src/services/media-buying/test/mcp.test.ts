/**
 * The MCP endpoints (part 3, issue 18, mcp-core): both eras on one URL with the official SDK client
 * (`@modelcontextprotocol/client` v2, pinned to the 2026-07-28 stateless revision, and in its `legacy` mode, the
 * initialize/session lifecycle), sessions kept in PostgreSQL (two instances serve one session), bound to their
 * principal, ended by DELETE and expired by the clock; the 401 challenge; `mcp_at_` credentials accepted only on
 * their exact resource; the activation sandbox refused; AdCP version negotiation; the error and validation shapes;
 * every read tool's arguments and answers valid against AdCP's own schemas; delivery moving with the clock.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client, type FetchLike, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { and, eq } from 'drizzle-orm';
import { baseUrlOf } from '../../../../test/support/platform.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { ApiError } from '../../../platform/errors.ts';
import {
  advertiserAccounts,
  advertisers,
  discoverySessions,
  organizations,
  storefronts,
  users,
} from '../db/schema.ts';
import { AdcpError, mcpResourceUri, mcpTargetOfResource } from '../mcp/contract.ts';
import { McpDispatcher } from '../mcp/dispatch.ts';
import { MCP_SESSION_IDLE_SECONDS } from '../mcp/index.ts';
import { adcpSchemaErrors } from './support/adcp-schemas.ts';
import { insertConnection } from './support/connectors.ts';
import {
  envelopeData,
  type MediaBuyingHarness,
  STRONG_PASSWORD,
  startMediaBuying,
} from './support/harness.ts';
import { initializeMessage } from './support/mcp-messages.ts';

type Mode = 'legacy' | 'auto' | { pin: string };
const STATELESS: Mode = { pin: '2026-07-28' };
const ACCEPT = 'application/json, text/event-stream';

interface ToolResult {
  isError?: boolean;
  content: { type: string; text: string }[];
  structuredContent: Record<string, unknown>;
}

describe('media buying part 3: the MCP endpoints', () => {
  let h: MediaBuyingHarness;
  let base: string;
  const clock = new ManualClock(new Date('2026-11-25T12:00:00Z'));
  let storefrontId: string;
  let sellerAdminKey: string;
  const clients: Client[] = [];

  const db = () => h.platform.booted.services.get('media-buying')!.ctx.db;
  const publicUrl = () => h.platform.booted.services.get('media-buying')!.ctx.publicUrl;

  /** An SDK client connected to `path` with `credential`, in `mode`, through `fetchImpl` (default: global fetch). */
  async function connect(path: string, credential: string, mode: Mode, fetchImpl?: FetchLike) {
    const client = new Client({ name: 'test-agent', version: '1.0.0' }, { versionNegotiation: { mode } });
    const transport = new StreamableHTTPClientTransport(new URL(path, base), {
      requestInit: { headers: { authorization: `Bearer ${credential}` } },
      ...(fetchImpl ? { fetch: fetchImpl } : {}),
    });
    await client.connect(transport);
    clients.push(client);
    return { client, transport };
  }

  /** Calls a tool and checks the rendering rules (text = JSON of the structured content or of the error). */
  async function call(client: Client, name: string, args: Record<string, unknown>): Promise<ToolResult> {
    const result = (await client.callTool({ name, arguments: args })) as unknown as ToolResult;
    const text = result.content.find((c) => c.type === 'text')?.text;
    assert.ok(text, 'a text content');
    if (result.isError) {
      const body = result.structuredContent.adcp_error as Record<string, unknown>;
      assert.deepEqual(JSON.parse(text), body, 'the text is the adcp_error JSON');
      assert.deepEqual(result.structuredContent.errors, [body], 'errors[] mirrors adcp_error');
      assert.deepEqual(adcpSchemaErrors('core/error.json', body), []);
    } else assert.deepEqual(JSON.parse(text), result.structuredContent);
    return result;
  }

  /** A raw JSON-RPC POST (session-era shape unless headers add more). */
  const post = (path: string, body: unknown, headers: Record<string, string>) =>
    fetch(new URL(path, base), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers },
      body: JSON.stringify(body),
    });
  const initializeBody = initializeMessage('raw');
  const listBody = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
  /** Opens a session with a raw `initialize` and returns its id. */
  async function openSession(path: string, credential: string): Promise<string> {
    const res = await post(path, initializeBody, { authorization: `Bearer ${credential}` });
    assert.equal(res.status, 200, await res.clone().text());
    const id = res.headers.get('mcp-session-id');
    assert.match(id ?? '', /^mcs_[A-Za-z0-9_-]{43}$/);
    return id!;
  }
  const inSession = (path: string, credential: string, sessionId: string, body: unknown = listBody) =>
    post(path, body, {
      authorization: `Bearer ${credential}`,
      'mcp-session-id': sessionId,
      'mcp-protocol-version': '2025-11-25',
    });

  before(async () => {
    h = await startMediaBuying({ clock, listen: true });
    base = baseUrlOf(h.platform.app('media-buying'));
    const [sf] = await db().select().from(storefronts).where(eq(storefronts.status, 'active')).limit(1);
    storefrontId = sf!.publicId;
    await h.addMember(h.demo.sellerOrganizationId, 'seller-admin@example.com', 'admin');
    const cookie = await h.signInAccepted('seller-admin@example.com', STRONG_PASSWORD);
    // The new member's active organization is the Demo Seller (their only one).
    sellerAdminKey = await h.createUserKey(cookie, 'admin mcp');
  });
  after(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await h?.close();
  });

  test('stateless era (2026-07-28) and session era (initialize) on the same URL, with the official client', async () => {
    for (const mode of [STATELESS, 'legacy'] as const) {
      const { client, transport } = await connect('/mcp/v3', h.demo.apiKey, mode);
      if (mode === 'legacy') assert.match(transport.sessionId ?? '', /^mcs_/);
      else assert.equal(transport.sessionId, undefined, 'no session in the stateless era');
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), [
        'create_media_buy',
        'get_adcp_capabilities',
        'get_media_buy_delivery',
        'get_media_buys',
        'get_products',
        'list_accounts',
        'list_creative_formats',
        'list_creatives',
        'sync_creatives',
        'update_media_buy',
      ]);
      const args = { buying_mode: 'brief', brief: 'display in the US', adcp_version: '3.1' };
      assert.deepEqual(adcpSchemaErrors('media-buy/get-products-request.json', args), []);
      const result = await call(client, 'get_products', args);
      assert.equal(result.isError, undefined, JSON.stringify(result.structuredContent));
      assert.deepEqual(
        adcpSchemaErrors('media-buy/get-products-response.json', result.structuredContent),
        [],
      );
      const products = result.structuredContent.products as {
        ext: { quote_id: string; storefront_id: string };
      }[];
      assert.ok(products.length >= 3);
      assert.ok(products.every((p) => /^dqt_[0-9a-f]{32}$/.test(p.ext.quote_id)));
      const perSource = (
        result.structuredContent.ext as { per_source: { source_id: string; status: string }[] }
      ).per_source;
      assert.ok(perSource.length >= 2, 'one entry per storefront source');
      assert.deepEqual(
        new Set(products.map((p) => p.ext.storefront_id)),
        new Set(perSource.filter((s) => s.status === 'ok').map((s) => s.source_id)),
      );
    }
  });

  test('a storefront endpoint serves that storefront only; an unknown or archived storefront is 404', async () => {
    const { client } = await connect(`/mcp/v3/storefronts/${storefrontId}`, h.demo.apiKey, STATELESS);
    const result = await call(client, 'get_products', {
      buying_mode: 'brief',
      brief: 'any display or video',
    });
    const products = result.structuredContent.products as { ext: { storefront_id: string } }[];
    assert.ok(products.length > 0);
    assert.ok(products.every((p) => p.ext.storefront_id === storefrontId));
    assert.equal((result.structuredContent.ext as Record<string, unknown>).per_source, undefined);
    const unknown = await post(`/mcp/v3/storefronts/sf_${'0'.repeat(32)}`, initializeBody, {
      authorization: `Bearer ${h.demo.apiKey}`,
    });
    assert.equal(unknown.status, 404);
    assert.equal(((await unknown.json()) as { jsonrpc: string }).jsonrpc, '2.0');
    const [other] = await db()
      .select()
      .from(storefronts)
      .where(eq(storefronts.status, 'active'))
      .offset(1)
      .limit(1);
    await db().update(storefronts).set({ status: 'archived' }).where(eq(storefronts.id, other!.id));
    try {
      const archived = await post(`/mcp/v3/storefronts/${other!.publicId}`, initializeBody, {
        authorization: `Bearer ${h.demo.apiKey}`,
      });
      assert.equal(archived.status, 404);
    } finally {
      await db().update(storefronts).set({ status: 'active' }).where(eq(storefronts.id, other!.id));
    }
  });

  test('the mutating tools over the wire: sync_accounts replays its idempotency_key, the link is on the REST list, a missing key is VALIDATION_ERROR', async () => {
    const [streaming] = await db().select().from(storefronts).where(eq(storefronts.name, 'Demo Streaming'));
    const { client } = await connect(`/mcp/v3/storefronts/${streaming!.publicId}`, h.demo.apiKey, STATELESS);
    const args = {
      idempotency_key: `wire-${'k'.repeat(16)}`,
      accounts: [
        {
          brand: { domain: 'demo-buyer.example', brand_id: h.demo.advertiserId },
          operator: 'demo-buyer.example',
          billing: 'operator',
        },
      ],
    };
    assert.deepEqual(adcpSchemaErrors('account/sync-accounts-request.json', args), []);
    const first = await call(client, 'sync_accounts', args);
    assert.equal(first.isError, undefined, JSON.stringify(first.structuredContent));
    assert.deepEqual(adcpSchemaErrors('account/sync-accounts-response.json', first.structuredContent), []);
    const link = (
      first.structuredContent.accounts as { account_id: string; action: string; status: string }[]
    )[0]!;
    assert.deepEqual([link.action, link.status], ['created', 'pending_approval']);
    const replay = await call(client, 'sync_accounts', args);
    assert.equal(replay.structuredContent.replayed, true);
    assert.deepEqual(replay.structuredContent.accounts, first.structuredContent.accounts);
    const rest = await fetch(new URL('/api/v2/buyer/advertiser-accounts?take=100', base), {
      headers: { authorization: `Bearer ${h.demo.apiKey}` },
    });
    const listed = ((await rest.json()) as { data: { accountId: string; status: string }[] }).data;
    assert.deepEqual(
      listed.filter((a) => a.accountId === link.account_id).map((a) => a.status),
      ['pending_approval'],
    );
    const { idempotency_key: _omitted, ...keyless } = args;
    const refused = await call(client, 'sync_accounts', keyless);
    assert.equal((refused.structuredContent.adcp_error as { code: string }).code, 'VALIDATION_ERROR');
  });

  test('a session opened on one instance is served by another (sessions live in PostgreSQL)', async () => {
    const other = await h.platform.anotherInstance();
    const appB = other.app('media-buying');
    await appB.listen({ port: 0, host: '127.0.0.1' });
    const baseB = baseUrlOf(appB);
    const seen: string[] = [];
    let target = base;
    // Every request after initialize goes to instance B.
    const switching: FetchLike = async (url, init) => {
      const u = new URL(url);
      const to = new URL(`${u.pathname}${u.search}`, target);
      seen.push(`${to.origin} ${init?.method}`);
      const res = await fetch(to, init);
      return res;
    };
    const { client, transport } = await connect('/mcp/v3', h.demo.apiKey, 'legacy', switching);
    target = baseB;
    const result = await call(client, 'get_adcp_capabilities', {});
    assert.equal(result.isError, undefined);
    assert.ok(
      seen.some((s) => s.startsWith(baseB)),
      'instance B served the call',
    );
    assert.equal(seen[0], `${base} POST`, 'instance A answered initialize');
    // B ends the session; A then does not know it either.
    await transport.terminateSession();
    const after = await inSession('/mcp/v3', h.demo.apiKey, transport.sessionId ?? 'mcs_gone');
    assert.equal(after.status, 404);
  });

  test('a session is bound to its principal, its endpoint, ends on DELETE and expires after the idle timeout', async () => {
    const id = await openSession('/mcp/v3', h.demo.apiKey);
    assert.equal((await inSession('/mcp/v3', h.demo.apiKey, id)).status, 200);
    // Another principal presenting the id: not found, as an unknown id.
    assert.equal((await inSession('/mcp/v3', sellerAdminKey, id)).status, 404);
    // The same principal on another endpoint: not found.
    assert.equal((await inSession(`/mcp/v3/storefronts/${storefrontId}`, h.demo.apiKey, id)).status, 404);
    // Another protocol version than the session negotiated: 400.
    const mismatched = await post('/mcp/v3', listBody, {
      authorization: `Bearer ${h.demo.apiKey}`,
      'mcp-session-id': id,
      'mcp-protocol-version': '2025-06-18',
    });
    assert.equal(mismatched.status, 400);
    // Without the header: 400 (the protocol's rule).
    assert.equal((await post('/mcp/v3', listBody, { authorization: `Bearer ${h.demo.apiKey}` })).status, 400);
    // Idle timeout, by the clock: each request slides it.
    clock.advance((MCP_SESSION_IDLE_SECONDS - 60) * 1000);
    assert.equal((await inSession('/mcp/v3', h.demo.apiKey, id)).status, 200);
    clock.advance((MCP_SESSION_IDLE_SECONDS - 60) * 1000);
    assert.equal((await inSession('/mcp/v3', h.demo.apiKey, id)).status, 200, 'slid by the last request');
    clock.advance((MCP_SESSION_IDLE_SECONDS + 1) * 1000);
    assert.equal((await inSession('/mcp/v3', h.demo.apiKey, id)).status, 404, 'expired');
    // DELETE ends another session at once; by another principal it is 404 and changes nothing.
    const second = await openSession('/mcp/v3', h.demo.apiKey);
    const del = (credential: string) =>
      fetch(new URL('/mcp/v3', base), {
        method: 'DELETE',
        headers: { authorization: `Bearer ${credential}`, 'mcp-session-id': second },
      });
    assert.equal((await del(sellerAdminKey)).status, 404);
    assert.equal((await inSession('/mcp/v3', h.demo.apiKey, second)).status, 200);
    assert.equal((await del(h.demo.apiKey)).status, 200);
    assert.equal((await inSession('/mcp/v3', h.demo.apiKey, second)).status, 404);
    // GET (the optional server stream) is not offered.
    const get = await fetch(new URL('/mcp/v3', base), {
      headers: {
        authorization: `Bearer ${h.demo.apiKey}`,
        accept: 'text/event-stream',
        'mcp-session-id': id,
      },
    });
    assert.equal(get.status, 405);
  });

  test('401 with the RFC 9728 challenge: missing, invalid, and foreign-resource credentials', async () => {
    const metadata = `${publicUrl()}/.well-known/oauth-protected-resource/mcp/v3`;
    const missing = await post('/mcp/v3', initializeBody, {});
    assert.equal(missing.status, 401);
    assert.equal(missing.headers.get('www-authenticate'), `Bearer resource_metadata="${metadata}"`);
    const body = (await missing.json()) as {
      jsonrpc: string;
      id: unknown;
      error: { code: number; message: string };
    };
    assert.equal(body.jsonrpc, '2.0');
    assert.equal(typeof body.error.code, 'number');
    for (const credential of ['mbu_not-a-real-key-at-all', 'garbage with spaces']) {
      const invalid = await post('/mcp/v3', initializeBody, { authorization: `Bearer ${credential}` });
      assert.equal(invalid.status, 401);
      assert.equal(
        invalid.headers.get('www-authenticate'),
        `Bearer resource_metadata="${metadata}", error="invalid_token"`,
      );
    }
    // A widget token (for pages embedding the UI's widgets) is no MCP credential, though it reads on REST.
    await h.ops({
      method: 'PUT',
      url: `/_ops/organizations/${h.demo.organizationId}/alpha/embedded-widgets`,
    });
    const cookie = await h.signIn(h.demo.email, h.demo.password);
    const issued = await h.session(cookie, { url: '/api/v2/user-api-keys/widget-token' });
    const { token: widget } = envelopeData<{ token: string }>(issued);
    assert.match(widget, /^wgt_/);
    assert.equal((await h.bearer(widget, { url: '/auth/me' })).statusCode, 200);
    const byWidget = await post('/mcp/v3', initializeBody, { authorization: `Bearer ${widget}` });
    assert.equal(byWidget.status, 401);
    assert.equal(
      byWidget.headers.get('www-authenticate'),
      `Bearer resource_metadata="${metadata}", error="invalid_token"`,
    );
    const storefrontPath = `/mcp/v3/storefronts/${storefrontId}`;
    const sfMissing = await post(storefrontPath, initializeBody, {});
    assert.equal(
      sfMissing.headers.get('www-authenticate'),
      `Bearer resource_metadata="${publicUrl()}/.well-known/oauth-protected-resource${storefrontPath}"`,
    );
  });

  test('mcp_at_ credentials: only on their exact resource, never on REST, not after disconnect or removal', async () => {
    const [demoUser] = await db().select().from(users).where(eq(users.email, h.demo.email));
    const connection = await insertConnection(db(), {
      userPublicId: demoUser!.publicId,
      appName: 'Test connector',
      resource: mcpResourceUri(publicUrl(), '/mcp/v3'),
      firstConnectedAt: clock.now(),
    });
    const token = connection.accessTokens[0]!;
    assert.equal(mcpTargetOfResource(publicUrl(), mcpResourceUri(publicUrl(), '/mcp/v3'))?.path, '/mcp/v3');
    const { client } = await connect('/mcp/v3', token, STATELESS);
    const result = await call(client, 'get_media_buys', {});
    assert.equal(result.isError, undefined, JSON.stringify(result.structuredContent));
    assert.ok(
      (result.structuredContent.media_buys as unknown[]).length >= 1,
      'the user acts in the grant organization',
    );
    // Another MCP endpoint: 401 invalid_token.
    for (const path of [`/mcp/v3/storefronts/${storefrontId}`, '/mcp/v3/admin', '/mcp/v3/creative']) {
      const res = await post(path, initializeBody, { authorization: `Bearer ${token}` });
      assert.equal(res.status, 401, path);
      assert.match(res.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    }
    // Any REST route: refused.
    const rest = await h.bearer(token, { url: '/api/v2/buyer/media-buys' });
    assert.equal(rest.statusCode, 401);
    // A grant bound to the storefront's resource works there and not on /mcp/v3.
    const sfConnection = await insertConnection(db(), {
      userPublicId: demoUser!.publicId,
      appName: 'Storefront connector',
      resource: mcpResourceUri(publicUrl(), `/mcp/v3/storefronts/${storefrontId}`),
      firstConnectedAt: clock.now(),
    });
    const sfToken = sfConnection.accessTokens[0]!;
    assert.equal(
      (
        await post(`/mcp/v3/storefronts/${storefrontId}`, initializeBody, {
          authorization: `Bearer ${sfToken}`,
        })
      ).status,
      200,
    );
    assert.equal((await post('/mcp/v3', initializeBody, { authorization: `Bearer ${sfToken}` })).status, 401);
    // Disconnected in Connected apps: refused at once.
    const cookie = await h.signIn(h.demo.email, h.demo.password);
    const disconnected = await h.session(cookie, {
      method: 'DELETE',
      url: `/api/v2/connected-apps/${sfConnection.id}`,
    });
    assert.equal(disconnected.statusCode, 200, disconnected.body);
    assert.equal(
      (
        await post(`/mcp/v3/storefronts/${storefrontId}`, initializeBody, {
          authorization: `Bearer ${sfToken}`,
        })
      ).status,
      401,
    );
  });

  test('a user no longer a member of the grant organization: its mcp_at_ is refused', async () => {
    const userId = await h.addMember(h.demo.organizationId, 'leaving@example.com', 'member');
    // The new member's active organization is the demo buyer (their only one).
    const connection = await insertConnection(db(), {
      userPublicId: userId,
      appName: 'Leaving connector',
      resource: mcpResourceUri(publicUrl(), '/mcp/v3'),
      firstConnectedAt: clock.now(),
    });
    const token = connection.accessTokens[0]!;
    assert.equal((await post('/mcp/v3', initializeBody, { authorization: `Bearer ${token}` })).status, 200);
    const admin = await h.signInAccepted(h.demo.email, h.demo.password);
    const removed = await h.session(admin, {
      method: 'DELETE',
      url: `/api/v2/organizations/current/members/${userId}`,
    });
    assert.equal(removed.statusCode, 200, removed.body);
    assert.equal((await post('/mcp/v3', initializeBody, { authorization: `Bearer ${token}` })).status, 401);
  });

  test('activation-sandbox credentials are refused with their UNBOUND_FREE_* code', async () => {
    const registered = await h.call({
      method: 'POST',
      url: '/api/v2/activation/registrations',
      payload: { agentName: 'sandbox agent' },
    });
    const { assertion } = envelopeData<{ assertion: string }>(registered);
    const exchanged = await h.call({
      method: 'POST',
      url: '/api/v2/activation/token',
      payload: { assertion },
    });
    const { accessToken } = envelopeData<{ accessToken: string }>(exchanged);
    const res = await post('/mcp/v3', initializeBody, { authorization: `Bearer ${accessToken}` });
    assert.equal(res.status, 403);
    const body = (await res.json()) as { error: { data: { code: string; recovery: string } } };
    assert.equal(body.error.data.code, 'UNBOUND_FREE_SPEND_PROHIBITED');
  });

  test('AdCP versions: 3.2 downshifts to 3.1, 3.0 stays, another major is VERSION_UNSUPPORTED', async () => {
    const { client } = await connect('/mcp/v3', h.demo.apiKey, STATELESS);
    for (const [asked, served] of [
      ['3.2', '3.1'],
      ['3.1', '3.1'],
      ['3.0', '3.0'],
    ] as const) {
      const result = await call(client, 'get_adcp_capabilities', { adcp_version: asked });
      assert.equal(result.structuredContent.adcp_version, served, asked);
    }
    assert.equal(
      (await call(client, 'get_adcp_capabilities', { adcp_major_version: 3 })).structuredContent.adcp_version,
      '3.1',
    );
    // A cross-major call is VERSION_UNSUPPORTED even when it does not match this major's input schema (get_products
    // without buying_mode, a 4.x shape).
    for (const [tool, args] of [
      ['get_adcp_capabilities', { adcp_version: '4.0' }],
      ['get_adcp_capabilities', { adcp_version: '2.5' }],
      ['get_adcp_capabilities', { adcp_major_version: 2 }],
      ['get_products', { adcp_version: '4.0' }],
      ['get_media_buy_delivery', { adcp_version: '4.0', start_date: 20260101 }],
    ] as const) {
      const result = await call(client, tool, args);
      assert.equal(result.isError, true);
      const error = result.structuredContent.adcp_error as {
        code: string;
        recovery: string;
        details: { supported_versions: string[] };
      };
      assert.equal(error.code, 'VERSION_UNSUPPORTED');
      assert.equal(error.recovery, 'correctable');
      assert.deepEqual(error.details.supported_versions, ['3.0', '3.1']);
    }
  });

  test('arguments are validated against the input schema: VALIDATION_ERROR with field and issues[]', async () => {
    const { client } = await connect('/mcp/v3', h.demo.apiKey, 'legacy');
    const result = await call(client, 'get_products', { brief: 42, pagination: { max_results: 0 } });
    assert.equal(result.isError, true);
    const error = result.structuredContent.adcp_error as {
      code: string;
      recovery: string;
      field: string;
      issues: { pointer: string; keyword: string }[];
    };
    assert.equal(error.code, 'VALIDATION_ERROR');
    assert.equal(error.recovery, 'correctable');
    const pointers = error.issues.map((i) => `${i.pointer} ${i.keyword}`).sort();
    assert.deepEqual(pointers, ['/brief type', '/buying_mode required', '/pagination/max_results minimum']);
    assert.equal(error.field, error.issues[0]!.pointer.slice(1).replace(/\/(\w+)/g, '.$1'));
    // An unknown tool is the protocol's invalid-params error.
    await assert.rejects(client.callTool({ name: 'create_nothing', arguments: {} }), /Unknown tool/);
  });

  test('get_media_buy_delivery: an impossible calendar date or a reversed range is VALIDATION_ERROR', async () => {
    const { client } = await connect('/mcp/v3', h.demo.apiKey, STATELESS);
    for (const [args, field] of [
      [{ start_date: '2026-02-30' }, 'start_date'],
      [{ end_date: '2026-13-01' }, 'end_date'],
      [{ start_date: '2025-02-29', end_date: '2026-01-01' }, 'start_date'],
      [{ start_date: '2026-03-02', end_date: '2026-03-01' }, 'start_date'],
    ] as const) {
      const result = await call(client, 'get_media_buy_delivery', {
        media_buy_ids: [h.demo.mediaBuyId],
        ...args,
      });
      assert.equal(result.isError, true, JSON.stringify(args));
      const error = result.structuredContent.adcp_error as { code: string; recovery: string; field: string };
      assert.deepEqual([error.code, error.recovery, error.field], ['VALIDATION_ERROR', 'correctable', field]);
    }
    const leap = await call(client, 'get_media_buy_delivery', {
      media_buy_ids: [h.demo.mediaBuyId],
      start_date: '2024-02-29',
      end_date: '2026-11-25',
    });
    assert.equal(leap.isError, undefined, JSON.stringify(leap.structuredContent));
  });

  test('account.account_id must be authorized for the buyer on that storefront (ACCOUNT_NOT_FOUND) and narrows the lists', async () => {
    const [org] = await db()
      .select()
      .from(organizations)
      .where(eq(organizations.publicId, h.demo.organizationId));
    const [adv] = await db().select().from(advertisers).where(eq(advertisers.publicId, h.demo.advertiserId));
    const [here] = await db().select().from(storefronts).where(eq(storefronts.publicId, storefrontId));
    const [other] = await db()
      .select()
      .from(storefronts)
      .where(eq(storefronts.status, 'active'))
      .orderBy(storefronts.id)
      .offset(1)
      .limit(1);
    const foreignStorefront =
      other!.id === here!.id ? (await db().select().from(storefronts).limit(1))[0]! : other!;
    const linkId = `acc_${'f'.repeat(32)}`;
    await db()
      .insert(advertiserAccounts)
      .values({
        publicId: linkId,
        organizationId: org!.id,
        advertiserId: adv!.id,
        storefrontId: foreignStorefront.id,
        sellerOrganizationId: foreignStorefront.organizationId,
        name: 'Link elsewhere',
        status: 'active',
        operator: 'example.com',
        currency: foreignStorefront.currency,
        createdAt: clock.now(),
        updatedAt: clock.now(),
      } as typeof advertiserAccounts.$inferInsert)
      .onConflictDoNothing();
    const [link] = await db()
      .select()
      .from(advertiserAccounts)
      .where(
        and(
          eq(advertiserAccounts.storefrontId, foreignStorefront.id),
          eq(advertiserAccounts.organizationId, org!.id),
        ),
      );
    assert.notEqual(link!.storefrontId, here!.id);
    const notFound = (r: ToolResult) => {
      assert.equal(r.isError, true, JSON.stringify(r.structuredContent));
      const e = r.structuredContent.adcp_error as {
        code: string;
        field: string;
        details: { reason: string };
      };
      assert.deepEqual(
        [e.code, e.field, e.details.reason],
        ['ACCOUNT_NOT_FOUND', 'account.account_id', 'account_not_authorized_for_buyer'],
      );
    };
    // A link with another storefront, presented on this storefront's endpoint: not authorized here.
    const sf = await connect(`/mcp/v3/storefronts/${storefrontId}`, h.demo.apiKey, STATELESS);
    notFound(
      await call(sf.client, 'get_products', {
        buying_mode: 'brief',
        brief: 'any display or video',
        account: { account_id: link!.publicId },
      }),
    );
    for (const tool of ['list_creatives', 'get_media_buys', 'get_media_buy_delivery'])
      notFound(await call(sf.client, tool, { account: { account_id: link!.publicId } }));
    // On the buyer endpoint the link is the buyer's: accepted.
    const buyer = await connect('/mcp/v3', h.demo.apiKey, STATELESS);
    const ok = await call(buyer.client, 'get_products', {
      buying_mode: 'brief',
      brief: 'any display or video',
      account: { account_id: link!.publicId },
    });
    assert.equal(ok.isError, undefined, JSON.stringify(ok.structuredContent));
    // An unknown account, and another Buyer Account's advertiser: ACCOUNT_NOT_FOUND on every tool taking account.
    for (const tool of ['list_creatives', 'get_media_buys', 'get_media_buy_delivery'])
      for (const accountId of [`adv_${'0'.repeat(32)}`, `acc_${'0'.repeat(32)}`])
        notFound(await call(buyer.client, tool, { account: { account_id: accountId } }));
    // A valid account narrows the lists to its advertiser.
    const [empty] = await db()
      .insert(advertisers)
      .values({
        publicId: `adv_${'e'.repeat(32)}`,
        organizationId: org!.id,
        name: 'Empty',
        createdAt: clock.now(),
      })
      .returning();
    const buys = async (accountId: string) =>
      (
        (await call(buyer.client, 'get_media_buys', { account: { account_id: accountId } })).structuredContent
          .media_buys as { media_buy_id: string }[]
      ).map((b) => b.media_buy_id);
    assert.ok((await buys(h.demo.advertiserId)).includes(h.demo.mediaBuyId));
    assert.deepEqual(await buys(empty!.publicId), []);
    const delivery = await call(buyer.client, 'get_media_buy_delivery', {
      account: { account_id: empty!.publicId },
    });
    assert.deepEqual(delivery.structuredContent.media_buy_deliveries, []);
    const creatives = await call(buyer.client, 'list_creatives', {
      account: { account_id: empty!.publicId },
    });
    assert.deepEqual(creatives.structuredContent.creatives, []);
    await db().delete(advertisers).where(eq(advertisers.id, empty!.id));
  });

  test('buyer tools refuse a Seller Account caller (PERMISSION_DENIED)', async () => {
    const { client } = await connect('/mcp/v3', sellerAdminKey, STATELESS);
    const result = await call(client, 'get_media_buys', {});
    assert.equal((result.structuredContent.adcp_error as { code: string }).code, 'PERMISSION_DENIED');
  });

  test('every read tool answers valid AdCP on both endpoints', async () => {
    const schemas: Record<string, [string, string]> = {
      get_adcp_capabilities: [
        'protocol/get-adcp-capabilities-request.json',
        'protocol/get-adcp-capabilities-response.json',
      ],
      get_products: ['media-buy/get-products-request.json', 'media-buy/get-products-response.json'],
      list_creative_formats: [
        'media-buy/list-creative-formats-request.json',
        'media-buy/list-creative-formats-response.json',
      ],
      list_creatives: ['creative/list-creatives-request.json', 'creative/list-creatives-response.json'],
      get_media_buys: ['media-buy/get-media-buys-request.json', 'media-buy/get-media-buys-response.json'],
      get_media_buy_delivery: [
        'media-buy/get-media-buy-delivery-request.json',
        'media-buy/get-media-buy-delivery-response.json',
      ],
    };
    const args: Record<string, Record<string, unknown>> = {
      get_products: { buying_mode: 'brief', brief: 'any display or video', pagination: { max_results: 2 } },
      get_media_buys: { media_buy_ids: [h.demo.mediaBuyId] },
      get_media_buy_delivery: { media_buy_ids: [h.demo.mediaBuyId] },
    };
    for (const path of ['/mcp/v3', `/mcp/v3/storefronts/${storefrontId}`]) {
      const { client } = await connect(path, h.demo.apiKey, STATELESS);
      for (const [name, [request, response]] of Object.entries(schemas)) {
        const a = { adcp_version: '3.1', ...(args[name] ?? {}) };
        assert.deepEqual(adcpSchemaErrors(request, a), [], `${name} request`);
        const result = await call(client, name, a);
        assert.equal(
          result.isError,
          undefined,
          `${path} ${name}: ${JSON.stringify(result.structuredContent)}`,
        );
        assert.deepEqual(adcpSchemaErrors(response, result.structuredContent), [], `${path} ${name}`);
      }
    }
    // Paging get_products: the cursor pages the same discovery (no product twice).
    const { client } = await connect('/mcp/v3', h.demo.apiKey, STATELESS);
    const first = await call(client, 'get_products', {
      buying_mode: 'brief',
      brief: 'any display or video',
      pagination: { max_results: 2 },
    });
    const cursor = (first.structuredContent.pagination as { cursor: string }).cursor;
    const second = await call(client, 'get_products', {
      buying_mode: 'brief',
      brief: 'any display or video',
      pagination: { max_results: 2, cursor },
    });
    const ids = (r: ToolResult) =>
      (r.structuredContent.products as { product_id: string }[]).map((p) => p.product_id);
    assert.equal(ids(first).filter((id) => ids(second).includes(id)).length, 0);
    assert.equal(
      (first.structuredContent.ext as { discovery_id: string }).discovery_id,
      (second.structuredContent.ext as { discovery_id: string }).discovery_id,
    );
  });

  test('get_media_buy_delivery moves with the clock (ended UTC days reported by the delivery job)', async () => {
    const { client } = await connect(`/mcp/v3`, h.demo.apiKey, STATELESS);
    const totals = async () => {
      const r = await call(client, 'get_media_buy_delivery', { media_buy_ids: [h.demo.mediaBuyId] });
      return (
        r.structuredContent.media_buy_deliveries as { totals: { impressions: number; spend: number } }[]
      )[0]!.totals;
    };
    const runDelivery = async () => {
      assert.equal((await h.ops({ method: 'POST', url: '/_ops/ad-platform/deliver' })).statusCode, 202);
      await h.platform.runDueJobs();
    };
    await runDelivery();
    const before = await totals();
    clock.advance(2 * 86_400_000);
    await runDelivery();
    const afterTotals = await totals();
    assert.ok(
      afterTotals.impressions > before.impressions,
      `${before.impressions} -> ${afterTotals.impressions}`,
    );
    assert.ok(afterTotals.spend > before.spend);
  });

  test('creative and admin endpoints: session era only; the admin endpoint lists the Seller Account links', async () => {
    for (const path of ['/mcp/v3/admin', '/mcp/v3/creative']) {
      await assert.rejects(connect(path, sellerAdminKey, STATELESS), path);
      // A negotiating client falls back to initialize on the protocol's unsupported-version answer.
      const auto = await connect(path, sellerAdminKey, 'auto');
      assert.match(auto.transport.sessionId ?? '', /^mcs_/, path);
    }
    const { client } = await connect('/mcp/v3/admin', sellerAdminKey, 'legacy');
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      ['list_account_links'],
    );
    const result = await call(client, 'list_account_links', {});
    assert.equal(result.isError, undefined, JSON.stringify(result.structuredContent));
    assert.ok((result.structuredContent.account_links as unknown[]).length >= 1);
    // A buyer's credential: PERMISSION_DENIED.
    const buyer = await connect('/mcp/v3/admin', h.demo.apiKey, 'legacy');
    const denied = await call(buyer.client, 'list_account_links', {});
    assert.equal((denied.structuredContent.adcp_error as { code: string }).code, 'PERMISSION_DENIED');
  });

  test('get_products reuses the kept discovery session of the advertiser and UTC day while the catalog is unchanged', async () => {
    const { client } = await connect('/mcp/v3', h.demo.apiKey, STATELESS);
    const discovery = async () => {
      const r = await call(client, 'get_products', { buying_mode: 'brief', brief: 'any display or video' });
      assert.equal(r.isError, undefined, JSON.stringify(r.structuredContent));
      const ext = r.structuredContent.ext as { discovery_id: string; priced_for_day: string };
      const quotes = (r.structuredContent.products as { ext: { quote_id: string } }[]).map(
        (p) => p.ext.quote_id,
      );
      return { ...ext, quotes };
    };
    const sessions = () => db().$count(discoverySessions);
    const first = await discovery();
    const before = await sessions();
    const second = await discovery();
    assert.equal(second.discovery_id, first.discovery_id, 'the same session');
    assert.deepEqual(second.quotes, first.quotes, 'the same quotes');
    assert.equal(await sessions(), before, 'nothing written');
    // A catalog change (a storefront archived) makes a new session.
    const [other] = await db()
      .select()
      .from(storefronts)
      .where(eq(storefronts.status, 'active'))
      .orderBy(storefronts.id)
      .offset(1)
      .limit(1);
    await db().update(storefronts).set({ status: 'archived' }).where(eq(storefronts.id, other!.id));
    try {
      const changed = await discovery();
      assert.notEqual(changed.discovery_id, first.discovery_id, 'a new session for a changed catalog');
    } finally {
      await db().update(storefronts).set({ status: 'active' }).where(eq(storefronts.id, other!.id));
    }
    // Back to the first catalog on the same day: the first session again.
    assert.equal((await discovery()).discovery_id, first.discovery_id);
    // The next UTC day (by the clock): a new session priced for that day.
    const now = clock.now();
    const nextDay = new Date(
      Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1, 0, 0, 1),
    );
    clock.advance(nextDay.getTime() - now.getTime());
    const tomorrow = await discovery();
    assert.notEqual(tomorrow.discovery_id, first.discovery_id);
    assert.equal(tomorrow.priced_for_day, nextDay.toISOString().slice(0, 10));
    assert.notEqual(tomorrow.priced_for_day, first.priced_for_day);
    assert.equal((await discovery()).discovery_id, tomorrow.discovery_id);
  });
});

describe('media buying part 3: MCP dispatch errors', () => {
  const caller = {
    kind: 'user_api_key',
    credentialId: 1,
    interactive: false,
    user: null,
    organization: null,
    role: null,
    access: {},
    outstandingTerms: null,
  } as const;
  const endpoint = { path: '/mcp/v3', audience: 'buyer', eras: ['stateless'], name: 'x' } as const;
  const tool = (name: string, mutating: boolean, fail: () => never) => ({
    name,
    description: name,
    audiences: ['buyer'] as const,
    inputSchema: { type: 'object' },
    mutating,
    handler: async () => fail(),
  });
  const dispatcher = new McpDispatcher([
    tool('crash', false, () => {
      throw new Error('connection to db-7.internal refused');
    }),
    tool('rest', false, () => {
      throw new ApiError(409, 'BUYER_SETUP_REQUIRED', 'Complete Buyer Setup step 1.', {
        details: { reason: 'x' },
      });
    }),
    tool('adcp', false, () => {
      throw new AdcpError({ code: 'X_ACME_THING', message: 'passed through', recovery: 'terminal' });
    }),
    tool('write', true, () => {
      throw new Error('not reached');
    }),
  ]);
  const ctx = { caller, endpoint, storefront: null };

  test('unknown exceptions are INTERNAL_ERROR without the internal message; ApiError and AdcpError keep their code', async () => {
    const crash = await dispatcher.call('crash', {}, ctx);
    assert.equal(crash.isError, true);
    assert.equal((crash.structuredContent.adcp_error as { code: string }).code, 'INTERNAL_ERROR');
    assert.ok(!crash.content[0]!.text.includes('db-7'));
    const rest = (await dispatcher.call('rest', {}, ctx)).structuredContent.adcp_error as Record<
      string,
      unknown
    >;
    assert.deepEqual([rest.code, rest.recovery], ['BUYER_SETUP_REQUIRED', 'correctable']);
    const adcp = (await dispatcher.call('adcp', {}, ctx)).structuredContent.adcp_error as Record<
      string,
      unknown
    >;
    assert.deepEqual([adcp.code, adcp.recovery], ['X_ACME_THING', 'terminal']);
  });

  test('a mutating tool is refused while the caller has terms to accept', async () => {
    const res = await dispatcher.call(
      'write',
      {},
      { ...ctx, caller: { ...caller, outstandingTerms: '2026-11' } },
    );
    assert.equal((res.structuredContent.adcp_error as { code: string }).code, 'TOS_ACCEPTANCE_REQUIRED');
  });
});

describe('media buying part 3: the MCP rate limit', () => {
  let h: MediaBuyingHarness;
  let base: string;
  const clock = new ManualClock(new Date('2026-11-25T12:00:00Z'));
  const LIMIT = 5;

  before(async () => {
    h = await startMediaBuying({
      clock,
      listen: true,
      env: { MEDIA_BUYING_REQUESTS_PER_MINUTE: String(LIMIT) },
    });
    base = baseUrlOf(h.platform.app('media-buying'));
  });
  after(() => h?.close());

  const list = (headers: Record<string, string>) =>
    fetch(new URL('/mcp/v3', base), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers },
      body: JSON.stringify(initializeMessage('raw')),
    });

  test('per credential once authenticated, per address before: 429 RATE_LIMITED (transient) with Retry-After, as a JSON-RPC error', async () => {
    const key = { authorization: `Bearer ${h.demo.apiKey}` };
    for (let i = 0; i < LIMIT; i++) assert.equal((await list(key)).status, 200, `request ${i + 1}`);
    const limited = await list(key);
    assert.equal(limited.status, 429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 60, String(retryAfter));
    const body = (await limited.json()) as {
      jsonrpc: string;
      id: unknown;
      error: { code: number; data: { code: string; recovery: string; retry_after: number } };
    };
    assert.equal(body.jsonrpc, '2.0');
    assert.equal(body.id, null);
    assert.equal(typeof body.error.code, 'number');
    assert.equal(body.error.data.code, 'RATE_LIMITED');
    assert.equal(body.error.data.recovery, 'transient');
    assert.equal(body.error.data.retry_after, retryAfter);
    assert.deepEqual(adcpSchemaErrors('core/error.json', body.error.data), []);
    // Unauthenticated requests count per address, apart from the credential's budget.
    for (let i = 0; i < LIMIT; i++) assert.equal((await list({})).status, 401);
    assert.equal((await list({})).status, 429);
    assert.equal((await list({ authorization: 'Bearer mbu_not-a-real-key-at-all' })).status, 429);
    // The next minute, by the clock: both budgets are back.
    clock.advance(60_000);
    assert.equal((await list(key)).status, 200);
    assert.equal((await list({})).status, 401);
  });
});
