import { and, asc, count, eq, inArray, isNull, or, sql } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.ts';
import type { SecretBox } from '../../platform/crypto.ts';
import type { Db, Executor } from '../../platform/database.ts';
import { ApiError } from '../../platform/errors.ts';
import { prefixedHexId } from '../../platform/ids.ts';
import { deliveries, enrollments, webhooks } from './db/schema.ts';
import { type Issue, notFound, throwIfIssues } from './entity-events-errors.ts';
import { newWebhookSecret } from './signing.ts';
import type { TenantPrincipal } from './tenants.ts';

/** At most this many (non-deleted, non-legacy) webhooks per tenant (spec limits table). */
export const MAX_WEBHOOKS_PER_TENANT = 10;
export const MAX_HEADERS = 20;

/**
 * What a custom header value reads as (`X-Api-Token: ********`): values often carry the receiver's credentials, so
 * reads show names only. An update that sends an entry back with this value keeps the stored value of that name.
 */
export const HEADER_VALUE_MASK = '********';
/** Header names the service sets itself; a custom header cannot replace them. */
const RESERVED_HEADERS = new Set([
  'content-type',
  'content-length',
  'host',
  'x-signature',
  'x-timestamp',
  'x-delivery-id',
  'x-replay-of',
  'transfer-encoding',
  'connection',
  'user-agent',
]);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export type PayloadFormat = 'json' | 'stringified_json';
/**
 * Why a webhook is disabled: `caller` (PATCH `status: disabled`), `gone` (the receiver answered 410), `failing`
 * (every attempt failed for 5 days, see `AUTO_DISABLE_AFTER_MS` in delivery.ts).
 */
export type DisabledReason = 'caller' | 'gone' | 'failing';
export type WebhookRow = typeof webhooks.$inferSelect;

/** A webhook as the API shows it (spec: never the secret on read). */
export interface WebhookView {
  webhook_id: string;
  scope: { type: 'tenant' | 'partner'; id: string };
  name: string;
  description: string | null;
  webhook_url: string;
  headers: string[];
  payload_format: PayloadFormat;
  status: 'active' | 'disabled';
  disabled_reason: DisabledReason | null;
  /** When it was disabled (RFC 3339); null while active. */
  disabled_at: string | null;
  /** The first failed attempt since the last success (RFC 3339); null while deliveries succeed. */
  failing_since: string | null;
  legacy: boolean;
  created_at: string;
  last_modified_time: string;
}

/**
 * Checks `Header-Name: value` strings, pushing one issue per bad entry (`<field>/<i>`) and one for more than 20
 * entries: names are RFC 7230 tokens, not a header the service sets itself, not repeated (case-insensitive); values
 * have no control characters and at most 1,024 characters.
 * @returns the well-formed headers as a name -> value record.
 */
export function checkCustomHeaders(
  list: string[],
  issues: Issue[],
  field = 'headers',
): Record<string, string> {
  const bad = (f: string, message: string) => issues.push({ location: 'body', field: f, message });
  if (list.length > MAX_HEADERS) bad(field, `must have at most ${MAX_HEADERS} entries`);
  const out: Record<string, string> = {};
  list.forEach((entry, i) => {
    const colon = entry.indexOf(':');
    const name = colon > 0 ? entry.slice(0, colon).trim() : '';
    const value = colon > 0 ? entry.slice(colon + 1).trim() : '';
    if (!name || !TOKEN.test(name)) {
      bad(`${field}/${i}`, 'must be "Header-Name: value" with a valid header name');
      return;
    }
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
    if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(value) || value.length > 1024)
      bad(`${field}/${i}`, 'has a value with control characters or longer than 1024 characters');
    else if (/[\u0100-\uffff]/.test(value))
      // HTTP sends header values as Latin-1 bytes (RFC 9110 field-value): an emoji could never be delivered.
      bad(`${field}/${i}`, 'has a value that cannot be sent in an HTTP header (Latin-1 characters only)');
    else if (RESERVED_HEADERS.has(name.toLowerCase()))
      bad(`${field}/${i}`, `cannot set ${name}: the service sets it`);
    else if (Object.keys(out).some((k) => k.toLowerCase() === name.toLowerCase()))
      bad(`${field}/${i}`, `repeats ${name}`);
    else out[name] = value;
  });
  return out;
}

/**
 * Parses `Header-Name: value` strings (rules of {@link checkCustomHeaders}).
 * @returns name -> value.
 * @throws ApiError 400 `validation_failed` listing every bad entry.
 */
export function parseCustomHeaders(list: string[]): Record<string, string> {
  const issues: Issue[] = [];
  const out = checkCustomHeaders(list, issues);
  throwIfIssues(issues);
  return out;
}

/**
 * Checks a destination URL, pushing an issue onto `issues` unless it is an absolute http(s) URL without
 * credentials, at most 2048 characters.
 */
export function checkWebhookUrl(raw: string, issues: Issue[], field = 'webhook_url'): void {
  const bad = (message: string) => issues.push({ location: 'body', field, message });
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    bad('must be an absolute http or https URL');
    return;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') bad('must be an absolute http or https URL');
  else if (url.username || url.password) bad('must not carry credentials');
  else if (raw.length > 2048) bad('must be at most 2048 characters');
}

/**
 * Checks the URL and headers of a create, update or v1 registration together, so every problem is reported at once.
 * @throws ApiError 400 `validation_failed` listing every issue.
 */
function checkDestination(input: { webhook_url?: string; headers?: string[] }): void {
  const issues: Issue[] = [];
  if (input.webhook_url !== undefined) checkWebhookUrl(input.webhook_url, issues);
  if (input.headers !== undefined) checkCustomHeaders(input.headers, issues);
  throwIfIssues(issues);
}

/** `Name: value` entries with every value replaced by {@link HEADER_VALUE_MASK} (names kept). */
function maskedHeaders(headers: readonly string[]): string[] {
  return headers.map((entry) => `${entry.slice(0, entry.indexOf(':')).trim()}: ${HEADER_VALUE_MASK}`);
}

/**
 * The headers of an update: an entry whose value is {@link HEADER_VALUE_MASK} takes the stored value of that name
 * (a client may send back what it read).
 * @throws ApiError 400 `validation_failed` for a masked entry whose name has no stored value.
 */
function unmaskedHeaders(input: readonly string[], stored: readonly string[]): string[] {
  const storedValues = new Map(
    stored.map((entry) => [entry.slice(0, entry.indexOf(':')).trim().toLowerCase(), entry] as const),
  );
  const issues: Issue[] = [];
  const out = input.map((entry, i) => {
    const colon = entry.indexOf(':');
    if (entry.slice(colon + 1).trim() !== HEADER_VALUE_MASK) return entry;
    const kept = storedValues.get(entry.slice(0, colon).trim().toLowerCase());
    if (!kept)
      issues.push({
        location: 'body',
        field: `headers/${i}`,
        message: 'is masked but has no stored value to keep',
      });
    return kept ?? entry;
  });
  throwIfIssues(issues);
  return out;
}

/** The API form of a webhook row (never the secret; custom header values masked). */
export function toWebhookView(row: WebhookRow): WebhookView {
  return {
    webhook_id: row.id,
    scope: row.legacy ? { type: 'partner', id: row.partnerId } : { type: 'tenant', id: row.tenantId ?? '' },
    name: row.name,
    description: row.description,
    webhook_url: row.webhookUrl,
    headers: maskedHeaders(row.headers),
    payload_format: row.payloadFormat,
    status: row.status,
    disabled_reason: row.disabledReason as DisabledReason | null,
    disabled_at: row.disabledAt ? row.disabledAt.toISOString() : null,
    failing_since: row.failingSince ? row.failingSince.toISOString() : null,
    legacy: row.legacy,
    created_at: row.createdAt.toISOString(),
    last_modified_time: row.lastModifiedTime.toISOString(),
  };
}

function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; cause?: { code?: string } };
  return e?.code === '23505' || e?.cause?.code === '23505';
}

/**
 * v2 webhooks of a tenant and the v1 partner-level (legacy) webhook (spec 002 section G: Webhook; states table).
 * Secrets are sealed with SecretBox (aad = webhook id) because deliveries must read them back to sign.
 */
export class WebhookService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly secrets: SecretBox,
  ) {}

  /** The plaintext secret of webhook `id` (delivery signing). */
  secretOf(row: Pick<WebhookRow, 'id' | 'secretSealed'>): string {
    return this.secrets.decrypt(row.secretSealed, row.id);
  }

  /**
   * Creates a v2 webhook. Names unique within the tenant; at most 10 per tenant.
   * @returns the webhook and its `webhook_secret` (shown here and on rotation only).
   * @throws ApiError 400 listing every bad header and URL problem at once; 409 `webhook_name_taken`; 422
   *   `webhook_limit_reached`.
   */
  async create(
    who: TenantPrincipal,
    input: {
      name: string;
      webhook_url: string;
      description?: string | null;
      headers?: string[];
      payload_format?: PayloadFormat;
    },
  ): Promise<WebhookView & { webhook_secret: string }> {
    checkDestination(input);
    const id = prefixedHexId('wh');
    const secret = newWebhookSecret();
    const now = this.clock.now();
    try {
      return await this.db.transaction(async (tx) => {
        // Serialises creations of one tenant so the cap cannot be overshot by concurrent requests.
        await tx.execute(
          sql`select pg_advisory_xact_lock(hashtext(${`entity-events:webhooks:${who.tenantId}`}))`,
        );
        const [{ n } = { n: 0 }] = await tx
          .select({ n: count() })
          .from(webhooks)
          .where(
            and(eq(webhooks.tenantId, who.tenantId), eq(webhooks.legacy, false), isNull(webhooks.deletedAt)),
          );
        if (n >= MAX_WEBHOOKS_PER_TENANT)
          throw new ApiError(
            422,
            'webhook_limit_reached',
            `A tenant has at most ${MAX_WEBHOOKS_PER_TENANT} webhooks; delete one first.`,
          );
        const [row] = await tx
          .insert(webhooks)
          .values({
            id,
            tenantId: who.tenantId,
            partnerId: who.partnerId,
            legacy: false,
            name: input.name,
            description: input.description ?? null,
            webhookUrl: input.webhook_url,
            headers: input.headers ?? [],
            payloadFormat: input.payload_format ?? 'json',
            status: 'active',
            secretSealed: this.secrets.encrypt(secret, id),
            createdAt: now,
            lastModifiedTime: now,
          })
          .returning();
        return { ...toWebhookView(row!), webhook_secret: secret };
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw nameTaken(input.name);
      throw err;
    }
  }

  /** The tenant's v2 webhooks and its partner's legacy webhook (`legacy: true`), oldest first. */
  async list(who: TenantPrincipal): Promise<WebhookView[]> {
    const rows = await this.db
      .select()
      .from(webhooks)
      .where(
        and(
          isNull(webhooks.deletedAt),
          or(
            and(eq(webhooks.tenantId, who.tenantId), eq(webhooks.legacy, false)),
            and(eq(webhooks.partnerId, who.partnerId), eq(webhooks.legacy, true)),
          ),
        ),
      )
      .orderBy(asc(webhooks.legacy), asc(webhooks.createdAt), asc(webhooks.id));
    return rows.map(toWebhookView);
  }

  /**
   * A webhook visible to the caller (its tenant's, or its partner's legacy one).
   * @throws ApiError 404 `webhook_not_found` (also for another tenant's webhook: existence is not revealed).
   */
  async getRow(who: TenantPrincipal, id: string, executor: Executor = this.db): Promise<WebhookRow> {
    const [row] = await executor
      .select()
      .from(webhooks)
      .where(and(eq(webhooks.id, id), isNull(webhooks.deletedAt)));
    if (!row) throw notFound('webhook', id);
    const visible = row.legacy ? row.partnerId === who.partnerId : row.tenantId === who.tenantId;
    if (!visible) throw notFound('webhook', id);
    return row;
  }

  private async getOwned(who: TenantPrincipal, id: string, executor: Executor): Promise<WebhookRow> {
    const row = await this.getRow(who, id, executor);
    if (row.legacy)
      throw new ApiError(
        422,
        'legacy_webhook_read_only',
        'The legacy partner-level webhook is read-only here; change it through POST /v1/webhooks.',
      );
    return row;
  }

  /**
   * Updates name, description, url, headers, payload format or status (`disabled` keeps the destination and stops
   * deliveries; pending retries are cancelled when they come due). `status: active` re-enables a webhook disabled for
   * any reason (`caller`, `gone`, `failing`): the reason, `disabled_at` and the failing streak are cleared.
   * @throws ApiError 400 (every bad header and URL problem at once), 404, 409 `webhook_name_taken`, 422
   *   `legacy_webhook_read_only`.
   */
  async update(
    who: TenantPrincipal,
    id: string,
    input: {
      name?: string;
      description?: string | null;
      webhook_url?: string;
      headers?: string[];
      payload_format?: PayloadFormat;
      status?: 'active' | 'disabled';
    },
  ): Promise<WebhookView> {
    checkDestination(input);
    try {
      return await this.db.transaction(async (tx) => {
        const current = await this.getOwned(who, id, tx);
        const set: Partial<typeof webhooks.$inferInsert> = { lastModifiedTime: this.clock.now() };
        if (input.name !== undefined) set.name = input.name;
        if (input.description !== undefined) set.description = input.description;
        if (input.webhook_url !== undefined) set.webhookUrl = input.webhook_url;
        if (input.headers !== undefined) set.headers = unmaskedHeaders(input.headers, current.headers);
        if (input.payload_format !== undefined) set.payloadFormat = input.payload_format;
        if (input.status !== undefined && input.status !== current.status) {
          const disabled = input.status === 'disabled';
          set.status = input.status;
          set.disabledReason = disabled ? 'caller' : null;
          set.disabledAt = disabled ? set.lastModifiedTime : null;
          // A re-enabled webhook starts with a clean record: its next failure starts a new 5-day streak.
          set.failingSince = null;
        }
        const [row] = await tx.update(webhooks).set(set).where(eq(webhooks.id, id)).returning();
        return toWebhookView(row!);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw nameTaken(input.name ?? '');
      throw err;
    }
  }

  /** Issues a new secret for that webhook only. @throws ApiError 404, 422 legacy. */
  async rotateSecret(who: TenantPrincipal, id: string): Promise<WebhookView & { webhook_secret: string }> {
    return this.db.transaction(async (tx) => {
      await this.getOwned(who, id, tx);
      const secret = newWebhookSecret();
      const [row] = await tx
        .update(webhooks)
        .set({ secretSealed: this.secrets.encrypt(secret, id), lastModifiedTime: this.clock.now() })
        .where(eq(webhooks.id, id))
        .returning();
      return { ...toWebhookView(row!), webhook_secret: secret };
    });
  }

  /**
   * Deletes a webhook (soft delete; the name becomes free). While active enrollments reference it the answer is 409
   * unless `force`; with `force` they become `paused` (entity lists kept) and their ids are returned. Pending
   * deliveries to it are cancelled.
   * @throws ApiError 404, 409 `webhook_in_use`, 422 legacy.
   */
  async delete(
    who: TenantPrincipal,
    id: string,
    force: boolean,
  ): Promise<{ webhook_id: string; affected_enrollment_ids: string[] }> {
    return this.db.transaction(async (tx) => {
      await this.getOwned(who, id, tx);
      // Locks the row (enrollment writes hold FOR SHARE on it) and re-reads it: a concurrent delete may have won.
      const [locked] = await tx
        .select({ deletedAt: webhooks.deletedAt })
        .from(webhooks)
        .where(eq(webhooks.id, id))
        .for('update');
      if (!locked || locked.deletedAt) throw notFound('webhook', id);
      const active = await tx
        .select({ id: enrollments.id })
        .from(enrollments)
        .where(and(eq(enrollments.webhookId, id), eq(enrollments.status, 'active')))
        .orderBy(asc(enrollments.id))
        .for('update');
      const ids = active.map((e) => e.id);
      if (ids.length > 0 && !force)
        throw new ApiError(
          409,
          'webhook_in_use',
          `${ids.length} active enrollment(s) reference this webhook; delete with force=true to pause them.`,
          { details: { enrollment_ids: ids } },
        );
      const now = this.clock.now();
      if (ids.length > 0)
        await tx
          .update(enrollments)
          .set({ status: 'paused', lastModifiedTime: now })
          .where(inArray(enrollments.id, ids));
      await tx.update(webhooks).set({ deletedAt: now, lastModifiedTime: now }).where(eq(webhooks.id, id));
      await tx
        .update(deliveries)
        .set({ status: 'cancelled', lastError: 'webhook deleted', completedAt: now, nextAttemptAt: null })
        .where(and(eq(deliveries.webhookId, id), eq(deliveries.status, 'pending')));
      return { webhook_id: id, affected_enrollment_ids: ids };
    });
  }

  /**
   * v1: registers the partner's single legacy webhook. A new registration overrides the previous one (URL, headers)
   * and issues a new secret; the webhook id stays. v2 never touches it.
   * @returns the legacy webhook and its new `webhook_secret`.
   * @throws ApiError 400 listing every bad header and URL problem at once.
   */
  async registerLegacy(
    who: TenantPrincipal,
    input: { webhook_url: string; headers?: string[] },
  ): Promise<WebhookView & { webhook_secret: string }> {
    checkDestination(input);
    const secret = newWebhookSecret();
    const now = this.clock.now();
    return this.db.transaction(async (tx) => {
      await tx.execute(
        sql`select pg_advisory_xact_lock(hashtext(${`entity-events:legacy:${who.partnerId}`}))`,
      );
      const [existing] = await tx
        .select()
        .from(webhooks)
        .where(
          and(eq(webhooks.partnerId, who.partnerId), eq(webhooks.legacy, true), isNull(webhooks.deletedAt)),
        );
      if (existing) {
        const [row] = await tx
          .update(webhooks)
          .set({
            webhookUrl: input.webhook_url,
            headers: input.headers ?? [],
            status: 'active',
            disabledReason: null,
            disabledAt: null,
            failingSince: null,
            secretSealed: this.secrets.encrypt(secret, existing.id),
            lastModifiedTime: now,
          })
          .where(eq(webhooks.id, existing.id))
          .returning();
        return { ...toWebhookView(row!), webhook_secret: secret };
      }
      const id = prefixedHexId('wh');
      const [row] = await tx
        .insert(webhooks)
        .values({
          id,
          tenantId: null,
          partnerId: who.partnerId,
          legacy: true,
          name: 'legacy partner webhook',
          description: 'Registered through the v1 API',
          webhookUrl: input.webhook_url,
          headers: input.headers ?? [],
          payloadFormat: 'json',
          status: 'active',
          secretSealed: this.secrets.encrypt(secret, id),
          createdAt: now,
          lastModifiedTime: now,
        })
        .returning();
      return { ...toWebhookView(row!), webhook_secret: secret };
    });
  }

  /** The partner's legacy webhook, if registered. */
  async getLegacy(who: TenantPrincipal): Promise<WebhookView | undefined> {
    const [row] = await this.db
      .select()
      .from(webhooks)
      .where(
        and(eq(webhooks.partnerId, who.partnerId), eq(webhooks.legacy, true), isNull(webhooks.deletedAt)),
      );
    return row ? toWebhookView(row) : undefined;
  }
}

function nameTaken(name: string): ApiError {
  return new ApiError(409, 'webhook_name_taken', `A webhook named "${name}" already exists in this tenant.`);
}
