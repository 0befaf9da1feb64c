/**
 * The outbound queue (spec "Limits"): 10 texts per minute per line (extras wait), the daily segment budget per line
 * per UTC day (over-budget texts are not sent and not retried; reset at 00:00 UTC), texts refused before the carrier
 * counting toward neither limit, and both limits holding across several workers. Time moves on the injected clock.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eq, sql } from 'drizzle-orm';
import fc from 'fast-check';
import { SegmentedMessage } from 'sms-segments-calculator';
import { ManualClock } from '../../../platform/clock.ts';
import {
  CarrierSimulator,
  countSegments,
  DeterministicDraftingAgent,
  isOneGsm7Segment,
  readTextingConfig,
  SIMULATOR_REFUSED_NUMBER,
  sendTextTask,
  Texting,
  textSendSweepTask,
} from '../communications/index.ts';
import { textOutbox } from '../db/schema.ts';
import { json, type MediaBuyingHarness, startMediaBuying } from './support.ts';
import {
  carrierLog,
  dbOf,
  inbound,
  outboxOf,
  outboxRow,
  sendText,
  setupSeller,
  wakeJobs,
} from './texting-support.ts';

/**
 * Three workers at once (three Graphile Worker runners on the same database), with a send job of every line that has
 * pending texts for each (as when a job's key was detached while it ran): all work on one line at the same time.
 */
async function workers(h: MediaBuyingHarness): Promise<void> {
  const db = dbOf(h);
  const lines = await db.execute(
    sql`select distinct l.public_id from media_buying.text_outbox o join media_buying.text_lines l on l.id = o.line_id where o.status = 'pending'`,
  );
  for (const row of lines.rows as { public_id: string }[])
    for (let i = 0; i < 2; i++) await sendTextTask.enqueue(db, { lineId: row.public_id });
  await Promise.all([h.platform.runDueJobs(), h.platform.runDueJobs(), h.platform.runDueJobs()]);
}

describe('segments (GSM-7 with its extension table, UCS-2)', () => {
  test('GSM-7: 160 in one segment, 161 in two (153 each); extension characters count twice', () => {
    assert.deepEqual(countSegments('a'.repeat(160)), { encoding: 'GSM-7', segments: 1 });
    assert.deepEqual(countSegments('a'.repeat(161)), { encoding: 'GSM-7', segments: 2 });
    assert.deepEqual(countSegments('a'.repeat(306)), { encoding: 'GSM-7', segments: 2 });
    assert.deepEqual(countSegments('a'.repeat(307)), { encoding: 'GSM-7', segments: 3 });
    assert.deepEqual(countSegments('€'.repeat(80)), { encoding: 'GSM-7', segments: 1 });
    assert.deepEqual(countSegments('€'.repeat(81)), { encoding: 'GSM-7', segments: 2 });
    assert.deepEqual(countSegments(`${'a'.repeat(158)}[`), { encoding: 'GSM-7', segments: 1 });
    assert.deepEqual(countSegments(`${'a'.repeat(159)}{`), { encoding: 'GSM-7', segments: 2 });
  });

  test('UCS-2: any character outside GSM-7 makes 70 per segment (67 each when longer)', () => {
    assert.deepEqual(countSegments('ж'.repeat(70)), { encoding: 'UCS-2', segments: 1 });
    assert.deepEqual(countSegments('ж'.repeat(71)), { encoding: 'UCS-2', segments: 2 });
    assert.deepEqual(countSegments(`${'a'.repeat(69)}✓`), { encoding: 'UCS-2', segments: 1 });
    assert.deepEqual(countSegments(`${'a'.repeat(70)}✓`), { encoding: 'UCS-2', segments: 2 });
    assert.equal(isOneGsm7Segment('é'.repeat(160)), true, 'é is in the GSM-7 basic table');
    assert.equal(isOneGsm7Segment('ê'), false, 'ê is not');
  });

  test('the count without the library for plain GSM-7 texts agrees with the library on any text', () => {
    // Basic-table characters (the count without the library), CR and CR LF, extension characters, UCS-2 ones, an
    // emoji (a surrogate pair) and a combining mark: every mix, up to four segments and past them.
    const alphabet = [
      ...'aZ0 @$_!?.\n\r',
      'é',
      'Ä',
      'Ω',
      'ß',
      '€',
      '{',
      '^',
      '\f',
      '`',
      '’',
      'ж',
      '😀',
      '\u0301',
    ];
    const text = fc.oneof(
      fc.array(fc.constantFrom(...alphabet), { minLength: 1, maxLength: 700 }).map((a) => a.join('')),
      fc.array(fc.constantFrom('a', 'é', ' '), { minLength: 150, maxLength: 620 }).map((a) => a.join('')),
      fc.string({ minLength: 1, maxLength: 400, unit: 'grapheme' }),
    );
    fc.assert(
      fc.property(text, (t) => {
        const library = new SegmentedMessage(t);
        assert.deepEqual(countSegments(t), {
          encoding: library.encodingName,
          segments: library.segmentsCount,
        });
      }),
      { numRuns: 3000 },
    );
  });
});

test('the carrier simulator sends a text once per idempotency key (a repeat answers the same message id)', async () => {
  const carrier = new CarrierSimulator();
  const text = {
    channel: 'sms' as const,
    from: '+12025550100',
    to: '+12125550123',
    text: 'x',
    idempotencyKey: 'k1',
    signal: new AbortController().signal,
  };
  const a = await carrier.send(text);
  const b = await carrier.send(text);
  const c = await carrier.send({ ...text, idempotencyKey: 'k2' });
  assert.ok(a.accepted && b.accepted && c.accepted);
  assert.equal(a.carrierMessageId, b.carrierMessageId);
  assert.notEqual(a.carrierMessageId, c.carrierMessageId);
  assert.equal(carrier.sent().length, 2);
});

describe('the outbound queue: 10 per minute per line, across several workers', () => {
  let h: MediaBuyingHarness;
  before(async () => {
    // A slow carrier (20 ms per text) makes two workers overlap on one line.
    h = await startMediaBuying({ env: { MEDIA_BUYING_CARRIER_SIMULATOR_LATENCY_MS: '20' } });
  });
  after(() => h.close());

  test('15 texts: three workers send exactly 10 in the minute; the rest wait and go out once the minute has passed', async () => {
    const seller = await setupSeller(h);
    for (let i = 0; i < 15; i++) {
      const res = await sendText(h, seller.adminKey, {
        line: seller.line,
        destination: '+12125550123',
        text: `t${i}`,
      });
      assert.equal(res.statusCode, 202, res.body);
    }
    await workers(h);
    let rows = await outboxOf(h, seller.lineId);
    assert.equal(rows.filter((r) => r.status === 'sent').length, 10);
    assert.equal(rows.filter((r) => r.status === 'pending').length, 5);
    // Still inside the minute: nothing more goes out, whatever wakes the jobs.
    h.clock.advance(30_000);
    await wakeJobs(h);
    await workers(h);
    rows = await outboxOf(h, seller.lineId);
    assert.equal(rows.filter((r) => r.status === 'sent').length, 10);
    h.clock.advance(31_000);
    await wakeJobs(h);
    await workers(h);
    rows = await outboxOf(h, seller.lineId);
    assert.equal(rows.filter((r) => r.status === 'sent').length, 15);
    const log = (await carrierLog(h)).filter((m) => m.from === seller.line);
    assert.equal(log.length, 15);
    assert.equal(log[0]!.to, '+12125550123');
  });

  test('three send jobs of one line running at once (each as a worker would, with a slow carrier) send exactly 10', async () => {
    const seller = await setupSeller(h);
    for (let i = 0; i < 14; i++)
      await sendText(h, seller.adminKey, { line: seller.line, destination: '+12125550123', text: `p${i}` });
    const svc = h.platform.booted.services.get('media-buying')!;
    const texting = new Texting({
      db: svc.ctx.db,
      clock: svc.ctx.clock,
      secrets: svc.ctx.secrets,
      config: readTextingConfig({}),
      carrier: new CarrierSimulator(20),
      agent: new DeterministicDraftingAgent(),
      logger: svc.ctx.logger,
    });
    await Promise.all([
      texting.pump(seller.lineId),
      texting.pump(seller.lineId),
      texting.pump(seller.lineId),
    ]);
    const rows = await outboxOf(h, seller.lineId);
    assert.equal(rows.filter((r) => r.status === 'sent').length, 10);
    assert.equal(rows.filter((r) => r.status === 'pending').length, 4);
  });

  test('a line has one waiting send job, whatever the number of queued texts; it sends them all', async () => {
    const seller = await setupSeller(h);
    for (let i = 0; i < 5; i++)
      await sendText(h, seller.adminKey, { line: seller.line, destination: '+12125550123', text: `j${i}` });
    const jobs = await dbOf(h).execute(
      sql`select count(*)::int as n from graphile_worker._private_jobs where payload->>'lineId' = ${seller.lineId}`,
    );
    assert.equal((jobs.rows[0] as { n: number }).n, 1);
    await h.platform.runDueJobs();
    assert.equal((await outboxOf(h, seller.lineId)).filter((r) => r.status === 'sent').length, 5);
  });

  test('a send pulls forward the line job in backoff after a carrier failure, and revives one that failed for good', async () => {
    const seller = await setupSeller(h);
    const db = dbOf(h);
    const key = `${sendTextTask.name}:${seller.lineId}`;
    const job = async () =>
      (
        await db.execute(
          sql`select attempts, max_attempts, run_at <= now() as due from graphile_worker._private_jobs where key = ${key}`,
        )
      ).rows[0] as { attempts: number; max_attempts: number; due: boolean };
    for (const failed of ['backoff', 'dead'] as const) {
      await sendText(h, seller.adminKey, {
        line: seller.line,
        destination: '+12125550123',
        text: `a-${failed}`,
      });
      // The carrier was unreachable: the job failed and waits (backoff) or has no attempt left.
      await db.execute(
        failed === 'backoff'
          ? sql`update graphile_worker._private_jobs set attempts = 1, run_at = now() + interval '3 hours', last_error = 'carrier down' where key = ${key}`
          : sql`update graphile_worker._private_jobs set attempts = max_attempts, last_error = 'carrier down' where key = ${key}`,
      );
      await h.platform.runDueJobs();
      assert.equal(
        (await outboxOf(h, seller.lineId)).filter((r) => r.status === 'pending').length,
        1,
        failed,
      );
      const res = await sendText(h, seller.adminKey, {
        line: seller.line,
        destination: '+12125550123',
        text: `b-${failed}`,
      });
      assert.equal(res.statusCode, 202, res.body);
      const after = await job();
      assert.deepEqual([after.attempts, after.due], [0, true], failed);
      await h.platform.runDueJobs();
      assert.equal(
        (await outboxOf(h, seller.lineId)).filter((r) => r.status === 'pending').length,
        0,
        failed,
      );
    }
  });

  test('the send sweep gives a job to a line with texts to send and none that will run (lost, failed for good, locked by a killed worker, a text stuck sending); a waiting or running job is left alone', async () => {
    const seller = await setupSeller(h);
    const db = dbOf(h);
    const svc = h.platform.booted.services.get('media-buying')!;
    assert.ok(
      svc.module.cron?.some((c) => c.task === textSendSweepTask && c.pattern === '* * * * *'),
      'the sweep runs every minute',
    );
    const texting = new Texting({
      db: svc.ctx.db,
      clock: svc.ctx.clock,
      secrets: svc.ctx.secrets,
      config: readTextingConfig({}),
      carrier: new CarrierSimulator(),
      agent: new DeterministicDraftingAgent(),
      logger: svc.ctx.logger,
    });
    const key = `${sendTextTask.name}:${seller.lineId}`;
    const jobs = async () =>
      (
        await db.execute(
          sql`select id::text, run_at::text from graphile_worker._private_jobs where key = ${key} order by id`,
        )
      ).rows as { id: string; run_at: string }[];
    const send = (text: string) =>
      sendText(h, seller.adminKey, { line: seller.line, destination: '+12125550123', text });
    const pending = async () =>
      (await outboxOf(h, seller.lineId)).filter((r) => r.status === 'pending' || r.status === 'sending')
        .length;

    // A waiting job: nothing written.
    await send('waiting');
    const waiting = await jobs();
    assert.equal(waiting.length, 1);
    assert.ok(!(await texting.sweep()).includes(seller.lineId));
    assert.deepEqual(await jobs(), waiting);
    // The job lost (a process stopped between the text's commit and its job): the sweep adds it, the text goes out.
    await db.execute(sql`delete from graphile_worker._private_jobs where key = ${key}`);
    await h.platform.runDueJobs();
    assert.equal(await pending(), 1, 'no job: the text waits');
    assert.ok((await texting.sweep()).includes(seller.lineId));
    await h.platform.runDueJobs();
    assert.equal(await pending(), 0);

    // A job that failed for good (no attempt left): revived.
    await send('dead');
    await db.execute(
      sql`update graphile_worker._private_jobs set attempts = max_attempts, last_error = 'carrier down' where key = ${key}`,
    );
    await h.platform.runDueJobs();
    assert.equal(await pending(), 1);
    assert.ok((await texting.sweep()).includes(seller.lineId));
    await h.platform.runDueJobs();
    assert.equal(await pending(), 0);

    // A running job is left alone; one locked for 15 minutes (its worker was killed) gets a successor.
    await send('killed');
    await db.execute(
      sql`update graphile_worker._private_jobs set attempts = 1, locked_at = now() - interval '5 minutes', locked_by = 'killed-worker' where key = ${key}`,
    );
    assert.ok(!(await texting.sweep()).includes(seller.lineId), 'a job running for 5 minutes');
    await db.execute(
      sql`update graphile_worker._private_jobs set locked_at = now() - interval '16 minutes' where key = ${key}`,
    );
    assert.ok((await texting.sweep()).includes(seller.lineId));
    await h.platform.runDueJobs();
    assert.equal(await pending(), 0);
    await db.execute(sql`delete from graphile_worker._private_jobs where locked_by = 'killed-worker'`);

    // A text left `sending` (the process stopped before the carrier's answer) and no job: after 5 minutes.
    const stuck = json(await send('stuck')).data.outboxId as string;
    await db.execute(sql`delete from graphile_worker._private_jobs where key = ${key}`);
    await db
      .update(textOutbox)
      .set({ status: 'sending', sentAt: h.clock.now() })
      .where(eq(textOutbox.publicId, stuck));
    h.clock.advance(4 * 60_000);
    assert.ok(!(await texting.sweep()).includes(seller.lineId), 'sending for 4 minutes');
    h.clock.advance(60_000);
    assert.ok((await texting.sweep()).includes(seller.lineId));
    await h.platform.runDueJobs();
    assert.equal((await outboxRow(h, stuck)).status, 'sent');
    // Nothing left to send: nothing to sweep.
    assert.ok(!(await texting.sweep()).includes(seller.lineId));
    assert.deepEqual(await jobs(), []);
  });

  test('a send waiting for the line lock while the job drains the queue still gets a job (the check reads the job after the lock)', async () => {
    const seller = await setupSeller(h);
    const db = dbOf(h);
    const key = `${sendTextTask.name}:${seller.lineId}`;
    // A waiting job of the line, its queue empty.
    await sendTextTask.enqueue(db, { lineId: seller.lineId }, { jobKey: seller.lineId });
    const jobId = (
      (await db.execute(sql`select id from graphile_worker._private_jobs where key = ${key}`)).rows[0] as {
        id: string;
      }
    ).id;
    // The job's step: the line locked for update (no text pending) ...
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let lockTaken!: () => void;
    const taken = new Promise<void>((resolve) => {
      lockTaken = resolve;
    });
    const step = db.transaction(async (tx) => {
      await tx.execute(
        sql`select id from media_buying.text_lines where public_id = ${seller.lineId} for update`,
      );
      lockTaken();
      await held;
    });
    await taken;
    // ... a send arrives and waits for the line's lock ...
    const sending = sendText(h, seller.adminKey, {
      line: seller.line,
      destination: '+12125550123',
      text: 'late',
    });
    for (let i = 0; ; i++) {
      const waiting = await db.execute(
        sql`select 1 from pg_stat_activity where wait_event_type = 'Lock' and query ilike '%for key share%'`,
      );
      if (waiting.rows.length > 0) break;
      assert.ok(i < 500, 'the send never waited for the line lock');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // ... meanwhile the worker has taken the job (it runs), finds the queue empty and completes.
    await db.execute(
      sql`update graphile_worker._private_jobs set locked_at = now(), locked_by = 'test-worker' where id = ${jobId}`,
    );
    release();
    await step;
    assert.equal((await sending).statusCode, 202);
    await db.execute(sql`delete from graphile_worker._private_jobs where id = ${jobId}`);
    await h.platform.runDueJobs();
    assert.deepEqual(
      (await outboxOf(h, seller.lineId)).map((r) => r.status),
      ['sent'],
      'the text is not left pending without a job',
    );
  });

  test('the carrier is called after the line lock is released, with the outbox id as idempotency key; a text left sending is handed over again with the same key', async () => {
    const seller = await setupSeller(h);
    const svc = h.platform.booted.services.get('media-buying')!;
    const db = dbOf(h);
    const calls: { key: string; lockFree: boolean }[] = [];
    let unreachable = false;
    const carrier = {
      async send(text: { idempotencyKey: string }) {
        // Another connection can lock the line at once: no transaction holds it while the carrier works.
        const lockFree = await db
          .transaction(async (tx) => {
            await tx.execute(
              sql`select 1 from media_buying.text_lines where public_id = ${seller.lineId} for update nowait`,
            );
            return true;
          })
          .catch(() => false);
        calls.push({ key: text.idempotencyKey, lockFree });
        if (unreachable) throw new Error('carrier unreachable');
        return { accepted: true as const, carrierMessageId: `c-${text.idempotencyKey}` };
      },
    };
    const texting = new Texting({
      db: svc.ctx.db,
      clock: svc.ctx.clock,
      secrets: svc.ctx.secrets,
      config: readTextingConfig({}),
      carrier,
      agent: new DeterministicDraftingAgent(),
      logger: svc.ctx.logger,
    });
    const send = async (text: string) =>
      json(await sendText(h, seller.adminKey, { line: seller.line, destination: '+12125550123', text })).data
        .outboxId as string;
    const first = await send('one');
    await texting.pump(seller.lineId);
    assert.deepEqual(calls, [{ key: first, lockFree: true }]);
    const status = async (id: string) =>
      (
        await db.execute(
          sql`select status, sent_at is not null as counted from media_buying.text_outbox where public_id = ${id}`,
        )
      ).rows[0];
    assert.deepEqual(await status(first), { status: 'sent', counted: true });
    // The carrier cannot be reached: the text is pending again and not counted; the job's error makes it retry.
    unreachable = true;
    const second = await send('two');
    await assert.rejects(texting.pump(seller.lineId), /carrier unreachable/);
    assert.deepEqual(await status(second), { status: 'pending', counted: false });
    unreachable = false;
    // A process stopped between marking and recording: the text stays `sending` (counted), and after 5 minutes it is
    // handed over again with the same key.
    await db.execute(
      sql`update media_buying.text_outbox set status = 'sending', sent_at = ${h.clock.now().toISOString()}::timestamptz where public_id = ${second}`,
    );
    calls.length = 0;
    await texting.pump(seller.lineId);
    assert.deepEqual(calls, [], 'not yet stuck');
    h.clock.advance(5 * 60_000);
    await texting.pump(seller.lineId);
    assert.deepEqual(calls, [{ key: second, lockFree: true }]);
    assert.deepEqual(await status(second), { status: 'sent', counted: true });
  });

  test('a carrier call that does not answer in MEDIA_BUYING_CARRIER_TIMEOUT_MS is abandoned: the text is pending again, the job retries, the carrier was told to stop', async () => {
    const seller = await setupSeller(h);
    const svc = h.platform.booted.services.get('media-buying')!;
    const signals: AbortSignal[] = [];
    const carrier = {
      // A carrier that never answers (a hung connection): only the signal ends the call.
      send(text: { signal: AbortSignal }) {
        signals.push(text.signal);
        return new Promise<never>(() => undefined);
      },
    };
    const texting = new Texting({
      db: svc.ctx.db,
      clock: svc.ctx.clock,
      secrets: svc.ctx.secrets,
      config: readTextingConfig({ MEDIA_BUYING_CARRIER_TIMEOUT_MS: '50' }),
      carrier,
      agent: new DeterministicDraftingAgent(),
      logger: svc.ctx.logger,
    });
    const sent = json(
      await sendText(h, seller.adminKey, { line: seller.line, destination: '+12125550123', text: 'hung' }),
    ).data.outboxId as string;
    await assert.rejects(texting.pump(seller.lineId), (err: Error) => err.name === 'TimeoutError');
    assert.equal(signals.length, 1);
    assert.ok(signals[0]!.aborted, 'the carrier was told to stop');
    const row = (
      await dbOf(h).execute(
        sql`select status, sent_at is not null as counted from media_buying.text_outbox where public_id = ${sent}`,
      )
    ).rows[0];
    assert.deepEqual(row, { status: 'pending', counted: false });
  });

  test('MEDIA_BUYING_CARRIER_TIMEOUT_MS is 30 s by default, 1 ms to 2 minutes', () => {
    assert.equal(readTextingConfig({}).carrierTimeoutMs, 30_000);
    assert.throws(
      () => readTextingConfig({ MEDIA_BUYING_CARRIER_TIMEOUT_MS: '120001' }),
      /MEDIA_BUYING_CARRIER_TIMEOUT_MS/,
    );
    assert.throws(
      () => readTextingConfig({ MEDIA_BUYING_CARRIER_TIMEOUT_MS: '0' }),
      /MEDIA_BUYING_CARRIER_TIMEOUT_MS/,
    );
  });

  test('the limit is per line: another line sends its own 10 in the same minute', async () => {
    const a = await setupSeller(h);
    const b = await setupSeller(h);
    for (let i = 0; i < 11; i++) {
      await sendText(h, a.adminKey, { line: a.line, destination: '+12125550123', text: `a${i}` });
      await sendText(h, b.adminKey, { line: b.line, destination: '+12125550123', text: `b${i}` });
    }
    await workers(h);
    for (const s of [a, b]) {
      const rows = await outboxOf(h, s.lineId);
      assert.equal(rows.filter((r) => r.status === 'sent').length, 10);
    }
  });

  test('texts refused before the carrier (an opted-out recipient, a retired line) are dropped, never sent, and count toward nothing', async () => {
    const seller = await setupSeller(h);
    const who = '+13475550142';
    for (let i = 0; i < 3; i++)
      await sendText(h, seller.adminKey, { line: seller.line, destination: who, text: `queued ${i}` });
    // STOP drops what is queued to that number.
    assert.equal(json(await inbound(h, seller.line, who, 'QUIT')).data.kind, 'opt_out');
    for (let i = 0; i < 10; i++)
      await sendText(h, seller.adminKey, { line: seller.line, destination: '+12125550123', text: `ok ${i}` });
    await workers(h);
    const rows = await outboxOf(h, seller.lineId);
    assert.equal(rows.filter((r) => r.status === 'dropped' && r.reason === 'opted_out').length, 3);
    assert.equal(
      rows.filter((r) => r.status === 'sent').length,
      10,
      'the dropped ones did not use the minute',
    );
    await sendText(h, seller.adminKey, {
      line: seller.line,
      destination: '+12125550123',
      text: 'after retire',
    });
    await h.ops('PATCH', `/_ops/text-lines/${seller.lineId}`, { status: 'retired' });
    h.clock.advance(61_000);
    await workers(h);
    const last = (await outboxOf(h, seller.lineId)).at(-1)!;
    assert.deepEqual([last.status, last.reason], ['dropped', 'line_retired']);
  });
});

describe('the daily segment budget per line (UTC day)', () => {
  let h: MediaBuyingHarness;
  before(async () => {
    h = await startMediaBuying({
      clock: new ManualClock(new Date('2026-11-24T23:50:00Z')),
      env: { MEDIA_BUYING_TEXT_DAILY_SEGMENTS: '6', MEDIA_BUYING_TEXT_PER_MINUTE: '1000' },
    });
  });
  after(() => h.close());

  test('long and non-Latin texts cost several segments; an over-budget text is not sent and not retried; 00:00 UTC resets', async () => {
    const seller = await setupSeller(h);
    const send = async (text: string, destination = '+12125550123') => {
      const res = await sendText(h, seller.adminKey, { line: seller.line, destination, text });
      assert.equal(res.statusCode, 202, res.body);
      await h.platform.runDueJobs();
      return (await outboxOf(h, seller.lineId)).at(-1)!;
    };
    // Refused by the carrier: not sent, costs nothing.
    const refused = await send('a'.repeat(300), SIMULATOR_REFUSED_NUMBER);
    assert.equal(refused.status, 'refused');
    assert.deepEqual([(await send('a'.repeat(161))).segments, 'sent'], [2, 'sent']);
    const ucs = await send('ж'.repeat(71));
    assert.deepEqual([ucs.segments, ucs.status], [2, 'sent']);
    const over = await send('€'.repeat(81)); // 2 + 2 + 2 = 6 segments: exactly the budget
    assert.deepEqual([over.segments, over.status], [2, 'sent']);
    const spent = await send('one more');
    assert.deepEqual([spent.status, spent.reason], ['over_budget', 'daily_budget']);
    // Not retried: waking every job and running again changes nothing.
    await wakeJobs(h);
    await h.platform.runDueJobs();
    assert.equal(
      (await outboxOf(h, seller.lineId)).find((r) => r.outboxId === spent.outboxId)!.status,
      'over_budget',
    );
    // 23:59:59 is the same UTC day; 00:00:00 the next.
    h.clock.set(new Date('2026-11-24T23:59:59Z'));
    assert.equal((await send('still today')).status, 'over_budget');
    h.clock.set(new Date('2026-11-25T00:00:00Z'));
    assert.equal((await send('new day')).status, 'sent');
  });

  test('texts dropped (opted out) or over budget leave the daily budget untouched', async () => {
    h.clock.set(new Date('2026-11-26T01:00:00Z'));
    const seller = await setupSeller(h);
    const who = '+13475550177';
    for (let i = 0; i < 3; i++)
      await sendText(h, seller.adminKey, { line: seller.line, destination: who, text: 'b'.repeat(161) });
    await inbound(h, seller.line, who, 'STOP');
    // 7 segments: over the budget of 6 by itself.
    await sendText(h, seller.adminKey, {
      line: seller.line,
      destination: '+12125550123',
      text: 'c'.repeat(7 * 153),
    });
    await h.platform.runDueJobs();
    for (let i = 0; i < 3; i++)
      await sendText(h, seller.adminKey, {
        line: seller.line,
        destination: '+12125550123',
        text: 'd'.repeat(161),
      });
    await h.platform.runDueJobs();
    const rows = await outboxOf(h, seller.lineId);
    assert.deepEqual(
      rows.map((r) => [r.status, r.segments]),
      [
        ['dropped', 2],
        ['dropped', 2],
        ['dropped', 2],
        ['over_budget', 7],
        ['sent', 2],
        ['sent', 2],
        ['sent', 2],
      ],
      'the whole budget (6) is still there after the dropped and over-budget texts',
    );
  });
});
