/**
 * The events answers' cache and content coding: bytes kept per (route, query) for one change-feed generation, bounded
 * by entries and bytes, and sent as br, gzip or identity as the client asks.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import zlib from 'node:zlib';
import { cacheKey, PreparedBody, ResponseCache } from '../response-cache.ts';
import { nbaEvent, type OddsHarness, startOdds } from './support.ts';

describe('ResponseCache', () => {
  const body = (n: number) => new PreparedBody(Buffer.alloc(n, 0x20));

  test('a hit shares one computation; a new generation drops every entry', async () => {
    const cache = new ResponseCache<PreparedBody>((b) => b.size);
    let computed = 0;
    const compute = async () => {
      computed += 1;
      return body(10);
    };
    const [a, b] = await Promise.all([
      cache.getOrCompute('k', 1, compute),
      cache.getOrCompute('k', 1, compute),
    ]);
    assert.equal(a, b);
    assert.equal(computed, 1);
    await cache.getOrCompute('other', 1, compute);
    assert.equal(cache.entryCount, 2);
    await cache.getOrCompute('k', 2, compute);
    assert.equal(computed, 3);
    assert.equal(cache.entryCount, 1, 'the older generation was dropped');
    assert.equal(cache.byteCount, 10);
    // A caller that read an older generation is answered but its answer is not kept.
    await cache.getOrCompute('late', 1, compute);
    assert.equal(cache.entryCount, 1);
  });

  test('bounded by bytes and by entries, least recently used first; failures are not kept', async () => {
    const cache = new ResponseCache<PreparedBody>((b) => b.size, { maxBytes: 250, maxEntries: 3 });
    for (const k of ['a', 'b']) await cache.getOrCompute(k, 1, async () => body(100));
    await cache.getOrCompute('a', 1, async () => assert.fail('a is cached'));
    await cache.getOrCompute('c', 1, async () => body(100));
    assert.equal(cache.byteCount, 200, 'b (least recently used) went to stay under 250 bytes');
    let recomputed = false;
    await cache.getOrCompute('b', 1, async () => {
      recomputed = true;
      return body(10);
    });
    assert.ok(recomputed);
    for (const k of ['d', 'e']) await cache.getOrCompute(k, 1, async () => body(1));
    assert.equal(cache.entryCount, 3);
    await assert.rejects(cache.getOrCompute('x', 1, async () => Promise.reject(new Error('boom'))));
    let retried = false;
    await cache.getOrCompute('x', 1, async () => {
      retried = true;
      return body(1);
    });
    assert.ok(retried, 'a failed computation is not cached');
  });

  test('a computation running when the generation moves still answers its callers; an answer over the bound is not kept', async () => {
    const cache = new ResponseCache<PreparedBody>((b) => b.size, { maxBytes: 50 });
    let release: (b: PreparedBody) => void = () => undefined;
    const slow = cache.getOrCompute('k', 1, () => new Promise<PreparedBody>((r) => (release = r)));
    await cache.getOrCompute('k', 2, async () => body(5));
    release(body(7));
    assert.equal((await slow).size, 7, 'the caller of the old generation got its answer');
    assert.equal(cache.entryCount, 1);
    assert.equal(cache.byteCount, 5, 'the old answer was not kept');
    const big = await cache.getOrCompute('big', 2, async () => body(500));
    assert.equal(big.size, 500);
    assert.equal(cache.byteCount, 5);
  });

  test('cacheKey ignores the order of query parameters', () => {
    assert.equal(cacheKey('r', { b: '2', a: 1, c: undefined }), cacheKey('r', { a: 1, b: '2' }));
  });
});

describe('content coding of the events answers', () => {
  let h: OddsHarness;
  before(async () => {
    h = await startOdds(new Date('2026-11-22T12:00:00Z'));
    assert.equal((await h.ingest([nbaEvent('c1', '2026-11-23T01:00:00Z')])).statusCode, 200);
  });
  after(async () => h?.close());

  const get = (url: string, acceptEncoding?: string) =>
    h.platform.app('odds').inject({
      method: 'GET',
      url,
      headers: { 'x-odds-key': h.key, ...(acceptEncoding ? { 'accept-encoding': acceptEncoding } : {}) },
    });

  test('a change without a change-log row (game clock, team record) still refreshes the cached answers', async () => {
    const url = '/api/v2/sports/4/events/2026-11-23';
    const before = (await get(url)).json();
    assert.equal(before.events[0].score.game_clock, 0);
    const live = nbaEvent('c1', '2026-11-23T01:00:00Z');
    live.score = {
      ...live.score,
      game_clock: 431,
      display_clock: '7:11',
      event_status_detail: '1st period',
    } as never;
    (live.teams[0] as Record<string, unknown>).record = '10-2';
    h.clock.advance(60_000);
    const res = await h.ingest([live]);
    assert.equal(res.json().changes, 0, 'no price, status or score moved');
    const after = (await get(url)).json();
    assert.deepEqual(
      [
        after.events[0].score.game_clock,
        after.events[0].score.display_clock,
        after.events[0].teams[0].record,
      ],
      [431, '7:11', '10-2'],
    );
    assert.equal((await get('/api/v2/events/c1')).json().events[0].score.event_status_detail, '1st period');
    // The same body again changes nothing and keeps the answer cached (no notification).
    assert.equal((await h.ingest([live])).json().changes, 0);
  });

  test('br, gzip or identity as the client accepts; the same JSON in each', async () => {
    for (const url of ['/api/v2/sports/4/events/2026-11-23', '/api/v2/events/c1']) {
      const plain = await get(url);
      assert.equal(plain.statusCode, 200, plain.body);
      assert.equal(plain.headers['content-encoding'], undefined);
      assert.match(String(plain.headers.vary), /accept-encoding/i);
      const json = plain.json();
      assert.equal(json.events[0].event_id, 'c1');

      const br = await get(url, 'gzip, deflate, br');
      assert.equal(br.headers['content-encoding'], 'br', 'br is preferred on a tie');
      assert.deepEqual(JSON.parse(zlib.brotliDecompressSync(br.rawPayload).toString()), json);

      const gz = await get(url, 'br;q=0.5, gzip');
      assert.equal(gz.headers['content-encoding'], 'gzip', 'q-values win');
      assert.deepEqual(JSON.parse(zlib.gunzipSync(gz.rawPayload).toString()), json);

      const none = await get(url, 'deflate');
      assert.equal(none.headers['content-encoding'], undefined);
      assert.deepEqual(none.json(), json);
    }
  });
});
