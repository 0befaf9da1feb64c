import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestPlatform, type TestPlatform } from '../../../../test/support/platform.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { depositsService } from '../index.ts';

const START = Date.UTC(2026, 0, 1, 12, 0, 0);
const PATH = '/v1/stablecoin-gateway/deposit-addresses';
const TTL = 1800;
let seq = 0;
/** A fresh lowercase address per call, so tests never share quotes. */
const addr = () => `0x${(++seq).toString(16).padStart(40, '0')}`;

describe('deposits: /v1/stablecoin-gateway/deposit-addresses', () => {
  const clock = new ManualClock(START);
  let platform: TestPlatform;

  const quote = (body: unknown, headers: Record<string, string> = {}) =>
    platform.app('deposits').inject({ method: 'POST', url: PATH, payload: body as object, headers });
  const state = async (vault: string) => {
    const res = await platform.app('deposits').inject({ method: 'GET', url: `${PATH}/${vault}` });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().data;
  };
  const ops = (method: 'POST' | 'PUT', url: string, payload?: unknown) =>
    platform
      .app('deposits')
      .inject({ method, url, headers: { authorization: platform.operatorAuth }, payload: payload as object });
  const transfer = async (vaultAddress: string, amount: string, kind: 'plain' | 'gasless' = 'plain') => {
    const res = await ops('POST', '/_ops/chain/transfers', { vaultAddress, from: addr(), amount, kind });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().data;
  };
  const body = () => ({ sourceChainId: 8453, amount: '25000000', recipient: addr(), depositor: addr() });

  before(async () => {
    platform = await startTestPlatform({ services: [depositsService], clock });
  });
  after(async () => platform?.close());

  describe('quotes', () => {
    test('201 {data: {vaultAddress, amount, deadline}}: EIP-55 address, amount echoed, deadline in Unix seconds', async () => {
      clock.set(START);
      const res = await quote(body());
      assert.equal(res.statusCode, 201, res.body);
      const { data } = res.json();
      assert.deepEqual(Object.keys(data).sort(), ['amount', 'deadline', 'vaultAddress']);
      assert.match(data.vaultAddress, /^0x[0-9a-fA-F]{40}$/);
      assert.notEqual(data.vaultAddress, data.vaultAddress.toLowerCase());
      assert.equal(data.amount, '25000000');
      assert.equal(data.deadline, START / 1000 + TTL);
    });

    test('the same request while pending and unexpired returns the same quote; after the deadline a new one', async () => {
      clock.set(START);
      const b = body();
      const first = (await quote(b)).json().data;
      clock.advance(10 * 60_000);
      const again = (await quote({ ...b, recipient: b.recipient.toUpperCase().replace('0X', '0x') })).json()
        .data;
      assert.deepEqual(again, first, 'same address, amount and deadline (address case does not matter)');
      const other = (await quote({ ...b, amount: '25000001' })).json().data;
      assert.notEqual(other.vaultAddress, first.vaultAddress, 'another amount is another request');
      const explicitRefund = (await quote({ ...b, refundRecipient: b.depositor })).json().data;
      assert.deepEqual(explicitRefund, first, 'refundRecipient defaulting to depositor is the same request');

      clock.set((first.deadline - 1) * 1000);
      assert.deepEqual((await quote(b)).json().data, first, 'one second before the deadline: still the same');
      clock.set(first.deadline * 1000);
      const renewed = (await quote(b)).json().data;
      assert.notEqual(renewed.vaultAddress, first.vaultAddress, 'at the deadline: a new quote');
      assert.equal(renewed.deadline, first.deadline + TTL);
      assert.equal((await state(first.vaultAddress)).status, 'EXPIRED_UNFUNDED');
    });

    test('concurrent identical requests get one quote', async () => {
      clock.set(START);
      const b = body();
      const answers = await Promise.all(Array.from({ length: 12 }, () => quote(b)));
      assert.ok(answers.every((r) => r.statusCode === 201));
      const addresses = new Set(answers.map((r) => r.json().data.vaultAddress));
      assert.equal(addresses.size, 1);
      const rows = await platform.booted.database.pool.query(
        'select count(*)::int as n from deposits.quotes where recipient = $1',
        [b.recipient],
      );
      assert.equal(rows.rows[0].n, 1);
    });

    test('a funded quote is no longer pending: the same request then gets a new quote', async () => {
      clock.set(START);
      const b = body();
      const first = (await quote(b)).json().data;
      await transfer(first.vaultAddress, '25000000');
      const second = (await quote(b)).json().data;
      assert.notEqual(second.vaultAddress, first.vaultAddress);
    });
  });

  describe('validation and errors', () => {
    test('400 with validationErrors for every failing field at once; nothing is created', async () => {
      const before = await platform.booted.database.pool.query(
        'select count(*)::int as n from deposits.quotes',
      );
      const res = await quote({
        sourceChainId: 0,
        amount: '1.5',
        recipient: '0x12',
        depositor: 'nope',
        refundRecipient: 5,
      });
      assert.equal(res.statusCode, 400);
      const b = res.json();
      assert.equal(b.statusCode, 400);
      assert.equal(b.message, 'Validation failed');
      assert.deepEqual(Object.keys(b.validationErrors).sort(), [
        'amount',
        'depositor',
        'recipient',
        'refundRecipient',
        'sourceChainId',
      ]);
      assert.ok(b.validationErrors.amount.every((m: unknown) => typeof m === 'string'));
      const after = await platform.booted.database.pool.query(
        'select count(*)::int as n from deposits.quotes',
      );
      assert.equal(after.rows[0].n, before.rows[0].n);
    });

    test('uint256 bounds: 2^256 - 1 is accepted, 2^256 refused', async () => {
      clock.set(START);
      const max = ((1n << 256n) - 1n).toString();
      const ok = await quote({ ...body(), amount: max });
      assert.equal(ok.statusCode, 201);
      assert.equal(ok.json().data.amount, max);
      const over = await quote({ ...body(), amount: (1n << 256n).toString() });
      assert.equal(over.statusCode, 400);
      assert.ok(over.json().validationErrors.amount);
    });

    test('an unconfigured source chain is a business error with details', async () => {
      const res = await quote({ ...body(), sourceChainId: 56 });
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().details.errorCode, 'UNSUPPORTED_SOURCE_CHAIN');
      assert.equal(typeof res.json().details.errorDesc, 'string');
    });

    test('invalid JSON and unknown vaults answer in the service body', async () => {
      const bad = await platform.app('deposits').inject({
        method: 'POST',
        url: PATH,
        payload: '{"amount":',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.json().statusCode, 400);
      const missing = await platform
        .app('deposits')
        .inject({ method: 'GET', url: `${PATH}/0x${'9'.repeat(40)}` });
      assert.equal(missing.statusCode, 404);
      assert.deepEqual(Object.keys(missing.json()).sort(), ['error', 'message', 'statusCode']);
      const garbage = await platform.app('deposits').inject({ method: 'GET', url: `${PATH}/not-an-address` });
      assert.equal(garbage.statusCode, 404);
    });
  });

  describe('API keys (optional; header x-api-key)', () => {
    const issue = async (payload: object = {}) => {
      const res = await ops('POST', '/_ops/keys', payload);
      assert.equal(res.statusCode, 201, res.body);
      return res.json() as { id: number; key: string };
    };

    test('no key is fine; a valid v1 key is fine; unknown, revoked or not-v1 keys get 401 invalid-api-key', async () => {
      clock.set(START);
      assert.equal((await quote(body())).statusCode, 201);
      const key = await issue();
      assert.match(key.key, /^dpk_/);
      assert.equal((await quote(body(), { 'x-api-key': key.key })).statusCode, 201);
      const expect401 = async (headers: Record<string, string>) => {
        const res = await quote(body(), headers);
        assert.equal(res.statusCode, 401);
        assert.equal(res.json().message, 'invalid-api-key');
      };
      await expect401({ 'x-api-key': 'dpk_unknown' });
      await expect401({ 'x-api-key': '' });
      const v2only = await issue({ versions: ['v2'] });
      await expect401({ 'x-api-key': v2only.key });
      assert.equal((await ops('POST', `/_ops/keys/${key.id}/revoke`)).statusCode, 200);
      await expect401({ 'x-api-key': key.key });
      const seeded = platform.credentials('deposits').apiKey as string;
      assert.equal(
        (await quote(body(), { 'x-api-key': seeded })).statusCode,
        201,
        'the first start key is v1-enabled',
      );
    });

    test('429 with Retry-After per key, and per client address without a key; the window resets', async () => {
      clock.set(START + 3_600_000);
      const key = await issue({ rateLimitPerMinute: 2 });
      assert.equal((await quote(body(), { 'x-api-key': key.key })).statusCode, 201);
      assert.equal((await quote(body(), { 'x-api-key': key.key })).statusCode, 201);
      const limited = await quote(body(), { 'x-api-key': key.key });
      assert.equal(limited.statusCode, 429);
      assert.equal(limited.headers['retry-after'], '60');
      assert.equal(limited.json().statusCode, 429);
      clock.advance(60_000);
      assert.equal((await quote(body(), { 'x-api-key': key.key })).statusCode, 201);

      // Anonymous callers share their address's budget (120 per minute by default).
      clock.set(START + 7_200_000);
      let lastStatus = 0;
      let allowed = 0;
      for (let i = 0; i < 121; i++) {
        lastStatus = (
          await platform.app('deposits').inject({ method: 'GET', url: `${PATH}/0x${'9'.repeat(40)}` })
        ).statusCode;
        if (lastStatus === 404) allowed++;
      }
      assert.equal(allowed, 120);
      assert.equal(lastStatus, 429);
    });
  });

  describe('the vault after the quote (chain simulator)', () => {
    test('PENDING -> FUNDING_DETECTED (amount reached before the deadline, in parts) -> PUBLISHED', async () => {
      clock.set(START);
      const q = (await quote(body())).json().data;
      assert.equal((await state(q.vaultAddress)).status, 'PENDING');
      clock.advance(60_000);
      const partial = await transfer(q.vaultAddress, '10000000', 'gasless');
      assert.equal(partial.status, 'PENDING');
      assert.equal(partial.receivedAmount, '10000000');
      const funded = await transfer(q.vaultAddress, '15000000');
      assert.equal(funded.status, 'FUNDING_DETECTED');
      assert.equal(funded.fundedAt, new Date(START + 60_000).toISOString());
      await platform.runDueJobs();
      const published = await state(q.vaultAddress);
      assert.equal(published.status, 'PUBLISHED');
      assert.match(published.publishTxHash, /^0x[0-9a-f]{64}$/);
      assert.equal(published.refundedAmount, '0');
    });

    test('an overfunded vault publishes amount and refunds the excess to the refund address', async () => {
      clock.set(START);
      const b = { ...body(), refundRecipient: addr() };
      const q = (await quote(b)).json().data;
      await transfer(q.vaultAddress, '25000007');
      await platform.runDueJobs();
      await platform.runDueJobs();
      const s = await state(q.vaultAddress);
      assert.equal(s.status, 'PUBLISHED');
      assert.equal(s.refundedAmount, '7');
      const refund = s.transfers.find((t: { direction: string }) => t.direction === 'out');
      assert.equal(refund.to.toLowerCase(), b.refundRecipient);
      assert.equal(refund.kind, 'refund');
    });

    test('unfunded at the deadline: EXPIRED_UNFUNDED (by the job), the partial funding refunded', async () => {
      clock.set(START);
      const q = (await quote(body())).json().data;
      await transfer(q.vaultAddress, '1000000');
      clock.set(q.deadline * 1000 - 1);
      await platform.booted.tasks['deposits:expire-due']!({}, {} as never);
      assert.equal(
        (
          await platform.booted.database.pool.query(
            'select status from deposits.quotes where vault_address = $1',
            [q.vaultAddress.toLowerCase()],
          )
        ).rows[0].status,
        'PENDING',
      );
      clock.set(q.deadline * 1000);
      await platform.booted.tasks['deposits:expire-due']!({}, {} as never);
      await platform.runDueJobs();
      const s = await state(q.vaultAddress);
      assert.equal(s.status, 'EXPIRED_UNFUNDED');
      assert.equal(s.refundedAmount, '1000000');
    });

    test('a transfer after the deadline does not fund the vault; it is returned', async () => {
      clock.set(START);
      const q = (await quote(body())).json().data;
      clock.set(q.deadline * 1000 + 5_000);
      await transfer(q.vaultAddress, '25000000');
      await platform.runDueJobs();
      const s = await state(q.vaultAddress);
      assert.equal(s.status, 'EXPIRED_UNFUNDED');
      assert.equal(s.receivedAmount, '0');
      await platform.runDueJobs();
      assert.equal((await state(q.vaultAddress)).refundedAmount, '25000000');
    });

    test('a failed destination deposit: FAILED and everything refunded', async () => {
      clock.set(START);
      assert.equal((await ops('PUT', '/_ops/chain/simulation', { failPublishes: true })).statusCode, 200);
      try {
        const q = (await quote(body())).json().data;
        await transfer(q.vaultAddress, '25000000');
        await platform.runDueJobs();
        await platform.runDueJobs();
        const s = await state(q.vaultAddress);
        assert.equal(s.status, 'FAILED');
        assert.match(s.failureReason, /simulated/);
        assert.equal(s.refundedAmount, '25000000');
      } finally {
        await ops('PUT', '/_ops/chain/simulation', { failPublishes: false });
      }
    });

    test('the depositor reclaims a pending vault: REFUNDED_BY_USER; final states refuse it', async () => {
      clock.set(START);
      const q = (await quote(body())).json().data;
      await transfer(q.vaultAddress, '5');
      const res = await ops('POST', `/_ops/vaults/${q.vaultAddress}/user-refund`);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().data.status, 'REFUNDED_BY_USER');
      await platform.runDueJobs();
      assert.equal((await state(q.vaultAddress)).refundedAmount, '5');
      const again = await ops('POST', `/_ops/vaults/${q.vaultAddress}/user-refund`);
      assert.equal(again.statusCode, 409);
    });

    test('a known transaction hash is not recorded twice', async () => {
      clock.set(START);
      const q = (await quote(body())).json().data;
      const txHash = `0x${'ab'.repeat(32)}`;
      const first = await ops('POST', '/_ops/chain/transfers', {
        vaultAddress: q.vaultAddress,
        from: addr(),
        amount: '1',
        txHash,
      });
      assert.equal(first.statusCode, 200);
      const dup = await ops('POST', '/_ops/chain/transfers', {
        vaultAddress: q.vaultAddress,
        from: addr(),
        amount: '1',
        txHash,
      });
      assert.equal(dup.statusCode, 409);
      assert.equal((await state(q.vaultAddress)).receivedAmount, '1');
    });
  });

  test('OpenAPI: every route documented; the key header named', async () => {
    const doc = (await platform.app('deposits').inject({ method: 'GET', url: '/openapi.json' })).json();
    assert.equal(
      doc.paths['/v1/stablecoin-gateway/deposit-addresses'].post.operationId,
      'createDepositAddress',
    );
    assert.equal(doc.components.securitySchemes.apiKey.name, 'x-api-key');
  });
});
