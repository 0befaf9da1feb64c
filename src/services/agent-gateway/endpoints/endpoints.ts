/**
 * Endpoints (spec 002 section E: `GET, POST /api/v1/endpoints`; "E. Invocation", the endpoint's life): an agent, a
 * team or a workflow revision published for external applications, as a job or a conversation.
 *
 * Life: a new endpoint is a `draft` (not live). Publishing (`version`, the endpoint's optimistic-concurrency
 * counter: spec E "endpoint publication uses `version`") freezes the draft's settings into an immutable release
 * numbered 1, 2, ... and points the endpoint at it (`published`); a later release switches the target and keeps
 * every earlier one. Rollback points the endpoint at an earlier release (it undoes nothing else: no data is
 * restored, no external operation undone). Disable stops new invocations (those accepted finish); enable allows them
 * again. Every move is recorded in the endpoint's history. A workflow target is pinned at publication to a published
 * revision (the draft's `targetRevision`, or the workflow's published revision at that moment).
 */
import { and, asc, count, desc, eq, max, sql } from 'drizzle-orm';
import type { Clock } from '../../../platform/clock.ts';
import { type Db, type Executor, NamedStatement, type Tx } from '../../../platform/database.ts';
import { ApiError } from '../../../platform/errors.ts';
import { prefixedHexId } from '../../../platform/ids.ts';
import type { PageRequest } from '../../../platform/pagination.ts';
import {
  invalidFields,
  invalidState,
  notFound,
  schemaUnsupported,
  versionConflict,
} from '../agent-gateway-errors.ts';
import type { AgentService } from '../agents.ts';
import {
  type EndpointSettingsRecord,
  endpointHistory,
  endpointReleases,
  endpoints,
} from '../db/endpoints.ts';
import type { Scope } from '../identity.ts';
import type { OrchestrationService } from '../orchestration.ts';
import { rowOf, selectColumns } from '../queries.ts';
import {
  mergeSettings,
  type SettingsInput,
  schemaIssues,
  settingsSchemaIssues,
} from './endpoint-settings.ts';

/** An endpoint as stored (`agent_gateway.endpoints`): its draft settings, status and current release. */
export type EndpointRow = typeof endpoints.$inferSelect;
/** An immutable release as stored (`agent_gateway.endpoint_releases`). */
export type ReleaseRow = typeof endpointReleases.$inferSelect;

/** A release as the API shows it. */
export interface ReleaseView {
  id: string;
  number: number;
  settings: EndpointSettingsRecord;
  publishedBy: string | null;
  publishedAt: string;
}

/** An endpoint as the API shows it: its draft settings and the release it points at. */
export interface EndpointView {
  id: string;
  tenant: string;
  namespace: string;
  slug: string;
  status: EndpointRow['status'];
  version: number;
  draft: EndpointSettingsRecord;
  currentRelease: ReleaseView | null;
  createdAt: string;
  updatedAt: string;
}

/** One check of readiness. */
export interface ReadinessCheck {
  name: 'target' | 'mode' | 'live';
  ok: boolean;
  message: string;
}

/** A release row as the API shows it. */
export function releaseView(row: ReleaseRow): ReleaseView {
  return {
    id: row.id,
    number: row.number,
    settings: row.settings,
    publishedBy: row.publishedBy,
    publishedAt: row.publishedAt.toISOString(),
  };
}

function endpointView(row: EndpointRow, release: ReleaseRow | undefined): EndpointView {
  return {
    id: row.id,
    tenant: row.tenantId,
    namespace: row.namespaceId,
    slug: row.slug,
    status: row.status,
    version: row.version,
    draft: row.draft,
    currentRelease: release ? releaseView(release) : null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** 409 `slug_taken`. */
function slugTaken(slug: string): ApiError {
  return new ApiError(409, 'slug_taken', `An endpoint with slug '${slug}' already exists in this scope.`);
}

/**
 * Refuses settings whose schemas do not compile (a release saved before a rule existed, such as a `pattern` RE2
 * does not support): nothing goes live on them.
 * @throws ApiError 400 `endpoint_schema_unsupported` naming each schema and pattern in `details.issues`.
 */
function refuseUncompilable(settings: EndpointSettingsRecord, prefix: string, what: string): void {
  const issues = settingsSchemaIssues(settings, prefix);
  if (issues.length > 0)
    throw schemaUnsupported(
      `${what} has a schema this service cannot compile (${issues.map((i) => `${i.field} ${i.message}`).join('; ')}); save schemas it accepts and publish them.`.slice(
        0,
        1000,
      ),
      issues,
    );
}

/** Endpoints, their releases and history. */
export class EndpointService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly agents: AgentService,
    private readonly orchestration: OrchestrationService,
  ) {}

  private check(settings: SettingsInput) {
    const issues = [
      ...(settings.inputSchema !== undefined ? schemaIssues(settings.inputSchema, 'inputSchema') : []),
      ...(settings.outputSchema !== undefined ? schemaIssues(settings.outputSchema, 'outputSchema') : []),
    ];
    if (issues.length > 0) throw invalidFields(issues);
  }

  /**
   * Creates a draft endpoint.
   * @throws ApiError 400 `validation_failed` (a schema that does not compile, a remote `$ref`); 409 `slug_taken`.
   */
  async create(
    scope: Scope,
    userId: string | null,
    input: SettingsInput & {
      slug: string;
      invocationMode: 'job' | 'conversation';
      targetType: 'agent' | 'team' | 'orchestration_revision';
      targetId: string;
    },
    executor: Executor = this.db,
  ): Promise<EndpointView> {
    this.check(input);
    const now = this.clock.now();
    const { slug, ...settings } = input;
    const [row] = await executor
      .insert(endpoints)
      .values({
        id: prefixedHexId('end'),
        tenantId: scope.tenant,
        namespaceId: scope.namespace,
        slug,
        status: 'draft',
        version: 1,
        draft: mergeSettings(undefined, settings),
        currentReleaseId: null,
        createdBy: userId,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing()
      .returning();
    if (!row) throw slugTaken(slug);
    await executor
      .insert(endpointHistory)
      .values({ endpointId: row.id, action: 'created', releaseId: null, userId, at: now });
    return endpointView(row, undefined);
  }

  /** A page of the scope's endpoints, by slug. */
  async list(scope: Scope, page: PageRequest) {
    const where = and(eq(endpoints.tenantId, scope.tenant), eq(endpoints.namespaceId, scope.namespace));
    const [rows, [total]] = await Promise.all([
      this.db
        .select({ endpoint: endpoints, release: endpointReleases })
        .from(endpoints)
        .leftJoin(endpointReleases, eq(endpointReleases.id, endpoints.currentReleaseId))
        .where(where)
        .orderBy(asc(endpoints.slug))
        .limit(page.limit)
        .offset(page.offset),
      this.db.select({ n: count() }).from(endpoints).where(where),
    ]);
    return {
      items: rows.map((r) => endpointView(r.endpoint, r.release ?? undefined)),
      total: total?.n ?? 0,
    };
  }

  /** An endpoint row of the scope. @throws ApiError 404. */
  async row(scope: Scope, id: string, executor: Executor = this.db, lock = false): Promise<EndpointRow> {
    const query = executor
      .select()
      .from(endpoints)
      .where(
        and(
          eq(endpoints.id, id),
          eq(endpoints.tenantId, scope.tenant),
          eq(endpoints.namespaceId, scope.namespace),
        ),
      );
    const [row] = lock ? await query.for('update') : await query;
    if (!row) throw notFound('endpoint', id);
    return row;
  }

  /** A release by id. */
  async release(id: string, executor: Executor = this.db): Promise<ReleaseRow | undefined> {
    const [row] = await executor.select().from(endpointReleases).where(eq(endpointReleases.id, id));
    return row;
  }

  /** One endpoint. @throws ApiError 404. */
  async get(scope: Scope, id: string): Promise<EndpointView> {
    const row = await this.row(scope, id);
    return endpointView(row, row.currentReleaseId ? await this.release(row.currentReleaseId) : undefined);
  }

  private async bump(
    tx: Tx,
    row: EndpointRow,
    expected: number,
    set: Partial<Pick<EndpointRow, 'status' | 'draft' | 'currentReleaseId'>>,
  ): Promise<EndpointRow> {
    if (row.version !== expected) throw versionConflict('endpoint', expected, row.version);
    const [updated] = await tx
      .update(endpoints)
      .set({ ...set, version: row.version + 1, updatedAt: this.clock.now() })
      .where(eq(endpoints.id, row.id))
      .returning();
    return updated!;
  }

  /**
   * Changes the draft's settings at `version` (the live release does not change until the next publication).
   * @throws ApiError 400; 404; 409 `version_conflict`.
   */
  async updateDraft(
    scope: Scope,
    id: string,
    input: SettingsInput & { version: number },
  ): Promise<EndpointView> {
    const { version, ...change } = input;
    this.check(change);
    return this.db.transaction(async (tx) => {
      const row = await this.row(scope, id, tx, true);
      const updated = await this.bump(tx, row, version, { draft: mergeSettings(row.draft, change) });
      return endpointView(
        updated,
        updated.currentReleaseId ? await this.release(updated.currentReleaseId, tx) : undefined,
      );
    });
  }

  /**
   * The readiness check of settings in a scope: the target exists in the scope (a workflow has the revision, or a
   * published one), and a conversation endpoint's agent takes conversation turns.
   */
  async readinessOf(scope: Scope, settings: EndpointSettingsRecord, executor: Executor = this.db) {
    const checks: ReadinessCheck[] = [];
    let revision: number | null = null;
    try {
      const plan = await this.orchestration.runPlan(
        scope,
        {
          type: settings.targetType === 'orchestration_revision' ? 'orchestration' : settings.targetType,
          id: settings.targetId,
          ...(settings.targetRevision !== null ? { revision: settings.targetRevision } : {}),
        },
        executor,
      );
      revision = plan.revision;
      checks.push({
        name: 'target',
        ok: true,
        message: `The ${settings.targetType} '${settings.targetId}' is there.`,
      });
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500) throw err;
      checks.push({ name: 'target', ok: false, message: err.message });
    }
    if (settings.invocationMode === 'conversation') {
      if (settings.targetType !== 'agent')
        checks.push({
          name: 'mode',
          ok: false,
          message: 'A conversation endpoint targets a conversational agent.',
        });
      else {
        const agent = await this.agents.row(scope, settings.targetId, executor).catch(() => undefined);
        checks.push(
          agent?.conversational
            ? { name: 'mode', ok: true, message: 'The agent takes conversation turns.' }
            : {
                name: 'mode',
                ok: false,
                message: `Agent '${settings.targetId}' does not take conversation turns.`,
              },
        );
      }
    }
    return { ready: checks.every((c) => c.ok), checks, revision };
  }

  /**
   * The readiness of an endpoint: its current release's checks and whether it is live (`published`).
   * @throws ApiError 404.
   */
  async readiness(scope: Scope, id: string) {
    const row = await this.row(scope, id);
    const release = row.currentReleaseId ? await this.release(row.currentReleaseId) : undefined;
    const checks: ReadinessCheck[] = [
      row.status === 'published'
        ? { name: 'live', ok: true, message: `Release ${release!.number} is live.` }
        : {
            name: 'live',
            ok: false,
            message:
              row.status === 'draft' ? 'The endpoint was never published.' : 'The endpoint is disabled.',
          },
    ];
    if (release) checks.push(...(await this.readinessOf(scope, release.settings)).checks);
    return { ready: checks.every((c) => c.ok), checks };
  }

  /**
   * Publishes the draft at `version` as a new release and points the endpoint at it (`published`).
   * @throws ApiError 400 `endpoint_schema_unsupported` (a draft schema that does not compile); 404; 409
   *   `version_conflict`, `not_ready` (with `details.checks`).
   */
  async publish(scope: Scope, id: string, userId: string | null, version: number, executor?: Tx) {
    const work = async (tx: Tx) => {
      const row = await this.row(scope, id, tx, true);
      if (row.version !== version) throw versionConflict('endpoint', version, row.version);
      refuseUncompilable(row.draft, 'draft', 'The draft');
      const readiness = await this.readinessOf(scope, row.draft, tx);
      if (!readiness.ready)
        throw new ApiError(409, 'not_ready', 'The draft fails its readiness check; see details.checks.', {
          details: { checks: readiness.checks },
        });
      const [last] = await tx
        .select({ n: max(endpointReleases.number) })
        .from(endpointReleases)
        .where(eq(endpointReleases.endpointId, id));
      const now = this.clock.now();
      const settings: EndpointSettingsRecord = {
        ...row.draft,
        targetRevision: row.draft.targetType === 'orchestration_revision' ? readiness.revision : null,
      };
      const [release] = await tx
        .insert(endpointReleases)
        .values({
          id: prefixedHexId('rel'),
          endpointId: id,
          number: (last?.n ?? 0) + 1,
          settings,
          publishedBy: userId,
          publishedAt: now,
        })
        .returning();
      const updated = await this.bump(tx, row, version, {
        status: 'published',
        currentReleaseId: release!.id,
      });
      await tx
        .insert(endpointHistory)
        .values({ endpointId: id, action: 'published', releaseId: release!.id, userId, at: now });
      return endpointView(updated, release);
    };
    return executor ? work(executor) : this.db.transaction(work);
  }

  /**
   * Points the endpoint at an earlier release `releaseNumber` at `version` (it restores nothing else).
   * @throws ApiError 400 `endpoint_schema_unsupported` (the release's schemas do not compile); 404 (also an unknown
   *   release); 409 `version_conflict`, `invalid_state` (never published, or
   *   already at that release).
   */
  async rollback(
    scope: Scope,
    id: string,
    userId: string | null,
    input: { version: number; releaseNumber: number },
  ) {
    return this.db.transaction(async (tx) => {
      const row = await this.row(scope, id, tx, true);
      if (row.version !== input.version) throw versionConflict('endpoint', input.version, row.version);
      if (!row.currentReleaseId) throw invalidState(`Endpoint '${id}' was never published.`);
      const [release] = await tx
        .select()
        .from(endpointReleases)
        .where(and(eq(endpointReleases.endpointId, id), eq(endpointReleases.number, input.releaseNumber)));
      if (!release) throw notFound('release', `${id}@${input.releaseNumber}`);
      if (release.id === row.currentReleaseId)
        throw invalidState(`Endpoint '${id}' already points at release ${input.releaseNumber}.`);
      refuseUncompilable(release.settings, 'release', `Release ${release.number}`);
      const updated = await this.bump(tx, row, input.version, { currentReleaseId: release.id });
      await tx.insert(endpointHistory).values({
        endpointId: id,
        action: 'rolled_back',
        releaseId: release.id,
        userId,
        at: this.clock.now(),
      });
      return endpointView(updated, release);
    });
  }

  /**
   * Disables (no new invocations; accepted ones finish) or enables again a published endpoint at `version`.
   * @throws ApiError 404; 409 `version_conflict`, `invalid_state`.
   */
  async setEnabled(scope: Scope, id: string, userId: string | null, version: number, enabled: boolean) {
    return this.db.transaction(async (tx) => {
      const row = await this.row(scope, id, tx, true);
      if (row.version !== version) throw versionConflict('endpoint', version, row.version);
      const from = enabled ? 'disabled' : 'published';
      if (row.status !== from)
        throw invalidState(
          `Endpoint '${id}' is ${row.status}; only a ${from} endpoint can be ${enabled ? 'enabled' : 'disabled'}.`,
          {
            status: row.status,
          },
        );
      const updated = await this.bump(tx, row, version, { status: enabled ? 'published' : 'disabled' });
      await tx.insert(endpointHistory).values({
        endpointId: id,
        action: enabled ? 'enabled' : 'disabled',
        releaseId: row.currentReleaseId,
        userId,
        at: this.clock.now(),
      });
      return endpointView(
        updated,
        row.currentReleaseId ? await this.release(row.currentReleaseId, tx) : undefined,
      );
    });
  }

  /** Every release of an endpoint, newest first, and its history of moves, oldest first. @throws ApiError 404. */
  async releases(scope: Scope, id: string) {
    const row = await this.row(scope, id);
    const [releases, history] = await Promise.all([
      this.db
        .select()
        .from(endpointReleases)
        .where(eq(endpointReleases.endpointId, id))
        .orderBy(desc(endpointReleases.number)),
      this.db
        .select({ history: endpointHistory, number: endpointReleases.number })
        .from(endpointHistory)
        .leftJoin(endpointReleases, eq(endpointReleases.id, endpointHistory.releaseId))
        .where(eq(endpointHistory.endpointId, id))
        .orderBy(asc(endpointHistory.id)),
    ]);
    return {
      currentReleaseId: row.currentReleaseId,
      releases: releases.map(releaseView),
      history: history.map((h) => ({
        action: h.history.action,
        releaseNumber: h.number ?? null,
        userId: h.history.userId,
        at: h.history.at.toISOString(),
      })),
    };
  }

  /** The live endpoint of `slug` in a scope with its current release, or undefined. */
  async liveBySlug(scope: Scope, slug: string, executor: Executor = this.db) {
    const [found] = await executor
      .select({ endpoint: endpoints, release: endpointReleases })
      .from(endpoints)
      .leftJoin(endpointReleases, eq(endpointReleases.id, endpoints.currentReleaseId))
      .where(
        and(
          eq(endpoints.tenantId, scope.tenant),
          eq(endpoints.namespaceId, scope.namespace),
          eq(endpoints.slug, slug),
        ),
      );
    return found;
  }

  /** An endpoint by id with its current release (null when it has none), or undefined (a prepared statement). */
  async withRelease(
    id: string,
    executor: Executor = this.db,
  ): Promise<{ endpoint: EndpointRow; release: ReleaseRow | null } | undefined> {
    const [row] = await withReleaseStatement.rows(executor, { id });
    if (!row) return undefined;
    return { endpoint: rowOf(endpoints, row, 'e_')!, release: rowOf(endpointReleases, row, 'r_') ?? null };
  }
}

const withReleaseStatement = new NamedStatement<Record<string, unknown>>(
  'agent_gateway_endpoint_with_release',
  sql`select ${selectColumns(endpoints, 'e', 'e_')}, ${selectColumns(endpointReleases, 'r', 'r_')}
    from ${endpoints} e left join ${endpointReleases} r on r.id = e.current_release_id
    where e.id = ${sql.placeholder('id')}`,
);
