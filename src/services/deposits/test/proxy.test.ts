/**
 * The per-client-address rate limit behind a reverse proxy (platform `TRUST_PROXY`): with the proxy trusted, each
 * client forwarded through it has its own budget; without it, everything arriving through the proxy is one client,
 * and a client cannot buy a fresh budget by forging `X-Forwarded-For`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestPlatform, type TestPlatform } from '../../../../test/support/platform.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { depositsService } from '../index.ts';

const UNKNOWN_VAULT = `/v1/stablecoin-gateway/deposit-addresses/0x${'7'.repeat(40)}`;
const PROXY = '10.1.1.1';

for (const trusted of [true, false]) {
  describe(`deposits: client addresses with the proxy ${trusted ? '' : 'not '}trusted`, () => {
    let platform: TestPlatform;
    before(async () => {
      platform = await startTestPlatform({
        services: [depositsService],
        clock: new ManualClock(Date.UTC(2026, 0, 1)),
        env: { DEPOSITS_ANONYMOUS_RATE_LIMIT: '2', ...(trusted ? { TRUST_PROXY: '10.0.0.0/8' } : {}) },
      });
    });
    after(() => platform?.close());
    const probe = (remoteAddress: string, forwardedFor: string) =>
      platform.app('deposits').inject({
        method: 'GET',
        url: UNKNOWN_VAULT,
        remoteAddress,
        headers: { 'x-forwarded-for': forwardedFor },
      });

    test(
      trusted
        ? 'each forwarded client has its own budget; a direct client forging the header does not'
        : 'every client through the proxy shares the proxy address budget',
      async () => {
        assert.equal((await probe(PROXY, '203.0.113.1')).statusCode, 404);
        assert.equal((await probe(PROXY, '203.0.113.1')).statusCode, 404);
        assert.equal((await probe(PROXY, '203.0.113.1')).statusCode, 429);
        assert.equal((await probe(PROXY, '203.0.113.2')).statusCode, trusted ? 404 : 429);
        // A client talking to the service directly and naming someone else in the header is itself.
        assert.equal((await probe('198.51.100.9', '203.0.113.50')).statusCode, 404);
        assert.equal((await probe('198.51.100.9', '203.0.113.51')).statusCode, 404);
        assert.equal((await probe('198.51.100.9', '203.0.113.52')).statusCode, 429);
      },
    );
  });
}
