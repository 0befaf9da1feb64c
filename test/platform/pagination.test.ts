import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiError } from '../../src/platform/errors.ts';
import { pageInfo, parsePage, trimPage } from '../../src/platform/pagination.ts';

function invalid(err: unknown): boolean {
  return err instanceof ApiError && err.status === 400 && err.code === 'invalid_pagination';
}

describe('platform: pagination', () => {
  test('parsePage defaults to limit 20 offset 0 (or the given default), empty strings count as unset', () => {
    assert.deepEqual(parsePage({}), { limit: 20, offset: 0 });
    assert.deepEqual(parsePage({ limit: '', offset: '' }), { limit: 20, offset: 0 });
    assert.deepEqual(parsePage({}, { defaultLimit: 5 }), { limit: 5, offset: 0 });
  });

  test('parsePage accepts numbers and numeric strings within bounds', () => {
    assert.deepEqual(parsePage({ limit: '10', offset: '30' }), { limit: 10, offset: 30 });
    assert.deepEqual(parsePage({ limit: 100, offset: 0 }), { limit: 100, offset: 0 });
    assert.deepEqual(parsePage({ limit: 1 }), { limit: 1, offset: 0 });
    assert.deepEqual(parsePage({ limit: 250 }, { maxLimit: 250 }), { limit: 250, offset: 0 });
  });

  test('parsePage refuses limits outside 1..max and bad offsets with 400 invalid_pagination', () => {
    assert.throws(() => parsePage({ limit: 0 }), invalid);
    assert.throws(() => parsePage({ limit: 101 }), invalid);
    assert.throws(
      () => parsePage({ limit: 11 }, { maxLimit: 10 }),
      (e: unknown) => invalid(e) && /1 to 10/.test((e as Error).message),
    );
    assert.throws(() => parsePage({ limit: '2.5' }), invalid);
    assert.throws(() => parsePage({ limit: 'ten' }), invalid);
    assert.throws(() => parsePage({ offset: -1 }), invalid);
    assert.throws(() => parsePage({ offset: '1.5' }), invalid);
    assert.throws(() => parsePage({ offset: 'x' }), invalid);
  });

  test('pageInfo says whether more items follow the page', () => {
    assert.deepEqual(pageInfo({ limit: 10, offset: 0 }, 25), {
      limit: 10,
      offset: 0,
      total: 25,
      hasMore: true,
    });
    assert.equal(pageInfo({ limit: 10, offset: 10 }, 20).hasMore, false);
    assert.equal(pageInfo({ limit: 10, offset: 10 }, 21).hasMore, true);
    assert.equal(pageInfo({ limit: 10, offset: 0 }, 0).hasMore, false);
  });

  test('trimPage drops the extra (limit+1)th row and reports hasMore', () => {
    assert.deepEqual(trimPage([1, 2, 3, 4], 3), { items: [1, 2, 3], hasMore: true });
    assert.deepEqual(trimPage([1, 2, 3], 3), { items: [1, 2, 3], hasMore: false });
    assert.deepEqual(trimPage([], 3), { items: [], hasMore: false });
  });
});
