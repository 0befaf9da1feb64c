/**
 * Test support for the pricing service: boots it alone on a fresh database (it is registered here, not through
 * src/services/index.ts) and gives short helpers for the public and operator APIs.
 */
import assert from 'node:assert/strict';
import { startTestPlatform, type TestPlatform } from '../../../../test/support/platform.ts';
import type { Clock } from '../../../platform/clock.ts';
import { pricingService } from '../index.ts';

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** The answer of an inject call (light-my-request's response). */
export type Answer = Awaited<ReturnType<ReturnType<TestPlatform['app']>['inject']>>;

/** A project created for a test, with one key of each permission. */
export interface TestProject {
  slug: string;
  readKey: string;
  writeKey: string;
}

export interface PricingHarness {
  platform: TestPlatform;
  /** Calls `/api/v1/projects/{slug}{path}` with `Authorization: Bearer <key>` (no header when key is undefined). */
  api(
    key: string | undefined,
    method: Method,
    slug: string,
    path: string,
    payload?: unknown,
    headers?: Record<string, string>,
  ): Promise<Answer>;
  /** Calls an operator route with the operator token. */
  ops(method: Method, url: string, payload?: unknown): Promise<Answer>;
  /** Creates a project and one key of each permission (`rateLimitPerMinute` for both keys when given). */
  project(slug: string, rateLimitPerMinute?: number): Promise<TestProject>;
  /** Issues a key for `slug` through the operator API; returns the key and its id. */
  issueKey(
    slug: string,
    permission: 'read' | 'read_write',
    rateLimitPerMinute?: number,
  ): Promise<{ id: number; key: string }>;
  close(): Promise<void>;
}

/** Boots the pricing service (seeded) with `clock`. */
export async function startPricing(clock?: Clock): Promise<PricingHarness> {
  const platform = await startTestPlatform({ services: [pricingService], clock });
  const app = platform.app('pricing');
  const ops: PricingHarness['ops'] = (method, url, payload) =>
    app.inject({
      method,
      url,
      headers: { authorization: platform.operatorAuth },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const issueKey: PricingHarness['issueKey'] = async (slug, permission, rateLimitPerMinute) => {
    const res = await ops('POST', '/_ops/keys', {
      projectSlug: slug,
      permission,
      ...(rateLimitPerMinute ? { rateLimitPerMinute } : {}),
    });
    assert.equal(res.statusCode, 201, res.body);
    return { id: res.json().id, key: res.json().key };
  };
  return {
    platform,
    api: (key, method, slug, path, payload, headers = {}) =>
      app.inject({
        method,
        url: `/api/v1/projects/${slug}${path}`,
        headers: { ...(key === undefined ? {} : { authorization: `Bearer ${key}` }), ...headers },
        ...(payload === undefined ? {} : { payload: payload as object }),
      }),
    ops,
    issueKey,
    async project(slug, rateLimitPerMinute) {
      const res = await ops('POST', '/_ops/projects', { slug, name: `Project ${slug}` });
      assert.equal(res.statusCode, 201, res.body);
      const read = await issueKey(slug, 'read', rateLimitPerMinute);
      const write = await issueKey(slug, 'read_write', rateLimitPerMinute);
      return { slug, readKey: read.key, writeKey: write.key };
    },
    close: () => platform.close(),
  };
}

/** Asserts the flat error body `{error, message}` (exactly those two keys) and returns it. */
export function assertError(
  res: Answer,
  status: number,
  error: string,
  message?: RegExp,
): { error: string; message: string } {
  assert.equal(res.statusCode, status, res.body);
  const body = res.json();
  assert.deepEqual(Object.keys(body).sort(), ['error', 'message'], res.body);
  assert.equal(body.error, error, res.body);
  assert.equal(typeof body.message, 'string');
  assert.ok(body.message.length > 0);
  if (message) assert.match(body.message, message);
  return body;
}
