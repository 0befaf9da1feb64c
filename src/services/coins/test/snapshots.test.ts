/**
 * SnapshotCache (spec D, Limits; issue 2 "each snapshot is serialized and compressed once, not per request"): one
 * store read per audience and refresh period, shared by concurrent first requests; each variant's bytes built once;
 * a failed read is not kept for the period.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ManualClock } from '../../../platform/clock.ts';
import type { CoinRow, CoinStore } from '../coin-store.ts';
import { REFRESH_INTERVAL_MS, SnapshotCache } from '../snapshots.ts';

const START = Date.UTC(2026, 0, 1, 0, 0, 0);

/** A store whose `all()` counts its reads and can be made to fail once. */
function countingStore(rows: CoinRow[]) {
  const state = { reads: 0, failNext: false };
  const store = {
    async all() {
      state.reads++;
      await new Promise((r) => setImmediate(r));
      if (state.failNext) {
        state.failNext = false;
        throw new Error('database unavailable');
      }
      return rows;
    },
  } as unknown as CoinStore;
  return { store, state };
}

const rows: CoinRow[] = [
  { id: 'bitcoin', symbol: 'btc', name: 'Bitcoin', platforms: {}, status: 'active' },
  { id: 'tether', symbol: 'usdt', name: 'Tether', platforms: { ethereum: '0xdac1' }, status: 'active' },
  { id: 'terra-luna', symbol: 'lunc', name: 'Terra Luna Classic', platforms: {}, status: 'inactive' },
] as CoinRow[];

describe('coins: snapshot cache', () => {
  test('one store read per period, shared by concurrent first requests; each variant built once', async () => {
    const clock = new ManualClock(START);
    const { store, state } = countingStore(rows);
    const cache = new SnapshotCache(store, clock);
    const plain = { status: 'active' as const, includePlatform: false };
    const [a, b, c] = await Promise.all([
      cache.get('paid', plain),
      cache.get('paid', plain),
      cache.get('paid', plain),
    ]);
    assert.equal(state.reads, 1, 'concurrent first requests share one read');
    assert.ok(a === b && b === c, 'one body object for the variant');
    const withPlatforms = await cache.get('paid', { status: 'active', includePlatform: true });
    const inactive = await cache.get('paid', { status: 'inactive', includePlatform: false });
    assert.equal(state.reads, 1, 'other variants reuse the snapshot read');
    assert.deepEqual(JSON.parse(a.identity.toString()), [
      { id: 'bitcoin', symbol: 'btc', name: 'Bitcoin' },
      { id: 'tether', symbol: 'usdt', name: 'Tether' },
    ]);
    assert.deepEqual(JSON.parse(withPlatforms.identity.toString())[1].platforms, { ethereum: '0xdac1' });
    assert.deepEqual(
      JSON.parse(inactive.identity.toString()).map((r: { id: string }) => r.id),
      ['terra-luna'],
    );
    // Within the period the same bytes are served: not serialized or compressed again.
    clock.advance(REFRESH_INTERVAL_MS.paid - 1);
    assert.equal(await cache.get('paid', plain), a);
    assert.equal(state.reads, 1);
    assert.equal(a.refreshAt.getTime(), START + REFRESH_INTERVAL_MS.paid);
    // The next period reads again.
    clock.advance(1);
    const next = await cache.get('paid', plain);
    assert.equal(state.reads, 2);
    assert.notEqual(next, a);
    assert.equal(next.etag, a.etag, 'same data, same strong ETag');
  });

  test('each audience has its own period: public refreshes every 30 minutes, paid every 5', async () => {
    const clock = new ManualClock(START);
    const { store, state } = countingStore(rows);
    const cache = new SnapshotCache(store, clock);
    const plain = { status: 'active' as const, includePlatform: false };
    await cache.get('public', plain);
    await cache.get('paid', plain);
    assert.equal(state.reads, 2);
    clock.advance(5 * 60_000);
    await cache.get('public', plain);
    await cache.get('paid', plain);
    assert.equal(state.reads, 3, 'only the paid snapshot is renewed after 5 minutes');
    clock.advance(25 * 60_000);
    await cache.get('public', plain);
    assert.equal(state.reads, 4, 'the public snapshot is renewed at :30');
  });

  test('a failed read is not kept: the next request reads again', async () => {
    const clock = new ManualClock(START);
    const { store, state } = countingStore(rows);
    const cache = new SnapshotCache(store, clock);
    state.failNext = true;
    await assert.rejects(cache.get('paid', { status: 'active', includePlatform: false }), /unavailable/);
    const body = await cache.get('paid', { status: 'active', includePlatform: false });
    assert.equal(state.reads, 2);
    assert.equal(body.count, 2);
  });
});
