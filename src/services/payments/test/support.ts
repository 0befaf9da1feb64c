/**
 * Test support for the payments service: boots it alone on a fresh database with a clock, and short helpers for
 * merchant calls, the payer call, operator calls and JSON:API errors.
 */
import assert from 'node:assert/strict';
import { startTestPlatform, type TestPlatform } from '../../../../test/support/platform.ts';
import type { Clock } from '../../../platform/clock.ts';
import { paymentsService } from '../index.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
export type Answer = Awaited<ReturnType<ReturnType<TestPlatform['app']>['inject']>>;

/** A merchant with a verified customer. */
export interface TestMerchant {
  partyId: string;
  key: string;
  customerId: string;
}

export interface PaymentsHarness {
  platform: TestPlatform;
  api(
    key: string | undefined,
    method: Method,
    url: string,
    payload?: unknown,
    headers?: Record<string, string>,
  ): Promise<Answer>;
  ops(method: Method, url: string, payload?: unknown): Promise<Answer>;
  /** Creates a verified (MET) merchant with a verified customer party. */
  merchant(name?: string): Promise<TestMerchant>;
  /** Creates an intent (three default lines unless given) and returns its JSON:API resource. */
  createIntent(
    m: TestMerchant,
    attributes?: Record<string, unknown>,
    headers?: Record<string, string>,
  ): Promise<IntentDoc>;
  /** Starts a voice session on intent `intentId` of `m` (201 asserted); returns its id. */
  startVoiceSession(m: TestMerchant, intentId: string, headers?: Record<string, string>): Promise<string>;
  /** Simulation: the payer keys card `number` (future expiry, CVC `cvc`, default 123) in voice session `sessionId`. */
  keyCard(
    m: TestMerchant,
    sessionId: string,
    number: string,
    headers?: Record<string, string>,
    cvc?: string,
  ): Promise<Answer>;
  /** The stored `status` of row `id` of table `payments.<table>`, read from the database directly. */
  rawStatus(table: string, id: string): Promise<string>;
  /** How many card payments (attempts) intent `intentId` has, read from the database directly. */
  attemptCount(intentId: string): Promise<number>;
  /** Pays an intent as the payer would. */
  pay(
    intentId: string,
    clientSecret: string,
    number: string,
    headers?: Record<string, string>,
  ): Promise<Answer>;
  close(): Promise<void>;
}

export interface IntentDoc {
  type: 'paymentIntent';
  id: string;
  attributes: {
    amount: number;
    currency: string;
    description: string | null;
    payUrl: string | null;
    clientSecret: string | null;
    status: string;
    taxMode: string;
    taxAmount: number;
    lineItems: {
      id: string;
      position: number;
      referenceId: string | null;
      description: string;
      quantity: number;
      unitAmount: number;
      subtotalAmount: number;
      taxAmount: number;
      totalAmount: number;
      taxCode: string | null;
    }[];
    expiresAt: string | null;
    canceledAt: string | null;
    createdAt: string;
    updatedAt: string;
  };
  relationships: {
    customerParty: { data: { type: string; id: string } };
    cardPayment: { data: { type: string; id: string } | null };
    voiceSession: { data: { type: string; id: string } | null };
  };
}

export const THREE_LINES = [
  { referenceId: 'sku-1', description: 'Notebook', quantity: 2, unitAmount: 1250, taxCode: 'txcd_99999999' },
  { referenceId: null, description: 'Shipping', quantity: 1, unitAmount: 499, taxCode: 'txcd_00000000' },
  { description: 'Gift wrap', quantity: 1, unitAmount: 300 },
];

/** A card expiry in the future of `clock`. */
export function futureExpiry(clock: Clock): { expMonth: number; expYear: number } {
  return { expMonth: 12, expYear: clock.now().getUTCFullYear() + 3 };
}

/**
 * Boots the payments service alone on a fresh database with `clock` (settle delay 0, a high payer rate limit).
 * @param options.logLines when given, every log line (level `trace`) is collected there.
 */
export async function startPayments(
  clock: Clock,
  options: { env?: Record<string, string>; listen?: boolean; runWorker?: boolean; logLines?: string[] } = {},
): Promise<PaymentsHarness> {
  const env = {
    PAYMENTS_SIM_SETTLE_DELAY_SECONDS: '0',
    PAYMENTS_PAYER_RATE_LIMIT: '1000',
    ...(options.env ?? {}),
  };
  const platform = await startTestPlatform({
    services: [paymentsService],
    clock,
    env,
    listen: options.listen,
    runWorker: options.runWorker,
    logLines: options.logLines,
  });
  const app = platform.app('payments');
  const api: PaymentsHarness['api'] = (key, method, url, payload, headers = {}) =>
    app.inject({
      method,
      url,
      headers: { ...(key === undefined ? {} : { authorization: `Bearer ${key}` }), ...headers },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const ops: PaymentsHarness['ops'] = (method, url, payload) =>
    app.inject({
      method,
      url,
      headers: { authorization: platform.operatorAuth },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const pool = () => platform.booted.database.pool;
  return {
    platform,
    api,
    ops,
    async startVoiceSession(m, intentId, headers = {}) {
      const res = await api(
        m.key,
        'POST',
        `/v1/payment-intents/${intentId}/voice-sessions`,
        undefined,
        headers,
      );
      assert.equal(res.statusCode, 201, res.body);
      return res.json().data.id as string;
    },
    keyCard: (m, sessionId, number, headers = {}, cvc = '123') =>
      api(
        m.key,
        'POST',
        `/v1/voice-sessions/${sessionId}/simulation/keyed-card`,
        { data: { type: 'cardPayment', attributes: { card: { number, ...futureExpiry(clock), cvc } } } },
        headers,
      ),
    rawStatus: async (table, id) =>
      (await pool().query(`select status from payments.${table} where id = $1`, [id])).rows[0].status,
    attemptCount: async (intentId) =>
      (
        await pool().query(
          'select count(*)::int as n from payments.card_payments where payment_intent_id = $1',
          [intentId],
        )
      ).rows[0].n,
    async merchant(name = 'Shop') {
      const m = await ops('POST', '/_ops/parties', { kind: 'merchant', name, caseStatus: 'MET' });
      assert.equal(m.statusCode, 201, m.body);
      const partyId = m.json().data.id as string;
      const c = await ops('POST', '/_ops/parties', {
        kind: 'customer',
        name: `${name} customer`,
        ownerPartyId: partyId,
        caseStatus: 'MET',
      });
      assert.equal(c.statusCode, 201, c.body);
      return { partyId, key: m.json().apiKey.key as string, customerId: c.json().data.id as string };
    },
    async createIntent(m, attributes = {}, headers = {}) {
      const res = await api(
        m.key,
        'POST',
        '/v1/payment-intents',
        {
          data: {
            type: 'paymentIntent',
            attributes: {
              description: 'Order 1001',
              taxMode: 'exclusive',
              lineItems: THREE_LINES,
              ...attributes,
            },
            relationships: { customerParty: { data: { type: 'party', id: m.customerId } } },
          },
        },
        headers,
      );
      assert.equal(res.statusCode, 201, res.body);
      return res.json().data as IntentDoc;
    },
    pay(intentId, clientSecret, number, headers = {}) {
      return api(
        undefined,
        'POST',
        `/v1/payment-intents/${intentId}/card-payments`,
        {
          data: {
            type: 'cardPayment',
            attributes: { clientSecret, card: { number, ...futureExpiry(clock), cvc: '123' } },
          },
        },
        headers,
      );
    },
    close: () => platform.close(),
  };
}

/** Asserts a JSON:API error document with one error of `status` and `code`; returns the first error. */
export function assertError(res: Answer, status: number, code: string, pointer?: string) {
  assert.equal(res.statusCode, status, res.body);
  const body = res.json() as {
    errors: {
      status: string;
      code: string;
      title: string;
      detail: string;
      source?: { pointer?: string };
      meta: { supportId: string };
    }[];
  };
  assert.ok(Array.isArray(body.errors) && body.errors.length >= 1, res.body);
  const first = body.errors[0]!;
  assert.equal(first.status, String(status));
  assert.equal(first.code, code, res.body);
  assert.ok(first.detail.length > 0);
  assert.equal(first.meta.supportId, res.headers['x-request-id']);
  if (pointer !== undefined) assert.equal(first.source?.pointer, pointer, res.body);
  return first;
}
