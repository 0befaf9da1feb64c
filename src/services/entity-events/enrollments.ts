import { and, asc, count, eq, inArray } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.ts';
import type { Db, Tx } from '../../platform/database.ts';
import { ApiError } from '../../platform/errors.ts';
import { prefixedHexId } from '../../platform/ids.ts';
import { type PageRequest, pageInfo } from '../../platform/pagination.ts';
import { type EntityType, isKnownEventType } from './catalogue.ts';
import { enrollmentEntities, enrollments, webhooks } from './db/schema.ts';
import { type Issue, notFound, throwIfIssues } from './entity-events-errors.ts';
import type { TenantPrincipal } from './tenants.ts';

/** At most this many entity ids per enrollment request (spec limits table); no cap on the total enrolled. */
export const MAX_IDS_PER_REQUEST = 1000;
/** A business or prospect id: 1-128 characters of `[A-Za-z0-9_.:-]`. */
export const ENTITY_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
/** Item issues (`<field>/<i>`) listed per list field; the rest are counted in one more issue on the field. */
export const MAX_LISTED_ITEM_ISSUES = 20;

type EnrollmentRow = typeof enrollments.$inferSelect;

/** An enrollment as the API shows it; `business_ids` or `prospect_ids` by entity type. */
export interface EnrollmentView {
  enrollment_id: string;
  enrollment_key: string;
  webhook_id: string | null;
  status: 'active' | 'paused';
  entity_type: EntityType;
  api_version: 'v1' | 'v2';
  event_types: string[];
  business_ids?: string[];
  prospect_ids?: string[];
  created_at: string;
  last_modified_time: string;
}

/** The id field of `entityType` in requests and payloads (`business_ids` / `prospect_ids`). */
export const idsField = (t: EntityType) => (t === 'business' ? 'business_ids' : 'prospect_ids');

/**
 * Checks an id list, pushing every problem onto `issues`: not an array, empty (unless `allowEmpty`), more than `max`
 * ids (an issue with code `too_many_ids`), and each malformed id (`<field>/<i>`).
 * @returns the well-formed ids, duplicates folded (meaningful only when no issue was pushed).
 */
export function checkIds(
  field: string,
  ids: unknown,
  issues: Issue[],
  options: { max?: number; allowEmpty?: boolean } = {},
): string[] {
  const { max = MAX_IDS_PER_REQUEST, allowEmpty = false } = options;
  if (!Array.isArray(ids)) {
    issues.push({ location: 'body', field, message: 'must be an array of ids' });
    return [];
  }
  if (ids.length > max)
    issues.push({
      location: 'body',
      field,
      message: `has ${ids.length} ids; at most ${max} per request`,
      code: 'too_many_ids',
    });
  if (!allowEmpty && ids.length === 0) issues.push({ location: 'body', field, message: 'must not be empty' });
  const good: string[] = [];
  const bad: number[] = [];
  ids.forEach((id, i) => {
    if (typeof id === 'string' && ENTITY_ID.test(id)) good.push(id);
    else bad.push(i);
  });
  pushItemIssues(issues, field, bad, () => ({
    message: 'must be an id of 1-128 characters [A-Za-z0-9_.:-]',
  }));
  return [...new Set(good)];
}

/**
 * Checks event types against the catalogue of `entityType`, pushing one issue per unknown type
 * (`<field>/<i>`, code `unknown_event_type`) and one for an empty list.
 * @returns the known types, duplicates folded.
 */
export function checkEventTypes(
  entityType: EntityType,
  types: string[],
  issues: Issue[],
  field = 'event_types',
): string[] {
  if (types.length === 0) issues.push({ location: 'body', field, message: 'must not be empty' });
  const unknown = types.flatMap((t, i) => (isKnownEventType(entityType, t) ? [] : [i]));
  pushItemIssues(issues, field, unknown, (i) => ({
    message: `is not a ${entityType} event type: ${types[i]}`,
    code: 'unknown_event_type',
  }));
  return [...new Set(types.filter((t) => isKnownEventType(entityType, t)))];
}

/**
 * One issue per bad item of list `field` (`<field>/<i>`, from `describe(i)`) for the first
 * {@link MAX_LISTED_ITEM_ISSUES}, then one issue on `field` counting the rest (with the same code), so a large body
 * full of bad items gets a small answer.
 */
function pushItemIssues(
  issues: Issue[],
  field: string,
  bad: readonly number[],
  describe: (i: number) => Pick<Issue, 'message' | 'code'>,
): void {
  for (const i of bad.slice(0, MAX_LISTED_ITEM_ISSUES))
    issues.push({ location: 'body', field: `${field}/${i}`, ...describe(i) });
  if (bad.length > MAX_LISTED_ITEM_ISSUES) {
    const { code } = describe(bad[MAX_LISTED_ITEM_ISSUES]!);
    issues.push({
      location: 'body',
      field,
      message: `has ${bad.length - MAX_LISTED_ITEM_ISSUES} more such items (the first ${MAX_LISTED_ITEM_ISSUES} are listed)`,
      ...(code ? { code } : {}),
    });
  }
}

/**
 * Enrollments of business and prospect entities (spec 002 section G: Enrollment; states table; errors 404/422).
 */
export class EnrollmentService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /**
   * Checks a v2 `webhook_id` for an enrollment: missing, another tenant's (or the legacy partner webhook), or not
   * active -> 422; unknown -> 404 (spec errors table).
   */
  private async checkWebhook(tx: Tx, who: TenantPrincipal, webhookId: unknown): Promise<string> {
    if (typeof webhookId !== 'string' || webhookId === '')
      throw new ApiError(
        422,
        'webhook_id_required',
        'webhook_id is required: enrollments bind to a webhook.',
      );
    // FOR SHARE: a concurrent DELETE of this webhook (FOR UPDATE) either waits for this enrollment to commit and then
    // sees it as active, or commits first and this read sees the webhook deleted; no active enrollment can end up on
    // a deleted webhook.
    const [row] = await tx.select().from(webhooks).where(eq(webhooks.id, webhookId)).for('share');
    if (!row || row.deletedAt) throw notFound('webhook', webhookId);
    if (row.legacy || row.tenantId !== who.tenantId)
      throw new ApiError(
        422,
        'webhook_out_of_scope',
        `Webhook ${webhookId} is not a webhook of this tenant.`,
      );
    if (row.status !== 'active')
      throw new ApiError(
        422,
        'webhook_not_active',
        `Webhook ${webhookId} is ${row.status}; enroll to an active one.`,
      );
    return row.id;
  }

  /**
   * Creates an enrollment. v2 needs `webhook_id`; v1 (`apiVersion: 'v1'`) has none and delivers to the partner's
   * legacy webhook.
   * @param input `ids` 1-1,000 ids of 1-128 characters `[A-Za-z0-9_.:-]`; `event_types` from the catalogue of
   *   `entityType`.
   * @returns the enrollment (201).
   * @throws ApiError 400 listing every bad id and event type at once (`too_many_ids` / `unknown_event_type` when
   *   that is the only kind of problem, else `validation_failed`); then 404 unknown webhook, 422 webhook missing,
   *   out of scope or not active.
   */
  async create(
    who: TenantPrincipal,
    entityType: EntityType,
    input: { enrollment_key: string; webhook_id?: unknown; event_types: string[]; ids: unknown },
    apiVersion: 'v1' | 'v2' = 'v2',
  ): Promise<EnrollmentView> {
    const field = idsField(entityType);
    const issues: Issue[] = [];
    const ids = checkIds(field, input.ids, issues);
    const eventTypes = checkEventTypes(entityType, input.event_types, issues);
    throwIfIssues(issues);
    return this.db.transaction(async (tx) => {
      const webhookId = apiVersion === 'v2' ? await this.checkWebhook(tx, who, input.webhook_id) : null;
      const now = this.clock.now();
      const id = prefixedHexId('en');
      const [row] = await tx
        .insert(enrollments)
        .values({
          id,
          tenantId: who.tenantId,
          entityType,
          apiVersion,
          enrollmentKey: input.enrollment_key,
          webhookId,
          status: 'active',
          eventTypes,
          createdAt: now,
          lastModifiedTime: now,
        })
        .returning();
      await tx.insert(enrollmentEntities).values(ids.map((entityId) => ({ enrollmentId: id, entityId })));
      return toView(row!, ids);
    });
  }

  private async owned(tx: Tx | Db, who: TenantPrincipal, entityType: EntityType, id: string) {
    const [row] = await tx
      .select()
      .from(enrollments)
      .where(
        and(
          eq(enrollments.id, id),
          eq(enrollments.tenantId, who.tenantId),
          eq(enrollments.entityType, entityType),
        ),
      );
    if (!row) throw notFound('enrollment', id);
    return row;
  }

  private async idsOf(tx: Tx | Db, enrollmentIds: string[]): Promise<Map<string, string[]>> {
    const map = new Map<string, string[]>(enrollmentIds.map((id) => [id, []]));
    if (enrollmentIds.length === 0) return map;
    const rows = await tx
      .select()
      .from(enrollmentEntities)
      .where(inArray(enrollmentEntities.enrollmentId, enrollmentIds))
      .orderBy(asc(enrollmentEntities.entityId));
    for (const r of rows) map.get(r.enrollmentId)?.push(r.entityId);
    return map;
  }

  /** One enrollment with its entity ids. @throws ApiError 404. */
  async get(who: TenantPrincipal, entityType: EntityType, id: string): Promise<EnrollmentView> {
    const row = await this.owned(this.db, who, entityType, id);
    return toView(row, (await this.idsOf(this.db, [id])).get(id) ?? []);
  }

  /** The tenant's enrollments of `entityType`, oldest first, paged. */
  async list(
    who: TenantPrincipal,
    entityType: EntityType,
    page: PageRequest,
    apiVersion?: 'v1' | 'v2',
  ): Promise<{ items: EnrollmentView[]; page: ReturnType<typeof pageInfo> }> {
    const where = and(
      eq(enrollments.tenantId, who.tenantId),
      eq(enrollments.entityType, entityType),
      apiVersion ? eq(enrollments.apiVersion, apiVersion) : undefined,
    );
    const [{ n } = { n: 0 }] = await this.db.select({ n: count() }).from(enrollments).where(where);
    const rows = await this.db
      .select()
      .from(enrollments)
      .where(where)
      .orderBy(asc(enrollments.createdAt), asc(enrollments.id))
      .limit(page.limit)
      .offset(page.offset);
    const ids = await this.idsOf(
      this.db,
      rows.map((r) => r.id),
    );
    return { items: rows.map((r) => toView(r, ids.get(r.id) ?? [])), page: pageInfo(page, n) };
  }

  /**
   * Updates `webhook_id`, `enrollment_key`, `event_types` and the entity list (`<type>_ids` replaces it;
   * `add_<type>_ids` / `remove_<type>_ids` change it; each at most 1,000 ids). Re-pointing a paused enrollment at an
   * active webhook makes it `active` again.
   * @throws ApiError 400 listing every bad id and event type at once (as on create), 404, 422 (webhook rules as on
   *   create; v1 enrollments have no webhook_id).
   */
  async update(
    who: TenantPrincipal,
    entityType: EntityType,
    id: string,
    input: {
      enrollment_key?: string;
      webhook_id?: unknown;
      event_types?: string[];
      ids?: unknown;
      addIds?: unknown;
      removeIds?: unknown;
    },
  ): Promise<EnrollmentView> {
    const field = idsField(entityType);
    const issues: Issue[] = [];
    const replace = input.ids === undefined ? undefined : checkIds(field, input.ids, issues);
    const add =
      input.addIds === undefined
        ? undefined
        : checkIds(`add_${field}`, input.addIds, issues, { allowEmpty: true });
    const remove =
      input.removeIds === undefined
        ? undefined
        : checkIds(`remove_${field}`, input.removeIds, issues, { allowEmpty: true });
    const eventTypes =
      input.event_types === undefined ? undefined : checkEventTypes(entityType, input.event_types, issues);
    throwIfIssues(issues);
    return this.db.transaction(async (tx) => {
      const current = await this.owned(tx, who, entityType, id);
      await tx.select({ id: enrollments.id }).from(enrollments).where(eq(enrollments.id, id)).for('update');
      const set: Partial<typeof enrollments.$inferInsert> = { lastModifiedTime: this.clock.now() };
      if (input.webhook_id !== undefined) {
        if (current.apiVersion === 'v1')
          throw new ApiError(
            422,
            'v1_enrollment_has_no_webhook',
            'Enrollments of the earlier version have no webhook_id.',
          );
        set.webhookId = await this.checkWebhook(tx, who, input.webhook_id);
        if (current.status === 'paused') set.status = 'active';
      }
      if (input.enrollment_key !== undefined) set.enrollmentKey = input.enrollment_key;
      if (eventTypes) set.eventTypes = eventTypes;
      const [row] = await tx.update(enrollments).set(set).where(eq(enrollments.id, id)).returning();
      if (replace) {
        await tx.delete(enrollmentEntities).where(eq(enrollmentEntities.enrollmentId, id));
        await tx
          .insert(enrollmentEntities)
          .values(replace.map((entityId) => ({ enrollmentId: id, entityId })));
      }
      if (add && add.length > 0)
        await tx
          .insert(enrollmentEntities)
          .values(add.map((entityId) => ({ enrollmentId: id, entityId })))
          .onConflictDoNothing();
      if (remove && remove.length > 0)
        await tx
          .delete(enrollmentEntities)
          .where(and(eq(enrollmentEntities.enrollmentId, id), inArray(enrollmentEntities.entityId, remove)));
      return toView(row!, (await this.idsOf(tx, [id])).get(id) ?? []);
    });
  }

  /** Deletes an enrollment and its entity list; nothing more is delivered for it. @throws ApiError 404. */
  async delete(who: TenantPrincipal, entityType: EntityType, id: string): Promise<{ enrollment_id: string }> {
    return this.db.transaction(async (tx) => {
      await this.owned(tx, who, entityType, id);
      await tx.delete(enrollments).where(eq(enrollments.id, id));
      return { enrollment_id: id };
    });
  }
}

function toView(row: EnrollmentRow, ids: string[]): EnrollmentView {
  return {
    enrollment_id: row.id,
    enrollment_key: row.enrollmentKey,
    webhook_id: row.webhookId,
    status: row.status,
    entity_type: row.entityType,
    api_version: row.apiVersion,
    event_types: row.eventTypes,
    [idsField(row.entityType)]: ids,
    created_at: row.createdAt.toISOString(),
    last_modified_time: row.lastModifiedTime.toISOString(),
  };
}
