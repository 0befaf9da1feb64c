import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { clientBucket, isLoopbackAddress, isLoopbackHost } from '../../src/platform/addresses.ts';

describe('platform: client addresses of the per-address limits', () => {
  test('loopback: 127.0.0.0/8, ::1 and the IPv4-mapped forms; not other addresses or garbage', () => {
    for (const a of ['127.0.0.1', '127.9.8.7', '::1', '::ffff:127.0.0.1'])
      assert.equal(isLoopbackAddress(a), true, a);
    for (const a of ['10.0.0.1', '198.51.100.7', '2001:db8::1', '::ffff:10.0.0.1', 'localhost', 'x'])
      assert.equal(isLoopbackAddress(a), false, a);
    for (const h of ['localhost', '127.0.0.1', '[::1]']) assert.equal(isLoopbackHost(h), true, h);
    for (const h of ['example.com', '[2001:db8::1]', '10.0.0.1']) assert.equal(isLoopbackHost(h), false, h);
  });

  test('an IPv6 client is counted by its /64; an IPv4 one (mapped or not) by its address', () => {
    assert.equal(clientBucket('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
    assert.equal(clientBucket('2001:db8:1:2:ffff:ffff:ffff:ffff'), clientBucket('2001:db8:1:2::9'));
    assert.notEqual(clientBucket('2001:db8:1:3::1'), clientBucket('2001:db8:1:2::1'));
    assert.equal(clientBucket('198.51.100.7'), '198.51.100.7');
    assert.equal(clientBucket('::ffff:198.51.100.7'), '198.51.100.7');
    assert.equal(clientBucket('not an address'), 'not an address');
  });
});
