import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import {
  DELIVERY_TIMEOUT_MS,
  encodeBody,
  MAX_ATTEMPTS,
  MAX_RETRY_AFTER_SECONDS,
  parseRetryAfter,
  RETRY_DELAYS_SECONDS,
  retryDelayMs,
} from '../delivery.ts';
import { readEntityEventsConfig } from '../entity-events-config.ts';
import { newWebhookSecret, signPayload } from '../signing.ts';

/** Pure rules of the delivery engine (no database): schedule, jitter, Retry-After, timeout default, signing. */
describe('entity-events: delivery rules', () => {
  test('the schedule is 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: 8 attempts in all', () => {
    assert.deepEqual([...RETRY_DELAYS_SECONDS], [5, 300, 1800, 7200, 18000, 36000, 36000]);
    assert.equal(MAX_ATTEMPTS, 8);
    assert.equal(retryDelayMs(8), undefined, 'no retry after the 8th attempt');
  });

  test('each delay has +-10 % jitter (and the jitter really varies)', () => {
    RETRY_DELAYS_SECONDS.forEach((base, i) => {
      const seen = new Set<number>();
      for (let n = 0; n < 200; n++) {
        const d = retryDelayMs(i + 1)!;
        assert.ok(d >= base * 900 && d <= base * 1100, `attempt ${i + 1}: ${d}`);
        seen.add(d);
      }
      assert.ok(seen.size > 20, `attempt ${i + 1} is jittered`);
    });
  });

  test('Retry-After: delta seconds or an HTTP date, capped at 10 h; invalid values are ignored', () => {
    const now = Date.UTC(2026, 5, 1, 12, 0, 0);
    assert.equal(parseRetryAfter('120', now), 120);
    assert.equal(parseRetryAfter(['30'], now), 30);
    assert.equal(parseRetryAfter(new Date(now + 90_000).toUTCString(), now), 90);
    assert.equal(parseRetryAfter(new Date(now - 90_000).toUTCString(), now), 0, 'a past date: now');
    assert.equal(parseRetryAfter('999999', now), MAX_RETRY_AFTER_SECONDS);
    assert.equal(MAX_RETRY_AFTER_SECONDS, 36_000);
    for (const bad of [undefined, '', 'soon', '-5', '1.5'])
      assert.equal(parseRetryAfter(bad, now), undefined, String(bad));
  });

  test('the attempt timeout is 15 s unless ENTITY_EVENTS_DELIVERY_TIMEOUT_MS says otherwise', () => {
    assert.equal(DELIVERY_TIMEOUT_MS, 15_000);
    assert.equal(readEntityEventsConfig({}).deliveryTimeoutMs, 15_000);
    assert.equal(readEntityEventsConfig({ ENTITY_EVENTS_DELIVERY_TIMEOUT_MS: '500' }).deliveryTimeoutMs, 500);
    assert.throws(() => readEntityEventsConfig({ ENTITY_EVENTS_DELIVERY_TIMEOUT_MS: 'fast' }));
    assert.throws(() => readEntityEventsConfig({ ENTITY_EVENTS_SIMULATOR_EVENTS_PER_MINUTE: '-1' }));
  });

  test('signing: HMAC-SHA256 keyed by the decoded secret over "<ts>.<exact bytes>", padded URL-safe base64', () => {
    const secret = newWebhookSecret();
    assert.match(secret, /^[A-Za-z0-9_-]{43}=$/);
    const body = encodeBody({ b: 'ü/+?', a: 1 }, 'json');
    const expected = createHmac('sha256', Buffer.from(secret, 'base64url'))
      .update(Buffer.concat([Buffer.from('1780000000.'), body]))
      .digest('base64')
      .replace(/\+/g, '-')
      .replace(/\//g, '_');
    assert.equal(signPayload(secret, 1780000000, body), expected);
    assert.notEqual(signPayload(secret, 1780000001, body), expected, 'the timestamp is signed');
    const text = encodeBody({ a: 1 }, 'stringified_json');
    assert.equal(text.toString('utf8'), JSON.stringify({ text: JSON.stringify({ a: 1 }) }));
  });
});
