import assert from 'node:assert/strict';
import net from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { Type } from '@sinclair/typebox';
import type { TrustProxy } from '../../src/platform/config.ts';
import { ApiError } from '../../src/platform/errors.ts';
import type { ErrorFormatter, ServiceApp } from '../../src/platform/http.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { bareServiceApp } from '../support/platform.ts';
import { waitUntil } from '../support/wait.ts';

const OPERATOR_TOKEN = 'operator-token-for-http-tests-0123';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('platform: createServiceApp (request ids, errors, probes, OpenAPI, operator guard)', () => {
  let app: ServiceApp;
  let ready = true;

  before(async () => {
    app = await bareServiceApp({
      name: 'http-test',
      title: 'HTTP test service',
      version: '1.2.3',
      formatError: (error, request) => ({
        body: {
          error: {
            code: error.code,
            message: error.message,
            requestId: request.id,
            details: error.details ?? null,
          },
        },
        headers: { 'x-formatted': 'yes' },
      }),
      operatorToken: OPERATOR_TOKEN,
      tags: [{ name: 'things', description: 'Things.' }],
      ready: async () => ready,
      bodyLimit: 1024,
    });
    app.get('/things/echo', { schema: { tags: ['things'], operationId: 'echo' } }, async (request) => ({
      id: request.id,
    }));
    app.get('/things/boom', async () => {
      throw new Error('connection to db.internal:5432 failed for user admin');
    });
    app.get('/things/teapot', async () => {
      throw new ApiError(418, 'teapot', 'I am a teapot.', { headers: { 'retry-after': '7' } });
    });
    app.post(
      '/things',
      {
        schema: {
          tags: ['things'],
          operationId: 'createThing',
          body: Type.Object(
            { name: Type.String(), qty: Type.Integer({ minimum: 1, maximum: 1000 }) },
            { additionalProperties: false },
          ),
        },
      },
      async (request) => request.body,
    );
    app.get('/_ops/ping', { schema: { tags: ['operator'] } }, async () => ({ pong: true }));
    await app.ready();
  });
  after(() => app.close());

  test('a well-formed caller x-request-id is echoed and used as the request id', async () => {
    const res = await app.inject({ url: '/things/echo', headers: { 'x-request-id': 'client-req.42:abc' } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['x-request-id'], 'client-req.42:abc');
    assert.equal(res.json().id, 'client-req.42:abc');
  });

  test('a missing or malformed x-request-id is replaced by a UUID', async () => {
    const none = await app.inject({ url: '/things/echo' });
    assert.match(String(none.headers['x-request-id']), UUID);
    for (const bad of ['has space', 'semi;colon', 'x'.repeat(129), '<script>']) {
      const res = await app.inject({ url: '/things/echo', headers: { 'x-request-id': bad } });
      const id = String(res.headers['x-request-id']);
      assert.notEqual(id, bad);
      assert.match(id, UUID, bad);
      assert.equal(res.json().id, id);
    }
  });

  test('an unknown route is a 404 in the service error format, with the request id', async () => {
    const res = await app.inject({ url: '/nope?x=1', headers: { 'x-request-id': 'rid-404' } });
    assert.equal(res.statusCode, 404);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.equal(res.headers['x-formatted'], 'yes');
    assert.equal(res.headers['x-request-id'], 'rid-404');
    const body = res.json();
    assert.equal(body.error.code, 'not_found');
    assert.equal(body.error.message, 'No route GET /nope.');
    assert.equal(body.error.requestId, 'rid-404');
  });

  test('an unexpected error is a 500 in the service format with no stack or internal message', async () => {
    const res = await app.inject({ url: '/things/boom' });
    assert.equal(res.statusCode, 500);
    assert.equal(res.headers['x-formatted'], 'yes');
    const body = res.json();
    assert.equal(body.error.code, 'internal');
    assert.ok(!/db\.internal|admin|stack|at \//.test(res.body), res.body);
    assert.equal(body.error.requestId, res.headers['x-request-id']);
  });

  test('an ApiError thrown by a route keeps its status, code and headers', async () => {
    const res = await app.inject({ url: '/things/teapot' });
    assert.equal(res.statusCode, 418);
    assert.equal(res.headers['retry-after'], '7');
    assert.equal(res.json().error.code, 'teapot');
    assert.equal(res.json().error.message, 'I am a teapot.');
  });

  test('validation errors are 400 validation_failed listing every issue', async () => {
    const res = await app.inject({ method: 'POST', url: '/things', payload: { qty: 0, extra: 1 } });
    assert.equal(res.statusCode, 400);
    const body = res.json();
    assert.equal(body.error.code, 'validation_failed');
    const issues = body.error.details.issues as { location: string; field: string; message: string }[];
    const fields = issues.map((i) => `${i.location}.${i.field}`).sort();
    assert.deepEqual(fields, ['body.extra', 'body.name', 'body.qty']);
    assert.ok(issues.every((i) => i.location === 'body'));
    assert.match(body.error.message, /^Invalid request: body\./);
  });

  test('a valid body passes validation', async () => {
    const res = await app.inject({ method: 'POST', url: '/things', payload: { name: 'a', qty: 2 } });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { name: 'a', qty: 2 });
  });

  test('malformed JSON and oversize bodies are 4xx in the service format', async () => {
    const bad = await app.inject({
      method: 'POST',
      url: '/things',
      headers: { 'content-type': 'application/json' },
      payload: '{"name":',
    });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().error.code, 'bad_request');
    const big = await app.inject({
      method: 'POST',
      url: '/things',
      payload: { name: 'x'.repeat(2000), qty: 1 },
    });
    assert.equal(big.statusCode, 413);
    assert.equal(big.json().error.code, 'payload_too_large');
    const media = await app.inject({
      method: 'POST',
      url: '/things',
      headers: { 'content-type': 'application/xml' },
      payload: '<thing/>',
    });
    assert.equal(media.statusCode, 415);
    assert.equal(media.json().error.code, 'unsupported_media_type');
  });

  test('/healthz is ok; /readyz follows the ready probe (503 when not ready)', async () => {
    const h = await app.inject({ url: '/healthz' });
    assert.equal(h.statusCode, 200);
    assert.deepEqual(h.json(), { status: 'ok' });
    ready = true;
    const r = await app.inject({ url: '/readyz' });
    assert.equal(r.statusCode, 200);
    assert.deepEqual(r.json(), { status: 'ready' });
    ready = false;
    try {
      const n = await app.inject({ url: '/readyz' });
      assert.equal(n.statusCode, 503);
      assert.deepEqual(n.json(), { status: 'unavailable' });
    } finally {
      ready = true;
    }
  });

  test('/openapi.json is an OpenAPI 3.1 document of the service routes', async () => {
    const res = await app.inject({ url: '/openapi.json' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    const doc = res.json();
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.title, 'HTTP test service');
    assert.equal(doc.info.version, '1.2.3');
    assert.equal(doc.servers[0].url, 'http://127.0.0.1:9999');
    assert.ok(doc.paths['/things'].post);
    assert.ok(doc.paths['/healthz'].get);
    assert.equal(doc.paths['/openapi.json'], undefined, 'the document itself is hidden');
    const tags = (doc.tags as { name: string }[]).map((t) => t.name);
    assert.deepEqual(tags, ['things', 'health', 'operator']);
    assert.equal(doc.components.securitySchemes.operatorToken.scheme, 'bearer');
  });

  test('/_ops routes reject a missing, malformed or wrong operator token with 401', async () => {
    for (const authorization of [
      undefined,
      '',
      OPERATOR_TOKEN,
      `Basic ${OPERATOR_TOKEN}`,
      'Bearer ',
      'Bearer wrong-token',
      `Bearer ${OPERATOR_TOKEN}x`,
      `Bearer ${OPERATOR_TOKEN.slice(0, -1)}`,
    ]) {
      const headers = authorization === undefined ? {} : { authorization };
      const res = await app.inject({ url: '/_ops/ping', headers });
      assert.equal(res.statusCode, 401, String(authorization));
      assert.equal(res.json().error.code, 'operator_unauthenticated');
      assert.ok(!res.body.includes('pong'));
    }
  });

  test('the operator token is a bearer credential: the scheme is matched case-insensitively (RFC 9110)', async () => {
    for (const authorization of [
      `Bearer ${OPERATOR_TOKEN}`,
      `bearer ${OPERATOR_TOKEN}`,
      `BEARER  ${OPERATOR_TOKEN}`,
    ]) {
      const res = await app.inject({ url: '/_ops/ping', headers: { authorization } });
      assert.equal(res.statusCode, 200, authorization);
    }
  });

  test('the guard covers unknown /_ops paths and query strings too', async () => {
    const unknown = await app.inject({ url: '/_ops/does-not-exist' });
    assert.equal(unknown.statusCode, 401);
    const withQuery = await app.inject({ url: '/_ops/ping?token=x' });
    assert.equal(withQuery.statusCode, 401);
  });

  test('the guard cannot be bypassed with a percent-encoded /_ops path', async () => {
    for (const url of ['/%5Fops/ping', '/%5fops/ping', '/_op%73/ping']) {
      const res = await app.inject({ url });
      assert.equal(res.statusCode, 401, url);
      assert.ok(!res.body.includes('pong'), url);
    }
  });

  test('/_ops routes accept the right bearer token', async () => {
    const res = await app.inject({
      url: '/_ops/ping',
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
    });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { pong: true });
    const unknown = await app.inject({
      url: '/_ops/does-not-exist',
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
    });
    assert.equal(unknown.statusCode, 404);
  });
});

describe('platform: request logs (one line per request, the request id on every line of a request)', () => {
  test('handler lines, the error line and the request line all carry reqId; no internal message in the answer', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const app = await bareServiceApp({
      name: 'log-test',
      operatorToken: OPERATOR_TOKEN,
      logger: createLogger('info', sink),
    });
    app.get('/work', async (request) => {
      request.log.info({ step: 1 }, 'working');
      return { ok: true };
    });
    app.get('/fail', async (request) => {
      request.log.warn('about to fail');
      throw new Error('secret internal detail');
    });
    await app.ready();
    try {
      const ok = await app.inject({ url: '/work', headers: { 'x-request-id': 'rid-ok-1' } });
      assert.equal(ok.headers['x-request-id'], 'rid-ok-1');
      const failed = await app.inject({ url: '/fail', headers: { 'x-request-id': 'rid-fail-1' } });
      assert.equal(failed.statusCode, 500);
      assert.ok(!failed.body.includes('secret internal detail'));
      const generated = await app.inject({ url: '/work' });
      const generatedId = generated.headers['x-request-id'] as string;
      assert.match(generatedId, UUID);

      const of = (id: string) => lines.filter((l) => l.reqId === id).map((l) => l.msg);
      assert.deepEqual(of('rid-ok-1'), ['working', 'request']);
      assert.deepEqual(of('rid-fail-1'), ['about to fail', 'request failed', 'request']);
      assert.deepEqual(of(generatedId), ['working', 'request']);
      // Every line logged while serving a request has its id: none is left without one.
      const requestLines = lines.filter((l) =>
        ['working', 'about to fail', 'request failed', 'request'].includes(l.msg as string),
      );
      assert.equal(requestLines.length, 7);
      assert.ok(requestLines.every((l) => typeof l.reqId === 'string'));
      const done = lines.find((l) => l.reqId === 'rid-ok-1' && l.msg === 'request')!;
      assert.equal(done.statusCode, 200);
      assert.equal(done.path, '/work');
    } finally {
      await app.close();
    }
  });
});

describe('platform: requests the HTTP parser refuses (large headers, control characters)', () => {
  let app: ServiceApp;
  let port: number;

  before(async () => {
    app = await bareServiceApp({
      name: 'parser-test',
      formatError: (error, request) => ({ body: { fault: { code: error.code, requestId: request.id } } }),
      operatorToken: OPERATOR_TOKEN,
    });
    app.get('/ping', async () => ({ pong: true }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as { port: number }).port;
  });
  after(() => app.close());

  /**
   * Sends `head` on a keep-alive connection; resolves with what came back and how the connection ended: `end` (the
   * server closed it after its answer) or the socket error (`ECONNRESET` when it was reset).
   */
  const exchange = (head: string) =>
    new Promise<{ received: string; ending: string }>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      let received = '';
      let ending = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => {
        received += chunk;
      });
      socket.on('end', () => {
        ending ||= 'end';
        socket.end();
      });
      socket.on('error', (error: NodeJS.ErrnoException) => {
        ending ||= error.code ?? 'error';
      });
      socket.on('close', () => resolve({ received, ending }));
      socket.write(head);
    });

  const parse = (received: string) => {
    const [head = '', body = ''] = received.split('\r\n\r\n');
    const [statusLine = '', ...lines] = head.split('\r\n');
    const headers = Object.fromEntries(
      lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
    );
    return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) };
  };

  test('headers over 16 KiB are a 431 in the service format, then the connection is closed, not reset', async () => {
    const big = 'a'.repeat(20_000);
    const { received, ending } = await exchange(
      `GET /ping HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\nX-Big: ${big}\r\n\r\n`,
    );
    const answer = parse(received);
    assert.equal(answer.status, 431);
    assert.equal(answer.headers.connection, 'close');
    assert.equal(answer.body.fault.code, 'header_fields_too_large');
    assert.equal(answer.body.fault.requestId, answer.headers['x-request-id']);
    assert.equal(ending, 'end');
  });

  test('a control character in a header value is a 400 in the service format', async () => {
    const { received, ending } = await exchange('GET /ping HTTP/1.1\r\nHost: x\r\nX-A: a\u0001b\r\n\r\n');
    const answer = parse(received);
    assert.equal(answer.status, 400);
    assert.equal(answer.headers.connection, 'close');
    assert.equal(answer.body.fault.code, 'bad_request');
    assert.equal(ending, 'end');
  });

  test('the same connection serves a well-formed request normally', async () => {
    const { received } = await exchange('GET /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.deepEqual(parse(received).body, { pong: true });
  });
});

describe('platform: client address behind proxies (TRUST_PROXY)', () => {
  const appWith = async (trustProxy: TrustProxy | undefined) => {
    const app = await bareServiceApp({
      name: 'proxy-test',
      operatorToken: OPERATOR_TOKEN,
      ...(trustProxy === undefined ? {} : { trustProxy }),
    });
    app.get('/ip', async (request) => ({ ip: request.ip }));
    await app.ready();
    return app;
  };
  const ipOf = async (app: ServiceApp, remoteAddress: string, forwardedFor?: string) =>
    (
      await app.inject({
        url: '/ip',
        remoteAddress,
        headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
      })
    ).json().ip as string;

  test('by default X-Forwarded-For is ignored: the TCP peer is the client', async () => {
    const app = await appWith(undefined);
    try {
      assert.equal(await ipOf(app, '10.0.0.5', '203.0.113.7'), '10.0.0.5');
    } finally {
      await app.close();
    }
  });

  test('a listed proxy (address or CIDR) is believed; any other peer is not', async () => {
    const app = await appWith(['10.0.0.0/8', '192.0.2.1']);
    try {
      assert.equal(await ipOf(app, '10.0.0.5', '203.0.113.7'), '203.0.113.7');
      assert.equal(await ipOf(app, '192.0.2.1', '203.0.113.8'), '203.0.113.8');
      // A client that forges the header itself, talking to us directly, keeps its own address.
      assert.equal(await ipOf(app, '198.51.100.9', '203.0.113.7'), '198.51.100.9');
      // A chain: the client-supplied left part is not believed past the first untrusted hop.
      assert.equal(await ipOf(app, '10.0.0.5', '203.0.113.7, 198.51.100.20'), '198.51.100.20');
    } finally {
      await app.close();
    }
  });

  test('a hop count believes that many proxies from the right of the chain', async () => {
    const app = await appWith(1);
    try {
      assert.equal(await ipOf(app, '10.0.0.5', '203.0.113.7, 198.51.100.20'), '198.51.100.20');
      assert.equal(await ipOf(app, '10.0.0.5'), '10.0.0.5');
    } finally {
      await app.close();
    }
  });
});

describe('platform: the one JSON body parser', () => {
  let app: ServiceApp;

  before(async () => {
    app = await bareServiceApp({
      name: 'json-test',
      operatorToken: OPERATOR_TOKEN,
    });
    const body = Type.Object({ name: Type.Optional(Type.String()) }, { additionalProperties: false });
    app.post('/required', { schema: { body } }, async (request) => ({ got: request.body }));
    app.post('/optional', { config: { optionalJsonBody: true }, schema: { body } }, async (request) => ({
      got: request.body,
    }));
    await app.ready();
  });
  after(() => app.close());

  const post = (url: string, payload: string | undefined, contentType = 'application/json') =>
    app.inject({
      method: 'POST',
      url,
      ...(payload === undefined ? {} : { payload, headers: { 'content-type': contentType } }),
    });

  test('JSON and +json media types (JSON:API, merge-patch) are parsed; malformed JSON is a 400 in the service body', async () => {
    for (const type of ['application/json', 'application/json; charset=utf-8', 'application/vnd.api+json']) {
      const res = await post('/required', '{"name":"a"}', type);
      assert.equal(res.statusCode, 200, type);
      assert.deepEqual(res.json(), { got: { name: 'a' } });
    }
    const bad = await post('/required', '{"name":', 'application/json');
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json().message, /not valid JSON/);
  });

  test('a __proto__ or constructor.prototype key is refused with a message that says so', async () => {
    for (const payload of ['{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"admin":true}}}']) {
      const res = await post('/required', payload);
      assert.equal(res.statusCode, 400, payload);
      assert.equal(res.json().code, 'bad_request');
      assert.match(res.json().message, /__proto__/);
      assert.doesNotMatch(res.json().message, /not valid JSON/);
    }
    assert.equal(({} as { admin?: boolean }).admin, undefined);
  });

  test('an empty JSON body is a 400, except on a route whose body is optional, where no body is {}', async () => {
    const empty = await post('/required', '');
    assert.equal(empty.statusCode, 400);
    assert.match(empty.json().message, /empty/);
    for (const payload of ['', '  ', undefined]) {
      const res = await post('/optional', payload);
      assert.equal(res.statusCode, 200, String(payload));
      assert.deepEqual(res.json(), { got: {} });
    }
    const withBody = await post('/optional', '{"name":"b"}');
    assert.deepEqual(withBody.json(), { got: { name: 'b' } });
    assert.equal((await post('/optional', '{"__proto__":{}}')).statusCode, 400);
  });
});

describe('platform: error formats by route and by URL prefix', () => {
  let app: ServiceApp;
  let releaseSlow: () => void = () => undefined;
  let slowStarted = false;
  let preCloseRan = false;
  let releasePreClose: () => void = () => undefined;
  const envelope: ErrorFormatter = (error) => ({
    body: { data: null, error: { code: error.code, message: error.message } },
  });
  const jsonRpc: ErrorFormatter = (error) => ({
    body: {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: error.message, data: { code: error.code } },
    },
  });
  const flat: ErrorFormatter = (error) => ({
    body: { error: error.code, message: error.message, retryable: false },
  });
  const flatV2: ErrorFormatter = (error) => ({ body: { v2: true, error: error.code } });
  const own: ErrorFormatter = (error) => ({ body: { own: error.code } });

  before(async () => {
    app = await bareServiceApp({
      name: 'formats-test',
      formatError: envelope,
      errorFormats: [
        { prefix: '/mcp/', format: jsonRpc },
        { prefix: '/legacy/', format: flat },
        { prefix: '/legacy/v2/', format: flatV2 },
      ],
      operatorToken: OPERATOR_TOKEN,
    });
    const body = Type.Object(
      { n: Type.Integer({ minimum: 0, maximum: 9 }) },
      { additionalProperties: false },
    );
    app.post('/api/things', { schema: { body } }, async () => ({ ok: true }));
    app.get('/api/items/:id', async () => ({ ok: true }));
    app.post('/mcp/tools', { schema: { body } }, async () => ({ ok: true }));
    app.post('/api/special', { config: { errorFormat: own }, schema: { body } }, async () => ({ ok: true }));
    app.get('/api/ping', async () => ({ pong: true }));
    app.addHook('preClose', async () => {
      preCloseRan = true;
      // Holds the stop in its preClose phase (after the app knows it is stopping, before the server closes idle
      // connections) until the test lets go.
      await new Promise<void>((resolve) => {
        releasePreClose = resolve;
      });
    });
    app.get('/api/slow', async () => {
      slowStarted = true;
      await new Promise<void>((resolve) => {
        releaseSlow = resolve;
      });
      return { slow: true };
    });
    await app.ready();
  });
  after(() => app.close());

  const post = (url: string) => app.inject({ method: 'POST', url, payload: { n: 'x' } });

  test('prefixes cover whole path segments: /mcp and /mcp/x, never /mcpx; a prefix given twice is refused', async () => {
    assert.equal((await app.inject({ url: '/mcp' })).json().jsonrpc, '2.0');
    assert.equal((await app.inject({ url: '/mcpx/nothing' })).json().error.code, 'not_found');
    assert.equal((await app.inject({ url: '/mcpx/nothing' })).json().jsonrpc, undefined);
    await assert.rejects(
      bareServiceApp({
        name: 'twice',
        formatError: envelope,
        errorFormats: [
          { prefix: '/a/', format: flat },
          { prefix: '/a', format: flat },
        ],
        operatorToken: OPERATOR_TOKEN,
      }),
      /given twice/,
    );
  });

  test('requests Fastify refuses before routing answer in the format of their path, with a request id', async () => {
    const badEscape = await app.inject({ url: '/mcp/%ZZ' });
    assert.equal(badEscape.statusCode, 400);
    assert.equal(badEscape.json().error.data.code, 'bad_request');
    assert.ok(badEscape.headers['x-request-id']);
    const longParam = await app.inject({ url: `/api/items/${'x'.repeat(101)}` });
    assert.equal(longParam.statusCode, 414);
    assert.equal(longParam.json().error.code, 'uri_too_long');
    assert.ok(longParam.headers['x-request-id']);
  });

  test('an unknown route is answered in its prefix format; the longest prefix wins; else the service format', async () => {
    assert.deepEqual((await app.inject({ url: '/api/nothing' })).json().error.code, 'not_found');
    const mcp = await app.inject({ url: '/mcp/nothing' });
    assert.equal(mcp.statusCode, 404);
    assert.deepEqual(mcp.json().jsonrpc, '2.0');
    assert.equal(mcp.json().error.data.code, 'not_found');
    assert.deepEqual((await app.inject({ url: '/legacy/nothing' })).json(), {
      error: 'not_found',
      message: 'No route GET /legacy/nothing.',
      retryable: false,
    });
    assert.deepEqual((await app.inject({ url: '/legacy/v2/nothing' })).json(), {
      v2: true,
      error: 'not_found',
    });
  });

  test('a validation error is answered in the route format, else its prefix format, else the service format', async () => {
    const rest = await post('/api/things');
    assert.equal(rest.statusCode, 400);
    assert.equal(rest.json().error.code, 'validation_failed');
    assert.equal((await post('/mcp/tools')).json().error.data.code, 'validation_failed');
    const special = await post('/api/special');
    assert.equal(special.statusCode, 400);
    assert.deepEqual(special.json(), { own: 'validation_failed' });
  });

  test('a stop closes a busy keep-alive connection after its answer; a request arriving during the stop is a 503', async () => {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as { port: number };
    /** A raw HTTP/1.1 connection collecting what the server sends. */
    const connect = () => {
      const socket = net.connect(port, '127.0.0.1');
      const state = {
        received: '',
        ended: new Promise<void>((resolve) => socket.on('close', () => resolve())),
      };
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        state.received += chunk;
      });
      return { socket, state };
    };
    const busy = connect();
    const idle = connect();
    idle.socket.write('GET /api/ping HTTP/1.1\r\nHost: x\r\n\r\n');
    busy.socket.write('GET /api/slow HTTP/1.1\r\nHost: x\r\n\r\n');
    await waitUntil('the slow request and the idle answer', () => slowStarted && idle.state.received !== '');
    assert.match(idle.state.received, /keep-alive/i);

    const started = Date.now();
    const closing = app.close();
    await waitUntil('the stop to begin', () => preCloseRan);
    // The stop has begun: a request on the idle keep-alive connection is refused in the service's format.
    const before = idle.state.received.length;
    idle.socket.write('GET /api/ping HTTP/1.1\r\nHost: x\r\n\r\n');
    await idle.state.ended;
    const refused = idle.state.received.slice(before);
    assert.match(refused, /^HTTP\/1\.1 503/);
    assert.match(refused, /connection: close/i);
    assert.deepEqual(JSON.parse(refused.slice(refused.indexOf('\r\n\r\n') + 4)), {
      data: null,
      error: { code: 'service_unavailable', message: 'The service is stopping; retry on another instance.' },
    });

    // The busy connection gets its answer, with Connection: close, and the stop does not wait for a keep-alive timeout.
    releasePreClose();
    releaseSlow();
    await busy.state.ended;
    await closing;
    assert.ok(Date.now() - started < 5000, 'the stop did not wait for the keep-alive timeout');
    assert.match(busy.state.received, /^HTTP\/1\.1 200/);
    assert.match(busy.state.received, /connection: close/i);
  });
});
