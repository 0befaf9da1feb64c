import { randomInt } from 'node:crypto';
import { and, asc, count, desc, eq, lte, type SQL, sql } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.ts';
import type { Db, Executor } from '../../platform/database.ts';
import { ApiError } from '../../platform/errors.ts';
import { prefixedHexId } from '../../platform/ids.ts';
import { OutboundError, type OutboundHttp } from '../../platform/outbound-http.ts';
import { type PageRequest, pageInfo } from '../../platform/pagination.ts';
import { parseRfc3339DateTime, RFC3339_DATE_TIME_MESSAGE } from '../../platform/schemas.ts';
import { type EntityType, isKnownEventType, sampleData, toV1Data } from './catalogue.ts';
import { deliveries, deliveryAttempts } from './db/schema.ts';
import { type Issue, notFound, throwIfIssues } from './entity-events-errors.ts';
import { addDeliverJobs, deliverTask } from './entity-events-jobs.ts';
import { signPayload } from './signing.ts';
import type { TenantPrincipal } from './tenants.ts';
import { checkCustomHeaders, type WebhookRow, type WebhookService } from './webhooks.ts';

/**
 * Delays before retry 1..7 in seconds (as Svix and Standard Webhooks: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h), each
 * with +-10 % jitter: 8 attempts in all, then the delivery is `failed`.
 */
export const RETRY_DELAYS_SECONDS = [5, 300, 1800, 7200, 18000, 36000, 36000] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;
/** Default per-attempt timeout (15 s, as the delivery peers); `ENTITY_EVENTS_DELIVERY_TIMEOUT_MS` overrides it. */
export const DELIVERY_TIMEOUT_MS = 15_000;
/**
 * An `in_flight` delivery whose worker vanished is retried after this long (at least twice the attempt timeout, so a
 * slow attempt that is still running is never taken for a lost one).
 */
export const STALE_CLAIM_MS = 60_000;
/** Longest `Retry-After` honoured (seconds); longer values are capped. */
export const MAX_RETRY_AFTER_SECONDS = 36000;
/**
 * A webhook whose attempts have all failed for this long is disabled (`disabled_reason: "failing"`), as Svix does
 * after 5 days: checked when an attempt fails, against the first failed attempt since the last success.
 */
export const AUTO_DISABLE_AFTER_MS = 5 * 24 * 3600 * 1000;
/** `recover` re-sends deliveries created at most this long ago (14 days). */
export const RECOVER_MAX_AGE_MS = 14 * 24 * 3600 * 1000;
/** At most this many deliveries are re-sent by one `recover` call; the rest is reported as `remaining`. */
export const RECOVER_MAX_DELIVERIES = 1000;
/**
 * The header of every POST that names its delivery (`dl_...`, the `delivery_id` of the delivery log): the same on
 * every attempt of one delivery, so it is the receiver's de-duplication key. Not covered by the signature.
 */
const DELIVERY_ID_HEADER = 'x-delivery-id';
/** On a replayed delivery (one replay, or a recover): the `delivery_id` of the delivery it replays. */
const REPLAY_OF_HEADER = 'x-replay-of';
/** The error of an attempt whose worker vanished before recording an outcome (marked by the sweeper). */
const INTERRUPTED_ERROR =
  'interrupted: the worker stopped before the attempt finished; no outcome was recorded';

/** Outcome of one POST to a receiver. */
export interface AttemptOutcome {
  success: boolean;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  /** Seconds from `Retry-After`, when the receiver sent one. */
  retry_after_seconds?: number;
}

/** Delay before the retry that follows attempt `attempt` (1-based), jittered +-10 %, in milliseconds. */
export function retryDelayMs(attempt: number): number | undefined {
  const base = RETRY_DELAYS_SECONDS[attempt - 1];
  if (base === undefined) return undefined;
  const jitter = 0.9 + randomInt(0, 2001) / 10000;
  return Math.round(base * 1000 * jitter);
}

/** Parses `Retry-After` (delta seconds or an HTTP date) relative to `nowMs`; undefined when absent or invalid. */
export function parseRetryAfter(value: unknown, nowMs: number): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (typeof raw !== 'string' || raw.trim() === '') return undefined;
  if (/^\d+$/.test(raw.trim())) return Math.min(Number(raw.trim()), MAX_RETRY_AFTER_SECONDS);
  // An HTTP date (RFC 9110: IMF-fixdate, or the obsolete RFC 850 / asctime forms) names a weekday; a bare number
  // that is not delta-seconds ("-5", "1.5") is invalid, although Date.parse would read it as some year.
  if (!/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? /.test(raw.trim())) return undefined;
  const at = Date.parse(raw);
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(0, Math.ceil((at - nowMs) / 1000)), MAX_RETRY_AFTER_SECONDS);
}

/** The request body bytes of a payload under the webhook's `payload_format`. */
export function encodeBody(payload: Record<string, unknown>, format: 'json' | 'stringified_json'): Buffer {
  const json = JSON.stringify(payload);
  return Buffer.from(format === 'json' ? json : JSON.stringify({ text: json }), 'utf8');
}

type DeliveryRow = typeof deliveries.$inferSelect;

/** What a POST needs of a webhook. */
export type DeliveryTarget = Pick<WebhookRow, 'id' | 'webhookUrl' | 'headers' | 'secretSealed'>;

/** Which delivery a POST carries: its id (`X-Delivery-Id`) and, for a replay, the delivery it replays. */
export interface DeliveryIdentity {
  deliveryId: string;
  replayOf?: string | null;
}

/** The row of the claim-and-load statement of {@link DeliveryEngine.deliver}. */
interface ClaimedRow {
  id: string;
  tenant_id: string;
  attempt_count: number;
  replay_of: string | null;
  partner_id: string;
  event_id: string | null;
  entity_type: EntityType;
  entity_id: string;
  event_name: string;
  event_time: string | Date;
  data: Record<string, unknown>;
  enrollment_id: string | null;
  enrollment_key: string;
  api_version: 'v1' | 'v2';
  enrollment_status: string | null;
  enrollment_webhook_id: string | null;
  still_covered: boolean | null;
  webhook_id: string;
  webhook_url: string;
  headers: string[];
  payload_format: 'json' | 'stringified_json';
  webhook_status: string;
  webhook_deleted_at: string | Date | null;
  webhook_failing_since: string | Date | null;
  secret_sealed: string;
}

function deliveryView(row: DeliveryRow) {
  return {
    delivery_id: row.id,
    webhook_id: row.webhookId,
    event_id: row.eventId,
    enrollment_id: row.enrollmentId,
    status: row.status,
    attempt_count: row.attemptCount,
    next_attempt_at: row.nextAttemptAt ? row.nextAttemptAt.toISOString() : null,
    last_status_code: row.lastStatusCode,
    last_error: row.lastError,
    created_at: row.createdAt.toISOString(),
    completed_at: row.completedAt ? row.completedAt.toISOString() : null,
    replay_of: row.replayOf,
  };
}

/**
 * The delivery engine (spec 002 section G "Delivered events"; peers Svix, Standard Webhooks): one signed POST per
 * delivery through the platform's SSRF-guarded client, retries with backoff and jitter (or `Retry-After`), 410
 * disables the webhook, an attempt log per delivery, replay of failed deliveries, and connectivity checks.
 */
export class DeliveryEngine {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly outbound: OutboundHttp,
    private readonly webhookService: WebhookService,
    private readonly timeoutMs = DELIVERY_TIMEOUT_MS,
  ) {
    this.staleClaimMs = Math.max(STALE_CLAIM_MS, 2 * timeoutMs);
  }

  private readonly staleClaimMs: number;

  /**
   * Sends one signed POST of `body` to `hook`, naming `delivery` in `X-Delivery-Id` (and `X-Replay-Of`). Never throws
   * for receiver or network failures.
   */
  async post(hook: DeliveryTarget, body: Buffer, delivery: DeliveryIdentity): Promise<AttemptOutcome> {
    const timestamp = Math.floor(this.clock.nowMs() / 1000);
    let secret: string;
    try {
      secret = this.webhookService.secretOf(hook);
    } catch {
      return { success: false, status_code: null, duration_ms: 0, error: 'signing secret unreadable' };
    }
    // The stored headers passed these checks when they were written; an entry a later rule refuses (a name the
    // service came to set itself) is left out rather than failing every delivery.
    const headers: Record<string, string> = {
      ...checkCustomHeaders(hook.headers, []),
      'content-type': 'application/json',
      'x-timestamp': String(timestamp),
      'x-signature': signPayload(secret, timestamp, body),
      [DELIVERY_ID_HEADER]: delivery.deliveryId,
    };
    if (delivery.replayOf) headers[REPLAY_OF_HEADER] = delivery.replayOf;
    try {
      const res = await this.outbound.send(hook.webhookUrl, {
        method: 'POST',
        headers,
        body,
        timeoutMs: this.timeoutMs,
        maxBodyBytes: 4096,
      });
      const success = res.status >= 200 && res.status < 300;
      const retryAfter =
        res.status === 429 || res.status === 503
          ? parseRetryAfter(res.headers['retry-after'], this.clock.nowMs())
          : undefined;
      return {
        success,
        status_code: res.status,
        duration_ms: Math.round(res.durationMs),
        error: success ? null : `receiver answered ${res.status}`,
        ...(retryAfter !== undefined ? { retry_after_seconds: retryAfter } : {}),
      };
    } catch (err) {
      const e = err as OutboundError;
      return {
        success: false,
        status_code: null,
        duration_ms: Math.round(e instanceof OutboundError ? e.durationMs : 0),
        error: e instanceof OutboundError ? `${e.kind}: ${e.message}` : 'delivery failed',
      };
    }
  }

  /**
   * Runs one attempt of delivery `id` (the `entity-events:deliver` task). A delivery that is not `pending` or not
   * due yet is left alone (the job was early, or another worker has it). If its webhook is no longer active or its
   * enrollment no longer active, it is `cancelled` without a POST. Claiming and loading is one statement, and an
   * outcome is recorded in one statement, so an attempt costs two round trips besides the POST (a failure with a
   * retry left adds its job in the same transaction).
   *
   * The claim is the attempt's write-ahead record: it commits before the POST (`in_flight`, `claimed_at`, the
   * attempt's number in `attempt_count`), the log shows it as the attempt `in_progress` ({@link get}), and the
   * attempt row is written with its outcome, or by the sweeper as `interrupted` when the worker vanished first. So an
   * attempt cut off by a crash is never lost from the log, at no extra write on the delivery path.
   */
  async deliver(id: string): Promise<void> {
    const now = this.clock.now();
    const nowIso = now.toISOString();
    const result = await this.db.execute(sql`
      with c as (
        update entity_events.deliveries
           set status = 'in_flight', claimed_at = ${nowIso}::timestamptz, attempt_count = attempt_count + 1
         where id = ${id} and status = 'pending' and next_attempt_at <= ${nowIso}::timestamptz
        returning id, tenant_id, event_id, enrollment_id, webhook_id, attempt_count, replay_of
      )
      select c.id, c.tenant_id, c.attempt_count, c.replay_of, t.partner_id,
             ev.id as event_id, ev.entity_type, ev.entity_id, ev.event_name, ev.event_time, ev.data,
             en.id as enrollment_id, en.enrollment_key, en.api_version, en.status as enrollment_status,
             en.webhook_id as enrollment_webhook_id,
             (ev.event_name = any(en.event_types)
               and exists (select 1 from entity_events.enrollment_entities ee
                            where ee.enrollment_id = en.id and ee.entity_id = ev.entity_id)) as still_covered,
             w.id as webhook_id, w.webhook_url, w.headers, w.payload_format, w.status as webhook_status,
             w.deleted_at as webhook_deleted_at, w.failing_since as webhook_failing_since, w.secret_sealed
        from c
        join entity_events.tenants t on t.id = c.tenant_id
        join entity_events.webhooks w on w.id = c.webhook_id
        left join entity_events.events ev on ev.id = c.event_id
        left join entity_events.enrollments en on en.id = c.enrollment_id`);
    const row = result.rows[0] as ClaimedRow | undefined;
    if (!row) return;
    const reason = cancellationReason(row);
    if (reason) {
      // No POST: the claim is undone (the attempt does not count and is not logged).
      await this.db
        .update(deliveries)
        .set({
          status: 'cancelled',
          lastError: reason,
          completedAt: now,
          nextAttemptAt: null,
          claimedAt: null,
          attemptCount: row.attempt_count - 1,
        })
        .where(eq(deliveries.id, id));
      return;
    }
    const payload = deliveryPayload(row);
    const target: DeliveryTarget = {
      id: row.webhook_id,
      webhookUrl: row.webhook_url,
      headers: row.headers,
      secretSealed: row.secret_sealed,
    };
    const outcome = await this.post(target, encodeBody(payload, row.payload_format), {
      deliveryId: row.id,
      replayOf: row.replay_of,
    });
    await this.record(
      { id: row.id, claimedAt: now, attemptCount: row.attempt_count },
      {
        id: row.webhook_id,
        failingSince: row.webhook_failing_since ? new Date(row.webhook_failing_since) : null,
      },
      outcome,
    );
  }

  /**
   * Records the outcome of a claimed attempt: its attempt row (`attempted_at` = the claim), the delivery's new state
   * and the webhook's health (a success ends a failing streak; a failure starts one, or disables the webhook when the
   * streak is {@link AUTO_DISABLE_AFTER_MS} old; a 410 disables it at once), in one statement. A retry's job is added
   * in the same transaction.
   * @param webhook its id and `failing_since` as the claim read it: the health update is left out of the statement
   *   when it could change nothing (a success on a healthy webhook, a failure inside a young streak), so the common
   *   case writes what it wrote before; the update itself re-checks the row.
   */
  private async record(
    claimed: { id: string; claimedAt: Date; attemptCount: number },
    webhook: { id: string; failingSince: Date | null },
    outcome: AttemptOutcome,
  ): Promise<void> {
    const webhookId = webhook.id;
    const now = this.clock.now();
    const attempt = claimed.attemptCount;
    let status: DeliveryRow['status'] = 'succeeded';
    let next: Date | null = null;
    let error = outcome.error;
    const gone = !outcome.success && outcome.status_code === 410;
    if (!outcome.success) {
      if (gone) {
        status = 'failed';
        error = 'receiver answered 410 Gone: webhook disabled';
      } else {
        // The attempt budget holds whatever the receiver says: `Retry-After` only moves the next attempt, so a
        // receiver answering 429/503 with `Retry-After` forever still ends in `failed` after the 8th attempt.
        const scheduled = retryDelayMs(attempt);
        if (scheduled === undefined) status = 'failed';
        else {
          const delay =
            outcome.retry_after_seconds !== undefined ? outcome.retry_after_seconds * 1000 : scheduled;
          status = 'pending';
          next = new Date(now.getTime() + delay);
        }
      }
    }
    const nowIso = now.toISOString();
    const nextIso = next ? next.toISOString() : null;
    let health: SQL | undefined;
    if (gone)
      health = sql`update entity_events.webhooks
                      set status = 'disabled', disabled_reason = 'gone',
                          disabled_at = coalesce(disabled_at, ${nowIso}::timestamptz),
                          last_modified_time = ${nowIso}::timestamptz
                    where id = ${webhookId}`;
    else if (outcome.success) {
      // A success ends a failing streak.
      if (webhook.failingSince)
        health = sql`update entity_events.webhooks set failing_since = null
                      where id = ${webhookId} and failing_since is not null`;
    } else if (
      !webhook.failingSince ||
      now.getTime() - webhook.failingSince.getTime() >= AUTO_DISABLE_AFTER_MS
    )
      health = failureHealthUpdate(webhookId, now);
    // The delivery's new state, the attempt row and the webhook's health in one statement (one round trip, atomic).
    const write = (executor: Executor) =>
      executor.execute(sql`
        with d as (
          update entity_events.deliveries
             set status = ${status}, next_attempt_at = ${nextIso}::timestamptz, claimed_at = null,
                 last_status_code = ${outcome.status_code}::int, last_error = ${error},
                 completed_at = ${status === 'pending' ? null : nowIso}::timestamptz
           where id = ${claimed.id}
          returning id
        )${health ? sql`, h as (${health})` : sql``}
        insert into entity_events.delivery_attempts
          (delivery_id, attempt_number, attempted_at, status, status_code, duration_ms, error, next_attempt_at)
        select d.id,
               (select coalesce(max(a.attempt_number), 0) + 1 from entity_events.delivery_attempts a
                 where a.delivery_id = d.id),
               ${claimed.claimedAt.toISOString()}::timestamptz, ${outcome.success ? 'succeeded' : 'failed'},
               ${outcome.status_code}::int, ${outcome.duration_ms}::int, ${error}, ${nextIso}::timestamptz
          from d`);
    if (!next) {
      await write(this.db);
      return;
    }
    await this.db.transaction(async (tx) => {
      await write(tx);
      await deliverTask.enqueue(
        tx,
        { deliveryId: claimed.id },
        { runAt: next, jobKey: claimed.id, maxAttempts: 5 },
      );
    });
  }

  /**
   * Queues every delivery that is due by the service clock (`pending` with `next_attempt_at <= now`), and puts back
   * `in_flight` deliveries whose worker vanished (claimed more than 60 s ago): at-least-once. The attempt such a
   * worker had in progress is logged `interrupted`, at its claim time (it counts against the 8 attempts: the
   * receiver may have got it). Runs every minute (cron) and from the operator API. Returns how many were queued.
   */
  async sweep(limit = 1000): Promise<number> {
    const now = this.clock.now();
    const nowIso = now.toISOString();
    const staleBefore = new Date(now.getTime() - this.staleClaimMs).toISOString();
    // `stale` locks the claims and keeps their claim time (the update's RETURNING sees the new, null one); a claim
    // settled meanwhile by its worker no longer matches and is left alone.
    await this.db.execute(sql`
      with stale as (
        select id, claimed_at from entity_events.deliveries
         where status = 'in_flight' and claimed_at < ${staleBefore}::timestamptz
        for update
      ), s as (
        update entity_events.deliveries d
           set status = 'pending', next_attempt_at = ${nowIso}::timestamptz, claimed_at = null
          from stale
         where d.id = stale.id
        returning d.id, stale.claimed_at
      )
      insert into entity_events.delivery_attempts
        (delivery_id, attempt_number, attempted_at, status, error, next_attempt_at)
      select s.id,
             (select coalesce(max(a.attempt_number), 0) + 1 from entity_events.delivery_attempts a
               where a.delivery_id = s.id),
             s.claimed_at, 'interrupted', ${INTERRUPTED_ERROR}, ${nowIso}::timestamptz
        from s`);
    const due = await this.db
      .select({ id: deliveries.id })
      .from(deliveries)
      .where(and(eq(deliveries.status, 'pending'), lte(deliveries.nextAttemptAt, now)))
      .orderBy(asc(deliveries.nextAttemptAt))
      .limit(limit);
    for (const d of due)
      await deliverTask.enqueue(this.db, { deliveryId: d.id }, { jobKey: d.id, maxAttempts: 5 });
    return due.length;
  }

  /** Deliveries of a webhook the caller can see, newest first, optionally by status. @throws ApiError 404. */
  async list(who: TenantPrincipal, webhookId: string, page: PageRequest, status?: DeliveryRow['status']) {
    await this.webhookService.getRow(who, webhookId);
    const where = and(
      eq(deliveries.webhookId, webhookId),
      eq(deliveries.tenantId, who.tenantId),
      status ? eq(deliveries.status, status) : undefined,
    );
    const [{ n } = { n: 0 }] = await this.db.select({ n: count() }).from(deliveries).where(where);
    const rows = await this.db
      .select()
      .from(deliveries)
      .where(where)
      .orderBy(desc(deliveries.createdAt), desc(deliveries.id))
      .limit(page.limit)
      .offset(page.offset);
    return { items: rows.map(deliveryView), page: pageInfo(page, n) };
  }

  /**
   * One delivery with its attempt log, both read from one snapshot. A delivery `in_flight` shows its claim as the
   * last attempt, `in_progress` (attempted at the claim, no outcome yet): the attempt being made, or the one a
   * vanished worker left until the sweeper logs it `interrupted`. @throws ApiError 404 `delivery_not_found`.
   */
  async get(who: TenantPrincipal, webhookId: string, deliveryId: string) {
    await this.webhookService.getRow(who, webhookId);
    const { row, attempts } = await this.db.transaction(
      async (tx) => {
        const [row] = await tx
          .select()
          .from(deliveries)
          .where(
            and(
              eq(deliveries.id, deliveryId),
              eq(deliveries.webhookId, webhookId),
              eq(deliveries.tenantId, who.tenantId),
            ),
          );
        if (!row) throw notFound('delivery', deliveryId);
        const attempts = await tx
          .select()
          .from(deliveryAttempts)
          .where(eq(deliveryAttempts.deliveryId, deliveryId))
          .orderBy(asc(deliveryAttempts.attemptNumber));
        return { row, attempts };
      },
      { isolationLevel: 'repeatable read', accessMode: 'read only' },
    );
    const log = attempts.map((a) => ({
      attempt_number: a.attemptNumber,
      attempted_at: a.attemptedAt.toISOString(),
      status: a.status,
      status_code: a.statusCode,
      duration_ms: a.durationMs,
      error: a.error,
      next_attempt_at: a.nextAttemptAt ? a.nextAttemptAt.toISOString() : null,
    }));
    if (row.status === 'in_flight' && row.claimedAt)
      log.push({
        attempt_number: (attempts.at(-1)?.attemptNumber ?? 0) + 1,
        attempted_at: row.claimedAt.toISOString(),
        status: 'in_progress',
        status_code: null,
        duration_ms: null,
        error: null,
        next_attempt_at: null,
      });
    return { ...deliveryView(row), attempts: log };
  }

  /**
   * Replays a `failed` or `cancelled` delivery: a new delivery of the same event to the same enrollment and webhook,
   * due now, with its own id (`X-Delivery-Id`), a fresh attempt budget and its own attempt log; its `replay_of` (and
   * the `X-Replay-Of` header) name the delivery replayed, which keeps its status and log. A delivery is replayed at
   * most once: to try again, replay the replay.
   * @returns the new delivery.
   * @throws ApiError 404; 409 `delivery_not_replayable` unless failed/cancelled, `delivery_already_replayed` (with
   *   `details.replay_delivery_id`) when it was replayed before (by a replay or a recover); 422
   *   `webhook_not_active`, or `enrollment_not_active` when its enrollment was deleted, paused, re-pointed or no
   *   longer covers the event.
   */
  async replay(who: TenantPrincipal, webhookId: string, deliveryId: string) {
    const hook = await this.webhookService.getRow(who, webhookId);
    if (hook.status !== 'active') throw webhookNotActive(webhookId, hook.status, 'replay');
    const now = this.clock.now();
    const row = await this.db.transaction(async (tx) => {
      const [current] = await tx
        .select()
        .from(deliveries)
        .where(
          and(
            eq(deliveries.id, deliveryId),
            eq(deliveries.webhookId, webhookId),
            eq(deliveries.tenantId, who.tenantId),
          ),
        )
        .for('update');
      if (!current) throw notFound('delivery', deliveryId);
      if (current.status !== 'failed' && current.status !== 'cancelled')
        throw new ApiError(
          409,
          'delivery_not_replayable',
          `Delivery ${deliveryId} is ${current.status}; only failed or cancelled deliveries are replayed.`,
        );
      // Replaying never sends where an enrollment no longer points: its enrollment must still exist, be active,
      // (v2) still name this webhook, and still cover the event's entity and type (the attempt-time checks).
      const check = await tx.execute(sql`
        select ${stillTargeted(webhookId)} as targeted
          from entity_events.enrollments en
          join entity_events.events ev on ev.id = ${current.eventId}
         where en.id = ${current.enrollmentId}`);
      if ((check.rows[0] as { targeted?: boolean } | undefined)?.targeted !== true)
        throw new ApiError(
          422,
          'enrollment_not_active',
          `The enrollment of delivery ${deliveryId} was deleted, paused, re-pointed or narrowed; nothing to replay it for.`,
        );
      const [created] = await tx
        .insert(deliveries)
        .values({
          id: prefixedHexId('dl'),
          tenantId: current.tenantId,
          eventId: current.eventId,
          enrollmentId: current.enrollmentId,
          webhookId,
          status: 'pending',
          attemptCount: 0,
          nextAttemptAt: now,
          createdAt: now,
          replayOf: current.id,
        })
        .onConflictDoNothing({ target: deliveries.replayOf, where: sql`replay_of is not null` })
        .returning();
      if (!created) {
        const [earlier] = await tx
          .select({ id: deliveries.id })
          .from(deliveries)
          .where(eq(deliveries.replayOf, current.id));
        throw new ApiError(
          409,
          'delivery_already_replayed',
          `Delivery ${deliveryId} was already replayed as ${earlier?.id}; replay that delivery instead.`,
          { details: { replay_delivery_id: earlier?.id ?? null } },
        );
      }
      await deliverTask.enqueue(tx, { deliveryId: created.id }, { jobKey: created.id, maxAttempts: 5 });
      return created;
    });
    return deliveryView(row);
  }

  /**
   * Recover (Svix's "recover failed messages"): re-sends, as replays, the webhook's `failed` and `cancelled`
   * deliveries created from `since` to `until` (inclusive; default now) that were not replayed before, oldest first,
   * at most `limit` per call, in one transaction. Deliveries whose enrollment no longer sends the event to this webhook
   * (deleted, paused, re-pointed, narrowed) are skipped. Idempotent by a natural key: a delivery is replayed at most
   * once (unique `replay_of`), so a second call, concurrent or later, re-sends only what the first did not.
   * @param window `since` (required) and `until`, RFC 3339; `since` at most 14 days ({@link RECOVER_MAX_AGE_MS})
   *   before now and not in the future; `until` not before `since`.
   * @param limit at most this many re-sent (default {@link RECOVER_MAX_DELIVERIES}).
   * @returns `recovered` (new deliveries, due now), `remaining` (eligible beyond `limit`: call again), `skipped`.
   * @throws ApiError 400 `validation_failed` listing every problem of the window; 404 `webhook_not_found`; 422
   *   `webhook_not_active` (enable it first).
   */
  async recover(
    who: TenantPrincipal,
    webhookId: string,
    window: { since: string; until?: string },
    limit = RECOVER_MAX_DELIVERIES,
  ): Promise<{ since: string; until: string; recovered: number; remaining: number; skipped: number }> {
    const now = this.clock.now();
    const issues: Issue[] = [];
    const at = (field: string, message: string) => issues.push({ location: 'body', field, message });
    const since = parseRfc3339DateTime(window.since);
    if (!since) at('since', RFC3339_DATE_TIME_MESSAGE);
    else if (since.getTime() < now.getTime() - RECOVER_MAX_AGE_MS)
      at('since', `must be at most ${RECOVER_MAX_AGE_MS / 86_400_000} days ago`);
    else if (since > now) at('since', 'must not be in the future');
    const until = window.until === undefined ? now : parseRfc3339DateTime(window.until);
    if (!until) at('until', RFC3339_DATE_TIME_MESSAGE);
    else if (issues.length === 0 && until < since!) at('until', 'must not be before since');
    throwIfIssues(issues);
    const hook = await this.webhookService.getRow(who, webhookId);
    if (hook.status !== 'active') throw webhookNotActive(webhookId, hook.status, 'recover its deliveries');
    const nowIso = now.toISOString();
    const result = await this.db.execute(sql`
      with candidates as (
        select d.id, d.event_id, d.enrollment_id, d.created_at, coalesce(${stillTargeted(webhookId)}, false) as targeted
          from entity_events.deliveries d
          join entity_events.events ev on ev.id = d.event_id
          left join entity_events.enrollments en on en.id = d.enrollment_id
         where d.webhook_id = ${webhookId} and d.tenant_id = ${who.tenantId}
           and d.status in ('failed', 'cancelled')
           and d.created_at >= ${since!.toISOString()}::timestamptz
           and d.created_at <= ${until!.toISOString()}::timestamptz
           and not exists (select 1 from entity_events.deliveries r where r.replay_of = d.id)
      ), picked as (
        select id, event_id, enrollment_id from candidates where targeted order by created_at, id limit ${limit}
      ), ins as (
        insert into entity_events.deliveries
          (id, tenant_id, event_id, enrollment_id, webhook_id, status, attempt_count, next_attempt_at, created_at,
           replay_of)
        select 'dl_' || replace(gen_random_uuid()::text, '-', ''), ${who.tenantId}, p.event_id, p.enrollment_id,
               ${webhookId}, 'pending', 0, ${nowIso}::timestamptz, ${nowIso}::timestamptz, p.id
          from picked p
        on conflict (replay_of) where replay_of is not null do nothing
        returning id
      ), jobs as (${addDeliverJobs(sql`ins`)})
      select (select n from jobs) as recovered,
             (select count(*)::int from candidates where targeted) - (select count(*)::int from picked) as remaining,
             (select count(*)::int from candidates where not targeted) as skipped`);
    const counts = result.rows[0] as { recovered: number; remaining: number; skipped: number };
    return {
      since: since!.toISOString(),
      until: until!.toISOString(),
      recovered: Number(counts.recovered),
      remaining: Number(counts.remaining),
      skipped: Number(counts.skipped),
    };
  }

  /**
   * `check_connectivity`: without `simulation`, one signed test event now; with `simulation`, `number_of_events`
   * (1-10) mock events of `event_name` (optional `event_time`), all sent at once; the answer waits for every outcome
   * (at most one delivery timeout, 15 s by default). Mock events are not stored.
   * @param simulation `event_name` from either catalogue (the entity type follows from it), `number_of_events` 1-10
   *   (checked by the route schema), `event_time` RFC 3339 (default now by the service clock).
   * @returns the receiver's outcome per event (status code, duration in ms, error).
   * @throws ApiError 400 listing every problem of `simulation` (`unknown_event_type` when the event name is the only
   *   one, else `validation_failed`); then 404 `webhook_not_found`. Nothing is sent in either case.
   */
  async checkConnectivity(
    who: TenantPrincipal,
    webhookId: string,
    simulation?: { event_name: string; number_of_events: number; event_time?: string },
  ): Promise<AttemptOutcome[]> {
    let entityType: EntityType = 'business';
    let eventName = 'test_event';
    let count = 1;
    let eventTime = this.clock.now();
    if (simulation) {
      const issues: Issue[] = [];
      if (isKnownEventType('business', simulation.event_name)) entityType = 'business';
      else if (isKnownEventType('prospect', simulation.event_name)) entityType = 'prospect';
      else
        issues.push({
          location: 'body',
          field: 'simulation/event_name',
          message: `is not a business or prospect event type: ${simulation.event_name}`,
          code: 'unknown_event_type',
        });
      eventName = simulation.event_name;
      count = simulation.number_of_events;
      if (simulation.event_time !== undefined) {
        const at = parseRfc3339DateTime(simulation.event_time);
        if (at) eventTime = at;
        else
          issues.push({
            location: 'body',
            field: 'simulation/event_time',
            message: RFC3339_DATE_TIME_MESSAGE,
          });
      }
      throwIfIssues(issues);
    }
    const hook = await this.webhookService.getRow(who, webhookId);
    const payloads = Array.from({ length: count }, () => ({
      webhook_id: hook.id,
      tenant_id: who.tenantId,
      partner_id: who.partnerId,
      event_id: prefixedHexId('ev'),
      event_name: eventName,
      enrollment_key: 'connectivity_check',
      enrollment_id: null,
      entity_type: entityType,
      [entityType === 'business' ? 'business_id' : 'prospect_id']: 'connectivity_check',
      event_time: eventTime.toISOString(),
      data: simulation ? sampleData(eventName, eventTime) : { message: 'connectivity check' },
    }));
    // Sent at once, as deliveries are (concurrent, no order promised): the call waits at most one delivery timeout.
    // Each mock event is sent as a delivery of its own (a fresh `X-Delivery-Id`, not stored in the delivery log).
    return Promise.all(
      payloads.map((payload) =>
        this.post(hook, encodeBody(payload, hook.payloadFormat), { deliveryId: prefixedHexId('dl') }),
      ),
    );
  }

  /** Delivery counts by status (operator view). */
  async stats(): Promise<Record<string, number>> {
    const rows = await this.db
      .select({ status: deliveries.status, n: count() })
      .from(deliveries)
      .groupBy(deliveries.status);
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  }
}

/**
 * Why a claimed delivery must not be sent any more, or undefined when it still must: its event is gone, its
 * enrollment was deleted, paused, re-pointed (v2) or no longer covers the entity or event type, or its webhook was
 * deleted or disabled.
 */
function cancellationReason(row: ClaimedRow): string | undefined {
  if (!row.event_id) return 'event missing';
  if (!row.enrollment_id) return 'enrollment deleted';
  if (row.enrollment_status !== 'active') return 'enrollment paused';
  if (row.api_version === 'v2' && row.enrollment_webhook_id !== row.webhook_id)
    return 'enrollment re-pointed to another webhook';
  if (!row.still_covered) return 'enrollment no longer covers this entity or event type';
  if (row.webhook_deleted_at) return 'webhook deleted';
  if (row.webhook_status !== 'active') return 'webhook disabled';
  return undefined;
}

/** The webhook body of a claimed delivery (spec G delivery payload; v1 enrollments get the v1 data shape). */
function deliveryPayload(row: ClaimedRow): Record<string, unknown> {
  const entityField = row.entity_type === 'business' ? 'business_id' : 'prospect_id';
  return {
    webhook_id: row.webhook_id,
    tenant_id: row.tenant_id,
    partner_id: row.partner_id,
    event_id: row.event_id,
    event_name: row.event_name,
    enrollment_key: row.enrollment_key,
    enrollment_id: row.enrollment_id,
    entity_type: row.entity_type,
    [entityField]: row.entity_id,
    event_time: new Date(row.event_time).toISOString(),
    data: row.api_version === 'v1' ? toV1Data(row.event_name, row.data) : row.data,
  };
}

/** 422: the webhook is not active, so `what` cannot be done. */
function webhookNotActive(webhookId: string, status: string, what: string): ApiError {
  return new ApiError(422, 'webhook_not_active', `Webhook ${webhookId} is ${status}; enable it to ${what}.`);
}

/**
 * SQL: whether enrollment `en` still sends event `ev` to webhook `webhookId`: it is active, (v2) still names this
 * webhook, and still covers the event's type and entity (the checks {@link cancellationReason} makes at attempt time).
 * Null when `en` is missing (a left join).
 */
function stillTargeted(webhookId: string): SQL {
  return sql`(en.status = 'active'
          and (en.api_version = 'v1' or en.webhook_id = ${webhookId})
          and ev.event_name = any(en.event_types)
          and exists (select 1 from entity_events.enrollment_entities ee
                       where ee.enrollment_id = en.id and ee.entity_id = ev.entity_id))`;
}

/**
 * The webhook-health statement of a failed attempt (other than a 410): starts a failing streak at `now`; or, when
 * the streak began {@link AUTO_DISABLE_AFTER_MS} or more before `now` (every attempt since has failed), disables the
 * webhook with `disabled_reason: "failing"`. Writes nothing while a younger streak runs, or for a webhook that is not
 * active, so concurrent failures of one webhook do not contend for its row.
 */
function failureHealthUpdate(webhookId: string, now: Date): SQL {
  const nowIso = now.toISOString();
  const due = sql`failing_since <= ${new Date(now.getTime() - AUTO_DISABLE_AFTER_MS).toISOString()}::timestamptz`;
  return sql`update entity_events.webhooks
     set failing_since = coalesce(failing_since, ${nowIso}::timestamptz),
         status = case when ${due} then 'disabled' else status end,
         disabled_reason = case when ${due} then 'failing' else disabled_reason end,
         disabled_at = case when ${due} then ${nowIso}::timestamptz else disabled_at end,
         last_modified_time = case when ${due} then ${nowIso}::timestamptz else last_modified_time end
   where id = ${webhookId} and status = 'active' and deleted_at is null and (failing_since is null or ${due})`;
}
