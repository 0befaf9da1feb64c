/**
 * Rules of the deposit-address service that a reviewer's mutations showed were under-tested: the identity of a
 * request (every parameter), the CREATE2 derivation recomputed independently with viem, EIP-55, concurrent repeats,
 * rate limits (per key, per address, failed keys counted per address), authentication of the GET route, the strict
 * deadline, transfer kinds, and refunds (to the explicit refund address; closed vaults; idempotent refund job).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, beforeEach, describe, test } from 'node:test';
import {
  checksumAddress,
  concat,
  encodeAbiParameters,
  getAddress,
  getContractAddress,
  keccak256,
  toHex,
} from 'viem';
import { startTestPlatform, type TestPlatform } from '../../../../test/support/platform.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { readDepositsConfig } from '../deposits-config.ts';
import { depositsService } from '../index.ts';

const START = Date.UTC(2026, 2, 1, 12, 0, 0);
const PATH = '/v1/stablecoin-gateway/deposit-addresses';
/** The documented defaults (README): simulator factory and init-code hash, and the rate limits. */
const FACTORY = '0x4e59b44847b379578588920cA78FbF26c0B4956C';
const INIT_CODE_HASH = '0x21c35dbe1b344a2488cf3321d6ce542f8e9f305544ff09e4993a62319a497c1f';
const ANONYMOUS_LIMIT = 120;
const KEY_LIMIT = 1200;

/** A random lowercase address. */
const addr = () => toHex(randomBytes(20));

interface Quote {
  vaultAddress: string;
  amount: string;
  deadline: number;
}

/**
 * The salt as the README documents it, computed here independently of `vault-address.ts`:
 * keccak256(abi.encode(uint256 sourceChainId, uint256 amount, address recipient, address depositor,
 * address refundRecipient, uint256 deadline, bytes32 nonce)).
 */
function documentedSalt(
  b: { sourceChainId: number; amount: string; recipient: string; depositor: string },
  refundRecipient: string,
  deadline: number,
  nonce: `0x${string}`,
): `0x${string}` {
  return keccak256(
    encodeAbiParameters(
      [
        { type: 'uint256' },
        { type: 'uint256' },
        { type: 'address' },
        { type: 'address' },
        { type: 'address' },
        { type: 'uint256' },
        { type: 'bytes32' },
      ],
      [
        BigInt(b.sourceChainId),
        BigInt(b.amount),
        getAddress(b.recipient),
        getAddress(b.depositor),
        getAddress(refundRecipient),
        BigInt(deadline),
        nonce,
      ],
    ),
  );
}

describe('deposits: rules', () => {
  const clock = new ManualClock(START);
  let platform: TestPlatform;
  // Every test calls from its own client address, so their rate-limit budgets never mix.
  let ipSeq = 0;
  let ip = '10.0.0.1';
  beforeEach(() => {
    ipSeq++;
    ip = `10.0.${ipSeq >> 8}.${ipSeq & 255}`;
  });

  const inject = (options: {
    method: 'GET' | 'POST';
    url: string;
    payload?: unknown;
    headers?: Record<string, string>;
    from?: string;
  }) =>
    platform.app('deposits').inject({
      method: options.method,
      url: options.url,
      headers: options.headers ?? {},
      remoteAddress: options.from ?? ip,
      ...(options.payload === undefined ? {} : { payload: options.payload as object }),
    });
  const quoteRes = (body: unknown, headers?: Record<string, string>) =>
    inject({ method: 'POST', url: PATH, payload: body, headers });
  const quote = async (body: unknown): Promise<Quote> => {
    const res = await quoteRes(body);
    assert.equal(res.statusCode, 201, res.body);
    return res.json().data;
  };
  const state = async (vault: string) => {
    const res = await inject({ method: 'GET', url: `${PATH}/${vault}` });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().data;
  };
  const ops = async (url: string, payload?: unknown) =>
    platform.app('deposits').inject({
      method: 'POST',
      url,
      headers: { authorization: platform.operatorAuth },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const transfer = async (vaultAddress: string, amount: string, kind: 'plain' | 'gasless' = 'plain') => {
    const res = await ops('/_ops/chain/transfers', { vaultAddress, from: addr(), amount, kind });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().data;
  };
  const issueKey = async (payload: object = {}) => {
    const res = await ops('/_ops/keys', payload);
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as { id: number; key: string };
  };
  const quoteRow = async (vault: string) => {
    const { rows } = await platform.booted.database.pool.query(
      'select id, nonce, salt, status from deposits.quotes where vault_address = $1',
      [vault.toLowerCase()],
    );
    assert.equal(rows.length, 1);
    return rows[0] as { id: string | number; nonce: `0x${string}`; salt: string; status: string };
  };
  const settleRefund = async (vault: string) => {
    const { id } = await quoteRow(vault);
    await platform.booted.tasks['deposits:settle-refund']!({ quoteId: Number(id) }, {} as never);
  };
  /** An unknown vault: a cheap request that passes authentication and the rate limit, then answers 404. */
  const probe = (headers: Record<string, string> = {}, from?: string) =>
    inject({ method: 'GET', url: `${PATH}/0x${'7'.repeat(40)}`, headers, from });
  const body = () => ({
    sourceChainId: 8453,
    amount: '25000000',
    recipient: addr(),
    depositor: addr(),
    refundRecipient: addr(),
  });

  before(async () => {
    platform = await startTestPlatform({ services: [depositsService], clock });
  });
  after(async () => platform?.close());

  describe('repeats: the same request means every parameter', () => {
    test('a change of depositor, refundRecipient, recipient or sourceChainId alone gets a new quote', async () => {
      clock.set(START);
      const b = body();
      const first = await quote(b);
      assert.deepEqual(await quote(b), first, 'the identical request repeats its quote');
      const variants = {
        depositor: { ...b, depositor: addr() },
        refundRecipient: { ...b, refundRecipient: addr() },
        recipient: { ...b, recipient: addr() },
        sourceChainId: { ...b, sourceChainId: 1 },
        amount: { ...b, amount: '25000001' },
      };
      const seen = new Set([first.vaultAddress]);
      for (const [field, variant] of Object.entries(variants)) {
        const q = await quote(variant);
        assert.ok(!seen.has(q.vaultAddress), `a request differing only in ${field} gets a new vault address`);
        seen.add(q.vaultAddress);
        assert.deepEqual(await quote(variant), q, `the ${field} variant repeats its own quote`);
      }
      assert.deepEqual(await quote(b), first, 'the first quote is still pending and repeated');
    });
  });

  describe('the vault address', () => {
    test('equals CREATE2(factory, salt of the quote parameters, init code hash), recomputed with viem', async () => {
      clock.set(START + 1234);
      const b = body();
      const q = await quote(b);
      const { nonce, salt: storedSalt } = await quoteRow(q.vaultAddress);
      assert.match(nonce, /^0x[0-9a-f]{64}$/);
      const salt = documentedSalt(b, b.refundRecipient, q.deadline, nonce);
      assert.equal(storedSalt, salt);
      const expected = getContractAddress({
        opcode: 'CREATE2',
        from: FACTORY,
        salt,
        bytecodeHash: INIT_CODE_HASH,
      });
      assert.equal(q.vaultAddress, expected);
      // EIP-1014 by hand: keccak256(0xff ++ factory ++ salt ++ initCodeHash)[12:].
      const raw = `0x${keccak256(concat(['0xff', FACTORY, salt, INIT_CODE_HASH])).slice(26)}`;
      assert.equal(q.vaultAddress.toLowerCase(), raw);
    });

    test('the default refund address is the depositor in the salt', async () => {
      clock.set(START);
      const { refundRecipient: _omitted, ...b } = body();
      const q = await quote(b);
      const { nonce } = await quoteRow(q.vaultAddress);
      const salt = documentedSalt(b, b.depositor, q.deadline, nonce);
      assert.equal(
        q.vaultAddress,
        getContractAddress({ opcode: 'CREATE2', from: FACTORY, salt, bytecodeHash: INIT_CODE_HASH }),
      );
    });

    test('is EIP-55 checksummed: equal to its own checksum (POST and GET)', async () => {
      clock.set(START);
      for (let i = 0; i < 5; i++) {
        const q = await quote(body());
        assert.equal(q.vaultAddress, checksumAddress(q.vaultAddress as `0x${string}`));
        assert.equal(q.vaultAddress, getAddress(q.vaultAddress));
        const s = await state(q.vaultAddress.toLowerCase());
        assert.equal(s.vaultAddress, q.vaultAddress);
        for (const field of ['recipient', 'depositor', 'refundRecipient'] as const) {
          assert.equal(s[field], checksumAddress(s[field]));
        }
      }
    });
  });

  describe('concurrent identical requests', () => {
    test('20 at once, 5 rounds: every answer 201 with one address, one stored quote per round', async () => {
      clock.set(START);
      for (let round = 0; round < 5; round++) {
        const b = body();
        const answers = await Promise.all(Array.from({ length: 20 }, () => quoteRes(b)));
        for (const r of answers) assert.equal(r.statusCode, 201, r.body);
        assert.equal(new Set(answers.map((r) => r.json().data.vaultAddress)).size, 1);
        const { rows } = await platform.booted.database.pool.query(
          'select count(*)::int as n from deposits.quotes where recipient = $1',
          [b.recipient],
        );
        assert.equal(rows[0].n, 1, `round ${round}: exactly one stored quote`);
      }
    });
  });

  describe('keys and rate limits', () => {
    test('GET of a deposit address with an unknown key is 401 invalid-api-key', async () => {
      clock.set(START);
      const q = await quote(body());
      const res = await inject({
        method: 'GET',
        url: `${PATH}/${q.vaultAddress}`,
        headers: { 'x-api-key': 'dpk_unknown' },
      });
      assert.equal(res.statusCode, 401);
      assert.deepEqual(res.json(), { statusCode: 401, message: 'invalid-api-key', error: 'Unauthorized' });
    });

    test('two keys are counted separately', async () => {
      clock.set(START + 10 * 3_600_000);
      const a = await issueKey({ rateLimitPerMinute: 2 });
      const b = await issueKey({ rateLimitPerMinute: 2 });
      assert.equal((await probe({ 'x-api-key': a.key })).statusCode, 404);
      assert.equal((await probe({ 'x-api-key': a.key })).statusCode, 404);
      const limited = await probe({ 'x-api-key': a.key });
      assert.equal(limited.statusCode, 429);
      assert.ok(limited.headers['retry-after']);
      assert.equal((await probe({ 'x-api-key': b.key })).statusCode, 404, 'key b has its own budget');
      assert.equal((await probe({ 'x-api-key': b.key })).statusCode, 404);
      assert.equal((await probe({ 'x-api-key': b.key })).statusCode, 429);
    });

    test('a key and the anonymous address are counted separately, both ways; anonymous 429 has Retry-After', async () => {
      clock.set(START + 11 * 3_600_000);
      const key = await issueKey({ rateLimitPerMinute: 1 });
      assert.equal((await probe({ 'x-api-key': key.key })).statusCode, 404);
      assert.equal((await probe({ 'x-api-key': key.key })).statusCode, 429);
      assert.equal((await probe()).statusCode, 404, 'the exhausted key does not use up the address');

      const other = await issueKey({ rateLimitPerMinute: 5 });
      clock.advance(15_000);
      for (let i = 1; i < ANONYMOUS_LIMIT; i++) assert.equal((await probe()).statusCode, 404);
      const limited = await probe();
      assert.equal(limited.statusCode, 429);
      assert.equal(limited.headers['retry-after'], '45', 'the window started 15 s ago');
      assert.equal(limited.json().statusCode, 429);
      assert.equal((await probe({ 'x-api-key': other.key })).statusCode, 404, 'a key is not the address');
      clock.advance(45_000);
      assert.equal((await probe()).statusCode, 404, 'a new window');
    });

    test('a key without its own rate gets the per-key default (1,200 per minute), not the anonymous limit', async () => {
      assert.equal(readDepositsConfig({}).keyRateLimit, KEY_LIMIT);
      assert.equal(readDepositsConfig({}).anonymousRateLimit, ANONYMOUS_LIMIT);
      clock.set(START + 12 * 3_600_000);
      const key = await issueKey();
      for (let i = 0; i < KEY_LIMIT; i++) {
        const res = await probe({ 'x-api-key': key.key });
        if (res.statusCode !== 404) assert.fail(`request ${i + 1} of ${KEY_LIMIT}: ${res.statusCode}`);
      }
      const limited = await probe({ 'x-api-key': key.key });
      assert.equal(limited.statusCode, 429);
      assert.equal(limited.headers['retry-after'], '60');
    });

    test('failed key authentication counts against the client address: past its limit, 429 with Retry-After', async () => {
      clock.set(START + 13 * 3_600_000);
      const valid = await issueKey();
      const revoked = await issueKey();
      assert.equal((await ops(`/_ops/keys/${revoked.id}/revoke`)).statusCode, 200);
      for (let i = 0; i < ANONYMOUS_LIMIT; i++) {
        const res = await probe({ 'x-api-key': i % 2 ? revoked.key : `dpk_guess${i}` });
        assert.equal(res.statusCode, 401, `attempt ${i + 1}`);
        assert.deepEqual(res.json(), { statusCode: 401, message: 'invalid-api-key', error: 'Unauthorized' });
      }
      clock.advance(20_000);
      const limited = await probe({ 'x-api-key': 'dpk_guess-more' });
      assert.equal(limited.statusCode, 429);
      assert.equal(limited.headers['retry-after'], '40');
      assert.equal((await quoteRes(body(), { 'x-api-key': revoked.key })).statusCode, 429);
      assert.equal(
        (await probe()).statusCode,
        429,
        'failed keys and anonymous calls share the address budget',
      );
      assert.equal(
        (await probe({ 'x-api-key': valid.key })).statusCode,
        404,
        'a valid key has its own budget',
      );
      assert.equal(
        (await probe({ 'x-api-key': 'dpk_elsewhere' }, '10.255.255.1')).statusCode,
        401,
        'another address has its own budget',
      );
      clock.advance(40_000);
      assert.equal((await probe({ 'x-api-key': 'dpk_guess-again' })).statusCode, 401, 'a new window');
    });
  });

  describe('the vault after the quote', () => {
    test('funding must arrive strictly before the deadline: a transfer at the deadline does not fund', async () => {
      clock.set(START);
      const q = await quote(body());
      clock.set(q.deadline * 1000);
      const s = await transfer(q.vaultAddress, q.amount);
      assert.equal(s.status, 'EXPIRED_UNFUNDED');
      assert.equal(s.receivedAmount, '0');
      assert.equal(s.fundedAt, null);
      await platform.runDueJobs();
      const after = await state(q.vaultAddress);
      assert.equal(after.status, 'EXPIRED_UNFUNDED');
      assert.equal(after.refundedAmount, q.amount, 'the late transfer is returned');

      clock.set(START);
      const early = await quote(body());
      clock.set(early.deadline * 1000 - 1);
      const funded = await transfer(early.vaultAddress, early.amount);
      assert.equal(funded.status, 'FUNDING_DETECTED', 'one millisecond before the deadline funds');
    });

    test('a transfer at the deadline, expired by the job, does not fund either', async () => {
      clock.set(START);
      const q = await quote(body());
      await transfer(q.vaultAddress, '1');
      clock.set(q.deadline * 1000);
      // Recorded at the deadline without a read: the expiry job decides.
      const res = await ops('/_ops/chain/transfers', {
        vaultAddress: q.vaultAddress,
        from: addr(),
        amount: q.amount,
      });
      assert.equal(res.statusCode, 200, res.body);
      await platform.booted.tasks['deposits:expire-due']!({}, {} as never);
      await platform.runDueJobs();
      const s = await state(q.vaultAddress);
      assert.equal(s.status, 'EXPIRED_UNFUNDED');
      assert.equal(s.receivedAmount, '1');
      assert.equal(s.refundedAmount, (BigInt(q.amount) + 1n).toString());
    });

    test('transfers[] shows the kind of each transfer (plain or gasless)', async () => {
      clock.set(START);
      const q = await quote(body());
      await transfer(q.vaultAddress, '1000', 'gasless');
      await transfer(q.vaultAddress, '2000', 'plain');
      const s = await state(q.vaultAddress);
      assert.deepEqual(
        s.transfers.map((t: { direction: string; kind: string; amount: string }) => [
          t.direction,
          t.kind,
          t.amount,
        ]),
        [
          ['in', 'gasless', '1000'],
          ['in', 'plain', '2000'],
        ],
      );
    });

    test('EXPIRED_UNFUNDED: the partial funding goes to the explicit refundRecipient, not the depositor', async () => {
      clock.set(START);
      const b = body();
      const q = await quote(b);
      await transfer(q.vaultAddress, '1000000');
      clock.set(q.deadline * 1000);
      await platform.booted.tasks['deposits:expire-due']!({}, {} as never);
      await platform.runDueJobs();
      const s = await state(q.vaultAddress);
      assert.equal(s.status, 'EXPIRED_UNFUNDED');
      const refunds = s.transfers.filter((t: { direction: string }) => t.direction === 'out');
      assert.equal(refunds.length, 1);
      assert.equal(refunds[0].to, getAddress(b.refundRecipient));
      assert.notEqual(refunds[0].to, getAddress(b.depositor));
      assert.equal(refunds[0].amount, '1000000');
    });

    test('a transfer into a closed vault is refunded; running the refund job twice sends nothing twice', async () => {
      clock.set(START);
      const b = body();
      const q = await quote(b);
      await transfer(q.vaultAddress, q.amount);
      await platform.runDueJobs();
      await platform.runDueJobs();
      assert.equal((await state(q.vaultAddress)).status, 'PUBLISHED');
      assert.equal((await state(q.vaultAddress)).refundedAmount, '0');

      const late = await transfer(q.vaultAddress, '777');
      assert.equal(late.status, 'PUBLISHED');
      await platform.runDueJobs();
      assert.equal((await state(q.vaultAddress)).refundedAmount, '777', 'the refund job was queued and ran');
      await platform.runDueJobs();
      await settleRefund(q.vaultAddress);
      await settleRefund(q.vaultAddress);
      const s = await state(q.vaultAddress);
      const refunds = s.transfers.filter((t: { direction: string }) => t.direction === 'out');
      assert.equal(refunds.length, 1, 'one refund, however often the job runs');
      assert.equal(refunds[0].amount, '777');
      assert.equal(refunds[0].to, getAddress(b.refundRecipient));
      assert.equal(s.refundedAmount, '777');

      // An expired vault: the same.
      const e = await quote(body());
      clock.set(e.deadline * 1000 + 1000);
      assert.equal((await state(e.vaultAddress)).status, 'EXPIRED_UNFUNDED');
      await transfer(e.vaultAddress, '5');
      await platform.runDueJobs();
      assert.equal((await state(e.vaultAddress)).refundedAmount, '5', 'the refund job was queued and ran');
      await settleRefund(e.vaultAddress);
      await settleRefund(e.vaultAddress);
      await platform.runDueJobs();
      const es = await state(e.vaultAddress);
      assert.equal(es.refundedAmount, '5');
      assert.equal(es.transfers.filter((t: { direction: string }) => t.direction === 'out').length, 1);
    });
  });
});
