/**
 * Agent text-message lines (spec document 000, "Text messaging" rules 1-6, "Events" rules 1-7, "Limits"; issue 19):
 * the operator's lines and switch, the send command, the outbound queue under the per-line limits, inbound texts
 * (keywords, consent, the drafting agent) and retention. No Fastify here: routes call these methods.
 *
 * Numbers and words are sealed with the platform's SecretBox (aad: the row's public id) and matched by an HMAC-SHA256
 * hash under a key derived from the secrets key (`db/communications.ts`).
 */
import { createHmac } from 'node:crypto';
import { and, eq, gte, inArray, isNull, lte, sql } from 'drizzle-orm';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../../../platform/clock.ts';
import type { SecretBox } from '../../../platform/crypto.ts';
import { type Db, type Executor, NamedStatement } from '../../../platform/database.ts';
import { prefixedHexId } from '../../../platform/ids.ts';
import type { AppLogger } from '../../../platform/logger.ts';
import {
  type InboundKind,
  phoneLineSwitches,
  storefronts,
  type TextChannel,
  textConsents,
  textConversationArrivals,
  textConversations,
  textInbound,
  textLines,
  textOutbox,
} from '../db/schema.ts';
import { badRequest, conflict, notFound } from '../media-buying-errors.ts';
import type { Carrier } from './carrier.ts';
import type { TextingConfig } from './config.ts';
import { classifyDestination, normalizeSender } from './destinations.ts';
import { type DraftingAgent, helpReply, ReplyTemplate } from './drafting.ts';
import { keywordOf } from './keywords.ts';
import { countSegments } from './segments.ts';
import { draftReplyTask, sendTextTask } from './tasks.ts';

/** The inbound reply window (spec "Limits"): a text older than this when the agent reaches it gets no reply. */
export const REPLY_WINDOW_MS = 15 * 60_000;
/** Agent replies to one number from one line per {@link REPLY_WINDOW_MS} (spec "Limits"). */
export const REPLIES_PER_NUMBER = 5;
/** Answers to HELP/INFO to one number from one line per {@link REPLY_WINDOW_MS} (our choice: the spec is silent). */
const HELP_REPLIES_PER_NUMBER = 1;
/** Replies (agent and help answers) from one line per hour (spec "Limits"). */
export const REPLIES_PER_LINE_HOUR = 60;
/** How long inbound words and numbers are kept (spec "Limits", "Text retention"). */
export const RETENTION_MS = 30 * 24 * 3_600_000;
const MINUTE_MS = 60_000;
/** Texts one run of a line's send job handles before it hands over to a successor job. */
const PUMP_BATCH = 50;

/**
 * Wall time after which a send run starts no other text (each carrier call is bounded by `carrierTimeoutMs`, at most
 * 2 minutes), so a run ends far inside {@link ORPHANED_JOB_MINUTES}.
 */
const PUMP_BUDGET_MS = 2 * 60_000;
const HOUR_MS = 3_600_000;

/** The answer of the send command (spec "Text-message command result"). */
export interface TextCommandResult {
  requestId: string;
  outboxId: string;
  duplicate: boolean;
  status: 'pending';
}

/** A send command as the route hands it over. */
export interface TextCommand {
  channel: TextChannel;
  requestId: string;
  /** The line's number, E.164. */
  line: string;
  destination: string;
  text: string;
}

/** An inbound text as the carrier webhook hands it over. */
export interface InboundText {
  carrierMessageId: string;
  /** The line's number, E.164. */
  to: string;
  /** The sender's number as the carrier gives it (untrusted). */
  from: string;
  text: string;
}

type LineRow = typeof textLines.$inferSelect;

/** A text marked `sending`, to hand to the carrier after its transaction commits. */
interface Handover {
  id: number;
  publicId: string;
  channel: TextChannel;
  /** The line's number. */
  from: string;
  to: string;
  text: string;
}

/** The send command's one row (its statement aliases the columns); none when the account has no such line. */
interface SendRow {
  lineId: number;
  status: LineRow['status'];
  enabled: boolean;
  consent: string | null;
  existingId: string | null;
  existingFingerprint: string | null;
  /** The new text's outbox id when it was queued. */
  insertedId: string | null;
}

/**
 * A send job locked this long (database time) is taken for one whose worker was killed: the send sweep gives its line a
 * successor. One run starts no text after {@link PUMP_BUDGET_MS}, and a carrier call is bounded: far less than this.
 */
const ORPHANED_JOB_MINUTES = 15;

/** A text `sending` for this long (service clock) was not answered: it is handed to the carrier again. */
const STUCK_SENDING_MS = 5 * 60_000;

/** The domain of text-message lines (module comment). */
export class Texting {
  private readonly numberKey: Buffer;
  /** A key of its own for request fingerprints (review nit: not the number key). */
  private readonly fingerprintKey: Buffer;
  private readonly sendStatement;
  /** Destinations of send commands, classified and hashed (see `destination`): at most this many strings. */
  private readonly destinations = new LRUCache<
    string,
    { allowed: true; e164: string; hash: string } | { allowed: false; reason: string; hash: string }
  >({ max: 10_000 });
  private readonly lineLock;
  private readonly queueStatement;

  constructor(
    private readonly deps: {
      db: Db;
      clock: Clock;
      secrets: SecretBox;
      config: TextingConfig;
      carrier: Carrier;
      agent: DraftingAgent;
      logger: AppLogger;
    },
  ) {
    this.numberKey = deps.secrets.deriveKey('media-buying:text-numbers');
    this.fingerprintKey = deps.secrets.deriveKey('media-buying:text-request-fingerprints');
    const p = (name: string) => sql.placeholder(name);
    // The send command in one statement, without an explicit transaction (it is atomic on its own): the line (locked
    // for key share to the statement's end, so a send job's next step waits for this text and sees it), its switch,
    // the recipient's consent and an earlier use of the requestId; the text inserted only when every rule passes and
    // the requestId is new; then the job check (`ensure_text_send_job`, migration 0009), which reads the job queue
    // with a snapshot of its own, taken once the line's lock is held (review MUST 3: a job that drained the queue
    // while this send waited for the lock must not be taken for a waiting one). No row: no such line of the account.
    this.sendStatement = new NamedStatement<SendRow>(
      'media_buying_text_send',
      sql`with line as (
          select l.id, l.public_id, l.status, coalesce(s.enabled, false) as enabled, c.status as consent
          from ${textLines} l
          left join ${phoneLineSwitches} s on s.organization_id = l.organization_id
          left join ${textConsents} c on c.line_id = l.id and c.number_hash = ${p('destinationHash')}
          where l.organization_id = ${p('organizationId')} and l.number = ${p('line')}
          order by l.status = 'active' desc, l.id desc
          limit 1
          for key share of l
        ),
        existing as (
          select o.public_id, o.fingerprint from ${textOutbox} o
          where o.organization_id = ${p('organizationId')} and o.request_id = ${p('requestId')}::uuid
        ),
        inserted as (
          insert into ${textOutbox} (public_id, organization_id, line_id, origin, channel, request_id, fingerprint,
            destination_hash, destination_sealed, text_sealed, segments, status, created_at)
          select ${p('outboxId')}, ${p('organizationId')}, line.id, 'command', ${p('channel')}, ${p('requestId')}::uuid,
            ${p('fingerprint')}, ${p('destinationHash')}, ${p('destinationSealed')}, ${p('textSealed')},
            ${p('segments')}::int, 'pending', ${p('createdAt')}::timestamptz
          from line
          where ${p('allowed')}::boolean and line.enabled and line.status = 'active'
            and line.consent is distinct from 'opted_out' and not exists (select 1 from existing)
          on conflict do nothing
          returning public_id
        )
        select line.id as "lineId", line.status as "status", line.enabled as "enabled", line.consent as "consent",
          (select public_id from existing) as "existingId",
          (select fingerprint from existing) as "existingFingerprint",
          inserted.public_id as "insertedId",
          case when inserted.public_id is not null then media_buying.ensure_text_send_job(
            ${sendTextTask.name}::text, ${`${sendTextTask.name}:`}::text || line.public_id, line.public_id) end as "job"
        from line left join inserted on true`,
    );
    this.lineLock = new NamedStatement<{ id: number }>(
      'media_buying_text_line_lock',
      sql`select id from ${textLines} where id = ${p('lineId')} for key share`,
    );
    // A drafted or help reply: the insert and the job check (see `sendStatement`) in one statement, after the line's
    // lock (`queue`).
    this.queueStatement = new NamedStatement<{ publicId: string }>(
      'media_buying_text_queue',
      sql`with inserted as (
          insert into ${textOutbox} (public_id, organization_id, line_id, origin, channel, request_id, fingerprint,
            destination_hash, destination_sealed, text_sealed, segments, status, inbound_id, created_at)
          values (${p('outboxId')}, ${p('organizationId')}, ${p('lineId')}, ${p('origin')}, ${p('channel')},
            ${p('requestId')}::uuid, ${p('fingerprint')}, ${p('destinationHash')}, ${p('destinationSealed')},
            ${p('textSealed')}, ${p('segments')}, 'pending', ${p('inboundId')}::bigint, ${p('createdAt')}::timestamptz)
          on conflict do nothing
          returning public_id
        )
        select inserted.public_id as "publicId",
          media_buying.ensure_text_send_job(${sendTextTask.name}::text, ${p('jobKey')}::text, ${p('linePublicId')}::text) as "job"
        from inserted`,
    );
  }

  /** HMAC-SHA256 (hex) of a number under the service's number key: matches a number without storing it. */
  hashNumber(e164: string): string {
    return createHmac('sha256', this.numberKey).update(e164).digest('hex');
  }

  private fingerprint(command: TextCommand): string {
    return createHmac('sha256', this.fingerprintKey)
      .update(JSON.stringify([command.channel, command.line, command.destination, command.text]))
      .digest('hex');
  }

  // ---------------------------------------------------------------- operator: lines and the switch

  /** Whether a Seller Account's agent phone lines are enabled (no record: disabled). */
  async phoneLinesEnabled(organizationId: number, executor: Executor = this.deps.db): Promise<boolean> {
    const [row] = await executor
      .select({ enabled: phoneLineSwitches.enabled })
      .from(phoneLineSwitches)
      .where(eq(phoneLineSwitches.organizationId, organizationId));
    return row?.enabled ?? false;
  }

  /**
   * Turns a Seller Account's agent phone lines on or off. Turning them on hands the agent every inbound text its lines
   * hold (rule 5 of "Events": those still inside the reply window are answered, older ones get no reply).
   * @returns how many held texts were handed to the agent.
   */
  async setPhoneLines(tx: Executor, organizationId: number, enabled: boolean): Promise<number> {
    const now = this.deps.clock.now();
    await tx
      .insert(phoneLineSwitches)
      .values({ organizationId, enabled, changedAt: now })
      .onConflictDoUpdate({ target: phoneLineSwitches.organizationId, set: { enabled, changedAt: now } });
    if (!enabled) return 0;
    const held = await tx
      .select({ publicId: textInbound.publicId })
      .from(textInbound)
      .where(and(eq(textInbound.organizationId, organizationId), eq(textInbound.status, 'queued')));
    for (const row of held) await draftReplyTask.enqueue(tx, { inboundId: row.publicId });
    return held.length;
  }

  /**
   * Assigns a number to a Seller Account as an active line (the operator only: rule 1, no self-service selection). The
   * number's consent records from its earlier (retired) lines are carried over: an opt-out outlives a re-assignment.
   * @throws ApiError 400 `BAD_REQUEST` (`line_number_not_allowed`) for a number that is not an ordinary +1 number;
   *   409 `CONFLICT` (`line_number_in_use`) when an active line has the number; 404 for a storefront of another account.
   */
  async assignLine(
    tx: Executor,
    organizationId: number,
    input: { number: string; storefrontId: string | null },
  ): Promise<LineRow> {
    const number = classifyDestination(input.number);
    if (!number.allowed)
      throw badRequest('A line must be an ordinary +1 number.', {
        reason: 'line_number_not_allowed',
        classification: number.reason,
      });
    const storefrontId = await this.storefrontOf(tx, organizationId, input.storefrontId);
    const [row] = await tx
      .insert(textLines)
      .values({
        publicId: prefixedHexId('ln'),
        organizationId,
        number: number.e164,
        storefrontId,
        status: 'active',
        assignedAt: this.deps.clock.now(),
      })
      .onConflictDoNothing()
      .returning();
    if (!row)
      throw conflict(`An active line already has the number ${number.e164}.`, {
        reason: 'line_number_in_use',
      });
    // A recipient's consent belongs to the number they texted STOP to, not to the line record: a number assigned
    // again (to this or another account) starts with the latest consent of each recipient on its earlier lines.
    await tx.execute(sql`
      insert into ${textConsents} (line_id, number_hash, status, changed_at)
      select distinct on (c.number_hash) ${row.id}, c.number_hash, c.status, c.changed_at
      from ${textConsents} c join ${textLines} l on l.id = c.line_id
      where l.number = ${number.e164} and l.id <> ${row.id}
      order by c.number_hash, c.changed_at desc
      on conflict do nothing`);
    return row;
  }

  /**
   * Changes a line: its storefront, or its status to `retired` (terminal: a retired line neither sends nor answers;
   * its queued texts are dropped when their turn comes).
   * @throws ApiError 404 for an unknown line or a storefront of another account; 409 to reactivate a retired line.
   */
  async updateLine(
    tx: Executor,
    linePublicId: string,
    patch: { status?: 'active' | 'retired'; storefrontId?: string | null },
  ): Promise<LineRow> {
    const [line] = await tx
      .select()
      .from(textLines)
      .where(eq(textLines.publicId, linePublicId))
      .for('update');
    if (!line) throw notFound('Line', linePublicId);
    const set: Partial<LineRow> = {};
    if (patch.status !== undefined && patch.status !== line.status) {
      if (patch.status === 'active')
        throw conflict('A retired line stays retired; assign the number again.', { reason: 'line_retired' });
      set.status = 'retired';
      set.retiredAt = this.deps.clock.now();
    }
    if (patch.storefrontId !== undefined)
      set.storefrontId = await this.storefrontOf(tx, line.organizationId, patch.storefrontId);
    if (Object.keys(set).length === 0) return line;
    const [row] = await tx.update(textLines).set(set).where(eq(textLines.id, line.id)).returning();
    return row!;
  }

  private async storefrontOf(
    tx: Executor,
    organizationId: number,
    publicId: string | null,
  ): Promise<number | null> {
    if (publicId === null) return null;
    const [row] = await tx
      .select({ id: storefronts.id })
      .from(storefronts)
      .where(and(eq(storefronts.publicId, publicId), eq(storefronts.organizationId, organizationId)));
    if (!row) throw notFound('Storefront', publicId);
    return row.id;
  }

  /** The lines of an organization (or every line), newest first. */
  async lines(organizationId?: number): Promise<LineRow[]> {
    const query = this.deps.db.select().from(textLines);
    return (
      organizationId === undefined ? query : query.where(eq(textLines.organizationId, organizationId))
    ).orderBy(sql`${textLines.id} desc`);
  }

  // ---------------------------------------------------------------- the send command

  /**
   * The send command (spec "Text messaging", rules 1-5; `POST /api/v2/communications/messages` and `/rcs/messages`),
   * for a caller whose credential the route checked for seller write access in `organizationId` (rules 2 and
   * "Authentication" 7). Nothing is queued unless every rule passes; the text and its job commit together, in one
   * statement (two when a concurrent command with the same requestId won: its answer is read).
   * @throws ApiError 404 `NOT_FOUND` for a line that is not this Seller Account's (rule 2: unknown and foreign lines
   *   answer alike); 409 `CONFLICT` `phone_lines_disabled` / `line_retired` (rule 1), `request_id_reused` (rule 4);
   *   400 `BAD_REQUEST` `destination_not_allowed` / `recipient_opted_out` (rule 5).
   */
  async send(organizationId: number, command: TextCommand): Promise<TextCommandResult> {
    const { secrets, clock } = this.deps;
    const destination = this.destination(command.destination);
    const fingerprint = this.fingerprint(command);
    const outboxId = prefixedHexId('txo');
    // One statement (`sendStatement`): the lookup, the rules that need the database, the insert and the job check.
    // The rules are then read from its row in the order below; the text was inserted only if all of them pass.
    const [found] = await this.sendStatement.rows(this.deps.db, {
      organizationId,
      line: command.line,
      requestId: command.requestId,
      allowed: destination.allowed,
      outboxId,
      channel: command.channel,
      fingerprint,
      destinationHash: destination.hash,
      destinationSealed: destination.allowed
        ? secrets.encrypt(destination.e164, `${outboxId}:destination`)
        : null,
      textSealed: destination.allowed ? secrets.encrypt(command.text, `${outboxId}:text`) : null,
      segments: countSegments(command.text).segments,
      createdAt: clock.now().toISOString(),
    });
    if (!found) throw notFound('Line', command.line);
    if (found.insertedId !== null)
      return { requestId: command.requestId, outboxId, duplicate: false, status: 'pending' };
    if (found.existingId !== null)
      return this.repeat(command, fingerprint, found.existingId, found.existingFingerprint);
    if (!found.enabled)
      throw conflict('Agent phone lines are not enabled for this Seller Account.', {
        reason: 'phone_lines_disabled',
      });
    if (found.status !== 'active') throw conflict('This line is retired.', { reason: 'line_retired' });
    if (!destination.allowed)
      throw badRequest('The destination is outside the sending limits: ordinary +1 numbers only.', {
        reason: 'destination_not_allowed',
        classification: destination.reason,
        field: 'destination',
      });
    if (found.consent === 'opted_out')
      throw badRequest('The recipient opted out of texts from this line.', {
        reason: 'recipient_opted_out',
        field: 'destination',
      });
    // Every rule passed but nothing was inserted: a concurrent command with the same requestId won the insert.
    const [winner] = await this.deps.db
      .select({ publicId: textOutbox.publicId, fingerprint: textOutbox.fingerprint })
      .from(textOutbox)
      .where(and(eq(textOutbox.organizationId, organizationId), eq(textOutbox.requestId, command.requestId)));
    return this.repeat(command, fingerprint, winner!.publicId, winner!.fingerprint);
  }

  /**
   * A destination as the send command needs it: classified ({@link classifyDestination}) and, when allowed, its
   * number hash. Both are pure functions of the string (the number key is fixed for the process), so they are kept in a
   * bounded per-instance cache: no other instance needs it and nothing in it can go stale.
   */
  private destination(
    raw: string,
  ): { allowed: true; e164: string; hash: string } | { allowed: false; reason: string; hash: string } {
    let known = this.destinations.get(raw);
    if (known === undefined) {
      const classified = classifyDestination(raw);
      known = classified.allowed
        ? { allowed: true, e164: classified.e164, hash: this.hashNumber(classified.e164) }
        : { allowed: false, reason: classified.reason, hash: '' };
      this.destinations.set(raw, known);
    }
    return known;
  }

  private repeat(
    command: TextCommand,
    fingerprint: string,
    outboxId: string,
    stored: string | null,
  ): TextCommandResult {
    if (stored !== fingerprint)
      throw conflict('This requestId was used with another line, destination or text.', {
        reason: 'request_id_reused',
        field: 'requestId',
      });
    return { requestId: command.requestId, outboxId, duplicate: true, status: 'pending' };
  }

  /**
   * Inserts a pending drafted or help reply and makes sure its line's send job will see it, inside the caller's
   * transaction `tx`: the line's key-share lock first, held to commit (a send job's next step locks the line for
   * update, so it waits for this text and sees it), then the insert and the job check in one statement. The job key is
   * the line: one job sends the line's queue. When that job is waiting (not running, no failed attempt) nothing is
   * written to the job queue: concurrent sends on one line do not all update one job row (measured: half the
   * throughput). When none waits, `add_job` adds it (a running job gets a successor: Graphile Worker detaches the key
   * of a locked job; a job waiting for the minute keeps its time, `preserve_run_at`). The check is the database
   * function `ensure_text_send_job` (migration 0009), shared with the send command.
   * @returns false when the line is gone (nothing written).
   */
  private async queue(
    tx: Executor,
    item: {
      outboxId: string;
      organizationId: number;
      lineId: number;
      linePublicId: string;
      origin: 'agent_reply' | 'help_reply';
      destination: string;
      destinationHash: string;
      text: string;
      inboundId: number;
    },
  ): Promise<boolean> {
    const { secrets, clock } = this.deps;
    const locked = await this.lineLock.rows(tx, { lineId: item.lineId });
    if (locked.length === 0) return false;
    const inserted = await this.queueStatement.rows(tx, {
      outboxId: item.outboxId,
      organizationId: item.organizationId,
      lineId: item.lineId,
      origin: item.origin,
      channel: 'sms',
      requestId: null,
      // Replies have no requestId: the fingerprint is only filled.
      fingerprint: item.outboxId,
      destinationHash: item.destinationHash,
      destinationSealed: secrets.encrypt(item.destination, `${item.outboxId}:destination`),
      textSealed: secrets.encrypt(item.text, `${item.outboxId}:text`),
      segments: countSegments(item.text).segments,
      inboundId: item.inboundId,
      createdAt: clock.now().toISOString(),
      jobKey: `${sendTextTask.name}:${item.linePublicId}`,
      linePublicId: item.linePublicId,
    });
    return inserted.length === 1;
  }

  // ---------------------------------------------------------------- the outbound queue

  /**
   * Sends the queued texts of one line, oldest first, each in its own transaction holding the line's row lock (so the
   * limits hold across any number of workers and jobs):
   * - the line retired, its switch off, or the recipient opted out: `dropped`, never sent, never retried;
   * - 10 texts sent by the line in the last minute (on the clock): the rest stay pending and the job is rescheduled
   *   for when the oldest of those 10 leaves the minute;
   * - the line's segments sent since 00:00 UTC plus this text's over the daily budget: `over_budget`, never retried;
   * - else the text is marked `sending` (counted) and the transaction commits; then {@link handOver} calls the
   *   carrier outside the lock: accepted (`sent`) or refused (`refused`). A carrier that cannot be reached throws:
   *   the text is `pending` again, nothing is counted, and the job is retried with Graphile Worker's backoff.
   * Texts refused before the carrier (dropped, over budget) count toward neither limit: only `sending` and `sent`
   * texts are counted.
   * At most {@link PUMP_BATCH} texts, and no new one after {@link PUMP_BUDGET_MS} of wall time, per run; then the job
   * adds its successor and ends (other lines get their turn; a run never lasts near {@link ORPHANED_JOB_MINUTES}).
   */
  async pump(linePublicId: string): Promise<void> {
    const { db } = this.deps;
    const until = Date.now() + PUMP_BUDGET_MS;
    for (let i = 0; i < PUMP_BATCH && Date.now() < until; i++) {
      const step = await db.transaction((tx) => this.sendNext(tx, linePublicId));
      if (step === 'empty') return;
      if (typeof step === 'number') {
        // The wait is measured on the service clock; the job's wake-up is in database (wall) time.
        await sendTextTask.enqueue(
          db,
          { lineId: linePublicId },
          { jobKey: linePublicId, jobKeyMode: 'preserve_run_at', runAt: new Date(Date.now() + step) },
        );
        return;
      }
      if (step !== 'next') await this.handOver(step);
    }
    await sendTextTask.enqueue(
      db,
      { lineId: linePublicId },
      { jobKey: linePublicId, jobKeyMode: 'preserve_run_at' },
    );
  }

  /**
   * The send sweep (a recurring job): finds the lines that have texts to send (pending, or left `sending` for
   * {@link STUCK_SENDING_MS}) but no send job that will run (none, as after a process that stopped between a commit
   * and its job; one that failed for good after its last attempt; or one locked for {@link ORPHANED_JOB_MINUTES} by
   * a worker that was killed, which Graphile Worker would free only after 4 hours), and adds their job (a locked one
   * gets a successor). A line whose job waits, runs or backs off after a failure is left alone. A job added while
   * another one appears meanwhile is harmless: the line's lock orders them and the second finds the queue empty.
   * @returns the `ln_` ids of the lines given a job.
   */
  async sweep(): Promise<string[]> {
    const { db, clock } = this.deps;
    const stuck = new Date(clock.nowMs() - STUCK_SENDING_MS).toISOString();
    const prefix = `${sendTextTask.name}:`;
    const orphaned = await db.execute<{ public_id: string }>(sql`
      select l.public_id from ${textLines} l
      where l.id in (
          select o.line_id from ${textOutbox} o
          where o.status in ('pending', 'sending')
            and (o.status = 'pending' or o.sent_at <= ${stuck}::timestamptz))
        and not exists (
          select 1 from graphile_worker._private_jobs j
          where j.key = ${prefix}::text || l.public_id and j.attempts < j.max_attempts
            and (j.locked_at is null or j.locked_at > now() - make_interval(mins => ${ORPHANED_JOB_MINUTES})))
      order by l.id`);
    const lines = orphaned.rows.map((r) => r.public_id);
    for (const lineId of lines)
      await sendTextTask.enqueue(db, { lineId }, { jobKey: lineId, jobKeyMode: 'preserve_run_at' });
    if (lines.length > 0)
      this.deps.logger.warn({ lines }, 'lines with texts to send had no send job: their job was added');
    return lines;
  }

  /**
   * Hands a text marked `sending` to the carrier, outside any transaction and lock (review SHOULD 5: a commit that
   * failed after the carrier accepted would send it again, and the line's other sends would wait for the carrier),
   * with the outbox id as idempotency key, then records the answer. A carrier that cannot be reached: the text is
   * `pending` again (nothing counted) and the error is thrown (the job is retried with backoff). A process that stops
   * in between leaves it `sending`: {@link sendNext} hands it over again after {@link STUCK_SENDING_MS}.
   */
  private async handOver(text: Handover): Promise<void> {
    const { db, carrier } = this.deps;
    const sending = and(eq(textOutbox.id, text.id), eq(textOutbox.status, 'sending'));
    let outcome: Awaited<ReturnType<Carrier['send']>>;
    // A call is bounded (`carrierTimeoutMs`, well under STUCK_SENDING_MS): no other send job can take this text for
    // unanswered while the call may still be going on, so one text is never in two calls at once.
    const signal = AbortSignal.timeout(this.deps.config.carrierTimeoutMs);
    try {
      outcome = await Promise.race([
        carrier.send({
          channel: text.channel,
          from: text.from,
          to: text.to,
          text: text.text,
          idempotencyKey: text.publicId,
          signal,
        }),
        new Promise<never>((_, reject) => {
          if (signal.aborted) reject(signal.reason);
          signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        }),
      ]);
    } catch (err) {
      await db.update(textOutbox).set({ status: 'pending', sentAt: null }).where(sending);
      throw err;
    }
    if (outcome.accepted)
      await db
        .update(textOutbox)
        .set({ status: 'sent', carrierMessageId: outcome.carrierMessageId })
        .where(sending);
    else
      await db
        .update(textOutbox)
        .set({ status: 'refused', reason: outcome.reason, sentAt: null })
        .where(sending);
  }

  /**
   * One text of {@link pump}, in `tx` holding the line's lock. @returns `empty` (no pending text), `next` (one was
   * dropped), the milliseconds to wait for the minute to free, or a text now marked `sending` (counted toward both
   * limits from here) for {@link handOver} after commit. A text left `sending` for {@link STUCK_SENDING_MS} comes
   * first, handed over again under the same idempotency key.
   */
  private async sendNext(tx: Executor, linePublicId: string): Promise<'empty' | 'next' | number | Handover> {
    const { clock, config, secrets } = this.deps;
    const [line] = await tx
      .select()
      .from(textLines)
      .where(eq(textLines.publicId, linePublicId))
      .for('update');
    if (!line) return 'empty';
    const now = clock.now();
    const [item] = await tx
      .select()
      .from(textOutbox)
      .where(
        and(
          eq(textOutbox.lineId, line.id),
          sql`(${textOutbox.status} = 'pending' or (${textOutbox.status} = 'sending' and ${textOutbox.sentAt} <= ${new Date(now.getTime() - STUCK_SENDING_MS).toISOString()}::timestamptz))`,
        ),
      )
      .orderBy(sql`${textOutbox.status} = 'sending' desc`, textOutbox.id)
      .limit(1)
      .for('update');
    if (!item) return 'empty';
    const drop = async (status: 'dropped' | 'over_budget', reason: string) => {
      await tx.update(textOutbox).set({ status, reason }).where(eq(textOutbox.id, item.id));
      return 'next' as const;
    };
    if (line.status !== 'active') return drop('dropped', 'line_retired');
    if (!(await this.phoneLinesEnabled(line.organizationId, tx)))
      return drop('dropped', 'phone_lines_disabled');
    const [consent] = await tx
      .select({ status: textConsents.status })
      .from(textConsents)
      .where(and(eq(textConsents.lineId, line.id), eq(textConsents.numberHash, item.destinationHash ?? '')));
    if (consent?.status === 'opted_out') return drop('dropped', 'opted_out');
    const handover: Handover = {
      id: item.id,
      publicId: item.publicId,
      channel: item.channel,
      from: line.number,
      to: secrets.decrypt(item.destinationSealed!, `${item.publicId}:destination`),
      text: secrets.decrypt(item.textSealed!, `${item.publicId}:text`),
    };
    // Stuck in `sending`: already counted; the carrier knows it by its idempotency key if it got it.
    if (item.status === 'sending') return handover;
    const dayStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
    const minuteStart = new Date(now.getTime() - MINUTE_MS);
    const counted = inArray(textOutbox.status, ['sent', 'sending']);
    const [usage] = await tx
      .select({
        lastMinute: sql<number>`count(*) filter (where ${textOutbox.sentAt} > ${minuteStart.toISOString()}::timestamptz)::int`,
        oldest: sql<
          string | null
        >`min(${textOutbox.sentAt}) filter (where ${textOutbox.sentAt} > ${minuteStart.toISOString()}::timestamptz)::text`,
        segments: sql<number>`coalesce(sum(${textOutbox.segments}), 0)::int`,
      })
      .from(textOutbox)
      .where(
        and(
          eq(textOutbox.lineId, line.id),
          counted,
          gte(textOutbox.sentAt, dayStart < minuteStart ? dayStart : minuteStart),
          lte(textOutbox.sentAt, now),
        ),
      );
    if (usage!.lastMinute >= config.perMinute)
      return Math.max(1000, new Date(usage!.oldest!).getTime() + MINUTE_MS - now.getTime());
    // The day's segments: texts sent since 00:00 UTC (the window above may reach into yesterday for the minute).
    const daySegments =
      dayStart < minuteStart
        ? usage!.segments
        : (
            await tx
              .select({ segments: sql<number>`coalesce(sum(${textOutbox.segments}), 0)::int` })
              .from(textOutbox)
              .where(
                and(
                  eq(textOutbox.lineId, line.id),
                  counted,
                  gte(textOutbox.sentAt, dayStart),
                  lte(textOutbox.sentAt, now),
                ),
              )
          )[0]!.segments;
    if (daySegments + item.segments > config.dailySegments) return drop('over_budget', 'daily_budget');
    await tx.update(textOutbox).set({ status: 'sending', sentAt: now }).where(eq(textOutbox.id, item.id));
    return handover;
  }

  /** Records a carrier delivery receipt on the text it names (unknown ids are ignored). @returns true when found. */
  async receipt(carrierMessageId: string, status: string): Promise<boolean> {
    const rows = await this.deps.db
      .update(textOutbox)
      .set({ deliveryStatus: status })
      .where(eq(textOutbox.carrierMessageId, carrierMessageId))
      .returning({ id: textOutbox.id });
    return rows.length > 0;
  }

  // ---------------------------------------------------------------- inbound texts

  /**
   * Takes an inbound text from the carrier (spec "Events"): stored sealed, once per carrier message id; keywords are
   * applied first against the consent record (rule 1: an opt-out drops the queued texts to that number and is never
   * shown to the agent; an opt-in; a help keyword); any other text from a number not opted out goes to the agent's
   * queue (rule 2) and into the conversation record (rule 7).
   * @returns the inbound id and what the text was, or null when `to` is no active line.
   */
  async receive(
    input: InboundText,
  ): Promise<{ inboundId: string; kind: InboundKind; duplicate: boolean } | null> {
    const { db, clock, secrets } = this.deps;
    // One key per sender however the carrier writes it (with or without `+`), the key the send command hashes.
    const from = normalizeSender(input.from);
    return db.transaction(async (tx) => {
      const [line] = await tx
        .select()
        .from(textLines)
        .where(and(eq(textLines.number, input.to), eq(textLines.status, 'active')));
      if (!line) return null;
      const seen = await this.storedInbound(tx, line.id, input.carrierMessageId);
      if (seen) return seen;
      const now = clock.now();
      const keyword = keywordOf(input.text);
      const kind: InboundKind = keyword ?? 'brief';
      const fromHash = this.hashNumber(from);
      const noAnswer = await this.noAnswerTo(tx, line.id, from, fromHash);
      const publicId = prefixedHexId('txi');
      const briefForAgent = kind === 'brief' && noAnswer === null;
      const [inserted] = await tx
        .insert(textInbound)
        .values({
          publicId,
          organizationId: line.organizationId,
          lineId: line.id,
          carrierMessageId: input.carrierMessageId,
          arrivedAt: now,
          kind,
          status: briefForAgent ? 'queued' : kind === 'brief' ? 'no_reply' : 'handled',
          outcome: kind === 'brief' ? noAnswer : null,
          fromHash,
          fromSealed: secrets.encrypt(from, `${publicId}:from`),
          textSealed: secrets.encrypt(input.text, `${publicId}:text`),
          handledAt: briefForAgent ? null : now,
        })
        .onConflictDoNothing()
        .returning({ id: textInbound.id });
      // A concurrent delivery of the same message id won the insert: answer its stored id (review nit).
      if (!inserted)
        return (
          (await this.storedInbound(tx, line.id, input.carrierMessageId)) ?? {
            inboundId: publicId,
            kind,
            duplicate: true,
          }
        );
      if (kind === 'opt_out' || kind === 'opt_in') await this.applyConsent(tx, line.id, kind, fromHash, now);
      if (briefForAgent) {
        await this.recordArrival(tx, line, fromHash, now);
        await draftReplyTask.enqueue(tx, { inboundId: publicId });
      }
      if (kind === 'help' && noAnswer === null)
        await this.queueHelpReply(tx, line, from, fromHash, inserted.id);
      return { inboundId: publicId, kind, duplicate: false };
    });
  }

  /**
   * Why a sender gets no answer (drafted or help) from a line, or null: opted out of the line (its consent row is
   * locked to the end of the transaction), or another active line of the platform (two lines would otherwise answer
   * each other forever: review SHOULD 7).
   */
  private async noAnswerTo(
    tx: Executor,
    lineId: number,
    from: string,
    fromHash: string,
  ): Promise<'opted_out' | 'platform_line' | null> {
    const [consent] = await tx
      .select({ status: textConsents.status })
      .from(textConsents)
      .where(and(eq(textConsents.lineId, lineId), eq(textConsents.numberHash, fromHash)))
      .for('update');
    if (consent?.status === 'opted_out') return 'opted_out';
    const [fromLine] = await tx
      .select({ id: textLines.id })
      .from(textLines)
      .where(and(eq(textLines.number, from), eq(textLines.status, 'active')));
    return fromLine ? 'platform_line' : null;
  }

  /** The stored inbound text of a carrier message id on a line, as a duplicate's answer; undefined when none. */
  private async storedInbound(tx: Executor, lineId: number, carrierMessageId: string) {
    const [row] = await tx
      .select({ publicId: textInbound.publicId, kind: textInbound.kind })
      .from(textInbound)
      .where(and(eq(textInbound.lineId, lineId), eq(textInbound.carrierMessageId, carrierMessageId)));
    return row && { inboundId: row.publicId, kind: row.kind, duplicate: true };
  }

  /**
   * Rule 1: records an opt-out or opt-in of a number on a line; an opt-out drops the line's pending texts to it.
   */
  private async applyConsent(
    tx: Executor,
    lineId: number,
    kind: 'opt_out' | 'opt_in',
    fromHash: string,
    now: Date,
  ): Promise<void> {
    const status = kind === 'opt_out' ? 'opted_out' : 'opted_in';
    await tx
      .insert(textConsents)
      .values({ lineId, numberHash: fromHash, status, changedAt: now })
      .onConflictDoUpdate({
        target: [textConsents.lineId, textConsents.numberHash],
        set: { status, changedAt: now },
      });
    if (kind === 'opt_out')
      await tx
        .update(textOutbox)
        .set({ status: 'dropped', reason: 'opted_out' })
        .where(
          and(
            eq(textOutbox.lineId, lineId),
            eq(textOutbox.destinationHash, fromHash),
            eq(textOutbox.status, 'pending'),
          ),
        );
  }

  /**
   * The fixed answer to HELP or INFO (a control message, not a brief: no agent): who texts from this line and how to
   * opt out, through the same queue and checks as every text. None to a sender outside the sending limits, or while
   * the Seller Account's lines are disabled, to a number answered in the last 15 minutes, or when the line sent 60
   * replies (agent and help) in the hour. It is not an agent reply (the 5-per-number agent cap does not count it).
   */
  private async queueHelpReply(
    tx: Executor,
    line: LineRow,
    from: string,
    fromHash: string,
    inboundId: number,
  ): Promise<void> {
    const destination = classifyDestination(from);
    if (!destination.allowed || !(await this.phoneLinesEnabled(line.organizationId, tx))) return;
    // One help answer per number per 15 minutes, and help answers count toward the line's 60 replies an hour (review
    // SHOULD 10: else one sender repeating HELP spends the line's minute and daily budget).
    const now = this.deps.clock.now();
    const [recent] = await tx
      .select({
        number: sql<number>`count(*) filter (where ${textOutbox.origin} = 'help_reply' and ${textOutbox.destinationHash} = ${fromHash} and ${textOutbox.createdAt} > ${new Date(now.getTime() - REPLY_WINDOW_MS).toISOString()}::timestamptz)::int`,
        line: sql<number>`count(*)::int`,
      })
      .from(textOutbox)
      .where(
        and(
          eq(textOutbox.lineId, line.id),
          inArray(textOutbox.origin, ['agent_reply', 'help_reply']),
          sql`${textOutbox.createdAt} > ${new Date(now.getTime() - HOUR_MS).toISOString()}::timestamptz`,
          lte(textOutbox.createdAt, now),
        ),
      );
    if (recent!.number >= HELP_REPLIES_PER_NUMBER || recent!.line >= REPLIES_PER_LINE_HOUR) return;
    const [storefront] =
      line.storefrontId === null
        ? []
        : await tx
            .select({ name: storefronts.name })
            .from(storefronts)
            .where(eq(storefronts.id, line.storefrontId));
    const outboxId = prefixedHexId('txo');
    await this.queue(tx, {
      outboxId,
      organizationId: line.organizationId,
      lineId: line.id,
      linePublicId: line.publicId,
      origin: 'help_reply',
      destination: destination.e164,
      destinationHash: fromHash,
      text: helpReply(storefront?.name ?? 'This line'),
      inboundId,
    });
  }

  /** Adds an arrival time to the number's conversation record (rule 7: arrival times only). */
  private async recordArrival(tx: Executor, line: LineRow, numberHash: string, at: Date): Promise<void> {
    const [conversation] = await tx
      .insert(textConversations)
      .values({ organizationId: line.organizationId, lineId: line.id, numberHash, createdAt: at })
      .onConflictDoUpdate({
        target: [textConversations.organizationId, textConversations.lineId, textConversations.numberHash],
        set: { numberHash },
      })
      .returning({ id: textConversations.id });
    await tx.insert(textConversationArrivals).values({ conversationId: conversation!.id, arrivedAt: at });
  }

  /**
   * The storefront agent's turn on one inbound text (spec "Events", rules 2-6). In three steps, so no lock is held
   * while the agent drafts:
   * 1. pick-up (one transaction): while the Seller Account's lines are disabled the text stays queued (rule 5);
   *    otherwise no reply for a text older than 15 minutes, a blank text, a retired line, a storefront missing,
   *    archived, replaced or in adapter mode, a number opted out before, or the reply caps (5 per number per 15
   *    minutes, 60 per line per hour) (rule 4); else the text is `working`;
   * 2. the agent drafts the slot of the reply's template ({@link ReplyTemplate}: the service writes the storefront's
   *    shortened name and the opt-out ending, and gives the agent the slot's length budget) from the words of this
   *    message and the storefront's name only (rule 2);
   * 3. queueing (one transaction holding the line's lock): line, switch, consent and caps checked again (rule 3: not
   *    queued if the line retired or the sender opted out meanwhile), the destination checked against the sending
   *    limits, the slot and the whole reply checked after generation ({@link ReplyTemplate.fill}, `refuseDraft`);
   *    then the reply joins the outbound queue.
   * Every "no reply" is final (no retry).
   */
  async answer(inboundId: string): Promise<void> {
    const picked = await this.pickUp(inboundId);
    if (picked === null) return;
    const template = new ReplyTemplate(picked.storefrontName);
    let slot: string;
    try {
      slot = await this.deps.agent.draft({
        text: picked.text,
        storefrontName: template.name,
        budget: template.budget,
      });
    } catch (err) {
      this.deps.logger.warn(
        { inboundId, err: (err as Error).message },
        'the drafting agent failed: no reply',
      );
      await this.finish(picked.id, 'no_reply', 'draft_failed');
      return;
    }
    await this.queueReply(picked, template.fill(slot));
  }

  private async finish(
    id: number,
    status: 'no_reply' | 'replied',
    outcome: string | null,
    executor: Executor = this.deps.db,
  ) {
    await executor
      .update(textInbound)
      .set({ status, outcome, handledAt: this.deps.clock.now() })
      .where(eq(textInbound.id, id));
  }

  /** Why the line cannot reply now (rule 4 caps, line and storefront), or null. */
  private async replyBlock(
    executor: Executor,
    line: LineRow,
    fromHash: string,
    now: Date,
  ): Promise<string | null> {
    if (line.status !== 'active') return 'line_retired';
    const [consent] = await executor
      .select({ status: textConsents.status })
      .from(textConsents)
      .where(and(eq(textConsents.lineId, line.id), eq(textConsents.numberHash, fromHash)));
    if (consent?.status === 'opted_out') return 'opted_out';
    const [counts] = await executor
      .select({
        number: sql<number>`count(*) filter (where ${textOutbox.origin} = 'agent_reply' and ${textOutbox.destinationHash} = ${fromHash} and ${textOutbox.createdAt} > ${new Date(now.getTime() - REPLY_WINDOW_MS).toISOString()}::timestamptz)::int`,
        line: sql<number>`count(*)::int`,
      })
      .from(textOutbox)
      .where(
        and(
          eq(textOutbox.lineId, line.id),
          inArray(textOutbox.origin, ['agent_reply', 'help_reply']),
          sql`${textOutbox.createdAt} > ${new Date(now.getTime() - HOUR_MS).toISOString()}::timestamptz`,
          lte(textOutbox.createdAt, now),
        ),
      );
    if (counts!.number >= REPLIES_PER_NUMBER) return 'number_reply_limit';
    if (counts!.line >= REPLIES_PER_LINE_HOUR) return 'line_reply_limit';
    return null;
  }

  private async pickUp(inboundId: string) {
    const { db, clock, secrets } = this.deps;
    return db.transaction(async (tx) => {
      const [item] = await tx
        .select()
        .from(textInbound)
        .where(eq(textInbound.publicId, inboundId))
        .for('update');
      if (!item || (item.status !== 'queued' && item.status !== 'working')) return null;
      const [line] = await tx.select().from(textLines).where(eq(textLines.id, item.lineId));
      // Rule 5: the switch is read at pick-up; while off the text stays queued (enabling hands it over again).
      if (!(await this.phoneLinesEnabled(item.organizationId, tx))) return null;
      const now = clock.now();
      const noReply = async (outcome: string) => {
        await this.finish(item.id, 'no_reply', outcome, tx);
        return null;
      };
      if (now.getTime() - item.arrivedAt.getTime() > REPLY_WINDOW_MS) return noReply('stale');
      if (item.textSealed === null || item.fromSealed === null || item.fromHash === null)
        return noReply('stale');
      const text = secrets.decrypt(item.textSealed, `${item.publicId}:text`);
      if (text.trim() === '') return noReply('blank');
      if (line?.status !== 'active') return noReply('line_retired');
      const [storefront] =
        line.storefrontId === null
          ? []
          : await tx.select().from(storefronts).where(eq(storefronts.id, line.storefrontId));
      if (storefront?.status !== 'active' || storefront.adapterMode) return noReply('storefront_unavailable');
      const blocked = await this.replyBlock(tx, line, item.fromHash, now);
      if (blocked) return noReply(blocked);
      await tx.update(textInbound).set({ status: 'working' }).where(eq(textInbound.id, item.id));
      return {
        id: item.id,
        publicId: item.publicId,
        organizationId: item.organizationId,
        lineId: line.id,
        fromHash: item.fromHash,
        from: secrets.decrypt(item.fromSealed, `${item.publicId}:from`),
        text,
        storefrontName: storefront.name,
      };
    });
  }

  private async queueReply(
    picked: NonNullable<Awaited<ReturnType<Texting['pickUp']>>>,
    draft: ReturnType<ReplyTemplate['fill']>,
  ): Promise<void> {
    const { db, clock } = this.deps;
    await db.transaction(async (tx) => {
      const [item] = await tx.select().from(textInbound).where(eq(textInbound.id, picked.id)).for('update');
      if (item?.status !== 'working') return;
      const [line] = await tx.select().from(textLines).where(eq(textLines.id, picked.lineId)).for('update');
      const now = clock.now();
      const noReply = (outcome: string) => this.finish(picked.id, 'no_reply', outcome, tx);
      if (!line) return noReply('line_retired');
      if (!(await this.phoneLinesEnabled(line.organizationId, tx))) return noReply('phone_lines_disabled');
      const blocked = await this.replyBlock(tx, line, picked.fromHash, now);
      if (blocked) return noReply(blocked === 'opted_out' ? 'opted_out_meanwhile' : blocked);
      const destination = classifyDestination(picked.from);
      if (!destination.allowed) return noReply('destination_not_allowed');
      if ('refusal' in draft) {
        this.deps.logger.warn(
          { inboundId: picked.publicId, refusal: draft.refusal },
          'a draft reply was refused: no reply',
        );
        return noReply('draft_refused');
      }
      const outboxId = prefixedHexId('txo');
      await this.queue(tx, {
        outboxId,
        organizationId: picked.organizationId,
        lineId: line.id,
        linePublicId: line.publicId,
        origin: 'agent_reply',
        destination: destination.e164,
        destinationHash: picked.fromHash,
        text: draft.reply,
        inboundId: picked.id,
      });
      await this.finish(picked.id, 'replied', null, tx);
    });
  }

  // ---------------------------------------------------------------- retention

  /**
   * Deletes the words and numbers of inbound texts that arrived 30 days ago or earlier (rule 7; one still `working`
   * then is a failed agent job: it ends `no_reply`, `stale`); the arrival records stay. The words, destination (sealed and hashed) and inbound link
   * of outbound texts finished 30 days ago go too (an agent reply's destination is the sender's number), and the
   * number hash of a conversation record whose last arrival is 30 days old. The consent record keeps its hash.
   * @returns how many inbound texts lost their words.
   */
  async purge(): Promise<number> {
    const { db, clock } = this.deps;
    const now = clock.now();
    const cutoff = new Date(now.getTime() - RETENTION_MS);
    const purged = await db
      .update(textInbound)
      .set({
        fromSealed: null,
        textSealed: null,
        fromHash: null,
        wordsDeletedAt: now,
        // A text still `working` 30 days on is an agent's job that failed for good (any reply would be stale after
        // 15 minutes): it ends as no reply, and its words go too (review nit).
        status: sql`case when ${textInbound.status} = 'working' then 'no_reply' else ${textInbound.status} end`,
        outcome: sql`case when ${textInbound.status} = 'working' then 'stale' else ${textInbound.outcome} end`,
        handledAt: sql`coalesce(${textInbound.handledAt}, ${now.toISOString()}::timestamptz)`,
      })
      .where(and(isNull(textInbound.wordsDeletedAt), lte(textInbound.arrivedAt, cutoff)))
      .returning({ id: textInbound.id });
    await db
      .update(textOutbox)
      .set({ destinationSealed: null, textSealed: null, destinationHash: null, inboundId: null })
      .where(
        and(
          lte(textOutbox.createdAt, cutoff),
          inArray(textOutbox.status, ['sent', 'dropped', 'over_budget', 'refused']),
          sql`(${textOutbox.textSealed} is not null or ${textOutbox.destinationHash} is not null or ${textOutbox.inboundId} is not null)`,
        ),
      );
    // A conversation whose last arrival is 30 days old loses its number hash (its arrival times stay, unlinked); a
    // later text from the number starts a new record.
    await db.execute(sql`
      update ${textConversations} c set number_hash = null
      where c.number_hash is not null
        and not exists (select 1 from ${textConversationArrivals} a
                        where a.conversation_id = c.id and a.arrived_at > ${cutoff.toISOString()}::timestamptz)`);
    if (purged.length > 0)
      this.deps.logger.info({ purged: purged.length }, 'inbound text words deleted (retention)');
    return purged.length;
  }
}
