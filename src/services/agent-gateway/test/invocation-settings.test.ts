/**
 * Invocation settings (issue 21): absolute `statusUrl` / `eventsUrl` under `AGENT_GATEWAY_PUBLIC_URL`, the
 * per-credential rate limit (429 with `Retry-After`, per key, a new window by the clock), and SSE heartbeats at
 * `AGENT_GATEWAY_SSE_HEARTBEAT_SECONDS`.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { baseUrlOf } from '../../../../test/support/platform.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { type GatewayHarness, startGateway } from './support.ts';

const clock = new ManualClock(new Date('2026-11-24T12:00:00Z'));
const PUBLIC = 'https://gateway.example.test';
let h: GatewayHarness;
let slug: string;
let endpointId: string;
let admin: string;
const scope = { 'x-platform-tenant': 'demo', 'x-platform-namespace': 'default' };

before(async () => {
  h = await startGateway({
    clock,
    listen: true,
    env: {
      AGENT_GATEWAY_PUBLIC_URL: PUBLIC,
      AGENT_GATEWAY_INVOKE_PER_MINUTE: '3',
      AGENT_GATEWAY_SSE_HEARTBEAT_SECONDS: '1',
    },
  });
  const seeded = h.platform.credentials('agent-gateway');
  slug = seeded.endpointSlug as string;
  admin = (await h.user('admin', { tenant: 'demo', namespace: 'default' })).token;
  const list = await h.api(admin, 'GET', '/api/v1/endpoints', undefined, scope);
  endpointId = list.json().endpoints.find((e: { slug: string }) => e.slug === slug).id;
});
after(() => h?.close());

async function newKey(): Promise<string> {
  const res = await h.api(admin, 'POST', `/api/v1/endpoints/${endpointId}/keys`, {}, scope);
  assert.equal(res.statusCode, 201, res.body);
  return res.json().key as string;
}

const submit = (key: string, idempotencyKey: string) =>
  h.platform.app('agent-gateway').inject({
    method: 'POST',
    url: `/invoke/v1/endpoints/${slug}/jobs`,
    headers: { 'x-api-key': key, 'idempotency-key': idempotencyKey },
    payload: { title: 't', input: { text: 'hello' } },
  });

test('statusUrl and eventsUrl are absolute under the public URL setting', async () => {
  const ack = (await submit(await newKey(), 'abs-1')).json();
  assert.equal(ack.statusUrl, `${PUBLIC}/invoke/v1/invocations/${ack.invocationId}`);
  assert.equal(ack.eventsUrl, `${PUBLIC}/invoke/v1/invocations/${ack.invocationId}/events`);
});

test('past the per-credential limit: 429 with Retry-After for that key only, and a new window by the clock', async () => {
  const key = await newKey();
  for (let i = 0; i < 3; i++) assert.equal((await submit(key, `rl-${i}`)).statusCode, 202);
  const limited = await submit(key, 'rl-3');
  assert.equal(limited.statusCode, 429);
  assert.equal(limited.json().code, 'rate_limited');
  assert.ok(Number(limited.headers['retry-after']) >= 1);
  assert.equal((await submit(await newKey(), 'rl-other')).statusCode, 202, 'another key has its own budget');
  clock.advance(60_000);
  assert.equal(
    (await submit(key, 'rl-3')).statusCode,
    202,
    'the same logical request, retried after the window',
  );
});

test('an open stream gets heartbeat comments while its job waits', async () => {
  const key = await newKey();
  const ack = (await submit(key, 'hb-1')).json();
  const path = new URL(ack.eventsUrl).pathname;
  const controller = new AbortController();
  const response = await fetch(`${baseUrlOf(h.platform.app('agent-gateway'))}${path}`, {
    headers: { 'x-api-key': key, accept: 'text/event-stream' },
    signal: controller.signal,
  });
  assert.equal(response.status, 200);
  const reader = response.body!.getReader();
  let text = '';
  const limit = setTimeout(() => controller.abort(), 10_000);
  try {
    while (!text.includes(': heartbeat')) text += new TextDecoder().decode((await reader.read()).value);
  } finally {
    clearTimeout(limit);
    controller.abort();
  }
  assert.match(text, /^retry: 2000/m);
  assert.match(text, /^: heartbeat$/m);
});
