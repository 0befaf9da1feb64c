/**
 * The authentication contract of every route of every service, generated from each service's OpenAPI document (its
 * `security` requirements and `securitySchemes`), so services added later are covered without code here.
 *
 * For every operation that requires a credential: a missing, a malformed, an unknown and a revoked credential are
 * each answered 401, before the request is validated (no path parameter or body here is valid). A positive control
 * makes sure the credential is sent where the service reads it: with a valid credential the same request is not a
 * 401. An operation whose requirements include `{}` accepts anonymous callers, so only a missing credential passes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { ServiceApp } from '../src/platform/http.ts';
import { AUTH_FAILURES_PER_MINUTE } from '../src/platform/rate-limit.ts';
import { implementedServices } from '../src/services/index.ts';
import {
  errorBodySchemaOf,
  isBasicScheme,
  type OpenApi,
  type Operation,
  openApiOf,
  operationsOf,
  type Scheme,
  seededBasicCredentials,
  seededKeys,
  withCredential,
} from './support/openapi.ts';
import { startTestPlatform } from './support/platform.ts';

/** The service's documented error body, compiled. */
function errorBody(doc: OpenApi) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  return ajv.compile(errorBodySchemaOf(doc));
}

/** Every operation of `doc` that names a credential. */
function securedOperations(doc: OpenApi): (Operation & { scheme: string })[] {
  return operationsOf(doc).filter((op): op is Operation & { scheme: string } => op.scheme !== undefined);
}

/** A concrete URL for an OpenAPI path: every parameter gets a value that matches no resource. */
function urlOf(path: string): string {
  return path.replace(/\{[^}]+\}/g, 'zz-not-a-resource');
}

/** The same secret with its last character changed: of the right form, never issued (for `user:password`, the password). */
function unknownLike(key: string): string {
  return `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`;
}

let clients = 0;

/**
 * The request of `op` with the credential `value`, each from a client address of its own (198.18.0.0/15, for
 * testing): the platform refuses an address after 30 failed authentications a minute, which this test would reach.
 */
async function call(app: ServiceApp, op: Operation, scheme: Scheme, value: string | undefined) {
  const { url, headers } = withCredential(scheme, urlOf(op.path), value);
  clients += 1;
  const remoteAddress = `198.18.${Math.floor(clients / 256) % 256}.${clients % 256}`;
  return app.inject({ method: op.method as 'GET', url, headers, remoteAddress });
}

describe('auth contract: every operation states who may call it', () => {
  test('each operation of each service declares `security` (public ones `[]`), as OpenAPI linters require', async () => {
    const platform = await startTestPlatform({ services: [...implementedServices] });
    try {
      const undeclared: string[] = [];
      for (const service of implementedServices) {
        const doc = await openApiOf(platform, service.name);
        for (const [path, operations] of Object.entries(doc.paths))
          for (const [method, op] of Object.entries(operations))
            if (!Array.isArray(op.security))
              undeclared.push(`${service.name} ${method.toUpperCase()} ${path}`);
      }
      assert.deepEqual(undeclared, []);
    } finally {
      await platform.close();
    }
  });
});

describe('auth contract: every secured route of every service (from its OpenAPI document)', () => {
  for (const service of implementedServices) {
    test(`${service.name}: missing, malformed, unknown and revoked credentials are 401 on every secured route`, async () => {
      const platform = await startTestPlatform({ services: [service] });
      try {
        const app = platform.app(service.name);
        const doc = await openApiOf(platform, service.name);
        const operations = securedOperations(doc);
        assert.ok(
          operations.some((op) => op.scheme !== 'operatorToken'),
          'the service has public secured routes',
        );
        const keys = await seededKeys(platform, service.name);
        assert.ok(keys.length > 0, 'the first start seeded a key');
        // A basic scheme (an OAuth token endpoint's client authentication) is probed with seeded `user:password` pairs.
        const basic = seededBasicCredentials(platform, service.name, keys).map((b) => b.value);
        const credentialsOf = (name: string, scheme: Scheme) =>
          name === 'operatorToken'
            ? [platform.operatorAuth.slice(7)]
            : isBasicScheme(scheme)
              ? basic
              : keys.map((k) => k.key);
        const failures: string[] = [];
        const expect = (op: Operation, what: string, status: number, wanted: 'is 401' | 'is not 401') => {
          if ((status === 401) !== (wanted === 'is 401'))
            failures.push(`${op.method} ${op.path} with ${what}: ${status}`);
        };

        for (const op of operations) {
          const scheme = doc.components.securitySchemes[op.scheme]!;
          const valid = credentialsOf(op.scheme, scheme);
          assert.ok(
            valid.length > 0,
            `${op.method} ${op.path}: the first start seeded a ${op.scheme} credential`,
          );
          const statuses = await Promise.all(
            valid.map(async (v) => (await call(app, op, scheme, v)).statusCode),
          );
          expect(
            op,
            'a valid credential (positive control)',
            statuses.some((s) => s !== 401) ? 200 : 401,
            'is not 401',
          );
          const missing = (await call(app, op, scheme, undefined)).statusCode;
          expect(op, 'no credential', missing, op.anonymousAllowed ? 'is not 401' : 'is 401');
          expect(
            op,
            'a malformed credential',
            (await call(app, op, scheme, 'not~a~key')).statusCode,
            'is 401',
          );
          expect(
            op,
            'an unknown credential',
            (await call(app, op, scheme, unknownLike(valid[0]!))).statusCode,
            'is 401',
          );
        }

        for (const { revokeUrl } of keys) {
          const revoked = await app.inject({
            method: 'POST',
            url: revokeUrl,
            headers: { authorization: platform.operatorAuth },
          });
          assert.equal(revoked.statusCode, 200, revoked.body);
        }
        for (const op of operations.filter((o) => o.scheme !== 'operatorToken')) {
          const scheme = doc.components.securitySchemes[op.scheme]!;
          for (const value of credentialsOf(op.scheme, scheme))
            expect(op, 'a revoked credential', (await call(app, op, scheme, value)).statusCode, 'is 401');
        }
        assert.deepEqual(failures, []);
      } finally {
        await platform.close();
      }
    });
  }

  test(`failed authentications are counted per client address: past ${AUTH_FAILURES_PER_MINUTE} a minute, 429 in each service's format`, async () => {
    // deposits counts failed keys in its own per-address budget (its tests cover it).
    for (const service of implementedServices.filter((s) => s.platformAuthFailureLimit !== false)) {
      const platform = await startTestPlatform({ services: [service] });
      try {
        const app = platform.app(service.name);
        const doc = await openApiOf(platform, service.name);
        const op = securedOperations(doc).find((o) => o.scheme !== 'operatorToken')!;
        const scheme = doc.components.securitySchemes[op.scheme]!;
        const key = (await seededKeys(platform, service.name))[0]!.key;
        const from = (remoteAddress: string, value: string) => {
          const { url, headers } = withCredential(scheme, urlOf(op.path), value);
          return app.inject({ method: op.method as 'GET', url, headers, remoteAddress });
        };
        for (let i = 0; i < AUTH_FAILURES_PER_MINUTE; i++)
          assert.equal(
            (await from('203.0.113.7', unknownLike(key))).statusCode,
            401,
            `${service.name} #${i}`,
          );
        // That address is refused now, even with a valid key; another address is not.
        const refused = await from('203.0.113.7', key);
        assert.equal(refused.statusCode, 429, `${service.name}: ${refused.body}`);
        assert.ok(Number(refused.headers['retry-after']) >= 1);
        assert.ok(errorBody(doc)(refused.json()), `${service.name}: ${refused.body}`);
        assert.notEqual((await from('203.0.113.8', key)).statusCode, 429);
        assert.equal((await app.inject({ url: '/healthz', remoteAddress: '203.0.113.7' })).statusCode, 200);
      } finally {
        await platform.close();
      }
    }
  });
});
