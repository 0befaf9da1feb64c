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
    const again = await call('POST', `/api/sessions/${mine.sessionId}/complete`, bearer(mine.attemptToken), {
      output: {},
    });
    assert.equal(again.statusCode, 409);
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

    const stale = await call(
      'POST',
      `/api/sessions/${taken.sessionId}/complete`,
      bearer(taken.attemptToken),
      { output: { text: 'late' } },
    );
    assert.equal(stale.statusCode, 409);
    assert.equal(stale.json().code, 'session_superseded');
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
