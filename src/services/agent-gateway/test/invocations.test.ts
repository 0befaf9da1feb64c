/**
 * Endpoints and invocations (spec 002 section E, issue 21): release, rollback and disable; schemas both ways (and a
 * remote `$ref` refused); key rotation overlap and cross-endpoint refusal; idempotent replay (in flight, two
 * instances); states, timeout by the clock, cancel; SSE replay, resume, 410, cross-instance delivery, disconnect.
 */
import assert from 'node:assert/strict';
import { after, before, describe, mock, test } from 'node:test';
import { ManualClock } from '../../../platform/clock.ts';
import { DISPATCH_SHARDS } from '../invocations/invocation-jobs.ts';
import { InvocationService } from '../invocations/invocations.ts';
import { type Answer, type GatewayHarness, startGateway } from './support.ts';

const clock = new ManualClock(new Date('2026-11-24T12:00:00Z'));
let h: GatewayHarness;
let admin: string;
let seeded: Record<string, unknown>;
let n = 0;

before(async () => {
  h = await startGateway({ clock, listen: true });
  admin = (await h.user('admin', { tenant: 'demo', namespace: 'default' })).token;
  seeded = h.platform.credentials('agent-gateway');
});
after(() => h?.close());

const scope = { 'x-platform-tenant': 'demo', 'x-platform-namespace': 'default' };
const api = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) =>
  h.api(admin, method, url, body, scope);
const app = () => h.platform.app('agent-gateway');

async function agent(output: unknown, kind = 'json_transform'): Promise<string> {
  n += 1;
  const definition = kind === 'json_transform' ? { kind, output } : output;
  const res = await api('POST', '/api/v1/agents', { name: `agent ${n}`, definition });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().agent.id as string;
}

async function endpoint(settings: Record<string, unknown>) {
  n += 1;
  const res = await api('POST', '/api/v1/endpoints', {
    slug: `ep-${n}`,
    invocationMode: 'job',
    targetType: 'agent',
    ...settings,
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().endpoint as { id: string; slug: string; version: number };
}

async function publish(id: string) {
  const current = (await api('GET', `/api/v1/endpoints/${id}`)).json().endpoint;
  const res = await api('POST', `/api/v1/endpoints/${id}/publish`, { version: current.version });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().endpoint;
}

async function key(id: string, body: Record<string, unknown> = {}) {
  const res = await api('POST', `/api/v1/endpoints/${id}/keys`, body);
  assert.equal(res.statusCode, 201, res.body);
  return res.json() as { key: string; apiKey: { id: number } };
}

/** A published endpoint of `settings` ({@link endpoint}) and the header of a new API key of it. */
async function live(settings: Record<string, unknown>) {
  const ep = await endpoint(settings);
  await publish(ep.id);
  return { ep, cred: { 'x-api-key': (await key(ep.id)).key } };
}

function submit(
  slug: string,
  credential: Record<string, string>,
  body: unknown,
  idempotencyKey = `k-${++n}`,
  target = app(),
): Promise<Answer> {
  return target.inject({
    method: 'POST',
    url: `/invoke/v1/endpoints/${slug}/jobs`,
    headers: { 'idempotency-key': idempotencyKey, ...credential },
    payload: body as object,
  });
}

const status = async (url: string, credential: Record<string, string>) =>
  (await app().inject({ url, headers: credential })).json().invocation;

async function settle(url: string, credential: Record<string, string>) {
  await h.drive(async () => {
    const s = (await status(url, credential)).status;
    return ['completed', 'failed', 'cancelled', 'timed_out'].includes(s);
  });
  return status(url, credential);
}

/**
 * A published job endpoint over a remote agent (a runtime host's: its jobs stay running until a host reports) with
 * `timeoutSeconds`, and the header of an API key of it.
 */
async function remoteEndpoint(timeoutSeconds: number) {
  const remote = await agent(
    { kind: 'remote', environmentId: seeded.environmentId as string, instructions: {} },
    'remote',
  );
  const ep = await endpoint({ targetId: remote, timeoutSeconds });
  await publish(ep.id);
  return { ep, cred: { 'x-api-key': (await key(ep.id)).key } };
}

/**
 * A published conversation endpoint over a template agent, an API key of it, and a conversation started with "hello":
 * the key (`issued`), its header (`cred`) and the first message's acknowledgement (`start`).
 */
async function startConversation() {
  const chatAgent = await agent({ kind: 'template', template: 'You said: {{ message }}' }, 'template');
  const ep = await endpoint({ targetId: chatAgent, invocationMode: 'conversation' });
  await publish(ep.id);
  const issued = await key(ep.id);
  const cred = { 'x-api-key': issued.key };
  const start = await app().inject({
    method: 'POST',
    url: `/invoke/v1/endpoints/${ep.slug}/conversations`,
    headers: { 'idempotency-key': `c-${++n}`, ...cred },
    payload: { message: 'hello' },
  });
  return { ep, issued, cred, start };
}

describe('endpoints', () => {
  test('a schema with a remote $ref is refused; a draft is not live; publish needs the version', async () => {
    const agentId = await agent({ ok: true });
    const bad = await api('POST', '/api/v1/endpoints', {
      slug: 'remote-ref',
      invocationMode: 'job',
      targetType: 'agent',
      targetId: agentId,
      inputSchema: { type: 'object', properties: { a: { $ref: 'https://example.com/a.json' } } },
    });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json().details.issues[0].field, /inputSchema\.properties\.a\.\$ref/);
    assert.match(bad.json().details.issues[0].message, /remote \$ref/);
    const ep = await endpoint({ targetId: agentId });
    const { key: k } = await key(ep.id);
    const draft = await submit(ep.slug, { 'x-api-key': k }, { title: 't', input: {} });
    assert.equal(draft.statusCode, 404, 'a draft is not a live entry');
    const stale = await api('POST', `/api/v1/endpoints/${ep.id}/publish`, { version: ep.version + 5 });
    assert.equal(stale.statusCode, 409);
    assert.equal(stale.json().code, 'version_conflict');
    const live = await publish(ep.id);
    assert.equal(live.status, 'published');
    assert.equal(live.currentRelease.number, 1);
    assert.equal((await submit(ep.slug, { 'x-api-key': k }, { title: 't', input: {} })).statusCode, 202);
  });

  test('a new release switches the target, rollback points back, history is kept; disable lets accepted work finish', async () => {
    const a = await agent({ from: 'A' });
    const b = await agent({ from: 'B' });
    const ep = await endpoint({ targetId: a });
    await publish(ep.id);
    const { key: k } = await key(ep.id);
    const cred = { 'x-api-key': k };
    const run = async () => {
      const ack = await submit(ep.slug, cred, { title: 't', input: {} });
      assert.equal(ack.statusCode, 202, ack.body);
      return (await settle(ack.json().statusUrl, cred)).result;
    };
    assert.deepEqual(await run(), { from: 'A' });
    let current = (await api('GET', `/api/v1/endpoints/${ep.id}`)).json().endpoint;
    const patched = await api('PATCH', `/api/v1/endpoints/${ep.id}`, {
      version: current.version,
      targetId: b,
    });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.deepEqual(await run(), { from: 'A' }, 'the draft is not live before publication');
    await publish(ep.id);
    assert.deepEqual(await run(), { from: 'B' });
    current = (await api('GET', `/api/v1/endpoints/${ep.id}`)).json().endpoint;
    const back = await api('POST', `/api/v1/endpoints/${ep.id}/rollback`, {
      version: current.version,
      releaseNumber: 1,
    });
    assert.equal(back.statusCode, 200, back.body);
    assert.equal(back.json().endpoint.currentRelease.number, 1);
    assert.deepEqual(await run(), { from: 'A' });
    const history = (await api('GET', `/api/v1/endpoints/${ep.id}/releases`)).json();
    assert.deepEqual(
      history.releases.map((r: { number: number }) => r.number),
      [2, 1],
    );
    assert.deepEqual(
      history.history.map((m: { action: string; releaseNumber: number | null }) => [
        m.action,
        m.releaseNumber,
      ]),
      [
        ['created', null],
        ['published', 1],
        ['published', 2],
        ['rolled_back', 1],
      ],
    );
    // Disable: an accepted job finishes, a new one is refused.
    const accepted = await submit(ep.slug, cred, { title: 'before', input: {} });
    current = (await api('GET', `/api/v1/endpoints/${ep.id}`)).json().endpoint;
    const off = await api('POST', `/api/v1/endpoints/${ep.id}/disable`, { version: current.version });
    assert.equal(off.statusCode, 200, off.body);
    const refused = await submit(ep.slug, cred, { title: 'after', input: {} });
    assert.equal(refused.statusCode, 404, 'spec E: a state problem is a 404');
    assert.equal(refused.json().code, 'endpoint_disabled');
    assert.equal((await settle(accepted.json().statusUrl, cred)).status, 'completed');
  });
});

describe('an instance that read the endpoint before a change elsewhere', () => {
  test('follows a new release, a looser or stricter input schema and a disable made through another instance', async () => {
    const a = await agent({ from: 'A' });
    const b = await agent({ from: 'B' });
    const strict = { type: 'object', required: ['n'], properties: { n: { type: 'number' } } };
    const { ep, cred } = await live({ targetId: a, inputSchema: strict });
    const other = (await h.platform.anotherInstance()).app('agent-gateway');
    const otherSubmit = (input: unknown) => submit(ep.slug, cred, { title: 't', input }, undefined, other);
    const resultOf = async (res: Answer) => {
      assert.equal(res.statusCode, 202, res.body);
      return (await settle(res.json().statusUrl, cred)).result;
    };
    // The other instance reads (and keeps) the endpoint on release 1.
    assert.deepEqual(await resultOf(await otherSubmit({ n: 1 })), { from: 'A' });
    assert.equal((await otherSubmit({})).statusCode, 400);
    // Here: release 2 with another target and no required field.
    let current = (await api('GET', `/api/v1/endpoints/${ep.id}`)).json().endpoint;
    await api('PATCH', `/api/v1/endpoints/${ep.id}`, {
      version: current.version,
      targetId: b,
      inputSchema: { type: 'object' },
    });
    await publish(ep.id);
    assert.deepEqual(
      await resultOf(await otherSubmit({})),
      { from: 'B' },
      'refused by release 1, taken by 2',
    );
    assert.deepEqual(await resultOf(await otherSubmit({ n: 2 })), { from: 'B' });
    // Release 3 requires the field again: the other instance refuses what release 3 refuses.
    current = (await api('GET', `/api/v1/endpoints/${ep.id}`)).json().endpoint;
    await api('PATCH', `/api/v1/endpoints/${ep.id}`, { version: current.version, inputSchema: strict });
    await publish(ep.id);
    const refused = await otherSubmit({});
    assert.equal(refused.statusCode, 400, refused.body);
    assert.equal(refused.json().code, 'validation_failed');
    // Disabled here: refused there, nothing written.
    current = (await api('GET', `/api/v1/endpoints/${ep.id}`)).json().endpoint;
    await api('POST', `/api/v1/endpoints/${ep.id}/disable`, { version: current.version });
    const before = (await api('GET', `/api/v1/endpoints/${ep.id}`)).json().endpoint;
    const off = await otherSubmit({ n: 3 });
    assert.equal(off.statusCode, 404, off.body);
    assert.equal(off.json().code, 'endpoint_disabled');
    const rows = await h.platform.booted.database.pool.query(
      `select count(*)::int as n from agent_gateway.invocations where endpoint_id = $1`,
      [ep.id],
    );
    assert.equal(rows.rows[0].n, 3, 'the three accepted jobs only');
    assert.equal(before.status, 'disabled');
  });
});

describe('schemas both ways', () => {
  test('input: 400 naming every issue, 413 past the payload limit; output: a breaking target ends failed', async () => {
    const agentId = await agent({ count: 'not a number' });
    const { ep, cred } = await live({
      targetId: agentId,
      maxPayloadBytes: 100,
      inputSchema: {
        type: 'object',
        required: ['text', 'lang'],
        properties: { text: { type: 'string' }, lang: { type: 'string' } },
      },
      outputSchema: { type: 'object', required: ['count'], properties: { count: { type: 'integer' } } },
    });
    const invalid = await submit(ep.slug, cred, { title: 't', input: { text: 5 } });
    assert.equal(invalid.statusCode, 400);
    const fields = invalid
      .json()
      .details.issues.map((i: { field: string }) => i.field)
      .sort();
    assert.deepEqual(fields, ['body.input.lang', 'body.input.text']);
    const big = await submit(ep.slug, cred, { title: 't', input: { text: 'x'.repeat(200), lang: 'en' } });
    assert.equal(big.statusCode, 413);
    assert.equal(big.json().code, 'payload_too_large');
    const ok = await submit(ep.slug, cred, { title: 't', input: { text: 'hi', lang: 'en' } });
    assert.equal(ok.statusCode, 202, ok.body);
    const done = await settle(ok.json().statusUrl, cred);
    assert.equal(done.status, 'failed');
    assert.equal(done.error.code, 'output_schema_mismatch');
    assert.match(done.error.message, /count/);
    assert.equal(done.result, null);
  });
  test('$async is refused anywhere in a schema (ajv would answer a Promise); input must be a JSON object', async () => {
    const agentId = await agent({ ok: true });
    for (const [field, schema, pointer] of [
      ['inputSchema', { $async: true, type: 'object', required: ['a'] }, /inputSchema\.\$async$/],
      [
        'outputSchema',
        { type: 'object', properties: { a: { $async: true, type: 'string' } } },
        /outputSchema\.properties\.a\.\$async$/,
      ],
    ] as const) {
      const res = await api('POST', '/api/v1/endpoints', {
        slug: `async-${++n}`,
        invocationMode: 'job',
        targetType: 'agent',
        targetId: agentId,
        [field]: schema,
      });
      assert.equal(res.statusCode, 400, res.body);
      assert.match(res.json().details.issues[0].field, pointer);
      assert.match(res.json().details.issues[0].message, /\$async is refused/);
    }
    const data = await api('POST', '/api/v1/endpoints', {
      slug: `async-data-${++n}`,
      invocationMode: 'job',
      targetType: 'agent',
      targetId: agentId,
      inputSchema: {
        type: 'object',
        const: { $async: true, $ref: 'https://example.com/x' },
        examples: [{ $ref: 'https://example.com/y' }],
      },
    });
    assert.equal(data.statusCode, 201, `data under const/examples is not a schema: ${data.body}`);
    const { ep, cred } = await live({ targetId: agentId, inputSchema: true });
    for (const input of [null, 'text', 5, [1]]) {
      const res = await submit(ep.slug, cred, { title: 't', input });
      assert.equal(res.statusCode, 400, `input ${JSON.stringify(input)}: ${res.body}`);
      assert.equal(res.json().code, 'validation_failed');
    }
    const missing = await submit(ep.slug, cred, { title: 't' });
    assert.equal(missing.statusCode, 400);
  });

  test('patterns run on RE2 (linear time): a catastrophic pattern is safe; lookaround is refused when saved', {
    timeout: 30_000,
  }, async () => {
    const { ep, cred } = await live({
      targetId: await agent({ ok: true }),
      inputSchema: {
        type: 'object',
        properties: {
          evil: { type: 'string', pattern: '^(a+)+$' },
          code: { type: 'string', pattern: '^[0-9]{3}$' },
        },
        patternProperties: { '^(x+x+)+y$': { type: 'integer' } },
      },
    });
    // On JavaScript's backtracking engine each of these takes longer than the test's timeout (2^40 paths).
    const started = performance.now();
    const evil = await submit(ep.slug, cred, {
      title: 't',
      input: { evil: `${'a'.repeat(40)}b`, code: '12', [`${'x'.repeat(40)}y`]: 'not an integer' },
    });
    const elapsed = performance.now() - started;
    assert.equal(evil.statusCode, 400, evil.body);
    assert.deepEqual(
      evil
        .json()
        .details.issues.map((i: { field: string }) => i.field)
        .sort(),
      ['body.input.code', 'body.input.evil', `body.input.${'x'.repeat(40)}y`],
    );
    assert.ok(elapsed < 5000, `validated in ${elapsed.toFixed(0)} ms`);
    // Two patterns of one schema are two expressions (ajv keys compiled patterns by their text).
    const ok = await submit(ep.slug, cred, { title: 't', input: { evil: 'aaa', code: '123', xxy: 1 } });
    assert.equal(ok.statusCode, 202, ok.body);
    const lookahead = await api('POST', '/api/v1/endpoints', {
      slug: `lookahead-${++n}`,
      invocationMode: 'job',
      targetType: 'agent',
      targetId: await agent({ ok: true }),
      inputSchema: { type: 'object', properties: { a: { type: 'string', pattern: '^(?=a)a$' } } },
    });
    assert.equal(lookahead.statusCode, 400, lookahead.body);
    assert.match(lookahead.json().details.issues[0].message, /regexp|pattern/i);
  });

  test('JavaScript \\u escapes in patterns are translated to RE2 (\\x{...}): ^\\u0041+$ matches AAA', async () => {
    const { ep, cred } = await live({
      targetId: await agent({ ok: true }),
      inputSchema: {
        type: 'object',
        properties: {
          a: { type: 'string', pattern: '^\\u0041+$' },
          face: { type: 'string', pattern: '^\\uD83D\\uDE00$' },
          braced: { type: 'string', pattern: '^\\u{1F600}$' },
          literal: { type: 'string', pattern: '^\\\\u0041$' },
        },
      },
    });
    const ok = await submit(ep.slug, cred, {
      title: 't',
      input: { a: 'AAA', face: '😀', braced: '😀', literal: '\\u0041' },
    });
    assert.equal(ok.statusCode, 202, ok.body);
    const bad = await submit(ep.slug, cred, {
      title: 't',
      input: { a: 'AAB', face: 'x', braced: 'x', literal: 'A' },
    });
    assert.equal(bad.statusCode, 400, bad.body);
    assert.deepEqual(
      bad
        .json()
        .details.issues.map((i: { field: string }) => i.field)
        .sort(),
      ['body.input.a', 'body.input.braced', 'body.input.face', 'body.input.literal'],
    );
  });

  test('a stored schema RE2 cannot compile: publish and rollback refuse it (400), an input schema is a 400, an output schema fails the invocation', async () => {
    const pool = h.platform.booted.database.pool;
    const lookahead = { type: 'object', properties: { a: { type: 'string', pattern: '^(?=a)a$' } } };
    // Schemas saved before a rule existed are written here directly, as such data would be.
    const storeRelease = (id: string, field: 'inputSchema' | 'outputSchema', number = 1) =>
      pool.query(
        `update agent_gateway.endpoint_releases set settings = jsonb_set(settings, $2, $3::jsonb)
          where endpoint_id = $1 and number = $4`,
        [id, `{${field}}`, JSON.stringify(lookahead), number],
      );
    // Publication of such a draft.
    const drafted = await endpoint({ targetId: await agent({ ok: true }) });
    await pool.query(
      `update agent_gateway.endpoints set draft = jsonb_set(draft, '{inputSchema}', $2::jsonb) where id = $1`,
      [drafted.id, JSON.stringify(lookahead)],
    );
    const refused = await api('POST', `/api/v1/endpoints/${drafted.id}/publish`, {
      version: drafted.version,
    });
    assert.equal(refused.statusCode, 400, refused.body);
    assert.equal(refused.json().code, 'endpoint_schema_unsupported');
    assert.equal(refused.json().details.issues[0].field, 'draft.inputSchema');
    assert.match(refused.json().details.issues[0].message, /\^\(\?=a\)a\$/);
    assert.equal((await api('GET', `/api/v1/endpoints/${drafted.id}`)).json().endpoint.status, 'draft');
    // Rollback to such a release.
    const rolled = await endpoint({ targetId: await agent({ ok: true }) });
    await publish(rolled.id);
    await publish(rolled.id);
    await storeRelease(rolled.id, 'outputSchema', 1);
    const current = (await api('GET', `/api/v1/endpoints/${rolled.id}`)).json().endpoint;
    const back = await api('POST', `/api/v1/endpoints/${rolled.id}/rollback`, {
      version: current.version,
      releaseNumber: 1,
    });
    assert.equal(back.statusCode, 400, back.body);
    assert.equal(back.json().code, 'endpoint_schema_unsupported');
    assert.equal(back.json().details.issues[0].field, 'release.outputSchema');
    // A live release with such an input schema: a 400 telling the endpoint's defect, never a 500.
    const input = await endpoint({ targetId: await agent({ ok: true }) });
    await publish(input.id);
    await storeRelease(input.id, 'inputSchema');
    const inputCred = { 'x-api-key': (await key(input.id)).key };
    for (let i = 0; i < 2; i++) {
      const res = await submit(input.slug, inputCred, { title: 't', input: { a: 'a' } });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().code, 'endpoint_schema_unsupported');
      assert.match(res.json().message, /\^\(\?=a\)a\$/);
    }
    // ... with such an output schema: the invocation ends failed with the reason (its dispatch is not retried).
    const output = await endpoint({ targetId: await agent({ a: 'a' }) });
    await publish(output.id);
    await storeRelease(output.id, 'outputSchema');
    const outputCred = { 'x-api-key': (await key(output.id)).key };
    const ack = await submit(output.slug, outputCred, { title: 't', input: {} });
    assert.equal(ack.statusCode, 202, ack.body);
    const done = await settle(ack.json().statusUrl, outputCred);
    assert.equal(done.status, 'failed');
    assert.equal(done.error.code, 'endpoint_schema_unsupported');
    assert.match(done.error.message, /\^\(\?=a\)a\$/);
  });

  test('ajv does not keep the schemas of evicted validators', async () => {
    const { ajvCachedSchemas, schemaIssues } = await import('../endpoints/endpoint-settings.ts');
    const start = ajvCachedSchemas();
    for (let i = 0; i < 1500; i += 1)
      assert.deepEqual(
        schemaIssues({ type: 'object', properties: { [`p${i}`]: { type: 'string' } } }, 's'),
        [],
      );
    assert.ok(ajvCachedSchemas() <= start + 1000, `ajv holds ${ajvCachedSchemas() - start} more schemas`);
  });
});

describe('credentials', () => {
  test('a key of one endpoint never works on another; credential types never substitute', async () => {
    const agentId = await agent({ ok: true });
    const one = await endpoint({ targetId: agentId });
    const two = await endpoint({ targetId: agentId });
    const platform = await endpoint({ targetId: agentId, authPolicy: { type: 'platform' } });
    for (const e of [one, two, platform]) await publish(e.id);
    const keyOne = (await key(one.id)).key;
    const wrong = await submit(two.slug, { 'x-api-key': keyOne }, { title: 't', input: {} });
    assert.equal(wrong.statusCode, 401);
    assert.equal(wrong.json().code, 'unauthenticated');
    const user = await submit(one.slug, { authorization: `Bearer ${admin}` }, { title: 't', input: {} });
    assert.equal(user.statusCode, 401);
    assert.equal(user.json().code, 'wrong_credential_type');
    const token = (await api('POST', '/api/v1/platform-tokens', {})).json().token as string;
    const tokenOnKeyEndpoint = await submit(
      one.slug,
      { authorization: `Bearer ${token}` },
      { title: 't', input: {} },
    );
    assert.equal(tokenOnKeyEndpoint.statusCode, 401);
    assert.equal(tokenOnKeyEndpoint.json().code, 'wrong_credential_type');
    const tokenAsKey = await submit(one.slug, { 'x-api-key': token }, { title: 't', input: {} });
    assert.equal(tokenAsKey.json().code, 'wrong_credential_type');
    const keyOnPlatform = await submit(
      platform.slug,
      { 'x-api-key': (await key(platform.id)).key },
      { title: 't', input: {} },
    );
    assert.equal(keyOnPlatform.statusCode, 401);
    assert.equal(keyOnPlatform.json().code, 'wrong_credential_type');
    const viaToken = await submit(
      platform.slug,
      { authorization: `Bearer ${token}` },
      { title: 't', input: {} },
    );
    assert.equal(viaToken.statusCode, 202, viaToken.body);
    // The status of one endpoint's invocation is not readable with another endpoint's key.
    const mine = await submit(one.slug, { 'x-api-key': keyOne }, { title: 't', input: {} });
    const keyTwo = (await key(two.id)).key;
    const peek = await app().inject({ url: mine.json().statusUrl, headers: { 'x-api-key': keyTwo } });
    assert.equal(peek.statusCode, 404);
    const byToken = await app().inject({
      url: mine.json().statusUrl,
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(byToken.statusCode, 404, 'a platform token does not read an api_key endpoint’s invocation');
    const ownByToken = await app().inject({
      url: viaToken.json().statusUrl,
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(ownByToken.statusCode, 200);
  });

  test('rotation: both keys work during the overlap, the old one stops after it', async () => {
    const ep = await endpoint({ targetId: await agent({ ok: true }) });
    await publish(ep.id);
    const old = await key(ep.id);
    const rotated = await api('POST', `/api/v1/endpoints/${ep.id}/keys/${old.apiKey.id}/rotate`, {
      overlapSeconds: 3600,
    });
    assert.equal(rotated.statusCode, 201, rotated.body);
    const fresh = rotated.json().key as string;
    assert.notEqual(fresh, old.key);
    assert.equal(
      (await submit(ep.slug, { 'x-api-key': old.key }, { title: 't', input: {} })).statusCode,
      202,
    );
    assert.equal((await submit(ep.slug, { 'x-api-key': fresh }, { title: 't', input: {} })).statusCode, 202);
    clock.advance(3601_000);
    const expired = await submit(ep.slug, { 'x-api-key': old.key }, { title: 't', input: {} });
    assert.equal(expired.statusCode, 401);
    assert.equal(expired.json().code, 'token_expired');
    assert.equal((await submit(ep.slug, { 'x-api-key': fresh }, { title: 't', input: {} })).statusCode, 202);
    const listed = (await api('GET', `/api/v1/endpoints/${ep.id}/keys`)).json().apiKeys;
    assert.equal(listed.length, 2);
    assert.ok(
      listed.every((k: Record<string, unknown>) => !('key' in k)),
      'secrets are shown once',
    );
  });

  test('rotation keeps the expiry period and makes one successor, also when two rotations race', async () => {
    const ep = await endpoint({ targetId: await agent({ ok: true }) });
    await publish(ep.id);
    const hourly = await key(ep.id, { expiresInSeconds: 3600 });
    const rotated = await api('POST', `/api/v1/endpoints/${ep.id}/keys/${hourly.apiKey.id}/rotate`, {
      overlapSeconds: 60,
    });
    assert.equal(rotated.statusCode, 201, rotated.body);
    assert.equal(
      Date.parse(rotated.json().apiKey.expiresAt),
      clock.nowMs() + 3600_000,
      'a 1 h key rotates into a 1 h key',
    );
    const again = await api('POST', `/api/v1/endpoints/${ep.id}/keys/${hourly.apiKey.id}/rotate`, {});
    assert.equal(again.statusCode, 409);
    assert.equal(again.json().code, 'invalid_state');
    const other = await key(ep.id);
    const racing = await Promise.all(
      [1, 2].map(() => api('POST', `/api/v1/endpoints/${ep.id}/keys/${other.apiKey.id}/rotate`, {})),
    );
    assert.deepEqual(racing.map((r) => r.statusCode).sort(), [201, 409]);
    assert.equal(
      racing.find((r) => r.statusCode === 201)!.json().apiKey.expiresAt,
      null,
      'a key without expiry rotates into one without expiry',
    );
  });
});

describe('idempotency', () => {
  test('same key and body replays; another body is 409; two instances racing one key make one invocation', async () => {
    const { ep, cred } = await live({ targetId: await agent({ ok: true }) });
    const first = await submit(ep.slug, cred, { title: 't', input: { a: 1 } }, 'same-key');
    const again = await submit(ep.slug, cred, { title: 't', input: { a: 1 } }, 'same-key');
    assert.equal(again.statusCode, 202);
    assert.equal(again.headers['idempotency-replayed'], 'true');
    assert.deepEqual(again.json(), first.json());
    const changed = await submit(ep.slug, cred, { title: 't', input: { a: 2 } }, 'same-key');
    assert.equal(changed.statusCode, 409);
    assert.equal(changed.json().code, 'idempotency_key_reused');
    const missing = await app().inject({
      method: 'POST',
      url: `/invoke/v1/endpoints/${ep.slug}/jobs`,
      headers: cred,
      payload: { title: 't', input: {} },
    });
    assert.equal(missing.statusCode, 400);
    const other = (await h.platform.anotherInstance()).app('agent-gateway');
    const raced = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        submit(ep.slug, cred, { title: 'race', input: {} }, 'race-key', i % 2 === 0 ? app() : other),
      ),
    );
    for (const r of raced) assert.equal(r.statusCode, 202, r.body);
    const ids = new Set(raced.map((r) => r.json().invocationId));
    assert.equal(ids.size, 1, 'every racer got the first answer');
  });

  test('a retry sent while the first request is still in flight waits for it and replays its answer (forced overlap)', async () => {
    const { ep, cred } = await live({ targetId: await agent({ ok: true }) });
    const pg = await import('pg');
    const blocker = new pg.default.Client({ connectionString: h.platform.database.url });
    const watcher = new pg.default.Client({ connectionString: h.platform.database.url });
    await blocker.connect();
    await watcher.connect();
    /** Waits until `n` sessions wait for a lock of `kind` (pg_locks), or fails after 10 s. */
    const waitersOf = async (kind: 'advisory' | 'transactionid', n: number) => {
      for (let i = 0; i < 500; i++) {
        const { rows } = await watcher.query(
          `select count(*)::int as n from pg_locks l join pg_stat_activity a on a.pid = l.pid
            where not l.granted and l.locktype = $1 and a.datname = current_database()`,
          [kind],
        );
        if (rows[0].n >= n) return;
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.fail(`no session waited for a ${kind} lock`);
    };
    try {
      // Hold the first request inside its transaction, after it claimed the key and wrote its invocation: the check
      // of its shard's dispatch drain waits for the shard's lock, which this session holds (every shard's, as a
      // drain's scan does).
      await blocker.query('begin');
      await blocker.query(
        `select pg_advisory_xact_lock(hashtext('agent_gateway:dispatch-drain'), s) from generate_series(0, $1 - 1) s`,
        [DISPATCH_SHARDS],
      );
      const body = { title: 'in flight', input: { n: 1 } };
      const first = submit(ep.slug, cred, body, 'in-flight-key');
      await waitersOf('advisory', 1);
      // The retry: the key's record is not committed, so it cannot be read; its claim waits for the first one's
      // transaction (the claimed row's lock).
      const retry = submit(ep.slug, cred, body, 'in-flight-key');
      await waitersOf('transactionid', 1);
      await blocker.query('commit');
      const [a, b] = await Promise.all([first, retry]);
      assert.equal(a.statusCode, 202, a.body);
      assert.equal(b.statusCode, 202, b.body);
      assert.equal(a.headers['idempotency-replayed'], undefined);
      assert.equal(b.headers['idempotency-replayed'], 'true');
      assert.deepEqual(b.json(), a.json(), 'the retry replays the first answer');
      const { rows } = await watcher.query(
        `select count(*)::int as n from agent_gateway.invocations where endpoint_id = $1 and title = 'in flight'`,
        [ep.id],
      );
      assert.equal(rows[0].n, 1, 'one invocation');
    } finally {
      await blocker.query('rollback').catch(() => undefined);
      await blocker.end();
      await watcher.end();
    }
  });
});

describe('idempotency after a change (platform token)', () => {
  test('a retry of an accepted request replays after the endpoint was disabled or changed; a new key is refused', async () => {
    const token = (await api('POST', '/api/v1/platform-tokens', {})).json().token as string;
    const cred = { authorization: `Bearer ${token}` };
    // A job: accepted, then the endpoint is disabled.
    const job = await endpoint({ targetId: await agent({ ok: true }), authPolicy: { type: 'platform' } });
    await publish(job.id);
    const body = { title: 't', input: { a: 1 } };
    const first = await submit(job.slug, cred, body, 'platform-retry');
    assert.equal(first.statusCode, 202, first.body);
    let current = (await api('GET', `/api/v1/endpoints/${job.id}`)).json().endpoint;
    const off = await api('POST', `/api/v1/endpoints/${job.id}/disable`, { version: current.version });
    assert.equal(off.statusCode, 200, off.body);
    const again = await submit(job.slug, cred, body, 'platform-retry');
    assert.equal(again.statusCode, 202, again.body);
    assert.equal(again.headers['idempotency-replayed'], 'true');
    assert.deepEqual(again.json(), first.json());
    const fresh = await submit(job.slug, cred, body, 'platform-new');
    assert.equal(fresh.statusCode, 404, fresh.body);
    assert.equal(fresh.json().code, 'endpoint_disabled');
    // A conversation: started, then a new release takes platform tokens no more.
    const chat = await endpoint({
      targetId: await agent({ kind: 'template', template: 'You said: {{ message }}' }, 'template'),
      invocationMode: 'conversation',
      authPolicy: { type: 'platform' },
    });
    await publish(chat.id);
    const start = (k: string) =>
      app().inject({
        method: 'POST',
        url: `/invoke/v1/endpoints/${chat.slug}/conversations`,
        headers: { 'idempotency-key': k, ...cred },
        payload: { message: 'hello' },
      });
    const opened = await start('platform-start');
    assert.equal(opened.statusCode, 202, opened.body);
    current = (await api('GET', `/api/v1/endpoints/${chat.id}`)).json().endpoint;
    const patched = await api('PATCH', `/api/v1/endpoints/${chat.id}`, {
      version: current.version,
      authPolicy: { type: 'api_key' },
    });
    assert.equal(patched.statusCode, 200, patched.body);
    await publish(chat.id);
    const reopened = await start('platform-start');
    assert.equal(reopened.statusCode, 202, reopened.body);
    assert.equal(reopened.headers['idempotency-replayed'], 'true');
    assert.deepEqual(reopened.json(), opened.json());
    const refused = await start('platform-start-new');
    assert.equal(refused.statusCode, 401, refused.body);
    assert.equal(refused.json().code, 'wrong_credential_type');
  });
});

describe('states', () => {
  test('every move is recorded; the timeout is enforced by the clock; cancel before and while running', async () => {
    const { ep, cred } = await remoteEndpoint(60);
    // Cancelled before dispatch.
    const early = await submit(ep.slug, cred, { title: 'early', input: {} });
    const cancelEarly = await app().inject({
      method: 'POST',
      url: `${early.json().statusUrl}/cancel`,
      headers: cred,
    });
    assert.equal(cancelEarly.statusCode, 202, cancelEarly.body);
    assert.equal(cancelEarly.json().invocation.status, 'cancelled');
    // Running (its remote step waits for a host), then cancelled.
    const running = await submit(ep.slug, cred, { title: 'running', input: {} });
    await h.platform.runDueJobs();
    const seen = await status(running.json().statusUrl, cred);
    assert.equal(seen.status, 'waiting', 'its remote step waits for a runtime host');
    assert.deepEqual(
      seen.history.map((m: { status: string }) => m.status),
      ['accepted', 'dispatching', 'running', 'waiting'],
    );
    const cancel = await app().inject({
      method: 'POST',
      url: `${running.json().statusUrl}/cancel`,
      headers: cred,
    });
    assert.equal(cancel.json().invocation.status, 'cancelled');
    assert.deepEqual(
      cancel.json().invocation.history.map((m: { status: string }) => m.status),
      ['accepted', 'dispatching', 'running', 'waiting', 'cancel_requested', 'cancelled'],
    );
    const twice = await app().inject({
      method: 'POST',
      url: `${running.json().statusUrl}/cancel`,
      headers: cred,
    });
    assert.equal(twice.statusCode, 409);
    // Timed out by the clock: not before the deadline, then at the sweep.
    const slow = await submit(ep.slug, cred, { title: 'slow', input: {} });
    await h.platform.runDueJobs();
    clock.advance(59_000);
    await h.ops('POST', '/_ops/invocations/tick');
    assert.notEqual((await status(slow.json().statusUrl, cred)).status, 'timed_out');
    clock.advance(2000);
    await h.ops('POST', '/_ops/invocations/tick');
    const out = await status(slow.json().statusUrl, cred);
    assert.equal(out.status, 'timed_out');
    assert.equal(out.error.code, 'timed_out');
    assert.ok(out.runId, 'it had started its run');
    const run = (await api('GET', `/api/v1/orchestration-runs/${out.runId}`)).json();
    assert.equal(run.run.status, 'cancelled', "a timed-out invocation's run is cancelled");
    // Timed out before dispatch: its deadline passed while its job waited.
    const late = await submit(ep.slug, cred, { title: 'late', input: {} });
    clock.advance(61_000);
    await h.platform.runDueJobs();
    const never = await status(late.json().statusUrl, cred);
    assert.equal(never.status, 'timed_out');
    assert.equal(never.runId, null, 'no run was started');
    assert.deepEqual(
      never.history.map((m: { status: string }) => m.status),
      ['accepted', 'timed_out'],
    );
  });
});

describe('timeout at the deadline', () => {
  test('a job left running gets a timeout job at its deadline: it ends the invocation then, not before, with no sweep', async () => {
    const { ep, cred } = await remoteEndpoint(30);
    const ack = (await submit(ep.slug, cred, { title: 'slow', input: {} })).json();
    await h.platform.runDueJobs();
    assert.equal((await status(ack.statusUrl, cred)).status, 'waiting');
    const pg = await import('pg');
    const client = new pg.default.Client({ connectionString: h.platform.database.url });
    await client.connect();
    const jobKey = `agent-gateway:invocation-timeout:timeout:${ack.invocationId}`;
    // Seconds until the job runs, by the database clock; then the passing of that time, for Graphile Worker.
    const secondsLeft = async () =>
      Number(
        (
          await client.query(
            'select extract(epoch from run_at - now()) as s from graphile_worker._private_jobs where key = $1',
            [jobKey],
          )
        ).rows[0]?.s,
      );
    const timePasses = () =>
      client.query('update graphile_worker._private_jobs set run_at = now() where key = $1', [jobKey]);
    try {
      const left = await secondsLeft();
      assert.ok(
        left > 25 && left <= 30,
        `the job runs at the deadline, 30 s after acceptance (${left} s left)`,
      );
      // Run early (by the database clock) while the injected clock is before the deadline: nothing ends.
      clock.advance(20_000);
      await timePasses();
      await h.platform.runDueJobs();
      assert.equal((await status(ack.statusUrl, cred)).status, 'waiting', 'not before the deadline');
      const again = await secondsLeft();
      assert.ok(again > 5 && again <= 10, `looked at again when the 10 s left have passed (${again} s)`);
      // At the deadline on the injected clock, the job (not the minute sweep) ends it.
      clock.advance(10_000);
      await timePasses();
      await h.platform.runDueJobs();
      const out = await status(ack.statusUrl, cred);
      assert.equal(out.status, 'timed_out');
      assert.equal(out.error.code, 'timed_out');
      assert.equal(out.history.at(-1).at, clock.now().toISOString(), 'at the deadline');
      const run = (await api('GET', `/api/v1/orchestration-runs/${out.runId}`)).json();
      assert.equal(run.run.status, 'cancelled', "the timed-out invocation's run is cancelled");
      assert.ok(Number.isNaN(await secondsLeft()), 'the timeout job is done');
    } finally {
      await client.end();
    }
  });

  test('an instant target ends in its dispatch and leaves no timeout job', async () => {
    const { ep, cred } = await live({ targetId: await agent({ ok: true }) });
    const ack = (await submit(ep.slug, cred, { title: 'fast', input: {} })).json();
    await h.platform.runDueJobs();
    const done = await status(ack.statusUrl, cred);
    assert.equal(done.status, 'completed');
    assert.deepEqual(
      done.history.map((m: { status: string }) => m.status),
      ['accepted', 'dispatching', 'running', 'completed'],
    );
    const jobs = await h.platform.booted.database.pool.query(
      'select key from graphile_worker._private_jobs where key like $1',
      [`%${ack.invocationId}%`],
    );
    assert.deepEqual(jobs.rows, []);
  });
});

describe('retention prune', () => {
  test("the prune's read of finished invocations goes through the partial index on finished_at", async () => {
    const client = await h.platform.booted.database.pool.connect();
    try {
      await client.query('begin');
      await client.query('set local enable_seqscan = off');
      const plan = await client.query(
        `explain select id from agent_gateway.invocations
          where finished_at <= now() and events_pruned_through = 0 order by finished_at limit 1000`,
      );
      assert.match(plan.rows.map((r) => r['QUERY PLAN']).join('\n'), /invocations_prune_idx/);
    } finally {
      await client.query('rollback');
      client.release();
    }
  });
});

describe('dispatch drain', () => {
  /** Runs `sqlText` on a connection of its own. */
  async function query(sqlText: string, values: unknown[] = []) {
    const pg = await import('pg');
    const client = new pg.default.Client({ connectionString: h.platform.database.url });
    await client.connect();
    try {
      return (await client.query(sqlText, values)).rows;
    } finally {
      await client.end();
    }
  }
  /** A published job endpoint over an instant agent and its key's header, with no job left queued before it. */
  async function quietEndpoint() {
    const published = await live({ targetId: await agent({ ok: true }) });
    await h.platform.runDueJobs();
    return published;
  }
  const jobsOf = (task: string) =>
    query(
      `select key, locked_at is not null as locked from graphile_worker._private_jobs j
        join graphile_worker._private_tasks t on t.id = j.task_id where t.identifier = $1 order by j.id`,
      [task],
    );

  test('submissions queue at most one drain job per shard, and the drains dispatch every one', async () => {
    const { ep, cred } = await quietEndpoint();
    const acks = [];
    for (let i = 0; i < 24; i++)
      acks.push((await submit(ep.slug, cred, { title: `d${i}`, input: {} })).json());
    const drains = await jobsOf('agent-gateway:drain-dispatches');
    assert.ok(drains.length >= 1 && drains.length <= DISPATCH_SHARDS, JSON.stringify(drains));
    assert.equal(new Set(drains.map((d) => d.key)).size, drains.length, 'one per shard');
    assert.deepEqual(await jobsOf('agent-gateway:dispatch-invocation'), [], 'no job per submission');
    await h.platform.runDueJobs();
    for (const ack of acks) assert.equal((await status(ack.statusUrl, cred)).status, 'completed');
  });

  test('a submission while its shard drain runs gets a successor drain, so it is dispatched without the sweep', async () => {
    const { ep, cred } = await quietEndpoint();
    // Every shard's drain is running (taken by a worker, its scan already done): what is submitted now is not in it.
    await query(
      `select graphile_worker.add_job('agent-gateway:drain-dispatches', json_build_object('shard', s),
        job_key => 'agent-gateway:drain-dispatches:shard:' || s) from generate_series(0, $1 - 1) s`,
      [DISPATCH_SHARDS],
    );
    await query(
      `update graphile_worker._private_jobs set locked_at = now(), locked_by = 'busy-worker'
        where key like 'agent-gateway:drain-dispatches:shard:%'`,
    );
    const ack = (await submit(ep.slug, cred, { title: 'late', input: {} })).json();
    const [shard] = await query(`select (hashtext($1) & 2147483647) % $2 as n`, [
      ack.invocationId,
      DISPATCH_SHARDS,
    ]);
    const drains = await jobsOf('agent-gateway:drain-dispatches');
    assert.deepEqual(
      drains.filter((d) => !d.locked).map((d) => d.key),
      [`agent-gateway:drain-dispatches:shard:${shard!.n}`],
      'a successor for its shard only',
    );
    await h.platform.runDueJobs();
    assert.equal((await status(ack.statusUrl, cred)).status, 'completed');
    await query(`delete from graphile_worker._private_jobs where locked_by = 'busy-worker'`);
  });

  test('a dispatch that throws in the drain goes to its own job; the others are dispatched', async () => {
    const { ep, cred } = await quietEndpoint();
    const acks = [];
    for (let i = 0; i < 6; i++)
      acks.push((await submit(ep.slug, cred, { title: `f${i}`, input: {} })).json());
    const failing = acks[2]!.invocationId as string;
    let tries = 0;
    const original = InvocationService.prototype.dispatch;
    const dispatch = mock.method(
      InvocationService.prototype,
      'dispatch',
      async function (this: InvocationService, id: string) {
        if (id === failing && tries++ === 0) throw new Error('database went away');
        return original.call(this, id);
      },
    );
    try {
      await h.platform.runDueJobs();
    } finally {
      dispatch.mock.restore();
    }
    assert.equal(tries, 2, 'tried by the drain, then by its own job');
    for (const ack of acks) assert.equal((await status(ack.statusUrl, cred)).status, 'completed');
  });

  test("a dispatch that keeps failing keeps its own job's backoff when a later drain meets it again", async () => {
    const { ep, cred } = await quietEndpoint();
    const ack = (await submit(ep.slug, cred, { title: 'broken', input: {} })).json();
    let tries = 0;
    const original = InvocationService.prototype.dispatch;
    const dispatch = mock.method(
      InvocationService.prototype,
      'dispatch',
      async function (this: InvocationService, id: string) {
        if (id !== ack.invocationId) return original.call(this, id);
        tries += 1;
        throw new Error('database went away');
      },
    );
    const ownJob = () =>
      query(`select attempts, run_at > now() as later from graphile_worker._private_jobs where key = $1`, [
        `agent-gateway:dispatch-invocation:invocation:${ack.invocationId}`,
      ]);
    try {
      await h.platform.runDueJobs();
      assert.equal(tries, 2, 'the drain, then its own job');
      assert.deepEqual(await ownJob(), [{ attempts: 1, later: true }], 'its job waits in backoff');
      // Its shard's drain runs again (another submission there): it meets the invocation, and leaves its job alone.
      await query(
        `select graphile_worker.add_job('agent-gateway:drain-dispatches', json_build_object('shard', n),
          job_key => 'agent-gateway:drain-dispatches:shard:' || n)
          from (select (hashtext($1) & 2147483647) % $2 as n) s`,
        [ack.invocationId, DISPATCH_SHARDS],
      );
      await h.platform.runDueJobs();
      assert.equal(tries, 3, 'the second drain tried once');
      assert.deepEqual(await ownJob(), [{ attempts: 1, later: true }], 'the backoff is kept');
    } finally {
      dispatch.mock.restore();
    }
    await query(`delete from graphile_worker._private_jobs where key = $1`, [
      `agent-gateway:dispatch-invocation:invocation:${ack.invocationId}`,
    ]);
  });
});

describe('lost dispatch', () => {
  test('an invocation whose dispatch job is held by a dead worker is dispatched again by the sweep', async () => {
    const { ep, cred } = await live({ targetId: await agent({ ok: true }) });
    await h.platform.runDueJobs();
    const ack = (await submit(ep.slug, cred, { title: 't', input: {} })).json();
    const pg = await import('pg');
    const client = new pg.default.Client({ connectionString: h.platform.database.url });
    await client.connect();
    try {
      // The drain job of its shard, taken by a worker that died.
      const locked = await client.query(
        `update graphile_worker._private_jobs set locked_at = now(), locked_by = 'dead-worker'
          where key = 'agent-gateway:drain-dispatches:shard:' || ((hashtext($1) & 2147483647) % $2)`,
        [ack.invocationId, DISPATCH_SHARDS],
      );
      assert.equal(locked.rowCount, 1);
    } finally {
      await client.end();
    }
    await h.platform.runDueJobs();
    assert.equal((await status(ack.statusUrl, cred)).status, 'accepted', 'its job is held');
    clock.advance(30_000);
    await h.ops('POST', '/_ops/invocations/tick');
    await h.platform.runDueJobs();
    assert.equal((await status(ack.statusUrl, cred)).status, 'accepted', 'not queued again before a minute');
    clock.advance(31_000);
    const tick = await h.ops('POST', '/_ops/invocations/tick');
    assert.ok(tick.json().redispatched >= 1, tick.body);
    assert.equal((await settle(ack.statusUrl, cred)).status, 'completed');
  });
});

describe('agent defects', () => {
  test('an unexpected error of an agent (not an AgentError) fails its step and run, inline or in a job, with the reason', async () => {
    const { AgentRuntime } = await import('../agent-runtime.ts');
    const execute = AgentRuntime.prototype.execute;
    // A defect met while running a definition: the marked agent throws what no agent code means to throw.
    AgentRuntime.prototype.execute = function (this: InstanceType<typeof AgentRuntime>, definition, input) {
      const output = (definition as { output?: { defect?: boolean } }).output;
      if (definition.kind === 'json_transform' && output?.defect) throw new TypeError('a defect');
      return execute.call(this, definition, input);
    };
    try {
      const defective = await agent({ defect: true });
      // Inline: an instant agent runs in its invocation's dispatch.
      const { ep, cred } = await live({ targetId: defective });
      const ack = (await submit(ep.slug, cred, { title: 't', input: {} })).json();
      const done = await settle(ack.statusUrl, cred);
      assert.equal(done.status, 'failed');
      assert.equal(done.error.code, 'agent_error');
      assert.match(done.error.message, /The agent failed with an unexpected error/);
      assert.doesNotMatch(done.error.message, /a defect/, 'no internals');
      // In a job: a run started by a user runs its step in `agent-gateway:run-step`.
      const started = await api('POST', '/api/v1/orchestration-runs', {
        target: { type: 'agent', id: defective },
      });
      assert.equal(started.statusCode, 201, started.body);
      const runUrl = `/api/v1/orchestration-runs/${started.json().run.id}`;
      await h.drive(async () => (await api('GET', runUrl)).json().run.status === 'failed');
      assert.equal((await api('GET', runUrl)).json().run.error.code, 'agent_error');
    } finally {
      AgentRuntime.prototype.execute = execute;
    }
  });
});

describe('lost run cancel', () => {
  test('a run left going by a timeout or cancel whose process died before cancelling it is cancelled by the sweep', async () => {
    const pool = h.platform.booted.database.pool;
    for (const ended of ['timed_out', 'cancel_requested'] as const) {
      const { ep, cred } = await remoteEndpoint(600);
      const ack = (await submit(ep.slug, cred, { title: ended, input: {} })).json();
      await h.platform.runDueJobs();
      const running = await status(ack.statusUrl, cred);
      assert.ok(['running', 'waiting'].includes(running.status), running.status);
      // What the commit of a timeout (or a cancel) wrote, and nothing after it: its process died before the run's
      // cancel.
      await pool.query(
        `update agent_gateway.invocations set status = $2, updated_at = $3,
          finished_at = case when $2 = 'timed_out' then $3::timestamptz end where id = $1`,
        [ack.invocationId, ended, clock.now()],
      );
      const runOf = async () => (await api('GET', `/api/v1/orchestration-runs/${running.runId}`)).json().run;
      await h.ops('POST', '/_ops/invocations/tick');
      assert.equal((await runOf()).status, 'waiting', 'not before a minute: its own process may be at it');
      clock.advance(61_000);
      const tick = await h.ops('POST', '/_ops/invocations/tick');
      assert.equal(tick.statusCode, 200, tick.body);
      assert.equal((await runOf()).status, 'cancelled', ended);
      assert.equal(tick.json().stoppedRuns, 1, tick.body);
      assert.equal(
        (await status(ack.statusUrl, cred)).status,
        ended === 'timed_out' ? 'timed_out' : 'cancelled',
      );
      const again = await h.ops('POST', '/_ops/invocations/tick');
      assert.equal(again.json().stoppedRuns, 0, 'once');
    }
  });
});

/** The `status` frames of a stream (the run's `progress` frames left out). */
const statusFrames = <T extends { event: string | undefined }>(all: T[]) =>
  all.filter((f) => f.event === 'status');

/** Reads an SSE body into frames. */
function frames(text: string) {
  return text
    .split('\n\n')
    .filter((block) => block.includes('data:'))
    .map((block) => {
      const field = (name: string) =>
        block
          .split('\n')
          .find((l) => l.startsWith(`${name}: `))
          ?.slice(name.length + 2);
      return { id: Number(field('id')), event: field('event'), data: JSON.parse(field('data') ?? 'null') };
    });
}

describe('event streams', () => {
  test('replay, resume with Last-Event-ID (wins over ?after=), 410 past retention', async () => {
    const { ep, cred } = await live({ targetId: await agent({ ok: true }) });
    const ack = (await submit(ep.slug, cred, { title: 't', input: {} })).json();
    assert.match(ack.eventsUrl, /^\/invoke\/v1\/invocations\/inv_[0-9a-f]{32}\/events$/);
    await settle(ack.statusUrl, cred);
    const sse = (headers: Record<string, string> = {}, query = '') =>
      app().inject({
        url: `${ack.eventsUrl}${query}`,
        headers: { accept: 'text/event-stream', ...cred, ...headers },
      });
    const all = await sse();
    assert.equal(all.statusCode, 200);
    assert.match(String(all.headers['content-type']), /text\/event-stream/);
    const everything = frames(all.body);
    const got = statusFrames(everything);
    assert.deepEqual(
      got.map((f) => f.data.status),
      ['accepted', 'dispatching', 'running', 'completed'],
    );
    assert.ok(everything.every((f) => ['status', 'progress'].includes(f.event!) && Number.isInteger(f.id)));
    const resumed = frames((await sse({ 'last-event-id': String(got[1]!.id) }, `?after=${got[0]!.id}`)).body);
    assert.deepEqual(
      statusFrames(resumed).map((f) => f.data.status),
      ['running', 'completed'],
    );
    const afterOnly = frames((await sse({}, `?after=${got[2]!.id}`)).body);
    assert.deepEqual(
      statusFrames(afterOnly).map((f) => f.data.status),
      ['completed'],
    );
    // A resume at the terminal event ends at once (an open stream would keep this inject waiting).
    const ends = async (cursor: number) => {
      let timer: NodeJS.Timeout | undefined;
      const res = await Promise.race([
        sse({ 'last-event-id': String(cursor) }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`the stream resumed at ${cursor} stayed open`)), 5000);
        }),
      ]).finally(() => clearTimeout(timer));
      assert.equal(res.statusCode, 200);
      assert.deepEqual(frames(res.body), []);
    };
    await ends(got[3]!.id);
    await ends(got[3]!.id + 1000);
    clock.advance(86_401_000);
    await h.ops('POST', '/_ops/invocations/tick');
    await ends(got[3]!.id); // the cursor equal to the pruned top: nothing expired, nothing more to come
    const gone = await sse({ 'last-event-id': String(got[1]!.id) });
    assert.equal(gone.statusCode, 410);
    assert.equal(gone.json().code, 'cursor_expired');
    assert.equal((await status(ack.statusUrl, cred)).status, 'completed', 'the status view still tells');
    // The user's session ended with the day the clock moved: sign in again for the next tests.
    admin = (await h.user('admin', { tenant: 'demo', namespace: 'default' })).token;
  });

  test("the stream carries the run's progress between running and the outcome, without payloads", async () => {
    const { ep, cred } = await live({ targetId: await agent({ secret: '{{ input.input.word }}' }) });
    const ack = (await submit(ep.slug, cred, { title: 't', input: { word: 'classified' } })).json();
    const done = await settle(ack.statusUrl, cred);
    assert.deepEqual(done.result, { secret: 'classified' });
    const all = frames(
      (await app().inject({ url: ack.eventsUrl, headers: { accept: 'text/event-stream', ...cred } })).body,
    );
    assert.deepEqual(
      all.map((f) => (f.event === 'status' ? f.data.status : f.data.type)),
      [
        'accepted',
        'dispatching',
        'running',
        'run.created',
        'step.completed',
        'step.queued',
        'step.started',
        'agent.output',
        'step.completed',
        'step.completed',
        'run.completed',
        'completed',
      ],
    );
    const progress = all.filter((f) => f.event === 'progress');
    assert.ok(progress.every((f) => f.data.invocationId === ack.invocationId && f.data.runId === done.runId));
    assert.deepEqual(
      progress.map((f) => f.data.nodeId),
      [null, 'start', 'agent', 'agent', 'agent', 'agent', 'end', null],
    );
    assert.equal(progress[3]!.data.attempt, 1, 'step.started carries the attempt');
    assert.ok(
      !JSON.stringify(progress).includes('classified'),
      'no input, output or text in progress events',
    );
    // A resume from a progress event goes on from there.
    const resumed = frames(
      (
        await app().inject({
          url: ack.eventsUrl,
          headers: { accept: 'text/event-stream', 'last-event-id': String(progress[5]!.id), ...cred },
        })
      ).body,
    );
    assert.deepEqual(
      resumed.map((f) => f.id),
      all.slice(9).map((f) => f.id),
    );
  });

  test('a stream on another instance receives the events; a disconnected client does not stop the job', async () => {
    const { ep, cred } = await live({ targetId: await agent({ ok: true }) });
    const ack = (await submit(ep.slug, cred, { title: 't', input: {} })).json();
    const other = (await h.platform.anotherInstance()).app('agent-gateway');
    const remoteStream = other.inject({
      url: ack.eventsUrl,
      headers: { accept: 'text/event-stream', ...cred },
    });
    // A real client that reads the first frame and goes away.
    const { baseUrlOf } = await import('../../../../test/support/platform.ts');
    const controller = new AbortController();
    const response = await fetch(`${baseUrlOf(app())}${ack.eventsUrl}`, {
      headers: { accept: 'text/event-stream', ...cred },
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    assert.match(first, /accepted|retry/);
    controller.abort();
    await h.platform.runDueJobs();
    const done = await settle(ack.statusUrl, cred);
    assert.equal(done.status, 'completed');
    const delivered = frames((await remoteStream).body);
    assert.deepEqual(
      statusFrames(delivered).map((f) => f.data.status),
      ['accepted', 'dispatching', 'running', 'completed'],
    );
  });

  test('conversations: the first message returns conversationId; a turn keeps its invocationId in eventsUrl', async () => {
    const chatAgent = await agent({ kind: 'template', template: 'You said: {{ message }}' }, 'template');
    const { ep, cred } = await live({ targetId: chatAgent, invocationMode: 'conversation' });
    const start = await app().inject({
      method: 'POST',
      url: `/invoke/v1/endpoints/${ep.slug}/conversations`,
      headers: { 'idempotency-key': `c-${++n}`, ...cred },
      payload: { message: 'hello' },
    });
    assert.equal(start.statusCode, 202, start.body);
    const conversationId = start.json().conversationId as string;
    assert.match(conversationId, /^cnv_/);
    const turn = await app().inject({
      method: 'POST',
      url: `/invoke/v1/conversations/${conversationId}/turns`,
      headers: { 'idempotency-key': `c-${++n}`, ...cred },
      payload: { message: 'again' },
    });
    assert.equal(turn.statusCode, 202, turn.body);
    assert.equal(turn.json().conversationId, undefined);
    assert.equal(
      turn.json().eventsUrl,
      `/invoke/v1/conversations/${conversationId}/events?invocationId=${turn.json().invocationId}`,
    );
    const done = await settle(turn.json().statusUrl, cred);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.equal(done.turn, 2);
    const stream = frames(
      (await app().inject({ url: turn.json().eventsUrl, headers: { accept: 'text/event-stream', ...cred } }))
        .body,
    );
    assert.ok(stream.every((f) => f.data.invocationId === turn.json().invocationId));
    assert.equal(stream.at(-1)!.data.status, 'completed');
    const jobOnConversation = await submit(ep.slug, cred, { title: 't', input: {} });
    assert.equal(jobOnConversation.statusCode, 400);
    assert.equal(jobOnConversation.json().code, 'wrong_invocation_mode');
  });
});

describe('conversation memory', () => {
  test("a turn's run gets the earlier turns as history, and turns run one after another", async () => {
    const created = await api('POST', '/api/v1/agents', {
      name: `echo ${++n}`,
      conversational: true,
      definition: {
        kind: 'json_transform',
        output: { said: '{{ message }}', history: '{{ input.history }}' },
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    const echo = created.json().agent.id as string;
    const { ep, cred } = await live({ targetId: echo, invocationMode: 'conversation' });
    const start = await app().inject({
      method: 'POST',
      url: `/invoke/v1/endpoints/${ep.slug}/conversations`,
      headers: { 'idempotency-key': `c-${++n}`, ...cred },
      payload: { message: 'hello' },
    });
    assert.equal(start.statusCode, 202, start.body);
    const conversationId = start.json().conversationId as string;
    // The second turn is accepted before the first ran: it must wait for it.
    const second = await app().inject({
      method: 'POST',
      url: `/invoke/v1/conversations/${conversationId}/turns`,
      headers: { 'idempotency-key': `c-${++n}`, ...cred },
      payload: { message: 'again' },
    });
    assert.equal(second.statusCode, 202, second.body);
    const done = await settle(second.json().statusUrl, cred);
    const first = await status(start.json().statusUrl, cred);
    assert.equal(first.status, 'completed', JSON.stringify(first));
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.deepEqual(done.result.history, [
      { turn: 1, message: 'hello', status: 'completed', result: first.result },
    ]);
    assert.equal(done.result.said, 'again');
    const firstEnd = first.history.find((m: { status: string }) => m.status === 'completed').at;
    const secondStart = done.history.find((m: { status: string }) => m.status === 'dispatching').at;
    assert.ok(secondStart >= firstEnd, 'the second turn was dispatched after the first ended');
    const whole = frames(
      (
        await app().inject({
          url: `/invoke/v1/conversations/${conversationId}/events?invocationId=${second.json().invocationId}`,
          headers: { accept: 'text/event-stream', ...cred },
        })
      ).body,
    );
    assert.equal(whole.at(-1)!.data.status, 'completed');
  });
});

describe('turns and revocation', () => {
  test('a turn replays under its key (another message is 409), a message past the limit is 413; a revoked platform token is refused', async () => {
    const chatAgent = await agent({ kind: 'template', template: 'You said: {{ message }}' }, 'template');
    const ep = await endpoint({
      targetId: chatAgent,
      invocationMode: 'conversation',
      maxPayloadBytes: 20,
      authPolicy: { type: 'platform' },
    });
    await publish(ep.id);
    const issued = (await api('POST', '/api/v1/platform-tokens', {})).json();
    const cred = { authorization: `Bearer ${issued.token}` };
    const start = await app().inject({
      method: 'POST',
      url: `/invoke/v1/endpoints/${ep.slug}/conversations`,
      headers: { 'idempotency-key': `c-${++n}`, ...cred },
      payload: { message: 'hello' },
    });
    assert.equal(start.statusCode, 202, start.body);
    const turnUrl = `/invoke/v1/conversations/${start.json().conversationId}/turns`;
    const turn = (message: string, k: string) =>
      app().inject({
        method: 'POST',
        url: turnUrl,
        headers: { 'idempotency-key': k, ...cred },
        payload: { message },
      });
    const k = `t-${++n}`;
    const first = await turn('again', k);
    assert.equal(first.statusCode, 202, first.body);
    const replay = await turn('again', k);
    assert.equal(replay.statusCode, 202);
    assert.equal(replay.headers['idempotency-replayed'], 'true');
    assert.equal(replay.json().invocationId, first.json().invocationId);
    const changed = await turn('something else', k);
    assert.equal(changed.statusCode, 409);
    assert.equal(changed.json().code, 'idempotency_key_reused');
    const big = await turn('x'.repeat(40), `t-${++n}`);
    assert.equal(big.statusCode, 413);
    assert.equal(big.json().code, 'payload_too_large');
    assert.equal((await settle(first.json().statusUrl, cred)).turn, 2);
    const revoked = await api('DELETE', `/api/v1/platform-tokens/${issued.platformToken.id}`);
    assert.equal(revoked.statusCode, 200, revoked.body);
    const refused = await turn('after', `t-${++n}`);
    assert.equal(refused.statusCode, 401);
    assert.equal(refused.json().code, 'token_revoked');
  });
});

/** How many retained events a conversation has after event id `after`. */
async function eventsAfter(conversationId: string, after: number): Promise<number> {
  const { rows } = await h.platform.booted.database.pool.query(
    'select count(*)::int as n from agent_gateway.invocation_events where conversation_id = $1 and id > $2',
    [conversationId, after],
  );
  return rows[0].n as number;
}

describe('stream credentials (forced order)', () => {
  test('a key revoked after the stream request was authenticated but before its stream watched it gets no frame (401)', async () => {
    const { ep, issued, cred, start } = await startConversation();
    await settle(start.json().statusUrl, cred);
    const pg = await import('pg');
    const blocker = new pg.default.Client({ connectionString: h.platform.database.url });
    await blocker.connect();
    try {
      // The stream's cursor check reads the invocations table: held here, after the request's authentication.
      await blocker.query('begin');
      await blocker.query('lock table agent_gateway.invocations in access exclusive mode');
      const open = app().inject({
        url: `/invoke/v1/conversations/${start.json().conversationId}/events?after=1`,
        headers: { accept: 'text/event-stream', ...cred },
      });
      for (let i = 0; ; i++) {
        const { rows } = await blocker.query(
          `select count(*)::int as n from pg_locks where not granted and relation = 'agent_gateway.invocations'::regclass`,
        );
        if (rows[0].n > 0) break;
        assert.ok(i < 500, 'the stream request reached its cursor check');
        await new Promise((r) => setTimeout(r, 20));
      }
      const revoked = await api('DELETE', `/api/v1/endpoints/${ep.id}/keys/${issued.apiKey.id}`);
      assert.equal(revoked.statusCode, 200, revoked.body);
      await blocker.query('commit');
      let timer: NodeJS.Timeout | undefined;
      const res = await Promise.race([
        open,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('the stream outlived its revoked key')), 5000);
        }),
      ]).finally(() => clearTimeout(timer));
      // The conversation has events after the cursor: none of them is replayed to a revoked key.
      assert.ok((await eventsAfter(start.json().conversationId, 1)) > 0, 'there were events to replay');
      assert.equal(res.statusCode, 401, res.body);
      assert.equal(res.json().code, 'token_revoked');
      assert.doesNotMatch(res.body, /^(id|event|data):/m);
    } finally {
      await blocker.query('rollback').catch(() => undefined);
      await blocker.end();
    }
  });
});

describe('stream credentials', () => {
  test('a conversation stream stays open across turns and closes when its key is revoked', async () => {
    const { ep, issued, cred, start } = await startConversation();
    const conversationId = start.json().conversationId as string;
    await settle(start.json().statusUrl, cred);
    let closed = false;
    const open = app()
      .inject({
        url: `/invoke/v1/conversations/${conversationId}/events`,
        headers: { accept: 'text/event-stream', ...cred },
      })
      .then((res) => {
        closed = true;
        return res;
      });
    await h.platform.runDueJobs();
    assert.equal(closed, false, 'a whole conversation stream stays open after a turn ends');
    const revoked = await api('DELETE', `/api/v1/endpoints/${ep.id}/keys/${issued.apiKey.id}`);
    assert.equal(revoked.statusCode, 200, revoked.body);
    let timer: NodeJS.Timeout | undefined;
    const res = await Promise.race([
      open,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('the stream outlived its revoked key')), 5000);
      }),
    ]).finally(() => clearTimeout(timer));
    const got = statusFrames(frames(res.body));
    assert.deepEqual(
      got.map((f) => f.data.status),
      ['accepted', 'dispatching', 'running', 'completed'],
    );
  });
});

describe('seed', () => {
  test('the seeded demo endpoint takes its sample input and completes with a result its output schema accepts', async () => {
    const cred = { 'x-api-key': seeded.endpointApiKey as string };
    const ack = await submit(seeded.endpointSlug as string, cred, {
      title: 'Demo',
      input: seeded.endpointSampleInput,
    });
    assert.equal(ack.statusCode, 202, ack.body);
    const done = await settle(ack.json().statusUrl, cred);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.deepEqual(done.result, { title: 'Demo', summary: 'Quarterly numbers are up', characters: 24 });
  });
});
