import { randomInt } from 'node:crypto';
import { and, asc, count, desc, eq, lt, lte, sql } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.ts';
import type { Db, Executor } from '../../platform/database.ts';
import { ApiError } from '../../platform/errors.ts';
import { prefixedHexId } from '../../platform/ids.ts';
import { OutboundError, type OutboundHttp } from '../../platform/outbound-http.ts';
import { type PageRequest, pageInfo } from '../../platform/pagination.ts';
import { parseRfc3339DateTime, RFC3339_DATE_TIME_MESSAGE } from '../../platform/schemas.ts';
import { type EntityType, isKnownEventType, sampleData, toV1Data } from './catalogue.ts';
import { deliveries, deliveryAttempts, webhooks } from './db/schema.ts';
import { type Issue, notFound, throwIfIssues } from './entity-events-errors.ts';
import { deliverTask } from './entity-events-jobs.ts';
import { signPayload } from './signing.ts';
import type { TenantPrincipal } from './tenants.ts';
import { parseCustomHeaders, type WebhookRow, type WebhookService } from './webhooks.ts';

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

/** The row of the claim-and-load statement of {@link DeliveryEngine.deliver}. */
interface ClaimedRow {
  id: string;
  tenant_id: string;
  attempt_count: number;
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

  /** Sends one signed POST of `body` to `hook`. Never throws for receiver or network failures. */
  async post(hook: DeliveryTarget, body: Buffer): Promise<AttemptOutcome> {
    const timestamp = Math.floor(this.clock.nowMs() / 1000);
    let secret: string;
    try {
      secret = this.webhookService.secretOf(hook);
    } catch {
      return { success: false, status_code: null, duration_ms: 0, error: 'signing secret unreadable' };
    }
    const headers: Record<string, string> = {
      ...parseCustomHeaders(hook.headers),
      'content-type': 'application/json',
      'x-timestamp': String(timestamp),
      'x-signature': signPayload(secret, timestamp, body),
    };
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
   * enrollment no longer active, it is `cancelled` without a POST. Claiming and loading is one statement, and a
   * success is recorded in one statement, so an attempt costs two round trips besides the POST.
   */
  async deliver(id: string): Promise<void> {
    const now = this.clock.now();
    const nowIso = now.toISOString();
    const result = await this.db.execute(sql`
      with c as (
        update entity_events.deliveries
           set status = 'in_flight', claimed_at = ${nowIso}::timestamptz, attempt_count = attempt_count + 1
         where id = ${id} and status = 'pending' and next_attempt_at <= ${nowIso}::timestamptz
        returning id, tenant_id, event_id, enrollment_id, webhook_id, attempt_count
      )
      select c.id, c.tenant_id, c.attempt_count, t.partner_id,
             ev.id as event_id, ev.entity_type, ev.entity_id, ev.event_name, ev.event_time, ev.data,
             en.id as enrollment_id, en.enrollment_key, en.api_version, en.status as enrollment_status,
             en.webhook_id as enrollment_webhook_id,
             (ev.event_name = any(en.event_types)
               and exists (select 1 from entity_events.enrollment_entities ee
                            where ee.enrollment_id = en.id and ee.entity_id = ev.entity_id)) as still_covered,
             w.id as webhook_id, w.webhook_url, w.headers, w.payload_format, w.status as webhook_status,
             w.deleted_at as webhook_deleted_at, w.secret_sealed
        from c
        join entity_events.tenants t on t.id = c.tenant_id
        join entity_events.webhooks w on w.id = c.webhook_id
        left join entity_events.events ev on ev.id = c.event_id
        left join entity_events.enrollments en on en.id = c.enrollment_id`);
    const row = result.rows[0] as ClaimedRow | undefined;
    if (!row) return;
    const reason = cancellationReason(row);
    if (reason) {
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
    const outcome = await this.post(target, encodeBody(payload, row.payload_format));
    await this.record({ id: row.id, attemptCount: row.attempt_count }, row.webhook_id, outcome);
  }

  private async record(
    claimed: { id: string; attemptCount: number },
    webhookId: string,
    outcome: AttemptOutcome,
  ): Promise<void> {
    const now = this.clock.now();
    const attempt = claimed.attemptCount;
    let status: DeliveryRow['status'] = 'succeeded';
    let next: Date | null = null;
    let error = outcome.error;
    if (!outcome.success) {
      if (outcome.status_code === 410) {
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
    // The attempt row and the delivery's new state in one statement (one round trip, atomic).
    const write = (executor: Executor) =>
      executor.execute(sql`
        with d as (
          update entity_events.deliveries
             set status = ${status}, next_attempt_at = ${nextIso}::timestamptz, claimed_at = null,
                 last_status_code = ${outcome.status_code}::int, last_error = ${error},
                 completed_at = ${status === 'pending' ? null : nowIso}::timestamptz
           where id = ${claimed.id}
          returning id
        )
        insert into entity_events.delivery_attempts
          (delivery_id, attempt_number, attempted_at, status_code, duration_ms, error, next_attempt_at)
        select d.id,
               (select coalesce(max(a.attempt_number), 0) + 1 from entity_events.delivery_attempts a
                 where a.delivery_id = d.id),
               ${nowIso}::timestamptz, ${outcome.status_code}::int, ${outcome.duration_ms}::int, ${error},
               ${nextIso}::timestamptz
          from d`);
    if (outcome.success || (!next && outcome.status_code !== 410)) {
      await write(this.db);
      return;
    }
    await this.db.transaction(async (tx) => {
      await write(tx);
      if (outcome.status_code === 410)
        await tx
          .update(webhooks)
          .set({ status: 'disabled', disabledReason: 'gone', lastModifiedTime: now })
          .where(eq(webhooks.id, webhookId));
      if (next)
        await deliverTask.enqueue(
          tx,
          { deliveryId: claimed.id },
          { runAt: next, jobKey: claimed.id, maxAttempts: 5 },
        );
    });
  }

  /**
   * Queues every delivery that is due by the service clock (`pending` with `next_attempt_at <= now`), and puts back
   * `in_flight` deliveries whose worker vanished (claimed more than 60 s ago): at-least-once. Runs every minute
   * (cron) and from the operator API. Returns how many were queued.
   */
  async sweep(limit = 1000): Promise<number> {
    const now = this.clock.now();
    await this.db
      .update(deliveries)
      .set({ status: 'pending', nextAttemptAt: now, claimedAt: null })
      .where(
        and(
          eq(deliveries.status, 'in_flight'),
          lt(deliveries.claimedAt, new Date(now.getTime() - this.staleClaimMs)),
        ),
      );
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

  /** One delivery with its attempt log. @throws ApiError 404 `delivery_not_found`. */
  async get(who: TenantPrincipal, webhookId: string, deliveryId: string) {
    await this.webhookService.getRow(who, webhookId);
    const [row] = await this.db
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
    const attempts = await this.db
      .select()
      .from(deliveryAttempts)
      .where(eq(deliveryAttempts.deliveryId, deliveryId))
      .orderBy(asc(deliveryAttempts.attemptNumber));
    return {
      ...deliveryView(row),
      attempts: attempts.map((a) => ({
        attempt_number: a.attemptNumber,
        attempted_at: a.attemptedAt.toISOString(),
        status_code: a.statusCode,
        duration_ms: a.durationMs,
        error: a.error,
        next_attempt_at: a.nextAttemptAt ? a.nextAttemptAt.toISOString() : null,
      })),
    };
  }

  /**
   * Replays a `failed` or `cancelled` delivery: it becomes `pending`, due now, with a fresh attempt budget (the
   * attempt log is kept and continues numbering).
   * @throws ApiError 404; 409 `delivery_not_replayable` unless failed/cancelled; 422 `webhook_not_active`, or
   *   `enrollment_not_active` when its enrollment was deleted, paused, re-pointed or no longer covers the event.
   */
  async replay(who: TenantPrincipal, webhookId: string, deliveryId: string) {
    const hook = await this.webhookService.getRow(who, webhookId);
    if (hook.status !== 'active')
      throw new ApiError(
        422,
        'webhook_not_active',
        `Webhook ${webhookId} is ${hook.status}; enable it to replay.`,
      );
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
        select (en.status = 'active'
                and (en.api_version = 'v1' or en.webhook_id = ${webhookId})
                and ev.event_name = any(en.event_types)
                and exists (select 1 from entity_events.enrollment_entities ee
                             where ee.enrollment_id = en.id and ee.entity_id = ev.entity_id)) as targeted
          from entity_events.enrollments en
          join entity_events.events ev on ev.id = ${current.eventId}
         where en.id = ${current.enrollmentId}`);
      const stillTargeted = (check.rows[0] as { targeted?: boolean } | undefined)?.targeted === true;
      if (!stillTargeted)
        throw new ApiError(
          422,
          'enrollment_not_active',
          `The enrollment of delivery ${deliveryId} was deleted, paused, re-pointed or narrowed; nothing to replay it for.`,
        );
      // A replay starts a fresh retry schedule (attemptCount 0); the log keeps numbering after the earlier attempts.
      const [updated] = await tx
        .update(deliveries)
        .set({ status: 'pending', nextAttemptAt: now, completedAt: null, attemptCount: 0 })
        .where(eq(deliveries.id, deliveryId))
        .returning();
      await deliverTask.enqueue(tx, { deliveryId }, { jobKey: deliveryId, maxAttempts: 5 });
      return updated!;
    });
    return deliveryView(row);
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
    return Promise.all(payloads.map((payload) => this.post(hook, encodeBody(payload, hook.payloadFormat))));
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
