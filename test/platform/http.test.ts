import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { Type } from '@sinclair/typebox';
import type { TrustProxy } from '../../src/platform/config.ts';
import { ApiError } from '../../src/platform/errors.ts';
import { createServiceApp, type ServiceApp } from '../../src/platform/http.ts';
import { createLogger } from '../../src/platform/logger.ts';

const OPERATOR_TOKEN = 'operator-token-for-http-tests-0123';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('platform: createServiceApp (request ids, errors, probes, OpenAPI, operator guard)', () => {
  let app: ServiceApp;
  let ready = true;

  before(async () => {
    app = await createServiceApp({
      name: 'http-test',
      title: 'HTTP test service',
      version: '1.2.3',
      description: 'test',
      publicUrl: 'http://127.0.0.1:9999',
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
      logger: createLogger('silent'),
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
            { name: Type.String(), qty: Type.Integer({ minimum: 1 }) },
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
    const app = await createServiceApp({
      name: 'log-test',
      title: 'Log test service',
      version: '1.0.0',
      description: 'test',
      publicUrl: 'http://127.0.0.1:9999',
      formatError: (error) => ({ body: { code: error.code, message: error.message } }),
      operatorToken: OPERATOR_TOKEN,
      logger: createLogger('info', sink),
      ready: async () => true,
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

describe('platform: client address behind proxies (TRUST_PROXY)', () => {
  const appWith = async (trustProxy: TrustProxy | undefined) => {
    const app = await createServiceApp({
      name: 'proxy-test',
      title: 'Proxy test service',
      version: '1.0.0',
      description: 'test',
      publicUrl: 'http://127.0.0.1:9999',
      formatError: (error) => ({ body: { code: error.code, message: error.message } }),
      operatorToken: OPERATOR_TOKEN,
      logger: createLogger('silent'),
      ready: async () => true,
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
