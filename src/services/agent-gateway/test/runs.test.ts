import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../../platform/clock.ts';
import { type GatewayHarness, startGateway } from './support.ts';

/**
 * The agent runtime (README "Runs", "Workflows"): runs of agents, teams and published workflow revisions executed
 * as jobs, each node kind (condition on run data, join, approval, timer by the clock, signal, sub-run), every step
 * recorded as run events; definitions versioned and published with `expectedVersion`.
 */
describe('agent-gateway runs and workflows', () => {
  const clock = new ManualClock(new Date('2026-11-24T12:00:00Z'));
  let h: GatewayHarness;
  let token: string;
  const agents: Record<string, string> = {};

  const api = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) =>
    h.api(token, method, url, payload);
  const run = async (id: string) => (await api('GET', `/api/v1/orchestration-runs/${id}`)).json().run;
  const events = async (id: string) =>
    (await api('GET', `/api/v1/orchestration-runs/${id}/events?limit=1000`)).json().events as {
      id: number;
      type: string;
      nodeId: string | null;
      data: Record<string, unknown>;
    }[];
  /** Runs due jobs until the run finishes, or waits with nothing left to do (no new event after a round). */
  const settle = async (id: string) => {
    let seen = -1;
    await h.drive(async () => {
      const status = (await run(id)).status;
      if (['completed', 'failed', 'cancelled'].includes(status)) return true;
      const count = (await events(id)).length;
      const idle = status === 'waiting' && count === seen;
      seen = count;
      return idle;
    });
    return run(id);
  };
  const workflow = async (name: string, graph: unknown) => {
    const created = await api('POST', '/api/v1/orchestration-definitions', { name, graph });
    assert.equal(created.statusCode, 201, created.body);
    const published = await api(
      'POST',
      `/api/v1/orchestration-definitions/${created.json().definition.id}/publish`,
      {
        expectedVersion: 1,
      },
    );
    assert.equal(published.statusCode, 200, published.body);
    return created.json().definition.id as string;
  };
  const start = async (target: { type: string; id: string; revision?: number }, input: unknown) => {
    const res = await api('POST', '/api/v1/orchestration-runs', { target, input });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().run.id as string;
  };

  before(async () => {
    h = await startGateway({ clock });
    token = h.demoToken;
    const list = await api('GET', '/api/v1/agents');
    for (const a of list.json().agents) agents[a.name] = a.id;
    const upper = await api('POST', '/api/v1/agents', {
      name: 'Upper',
      definition: { kind: 'template', template: '{{ input.text | upper }}' },
    });
    agents.Upper = upper.json().agent.id;
    const wrap = await api('POST', '/api/v1/agents', {
      name: 'Wrap',
      definition: { kind: 'json_transform', output: { text: '[{{ input.text }}]' } },
    });
    agents.Wrap = wrap.json().agent.id;
  });
  after(() => h?.close());

  test('an agent run executes as a job and records each step as a run event', async () => {
    const id = await start({ type: 'agent', id: agents.Greeter! }, { message: 'hi' });
    assert.equal((await run(id)).status, 'running', 'queued for the worker, not run in the request');
    const done = await settle(id);
    assert.equal(done.status, 'completed');
    assert.deepEqual(done.output, { text: 'Hello! You said: hi' });
    const types = (await events(id)).map((e) => e.type);
    assert.deepEqual(types, [
      'run.created',
      'step.completed',
      'step.queued',
      'step.started',
      'agent.output',
      'step.completed',
      'step.completed',
      'run.completed',
    ]);
    const ids = (await events(id)).map((e) => e.id);
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => a - b),
      'event ids increase',
    );
    const graph = await api('GET', `/api/v1/orchestration-runs/${id}/graph`);
    assert.deepEqual(
      graph.json().nodes.map((n: { id: string; status: string }) => [n.id, n.status]),
      [
        ['start', 'completed'],
        ['agent', 'completed'],
        ['end', 'completed'],
      ],
    );
  });

  test('an Idempotency-Key on a run start: a retry answers the same run', async () => {
    const send = (input: unknown) =>
      h.api(
        token,
        'POST',
        '/api/v1/orchestration-runs',
        { target: { type: 'agent', id: agents.Greeter }, input },
        {
          'idempotency-key': 'start-1',
        },
      );
    const first = await send({ message: 'a' });
    const retry = await send({ message: 'a' });
    assert.equal(first.statusCode, 201, first.body);
    assert.equal(retry.json().run.id, first.json().run.id);
    assert.equal(retry.headers['idempotency-replayed'], 'true');
    assert.equal((await send({ message: 'b' })).statusCode, 409);
  });

  test('a team hands the work from member to member; each hand-off is an event', async () => {
    const team = await api('POST', '/api/v1/teams', {
      name: 'Shout and wrap',
      members: [agents.Upper, agents.Wrap],
    });
    assert.equal(team.statusCode, 201, team.body);
    const id = await start({ type: 'team', id: team.json().team.id }, { text: 'quiet' });
    const done = await settle(id);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.deepEqual(done.output, { text: '[QUIET]' });
    const handoffs = (await events(id)).filter((e) => e.type === 'team.handoff');
    assert.deepEqual(
      handoffs.map((e) => e.data),
      [{ from: agents.Upper, to: agents.Wrap, index: 1 }],
    );
    const graph = (await api('GET', `/api/v1/orchestration-runs/${id}/graph`)).json();
    const node = graph.nodes.find((n: { type: string }) => n.type === 'team');
    assert.deepEqual(
      node.members.map((m: { agentId: string; status: string }) => [m.agentId, m.status]),
      [
        [agents.Upper, 'completed'],
        [agents.Wrap, 'completed'],
      ],
    );
    // A team update needs its version.
    const stale = await api('PATCH', `/api/v1/teams/${team.json().team.id}`, {
      expectedVersion: 2,
      name: 'x',
    });
    assert.equal(stale.statusCode, 409);
    assert.equal(stale.json().details.currentVersion, 1);
  });

  test('a condition reads run data; the branch not taken is skipped; a join waits for every incoming edge', async () => {
    const id = await workflow('Triage', {
      nodes: [
        { id: 'start', type: 'start' },
        { id: 'isHigh', type: 'condition', condition: { path: 'input.priority', op: 'eq', value: 'high' } },
        { id: 'shout', type: 'agent', agentId: agents.Upper, input: { text: '{{ input.text }}' } },
        { id: 'wrap', type: 'agent', agentId: agents.Wrap, input: { text: '{{ input.text }}' } },
        { id: 'merge', type: 'join' },
        { id: 'end', type: 'end', input: { result: '{{ previous }}' } },
      ],
      edges: [
        { from: 'start', to: 'isHigh' },
        { from: 'isHigh', to: 'shout', on: 'true' },
        { from: 'isHigh', to: 'wrap', on: 'false' },
        { from: 'shout', to: 'merge' },
        { from: 'wrap', to: 'merge' },
        { from: 'merge', to: 'end' },
      ],
    });
    const high = await settle(await start({ type: 'orchestration', id }, { priority: 'high', text: 'fire' }));
    assert.equal(high.status, 'completed', JSON.stringify(high.error));
    assert.deepEqual(high.output, { result: { shout: { text: 'FIRE' } } });
    const low = await start({ type: 'orchestration', id }, { priority: 'low', text: 'note' });
    assert.deepEqual((await settle(low)).output, { result: { wrap: { text: '[note]' } } });
    const graph = (await api('GET', `/api/v1/orchestration-runs/${low}/graph`)).json();
    const status = Object.fromEntries(
      graph.nodes.map((n: { id: string; status: string }) => [n.id, n.status]),
    );
    assert.deepEqual(status, {
      start: 'completed',
      isHigh: 'completed',
      shout: 'skipped',
      wrap: 'completed',
      merge: 'completed',
      end: 'completed',
    });

    // Parallel branches both arrive at the join.
    const both = await workflow('Fan out', {
      nodes: [
        { id: 'start', type: 'start' },
        { id: 'a', type: 'agent', agentId: agents.Upper },
        { id: 'b', type: 'agent', agentId: agents.Wrap },
        { id: 'j', type: 'join' },
        { id: 'end', type: 'end' },
      ],
      edges: [
        { from: 'start', to: 'a' },
        { from: 'start', to: 'b' },
        { from: 'a', to: 'j' },
        { from: 'b', to: 'j' },
        { from: 'j', to: 'end' },
      ],
    });
    const fan = await settle(await start({ type: 'orchestration', id: both }, { text: 'x' }));
    assert.deepEqual(fan.output, { a: { text: 'X' }, b: { text: '[x]' } });
  });

  test('approval: the run waits for a decision, follows approved or rejected, and a decision is made once', async () => {
    const id = await workflow('Approve', {
      nodes: [
        { id: 'start', type: 'start' },
        { id: 'gate', type: 'approval', title: 'Ship it?' },
        { id: 'yes', type: 'end', input: { shipped: true } },
        { id: 'no', type: 'end', input: { shipped: false } },
      ],
      edges: [
        { from: 'start', to: 'gate' },
        { from: 'gate', to: 'yes', on: 'approved' },
        { from: 'gate', to: 'no', on: 'rejected' },
      ],
    });
    for (const [decision, shipped] of [
      ['approve', true],
      ['reject', false],
    ] as const) {
      const runId = await start({ type: 'orchestration', id }, {});
      assert.equal((await settle(runId)).status, 'waiting');
      const graph = (await api('GET', `/api/v1/orchestration-runs/${runId}/graph`)).json();
      const approvalId = graph.nodes.find((n: { id: string }) => n.id === 'gate').approvalId;
      const pending = (await api('GET', '/api/v1/approvals?status=pending')).json().approvals;
      assert.ok(pending.some((a: { id: string }) => a.id === approvalId));
      const decided = await api('POST', `/api/v1/approvals/${approvalId}/decide`, {
        decision,
        comment: 'ok',
      });
      assert.equal(decided.statusCode, 200, decided.body);
      assert.equal(decided.json().approval.status, decision === 'approve' ? 'approved' : 'rejected');
      const done = await settle(runId);
      assert.equal(done.status, 'completed');
      assert.deepEqual(done.output, { shipped });
      const again = await api('POST', `/api/v1/approvals/${approvalId}/decide`, { decision: 'approve' });
      assert.equal(again.statusCode, 409);
      assert.equal(again.json().code, 'invalid_state');
    }
    // No rejected edge: a rejection fails the run.
    const strict = await workflow('Strict', {
      nodes: [
        { id: 'start', type: 'start' },
        { id: 'gate', type: 'approval' },
        { id: 'end', type: 'end' },
      ],
      edges: [
        { from: 'start', to: 'gate' },
        { from: 'gate', to: 'end', on: 'approved' },
      ],
    });
    const runId = await start({ type: 'orchestration', id: strict }, {});
    await settle(runId);
    const approvalId = (await api('GET', `/api/v1/orchestration-runs/${runId}/graph`)).json().nodes[1]
      .approvalId;
    await api('POST', `/api/v1/approvals/${approvalId}/decide`, { decision: 'reject', comment: 'no' });
    const failed = await run(runId);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.error.code, 'approval_rejected');
  });

  test('a timer fires by the injected clock, not before', async () => {
    const id = await workflow('Wait a minute', {
      nodes: [
        { id: 'start', type: 'start' },
        { id: 'pause', type: 'timer', delaySeconds: 60 },
        { id: 'end', type: 'end' },
      ],
      edges: [
        { from: 'start', to: 'pause' },
        { from: 'pause', to: 'end' },
      ],
    });
    const runId = await start({ type: 'orchestration', id }, { n: 1 });
    assert.equal((await settle(runId)).status, 'waiting');
    clock.advance(59_000);
    await h.ops('POST', '/_ops/runtime/tick');
    await h.platform.runDueJobs();
    assert.equal((await run(runId)).status, 'waiting', 'not due yet');
    clock.advance(1000);
    const tick = await h.ops('POST', '/_ops/runtime/tick');
    assert.equal(tick.json().firedTimers, 1, tick.body);
    const done = await settle(runId);
    assert.equal(done.status, 'completed');
    assert.deepEqual(done.output, { n: 1 });
    assert.ok((await events(runId)).some((e) => e.type === 'timer.fired'));
  });

  test('a signal node waits for its signal; a signal sent early waits for the node', async () => {
    const id = await workflow('Signals', {
      nodes: [
        { id: 'start', type: 'start' },
        { id: 'pause', type: 'timer', delaySeconds: 5 },
        { id: 'go', type: 'signal', signal: 'go' },
        { id: 'end', type: 'end', input: '{{ nodes.go.payload }}' },
      ],
      edges: [
        { from: 'start', to: 'pause' },
        { from: 'pause', to: 'go' },
        { from: 'go', to: 'end' },
      ],
    });
    const late = await start({ type: 'orchestration', id }, {});
    const early = await start({ type: 'orchestration', id }, {});
    const sentEarly = await api('POST', `/api/v1/orchestration-runs/${early}/signals`, {
      name: 'go',
      payload: { who: 'early' },
    });
    assert.equal(sentEarly.statusCode, 202, sentEarly.body);
    assert.equal(sentEarly.json().consumed, false, 'no node waits yet');
    clock.advance(5000);
    await h.ops('POST', '/_ops/runtime/tick');
    assert.deepEqual((await settle(early)).output, { who: 'early' });
    assert.equal((await settle(late)).status, 'waiting');
    const wrongName = await api('POST', `/api/v1/orchestration-runs/${late}/signals`, { name: 'stop' });
    assert.equal(wrongName.json().consumed, false);
    const sent = await api('POST', `/api/v1/orchestration-runs/${late}/signals`, {
      name: 'go',
      payload: { who: 'late' },
    });
    assert.equal(sent.json().consumed, true);
    assert.deepEqual((await settle(late)).output, { who: 'late' });
    const finished = await api('POST', `/api/v1/orchestration-runs/${late}/signals`, { name: 'go' });
    assert.equal(finished.statusCode, 409);
  });

  test('a sub-run runs another published workflow and hands its output back; an unpublished one fails the step', async () => {
    const child = await workflow('Child', {
      nodes: [
        { id: 'start', type: 'start' },
        { id: 'shout', type: 'agent', agentId: agents.Upper },
        { id: 'end', type: 'end' },
      ],
      edges: [
        { from: 'start', to: 'shout' },
        { from: 'shout', to: 'end' },
      ],
    });
    const parent = await workflow('Parent', {
      nodes: [
        { id: 'start', type: 'start' },
        { id: 'call', type: 'subrun', definitionId: child, input: { text: '{{ input.word }}' } },
        { id: 'end', type: 'end' },
      ],
      edges: [
        { from: 'start', to: 'call' },
        { from: 'call', to: 'end' },
      ],
    });
    const runId = await start({ type: 'orchestration', id: parent }, { word: 'nested' });
    const done = await settle(runId);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.deepEqual(done.output, { text: 'NESTED' });
    const graph = (await api('GET', `/api/v1/orchestration-runs/${runId}/graph`)).json();
    const childRunId = graph.nodes.find((n: { id: string }) => n.id === 'call').childRunId;
    const childRun = await run(childRunId);
    assert.equal(childRun.parentRunId, runId);
    assert.equal(childRun.status, 'completed');

    const draft = await api('POST', '/api/v1/orchestration-definitions', {
      name: 'Draft child',
      graph: {
        nodes: [
          { id: 's', type: 'start' },
          { id: 'e', type: 'end' },
        ],
        edges: [{ from: 's', to: 'e' }],
      },
    });
    const caller = await workflow('Calls a draft', {
      nodes: [
        { id: 'start', type: 'start' },
        { id: 'call', type: 'subrun', definitionId: draft.json().definition.id },
        { id: 'end', type: 'end' },
      ],
      edges: [
        { from: 'start', to: 'call' },
        { from: 'call', to: 'end' },
      ],
    });
    const failed = await settle(await start({ type: 'orchestration', id: caller }, {}));
    assert.equal(failed.status, 'failed');
    assert.match(failed.error.message, /no published revision/);
  });

  test('publish needs the current expectedVersion, makes an immutable revision, and runs use revisions', async () => {
    const graph = (text: string) => ({
      nodes: [
        { id: 'start', type: 'start' },
        { id: 'end', type: 'end', input: { text } },
      ],
      edges: [{ from: 'start', to: 'end' }],
    });
    const created = await api('POST', '/api/v1/orchestration-definitions', {
      name: 'Versions',
      graph: graph('one'),
    });
    const id = created.json().definition.id;
    const notPublished = await api('POST', '/api/v1/orchestration-runs', {
      target: { type: 'orchestration', id },
    });
    assert.equal(notPublished.statusCode, 409);
    assert.equal(notPublished.json().code, 'not_published');
    const wrong = await api('POST', `/api/v1/orchestration-definitions/${id}/publish`, {
      expectedVersion: 2,
    });
    assert.equal(wrong.statusCode, 409);
    assert.deepEqual(wrong.json().details, { currentVersion: 1 });
    const first = await api('POST', `/api/v1/orchestration-definitions/${id}/publish`, {
      expectedVersion: 1,
    });
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.json().revision.revision, 1);
    assert.equal(first.json().definition.version, 2);
    const twice = await api('POST', `/api/v1/orchestration-definitions/${id}/publish`, {
      expectedVersion: 1,
    });
    assert.equal(twice.statusCode, 409, 'the same publish is not applied twice');
    const staleEdit = await api('PATCH', `/api/v1/orchestration-definitions/${id}`, {
      expectedVersion: 1,
      graph: graph('two'),
    });
    assert.equal(staleEdit.statusCode, 409);
    assert.equal(staleEdit.json().details.currentVersion, 2);
    const edit = await api('PATCH', `/api/v1/orchestration-definitions/${id}`, {
      expectedVersion: 2,
      graph: graph('two'),
    });
    assert.equal(edit.statusCode, 200, edit.body);
    const stillOne = await settle(await start({ type: 'orchestration', id }, {}));
    assert.deepEqual(stillOne.output, { text: 'one' }, 'the draft does not change the published revision');
    await api('POST', `/api/v1/orchestration-definitions/${id}/publish`, { expectedVersion: 3 });
    assert.deepEqual((await settle(await start({ type: 'orchestration', id }, {}))).output, { text: 'two' });
    assert.deepEqual((await settle(await start({ type: 'orchestration', id, revision: 1 }, {}))).output, {
      text: 'one',
    });
    const revisions = (await api('GET', `/api/v1/orchestration-definitions/${id}/revisions`)).json()
      .revisions;
    assert.deepEqual(
      revisions.map((r: { revision: number }) => r.revision),
      [2, 1],
    );
  });

  test('graphs are checked: dangling edges, unreachable nodes, no end, cycles, misplaced branches', async () => {
    const bad = async (graph: unknown, problem: RegExp) => {
      const res = await api('POST', '/api/v1/orchestration-definitions', { name: 'Bad', graph });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().code, 'invalid_graph');
      assert.ok(
        (res.json().details.problems as string[]).some((p) => problem.test(p)),
        `${problem} in ${res.json().details.problems}`,
      );
    };
    const s = { id: 's', type: 'start' };
    const e = { id: 'e', type: 'end' };
    await bad({ nodes: [s, e], edges: [{ from: 's', to: 'ghost' }] }, /'ghost' \(to\) is not a node/);
    await bad(
      {
        nodes: [s, e, { id: 'e2', type: 'end' }, { id: 'x', type: 'agent', agentId: agents.Upper }],
        edges: [
          { from: 's', to: 'e' },
          { from: 'x', to: 'e2' },
        ],
      },
      /'x' cannot be reached/,
    );
    await bad(
      { nodes: [s, { id: 'a', type: 'agent', agentId: agents.Upper }], edges: [{ from: 's', to: 'a' }] },
      /needs an end node/,
    );
    await bad(
      {
        nodes: [s, { id: 'a', type: 'agent', agentId: agents.Upper }, { id: 'j', type: 'join' }, e],
        edges: [
          { from: 's', to: 'j' },
          { from: 'a', to: 'j' },
          { from: 'j', to: 'a' },
          { from: 'j', to: 'e' },
        ],
      },
      /cycle/,
    );
    await bad(
      {
        nodes: [s, { id: 'c', type: 'condition', condition: { path: 'input.x', op: 'eq', value: 1 } }, e],
        edges: [
          { from: 's', to: 'c' },
          { from: 'c', to: 'e' },
        ],
      },
      /needs on: "true" or "false"/,
    );
    await bad(
      {
        nodes: [s, { id: 'a', type: 'agent', agentId: 'agt_00000000000000000000000000000000' }, e],
        edges: [
          { from: 's', to: 'a' },
          { from: 'a', to: 'e' },
        ],
      },
      /is not in this scope/,
    );
    await bad(
      {
        nodes: [s, { id: 't', type: 'timer', delaySeconds: 0 }, e],
        edges: [
          { from: 's', to: 't' },
          { from: 't', to: 'e' },
        ],
      },
      /delaySeconds/,
    );
  });

  test('cancel ends a waiting run and its pending approval', async () => {
    const id = await workflow('Cancellable', {
      nodes: [
        { id: 'start', type: 'start' },
        { id: 'gate', type: 'approval' },
        { id: 'end', type: 'end' },
      ],
      edges: [
        { from: 'start', to: 'gate' },
        { from: 'gate', to: 'end', on: 'approved' },
      ],
    });
    const runId = await start({ type: 'orchestration', id }, {});
    await settle(runId);
    const cancelled = await api('POST', `/api/v1/orchestration-runs/${runId}/cancel`);
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    assert.equal(cancelled.json().run.status, 'cancelled');
    const approvalId = (await api('GET', `/api/v1/orchestration-runs/${runId}/graph`)).json().nodes[1]
      .approvalId;
    const late = await api('POST', `/api/v1/approvals/${approvalId}/decide`, { decision: 'approve' });
    assert.equal(late.statusCode, 409);
    assert.equal((await api('POST', `/api/v1/orchestration-runs/${runId}/cancel`)).statusCode, 409);
  });
  test('conditions are strict: bad paths, operators and values are refused when saved', async () => {
    const bad = async (condition: unknown, problem: RegExp, extra: unknown[] = []) => {
      const res = await api('POST', '/api/v1/orchestration-definitions', {
        name: 'Strict',
        graph: {
          nodes: [
            { id: 's', type: 'start' },
            { id: 'c', type: 'condition', condition },
            { id: 'later', type: 'agent', agentId: agents.Upper },
            { id: 'e', type: 'end' },
            ...extra,
          ],
          edges: [
            { from: 's', to: 'c' },
            { from: 'c', to: 'later', on: 'true' },
            { from: 'c', to: 'e2', on: 'false' },
            { from: 'later', to: 'e' },
          ],
        },
      });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().code, 'invalid_graph');
      assert.ok(
        (res.json().details.problems as string[]).some((p) => problem.test(p)),
        `${problem} in ${res.json().details.problems}`,
      );
    };
    const e2 = [{ id: 'e2', type: 'end' }];
    await bad(
      { path: 'customer.tier', op: 'eq', value: 'gold' },
      /must start with input, nodes, previous/,
      e2,
    );
    await bad({ path: 'nodes.later.text', op: 'exists' }, /names no node that runs before/, e2);
    await bad({ path: 'nodes.ghost', op: 'exists' }, /names no node that runs before/, e2);
    await bad({ path: 'input.amount', op: 'gt', value: true }, /compares with a number or a string/, e2);
    await bad({ path: 'input.amount', op: 'eq' }, /eq needs a value/, e2);
    await bad({ path: 'input.amount', op: 'exists', value: 1 }, /exists takes no value/, e2);
    await bad({ path: 'input.amount', op: 'gt', value: 1, extra: 1 }, /has no field 'extra'/, e2);
  });

  test('a condition the run data cannot decide fails the run with the reason; no branch is taken', async () => {
    const id = await workflow('Amount gate', {
      nodes: [
        { id: 'start', type: 'start' },
        { id: 'big', type: 'condition', condition: { path: 'input.amount', op: 'gt', value: 100 } },
        { id: 'yes', type: 'agent', agentId: agents.Upper, input: { text: 'big' } },
        { id: 'no', type: 'agent', agentId: agents.Upper, input: { text: 'small' } },
        { id: 'e1', type: 'end' },
        { id: 'e2', type: 'end' },
      ],
      edges: [
        { from: 'start', to: 'big' },
        { from: 'big', to: 'yes', on: 'true' },
        { from: 'big', to: 'no', on: 'false' },
        { from: 'yes', to: 'e1' },
        { from: 'no', to: 'e2' },
      ],
    });
    const decided = await settle(await start({ type: 'orchestration', id }, { amount: 150 }));
    assert.equal(decided.status, 'completed', JSON.stringify(decided.error));
    assert.deepEqual(decided.output, { text: 'BIG' });
    const small = await settle(await start({ type: 'orchestration', id }, { amount: 5 }));
    assert.deepEqual(small.output, { text: 'SMALL' });
    for (const [input, code] of [
      [{}, 'condition_field_missing'],
      [{ amount: 'lots' }, 'condition_type_mismatch'],
      [{ amount: null }, 'condition_type_mismatch'],
    ] as const) {
      const runId = await start({ type: 'orchestration', id }, input);
      const failed = await settle(runId);
      assert.equal(failed.status, 'failed', JSON.stringify(input));
      assert.equal(failed.error.code, code, JSON.stringify(failed.error));
      const graph = (await api('GET', `/api/v1/orchestration-runs/${runId}/graph`)).json();
      const status = Object.fromEntries(
        graph.nodes.map((n: { id: string; status: string }) => [n.id, n.status]),
      );
      assert.equal(status.big, 'failed');
      assert.ok(status.yes !== 'completed' && status.no !== 'completed', JSON.stringify(status));
    }
  });

  test('a join waits for its own incoming edges only, not for other branches of the run', async () => {
    const id = await workflow('Join and a slow side branch', {
      nodes: [
        { id: 'start', type: 'start' },
        { id: 'a', type: 'agent', agentId: agents.Upper },
        { id: 'b', type: 'agent', agentId: agents.Wrap },
        { id: 'j', type: 'join' },
        { id: 'after', type: 'agent', agentId: agents.Upper, input: { text: '{{ previous.a.text }}' } },
        { id: 'slow', type: 'timer', delaySeconds: 3600 },
        { id: 'e1', type: 'end' },
        { id: 'e2', type: 'end' },
      ],
      edges: [
        { from: 'start', to: 'a' },
        { from: 'start', to: 'b' },
        { from: 'start', to: 'slow' },
        { from: 'a', to: 'j' },
        { from: 'b', to: 'j' },
        { from: 'j', to: 'after' },
        { from: 'after', to: 'e1' },
        { from: 'slow', to: 'e2' },
      ],
    });
    const runId = await start({ type: 'orchestration', id }, { text: 'go' });
    const waiting = await settle(runId);
    assert.equal(waiting.status, 'waiting', 'the timer branch still waits');
    const graph = async () =>
      Object.fromEntries(
        (await api('GET', `/api/v1/orchestration-runs/${runId}/graph`))
          .json()
          .nodes.map((n: { id: string; status: string }) => [n.id, n.status]),
      );
    const mid = await graph();
    assert.equal(mid.j, 'completed', JSON.stringify(mid));
    assert.equal(mid.after, 'completed', JSON.stringify(mid));
    assert.equal(mid.slow, 'waiting');
    clock.advance(3600_000);
    await h.ops('POST', '/_ops/runtime/tick');
    const done = await settle(runId);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    clock.set(new Date('2026-11-24T12:00:00Z'));
  });
  test('deterministic agents give the same run twice: output, step outcomes and event sequence', async () => {
    const id = await workflow('Deterministic fan-out', {
      nodes: [
        { id: 'start', type: 'start' },
        { id: 'b', type: 'agent', agentId: agents.Wrap },
        { id: 'a', type: 'agent', agentId: agents.Upper },
        { id: 'j', type: 'join' },
        { id: 'end', type: 'end', input: { joined: '{{ previous }}', first: '{{ nodes.a.text }}' } },
      ],
      edges: [
        { from: 'start', to: 'b' },
        { from: 'start', to: 'a' },
        { from: 'b', to: 'j' },
        { from: 'a', to: 'j' },
        { from: 'j', to: 'end' },
      ],
    });
    const shape = async (runId: string) => {
      const r = await settle(runId);
      const evs = await events(runId);
      return {
        status: r.status,
        output: JSON.stringify(r.output),
        events: evs
          .filter((e) => e.type.startsWith('step.') || e.type.startsWith('run.'))
          .map(
            (e) => `${e.type}@${e.nodeId ?? ''}:${JSON.stringify(e.data.branches ?? e.data.nodeType ?? '')}`,
          )
          .sort(),
      };
    };
    const one = await shape(await start({ type: 'orchestration', id }, { text: 'same' }));
    const two = await shape(await start({ type: 'orchestration', id }, { text: 'same' }));
    assert.equal(one.status, 'completed');
    assert.deepEqual(two, one);
    // Stored as jsonb: object keys come back in PostgreSQL's order; the branch list keeps the edges' order.
    assert.equal(
      one.output,
      JSON.stringify({ first: 'SAME', joined: { a: { text: 'SAME' }, b: { text: '[same]' } } }),
    );
    assert.ok(one.events.includes('step.completed@j:["b","a"]'), one.events.join('\n'));
  });
  test('a run stays on the revision it started on when a new revision is published mid-run', async () => {
    const graph = (text: string, extra: boolean) => ({
      nodes: [
        { id: 'start', type: 'start' },
        { id: 'wait', type: 'signal', signal: 'go' },
        ...(extra ? [{ id: 'shout', type: 'agent', agentId: agents.Upper, input: { text } }] : []),
        { id: 'end', type: 'end', input: { text, revision: extra ? 2 : 1 } },
      ],
      edges: extra
        ? [
            { from: 'start', to: 'wait' },
            { from: 'wait', to: 'shout' },
            { from: 'shout', to: 'end' },
          ]
        : [
            { from: 'start', to: 'wait' },
            { from: 'wait', to: 'end' },
          ],
    });
    const id = await workflow('Pinned', graph('first', false));
    const runId = await start({ type: 'orchestration', id }, {});
    assert.equal((await settle(runId)).status, 'waiting');
    assert.equal((await run(runId)).target.revision, 1);
    const edit = await api('PATCH', `/api/v1/orchestration-definitions/${id}`, {
      expectedVersion: 2,
      graph: graph('second', true),
    });
    assert.equal(edit.statusCode, 200, edit.body);
    const published = await api('POST', `/api/v1/orchestration-definitions/${id}/publish`, {
      expectedVersion: 3,
    });
    assert.equal(published.json().revision.revision, 2);
    const signal = await api('POST', `/api/v1/orchestration-runs/${runId}/signals`, { name: 'go' });
    assert.ok(signal.statusCode < 300, signal.body);
    const done = await settle(runId);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.deepEqual(done.output, { text: 'first', revision: 1 }, 'the revision the run started on');
    assert.equal(done.target.revision, 1);
    const nodes = (await api('GET', `/api/v1/orchestration-runs/${runId}/graph`))
      .json()
      .nodes.map((n: { id: string }) => n.id);
    assert.ok(!nodes.includes('shout'), 'the graph of revision 1');
    const later = await settle(await start({ type: 'orchestration', id }, {}));
    assert.equal(later.target.revision, 2);
  });
});
