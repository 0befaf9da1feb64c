import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isPrefixedHexId, prefixedHexId, randomToken, requestId } from '../../src/platform/ids.ts';

describe('platform: ids', () => {
  test('prefixedHexId is <prefix>_ + 32 lowercase hex, unique', () => {
    const ids = new Set(Array.from({ length: 200 }, () => prefixedHexId('pmi')));
    assert.equal(ids.size, 200);
    for (const id of ids) assert.match(id, /^pmi_[0-9a-f]{32}$/);
  });

  test('isPrefixedHexId accepts exactly that format', () => {
    const id = prefixedHexId('cpy');
    assert.equal(isPrefixedHexId('cpy', id), true);
    assert.equal(isPrefixedHexId('pmi', id), false, 'other prefix');
    assert.equal(isPrefixedHexId('cpy', id.toUpperCase()), false, 'upper-case hex');
    assert.equal(isPrefixedHexId('cpy', `${id}0`), false, 'too long');
    assert.equal(isPrefixedHexId('cpy', id.slice(0, -1)), false, 'too short');
    assert.equal(isPrefixedHexId('cpy', `cpy_${'g'.repeat(32)}`), false, 'not hex');
    assert.equal(isPrefixedHexId('cpy', `cpy-${'a'.repeat(32)}`), false, 'wrong separator');
  });

  test('randomToken is unpadded URL-safe base64 of the requested bytes', () => {
    const t = randomToken();
    assert.match(t, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(Buffer.from(t, 'base64url').length, 32);
    assert.equal(Buffer.from(randomToken(16), 'base64url').length, 16);
    assert.match(randomToken(16), /^[A-Za-z0-9_-]{22}$/);
    assert.notEqual(randomToken(), randomToken());
  });

  test('requestId is a UUID v4', () => {
    const a = requestId();
    assert.match(a, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.notEqual(a, requestId());
  });
});
