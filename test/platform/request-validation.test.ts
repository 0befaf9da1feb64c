import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../src/platform/http.ts';
import { Int4 } from '../../src/platform/schemas.ts';
import { bareServiceApp } from '../support/platform.ts';

/** The platform's request validation: query and path values are coerced from text, JSON bodies are taken as sent. */
describe('platform: request validation (coercion for query and params, none for JSON bodies)', () => {
  let app: ServiceApp;

  before(async () => {
    app = await bareServiceApp({
      name: 'validation-test',
      operatorToken: 'operator-token-for-tests-0123',
    });
    app.post(
      '/items/:id',
      {
        schema: {
          operationId: 'createItem',
          tags: ['test'],
          summary: 'create',
          params: Type.Object({ id: Int4() }),
          querystring: Type.Object({ tags: Type.Optional(Type.Array(Type.String())), limit: Int4() }),
          body: Type.Object({ quantity: Int4(), name: Type.String() }),
        },
      },
      async (request) => ({ params: request.params, query: request.query, body: request.body }),
    );
    await app.ready();
  });
  after(() => app.close());

  test('path and query values are coerced to their schema types', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/items/7?limit=10&tags=a',
      payload: { quantity: 2, name: 'x' },
    });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), {
      params: { id: 7 },
      query: { limit: 10, tags: ['a'] },
      body: { quantity: 2, name: 'x' },
    });
  });

  test('a JSON body field of the wrong type is a 400, never coerced', async () => {
    for (const payload of [
      { quantity: '2', name: 'x' },
      { quantity: 2, name: 5 },
      { quantity: true, name: 'x' },
    ]) {
      const res = await app.inject({ method: 'POST', url: '/items/7?limit=1', payload });
      assert.equal(res.statusCode, 400, JSON.stringify(payload));
    }
  });

  test('a query value that is not a number is a 400', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/items/7?limit=ten',
      payload: { quantity: 1, name: 'x' },
    });
    assert.equal(res.statusCode, 400);
  });
});
