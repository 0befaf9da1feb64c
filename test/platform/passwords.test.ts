import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { hashPassword, verifyPassword } from '../../src/platform/passwords.ts';

describe('platform: password hashing (argon2id)', () => {
  test('hashes are salted argon2id PHC strings with the OWASP parameters; verifyPassword checks them', async () => {
    const h1 = await hashPassword('correct horse battery');
    const h2 = await hashPassword('correct horse battery');
    assert.match(h1, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/);
    assert.notEqual(h1, h2, 'salted');
    assert.equal(await verifyPassword('correct horse battery', h1), true);
    assert.equal(await verifyPassword('correct horse battery', h2), true);
    assert.equal(await verifyPassword('wrong horse battery', h1), false);
  });

  test('no stored hash (an unknown user) and malformed hashes are false, never a throw', async () => {
    assert.equal(await verifyPassword('decoy password that matches nothing', null), false);
    for (const stored of ['', 'scrypt$16384$8$1$abc$def', '$argon2id$v=19$m=19456,t=2,p=1$', 'x'])
      assert.equal(await verifyPassword('x', stored), false, stored);
  });

  test('many hashes at once all complete (they wait in line for the four slots)', async () => {
    const hashes = await Promise.all(Array.from({ length: 10 }, (_, i) => hashPassword(`pw ${i}`)));
    assert.equal(new Set(hashes).size, 10);
  });
});
