import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../src/platform/http.ts';
import { INT4_MAX, Int4 } from '../../src/platform/schemas.ts';
import {
  MAX_JSON_DEPTH,
  unboundedNumbersOf,
  unstorableIssue,
  unstorableTextReason,
} from '../../src/platform/storable-input.ts';
import { bareServiceApp } from '../support/platform.ts';

describe('platform: text and JSON storage can hold (NUL, unpaired surrogates, depth)', () => {
  test('NUL and unpaired surrogates are refused; paired surrogates (emoji) and other controls are text', () => {
    assert.match(unstorableTextReason('a\u0000b') ?? '', /NUL/);
    for (const bad of ['\ud800', 'x\ud800', '\udfff', 'a\udc00b', '\ud83d\ud83d', '\ude00\ud83d'])
      assert.match(unstorableTextReason(bad) ?? '', /surrogate/, JSON.stringify(bad));
    for (const ok of ['', 'plain', '\u{1F600}', 'a\u{1F600}b\u{10FFFF}', '\u0001\t\n', 'é中文'])
      assert.equal(unstorableTextReason(ok), undefined, JSON.stringify(ok));
  });

  test('the first unstorable place of a JSON value is named by its path, keys included', () => {
    assert.deepEqual(unstorableIssue({ a: [{ b: 'ok' }, { c: 'x\u0000' }] }, 'body'), {
      location: 'body',
      field: 'a/1/c',
      message: 'must not contain a NUL character (U+0000)',
    });
    assert.deepEqual(unstorableIssue({ data: { 'k\ud800': 1 } }, 'body')?.field, 'data/k\ud800');
    assert.match(unstorableIssue({ data: { 'k\ud800': 1 } }, 'body')?.message ?? '', /has a key that/);
    assert.equal(unstorableIssue({ a: [1, 'two', null, true, { b: '\u{1F600}' }] }, 'body'), undefined);
    assert.equal(unstorableIssue('\u0000', 'query')?.field, '');
  });

  test(`nesting is limited to ${MAX_JSON_DEPTH} levels, and a very deep value is walked without recursion`, () => {
    const nested = (depth: number): unknown => JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`);
    assert.equal(unstorableIssue(nested(MAX_JSON_DEPTH), 'body'), undefined);
    assert.match(unstorableIssue(nested(MAX_JSON_DEPTH + 1), 'body')?.message ?? '', /64 levels/);
    // 100,000 levels: a recursive walk would overflow the stack.
    assert.match(unstorableIssue(nested(100_000), 'body')?.message ?? '', /levels deep/);
  });
});

describe('platform: every number a request schema accepts is bounded', () => {
  test('integers and numbers without both bounds are listed with their place; bounded ones are not', () => {
    const schema = Type.Object({
      a: Type.Integer(),
      b: Type.Integer({ minimum: 0 }),
      c: Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 }),
      d: Type.Array(Type.Union([Type.Integer({ minimum: 0, maximum: 2 ** 60 }), Type.Null()])),
      e: Type.Record(Type.String(), Type.Number({ minimum: 0 })),
      f: Int4(),
    });
    assert.deepEqual(unboundedNumbersOf(schema, 'body'), [
      'body/a: an integer without a maximum',
      'body/a: an integer without a minimum',
      'body/b: an integer without a maximum',
      'body/d/*: an integer bound past Number.MAX_SAFE_INTEGER',
      'body/e/^(.*)$: a number without a maximum',
    ]);
    assert.deepEqual(unboundedNumbersOf(undefined, 'params'), []);
  });

  test('a route accepting an unbounded number is refused when it is registered', async () => {
    const app = await bareServiceApp({
      name: 'bounds-test',
      formatError: (error) => ({ body: { code: error.code } }),
      operatorToken: 'operator-token-for-bounds-tests',
    });
    try {
      assert.throws(
        () =>
          app.get(
            '/things/:id',
            { schema: { params: Type.Object({ id: Type.Integer({ minimum: 1 }) }) } },
            async () => ({}),
          ),
        /route GET \/things\/:id accepts unbounded numbers .*params\/id: an integer without a maximum/,
      );
    } finally {
      await app.close();
    }
  });
});

describe('platform: requests with what storage cannot hold are 400s in the service format, before any service hook', () => {
  let app: ServiceApp;
  let hookRuns = 0;

  before(async () => {
    app = await bareServiceApp({
      name: 'storable-test',
      formatError: (error) => ({ body: { code: error.code, issues: error.details?.issues ?? null } }),
      operatorToken: 'operator-token-for-storable-tests',
    });
    app.post(
      '/things/:name',
      {
        // A service hook reading the path (as an authentication hook looking up a resource would).
        onRequest: async () => {
          hookRuns += 1;
        },
        schema: {
          params: Type.Object({ name: Type.String() }),
          querystring: Type.Object({
            q: Type.Optional(Type.String()),
            n: Type.Optional(Type.Number({ minimum: 0, maximum: 1000 })),
            i: Type.Optional(Int4()),
          }),
          body: Type.Object({ data: Type.Unknown() }),
        },
      },
      async (request) => request.body,
    );
    app.get(
      '/items/:id',
      {
        schema: {
          params: Type.Object({ id: Int4({ minimum: 1 }) }),
          querystring: Type.Object({ page: Type.Optional(Int4()) }),
        },
      },
      async (request) => ({ id: request.params.id }),
    );
    await app.ready();
  });
  after(() => app.close());

  const post = (url: string, payload: string) =>
    app.inject({ method: 'POST', url, payload, headers: { 'content-type': 'application/json' } });

  test('NUL in a path parameter or a query value', async () => {
    for (const url of ['/things/a%00b', '/things/x?q=%00']) {
      const res = await post(url, '{"data":1}');
      assert.equal(res.statusCode, 400, url);
      assert.equal(res.json().code, 'validation_failed');
      assert.match(JSON.stringify(res.json().issues), /NUL/);
    }
    assert.equal(hookRuns, 0, 'refused before the service hook read the value');
  });

  test('NUL, unpaired surrogates (escaped or raw) and deep nesting in a JSON body', async () => {
    const cases: [string, string][] = [
      ['{"data":"a\\u0000b"}', 'data'],
      ['{"data":{"list":["ok","\\ud800"]}}', 'data/list/1'],
      ['{"data":{"\\udfffkey":1}}', 'data/\udfffkey'],
      [`{"data":${'['.repeat(5000)}${']'.repeat(5000)}}`, `data${'/0'.repeat(MAX_JSON_DEPTH - 1)}`],
    ];
    for (const [payload, field] of cases) {
      const res = await post('/things/x', payload);
      assert.equal(res.statusCode, 400, payload.slice(0, 40));
      assert.equal(res.json().code, 'validation_failed');
      assert.equal(res.json().issues[0].field, field);
      assert.equal(res.json().issues[0].location, 'body');
    }
    const emoji = await post('/things/x', '{"data":"\\ud83d\\ude00 \u{1F600}"}');
    assert.equal(emoji.statusCode, 200);
    assert.equal(emoji.json().data, '\u{1F600} \u{1F600}');
  });

  test('numbers past their bounds, including ones JSON and query parsing turn into Infinity or inexact integers', async () => {
    for (const query of [`n=1e309`, 'n=-1e309', `i=${INT4_MAX + 1}`, 'i=99999999999999999999', 'n=1001']) {
      const res = await post(`/things/x?${query}`, '{"data":1}');
      assert.equal(res.statusCode, 400, query);
      assert.equal(res.json().code, 'validation_failed', query);
    }
    assert.equal((await post(`/things/x?i=${INT4_MAX}&n=1000`, '{"data":1}')).statusCode, 200);
  });

  test('path and query integers are written in decimal digits: 0x2, +2, 1e3, 02, Infinity are refused', async () => {
    for (const url of [
      '/items/0x2',
      '/items/+2',
      '/items/1e3',
      '/items/02',
      '/items/Infinity',
      '/items/2?page=0x1',
    ]) {
      const res = await app.inject({ url });
      assert.equal(res.statusCode, 400, url);
      assert.match(JSON.stringify(res.json().issues), /decimal digits/, url);
    }
    assert.deepEqual((await app.inject({ url: '/items/2?page=0' })).json(), { id: 2 });
    // Text that is no number at all keeps the schema's own message.
    assert.match(JSON.stringify((await app.inject({ url: '/items/abc' })).json().issues), /must be integer/);
  });
});
