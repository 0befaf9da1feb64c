import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../../platform/clock.ts';
import { type GatewayHarness, startGateway } from './support.ts';

/**
 * The runtime host protocol and the credential kinds of spec E: hosts register and heartbeat with their host
 * credential, claim with the environment key, report with the attempt token; a host that stops heartbeating loses
 * its claims; credential types are not interchangeable; the chat API and the session protocol never mix payloads.
 */
describe('agent-gateway runtime hosts and credential kinds', () => {
  const clock = new ManualClock(new Date('2026-11-24T12:00:00Z'));
  let h: GatewayHarness;
  let seeded: Record<string, string>;
  let environmentId: string;
  let remoteAgent: string;

  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const envKey = (key: string) => ({ 'x-builder-environment-key': key });
  const call = (method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: unknown) =>
    h.platform
      .app('agent-gateway')
      .inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });

  before(async () => {
    h = await startGateway({ clock });
    seeded = h.platform.credentials('agent-gateway') as Record<string, string>;
    environmentId = seeded.environmentId!;
    const agent = await h.api(h.demoToken, 'POST', '/api/v1/agents', {
      name: 'Remote worker',
      definition: { kind: 'remote', environmentId, instructions: { say: 'done' } },
    });
    assert.equal(agent.statusCode, 201, agent.body);
    remoteAgent = agent.json().agent.id;
  });
  after(() => h?.close());

  test('credential types are not interchangeable: each kind is refused on every other kind of route', async () => {
    const kinds: Record<string, string> = {
      user: seeded.userToken!,
      host: seeded.hostCredential!,
      environment: seeded.environmentKey!,
      attempt: seeded.attemptToken!,
      internal: seeded.internalToken!,
    };
    // One route of each kind, called with a credential in that route's own place.
    const routes: Record<
      string,
      (
        headers: Record<string, string>,
      ) => Promise<{ statusCode: number; body: string; json(): { code: string } }>
    > = {
      user: (headers) => call('GET', '/api/v1/agents', headers),
      host: (headers) => call('POST', '/api/runtime/hosts/heartbeat', headers),
      environment: (headers) =>
        call('POST', '/api/runtime/executions/claim', headers, { hostId: seeded.hostId, max: 1 }),
      attempt: (headers) => call('GET', `/api/sessions/${seeded.sessionId}`, headers),
      internal: (headers) =>
        call('POST', '/api/internal/v1/events', headers, {
          tenant: 'demo',
          namespace: 'default',
          type: 'custom.ping',
        }),
    };
    const place: Record<string, (t: string) => Record<string, string>> = {
      user: bearer,
      host: bearer,
      environment: envKey,
      attempt: bearer,
      internal: bearer,
    };
    for (const [routeKind, route] of Object.entries(routes)) {
      for (const [kind, token] of Object.entries(kinds)) {
        const res = await route(place[routeKind]!(token));
        if (kind === routeKind) assert.notEqual(res.statusCode, 401, `${kind} on its own route: ${res.body}`);
        else {
          assert.equal(res.statusCode, 401, `${kind} credential on the ${routeKind} route: ${res.body}`);
          assert.equal(res.json().code, 'wrong_credential_type');
        }
      }
    }
  });

  test('on every route of the OpenAPI document, each other credential kind is a 401 wrong_credential_type', async () => {
    const kinds: Record<string, string> = {
      userToken: seeded.userToken!,
      hostCredential: seeded.hostCredential!,
      environmentKey: seeded.environmentKey!,
      attemptToken: seeded.attemptToken!,
      internalToken: seeded.internalToken!,
    };
    const doc = (await h.platform.app('agent-gateway').inject({ url: '/openapi.json' })).json() as {
      paths: Record<string, Record<string, { operationId: string; security?: Record<string, []>[] }>>;
    };
    let checked = 0;
    for (const [path, operations] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(operations)) {
        const own = Object.keys(op.security?.[0] ?? {})[0];
        if (!own || !(own in kinds)) continue;
        const url = path.replace(/\{[^}]+\}/g, 'ses_0123456789abcdef0123456789abcdef');
        for (const [kind, secret] of Object.entries(kinds)) {
          if (kind === own) continue;
          const headers = own === 'environmentKey' ? envKey(secret) : bearer(secret);
          const res = await call(method.toUpperCase() as 'GET', url, headers);
          assert.equal(res.statusCode, 401, `${kind} on ${op.operationId}: ${res.body}`);
          assert.equal(res.json().code, 'wrong_credential_type', `${kind} on ${op.operationId}`);
        }
        // The operator token is no credential of the product, and a product credential opens no operator route.
        const operator = await call(method.toUpperCase() as 'GET', url, {
          authorization: h.platform.operatorAuth,
        });
        assert.equal(operator.statusCode, 401, `operator token on ${op.operationId}`);
        checked += 1;
      }
    assert.ok(checked >= 50, `every authenticated route was called (${checked})`);
    for (const secret of Object.values(kinds))
      assert.equal((await call('GET', '/_ops/hosts', bearer(secret))).statusCode, 401);
  });

  test('a host registers, claims a remote agent’s step with the environment key, reports through the attempt token', async () => {
    const hostKey = await h.ops('POST', '/_ops/keys', { kind: 'host', environmentId, label: 'test host' });
    assert.equal(hostKey.statusCode, 201, hostKey.body);
    const host = await call('POST', '/api/runtime/hosts', bearer(hostKey.json().key), { name: 'h1' });
    assert.equal(host.statusCode, 200, host.body);
    const hostId = host.json().host.id;

    const run = await h.api(h.demoToken, 'POST', '/api/v1/orchestration-runs', {
      target: { type: 'agent', id: remoteAgent },
      input: { job: 1 },
    });
    const runId = run.json().run.id;
    await h.platform.runDueJobs();
    const claim = await call('POST', '/api/runtime/executions/claim', envKey(seeded.environmentKey!), {
      hostId,
      max: 5,
    });
    assert.equal(claim.statusCode, 200, claim.body);
    const mine = claim.json().executions.find((e: { source: { id: string } }) => e.source.id === runId);
    assert.ok(mine, claim.body);
    assert.deepEqual(mine.input, { job: 1 });
    assert.deepEqual(mine.agent.instructions, { say: 'done' });
    assert.match(mine.attemptToken, /^aga_/);

    const events = await call('POST', `/api/sessions/${mine.sessionId}/events`, bearer(mine.attemptToken), {
      events: [{ type: 'progress', data: { percent: 50 } }],
    });
    assert.equal(events.statusCode, 202, events.body);
    // The session protocol and the chat API never take each other's payloads.
    const chatShaped = await call(
      'POST',
      `/api/sessions/${mine.sessionId}/events`,
      bearer(mine.attemptToken),
      { message: 'hi' },
    );
    assert.equal(chatShaped.statusCode, 400);
    const done = await call('POST', `/api/sessions/${mine.sessionId}/complete`, bearer(mine.attemptToken), {
      output: { text: 'remote done' },
    });
    assert.equal(done.statusCode, 200, done.body);
    await h.drive(
      async () =>
        (await h.api(h.demoToken, 'GET', `/api/v1/orchestration-runs/${runId}`)).json().run.status ===
        'completed',
    );
    const final = (await h.api(h.demoToken, 'GET', `/api/v1/orchestration-runs/${runId}`)).json().run;
    assert.deepEqual(final.output, { text: 'remote done' });
    const types = (await h.api(h.demoToken, 'GET', `/api/v1/orchestration-runs/${runId}/events`))
      .json()
      .events.map((e: { type: string }) => e.type);
    for (const t of [
      'execution.queued',
      'execution.claimed',
      'session.progress',
      'execution.completed',
      'run.completed',
    ])
      assert.ok(types.includes(t), `${t} in ${types}`);
    // The attempt ended: its token stops, on every route.
    const again = await call('POST', `/api/sessions/${mine.sessionId}/complete`, bearer(mine.attemptToken), {
      output: {},
    });
    assert.equal(again.statusCode, 401, again.body);
    assert.equal(again.json().code, 'token_revoked');
    const read = await call('GET', `/api/sessions/${mine.sessionId}`, bearer(mine.attemptToken));
    assert.equal(read.statusCode, 401);
  });

  const claimFor = async (hostId: string) => {
    const res = await call('POST', '/api/runtime/executions/claim', envKey(seeded.environmentKey!), {
      hostId,
      max: 10,
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['cache-control'], 'no-store', 'attempt tokens are kept by no cache');
    return res.json().executions as {
      id: string;
      sessionId: string;
      attemptToken: string;
      source: { id: string };
    }[];
  };
  const newHost = async (name: string) => {
    const key = (await h.ops('POST', '/_ops/keys', { kind: 'host', environmentId })).json().key as string;
    const res = await call('POST', '/api/runtime/hosts', bearer(key), { name });
    assert.equal(res.statusCode, 200, res.body);
    return { key, id: res.json().host.id as string };
  };
  const startRemoteRun = async (input: unknown) => {
    const run = await h.api(h.demoToken, 'POST', '/api/v1/orchestration-runs', {
      target: { type: 'agent', id: remoteAgent },
      input,
    });
    assert.equal(run.statusCode, 201, run.body);
    await h.platform.runDueJobs();
    return run.json().run.id as string;
  };

  test('an attempt token reports for its own attempt only, and stops when its run is cancelled or it expires', async () => {
    const host = await newHost('scoped');
    const runA = await startRemoteRun({ job: 'a' });
    const runB = await startRemoteRun({ job: 'b' });
    const claimed = await claimFor(host.id);
    const a = claimed.find((e) => e.source.id === runA)!;
    const b = claimed.find((e) => e.source.id === runB)!;
    assert.ok(a && b, JSON.stringify(claimed));
    // A's token on B's session: B's session does not exist for it (404), and B is untouched.
    for (const [method, suffix, body] of [
      ['GET', '', undefined],
      ['POST', '/events', { events: [{ type: 'log', data: 'x' }] }],
      ['POST', '/complete', { output: { text: 'stolen' } }],
      ['POST', '/fail', { error: { code: 'x', message: 'y' } }],
    ] as const) {
      const res = await call(method, `/api/sessions/${b.sessionId}${suffix}`, bearer(a.attemptToken), body);
      assert.equal(res.statusCode, 404, `${method} ${suffix}: ${res.body}`);
    }
    const bState = await call('GET', `/api/sessions/${b.sessionId}`, bearer(b.attemptToken));
    assert.equal(bState.json().session.status, 'claimed');

    // Cancelling A's run ends its attempt: the token stops at once.
    const cancelled = await h.api(h.demoToken, 'POST', `/api/v1/orchestration-runs/${runA}/cancel`, {});
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    const afterCancel = await call('GET', `/api/sessions/${a.sessionId}`, bearer(a.attemptToken));
    assert.equal(afterCancel.statusCode, 401);
    assert.equal(afterCancel.json().code, 'token_revoked');

    // B's token expires by the clock (AGENT_GATEWAY_ATTEMPT_TOKEN_SECONDS, 24 h by default).
    clock.advance(24 * 3600_000 - 1000);
    assert.equal((await call('GET', `/api/sessions/${b.sessionId}`, bearer(b.attemptToken))).statusCode, 200);
    clock.advance(1000);
    const expired = await call('GET', `/api/sessions/${b.sessionId}`, bearer(b.attemptToken));
    assert.equal(expired.statusCode, 401);
    assert.equal(expired.json().code, 'token_expired');
    clock.advance(-24 * 3600_000);
  });

  test('a host that stops heartbeating loses its claims to another host; the old session is refused', async () => {
    const register = async (name: string) => {
      const key = (await h.ops('POST', '/_ops/keys', { kind: 'host', environmentId })).json().key as string;
      const res = await call('POST', '/api/runtime/hosts', bearer(key), { name });
      return { key, id: res.json().host.id as string };
    };
    const a = await register('a');
    const b = await register('b');
    const chat = await h.api(h.demoToken, 'POST', '/api/v1/chats', {
      agentId: remoteAgent,
      title: 'remote chat',
    });
    const turn = await h.api(h.demoToken, 'POST', `/api/v1/chats/${chat.json().chat.id}/turns`, {
      message: 'work please',
    });
    assert.equal(turn.statusCode, 202, turn.body);
    assert.equal(turn.json().turn.status, 'pending');
    const claimA = (
      await call('POST', '/api/runtime/executions/claim', envKey(seeded.environmentKey!), {
        hostId: a.id,
        max: 10,
      })
    ).json();
    const taken = claimA.executions.find(
      (e: { source: { id: string } }) => e.source.id === turn.json().turn.id,
    );
    assert.ok(taken, JSON.stringify(claimA));

    // b heartbeats; a does not. Within the lease nothing is taken; past it, b takes a's claim.
    clock.advance(20_000);
    await call('POST', '/api/runtime/hosts/heartbeat', bearer(b.key));
    const early = (
      await call('POST', '/api/runtime/executions/claim', envKey(seeded.environmentKey!), {
        hostId: b.id,
        max: 10,
      })
    ).json();
    assert.ok(!early.executions.some((e: { id: string }) => e.id === taken.id), 'a still holds its lease');
    clock.advance(15_000);
    await call('POST', '/api/runtime/hosts/heartbeat', bearer(b.key));
    const late = (
      await call('POST', '/api/runtime/executions/claim', envKey(seeded.environmentKey!), {
        hostId: b.id,
        max: 10,
      })
    ).json();
    const retaken = late.executions.find((e: { id: string }) => e.id === taken.id);
    assert.ok(retaken, 'the expired claim went to b');
    assert.equal(retaken.attempt, taken.attempt + 1);
    assert.notEqual(retaken.sessionId, taken.sessionId);

    // The operator sees a's lease lapsed and the claim now held by b.
    const listed = (await h.ops('GET', `/_ops/hosts?environmentId=${environmentId}`)).json().hosts as {
      id: string;
      live: boolean;
      claims: { executionId: string; attempt: number }[];
    }[];
    const seenA = listed.find((x) => x.id === a.id)!;
    const seenB = listed.find((x) => x.id === b.id)!;
    assert.equal(seenA.live, false);
    assert.ok(!seenA.claims.some((c) => c.executionId === taken.id), 'a no longer holds it');
    assert.equal(seenB.live, true);
    assert.deepEqual(
      seenB.claims.find((c) => c.executionId === taken.id),
      {
        executionId: taken.id,
        attempt: retaken.attempt,
        sessionId: retaken.sessionId,
        claimedAt: clock.now().toISOString(),
      },
    );

    // a's attempt token stopped when b took the execution over.
    const stale = await call(
      'POST',
      `/api/sessions/${taken.sessionId}/complete`,
      bearer(taken.attemptToken),
      { output: { text: 'late' } },
    );
    assert.equal(stale.statusCode, 401, stale.body);
    assert.equal(stale.json().code, 'token_revoked');
    const aClaims = await call('POST', '/api/runtime/executions/claim', envKey(seeded.environmentKey!), {
      hostId: a.id,
    });
    assert.equal(aClaims.statusCode, 409, 'a host past its lease must heartbeat before claiming');
    const ok = await call(
      'POST',
      `/api/sessions/${retaken.sessionId}/complete`,
      bearer(retaken.attemptToken),
      { output: { text: 'from b' } },
    );
    assert.equal(ok.statusCode, 200, ok.body);
    const turns = (await h.api(h.demoToken, 'GET', `/api/v1/chats/${chat.json().chat.id}/turns`)).json()
      .turns;
    assert.equal(turns[0].status, 'completed');
    assert.equal(turns[0].reply.text, 'from b');
  });

  test('a host of another environment cannot be claimed for with this environment key', async () => {
    const other = await h.ops('POST', '/_ops/environments', {
      tenant: 'demo',
      namespace: 'default',
      name: 'other',
    });
    const key = (
      await h.ops('POST', '/_ops/keys', { kind: 'environment', environmentId: other.json().id })
    ).json().key;
    const res = await call('POST', '/api/runtime/executions/claim', envKey(key), { hostId: seeded.hostId });
    assert.equal(res.statusCode, 404);
  });
});
