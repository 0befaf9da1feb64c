/**
 * Test support for the agent gateway: boots it alone on a fresh database (seeded, as `npm start` would) and gives
 * short helpers: `api` (a product call with a token and scope headers), `ops` (an operator call), `user` (a new
 * user with a role and a token), `drive` (run due jobs until a run settles).
 */
import assert from 'node:assert/strict';
import { startTestPlatform, type TestPlatform } from '../../../../test/support/platform.ts';
import type { Clock } from '../../../platform/clock.ts';
import { agentGatewayService } from '../index.ts';

export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** The answer of an inject call. */
export type Answer = Awaited<ReturnType<ReturnType<TestPlatform['app']>['inject']>>;

/** A user made for a test: id, username, password and a session token. */
export interface TestUser {
  id: string;
  username: string;
  password: string;
  token: string;
}

export interface GatewayHarness {
  platform: TestPlatform;
  /** The seeded demo user's token. */
  demoToken: string;
  /**
   * A call with `Authorization: Bearer <token>` (none when undefined) and extra headers (scope headers).
   * @param payload a JSON body (omitted when undefined).
   */
  api(
    token: string | undefined,
    method: Method,
    url: string,
    payload?: unknown,
    headers?: Record<string, string>,
  ): Promise<Answer>;
  /** An operator call. */
  ops(method: Method, url: string, payload?: unknown): Promise<Answer>;
  /** Creates a user with `role` on `tenant`/`namespace` (default the seeded scope, every namespace) and signs in. */
  user(role: 'viewer' | 'editor' | 'admin', scope?: { tenant: string; namespace: string }): Promise<TestUser>;
  /** Runs due jobs until `done()` or 50 rounds. */
  drive(done: () => Promise<boolean>): Promise<void>;
  close(): Promise<void>;
}

let users = 0;

/** Boots the gateway (seeded) with `clock` and extra environment. */
export async function startGateway(
  options: { clock?: Clock; env?: Record<string, string>; listen?: boolean; runWorker?: boolean } = {},
): Promise<GatewayHarness> {
  const platform = await startTestPlatform({ services: [agentGatewayService], ...options });
  const app = platform.app('agent-gateway');
  const ops: GatewayHarness['ops'] = (method, url, payload) =>
    app.inject({
      method,
      url,
      headers: { authorization: platform.operatorAuth },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const api: GatewayHarness['api'] = (token, method, url, payload, headers = {}) =>
    app.inject({
      method,
      url,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const seeded = platform.credentials('agent-gateway');
  return {
    platform,
    demoToken: seeded.userToken as string,
    api,
    ops,
    async user(role, scope = { tenant: 'demo', namespace: '*' }) {
      users += 1;
      const username = `user${users}-${role}`;
      const password = `password-of-${username}`;
      const created = await ops('POST', '/_ops/users', { username, password });
      assert.equal(created.statusCode, 201, created.body);
      const id = created.json().id as string;
      const granted = await ops('PUT', '/_ops/role-bindings', { userId: id, ...scope, role });
      assert.equal(granted.statusCode, 200, granted.body);
      const login = await api(undefined, 'POST', '/api/auth/login', { username, password });
      assert.equal(login.statusCode, 200, login.body);
      return { id, username, password, token: login.json().token as string };
    },
    async drive(done) {
      for (let round = 0; round < 50; round++) {
        if (await done()) return;
        await platform.runDueJobs();
      }
      assert.fail('the work did not settle within 50 rounds of due jobs');
    },
    close: () => platform.close(),
  };
}
