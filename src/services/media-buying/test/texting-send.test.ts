/**
 * The text-message commands (spec "Text messaging", rules 1-6; "Authentication" rule 7; "Limits", text destinations).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { assertError, json, type MediaBuyingHarness, STRONG_PASSWORD, startMediaBuying } from './support.ts';
import {
  dbOf,
  inbound,
  outboxOf,
  outboxRow,
  type SellerFixture,
  sendText,
  setupSeller,
  switchLines,
} from './texting-support.ts';

const DEST = '+12125550123';

describe('text-message commands', () => {
  let h: MediaBuyingHarness;
  let seller: SellerFixture;

  before(async () => {
    h = await startMediaBuying();
    seller = await setupSeller(h);
  });
  after(() => h.close());

  test('202 pending with an outboxId; the same requestId and fields repeat it (duplicate), changed fields are 409', async () => {
    const requestId = randomUUID();
    const body = { requestId, line: seller.line, destination: DEST, text: 'Proposal ready' };
    const first = await sendText(h, seller.adminKey, body);
    assert.equal(first.statusCode, 202, first.body);
    const data = json(first).data;
    assert.equal(data.requestId, requestId);
    assert.match(data.outboxId, /^txo_[0-9a-f]{32}$/);
    assert.equal(data.duplicate, false);
    assert.equal(data.status, 'pending');
    const again = await sendText(h, seller.adminKey, body);
    assert.equal(again.statusCode, 202);
    assert.deepEqual(json(again).data, { ...data, duplicate: true });
    for (const changed of [{ text: 'Proposal ready!' }, { destination: '+12125550124' }]) {
      const res = await sendText(h, seller.adminKey, { ...body, ...changed });
      assertError(res, 409, 'CONFLICT', 'request_id_reused');
    }
    // The same requestId on the RCS command is another channel: a change too.
    await h.ops('PUT', `/_ops/organizations/${seller.organizationId}/alpha/rcs-messaging`);
    const rcs = await sendText(h, seller.adminKey, body, '/api/v2/communications/rcs/messages');
    assertError(rcs, 409, 'CONFLICT', 'request_id_reused');
    const rows = (await outboxOf(h, seller.lineId)).filter((r) => r.outboxId === data.outboxId);
    assert.equal(rows.length, 1);
  });

  test('concurrent repeats of one requestId queue one text', async () => {
    const body = { requestId: randomUUID(), line: seller.line, destination: DEST, text: 'Race' };
    const answers = await Promise.all([1, 2, 3, 4].map(() => sendText(h, seller.adminKey, body)));
    const ids = new Set(answers.map((a) => json(a).data.outboxId));
    assert.equal(ids.size, 1);
    assert.equal(answers.filter((a) => json(a).data.duplicate === false).length, 1);
  });

  test('rule 1: phone lines disabled is 409; a retired line is 409 (also once its number is assigned to another account); a line of another Seller Account is 404', async () => {
    const off = await setupSeller(h, { enabled: false });
    assertError(
      await sendText(h, off.adminKey, { line: off.line, destination: DEST, text: 'x' }),
      409,
      'CONFLICT',
      'phone_lines_disabled',
    );
    // Another account's line, and a number that is no line, answer alike.
    assertError(
      await sendText(h, off.adminKey, { line: seller.line, destination: DEST, text: 'x' }),
      404,
      'NOT_FOUND',
    );
    assertError(
      await sendText(h, off.adminKey, { line: '+12025559999', destination: DEST, text: 'x' }),
      404,
      'NOT_FOUND',
    );
    await switchLines(h, off.organizationId, true);
    const ok = await sendText(h, off.adminKey, { line: off.line, destination: DEST, text: 'x' });
    assert.equal(ok.statusCode, 202, ok.body);
    const retired = await h.ops('PATCH', `/_ops/text-lines/${off.lineId}`, { status: 'retired' });
    assert.equal(retired.statusCode, 200, retired.body);
    assertError(
      await sendText(h, off.adminKey, { line: off.line, destination: DEST, text: 'x' }),
      409,
      'CONFLICT',
      'line_retired',
    );
    // Rule 1 asks for a number assigned by the operator: a retired line's account is told its state (409, "incomplete
    // account state"), not that the number is unknown (404), also once the number is assigned to another account,
    // whose line it then is.
    const next = await setupSeller(h, { line: off.line });
    assertError(
      await sendText(h, off.adminKey, { line: off.line, destination: DEST, text: 'x' }),
      409,
      'CONFLICT',
      'line_retired',
    );
    const theirs = await sendText(h, next.adminKey, { line: off.line, destination: DEST, text: 'x' });
    assert.equal(theirs.statusCode, 202, theirs.body);
    // Assigned again to the first account: its new line sends.
    await h.ops('PATCH', `/_ops/text-lines/${next.lineId}`, { status: 'retired' });
    const again = await h.ops('POST', '/_ops/text-lines', {
      organizationId: off.organizationId,
      number: off.line,
    });
    assert.equal(again.statusCode, 201, again.body);
    const ours = await sendText(h, off.adminKey, { line: off.line, destination: DEST, text: 'x' });
    assert.equal(ours.statusCode, 202, ours.body);
    assert.equal((await outboxOf(h, json(again).id)).length, 1);
  });

  test('rule 2 and Authentication rule 7: write access in the Seller Account; a buyer key, a read-only widget token are 403', async () => {
    const buyer = await sendText(h, h.seeded.apiKey, { line: seller.line, destination: DEST, text: 'x' });
    assertError(buyer, 403, 'FORBIDDEN', 'wrong_account_kind');
    // A member (write) may send; the key of a member never exceeds the member's role.
    const email = `member-${randomUUID().slice(0, 8)}@example.com`;
    const userId = await h.addMember(seller.organizationId, email, 'member');
    const cookie = await h.signIn(email, STRONG_PASSWORD);
    await h.acceptTerms(cookie);
    const key = json(await h.browser(cookie, 'POST', '/api/v2/user-api-keys', { label: 'm' })).data.key;
    const res = await sendText(h, key, { line: seller.line, destination: DEST, text: 'member' });
    assert.equal(res.statusCode, 202, res.body);
    // The member removed: the key stops at once.
    const removed = await h.browser(
      seller.cookie,
      'DELETE',
      `/api/v2/organizations/current/members/${userId}`,
    );
    assert.ok(removed.statusCode < 300, removed.body);
    assertError(
      await sendText(h, key, { line: seller.line, destination: DEST, text: 'member' }),
      401,
      'UNAUTHORIZED',
    );
    // A widget token of the administrator reads only.
    await h.ops('PUT', `/_ops/organizations/${seller.organizationId}/alpha/embedded-widgets`);
    const widget = await h.browser(seller.cookie, 'GET', '/api/v2/user-api-keys/widget-token');
    assert.equal(widget.statusCode, 200, widget.body);
    const token = json(widget).data.token;
    assertError(
      await sendText(h, token, { line: seller.line, destination: DEST, text: 'x' }),
      403,
      'FORBIDDEN',
      'insufficient_permission',
    );
    assertError(
      await h.send({ method: 'POST', url: '/api/v2/communications/messages', body: {} }),
      401,
      'UNAUTHORIZED',
    );
  });

  test('rule 5 and Limits: destinations outside the limits are 400 with nothing queued (900, short codes, toll-free, other countries)', async () => {
    const before = (await outboxOf(h, seller.lineId)).length;
    const cases: [string, string][] = [
      ['+19005551234', 'premium_rate'],
      ['+186753', 'short_code'],
      ['+18005551234', 'toll_free'],
      ['+14165551234', 'other_country'],
      ['+442071838750', 'other_country'],
      ['+15005550006', 'not_ordinary'],
      ['+11235551234', 'invalid_number'],
    ];
    for (const [destination, classification] of cases) {
      const res = await sendText(h, seller.adminKey, { line: seller.line, destination, text: 'x' });
      assertError(res, 400, 'BAD_REQUEST', 'destination_not_allowed');
      assert.equal(json(res).error.details.classification, classification, destination);
    }
    // Not E.164 at all (a bare short code): the schema refuses it.
    assertError(
      await sendText(h, seller.adminKey, { line: seller.line, destination: '86753', text: 'x' }),
      400,
      'VALIDATION_ERROR',
    );
    assert.equal((await outboxOf(h, seller.lineId)).length, before);
    // Puerto Rico shares +1 and is domestic.
    const pr = await sendText(h, seller.adminKey, {
      line: seller.line,
      destination: '+17875551234',
      text: 'x',
    });
    assert.equal(pr.statusCode, 202, pr.body);
  });

  test('rule 5: a recipient who opted out is 400 with nothing queued; START opts back in', async () => {
    const who = '+13475550111';
    const stop = await inbound(h, seller.line, who, ' stop ');
    assert.equal(stop.statusCode, 200, stop.body);
    assert.equal(json(stop).data.kind, 'opt_out');
    const before = (await outboxOf(h, seller.lineId)).length;
    const res = await sendText(h, seller.adminKey, { line: seller.line, destination: who, text: 'x' });
    assertError(res, 400, 'BAD_REQUEST', 'recipient_opted_out');
    assert.equal((await outboxOf(h, seller.lineId)).length, before);
    assert.equal(json(await inbound(h, seller.line, who, 'Start')).data.kind, 'opt_in');
    assert.equal(
      (await sendText(h, seller.adminKey, { line: seller.line, destination: who, text: 'x' })).statusCode,
      202,
    );
  });

  test('the destination and the words are encrypted at rest: the raw row holds neither', async () => {
    const text = 'Secret media plan words';
    const res = await sendText(h, seller.adminKey, { line: seller.line, destination: '+16465550177', text });
    const row = await outboxRow(h, json(res).data.outboxId);
    const raw = JSON.stringify(row);
    assert.ok(!raw.includes('6465550177'));
    assert.ok(!raw.includes('Secret media'));
    const dump = await dbOf(h).execute(sql`select * from media_buying.text_outbox`);
    assert.ok(!JSON.stringify(dump.rows).includes('6465550177'));
  });

  test('the seed: the demo Seller Account key sends from the demo line at once; the text goes out through the queue', async () => {
    assert.match(h.seeded.sellerApiKey, /^mbu_/);
    const res = await sendText(h, h.seeded.sellerApiKey, {
      line: h.seeded.sellerLine,
      destination: '+12125550188',
      text: 'Hello from the demo line',
    });
    assert.equal(res.statusCode, 202, res.body);
    await h.platform.runDueJobs();
    const log = json(await h.ops('GET', '/_ops/carrier/messages')).messages as { from: string; to: string }[];
    assert.ok(log.some((m) => m.from === h.seeded.sellerLine && m.to === '+12125550188'));
  });

  test("the operator's delivery log is an offset list: take (1-200, default 50) and skip, meta.pagination, newest first", async () => {
    const mine = await setupSeller(h);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(
        json(await sendText(h, mine.adminKey, { line: mine.line, destination: DEST, text: `log ${i}` })).data
          .outboxId,
      );
    const page = async (query: string) => {
      const res = await h.ops('GET', `/_ops/text-lines/${mine.lineId}/outbox${query}`);
      assert.equal(res.statusCode, 200, res.body);
      const body = json(res);
      return { ids: body.texts.map((t: { outboxId: string }) => t.outboxId), meta: body.meta.pagination };
    };
    const newest = [...ids].reverse();
    assert.deepEqual(await page(''), {
      ids: newest,
      meta: { skip: 0, take: 50, total: 5, hasMore: false },
    });
    assert.deepEqual(await page('?take=2'), {
      ids: newest.slice(0, 2),
      meta: { skip: 0, take: 2, total: 5, hasMore: true },
    });
    assert.deepEqual(await page('?take=2&skip=2'), {
      ids: newest.slice(2, 4),
      meta: { skip: 2, take: 2, total: 5, hasMore: true },
    });
    assert.deepEqual(await page('?take=2&skip=4'), {
      ids: newest.slice(4),
      meta: { skip: 4, take: 2, total: 5, hasMore: false },
    });
    assert.deepEqual(await page('?skip=9'), {
      ids: [],
      meta: { skip: 9, take: 50, total: 5, hasMore: false },
    });
    assert.deepEqual((await page('?status=sent')).meta.total, 0);
    assert.deepEqual((await page('?status=pending&take=1')).meta, {
      skip: 0,
      take: 1,
      total: 5,
      hasMore: true,
    });
    for (const bad of ['?take=0', '?take=201', '?skip=-1', '?take=x'])
      assertError(
        await h.ops('GET', `/_ops/text-lines/${mine.lineId}/outbox${bad}`),
        400,
        'VALIDATION_ERROR',
      );
  });

  test('rule 6: there is no status lookup route', async () => {
    const res = await sendText(h, seller.adminKey, { line: seller.line, destination: DEST, text: 'x' });
    const id = json(res).data.outboxId;
    for (const url of [`/api/v2/communications/messages/${id}`, '/api/v2/communications/messages']) {
      const get = await h.bearer(seller.adminKey, 'GET', url);
      assert.ok(get.statusCode === 404 || get.statusCode === 405, `${url}: ${get.statusCode}`);
    }
  });

  test('RCS is an alpha feature: 403 ALPHA_OPT_IN_REQUIRED until the Seller Account opts in', async () => {
    const other = await setupSeller(h);
    const body = { line: other.line, destination: DEST, text: 'rich' };
    assertError(
      await sendText(h, other.adminKey, body, '/api/v2/communications/rcs/messages'),
      403,
      'ALPHA_OPT_IN_REQUIRED',
    );
    await h.ops('PUT', `/_ops/organizations/${other.organizationId}/alpha/rcs-messaging`);
    const res = await sendText(h, other.adminKey, body, '/api/v2/communications/rcs/messages');
    assert.equal(res.statusCode, 202, res.body);
  });
});
