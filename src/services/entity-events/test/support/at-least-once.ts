/**
 * The two halves shared by the worker-restart and worker-SIGKILL tests: seeding deliveries to a slow receiver, and
 * checking at-least-once delivery afterwards. How the workers are started and stopped stays in each test.
 */
import assert from 'node:assert/strict';
import type pg from 'pg';
import { TEST_OPERATOR_TOKEN } from '../../../../../test/support/platform.ts';
import { waitUntil } from '../../../../../test/support/wait.ts';
import type { ServiceApp } from '../../../../platform/http.ts';
import type { PythonReceiver } from './receiver.ts';

/**
 * Through the API app: a webhook `name` on the receiver's `/slow` (which answers 200 after `delayMs`), one enrollment
 * of `count` businesses `<prefix><i>` for `new_product`, and one stored event per business (operator API). Asserts one
 * delivery per event was created.
 * @returns the stored events' ids.
 */
export async function seedSlowDeliveries(
  app: ServiceApp,
  apiKey: string,
  receiver: PythonReceiver,
  options: { name: string; prefix: string; count: number; delayMs: number },
): Promise<Set<string>> {
  const call = (url: string, payload: object, headers: Record<string, string> = { api_key: apiKey }) =>
    app.inject({ method: 'POST', url, headers, payload });
  const hook = (
    await call('/v2/webhooks', { name: options.name, webhook_url: `${receiver.url}/slow` })
  ).json();
  await receiver.setSecret(hook.webhook_id, hook.webhook_secret);
  await receiver.behavior('/slow', 200, undefined, options.delayMs);
  const ids = Array.from({ length: options.count }, (_, i) => `${options.prefix}${i}`);
  const enrolled = await call('/v2/businesses/events/enrollments', {
    enrollment_key: options.name,
    webhook_id: hook.webhook_id,
    event_types: ['new_product'],
    business_ids: ids,
  });
  assert.equal(enrolled.statusCode, 201, enrolled.body);
  const stored = await call(
    '/_ops/events',
    {
      events: ids.map((id) => ({
        entity_type: 'business',
        entity_id: id,
        event_name: 'new_product',
        event_time: new Date().toISOString(),
        data: { product_name: id },
      })),
    },
    { authorization: `Bearer ${TEST_OPERATOR_TOKEN}` },
  );
  assert.equal(stored.statusCode, 201, stored.body);
  assert.equal(stored.json().deliveries_created, options.count);
  return new Set<string>(stored.json().events.map((e: { event_id: string }) => e.event_id));
}

/**
 * At-least-once, and no more: every event of `eventIds` reaches the receiver, every request is signed, every delivery
 * ends `succeeded` (waited for up to `timeoutMs` each), no event outside `mayRepeat` arrives twice, and none more
 * than twice. Every request carries its delivery's id in `X-Delivery-Id`, so a repeated event repeats its delivery id:
 * a receiver that de-duplicates on it processes each event once.
 */
export async function assertDeliveredAtLeastOnce(
  pool: pg.Pool,
  receiver: PythonReceiver,
  eventIds: ReadonlySet<string>,
  mayRepeat: ReadonlySet<string>,
  timeoutMs: number,
): Promise<void> {
  const got = await receiver.waitFor(
    (l) => new Set(l.map((r) => r.payload?.event_id as string)).size >= eventIds.size,
    timeoutMs,
  );
  const seen = new Set(got.map((r) => r.payload?.event_id as string));
  assert.deepEqual([...seen].sort(), [...eventIds].sort(), 'every event delivered');
  assert.ok(
    got.every((r) => r.verified),
    'every request signed',
  );
  const statuses = await waitUntil(
    'every delivery succeeded',
    async () => {
      const { rows } = await pool.query(
        'select status, count(*)::int as n from entity_events.deliveries group by 1 order by 1',
      );
      return rows.length === 1 && rows[0].status === 'succeeded' ? rows : undefined;
    },
    { timeoutMs },
  );
  assert.deepEqual(statuses, [{ status: 'succeeded', n: eventIds.size }]);
  const perEvent = new Map<string, number>();
  for (const r of await receiver.received()) {
    const id = r.payload?.event_id as string;
    perEvent.set(id, (perEvent.get(id) ?? 0) + 1);
  }
  const deliveryOfEvent = new Map(
    (await pool.query('select id, event_id from entity_events.deliveries')).rows.map(
      (r: { id: string; event_id: string }) => [r.event_id, r.id] as const,
    ),
  );
  const received = await receiver.received();
  for (const r of received)
    assert.equal(
      r.headers['x-delivery-id'],
      deliveryOfEvent.get(r.payload?.event_id as string),
      'X-Delivery-Id is the delivery of the event, on every attempt',
    );
  assert.equal(
    new Set(received.map((r) => r.headers['x-delivery-id'])).size,
    eventIds.size,
    'de-duplicated on X-Delivery-Id, each event is processed once',
  );
  const duplicated = [...perEvent].filter(([id, n]) => n > 1 && !mayRepeat.has(id));
  assert.deepEqual(duplicated, [], 'no event but those allowed to repeat is delivered twice');
  assert.ok(
    [...perEvent.values()].every((n) => n <= 2),
    'an event allowed to repeat arrives at most twice',
  );
}
