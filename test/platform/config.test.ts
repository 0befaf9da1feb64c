import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import {
  integerVar,
  loadConfig,
  parseBoolean,
  parseHttpUrl,
  parsePort,
  parseTrustProxy,
} from '../../src/platform/config.ts';
import { ConfigError } from '../../src/platform/errors.ts';

const REGISTRY = [
  { name: 'coins', envPrefix: 'COINS', defaultPort: 4101 },
  { name: 'payments', envPrefix: 'PAYMENTS', defaultPort: 4102 },
  { name: 'odds', envPrefix: 'ODDS', defaultPort: 4103 },
];

function rejects(env: Record<string, string | undefined>, pattern: RegExp, cli = {}) {
  assert.throws(
    () => loadConfig(env, cli, REGISTRY, '/srv/app'),
    (err: unknown) => err instanceof ConfigError && pattern.test(err.message),
  );
}

describe('platform: config (loadConfig and its parsers)', () => {
  test('defaults: all services, registry ports, host 127.0.0.1, role all, data dir under cwd', () => {
    const c = loadConfig({}, {}, REGISTRY, '/srv/app');
    assert.deepEqual(c.services, ['coins', 'payments', 'odds']);
    assert.deepEqual(c.ports, { coins: 4101, payments: 4102, odds: 4103 });
    assert.equal(c.publicUrls.coins, 'http://127.0.0.1:4101');
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.role, 'all');
    assert.equal(c.logLevel, 'info');
    assert.equal(c.dataDir, path.resolve('/srv/app', 'data'));
    assert.equal(c.databaseUrl, undefined);
    assert.equal(c.redisUrl, undefined);
    assert.equal(c.operatorToken, undefined);
    assert.equal(c.outboundAllowPrivate, false);
    assert.equal(c.secretsKey, undefined);
    assert.equal(c.workerConcurrency, 8);
  });

  test('empty or blank variables count as unset', () => {
    const c = loadConfig({ COINS_PORT: '  ', LOG_LEVEL: '', DATA_DIR: '' }, {}, REGISTRY, '/srv/app');
    assert.equal(c.ports.coins, 4101);
    assert.equal(c.logLevel, 'info');
    assert.equal(c.dataDir, '/srv/app/data');
  });

  test('SERVICES (or --services, which wins) selects services and keeps registry order', () => {
    const c = loadConfig({ SERVICES: 'odds, coins' }, {}, REGISTRY);
    assert.deepEqual(c.services, ['coins', 'odds']);
    assert.deepEqual(Object.keys(c.ports), ['coins', 'odds']);
    const cli = loadConfig({ SERVICES: 'odds' }, { services: 'payments' }, REGISTRY);
    assert.deepEqual(cli.services, ['payments']);
  });

  test('unknown or empty service lists are refused', () => {
    rejects({ SERVICES: 'coins,nope' }, /unknown service "nope"/);
    rejects({ SERVICES: ' , ' }, /at least one service/);
  });

  test('--role must be api, worker or all', () => {
    assert.equal(loadConfig({}, { role: 'worker' }, REGISTRY).role, 'worker');
    rejects({}, /--role/, { role: 'both' });
  });

  test('ports: per-service variable, validation, clashes refused', () => {
    assert.equal(loadConfig({ PAYMENTS_PORT: '9000' }, {}, REGISTRY).ports.payments, 9000);
    rejects({ COINS_PORT: '0' }, /COINS_PORT must be a port/);
    rejects({ COINS_PORT: '70000' }, /COINS_PORT/);
    rejects({ COINS_PORT: '80a' }, /COINS_PORT/);
    rejects({ ODDS_PORT: '4101' }, /ODDS_PORT=4101 is already the port of service "coins"/);
  });

  test('public URLs: explicit value without trailing slash; wildcard and IPv6 hosts displayed usably', () => {
    const c = loadConfig({ COINS_PUBLIC_URL: 'https://coins.example.com/' }, {}, REGISTRY);
    assert.equal(c.publicUrls.coins, 'https://coins.example.com');
    assert.equal(loadConfig({ HOST: '0.0.0.0' }, {}, REGISTRY).publicUrls.odds, 'http://127.0.0.1:4103');
    assert.equal(loadConfig({ HOST: '::' }, {}, REGISTRY).publicUrls.odds, 'http://127.0.0.1:4103');
    assert.equal(loadConfig({ HOST: '::1' }, {}, REGISTRY).publicUrls.odds, 'http://[::1]:4103');
    rejects({ COINS_PUBLIC_URL: 'ftp://x' }, /COINS_PUBLIC_URL/);
    rejects({ COINS_PUBLIC_URL: 'not a url' }, /COINS_PUBLIC_URL/);
  });

  test('LOG_LEVEL, HOST, DATABASE_URL, REDIS_URL are validated', () => {
    assert.equal(loadConfig({ LOG_LEVEL: 'DEBUG' }, {}, REGISTRY).logLevel, 'debug');
    rejects({ LOG_LEVEL: 'loud' }, /LOG_LEVEL/);
    rejects({ HOST: 'bad host!' }, /HOST/);
    rejects({ DATABASE_URL: 'mysql://x' }, /DATABASE_URL/);
    rejects({ REDIS_URL: 'http://x' }, /REDIS_URL/);
    const ok = loadConfig(
      { DATABASE_URL: 'postgresql://u@h/db', REDIS_URL: 'rediss://h:6380' },
      {},
      REGISTRY,
    );
    assert.equal(ok.databaseUrl, 'postgresql://u@h/db');
    assert.equal(ok.redisUrl, 'rediss://h:6380');
  });

  test('OPERATOR_TOKEN needs 16 characters of a bearer token; WORKER_CONCURRENCY is 1-100', () => {
    rejects({ OPERATOR_TOKEN: 'short' }, /OPERATOR_TOKEN/);
    rejects({ OPERATOR_TOKEN: 'sixteen chars with spaces' }, /OPERATOR_TOKEN may contain only/);
    assert.equal(loadConfig({ OPERATOR_TOKEN: 'x'.repeat(16) }, {}, REGISTRY).operatorToken, 'x'.repeat(16));
    rejects({ WORKER_CONCURRENCY: '0' }, /WORKER_CONCURRENCY/);
    rejects({ WORKER_CONCURRENCY: '101' }, /WORKER_CONCURRENCY/);
    rejects({ WORKER_CONCURRENCY: '2.5' }, /WORKER_CONCURRENCY/);
    assert.equal(loadConfig({ WORKER_CONCURRENCY: '3' }, {}, REGISTRY).workerConcurrency, 3);
    assert.equal(
      loadConfig({ WORKER_CONCURRENCY: ' ' }, {}, REGISTRY).workerConcurrency,
      8,
      'blank means the default',
    );
  });

  test('SECRETS_KEY: 32 bytes as hex or base64, anything else refused', () => {
    const key = Buffer.alloc(32, 7);
    assert.deepEqual(loadConfig({ SECRETS_KEY: key.toString('hex') }, {}, REGISTRY).secretsKey, key);
    assert.deepEqual(loadConfig({ SECRETS_KEY: key.toString('base64') }, {}, REGISTRY).secretsKey, key);
    rejects({ SECRETS_KEY: Buffer.alloc(16).toString('base64') }, /SECRETS_KEY must be 32 bytes/);
  });

  test('OUTBOUND_ALLOW_PRIVATE is a strict boolean', () => {
    assert.equal(loadConfig({ OUTBOUND_ALLOW_PRIVATE: 'YES' }, {}, REGISTRY).outboundAllowPrivate, true);
    assert.equal(loadConfig({ OUTBOUND_ALLOW_PRIVATE: 'false' }, {}, REGISTRY).outboundAllowPrivate, false);
    rejects({ OUTBOUND_ALLOW_PRIVATE: 'maybe' }, /OUTBOUND_ALLOW_PRIVATE/);
  });

  test('TRUST_PROXY: none by default; a hop count 1-10; addresses, CIDR ranges and proxy-addr names; never "true"', () => {
    assert.equal(loadConfig({}, {}, REGISTRY).trustProxy, false);
    assert.equal(loadConfig({ TRUST_PROXY: 'false' }, {}, REGISTRY).trustProxy, false);
    assert.equal(loadConfig({ TRUST_PROXY: '2' }, {}, REGISTRY).trustProxy, 2);
    assert.deepEqual(
      loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8,2001:db8::1' }, {}, REGISTRY).trustProxy,
      ['loopback', '10.0.0.0/8', '2001:db8::1'],
    );
    rejects({ TRUST_PROXY: 'true' }, /TRUST_PROXY=true would let any client choose its address/);
    rejects({ TRUST_PROXY: '0' }, /TRUST_PROXY hop count must be 1-10/);
    rejects({ TRUST_PROXY: '11' }, /TRUST_PROXY hop count must be 1-10/);
    rejects({ TRUST_PROXY: '10.0.0.0/33' }, /TRUST_PROXY entry "10.0.0.0\/33"/);
    rejects({ TRUST_PROXY: 'proxy.internal' }, /TRUST_PROXY entry "proxy.internal"/);
    rejects({ TRUST_PROXY: '10.0.0.1,,10.0.0.2' }, /TRUST_PROXY entry ""/);
    assert.equal(parseTrustProxy('X', undefined), false);
  });

  test('parsePort, parseBoolean, parseHttpUrl name the variable in their errors', () => {
    assert.equal(parsePort('P', ' 8080 '), 8080);
    assert.equal(parsePort('P', '65535'), 65535);
    assert.throws(() => parsePort('MY_PORT', '-1'), /MY_PORT/);
    assert.equal(parseBoolean('B', '1'), true);
    assert.equal(parseBoolean('B', 'No'), false);
    assert.throws(() => parseBoolean('MY_FLAG', 'on'), /MY_FLAG/);
    assert.equal(parseHttpUrl('U', 'http://a.b/c').href, 'http://a.b/c');
    assert.throws(() => parseHttpUrl('MY_URL', 'file:///etc/passwd'), ConfigError);
  });
});

describe('platform config: integerVar (service settings)', () => {
  test('unset or blank is the fallback; bounds are inclusive; anything but decimal digits is refused', () => {
    assert.equal(integerVar({}, 'X_N', 7, 1, 10), 7);
    assert.equal(integerVar({ X_N: '  ' }, 'X_N', 7, 1, 10), 7);
    assert.equal(integerVar({ X_N: '1' }, 'X_N', 7, 1, 10), 1);
    assert.equal(integerVar({ X_N: ' 10 ' }, 'X_N', 7, 1, 10), 10);
    for (const bad of ['0', '11', '-1', '+5', '2.5', '1e1', '0x5', 'five'])
      assert.throws(
        () => integerVar({ X_N: bad }, 'X_N', 7, 1, 10),
        (err: Error) =>
          err instanceof ConfigError && err.message === `X_N must be an integer 1-10 (got "${bad}")`,
        bad,
      );
  });
});
