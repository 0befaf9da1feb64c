import { and, count, desc, eq, gte, inArray, lte, sql } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.ts';
import type { Db, Executor } from '../../platform/database.ts';
import { ApiError } from '../../platform/errors.ts';
import { prefixedHexId } from '../../platform/ids.ts';
import { type PageRequest, pageInfo } from '../../platform/pagination.ts';
import {
  isRfc3339DateTime,
  parseRfc3339DateTime,
  RFC3339_DATE_TIME_MESSAGE,
} from '../../platform/schemas.ts';
import { checkEventData, type EntityType, isKnownEventType } from './catalogue.ts';
import { events } from './db/schema.ts';
import { checkEventTypes, checkIds, ENTITY_ID } from './enrollments.ts';
import { type Issue, invalidRequest, throwIfIssues } from './entity-events-errors.ts';
import { addDeliverJobs } from './entity-events-jobs.ts';

/** At most this many entity ids per fetch-events request (spec limits table). */
export const MAX_FETCH_IDS = 40;
/** At most this many events per operator ingest batch. */
export const MAX_INGEST_BATCH = 1000;

/** One event as stored and as fetched. */
export interface EventView {
  event_id: string;
  event_name: string;
  entity_type: EntityType;
  business_id?: string;
  prospect_id?: string;
  event_time: string;
  data: Record<string, unknown>;
}

/** One event of an ingest batch (operator API or simulator). `event_time` is RFC 3339. */
export interface IngestEvent {
  entity_type: EntityType;
  entity_id: string;
  event_name: string;
  event_time: string;
  data: Record<string, unknown>;
}

/** The API form of a stored event (`business_id` or `prospect_id` by entity type). */
export function toEventView(row: typeof events.$inferSelect): EventView {
  return {
    event_id: row.id,
    event_name: row.eventName,
    entity_type: row.entityType,
    [row.entityType === 'business' ? 'business_id' : 'prospect_id']: row.entityId,
    event_time: row.eventTime.toISOString(),
    data: row.data as Record<string, unknown>,
  };
}

/**
 * Creates, inside `tx`, one delivery row per active enrollment that covers the event's entity and type and whose
 * webhook is active and in scope (v2: the enrollment's own webhook of the same tenant; v1: the partner's legacy
 * webhook), and one `entity-events:deliver` job per delivery (Graphile Worker `add_jobs`, same transaction: the
 * event, its deliveries and their jobs commit together or not at all). Each job has the key
 * `entity-events:deliver:<delivery id>`, so the sweeper re-queuing a due delivery replaces its job instead of adding
 * a second one ({@link addDeliverJobs}, in the same statement). An (event, enrollment) pair gets one delivery here;
 * replays of it are further deliveries (`replay_of` set). Returns the number of deliveries.
 */
export async function fanOut(tx: Executor, eventIds: string[], now: Date): Promise<number> {
  if (eventIds.length === 0) return 0;
  const idsJson = JSON.stringify(eventIds);
  const result = await tx.execute(sql`
    with ins as (
      insert into entity_events.deliveries
        (id, tenant_id, event_id, enrollment_id, webhook_id, status, attempt_count, next_attempt_at, created_at)
      select 'dl_' || replace(gen_random_uuid()::text, '-', ''), e.tenant_id, ev.id, e.id, w.id, 'pending', 0,
             ${now.toISOString()}::timestamptz, ${now.toISOString()}::timestamptz
      from entity_events.events ev
      join entity_events.enrollment_entities ee on ee.entity_id = ev.entity_id
      join entity_events.enrollments e
        on e.id = ee.enrollment_id and e.entity_type = ev.entity_type and e.status = 'active'
       and ev.event_name = any(e.event_types)
      join entity_events.tenants t on t.id = e.tenant_id
      join entity_events.webhooks w
        on w.status = 'active' and w.deleted_at is null
       and ((e.api_version = 'v2' and w.id = e.webhook_id and w.tenant_id = e.tenant_id and not w.legacy)
         or (e.api_version = 'v1' and w.legacy and w.partner_id = t.partner_id))
      where ev.id in (select json_array_elements_text(${idsJson}::json))
      on conflict (event_id, enrollment_id) where replay_of is null do nothing
      returning id
    )
    ${addDeliverJobs(sql`ins`)}`);
  return Number((result.rows[0] as { n: number } | undefined)?.n ?? 0);
}

/**
 * Validates one ingest item, pushing every problem with a pointer `events/<i>/<field>` (`events/<i>/data/amount`):
 * entity type and id, `event_name` in the catalogue of that entity type (an issue with code `unknown_event_type`),
 * `event_time` RFC 3339 with an offset, and `data` against the TypeBox schema of its type (`dataSchemaOf` in
 * catalogue.ts).
 * @returns the normalised event, or undefined when the item has a problem.
 */
function checkIngestItem(item: unknown, i: number, issues: Issue[]): IngestEvent | undefined {
  const at = (f: string, message: string, code?: Issue['code']) =>
    issues.push({
      location: 'body',
      field: `events/${i}${f ? `/${f}` : ''}`,
      message,
      ...(code ? { code } : {}),
    });
  if (!item || typeof item !== 'object' || Array.isArray(item)) {
    at('', 'must be an object');
    return undefined;
  }
  const o = item as Record<string, unknown>;
  const before = issues.length;
  const entityType = o.entity_type;
  const typed = entityType === 'business' || entityType === 'prospect';
  if (!typed) at('entity_type', 'must be business or prospect');
  const entityId =
    o.entity_id ??
    (entityType === 'business' ? o.business_id : entityType === 'prospect' ? o.prospect_id : undefined);
  if (typeof entityId !== 'string' || !ENTITY_ID.test(entityId))
    at('entity_id', 'must be an id of 1-128 characters [A-Za-z0-9_.:-]');
  const eventName = o.event_name;
  const known = typed && typeof eventName === 'string' && isKnownEventType(entityType, eventName);
  if (typeof eventName !== 'string' || eventName === '') at('event_name', 'is required');
  else if (typed && !known)
    at('event_name', `is not a ${entityType} event type: ${eventName}`, 'unknown_event_type');
  if (typeof o.event_time !== 'string' || !isRfc3339DateTime(o.event_time))
    at('event_time', RFC3339_DATE_TIME_MESSAGE);
  if (!o.data || typeof o.data !== 'object' || Array.isArray(o.data)) at('data', 'must be an object');
  else if (known)
    for (const d of checkEventData(eventName, o.data as Record<string, unknown>))
      at(`data/${d.path}`, d.message);
  if (issues.length > before) return undefined;
  return {
    entity_type: entityType as EntityType,
    entity_id: entityId as string,
    event_name: eventName as string,
    event_time: new Date(o.event_time as string).toISOString(),
    data: o.data as Record<string, unknown>,
  };
}

/** The event store (spec 002 section G "Events can also be pulled with the fetch-events endpoints"). */
export class EventStore {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /**
   * Stores a batch of events all-or-nothing (every item validated first) and fans each out to its deliveries in the
   * same transaction.
   * @param items the batch: objects `{entity_type, entity_id (or business_id/prospect_id), event_name, event_time
   *   (RFC 3339), data}`; `data` is checked against the schema of its type (catalogue.ts).
   * @returns the stored events and the number of deliveries created.
   * @throws ApiError 400 listing every problem of every item in `details.issues` (code `unknown_event_type` when
   *   unknown event names are the only problem, else `validation_failed`); 400 `batch_too_large` above 1,000.
   *   Nothing is stored unless everything is: a database failure rolls back events, deliveries and jobs together.
   */
  async ingest(
    items: unknown,
    source: 'operator' | 'simulator',
  ): Promise<{ events: EventView[]; deliveries_created: number }> {
    if (!Array.isArray(items) || items.length === 0)
      throw invalidRequest([{ location: 'body', field: 'events', message: 'must be a non-empty array' }]);
    if (items.length > MAX_INGEST_BATCH)
      throw new ApiError(400, 'batch_too_large', `At most ${MAX_INGEST_BATCH} events per batch.`);
    const issues: Issue[] = [];
    const valid = items.map((item, i) => checkIngestItem(item, i, issues));
    throwIfIssues(issues, `Invalid batch: ${issues.length} problem(s); nothing was stored.`);
    const now = this.clock.now();
    const rows = (valid as IngestEvent[]).map((e) => ({
      id: prefixedHexId('ev'),
      entityType: e.entity_type,
      entityId: e.entity_id,
      eventName: e.event_name,
      eventTime: new Date(e.event_time),
      data: e.data,
      source,
      storedAt: now,
    }));
    return this.db.transaction(async (tx) => {
      const inserted = await tx.insert(events).values(rows).returning();
      const n = await fanOut(
        tx,
        inserted.map((r) => r.id),
        now,
      );
      return { events: inserted.map(toEventView), deliveries_created: n };
    });
  }

  /**
   * Fetch events on demand: up to 40 ids of `entityType`, optional event types, `from`/`to` (RFC 3339, inclusive),
   * newest first, paged.
   * @throws ApiError 400 listing every problem at once (ids, unknown types, bad or inverted range; the code is
   *   `too_many_ids` or `unknown_event_type` when that is the only kind of problem, else `validation_failed`).
   */
  async fetch(
    entityType: EntityType,
    input: { ids: unknown; idsField: string; event_types?: string[]; from?: string; to?: string },
    page: PageRequest,
  ) {
    const issues: Issue[] = [];
    const ids = checkIds(input.idsField, input.ids, issues, { max: MAX_FETCH_IDS });
    const types =
      input.event_types === undefined ? undefined : checkEventTypes(entityType, input.event_types, issues);
    const from = parseTime('from', input.from, issues);
    const to = parseTime('to', input.to, issues);
    if (from && to && from > to)
      issues.push({ location: 'body', field: 'from', message: 'must not be after to' });
    throwIfIssues(issues);
    const where = and(
      eq(events.entityType, entityType),
      inArray(events.entityId, ids),
      types ? inArray(events.eventName, types) : undefined,
      from ? gte(events.eventTime, from) : undefined,
      to ? lte(events.eventTime, to) : undefined,
    );
    const [{ n } = { n: 0 }] = await this.db.select({ n: count() }).from(events).where(where);
    const rows = await this.db
      .select()
      .from(events)
      .where(where)
      .orderBy(desc(events.eventTime), desc(events.id))
      .limit(page.limit)
      .offset(page.offset);
    return { items: rows.map(toEventView), page: pageInfo(page, n) };
  }
}

function parseTime(field: string, raw: string | undefined, issues: Issue[]): Date | undefined {
  if (raw === undefined) return undefined;
  const at = parseRfc3339DateTime(raw);
  if (!at) issues.push({ location: 'body', field, message: RFC3339_DATE_TIME_MESSAGE });
  return at;
}
