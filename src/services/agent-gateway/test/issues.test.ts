import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type GatewayHarness, startGateway } from './support.ts';

/** Spec E issues: versions, accept / reject with expectedVersion, summary, comments, inbox. */
describe('agent-gateway issues and inbox', () => {
  let h: GatewayHarness;
  let token: string;
  let greeter: string;
  const api = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown, t = token) =>
    h.api(t, method, url, payload);
  const issue = async (id: string) => (await api('GET', `/api/v1/issues/${id}`)).json().issue;
  const work = async (id: string) => {
    await h.drive(async () => (await issue(id)).status !== 'in_progress');
    return issue(id);
  };

  before(async () => {
    h = await startGateway();
    token = h.demoToken;
    greeter = (await api('GET', '/api/v1/agents'))
      .json()
      .agents.find((a: { name: string }) => a.name === 'Greeter').id;
  });
  after(() => h?.close());

  test('an assigned issue is worked in a run and waits for review with the result; accept needs the current version', async () => {
    const created = await api('POST', '/api/v1/issues', {
      title: 'Say hello',
      description: 'to the team',
      assignee: { type: 'agent', id: greeter },
    });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().issue.id;
    assert.equal(created.json().issue.status, 'in_progress');
    assert.equal(created.json().issue.version, 1);
    const reviewed = await work(id);
    assert.equal(reviewed.status, 'in_review');
    assert.equal(reviewed.version, 2);
    assert.deepEqual(reviewed.result, { text: 'Hello! You said: Say hello\n\nto the team' });

    const inbox = (await api('GET', '/api/v1/inbox')).json().items;
    assert.ok(inbox.some((i: { kind: string; id: string }) => i.kind === 'issue_review' && i.id === id));

    const stale = await api('POST', `/api/v1/issues/${id}/accept`, { expectedVersion: 1 });
    assert.equal(stale.statusCode, 409);
    assert.equal(stale.json().code, 'version_conflict');
    assert.equal(stale.json().details.currentVersion, 2);
    const accepted = await api('POST', `/api/v1/issues/${id}/accept`, { expectedVersion: 2 });
    assert.equal(accepted.statusCode, 200, accepted.body);
    assert.equal(accepted.json().issue.status, 'done');
    assert.equal(accepted.json().issue.version, 3);
    const again = await api('POST', `/api/v1/issues/${id}/accept`, { expectedVersion: 3 });
    assert.equal(again.statusCode, 409);
    assert.equal(again.json().code, 'invalid_state');
    assert.ok(!(await api('GET', '/api/v1/inbox')).json().items.some((i: { id: string }) => i.id === id));
  });

  test('reject sends the issue back to in progress with the reason; the assignee works it again with it', async () => {
    const id = (
      await api('POST', '/api/v1/issues', { title: 'Draft', assignee: { type: 'agent', id: greeter } })
    ).json().issue.id;
    const reviewed = await work(id);
    const stale = await api('POST', `/api/v1/issues/${id}/reject`, {
      expectedVersion: reviewed.version - 1,
      reason: 'x',
    });
    assert.equal(stale.statusCode, 409);
    assert.equal(stale.json().details.currentVersion, reviewed.version);
    const rejected = await api('POST', `/api/v1/issues/${id}/reject`, {
      expectedVersion: reviewed.version,
      reason: 'Shorter please',
    });
    assert.equal(rejected.statusCode, 200, rejected.body);
    assert.equal(rejected.json().issue.status, 'in_progress');
    assert.equal(rejected.json().issue.version, reviewed.version + 1);
    const second = await work(id);
    assert.equal(second.status, 'in_review');
    assert.match(second.result.text, /Feedback: Shorter please/);
    const summary = (await api('GET', `/api/v1/issues/${id}/summary`)).json().summary;
    assert.equal(summary.runCount, 2);
    assert.deepEqual(
      summary.decisions.map((d: { decision: string; reason: string }) => [d.decision, d.reason]),
      [['rejected', 'Shorter please']],
    );
    assert.match(summary.text, /1 rejection/);
    const comments = (await api('GET', `/api/v1/issues/${id}/comments`)).json().comments;
    assert.deepEqual(
      comments.map((c: { kind: string }) => c.kind),
      ['system', 'rejection', 'system'],
    );
  });

  test('accept and reject only in review; comments do not move the version; PATCH needs the version', async () => {
    const id = (await api('POST', '/api/v1/issues', { title: 'Unassigned' })).json().issue.id;
    const early = await api('POST', `/api/v1/issues/${id}/reject`, { expectedVersion: 1, reason: 'no' });
    assert.equal(early.statusCode, 409);
    assert.equal(early.json().code, 'invalid_state');
    const comment = await api('POST', `/api/v1/issues/${id}/comments`, { body: 'note' });
    assert.equal(comment.statusCode, 201, comment.body);
    assert.equal((await issue(id)).version, 1);
    const stale = await api('PATCH', `/api/v1/issues/${id}`, { expectedVersion: 2, title: 'x' });
    assert.equal(stale.statusCode, 409);
    assert.equal(stale.json().details.currentVersion, 1);
    const assigned = await api('PATCH', `/api/v1/issues/${id}`, {
      expectedVersion: 1,
      assignee: { type: 'agent', id: greeter },
    });
    assert.equal(assigned.statusCode, 200, assigned.body);
    assert.equal(assigned.json().issue.status, 'in_progress');
    assert.equal((await work(id)).status, 'in_review');
  });

  test('the inbox shows pending approvals to editors, not to viewers', async () => {
    const def = await api('POST', '/api/v1/orchestration-definitions', {
      name: 'Gate',
      graph: {
        nodes: [
          { id: 's', type: 'start' },
          { id: 'g', type: 'approval', title: 'Go?' },
          { id: 'e', type: 'end' },
        ],
        edges: [
          { from: 's', to: 'g' },
          { from: 'g', to: 'e', on: 'approved' },
        ],
      },
    });
    const defId = def.json().definition.id;
    await api('POST', `/api/v1/orchestration-definitions/${defId}/publish`, { expectedVersion: 1 });
    await api('POST', '/api/v1/orchestration-runs', { target: { type: 'orchestration', id: defId } });
    const editor = await h.user('editor');
    const viewer = await h.user('viewer');
    const forEditor = (await api('GET', '/api/v1/inbox', undefined, editor.token)).json().items;
    assert.ok(
      forEditor.some((i: { kind: string; title: string }) => i.kind === 'approval' && i.title === 'Go?'),
    );
    const forViewer = (await api('GET', '/api/v1/inbox', undefined, viewer.token)).json().items;
    assert.ok(!forViewer.some((i: { kind: string }) => i.kind === 'approval'));
    const approvalId = forEditor.find((i: { kind: string }) => i.kind === 'approval').id;
    const viewerDecides = await api(
      'POST',
      `/api/v1/approvals/${approvalId}/decide`,
      { decision: 'approve' },
      viewer.token,
    );
    assert.equal(viewerDecides.statusCode, 403);
  });
});
