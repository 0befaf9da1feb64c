import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { getContractAddress } from 'viem';
import { UINT256_LIMIT, validateDepositRequest } from '../deposit-request.ts';
import { DEFAULT_FACTORY } from '../deposits-config.ts';
import { quoteSalt, vaultAddress } from '../vault-address.ts';

const A = `0x${'a'.repeat(40)}`;
const B = `0x${'b'.repeat(40)}`;
const valid = { sourceChainId: 8453, amount: '1000000', recipient: A, depositor: B };

function errorsOf(body: unknown): Record<string, string[]> {
  const r = validateDepositRequest(body);
  assert.ok('errors' in r, 'expected validation errors');
  return r.errors;
}

describe('deposits: request validation (spec C body rules)', () => {
  test('a valid request; refundRecipient defaults to depositor; addresses lowercased', () => {
    const r = validateDepositRequest({ ...valid, recipient: A.toUpperCase().replace('0X', '0x') });
    assert.ok('value' in r);
    assert.equal(r.value.refundRecipient, B);
    assert.equal(r.value.recipient, A);
    assert.equal(r.value.amount, 1_000_000n);
  });

  test('sourceChainId: an integer of at least 1', () => {
    for (const bad of [0, -1, 1.5, '8453', null, true]) {
      assert.ok(
        errorsOf({ ...valid, sourceChainId: bad }).sourceChainId,
        `sourceChainId ${JSON.stringify(bad)}`,
      );
    }
    assert.ok('value' in validateDepositRequest({ ...valid, sourceChainId: 1 }));
  });

  test('amount: a positive integer string of base units that fits uint256', () => {
    const bad = ['0', '000', '-1', '+1', '1.0', '1.5', '1e6', '0x10', ' 1', '1 ', '', '١٢', '01', 123, null];
    for (const amount of bad)
      assert.ok(errorsOf({ ...valid, amount }).amount, `amount ${JSON.stringify(amount)}`);
    const max = (UINT256_LIMIT - 1n).toString();
    const r = validateDepositRequest({ ...valid, amount: max });
    assert.ok('value' in r && r.value.amount === UINT256_LIMIT - 1n, '2^256 - 1 fits');
    assert.ok(errorsOf({ ...valid, amount: UINT256_LIMIT.toString() }).amount, '2^256 does not fit');
    assert.ok(errorsOf({ ...valid, amount: '9'.repeat(100) }).amount);
  });

  test('addresses: 0x + 40 hex; lowercase always accepted; a mixed-case one needs a valid EIP-55 checksum', () => {
    for (const bad of ['0x123', 'a'.repeat(42), `0x${'g'.repeat(40)}`, `0x${'a'.repeat(41)}`, 42]) {
      assert.ok(errorsOf({ ...valid, recipient: bad }).recipient, `recipient ${JSON.stringify(bad)}`);
    }
    const checksummed = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'; // EIP-55 test vector
    assert.ok('value' in validateDepositRequest({ ...valid, recipient: checksummed }));
    assert.ok('value' in validateDepositRequest({ ...valid, recipient: checksummed.toLowerCase() }));
    const broken = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD';
    assert.match(errorsOf({ ...valid, recipient: broken }).recipient?.[0] ?? '', /checksum/);
    assert.ok(errorsOf({ ...valid, refundRecipient: '0xnope' }).refundRecipient);
  });

  test('every failing field is reported at once; unknown fields and non-objects are refused', () => {
    const errors = errorsOf({ sourceChainId: 0, amount: 'x', recipient: 'y', extra: true });
    assert.deepEqual(Object.keys(errors).sort(), [
      'amount',
      'depositor',
      'extra',
      'recipient',
      'sourceChainId',
    ]);
    assert.ok(errorsOf([]).body);
    assert.ok(errorsOf('x').body);
  });
});

describe('deposits: vault address (CREATE2, EIP-1014)', () => {
  const request = {
    sourceChainId: 8453,
    amount: 25_000_000n,
    recipient: A as `0x${string}`,
    depositor: B as `0x${string}`,
    refundRecipient: B as `0x${string}`,
  };
  const nonce = `0x${'11'.repeat(32)}` as `0x${string}`;

  test('deterministic, checksummed, and equal to the EIP-1014 formula', () => {
    const salt = quoteSalt(request, 1_800_000_000, nonce);
    const address = vaultAddress(DEFAULT_FACTORY, salt);
    assert.equal(address, vaultAddress(DEFAULT_FACTORY, quoteSalt(request, 1_800_000_000, nonce)));
    assert.match(address, /^0x[0-9a-fA-F]{40}$/);
    assert.notEqual(address, address.toLowerCase(), 'EIP-55 mixed case');
    assert.equal(
      address,
      getContractAddress({
        opcode: 'CREATE2',
        from: DEFAULT_FACTORY.address,
        salt,
        bytecodeHash: DEFAULT_FACTORY.initCodeHash,
      }),
    );
  });

  test('EIP-1014 example 1: deployer 0x0, salt 0, init code 0x00', () => {
    const address = vaultAddress(
      {
        address: '0x0000000000000000000000000000000000000000',
        initCodeHash: '0xbc36789e7a1e281436464229828f817d6612f7b477d66591ff96a9e064bcc98a', // keccak256(0x00)
      },
      `0x${'00'.repeat(32)}`,
    );
    assert.equal(address, '0x4D1A2e2bB4F88F0250f26Ffff098B0b30B26BF38');
  });

  test('each quote parameter changes the address', () => {
    const base = vaultAddress(DEFAULT_FACTORY, quoteSalt(request, 1_800_000_000, nonce));
    const variants = [
      quoteSalt({ ...request, sourceChainId: 1 }, 1_800_000_000, nonce),
      quoteSalt({ ...request, amount: 25_000_001n }, 1_800_000_000, nonce),
      quoteSalt({ ...request, recipient: B as `0x${string}` }, 1_800_000_000, nonce),
      quoteSalt({ ...request, refundRecipient: A as `0x${string}` }, 1_800_000_000, nonce),
      quoteSalt(request, 1_800_000_001, nonce),
      quoteSalt(request, 1_800_000_000, `0x${'22'.repeat(32)}`),
    ];
    const addresses = new Set(variants.map((s) => vaultAddress(DEFAULT_FACTORY, s)));
    assert.equal(addresses.size, variants.length);
    assert.ok(!addresses.has(base));
  });
});
