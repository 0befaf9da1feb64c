import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../../platform/clock.ts';
import { CASE_STATUSES, CASE_TRANSITIONS } from '../compliance.ts';
import { MACHINES, type MachineName } from '../state-machines.ts';
import {
  assertError,
  type PaymentsHarness,
  startPayments,
  type TestMerchant,
  THREE_LINES,
} from './support.ts';

const START = Date.UTC(2026, 5, 1, 12, 0, 0);
const MINUTE = 60_000;

describe('payments: parties, credentials, compliance, limits, intents', () => {
  const clock = new ManualClock(START);
  let h: PaymentsHarness;
  let m: TestMerchant;
  let other: TestMerchant;

  before(async () => {
    h = await startPayments(clock);
    m = await h.merchant('Alpha');
    other = await h.merchant('Beta');
  });
  after(async () => h.close());

  const intentBody = (customerId: string, attributes: Record<string, unknown> = {}) => ({
    data: {
      type: 'paymentIntent',
      attributes: { description: 'Order', taxMode: 'exclusive', lineItems: THREE_LINES, ...attributes },
      relationships: { customerParty: { data: { type: 'party', id: customerId } } },
    },
  });
  const countIntents = async () =>
    (await h.platform.booted.database.pool.query('select count(*)::int as n from payments.payment_intents'))
      .rows[0].n as number;

  test('seed: demo merchant key, merchant and customer ids; both verified', async () => {
    const seeded = h.platform.credentials('payments');
    assert.match(String(seeded.merchantKey), /^sk_/);
    assert.match(String(seeded.merchantPartyId), /^pty_[0-9a-f]{32}$/);
    assert.match(String(seeded.customerPartyId), /^pty_[0-9a-f]{32}$/);
    const me = await h.api(String(seeded.merchantKey), 'GET', '/v1/parties/me');
    assert.equal(me.statusCode, 200, me.body);
    assert.equal(me.json().data.id, seeded.merchantPartyId);
    const c = await h.api(
      String(seeded.merchantKey),
      'GET',
      `/v1/parties/${seeded.customerPartyId}/compliance`,
    );
    assert.equal(c.json().data.attributes.canProceed, true);
    // Keys are stored hashed only.
    const { rows } = await h.platform.booted.database.pool.query('select key_hash from payments.credentials');
    assert.ok(rows.every((r) => /^[0-9a-f]{64}$/.test(r.key_hash) && r.key_hash !== seeded.merchantKey));
  });

  test('401 unauthenticated without, with a malformed or an unknown key; revoked keys stop at once', async () => {
    assertError(await h.api(undefined, 'GET', '/v1/payment-intents'), 401, 'unauthenticated');
    assertError(
      await h.api(undefined, 'GET', '/v1/payment-intents', undefined, { authorization: 'Basic abc' }),
      401,
      'unauthenticated',
    );
    assertError(await h.api('sk_nope', 'GET', '/v1/payment-intents'), 401, 'unauthenticated');
    const issued = await h.ops('POST', '/_ops/keys', { partyId: m.partyId, kind: 'api', label: 'tmp' });
    assert.equal(issued.statusCode, 201, issued.body);
    assert.equal((await h.api(issued.json().key, 'GET', '/v1/parties/me')).statusCode, 200);
    assert.equal((await h.ops('POST', `/_ops/keys/${issued.json().id}/revoke`)).statusCode, 200);
    assertError(await h.api(issued.json().key, 'GET', '/v1/parties/me'), 401, 'unauthenticated');
  });

  test('agent keys act for their party with narrower rights', async () => {
    const res = await h.api(m.key, 'POST', '/v1/agent-keys', {
      data: { type: 'credential', attributes: { label: 'bot' } },
    });
    assert.equal(res.statusCode, 201, res.body);
    const agentKey = res.json().data.attributes.key as string;
    assert.match(agentKey, /^ak_/);
    // Can create and read intents of its party.
    const created = await h.api(agentKey, 'POST', '/v1/payment-intents', intentBody(m.customerId));
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(
      (await h.api(m.key, 'GET', `/v1/payment-intents/${created.json().data.id}`)).statusCode,
      200,
    );
    // Cannot change limits, issue keys or create parties.
    assertError(
      await h.api(agentKey, 'PUT', '/v1/parties/me/limits', {
        data: { type: 'transactionLimits', attributes: { perTransaction: 1 } },
      }),
      403,
      'forbidden',
    );
    assertError(
      await h.api(agentKey, 'POST', '/v1/agent-keys', { data: { type: 'credential', attributes: {} } }),
      403,
      'forbidden',
    );
    assertError(
      await h.api(agentKey, 'POST', '/v1/parties', { data: { type: 'party', attributes: { name: 'x' } } }),
      403,
      'forbidden',
    );
    // The API key revokes it.
    const revoke = await h.api(m.key, 'POST', `/v1/agent-keys/${res.json().data.id}/revoke`);
    assert.equal(revoke.statusCode, 204, revoke.body);
    assertError(await h.api(agentKey, 'GET', '/v1/parties/me'), 401, 'unauthenticated');
    // Another merchant cannot revoke it (404).
    const res2 = await h.api(m.key, 'POST', '/v1/agent-keys', {
      data: { type: 'credential', attributes: {} },
    });
    assertError(
      await h.api(other.key, 'POST', `/v1/agent-keys/${res2.json().data.id}/revoke`),
      404,
      'credential_not_found',
    );
    // The route revokes agent keys only: an API key of the caller's party is not one (and keeps working).
    const apiKey = (await h.ops('POST', '/_ops/keys', { partyId: m.partyId, kind: 'api' })).json();
    assertError(
      await h.api(m.key, 'POST', `/v1/agent-keys/${apiKey.id}/revoke`),
      404,
      'credential_not_found',
    );
    assert.equal((await h.api(apiKey.key, 'GET', '/v1/parties/me')).statusCode, 200);
  });

  test('create: exact JSON:API shape, integer cents, tax, payUrl and clientSecret while open', async () => {
    const res = await h.api(m.key, 'POST', '/v1/payment-intents', intentBody(m.customerId));
    assert.equal(res.statusCode, 201, res.body);
    const d = res.json().data;
    assert.equal(d.type, 'paymentIntent');
    assert.match(d.id, /^pmi_[0-9a-f]{32}$/);
    assert.deepEqual(Object.keys(d.attributes).sort(), [
      'amount',
      'canceledAt',
      'clientSecret',
      'createdAt',
      'currency',
      'description',
      'expiresAt',
      'lineItems',
      'payUrl',
      'status',
      'taxAmount',
      'taxMode',
      'updatedAt',
    ]);
    assert.deepEqual(Object.keys(d.relationships).sort(), ['cardPayment', 'customerParty', 'voiceSession']);
    // Notebook 2 × 1250 = 2500 + 222 tax (8.875 %), shipping 499 untaxed (0 %), gift wrap 300 no tax code.
    assert.equal(d.attributes.amount, 2722 + 499 + 300);
    assert.equal(d.attributes.taxAmount, 222);
    assert.equal(d.attributes.currency, 'USD');
    assert.equal(d.attributes.status, 'open');
    assert.deepEqual(
      d.attributes.lineItems.map(
        (l: { position: number; totalAmount: number; taxAmount: number; subtotalAmount: number }) => [
          l.position,
          l.subtotalAmount,
          l.taxAmount,
          l.totalAmount,
        ],
      ),
      [
        [0, 2500, 222, 2722],
        [1, 499, 0, 499],
        [2, 300, 0, 300],
      ],
    );
    assert.match(d.attributes.clientSecret, new RegExp(`^${d.id}_secret_`));
    assert.equal(d.attributes.payUrl, `http://127.0.0.1:4101/checkout/${d.id}#${d.attributes.clientSecret}`);
    assert.equal(d.attributes.expiresAt, new Date(START + 24 * 60 * MINUTE).toISOString());
    assert.equal(d.attributes.canceledAt, null);
    assert.deepEqual(d.relationships.customerParty, { data: { type: 'party', id: m.customerId } });
    assert.deepEqual(d.relationships.cardPayment, { data: null });
    assert.deepEqual(d.relationships.voiceSession, { data: null });
    // The client secret is stored hashed and sealed, never in clear.
    const { rows } = await h.platform.booted.database.pool.query(
      'select client_secret_hash, client_secret_sealed from payments.payment_intents where id = $1',
      [d.id],
    );
    assert.ok(!JSON.stringify(rows[0]).includes(d.attributes.clientSecret));
    // application/vnd.api+json bodies are accepted too.
    const vnd = await h.api(m.key, 'POST', '/v1/payment-intents', JSON.stringify(intentBody(m.customerId)), {
      'content-type': 'application/vnd.api+json',
    });
    assert.equal(vnd.statusCode, 201, vnd.body);
  });

  test('create: validation errors list every field with a JSON pointer', async () => {
    const res = await h.api(m.key, 'POST', '/v1/payment-intents', {
      data: {
        type: 'paymentIntent',
        attributes: { taxMode: 'sometimes', lineItems: [{ description: '', quantity: 0, unitAmount: '5' }] },
        relationships: { customerParty: { data: { type: 'party', id: m.customerId } } },
      },
    });
    const first = assertError(res, 400, 'invalid_value');
    const pointers = res.json().errors.map((e: { source: { pointer: string } }) => e.source.pointer);
    assert.ok(pointers.includes('/data/attributes/taxMode'), res.body);
    assert.ok(pointers.includes('/data/attributes/lineItems/0/quantity'), res.body);
    assert.ok(pointers.includes('/data/attributes/lineItems/0/unitAmount'), res.body);
    assert.equal(first.title, 'Bad Request');
    assertError(
      await h.api(
        m.key,
        'POST',
        '/v1/payment-intents',
        intentBody(m.customerId, {
          lineItems: [{ description: 'x', quantity: 1, unitAmount: 5, taxCode: 'bogus' }],
        }),
      ),
      400,
      'invalid_value',
      '/data/attributes/lineItems/0/taxCode',
    );
    assertError(
      await h.api(
        m.key,
        'POST',
        '/v1/payment-intents',
        intentBody(m.customerId, { expiresAt: new Date(START - 1000).toISOString() }),
      ),
      400,
      'invalid_value',
      '/data/attributes/expiresAt',
    );
    assertError(
      await h.api(m.key, 'POST', '/v1/payment-intents', intentBody(m.customerId, { currency: 'EUR' })),
      400,
      'invalid_value',
      '/data/attributes/currency',
    );
    // Malformed JSON
    assertError(
      await h.api(m.key, 'POST', '/v1/payment-intents', '{"data":', { 'content-type': 'application/json' }),
      400,
      'invalid_value',
    );
  });

  test('tenancy: another merchant’s intent or party is a 404 identical to a missing one', async () => {
    const mine = await h.createIntent(m);
    const foreign = await h.api(other.key, 'GET', `/v1/payment-intents/${mine.id}`);
    const missing = await h.api(other.key, 'GET', `/v1/payment-intents/pmi_${'0'.repeat(32)}`);
    assertError(foreign, 404, 'payment_intent_not_found');
    assertError(missing, 404, 'payment_intent_not_found');
    assert.equal(foreign.json().errors[0].detail, missing.json().errors[0].detail);
    assertError(
      await h.api(other.key, 'POST', `/v1/payment-intents/${mine.id}/cancel`),
      404,
      'payment_intent_not_found',
    );
    assertError(
      await h.api(other.key, 'PUT', `/v1/payment-intents/${mine.id}/line-items`, { data: THREE_LINES }),
      404,
      'payment_intent_not_found',
    );
    // Intents for another merchant's customer: 404 on the relationship.
    assertError(
      await h.api(other.key, 'POST', '/v1/payment-intents', intentBody(m.customerId)),
      404,
      'party_not_found',
      '/data/relationships/customerParty/data/id',
    );
    assertError(
      await h.api(other.key, 'GET', `/v1/parties/${m.customerId}/compliance`),
      404,
      'party_not_found',
    );
    assertError(
      await h.api(other.key, 'GET', `/v1/parties/pty_${'1'.repeat(32)}/compliance`),
      404,
      'party_not_found',
    );
  });

  test('list: newest first, paged with page[number]/page[size], filter[status], links', async () => {
    const fresh = await h.merchant('Lister');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      clock.advance(1000);
      ids.push((await h.createIntent(fresh, { description: `n${i}` })).id);
    }
    const p1 = await h.api(fresh.key, 'GET', '/v1/payment-intents?page[size]=2');
    assert.equal(p1.statusCode, 200, p1.body);
    assert.deepEqual(
      p1.json().data.map((d: { id: string }) => d.id),
      [ids[2], ids[1]],
    );
    assert.deepEqual(p1.json().meta.page, { number: 1, size: 2, total: 3 });
    assert.equal(p1.json().links.next, '/v1/payment-intents?page[number]=2&page[size]=2');
    assert.equal(p1.json().links.prev, null);
    const p2 = await h.api(fresh.key, 'GET', '/v1/payment-intents?page[size]=2&page[number]=2');
    assert.deepEqual(
      p2.json().data.map((d: { id: string }) => d.id),
      [ids[0]],
    );
    assert.equal(p2.json().links.next, null);
    await h.api(fresh.key, 'POST', `/v1/payment-intents/${ids[1]}/cancel`);
    const canceled = await h.api(fresh.key, 'GET', '/v1/payment-intents?filter[status]=canceled');
    assert.deepEqual(
      canceled.json().data.map((d: { id: string }) => d.id),
      [ids[1]],
    );
    assertError(await h.api(fresh.key, 'GET', '/v1/payment-intents?page[size]=500'), 400, 'invalid_value');
    assertError(
      await h.api(fresh.key, 'GET', '/v1/payment-intents?filter[status]=weird'),
      400,
      'invalid_value',
    );
  });

  test('replace line items while open: new ids, positions in order, totals recomputed', async () => {
    const intent = await h.createIntent(m);
    const res = await h.api(m.key, 'PUT', `/v1/payment-intents/${intent.id}/line-items`, {
      data: [
        { description: 'Second first', quantity: 1, unitAmount: 1000, taxCode: 'txcd_10000000' },
        { referenceId: 'r2', description: 'Then this', quantity: 4, unitAmount: 25 },
      ],
    });
    assert.equal(res.statusCode, 200, res.body);
    const a = res.json().data.attributes;
    assert.deepEqual(
      a.lineItems.map((l: { position: number; description: string }) => [l.position, l.description]),
      [
        [0, 'Second first'],
        [1, 'Then this'],
      ],
    );
    const oldIds = new Set(intent.attributes.lineItems.map((l) => l.id));
    for (const l of a.lineItems) {
      assert.match(l.id, /^pli_[0-9a-f]{32}$/);
      assert.ok(!oldIds.has(l.id));
    }
    assert.equal(a.taxAmount, 60);
    assert.equal(a.amount, 1060 + 100);
    assert.equal(a.status, 'open');
    // Empty list refused.
    assertError(
      await h.api(m.key, 'PUT', `/v1/payment-intents/${intent.id}/line-items`, { data: [] }),
      400,
      'invalid_value',
    );
    // Not while canceled.
    await h.api(m.key, 'POST', `/v1/payment-intents/${intent.id}/cancel`);
    assertError(
      await h.api(m.key, 'PUT', `/v1/payment-intents/${intent.id}/line-items`, { data: THREE_LINES }),
      409,
      'invalid_state',
    );
  });

  test('cancel an open intent: canceledAt set, payUrl and clientSecret null; twice is 409', async () => {
    const intent = await h.createIntent(m);
    clock.advance(MINUTE);
    const res = await h.api(m.key, 'POST', `/v1/payment-intents/${intent.id}/cancel`);
    assert.equal(res.statusCode, 200, res.body);
    const a = res.json().data.attributes;
    assert.equal(a.status, 'canceled');
    assert.equal(a.canceledAt, clock.now().toISOString());
    assert.equal(a.payUrl, null);
    assert.equal(a.clientSecret, null);
    assertError(await h.api(m.key, 'POST', `/v1/payment-intents/${intent.id}/cancel`), 409, 'invalid_state');
  });

  test('limits: read, set, refuse above the limit (nothing created), clear', async () => {
    const res = await h.api(m.key, 'GET', '/v1/parties/me/limits');
    assert.deepEqual(res.json(), {
      data: { type: 'transactionLimits', id: m.partyId, attributes: { perTransaction: null } },
    });
    const set = await h.api(m.key, 'PUT', '/v1/parties/me/limits', {
      data: { type: 'transactionLimits', attributes: { perTransaction: 3520 } },
    });
    assert.equal(set.statusCode, 200, set.body);
    assert.equal(set.json().data.attributes.perTransaction, 3520);
    const before = await countIntents();
    // Three lines total 3521 cents: one cent above the limit.
    assertError(
      await h.api(m.key, 'POST', '/v1/payment-intents', intentBody(m.customerId)),
      400,
      'limit_exceeded',
      '/data/attributes/lineItems',
    );
    assert.equal(await countIntents(), before);
    // At the limit is fine.
    const at = await h.api(
      m.key,
      'POST',
      '/v1/payment-intents',
      intentBody(m.customerId, {
        lineItems: [{ description: 'exact', quantity: 1, unitAmount: 3520 }],
      }),
    );
    assert.equal(at.statusCode, 201, at.body);
    // Replacing lines above the limit is refused too, and the intent keeps its lines. The replacement body is
    // `{data:[lineItem…]}`, so the error points at /data (not at /data/attributes/lineItems of the create body).
    assertError(
      await h.api(m.key, 'PUT', `/v1/payment-intents/${at.json().data.id}/line-items`, {
        data: [{ description: 'more', quantity: 1, unitAmount: 3521 }],
      }),
      400,
      'limit_exceeded',
      '/data',
    );
    assert.equal(
      (await h.api(m.key, 'GET', `/v1/payment-intents/${at.json().data.id}`)).json().data.attributes.amount,
      3520,
    );
    assertError(
      await h.api(m.key, 'PUT', '/v1/parties/me/limits', {
        data: { type: 'transactionLimits', attributes: { perTransaction: 0 } },
      }),
      400,
      'invalid_value',
      '/data/attributes/perTransaction',
    );
    const cleared = await h.api(m.key, 'PUT', '/v1/parties/me/limits', {
      data: { type: 'transactionLimits', attributes: { perTransaction: null } },
    });
    assert.equal(cleared.json().data.attributes.perTransaction, null);
    assert.equal(
      (await h.api(m.key, 'POST', '/v1/payment-intents', intentBody(m.customerId))).statusCode,
      201,
    );
  });

  test('compliance: status and session shapes; operator moves the case; a party that cannot proceed gets 403', async () => {
    const created = await h.api(m.key, 'POST', '/v1/parties', {
      data: { type: 'party', attributes: { name: 'New customer' } },
    });
    assert.equal(created.statusCode, 201, created.body);
    const pid = created.json().data.id as string;
    assert.match(pid, /^pty_[0-9a-f]{32}$/);
    const status = await h.api(m.key, 'GET', `/v1/parties/${pid}/compliance`);
    assert.equal(status.statusCode, 200, status.body);
    assert.deepEqual(status.json().data, {
      type: 'partyComplianceStatus',
      id: pid,
      attributes: {
        programCode: 'US_MERCHANT_KYB',
        caseStatus: 'NOT_READY',
        displayState: 'inProgress',
        title: 'Verification in progress',
        message: 'Finish the verification steps listed to take payments.',
        canProceed: false,
        requirementsDue: ['business_details', 'representative_identity', 'bank_account'],
      },
    });
    const session = await h.api(m.key, 'GET', `/v1/parties/${pid}/compliance/session`);
    assert.equal(session.json().data.type, 'complianceSessionStatus');
    assert.deepEqual(Object.keys(session.json().data.attributes).sort(), [
      'programId',
      'programVersionId',
      'requirements',
      'status',
    ]);
    assert.equal(session.json().data.attributes.status, 'NOT_READY');
    assert.deepEqual(Object.keys(session.json().data.attributes.requirements[0]).sort(), [
      'description',
      'id',
      'key',
    ]);

    // Not verified: no intent for this customer (403, nothing created).
    const before = await countIntents();
    const refused = assertError(
      await h.api(m.key, 'POST', '/v1/payment-intents', intentBody(pid)),
      403,
      'compliance_required',
    );
    assert.match(refused.detail, /inProgress/);
    assert.equal(await countIntents(), before);

    // Operator moves the case: NOT_READY -> READY -> PENDING -> USER_ACTION (with requirements) -> PENDING -> MET.
    const move = (caseStatus: string, requirements?: unknown) =>
      h.ops('POST', `/_ops/parties/${pid}/compliance/case`, {
        caseStatus,
        ...(requirements ? { requirements } : {}),
      });
    assert.equal((await move('READY')).json().data.attributes.displayState, 'inProgress');
    assert.equal((await move('PENDING')).json().data.attributes.displayState, 'underReview');
    const ua = await move('USER_ACTION', [{ key: 'tax_id', description: 'Upload the tax id letter' }]);
    assert.equal(ua.json().data.attributes.displayState, 'documentsRequired');
    assert.deepEqual(ua.json().data.attributes.requirementsDue, ['tax_id']);
    assertError(await move('MET'), 409, 'invalid_state', '/caseStatus');
    await move('PENDING');
    const met = await move('MET');
    assert.equal(met.json().data.attributes.canProceed, true);
    assert.deepEqual(met.json().data.attributes.requirementsDue, []);
    const ok = await h.api(m.key, 'POST', '/v1/payment-intents', intentBody(pid));
    assert.equal(ok.statusCode, 201, ok.body);

    // The merchant itself losing verification blocks new intents and payments.
    const intent = ok.json().data;
    assert.equal(
      (await h.ops('POST', `/_ops/parties/${m.partyId}/compliance/case`, { caseStatus: 'ACTION_NEEDED' }))
        .statusCode,
      200,
    );
    assertError(
      await h.api(m.key, 'POST', '/v1/payment-intents', intentBody(pid)),
      403,
      'compliance_required',
    );
    assertError(
      await h.pay(intent.id, intent.attributes.clientSecret, '4242424242424242'),
      403,
      'compliance_required',
    );
    const merchantStatus = await h.api(m.key, 'GET', '/v1/parties/me/compliance');
    assert.equal(merchantStatus.json().data.attributes.displayState, 'documentsRequired');
    await h.ops('POST', `/_ops/parties/${m.partyId}/compliance/case`, { caseStatus: 'PENDING' });
    await h.ops('POST', `/_ops/parties/${m.partyId}/compliance/case`, { caseStatus: 'MET' });
    assert.equal(
      (await h.pay(intent.id, intent.attributes.clientSecret, '4242424242424242')).statusCode,
      201,
    );
    assertError(
      await h.ops('POST', `/_ops/parties/pty_${'2'.repeat(32)}/compliance/case`, { caseStatus: 'MET' }),
      404,
      'party_not_found',
    );
  });

  test('customer parties: created by the merchant, listed newest first and paged, invisible to others', async () => {
    const fresh = await h.merchant('Party lister');
    const names = ['c1', 'c2', 'c3'];
    for (const name of names) {
      clock.advance(1000);
      const r = await h.api(fresh.key, 'POST', '/v1/parties', {
        data: { type: 'party', attributes: { name } },
      });
      assert.equal(r.statusCode, 201, r.body);
      assert.equal(r.json().data.attributes.kind, 'customer');
    }
    const p1 = await h.api(fresh.key, 'GET', '/v1/parties?page[size]=2');
    assert.equal(p1.statusCode, 200, p1.body);
    assert.deepEqual(
      p1.json().data.map((d: { attributes: { name: string } }) => d.attributes.name),
      ['c3', 'c2'],
    );
    // total counts the merchant's customers: the three above and the one merchant() created.
    assert.deepEqual(p1.json().meta.page, { number: 1, size: 2, total: 4 });
    assert.equal(p1.json().links.next, '/v1/parties?page[number]=2&page[size]=2');
    const p2 = await h.api(fresh.key, 'GET', '/v1/parties?page[size]=2&page[number]=2');
    assert.deepEqual(
      p2.json().data.map((d: { attributes: { name: string } }) => d.attributes.name),
      ['c1', 'Party lister customer'],
    );
    const theirs = await h.api(other.key, 'GET', '/v1/parties');
    assert.ok(
      !theirs.json().data.some((d: { attributes: { name: string } }) => names.includes(d.attributes.name)),
    );
    assertError(await h.api(other.key, 'GET', `/v1/parties/${p1.json().data[0].id}`), 404, 'party_not_found');
  });

  test('operator routes need the operator token; OpenAPI lists every route with operationId, tags, summary', async () => {
    assertError(
      await h.api('sk_x', 'POST', '/_ops/parties', { kind: 'merchant', name: 'x' }),
      401,
      'unauthenticated',
    );
    const doc = (await h.api(undefined, 'GET', '/openapi.json')).json() as {
      paths: Record<string, Record<string, { operationId?: string; tags?: string[]; summary?: string }>>;
    };
    let n = 0;
    const ids = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        n += 1;
        assert.ok(op.operationId && op.tags?.length && op.summary, `${method} ${path}`);
        assert.ok(!ids.has(op.operationId), `duplicate operationId ${op.operationId}`);
        ids.add(op.operationId);
      }
    }
    assert.ok(n >= 25, `only ${n} operations`);
    assert.ok(doc.paths['/v1/payment-intents/{intentId}/card-payments']);
  });

  test('OpenAPI: every status field describes its state machine, one row per edge of the tables', async () => {
    type Schema = { description?: string; properties?: Record<string, Schema> };
    const doc = (await h.api(undefined, 'GET', '/openapi.json')).json() as {
      paths: Record<
        string,
        Record<string, { responses: Record<string, { content: Record<string, { schema: Schema }> }> }>
      >;
    };
    const attributes = (path: string, method: string, status: string) =>
      doc.paths[path]![method]!.responses[status]!.content['application/json']!.schema.properties!.data!
        .properties!.attributes!.properties!;
    const described: Record<MachineName, string | undefined> = {
      paymentIntent: attributes('/v1/payment-intents/{intentId}', 'get', '200').status?.description,
      cardPayment: attributes('/v1/card-payments/{id}', 'get', '200').status?.description,
      voiceSession: attributes('/v1/voice-sessions/{id}', 'get', '200').status?.description,
    };
    for (const name of Object.keys(MACHINES) as MachineName[]) {
      const text = described[name] ?? '';
      for (const e of MACHINES[name].edges) {
        assert.ok(
          text.includes(`| ${e.from} | ${e.event} | ${e.to} |`),
          `${name}: ${e.from} --${e.event}-->`,
        );
      }
    }
    const caseTexts = [
      attributes('/v1/parties/{partyId}/compliance', 'get', '200').caseStatus?.description ?? '',
      attributes('/v1/parties/{partyId}/compliance/session', 'get', '200').status?.description ?? '',
    ];
    for (const text of caseTexts) {
      for (const from of CASE_STATUSES) {
        assert.ok(text.includes(`| ${from} | ${CASE_TRANSITIONS[from].join(', ')} |`), `case ${from}`);
      }
    }
  });
});

describe('payments: PAYMENTS_TAX_RATES reaches the service', () => {
  const clock = new ManualClock(START);
  let h: PaymentsHarness;
  let m: TestMerchant;

  before(async () => {
    // A custom code, and a default code at another rate; the other default codes are gone (the table replaces them).
    h = await startPayments(clock, { env: { PAYMENTS_TAX_RATES: 'city_books=7.25,txcd_99999999=10' } });
    m = await h.merchant('Tax table');
  });
  after(async () => h.close());

  const create = (taxMode: string, lineItems: unknown[]) =>
    h.api(m.key, 'POST', '/v1/payment-intents', {
      data: {
        type: 'paymentIntent',
        attributes: { description: 'Books', taxMode, lineItems },
        relationships: { customerParty: { data: { type: 'party', id: m.customerId } } },
      },
    });

  test('exact cents with the configured rates (exclusive and inclusive); a default code not in the table is 400', async () => {
    // exclusive: 3 × 1999 = 5997 at 7.25 % = 434.7825 -> 435; 2 × 1250 = 2500 at 10 % = 250.
    const ex = await create('exclusive', [
      { description: 'Novel', quantity: 3, unitAmount: 1999, taxCode: 'city_books' },
      { description: 'Notebook', quantity: 2, unitAmount: 1250, taxCode: 'txcd_99999999' },
    ]);
    assert.equal(ex.statusCode, 201, ex.body);
    const a = ex.json().data.attributes;
    assert.deepEqual(
      a.lineItems.map((l: { subtotalAmount: number; taxAmount: number; totalAmount: number }) => [
        l.subtotalAmount,
        l.taxAmount,
        l.totalAmount,
      ]),
      [
        [5997, 435, 6432],
        [2500, 250, 2750],
      ],
    );
    assert.equal(a.taxAmount, 685);
    assert.equal(a.amount, 9182);
    // inclusive: 1000 gross at 7.25 % -> 1000 × 0.0725 / 1.0725 = 67.599… -> 68 tax, 932 subtotal.
    const inc = await create('inclusive', [
      { description: 'Atlas', quantity: 1, unitAmount: 1000, taxCode: 'city_books' },
    ]);
    assert.equal(inc.statusCode, 201, inc.body);
    assert.deepEqual([inc.json().data.attributes.amount, inc.json().data.attributes.taxAmount], [1000, 68]);
    assert.equal(inc.json().data.attributes.lineItems[0].subtotalAmount, 932);
    // txcd_10000000 is a default code, but not in this table.
    assertError(
      await create('exclusive', [
        { description: 'SaaS', quantity: 1, unitAmount: 100, taxCode: 'txcd_10000000' },
      ]),
      400,
      'invalid_value',
      '/data/attributes/lineItems/0/taxCode',
    );
  });
});
