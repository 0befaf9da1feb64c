/**
 * Part 3's cases of `npm run bench -- media-buying`. First a stateless (MCP 2026-07-28) `tools/call` of `get_products` on
 * `/mcp/v3` with a user API key (authentication, a fresh SDK server instance, argument validation, AdCP version
 * negotiation and a page of the kept discovery session of the UTC day, per request), at 50 connections, against a bare
 * Fastify route answering the same bytes in the same run. Target (2-core machine): >= 800 req/s. The request is the
 * one the official SDK client (`@modelcontextprotocol/client`, pinned to 2026-07-28) sends, captured once and replayed.
 * Then the idempotent replay of one `create_media_buy` (the same `idempotency_key` and arguments: the stored answer,
 * marked `replayed`), against the same baseline. Target: >= 1,500 req/s. After each, the SDK's ceiling: the same
 * captured request served by a bare route through `createMcpHandler` with the constant answer ({@link sdkCeilingServer}),
 * what the SDK alone allows on the machine.
 */
import { Client, type FetchLike, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { type CallToolResult, createMcpHandler, Server } from '@modelcontextprotocol/server';
import Fastify from 'fastify';
import { bareServer, load, report } from './lib.ts';

/**
 * The SDK's ceiling: a bare Fastify route (no authentication, no database, no argument validation) that serves every
 * POST through `@modelcontextprotocol/server`'s `createMcpHandler` as the service's MCP route does (a web `Request`
 * built from the Fastify request with the body already parsed, a fresh low-level `Server` per request, the web
 * `Response` sent back as text), with `results[tool]` as the constant `tools/call` answer. What the SDK and the
 * web-standard conversion alone allow on this machine.
 */
export async function sdkCeilingServer(results: Record<string, CallToolResult>) {
  const handler = createMcpHandler(
    () => {
      const server = new Server({ name: 'ceiling', version: '1.0.0' }, { capabilities: { tools: {} } });
      server.setRequestHandler('tools/list', async () => ({ tools: [] }));
      server.setRequestHandler('tools/call', async (req) => results[req.params.name] ?? { content: [] });
      return server;
    },
    { legacy: 'reject' },
  );
  const app = Fastify({ logger: false });
  app.post('/mcp', async (request, reply) => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers))
      if (value !== undefined && name !== 'content-length' && name !== 'connection')
        headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    const web = new Request(`http://127.0.0.1${request.url}`, { method: 'POST', headers });
    const response = await handler.fetch(web, { parsedBody: request.body });
    reply.code(response.status);
    response.headers.forEach((value, name) => {
      reply.header(name, value);
    });
    return reply.send(await response.text());
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  if (!addr || typeof addr !== 'object') throw new Error('no address');
  return {
    url: `http://127.0.0.1:${addr.port}`,
    close: async () => {
      await handler.close();
      await app.close();
    },
  };
}

/** Runs the case against the listening service at `port` with user API key `apiKey`. */
export async function benchMcp(port: number, apiKey: string, durationSeconds: number): Promise<void> {
  const url = `http://127.0.0.1:${port}/mcp/v3`;
  let captured: { headers: Record<string, string>; body: string } | undefined;
  // The official client's own request, captured as it goes out.
  const capturing: FetchLike = async (input, init) => {
    const body = typeof init?.body === 'string' ? init.body : '';
    if (body.includes('"tools/call"'))
      captured = { headers: Object.fromEntries(new Headers(init?.headers).entries()), body };
    return fetch(input, init);
  };
  const client = new Client(
    { name: 'bench', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      fetch: capturing,
      requestInit: { headers: { authorization: `Bearer ${apiKey}` } },
    }),
  );
  const sample = await client.callTool({
    name: 'get_products',
    arguments: { buying_mode: 'brief', brief: 'display and video in the US', adcp_version: '3.1' },
  });
  if (sample.isError || !captured) throw new Error(`get_products failed: ${JSON.stringify(sample)}`);
  const productsCall = captured;
  // One buy on the seeded active account link, with the first product of that storefront priced in its currency.
  const accounts = await client.callTool({ name: 'list_accounts', arguments: { adcp_version: '3.1' } });
  const active = (
    (accounts.structuredContent as Record<string, unknown>).accounts as {
      account_id: string;
      status: string;
      ext: { storefront_id: string };
    }[]
  ).find((a) => a.status === 'active');
  const product = (
    (sample.structuredContent as Record<string, unknown>).products as {
      product_id: string;
      pricing_options: { pricing_option_id: string }[];
      ext: { storefront_id: string };
    }[]
  ).find((p) => p.ext.storefront_id === active?.ext.storefront_id);
  if (!active || !product) throw new Error('no active account link with a product to buy');
  const created = await client.callTool({
    name: 'create_media_buy',
    arguments: {
      adcp_version: '3.1',
      idempotency_key: `bench-${Date.now()}-replayed`,
      account: { account_id: active.account_id },
      brand: { domain: 'demo-buyer.example' },
      start_time: 'asap',
      end_time: new Date(Date.now() + 20 * 86_400_000).toISOString(),
      packages: [
        {
          product_id: product.product_id,
          pricing_option_id: product.pricing_options[0]!.pricing_option_id,
          budget: 100,
        },
      ],
    },
  });
  await client.close();
  if (created.isError)
    throw new Error(`create_media_buy failed: ${JSON.stringify(created.structuredContent)}`);
  const createCall = captured;
  const answer = JSON.stringify({ jsonrpc: '2.0', id: 1, result: sample });
  const bare = await bareServer([
    { path: '/mcp', body: answer, headers: { 'content-type': 'application/json' } },
  ]);
  const ceiling = await sdkCeilingServer({
    get_products: sample as CallToolResult,
    create_media_buy: created as CallToolResult,
  });
  try {
    console.log(`# MCP tools/call get_products (stateless): ~${answer.length} bytes`);
    const baseline = await load('baseline: bare JSON route (tools/call bytes)', `${bare.url}/mcp`, {
      durationSeconds,
    });
    report(baseline);
    report(
      await load('media-buying: MCP tools/call get_products (stateless)', url, {
        durationSeconds,
        method: 'POST',
        headers: productsCall.headers,
        body: productsCall.body,
      }),
      baseline,
    );
    report(
      await load('SDK ceiling: createMcpHandler, constant get_products', `${ceiling.url}/mcp`, {
        durationSeconds,
        method: 'POST',
        headers: productsCall.headers,
        body: productsCall.body,
      }),
      baseline,
    );
    report(
      await load('media-buying: MCP tools/call create_media_buy (idempotent replay)', url, {
        durationSeconds,
        method: 'POST',
        headers: createCall.headers,
        body: createCall.body,
      }),
      baseline,
    );
    report(
      await load('SDK ceiling: createMcpHandler, constant create_media_buy', `${ceiling.url}/mcp`, {
        durationSeconds,
        method: 'POST',
        headers: createCall.headers,
        body: createCall.body,
      }),
      baseline,
    );
  } finally {
    await bare.close();
    await ceiling.close();
  }
}
