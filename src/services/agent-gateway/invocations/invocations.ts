/**
 * Invocations of endpoints (spec 002 section E: `/invoke/v1`, "E. Bodies", "E. Invocation"): jobs
 * (`{title, description, input}`) and conversation turns (`{message}`), each acknowledged with 202
 * `{invocationId, status, statusUrl, eventsUrl}` (and `conversationId` on a conversation's first message), executed
 * as a run of the endpoint's target by Graphile Worker.
 *
 * States: `accepted` -> `dispatching` -> `running` (`waiting` while its run waits) -> `completed` | `failed` |
 * `cancelled` | `timed_out`, and `cancel_requested` between a cancel and the run's end. Every move is recorded in
 * the invocation's `history` and as an event of its stream. The timeout runs from acceptance by the injected clock
 * (the invocation sweep). A run's output is validated against the release's output schema: a breaking output ends
 * the invocation `failed` with code `output_schema_mismatch` and every issue.
 *
 * A turn's run gets the conversation's earlier turns as `history`, and a conversation's turns run one after another.
 *
 * Each submission is validated before it is accepted (the endpoint live and of the route's mode, the payload limit:
 * 413, the input schema: 400), inside the idempotency transaction, so a replay of an accepted request answers the
 * first answer even after the endpoint changed.
 */
import { and, asc, desc, eq, inArray, lt, lte, max, not, type SQL, sql } from 'drizzle-orm';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../../../platform/clock.ts';
import { type Db, NamedStatement, type Tx } from '../../../platform/database.ts';
import { ApiError, type FieldIssue, ValidationError } from '../../../platform/errors.ts';
import { claimKeySql, type IdempotencyStore } from '../../../platform/idempotency.ts';
import { prefixedHexId } from '../../../platform/ids.ts';
import { invalidState, notFound, schemaUnsupported } from '../agent-gateway-errors.ts';
import {
  type EndpointSettingsRecord,
  endpointConversations,
  endpointReleases,
  endpoints,
  type InvocationStatus,
  invocationEvents,
  invocations,
} from '../db/endpoints.ts';
import { runs } from '../db/schema.ts';
import {
  EndpointKeyService,
  type EndpointPrincipal,
  type EndpointRow,
  type EndpointService,
  type ReleaseRow,
  SchemaCompileError,
  validateAgainst,
} from '../endpoints/index.ts';
import type { OrchestrationService } from '../orchestration.ts';
import { insertRowSql, rowOf, selectColumns } from '../queries.ts';
import type { RunEngine, RunRow } from '../run-engine.ts';
import type { NewRunEvent } from '../run-events.ts';
import {
  appendInvocationEvents,
  appendRunAndInvocationEvents,
  type InvocationEventRow,
} from './invocation-events.ts';
import {
  DISPATCH_SHARDS,
  dispatchInvocationTask,
  drainDispatchesTask,
  invocationTimeoutTask,
} from './invocation-jobs.ts';

/** An invocation as stored (`agent_gateway.invocations`). */
export type InvocationRow = typeof invocations.$inferSelect;

/** Terminal invocation states. */
export const TERMINAL_INVOCATION: readonly InvocationStatus[] = [
  'completed',
  'failed',
  'cancelled',
  'timed_out',
];
/** Whether `s` is a terminal state (no move follows). */
export const isTerminalInvocation = (s: InvocationStatus) => TERMINAL_INVOCATION.includes(s);

/** The idempotency scope of an endpoint's invocations (keys of one endpoint never meet another's). */
const idempotencyScope = (endpointId: string) => `agent-gateway:invoke:${endpointId}`;

/** The most earlier turns a conversation turn's run gets as `history`. */
export const HISTORY_TURNS = 50;

/** Seconds after acceptance an invocation still `accepted` is queued for dispatch again by the sweep. */
export const REDISPATCH_AFTER_SECONDS = 60;

/** Idempotency records of invocations are kept 24 hours. */
const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** Live endpoints an instance keeps for job submissions (`InvocationService.liveEndpoints`). */
const LIVE_ENDPOINTS_CACHED = 1000;

/** Invocations a dispatch drain reads at a time. */
const DRAIN_BATCH = 50;

/** Full batches one drain job dispatches before it hands on to a successor job. */
const DRAIN_BATCHES_PER_RUN = 10;

/** Settings of the invocation layer. */
export interface InvocationSettings {
  /** The service's public base URL when URLs are absolute (`AGENT_GATEWAY_PUBLIC_URL` set), else undefined. */
  absoluteBase: string | undefined;
  /** Seconds the events of a finished invocation stay readable (then a cursor before them is 410). */
  eventRetentionSeconds: number;
}

/** 202 acknowledgement. */
export interface Acknowledgement {
  invocationId: string;
  status: InvocationStatus;
  statusUrl: string;
  eventsUrl: string;
  conversationId?: string;
}

/** A submission's request identity for idempotency. */
export interface IdempotencyInput {
  key: string;
  fingerprint: string;
}

function payloadTooLarge(size: number, limit: number, field: string): ApiError {
  return new ApiError(
    413,
    'payload_too_large',
    `The payload is ${size} bytes; this endpoint takes at most ${limit}.`,
    {
      details: { issues: [{ field, message: `is ${size} bytes; the limit is ${limit} bytes` }], limit, size },
    },
  );
}

/** The run target of a release. */
function targetOf(settings: EndpointSettingsRecord) {
  return settings.targetType === 'orchestration_revision'
    ? {
        type: 'orchestration' as const,
        id: settings.targetId,
        revision: settings.targetRevision ?? undefined,
      }
    : { type: settings.targetType, id: settings.targetId };
}

type NewInvocationEvent = Omit<InvocationEventRow, 'id' | 'createdAt'>;

/** The run-event fields an invocation's `progress` event carries (the rest stays on the run's own events). */
const PROGRESS_FIELDS = [
  'nodeType',
  'attempt',
  'agentId',
  'index',
  'approvalId',
  'decision',
  'dueAt',
  'signal',
  'childRunId',
  'executionId',
] as const;

/** The database's clock (`now()`: the transaction's start), by which Graphile Worker runs scheduled jobs. */
async function databaseNow(tx: Tx): Promise<Date> {
  const result = await tx.execute(sql`select now() as now`);
  return new Date((result.rows[0] as { now: Date | string }).now);
}

/** The invocation locked with its release's settings and its endpoint's scope (the dispatch). */
const lockForDispatchStatement = new NamedStatement<Record<string, unknown>>(
  'agent_gateway_invocation_lock_for_dispatch',
  sql`select ${selectColumns(invocations, 'i', 'i_')}, r.settings as settings, e.tenant_id as tenant,
      e.namespace_id as namespace
    from ${invocations} i join ${endpointReleases} r on r.id = i.release_id join ${endpoints} e on e.id = i.endpoint_id
    where i.id = ${sql.placeholder('id')} for update of i`,
);

/** The invocation of a run, locked, with its release's settings (the run observers). */
const lockByRunStatement = new NamedStatement<Record<string, unknown>>(
  'agent_gateway_invocation_lock_by_run',
  sql`select ${selectColumns(invocations, 'i', 'i_')}, r.settings as settings
    from ${invocations} i join ${endpointReleases} r on r.id = i.release_id
    where i.run_id = ${sql.placeholder('runId')} for update of i`,
);

const acceptInsert = insertRowSql(invocations);

/**
 * The columns of an invocation accepted at `now` on `release`, besides what it was asked: status `accepted` with its
 * first move in the history, nothing done yet, and the deadline `now` + the release's `timeoutSeconds`.
 */
function acceptedAt(now: Date, release: ReleaseRow) {
  return {
    status: 'accepted' as const,
    result: null,
    error: null,
    runId: null,
    deadlineAt: new Date(now.getTime() + release.settings.timeoutSeconds * 1000),
    createdAt: now,
    updatedAt: now,
    finishedAt: null,
    eventsPrunedThrough: 0,
    history: [{ status: 'accepted' as const, at: now.toISOString() }],
  };
}

/**
 * An accepted invocation and its dispatch job in one prepared statement (the job commits with the row): the job as
 * `dispatchInvocationTask.enqueue(tx, {invocationId}, {jobKey: 'invocation:<id>'})` adds it, written in SQL so the
 * statement text is fixed (the payload `{invocationId}` of an id this service made matches the task's schema).
 */
const acceptStatement = new NamedStatement<never>(
  'agent_gateway_invocation_accept',
  sql`with inserted as (${acceptInsert.sql} returning id)
    select graphile_worker.add_job(
      identifier => ${dispatchInvocationTask.name},
      payload => json_build_object('invocationId', inserted.id),
      job_key => ${`${dispatchInvocationTask.name}:invocation:`} || inserted.id,
      job_key_mode => 'replace'
    ) from inserted`,
);

/** The advisory lock space of the dispatch drain (two-key form: this key and the shard). */
const DRAIN_LOCK = sql`hashtext('agent_gateway:dispatch-drain')`;

/** The shard of an invocation id (SQL; {@link DISPATCH_SHARDS}). */
const shardOf = (id: SQL) => sql`(hashtext(${id}) & 2147483647) % ${sql.raw(String(DISPATCH_SHARDS))}`;

/**
 * A job submission in one statement (no transaction): the key's claim (the platform's rule, `claimKeySql`), guarded by
 * the endpoint being still live on the release the job was checked against, then the invocation and the check that
 * its shard's drain job will see it (`ensure_invocation_drain`, migration 0006: nothing is written to the job queue
 * while that job waits) only with the claimed row. `claimed` is 0 when nothing was written.
 */
const submitStatement = new NamedStatement<{ claimed: number }>(
  'agent_gateway_invocation_submit',
  sql`with claimed as (${claimKeySql(
    sql`exists (select 1 from ${endpoints} e where e.id = ${sql.placeholder('endpointId')}
      and e.status <> 'disabled' and e.current_release_id = ${sql.placeholder('releaseId')})`,
  )}),
    inserted as (${acceptInsert.selectSql} from claimed returning id),
    queued as (select agent_gateway.ensure_invocation_drain(
      ${drainDispatchesTask.name}, ${`${drainDispatchesTask.name}:shard:`} || shard.n, ${DRAIN_LOCK}, shard.n
    ) from inserted, lateral (select ${shardOf(sql`inserted.id`)} as n) shard)
    select (select count(*) from queued)::int as claimed`,
);

/** Writes an invocation's moves: status, times, outcome, run and history. */
const saveInvocationStatement = new NamedStatement<never>(
  'agent_gateway_invocation_save',
  sql`update ${invocations} set status = ${sql.placeholder('status')},
      updated_at = ${sql.placeholder('updatedAt')}::timestamptz,
      finished_at = ${sql.placeholder('finishedAt')}::timestamptz,
      result = ${sql.placeholder('result')}::jsonb, error = ${sql.placeholder('error')}::jsonb,
      run_id = ${sql.placeholder('runId')}, history = ${sql.placeholder('history')}::jsonb
    where id = ${sql.placeholder('id')}`,
);

/** Jobs, conversations and turns; the status view; cancel; the run observer; the sweep. */
export class InvocationService {
  /** Moves made in memory and not yet written, by the row they made ({@link applyMove}, {@link save}). */
  private readonly movesOf = new WeakMap<InvocationRow, NewInvocationEvent[]>();
  /** Stream events of written moves, by transaction, appended last ({@link flushEvents}). */
  private readonly pendingEvents = new WeakMap<Tx, NewInvocationEvent[]>();
  /** Transactions of dispatches in progress: they settle their invocation themselves (the observers skip it). */
  private readonly dispatching = new WeakSet<Tx>();
  /**
   * Live endpoints with their current release as last read on this instance, by endpoint id, for job submissions with
   * an endpoint key ({@link keySpaceOf}). Never trusted alone: the submission statement accepts only while the
   * endpoint is still live on that release (a release is immutable), and any refusal or a failed guard is decided
   * again on a fresh read in a transaction (and drops the entry).
   */
  private readonly liveEndpoints = new LRUCache<string, { endpoint: EndpointRow; release: ReleaseRow }>({
    max: LIVE_ENDPOINTS_CACHED,
  });

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly endpoints: EndpointService,
    private readonly orchestration: OrchestrationService,
    private readonly engine: RunEngine,
    private readonly idempotency: IdempotencyStore,
    private readonly settings: InvocationSettings,
  ) {}

  /** `statusUrl` of an invocation: relative, or absolute under the public URL setting. */
  statusUrl(id: string): string {
    return `${this.settings.absoluteBase ?? ''}/invoke/v1/invocations/${id}`;
  }

  /** `eventsUrl`: a job's stream, or the conversation's stream keeping the turn's `invocationId`. */
  eventsUrl(row: Pick<InvocationRow, 'id' | 'conversationId'>): string {
    const base = this.settings.absoluteBase ?? '';
    return row.conversationId
      ? `${base}/invoke/v1/conversations/${row.conversationId}/events?invocationId=${row.id}`
      : `${base}/invoke/v1/invocations/${row.id}/events`;
  }

  private ack(
    row: Pick<InvocationRow, 'id' | 'status' | 'conversationId'>,
    withConversation: boolean,
  ): Acknowledgement {
    return {
      invocationId: row.id,
      status: row.status,
      statusUrl: this.statusUrl(row.id),
      eventsUrl: this.eventsUrl(row),
      ...(withConversation && row.conversationId ? { conversationId: row.conversationId } : {}),
    };
  }

  /**
   * The endpoint whose key space a submission under `slug` uses, read without any check: an endpoint key's own
   * endpoint (undefined when it is gone), or the endpoint of that slug in a platform token's scope. Whether the
   * caller may invoke it, and whether it takes new work, is {@link admitted}'s decision, made after a replay of the
   * key's first answer had its chance (a retry of an accepted request replays even when a new one would be refused).
   * @throws ApiError 404 when a platform token's scope has no endpoint `slug` (there is no key space to look in).
   */
  private async keySpaceOf(principal: EndpointPrincipal, slug: string, cached = false) {
    if (principal.kind === 'endpoint_key') {
      const targetId = principal.endpointId!;
      const known = cached ? this.liveEndpoints.get(targetId) : undefined;
      if (known) return { targetId, found: known };
      const found = await this.endpoints.withRelease(targetId);
      if (cached && found?.release && found.endpoint.status !== 'disabled')
        this.liveEndpoints.set(targetId, { endpoint: found.endpoint, release: found.release });
      return { targetId, found };
    }
    const found = await this.endpoints.liveBySlug(principal.scope, slug);
    if (!found) throw notFound('endpoint', slug);
    return { targetId: found.endpoint.id, found };
  }

  /** Checks that the endpoint takes new work of `mode` and that `value` fits the release's limit and schema. */
  private async admit(
    tx: Tx,
    endpointId: string,
    mode: 'job' | 'conversation',
    value: unknown,
    field: string,
    caller?: { principal: EndpointPrincipal; slug: string },
  ): Promise<{ endpoint: EndpointRow; release: ReleaseRow }> {
    const found = await this.endpoints.withRelease(endpointId, tx);
    return this.admitted(found, endpointId, mode, value, field, caller);
  }

  /** {@link admit} on an endpoint read already. */
  private admitted(
    found: { endpoint: EndpointRow; release: ReleaseRow | null } | undefined,
    endpointId: string,
    mode: 'job' | 'conversation',
    value: unknown,
    field: string,
    caller?: { principal: EndpointPrincipal; slug: string },
  ): { endpoint: EndpointRow; release: ReleaseRow } {
    if (!found?.release) throw notFound('endpoint', caller?.slug ?? endpointId);
    const { endpoint, release } = found;
    if (caller) {
      // A key's own endpoint, read here in the transaction: it must be the one the path names.
      if (endpoint.slug !== caller.slug)
        EndpointKeyService.authorize(caller.principal, { ...endpoint, id: '' }, 'api_key');
      EndpointKeyService.authorize(caller.principal, endpoint, release.settings.authPolicy.type);
    }
    // Spec E "Errors": a problem of id, scope or state is a 404 (409 is for version and idempotency conflicts).
    if (endpoint.status === 'disabled')
      throw new ApiError(
        404,
        'endpoint_disabled',
        `Endpoint '${endpoint.slug}' is disabled and takes no new work.`,
      );
    const settings = release.settings;
    if (settings.invocationMode !== mode)
      throw new ApiError(
        400,
        'wrong_invocation_mode',
        `Endpoint '${endpoint.slug}' is a ${settings.invocationMode} endpoint; use its ${settings.invocationMode === 'job' ? 'jobs' : 'conversations'} route.`,
      );
    const size = Buffer.byteLength(JSON.stringify(value));
    if (size > settings.maxPayloadBytes)
      throw payloadTooLarge(size, settings.maxPayloadBytes, `body.${field}`);
    let issues: FieldIssue[];
    try {
      issues = validateAgainst(`in:${release.id}`, settings.inputSchema, value, 'body', field);
    } catch (err) {
      // A release saved before a rule existed (publication refuses such schemas now): the endpoint's defect, told.
      if (!(err instanceof SchemaCompileError)) throw err;
      throw schemaUnsupported(
        `Endpoint '${endpoint.slug}' cannot check its input: its input schema does not compile (${err.message}). Its editors must publish a release without it.`,
        [{ field: 'inputSchema', message: err.message }],
      );
    }
    if (issues.length > 0)
      throw new ValidationError(issues, `The ${field} does not match the endpoint's input schema.`);
    return { endpoint, release };
  }

  /**
   * Inserts an accepted invocation (id `id`) and its dispatch job in one statement (the job commits with the row).
   * @returns what the acknowledgement shows of it.
   */
  private async insert(
    tx: Tx,
    endpoint: EndpointRow,
    release: ReleaseRow,
    values: Pick<
      InvocationRow,
      'id' | 'kind' | 'conversationId' | 'turn' | 'title' | 'description' | 'input'
    >,
  ): Promise<Pick<InvocationRow, 'id' | 'status' | 'conversationId'>> {
    const now = this.clock.now();
    await acceptStatement.rows(
      tx,
      acceptInsert.values({
        endpointId: endpoint.id,
        releaseId: release.id,
        ...values,
        ...acceptedAt(now, release),
      }),
    );
    // A turn may wait (accepted) behind its conversation's earlier turn: its timeout job starts at acceptance. A
    // job's starts with its dispatch, unless it ended there (most do: no job for them).
    if (values.kind === 'turn')
      await this.scheduleTimeout(tx, {
        id: values.id,
        deadlineAt: new Date(now.getTime() + release.settings.timeoutSeconds * 1000),
      });
    // Its `accepted` event is written with its first move (the submission stays off the event lock).
    return { id: values.id, status: 'accepted', conversationId: values.conversationId };
  }

  private async once(
    endpointId: string,
    idem: IdempotencyInput,
    work: (tx: Tx) => Promise<{ status: number; body: unknown }>,
  ) {
    return this.idempotency.run(
      {
        scope: idempotencyScope(endpointId),
        key: idem.key,
        fingerprint: idem.fingerprint,
        ttlMs: IDEMPOTENCY_TTL_MS,
      },
      work,
    );
  }

  /**
   * The fast replay of an endpoint key's request: the stored answer of its key in one read (the fingerprint holds
   * the path, so a record under the key's own endpoint matches only requests that endpoint accepted).
   * @throws ApiError 409 `idempotency_key_reused`.
   */
  private async replayed(principal: EndpointPrincipal, idem: IdempotencyInput) {
    if (principal.kind !== 'endpoint_key') return undefined;
    return this.idempotency.recorded({
      scope: idempotencyScope(principal.endpointId!),
      key: idem.key,
      fingerprint: idem.fingerprint,
    });
  }

  /**
   * Submits a job (`POST /invoke/v1/endpoints/{slug}/jobs`).
   * @throws ApiError 400 (input schema, mode), 401, 404 (also `endpoint_disabled`), 409 `idempotency_key_reused`, 413.
   */
  async submitJob(
    principal: EndpointPrincipal,
    slug: string,
    body: { title: string; description?: string; input: unknown },
    idem: IdempotencyInput,
  ) {
    // A replay is answered from the key's record alone (one read); a new job reads its endpoint next.
    const fast = await this.replayed(principal, idem);
    if (fast) return fast;
    const caller = { principal, slug };
    const { targetId, found } = await this.keySpaceOf(principal, slug, true);
    // The invocation's id is made here, so the acknowledgement is known before the work and is recorded with the
    // key's claim (`IdempotencyStore.runKnown`, `claimKeySql`).
    const id = prefixedHexId('inv');
    const response = { status: 202, body: this.ack({ id, status: 'accepted', conversationId: null }, false) };
    const params = {
      scope: idempotencyScope(targetId),
      key: idem.key,
      fingerprint: idem.fingerprint,
      ttlMs: IDEMPOTENCY_TTL_MS,
    };
    // What the job asks, as both paths below write it.
    const asked = {
      id,
      kind: 'job' as const,
      conversationId: null,
      turn: null,
      title: body.title,
      description: body.description ?? null,
      input: body.input as object,
    };
    // The transaction that decides a request the fast path could not: it replays the key's first answer when there
    // is one (committed, or in flight: its claim waits for it), else checks the request again and accepts it.
    const decide = () => {
      this.liveEndpoints.delete(targetId);
      return this.idempotency.runKnown(params, response, async (tx) => {
        const { endpoint, release } = await this.admit(tx, targetId, 'job', body.input, 'input', caller);
        await this.insert(tx, endpoint, release, asked);
      });
    };
    // Checked before anything is written; then one statement claims the key and accepts the job while the endpoint
    // is still on the release it was checked against (nothing is written otherwise). A refusal is not the answer
    // yet: a retry of an accepted request (same key and body) replays its first answer even when the endpoint was
    // disabled or changed since (and a platform token's retry has no fast path above).
    let admitted: { endpoint: EndpointRow; release: ReleaseRow };
    try {
      admitted = this.admitted(found, targetId, 'job', body.input, 'input', caller);
    } catch (err) {
      if (err instanceof ApiError) return decide();
      throw err;
    }
    const { endpoint, release } = admitted;
    const now = this.clock.now();
    const [done] = await submitStatement.rows(this.db, {
      ...this.idempotency.claimValues(params, response),
      endpointId: endpoint.id,
      releaseId: release.id,
      ...acceptInsert.values({
        ...asked,
        endpointId: endpoint.id,
        releaseId: release.id,
        ...acceptedAt(now, release),
      }),
    });
    if (done!.claimed === 1) return { replayed: false, response };
    // The key was taken (its first request committed meanwhile, or was in flight and waited for), or the endpoint
    // moved on since it was read: the transaction below decides, as for any request.
    return decide();
  }

  /** Starts a conversation with its first message. @throws as {@link submitJob}. */
  async startConversation(
    principal: EndpointPrincipal,
    slug: string,
    message: string,
    idem: IdempotencyInput,
  ) {
    const fast = await this.replayed(principal, idem);
    if (fast) return fast;
    // Checked inside the transaction, after the key's claim: a retry of an accepted request replays its first
    // answer even when a new request would be refused (the endpoint disabled or changed since).
    // An endpoint key names its endpoint (one read less on the hot path).
    const caller = { principal, slug };
    const targetId =
      principal.kind === 'endpoint_key'
        ? principal.endpointId!
        : (await this.keySpaceOf(principal, slug)).targetId;
    return this.once(targetId, idem, async (tx) => {
      const { endpoint, release } = await this.admit(
        tx,
        targetId,
        'conversation',
        message,
        'message',
        caller,
      );
      const now = this.clock.now();
      const [conversation] = await tx
        .insert(endpointConversations)
        .values({
          id: prefixedHexId('cnv'),
          endpointId: endpoint.id,
          turnCount: 1,
          createdAt: now,
          updatedAt: now,
        })
        .returning();
      const row = await this.insert(tx, endpoint, release, {
        id: prefixedHexId('inv'),
        kind: 'turn',
        conversationId: conversation!.id,
        turn: 1,
        title: null,
        description: null,
        input: message,
      });
      return { status: 202, body: this.ack(row, true) };
    });
  }

  /** The conversation `id` the credential may use. @throws ApiError 401, 404. */
  async conversationFor(principal: EndpointPrincipal, id: string) {
    const [conversation] = await this.db
      .select()
      .from(endpointConversations)
      .where(eq(endpointConversations.id, id));
    const found = conversation ? await this.endpoints.withRelease(conversation.endpointId) : undefined;
    if (!conversation || !found?.release) throw notFound('conversation', id);
    try {
      EndpointKeyService.authorize(principal, found.endpoint, found.release.settings.authPolicy.type);
    } catch (err) {
      // Another endpoint's or scope's conversation is not revealed.
      if (err instanceof ApiError && err.code === 'unauthenticated') throw notFound('conversation', id);
      throw err;
    }
    return { conversation, endpoint: found.endpoint };
  }

  /** A later turn of a conversation (a new `Idempotency-Key`). @throws as {@link submitJob}. */
  async sendTurn(
    principal: EndpointPrincipal,
    conversationId: string,
    message: string,
    idem: IdempotencyInput,
  ) {
    const fast = await this.replayed(principal, idem);
    if (fast) return fast;
    const { endpoint: target } = await this.conversationFor(principal, conversationId);
    return this.once(target.id, idem, async (tx) => {
      const { endpoint, release } = await this.admit(tx, target.id, 'conversation', message, 'message');
      const [conversation] = await tx
        .update(endpointConversations)
        .set({ turnCount: sql`${endpointConversations.turnCount} + 1`, updatedAt: this.clock.now() })
        .where(eq(endpointConversations.id, conversationId))
        .returning();
      const row = await this.insert(tx, endpoint, release, {
        id: prefixedHexId('inv'),
        kind: 'turn',
        conversationId,
        turn: conversation!.turnCount,
        title: null,
        description: null,
        input: message,
      });
      return { status: 202, body: this.ack(row, false) };
    });
  }

  /** An invocation the credential may see. @throws ApiError 404 (also another endpoint's or scope's). */
  async rowFor(principal: EndpointPrincipal, id: string): Promise<InvocationRow> {
    const [row] = await this.db.select().from(invocations).where(eq(invocations.id, id));
    const found = row ? await this.endpoints.withRelease(row.endpointId) : undefined;
    if (!row || !found?.release) throw notFound('invocation', id);
    const ownScope =
      principal.scope.tenant === found.endpoint.tenantId &&
      principal.scope.namespace === found.endpoint.namespaceId;
    // A key sees its own endpoint's invocations; a platform token those of its scope's `platform` endpoints.
    const allowed =
      principal.kind === 'endpoint_key'
        ? principal.endpointId === row.endpointId
        : ownScope && found.release.settings.authPolicy.type === 'platform';
    if (!allowed) throw notFound('invocation', id);
    return row;
  }

  /** The status view (`statusUrl`): state, history, and `result` shaped by the output schema once completed. */
  view(row: InvocationRow) {
    return {
      invocation: {
        id: row.id,
        endpointId: row.endpointId,
        releaseId: row.releaseId,
        kind: row.kind,
        conversationId: row.conversationId,
        turn: row.turn,
        status: row.status,
        title: row.title,
        description: row.description,
        input: row.input,
        result: row.result ?? null,
        error: row.error ?? null,
        runId: row.runId,
        history: row.history,
        createdAt: row.createdAt.toISOString(),
        updatedAt: row.updatedAt.toISOString(),
        deadlineAt: row.deadlineAt.toISOString(),
        finishedAt: row.finishedAt ? row.finishedAt.toISOString() : null,
      },
      statusUrl: this.statusUrl(row.id),
      eventsUrl: this.eventsUrl(row),
    };
  }

  /**
   * A move of a row in memory: its status, history and the fields the move sets, and its stream events (the first
   * move also carries the `accepted` event: submissions write none). {@link save} writes a row's moves.
   */
  private applyMove(
    row: InvocationRow,
    to: InvocationStatus,
    extra: {
      result?: unknown;
      error?: { code: string; message: string; details?: unknown };
      runId?: string;
    } = {},
  ): InvocationRow {
    const now = this.clock.now();
    const reason = extra.error?.message;
    const events = this.movesOf.get(row) ?? [];
    if (row.status === 'accepted')
      events.push({
        invocationId: row.id,
        conversationId: row.conversationId,
        type: 'status',
        data: { invocationId: row.id, status: 'accepted', at: row.createdAt.toISOString() },
      });
    events.push({
      invocationId: row.id,
      conversationId: row.conversationId,
      type: 'status',
      data: {
        invocationId: row.id,
        status: to,
        at: now.toISOString(),
        ...(extra.error ? { error: { code: extra.error.code, message: extra.error.message } } : {}),
      },
    });
    const moved: InvocationRow = {
      ...row,
      status: to,
      updatedAt: now,
      ...(isTerminalInvocation(to) ? { finishedAt: now } : {}),
      ...(extra.result !== undefined ? { result: extra.result as object } : {}),
      ...(extra.error ? { error: extra.error } : {}),
      ...(extra.runId ? { runId: extra.runId } : {}),
      history: [...row.history, { status: to, at: now.toISOString(), ...(reason ? { reason } : {}) }],
    };
    this.movesOf.set(moved, events);
    return moved;
  }

  /**
   * Writes the moves {@link applyMove} made of a locked row in one statement and queues their events for
   * {@link flushEvents} (the end of the transaction). A turn that ended dispatches its conversation's next turn.
   */
  private async save(tx: Tx, moved: InvocationRow): Promise<InvocationRow> {
    const events = this.movesOf.get(moved);
    if (!events) return moved;
    this.movesOf.delete(moved);
    if (moved.kind === 'turn' && isTerminalInvocation(moved.status)) await this.dispatchNextTurn(tx, moved);
    await saveInvocationStatement.rows(tx, {
      id: moved.id,
      status: moved.status,
      updatedAt: moved.updatedAt.toISOString(),
      finishedAt: moved.finishedAt ? moved.finishedAt.toISOString() : null,
      result: moved.result === null || moved.result === undefined ? null : JSON.stringify(moved.result),
      error: moved.error ? JSON.stringify(moved.error) : null,
      runId: moved.runId,
      history: JSON.stringify(moved.history),
    });
    const pending = this.pendingEvents.get(tx);
    if (pending) pending.push(...events);
    else this.pendingEvents.set(tx, [...events]);
    return moved;
  }

  /** One move of a locked row, written ({@link applyMove} then {@link save}). */
  private async move(
    tx: Tx,
    row: InvocationRow,
    to: InvocationStatus,
    extra: Parameters<InvocationService['applyMove']>[2] = {},
  ): Promise<InvocationRow> {
    return this.save(tx, this.applyMove(row, to, extra));
  }

  /**
   * The run-events hook (spec E "Event streams": invocation progress is delivered on `eventsUrl`): each event of a
   * run that executes an invocation (or of its sub-runs) is queued as that invocation's `progress` event, in order,
   * before the status move the run's change makes. Its data names the run event and where it happened (`type`,
   * `runId`, `stepId`, `nodeId`, `at`) with the step's kind and attempt, the agent, the approval, timer, signal,
   * sub-run or execution it waits for, and a failure's code and message; never inputs, outputs, tool arguments or
   * results, texts or user ids (the result is read from the status view).
   */
  queueProgress(tx: Tx, events: readonly NewRunEvent[], runs: ReadonlyMap<string, { row: RunRow }>): void {
    const at = this.clock.now().toISOString();
    const queued: NewInvocationEvent[] = [];
    for (const event of events) {
      const run = runs.get(event.runId)?.row;
      if (!run?.invocationId) continue;
      const data: Record<string, unknown> = {
        invocationId: run.invocationId,
        type: event.type,
        runId: event.runId,
        stepId: event.stepId ?? null,
        nodeId: event.nodeId ?? null,
        at,
      };
      for (const field of PROGRESS_FIELDS)
        if (event.data[field] !== undefined) data[field] = event.data[field];
      const error = event.data.error as { code?: unknown; message?: unknown } | null | undefined;
      if (error && typeof error === 'object') data.error = { code: error.code, message: error.message };
      queued.push({
        invocationId: run.invocationId,
        conversationId: run.invocationConversationId,
        type: 'progress',
        data,
      });
    }
    if (queued.length === 0) return;
    const pending = this.pendingEvents.get(tx);
    if (pending) pending.push(...queued);
    else this.pendingEvents.set(tx, queued);
  }

  /**
   * Appends the stream events of the moves `tx` wrote, under the event-log lock: call it last in the transaction
   * (the run engine calls it at the end of its flush, the other writers before they commit; a dispatch appends its
   * own at its end).
   */
  async flushEvents(tx: Tx, fromEngine = false): Promise<void> {
    if (fromEngine && this.dispatching.has(tx)) return;
    const events = this.pendingEvents.get(tx);
    if (!events || events.length === 0) return;
    this.pendingEvents.delete(tx);
    await appendInvocationEvents(tx, events, this.clock.now());
  }

  private async lock(tx: Tx, id: string) {
    const [row] = await tx.select().from(invocations).where(eq(invocations.id, id)).for('update');
    return row;
  }

  /**
   * The dispatch job: an `accepted` invocation becomes `dispatching`, its run starts, and it is `running` (or ends
   * at once when the target cannot start, or when its run already ended). Instant agents (no I/O) run in this
   * transaction ({@link RunEngine.start} `inline`), so such a job ends here: accepted, dispatching, running and its
   * outcome commit together, each move recorded, in one write of the row and one append of its events.
   */
  async dispatch(id: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const [found] = await lockForDispatchStatement.rows(tx, { id });
      const locked = found ? rowOf(invocations, found, 'i_') : undefined;
      if (!found || locked?.status !== 'accepted') return;
      let row = locked;
      if (row.deadlineAt <= this.clock.now()) {
        await this.move(tx, row, 'timed_out', {
          error: { code: 'timed_out', message: 'The endpoint timeout passed before dispatch.' },
        });
        await this.flushEvents(tx);
        return;
      }
      const settings = found.settings as EndpointSettingsRecord;
      const scope = { tenant: found.tenant as string, namespace: found.namespace as string };
      let input: Record<string, unknown>;
      if (row.kind === 'job')
        input = {
          title: row.title,
          description: row.description,
          message: row.description ?? row.title,
          input: row.input,
        };
      else {
        // A conversation's turns run one after another: a turn whose predecessor is still live waits (accepted);
        // the predecessor's end dispatches it (see `save`).
        const history = await this.conversationHistory(tx, row);
        if (!history) return;
        input = { message: row.input, conversationId: row.conversationId, turn: row.turn, history };
      }
      // The target is resolved before anything is written: a target that cannot start (missing, unpublished) ends
      // the invocation `failed`, and nothing else of the run is written.
      let plan: Awaited<ReturnType<OrchestrationService['runPlan']>>;
      try {
        plan = await this.orchestration.runPlan(scope, targetOf(settings), tx);
      } catch (err) {
        if (!(err instanceof ApiError) || err.status >= 500) throw err;
        row = this.applyMove(row, 'dispatching');
        await this.save(
          tx,
          this.applyMove(row, 'failed', { error: { code: 'target_unavailable', message: err.message } }),
        );
        await this.flushEvents(tx);
        return;
      }
      // This transaction settles its own invocation when the run ends inside it: the run observer leaves it alone,
      // and its progress events wait here, to follow the `running` move.
      this.dispatching.add(tx);
      let run: RunRow;
      const runEvents: NewRunEvent[] = [];
      try {
        run = await this.engine.start(
          tx,
          {
            scope,
            ...plan,
            input,
            createdBy: null,
            invocationId: row.id,
            invocationConversationId: row.conversationId ?? undefined,
          },
          { inline: true, deferEvents: runEvents },
        );
      } finally {
        this.dispatching.delete(tx);
      }
      const progress = this.pendingEvents.get(tx) ?? [];
      this.pendingEvents.delete(tx);
      row = this.applyMove(row, 'dispatching');
      row = this.applyMove(row, 'running', { runId: run.id });
      this.movesOf.get(row)!.push(...progress);
      if (run.status === 'waiting') row = this.applyMove(row, 'waiting');
      if (['completed', 'failed', 'cancelled'].includes(run.status)) row = this.outcome(row, run, settings);
      await this.save(tx, row);
      // A job left running gets its timeout job (a turn got it at acceptance).
      if (row.kind === 'job' && !isTerminalInvocation(row.status)) await this.scheduleTimeout(tx, row);
      // Both logs in one statement, the last before the commit: the event-log lock is held for the least time.
      const events = this.pendingEvents.get(tx) ?? [];
      this.pendingEvents.delete(tx);
      await appendRunAndInvocationEvents(tx, runEvents, events, this.clock.now());
    });
  }

  /**
   * The dispatch drain of `shard` (the job {@link drainDispatchesTask}): each accepted job of the shard, oldest first,
   * is dispatched ({@link dispatch}, its own transaction), read in batches of {@link DRAIN_BATCH} under the shard's
   * lock (exclusive, so a submission still committing is waited for and seen). A dispatch that throws is logged by
   * `onError` and queued on its own job unless it has one (its retries and backoff apply to it alone); the drain goes
   * on. After {@link DRAIN_BATCHES_PER_RUN} full batches the drain queues its successor and ends, so one job never
   * holds a worker slot for long (and a stop is not held up).
   */
  async drainDispatches(shard: number, onError: (err: unknown, invocationId: string) => void): Promise<void> {
    let after: { createdAt: Date; id: string } | undefined;
    for (let batches = 0; batches < DRAIN_BATCHES_PER_RUN; batches++) {
      const cursor = after;
      const batch = await this.db.transaction(async (tx) => {
        await tx.execute(sql`select pg_advisory_xact_lock(${DRAIN_LOCK}, ${shard}::int)`);
        return tx
          .select({ id: invocations.id, createdAt: invocations.createdAt })
          .from(invocations)
          .where(
            and(
              eq(invocations.status, 'accepted'),
              eq(invocations.kind, 'job'),
              sql`${shardOf(sql`${invocations.id}`)} = ${shard}::int`,
              cursor
                ? sql`(${invocations.createdAt}, ${invocations.id}) > (${cursor.createdAt.toISOString()}::timestamptz, ${cursor.id})`
                : undefined,
            ),
          )
          .orderBy(asc(invocations.createdAt), asc(invocations.id))
          .limit(DRAIN_BATCH);
      });
      for (const { id } of batch)
        try {
          await this.dispatch(id);
        } catch (err) {
          onError(err, id);
          // Added only when it has none: a later drain never resets the backoff of a dispatch that keeps failing.
          await dispatchInvocationTask.enqueue(
            this.db,
            { invocationId: id },
            { jobKey: `invocation:${id}`, jobKeyMode: 'unsafe_dedupe' },
          );
        }
      if (batch.length < DRAIN_BATCH) return;
      after = batch.at(-1);
    }
    // More may wait: a successor (the running job's key is detached from it, so this adds a new job).
    await drainDispatchesTask.enqueue(this.db, { shard }, { jobKey: `shard:${shard}` });
  }

  /**
   * The earlier turns of a turn's conversation, oldest first, at most the last {@link HISTORY_TURNS}:
   * `{turn, message, status, result}` (`result` null unless completed). Undefined while an earlier turn is live.
   */
  private async conversationHistory(tx: Tx, row: InvocationRow) {
    const earlier = and(eq(invocations.conversationId, row.conversationId!), lt(invocations.turn, row.turn!));
    const [live] = await tx
      .select({ id: invocations.id })
      .from(invocations)
      .where(and(earlier, not(inArray(invocations.status, [...TERMINAL_INVOCATION]))))
      .limit(1);
    if (live) return undefined;
    const turns = await tx
      .select({
        turn: invocations.turn,
        message: invocations.input,
        status: invocations.status,
        result: invocations.result,
      })
      .from(invocations)
      .where(earlier)
      .orderBy(desc(invocations.turn))
      .limit(HISTORY_TURNS);
    return turns.reverse().map((t) => ({ ...t, result: t.status === 'completed' ? t.result : null }));
  }

  /** Queues the dispatch of a conversation's next waiting turn once `row` (a turn) has ended. */
  private async dispatchNextTurn(tx: Tx, row: InvocationRow): Promise<void> {
    const [next] = await tx
      .select({ id: invocations.id })
      .from(invocations)
      .where(
        and(
          eq(invocations.conversationId, row.conversationId!),
          eq(invocations.status, 'accepted'),
          sql`${invocations.turn} > ${row.turn}`,
        ),
      )
      .orderBy(asc(invocations.turn))
      .limit(1);
    if (next)
      await dispatchInvocationTask.enqueue(
        tx,
        { invocationId: next.id },
        { jobKey: `invocation:${next.id}` },
      );
  }

  /** The run status observer: a live run's `running` <-> `waiting` moves are its invocation's moves. */
  async onRunStatusChanged(tx: Tx, run: RunRow): Promise<void> {
    if (run.status !== 'running' && run.status !== 'waiting') return;
    if (this.dispatching.has(tx)) return;
    const [found] = await lockByRunStatement.rows(tx, { runId: run.id });
    const row = found ? rowOf(invocations, found, 'i_') : undefined;
    if (row && (row.status === 'running' || row.status === 'waiting') && row.status !== run.status)
      await this.move(tx, row, run.status);
  }

  /** The run observer: a finished run ends its invocation (output validated against the output schema). */
  async onRunFinished(tx: Tx, run: RunRow): Promise<void> {
    if (this.dispatching.has(tx)) return;
    const [found] = await lockByRunStatement.rows(tx, { runId: run.id });
    const row = found ? rowOf(invocations, found, 'i_') : undefined;
    if (!row || isTerminalInvocation(row.status)) return;
    await this.save(tx, this.outcome(row, run, found!.settings as EndpointSettingsRecord));
  }

  /**
   * The move that ends a live invocation whose run finished (in memory; {@link save} writes it): `cancelled` when
   * the run was cancelled or a cancel was requested, `failed` with the run's error, `failed` with
   * `output_schema_mismatch` when the output breaks the release's output schema, else `completed` with the output.
   */
  private outcome(row: InvocationRow, run: RunRow, settings: EndpointSettingsRecord): InvocationRow {
    if (run.status === 'cancelled' || row.status === 'cancel_requested')
      return this.applyMove(row, 'cancelled', {
        error: { code: 'cancelled', message: 'The invocation was cancelled.' },
      });
    if (run.status === 'failed') {
      const error = (run.error as { code?: string; message?: string } | null) ?? {};
      return this.applyMove(row, 'failed', {
        error: { code: error.code ?? 'run_failed', message: error.message ?? 'The target failed.' },
      });
    }
    const output = run.output ?? null;
    let issues: FieldIssue[];
    try {
      issues = validateAgainst(`out:${row.releaseId}`, settings.outputSchema, output, 'result', '');
    } catch (err) {
      // An output schema that does not compile (a release saved before a rule existed) fails the invocation with
      // the reason; throwing here would fail the job and retry it forever.
      if (!(err instanceof SchemaCompileError)) throw err;
      return this.applyMove(row, 'failed', {
        error: {
          code: 'endpoint_schema_unsupported',
          message: `The endpoint's output schema does not compile, so the output cannot be checked: ${err.message}.`,
        },
      });
    }
    if (issues.length > 0)
      return this.applyMove(row, 'failed', {
        error: {
          code: 'output_schema_mismatch',
          message: `The target's output does not match the endpoint's output schema: ${issues
            .map((i) => `${i.field || '(root)'} ${i.message}`)
            .join('; ')}.`,
          details: { issues: issues.map((i) => ({ field: i.field, message: i.message })) },
        },
      });
    return this.applyMove(row, 'completed', { result: output });
  }

  /**
   * Cancels an invocation: one not yet running ends `cancelled` at once; a running one is `cancel_requested` until
   * its run is cancelled.
   * @throws ApiError 404; 409 `invalid_state` when it already ended.
   */
  async cancel(principal: EndpointPrincipal, id: string) {
    await this.rowFor(principal, id);
    const runToCancel = await this.db.transaction(async (tx) => {
      const row = (await this.lock(tx, id))!;
      if (isTerminalInvocation(row.status) || row.status === 'cancel_requested')
        throw invalidState(`Invocation '${id}' is already ${row.status}.`, { status: row.status });
      if (!row.runId) {
        await this.move(tx, row, 'cancelled', {
          error: { code: 'cancelled', message: 'Cancelled before it ran.' },
        });
        await this.flushEvents(tx);
        return undefined;
      }
      await this.move(tx, row, 'cancel_requested');
      await this.flushEvents(tx);
      return row;
    });
    if (runToCancel) await this.stopRun(runToCancel);
    const [row] = await this.db.select().from(invocations).where(eq(invocations.id, id));
    return this.view(row!);
  }

  private async stopRun(row: InvocationRow): Promise<void> {
    const endpoint = await this.endpoints.withRelease(row.endpointId);
    try {
      await this.engine.cancel(
        { tenant: endpoint!.endpoint.tenantId, namespace: endpoint!.endpoint.namespaceId },
        row.runId!,
        `invocation ${row.id}`,
      );
    } catch (err) {
      // The run ended meanwhile: its observer settled the invocation.
      if (!(err instanceof ApiError) || err.status >= 500) throw err;
    }
    // A cancel whose run was already over leaves cancel_requested: settle it.
    await this.db.transaction(async (tx) => {
      const locked = await this.lock(tx, row.id);
      if (locked?.status === 'cancel_requested')
        await this.move(tx, locked, 'cancelled', {
          error: { code: 'cancelled', message: 'The invocation was cancelled.' },
        });
      await this.flushEvents(tx);
    });
  }

  /**
   * Queues the invocation's timeout job (`agent-gateway:invocation-timeout`, job key `timeout:<id>`) to run when its
   * deadline comes: the time left on the injected clock, counted from the database's now (Graphile Worker runs jobs
   * by the database clock). Call it inside the transaction that leaves the invocation live.
   */
  private async scheduleTimeout(tx: Tx, row: Pick<InvocationRow, 'id' | 'deadlineAt'>): Promise<void> {
    const left = row.deadlineAt.getTime() - this.clock.now().getTime();
    const dbNow = await databaseNow(tx);
    await invocationTimeoutTask.enqueue(
      tx,
      { invocationId: row.id },
      { jobKey: `timeout:${row.id}`, runAt: new Date(dbNow.getTime() + Math.max(0, left)) },
    );
  }

  /**
   * The timeout job, and the sweep for each invocation past its deadline: a live invocation whose deadline passed
   * on the injected clock ends `timed_out` and its run is cancelled; one whose deadline is still ahead (the job ran
   * early: another clock) is looked at again when the time left has passed.
   * @returns what happened: `timed_out`, `not_due` (rescheduled) or `ended` (nothing to do).
   */
  async timeOutIfDue(id: string): Promise<'timed_out' | 'not_due' | 'ended'> {
    const outcome = await this.db.transaction(async (tx) => {
      const [found] = await lockForDispatchStatement.rows(tx, { id });
      const row = found ? rowOf(invocations, found, 'i_') : undefined;
      if (!row || isTerminalInvocation(row.status)) return { result: 'ended' as const };
      if (row.deadlineAt > this.clock.now()) {
        await this.scheduleTimeout(tx, row);
        return { result: 'not_due' as const };
      }
      const settings = found!.settings as EndpointSettingsRecord;
      const moved = await this.move(tx, row, 'timed_out', {
        error: { code: 'timed_out', message: `The endpoint timeout of ${settings.timeoutSeconds} s passed.` },
      });
      await this.flushEvents(tx);
      return {
        result: 'timed_out' as const,
        stop: moved.runId
          ? {
              runId: moved.runId,
              scope: { tenant: found!.tenant as string, namespace: found!.namespace as string },
            }
          : undefined,
      };
    });
    if (outcome.result === 'timed_out' && outcome.stop)
      await this.engine
        .cancel(outcome.stop.scope, outcome.stop.runId, `invocation ${id} (timed out)`)
        .catch((err: unknown) => {
          // The run ended meanwhile.
          if (!(err instanceof ApiError) || err.status >= 500) throw err;
        });
    return outcome.result;
  }

  /**
   * Cancels the live runs of invocations that were timed out or asked to cancel more than
   * {@link REDISPATCH_AFTER_SECONDS} ago (within the last day): a process that died between the commit that ended (or
   * cancelled) the invocation and its run's cancel left the run going. A cancel-requested invocation then ends
   * `cancelled` by its run's end (the run observer).
   * @returns how many runs it cancelled.
   */
  private async stopLeftRuns(now: Date): Promise<number> {
    const left = await this.db
      .select({
        id: invocations.id,
        runId: runs.id,
        tenant: runs.tenantId,
        namespace: runs.namespaceId,
      })
      .from(invocations)
      .innerJoin(runs, eq(runs.id, invocations.runId))
      .where(
        and(
          inArray(invocations.status, ['timed_out', 'cancel_requested']),
          sql`${invocations.deadlineAt} > ${new Date(now.getTime() - 24 * 60 * 60 * 1000)}`,
          lte(invocations.updatedAt, new Date(now.getTime() - REDISPATCH_AFTER_SECONDS * 1000)),
          inArray(runs.status, ['queued', 'running', 'waiting']),
        ),
      )
      .limit(100);
    let stopped = 0;
    for (const run of left) {
      try {
        await this.engine.cancel(
          { tenant: run.tenant, namespace: run.namespace },
          run.runId,
          `invocation ${run.id} (sweep)`,
        );
        stopped += 1;
      } catch (err) {
        // The run ended meanwhile.
        if (!(err instanceof ApiError) || err.status >= 500) throw err;
      }
    }
    return stopped;
  }

  /**
   * The invocation sweep (every minute, by the injected clock): invocations still `accepted`
   * {@link REDISPATCH_AFTER_SECONDS} after acceptance are queued for dispatch again (a worker that died while
   * dispatching); live invocations past their deadline end `timed_out` (their run is cancelled); the runs left
   * going by a timeout or cancel whose process died before it cancelled them are cancelled; and the events of
   * invocations finished more than the retention ago are deleted (a cursor before them is then 410).
   */
  async sweep(): Promise<{
    timedOut: number;
    prunedEvents: number;
    redispatched: number;
    stoppedRuns: number;
  }> {
    const now = this.clock.now();
    // A dispatch whose worker died keeps its Graphile job locked for hours: queue it again (the job key gives one
    // pending job; a dispatch that is merely slow holds the row lock, and the second finds it moved on).
    const stale = await this.db
      .select({ id: invocations.id })
      .from(invocations)
      .where(
        and(
          eq(invocations.status, 'accepted'),
          lte(invocations.createdAt, new Date(now.getTime() - REDISPATCH_AFTER_SECONDS * 1000)),
          sql`${invocations.deadlineAt} > ${now}`,
        ),
      )
      .limit(1000);
    for (const { id } of stale)
      await dispatchInvocationTask.enqueue(this.db, { invocationId: id }, { jobKey: `invocation:${id}` });
    const due = await this.db
      .select({ id: invocations.id })
      .from(invocations)
      .where(
        and(
          inArray(invocations.status, ['accepted', 'dispatching', 'running', 'waiting', 'cancel_requested']),
          lte(invocations.deadlineAt, now),
        ),
      )
      .limit(1000);
    let timedOut = 0;
    for (const { id } of due) if ((await this.timeOutIfDue(id)) === 'timed_out') timedOut += 1;
    const stoppedRuns = await this.stopLeftRuns(now);
    const before = new Date(now.getTime() - this.settings.eventRetentionSeconds * 1000);
    const prunedEvents = await this.db.transaction(async (tx) => {
      const old = await tx
        .select({ id: invocations.id })
        .from(invocations)
        // `= 0` written out, not a parameter: the partial index invocations_prune_idx (where events_pruned_through
        // = 0) serves the query only when its plan knows the value.
        .where(and(lte(invocations.finishedAt, before), sql`${invocations.eventsPrunedThrough} = 0`))
        .orderBy(invocations.finishedAt)
        .limit(1000);
      if (old.length === 0) return 0;
      const ids = old.map((o) => o.id);
      const tops = await tx
        .select({ invocationId: invocationEvents.invocationId, n: max(invocationEvents.id) })
        .from(invocationEvents)
        .where(inArray(invocationEvents.invocationId, ids))
        .groupBy(invocationEvents.invocationId);
      const deleted = await tx
        .delete(invocationEvents)
        .where(inArray(invocationEvents.invocationId, ids))
        .returning({ id: invocationEvents.id });
      const topOf = new Map(tops.map((t) => [t.invocationId, t.n ?? 1]));
      for (const id of ids)
        await tx
          .update(invocations)
          .set({ eventsPrunedThrough: topOf.get(id) ?? 1 })
          .where(eq(invocations.id, id));
      return deleted.length;
    });
    return { timedOut, prunedEvents, redispatched: stale.length, stoppedRuns };
  }
}

/** 410 `cursor_expired`: the events after the cursor are no longer kept. */
export function cursorExpired(cursor: number): ApiError {
  return new ApiError(
    410,
    'cursor_expired',
    `Events after ${cursor} are no longer kept; read the status view (statusUrl) for the outcome.`,
  );
}
