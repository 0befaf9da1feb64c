import assert from 'node:assert/strict';
import { createHash, createHmac, hkdfSync } from 'node:crypto';
import { describe, test } from 'node:test';
import {
  constantTimeEqual,
  hashApiKey,
  hmacSha256,
  issueApiKey,
  SecretBox,
} from '../../src/platform/crypto.ts';

describe('platform: crypto', () => {
  test('issueApiKey: prefix + 43 URL-safe chars, stored hash is SHA-256 hex, hint is the last four', () => {
    const k = issueApiKey('cpk_');
    assert.match(k.plaintext, /^cpk_[A-Za-z0-9_-]{43}$/);
    assert.equal(k.hash, createHash('sha256').update(k.plaintext).digest('hex'));
    assert.equal(k.hash, hashApiKey(k.plaintext));
    assert.match(k.hash, /^[0-9a-f]{64}$/);
    assert.equal(k.hint, k.plaintext.slice(-4));
    assert.notEqual(issueApiKey('cpk_').plaintext, k.plaintext);
  });

  test('constantTimeEqual: equal only for identical strings, any length', () => {
    assert.equal(constantTimeEqual('abc', 'abc'), true);
    assert.equal(constantTimeEqual('', ''), true);
    assert.equal(constantTimeEqual('abc', 'abd'), false);
    assert.equal(constantTimeEqual('abc', 'abcd'), false);
    assert.equal(constantTimeEqual('', 'a'), false);
  });

  test('hmacSha256 matches node HMAC-SHA256 bytes', () => {
    const expected = createHmac('sha256', 'k').update('data').digest();
    assert.deepEqual(hmacSha256('k', 'data'), expected);
    assert.deepEqual(hmacSha256(Buffer.from('k'), Buffer.from('data')), expected);
    assert.notDeepEqual(hmacSha256('k2', 'data'), expected);
  });

  test('SecretBox.deriveKey: HKDF-SHA256 of the box key, 32 bytes, one per label, the same on every instance', () => {
    const key = Buffer.alloc(32, 1);
    const a = new SecretBox(key).deriveKey('payments:card-fingerprint');
    assert.equal(a.length, 32);
    assert.deepEqual(new SecretBox(Buffer.alloc(32, 1)).deriveKey('payments:card-fingerprint'), a);
    assert.deepEqual(
      a,
      Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'payments:card-fingerprint', 32)),
    );
    assert.notDeepEqual(new SecretBox(key).deriveKey('another:purpose'), a);
    assert.notDeepEqual(new SecretBox(Buffer.alloc(32, 2)).deriveKey('payments:card-fingerprint'), a);
    assert.notDeepEqual(a, key);
  });

  test('SecretBox round-trips, with a fresh IV each time, in the v1 format', () => {
    const box = new SecretBox(Buffer.alloc(32, 1));
    const a = box.encrypt('whsec_secret');
    const b = box.encrypt('whsec_secret');
    assert.match(a, /^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]+$/);
    assert.notEqual(a, b);
    assert.equal(box.decrypt(a), 'whsec_secret');
    assert.equal(box.decrypt(box.encrypt('')), '');
    assert.equal(box.decrypt(box.encrypt('héllo ✓')), 'héllo ✓');
  });

  test('SecretBox refuses altered ciphertext, another key, another or missing aad', () => {
    const box = new SecretBox(Buffer.alloc(32, 1));
    const sealed = box.encrypt('payload', 'row:1');
    assert.equal(box.decrypt(sealed, 'row:1'), 'payload');
    const fail = { message: 'secret cannot be decrypted' };
    assert.throws(() => box.decrypt(sealed, 'row:2'), fail);
    assert.throws(() => box.decrypt(sealed), fail);
    assert.throws(() => new SecretBox(Buffer.alloc(32, 2)).decrypt(sealed, 'row:1'), fail);
    const parts = sealed.split('.');
    const ct = Buffer.from(parts[3]!, 'base64url');
    ct[0] = (ct[0] ?? 0) ^ 1;
    assert.throws(
      () => box.decrypt([parts[0], parts[1], parts[2], ct.toString('base64url')].join('.'), 'row:1'),
      fail,
    );
    assert.throws(() => box.decrypt('v2.a.b.c'), fail);
    assert.throws(() => box.decrypt('garbage'), fail);
  });

  test('SecretBox refuses a truncated authentication tag (the format fixes it at 16 bytes)', () => {
    const box = new SecretBox(Buffer.alloc(32, 1));
    const [v, iv, tag, ct] = box.encrypt('payload', 'row:1').split('.') as [string, string, string, string];
    for (const n of [12, 8, 4]) {
      const short = Buffer.from(tag, 'base64url').subarray(0, n).toString('base64url');
      assert.throws(
        () => box.decrypt([v, iv, short, ct].join('.'), 'row:1'),
        { message: 'secret cannot be decrypted' },
        `${n}-byte tag`,
      );
    }
  });

  test('SecretBox needs a 32-byte key', () => {
    assert.throws(() => new SecretBox(Buffer.alloc(16)), RangeError);
    assert.throws(() => new SecretBox(Buffer.alloc(33)), RangeError);
  });
});
