import assert from 'node:assert/strict';
import http from 'node:http';
import { afterEach, describe, test } from 'node:test';
import WebSocket from 'ws';
import type { ServiceApp } from '../../src/platform/http.ts';
import {
  type SseEvent,
  type Stream,
  type StreamCloseReason,
  StreamRegistry,
} from '../../src/platform/streams.ts';
import { bareServiceApp } from '../support/platform.ts';
import { waitUntil } from '../support/wait.ts';

interface Harness {
  app: ServiceApp;
  registry: StreamRegistry;
  base: string;
  /** The server side of the streams opened so far, in order. */
  sse: Stream<SseEvent>[];
  ws: Stream<{ type: string; n?: number; pad?: string }>[];
  /** Fires the credential revocation of every stream opened with a watch. */
  revoke(): void;
}

async function start(options: { heartbeatMs?: number; maxBufferedBytes?: number } = {}): Promise<Harness> {
  const app = await bareServiceApp({
    name: 'streams-test',
    operatorToken: 'operator-token-for-stream-tests',
  });
  const registry = new StreamRegistry(app);
  await registry.registerWebSocket(app);
  const revocations = new Set<() => void>();
  const watchCredential = (onRevoked: () => void) => {
    revocations.add(onRevoked);
    return () => revocations.delete(onRevoked);
  };
  const streamOptions = {
    heartbeatMs: options.heartbeatMs ?? 60_000,
    maxBufferedBytes: options.maxBufferedBytes,
    watchCredential,
  };
  const h: Harness = {
    app,
    registry,
    base: '',
    sse: [],
    ws: [],
    revoke: () => {
      for (const r of [...revocations]) r();
    },
  };
  app.get('/events', async (request, reply) => {
    h.sse.push(registry.sse(request, reply, { ...streamOptions, retryMs: 2000 }));
  });
  app.get('/socket', { websocket: true }, (socket) => {
    h.ws.push(registry.webSocket(socket, () => ({ type: 'heartbeat' }), streamOptions));
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (!address || typeof address !== 'object') throw new Error('not listening');
  h.base = `127.0.0.1:${address.port}`;
  return h;
}

/** An SSE client collecting the raw text; `pause()` stops reading (a slow consumer). */
async function sseClient(h: Harness) {
  let text = '';
  let ended = false;
  const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
    http
      .get(`http://${h.base}/events`, { headers: { 'x-request-id': 'sse-client-1' } }, resolve)
      .on('error', reject);
  });
  response.setEncoding('utf8');
  response.on('data', (chunk: string) => {
    text += chunk;
  });
  response.on('end', () => {
    ended = true;
  });
  response.on('close', () => {
    ended = true;
  });
  await waitUntil('the server stream', () => h.sse.length > 0);
  return { response, text: () => text, ended: () => ended };
}

async function wsClient(h: Harness) {
  const socket = new WebSocket(`ws://${h.base}/socket`);
  const messages: { type: string }[] = [];
  let closed: { code: number; reason: string } | undefined;
  socket.on('message', (data) => messages.push(JSON.parse(String(data))));
  socket.on('close', (code, reason) => {
    closed = { code, reason: String(reason) };
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  await waitUntil('the server stream', () => h.ws.length > 0);
  return { socket, messages, closed: () => closed };
}

describe('platform: streams (SSE and WebSocket)', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.app.close();
    h = undefined;
  });

  test('SSE: framed events with ids, the retry hint, heartbeats, the request id header', async () => {
    h = await start({ heartbeatMs: 30 });
    const client = await sseClient(h);
    assert.equal(client.response.headers['content-type'], 'text/event-stream; charset=utf-8');
    assert.equal(client.response.headers['cache-control'], 'no-store');
    assert.equal(client.response.headers['x-request-id'], 'sse-client-1');
    assert.ok(h.sse[0]!.send({ id: 7, event: 'job.updated', data: { status: 'running' } }));
    assert.ok(h.sse[0]!.send({ data: 'line' }));
    await waitUntil('the events', () => client.text().includes('data: "line"'));
    await waitUntil('a heartbeat', () => client.text().includes(': heartbeat\n\n'));
    assert.ok(client.text().startsWith('retry: 2000\n\n'));
    assert.ok(client.text().includes('id: 7\nevent: job.updated\ndata: {"status":"running"}\n\n'));
  });

  test('SSE: a client that stops reading is dropped once its unread bytes pass the bound', async () => {
    h = await start({ maxBufferedBytes: 256 * 1024 });
    const client = await sseClient(h);
    client.response.pause();
    client.response.socket.pause();
    const pad = 'x'.repeat(16 * 1024);
    let sent = 0;
    while (h.sse[0]!.send({ data: { pad } })) {
      sent++;
      if (sent > 10_000) break;
    }
    assert.ok(sent < 10_000, 'the stream was dropped, not buffered without bound');
    assert.equal(await h.sse[0]!.done, 'slow-consumer');
    assert.equal(h.registry.size, 0);
  });

  test('SSE: a revoked credential and a shutdown close the stream; a client leaving releases it', async () => {
    h = await start();
    const revoked = await sseClient(h);
    h.revoke();
    assert.equal(await h.sse[0]!.done, 'revoked');
    await waitUntil('the revoked stream to end', revoked.ended);

    const leaving = await sseClient(h);
    leaving.response.destroy();
    assert.equal(await h.sse[1]!.done, 'client');

    const open = await sseClient(h);
    const started = Date.now();
    await h.app.close();
    assert.equal(await h.sse[2]!.done, 'shutdown');
    assert.ok(Date.now() - started < 2000, 'the stop did not wait for the stream');
    await waitUntil('the stream to end at shutdown', open.ended);
    h = undefined;
  });

  test('WebSocket: heartbeats, 1008 on revocation, 1001 at shutdown', async () => {
    h = await start({ heartbeatMs: 30 });
    const first = await wsClient(h);
    await waitUntil('a heartbeat', () => first.messages.some((m) => m.type === 'heartbeat'));
    assert.ok(h.ws[0]!.send({ type: 'price', n: 1 }));
    await waitUntil('the message', () => first.messages.some((m) => m.type === 'price'));
    h.revoke();
    await waitUntil('the close', () => first.closed() !== undefined);
    assert.deepEqual(first.closed(), { code: 1008, reason: 'credential revoked' });
    assert.equal(await h.ws[0]!.done, 'revoked');

    const second = await wsClient(h);
    const closing = h.app.close();
    await waitUntil('the shutdown close', () => second.closed() !== undefined);
    assert.equal(second.closed()!.code, 1001);
    await closing;
    h = undefined;
  });

  test('WebSocket: a client that stops reading is dropped, not buffered without bound', async () => {
    h = await start({ maxBufferedBytes: 256 * 1024 });
    const client = await wsClient(h);
    (client.socket as unknown as { _socket: { pause(): void } })._socket.pause();
    const pad = 'y'.repeat(16 * 1024);
    let sent = 0;
    while (h.ws[0]!.send({ type: 'price', pad })) {
      sent++;
      if (sent > 10_000) break;
    }
    assert.ok(sent < 10_000);
    const reason: StreamCloseReason = await h.ws[0]!.done;
    assert.equal(reason, 'slow-consumer');
    assert.equal(h.registry.size, 0);
  });
});
