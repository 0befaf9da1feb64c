/**
 * Part 3's case of `npm run bench -- media-buying`: a stateless (MCP 2026-07-28) `tools/call` of `get_products` on
 * `/mcp/v3` with a user API key (authentication, a fresh SDK server instance, argument validation, AdCP version
 * negotiation and a new discovery session priced for the UTC day, per request), at 50 connections, against a bare
 * Fastify route answering the same bytes in the same run. Target (2-core machine): >= 800 req/s. The request is the
 * one the official SDK client (`@modelcontextprotocol/client`, pinned to 2026-07-28) sends, captured once and replayed.
 */
import { Client, type FetchLike, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { bareServer, load, report } from './lib.ts';

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
    arguments: { buying_mode: 'brief', adcp_version: '3.1' },
  });
  await client.close();
  if (sample.isError || !captured) throw new Error(`get_products failed: ${JSON.stringify(sample)}`);
  const answer = JSON.stringify({ jsonrpc: '2.0', id: 1, result: sample });
  const bare = await bareServer([
    { path: '/mcp', body: answer, headers: { 'content-type': 'application/json' } },
  ]);
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
        headers: captured.headers,
        body: captured.body,
      }),
      baseline,
    );
  } finally {
    await bare.close();
  }
}
