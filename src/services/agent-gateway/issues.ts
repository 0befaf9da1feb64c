/**
 * Issues (spec E: `GET, POST /api/v1/issues`, `GET /api/v1/issues/{id}` with `issue.version`, summary, comments,
 * `accept {expectedVersion}`, `reject {expectedVersion, reason}`, `GET /api/v1/inbox`).
 *
 * An issue assigned to an agent or a team is worked in a run: `open` -> `in_progress` (the run) -> `in_review`
 * (the run's output is the issue's result; the creator's inbox shows it) -> `done` when accepted, or back to
 * `in_progress` when rejected (the reason becomes a comment and the assignee works the issue again with it). A run
 * that fails leaves the issue `blocked` (reassign it to try again). Every change of the issue moves its `version`;
 * decisions and edits name the version they expect (409 with the current version otherwise).
 */
import { and, asc, desc, eq, sql } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.ts';
import type { Db, Tx } from '../../platform/database.ts';
import { prefixedHexId } from '../../platform/ids.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import { invalidState, notFound } from './agent-gateway-errors.ts';
import { approvals, issueComments, issues, runs } from './db/schema.ts';
import { type Role, roleAllows, type Scope } from './identity.ts';
import type { OrchestrationService } from './orchestration.ts';
import { expectVersion, inScope, pagedRows } from './queries.ts';
import type { RunRow } from './run-engine.ts';

type IssueRow = typeof issues.$inferSelect;
type CommentRow = typeof issueComments.$inferSelect;

/** The issue statuses. */
export const ISSUE_STATUSES = ['open', 'in_progress', 'in_review', 'done', 'blocked'] as const;

/** An assignee: an agent or a team of the scope. */
export interface Assignee {
  type: 'agent' | 'team';
  id: string;
}

function issueView(row: IssueRow) {
  return {
    id: row.id,
    tenant: row.tenantId,
    namespace: row.namespaceId,
    title: row.title,
    description: row.description,
    status: row.status,
    assignee: row.assigneeType && row.assigneeId ? { type: row.assigneeType, id: row.assigneeId } : null,
    version: row.version,
    result: row.result ?? null,
    currentRunId: row.currentRunId,
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function commentView(row: CommentRow) {
  return {
    id: row.id,
    issueId: row.issueId,
    kind: row.kind,
    author: { type: row.authorType, id: row.authorId },
    body: row.body,
    createdAt: row.createdAt.toISOString(),
  };
}

/** Issues, their comments and decisions, and the inbox. */
export class IssueService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly orchestration: OrchestrationService,
    private readonly emit: (
      tx: Tx,
      scope: Scope,
      type: string,
      data: unknown,
    ) => Promise<unknown> = async () => undefined,
  ) {}

  private async row(scope: Scope, id: string, executor: Db | Tx = this.db, lock = false): Promise<IssueRow> {
    const query = executor
      .select()
      .from(issues)
      .where(and(eq(issues.id, id), inScope(issues, scope)));
    const [row] = lock ? await query.for('update') : await query;
    if (!row) throw notFound('issue', id);
    return row;
  }

  private async comment(
    tx: Db | Tx,
    issueId: string,
    kind: CommentRow['kind'],
    author: { type: CommentRow['authorType']; id: string | null },
    body: string,
  ) {
    const [row] = await tx
      .insert(issueComments)
      .values({
        id: prefixedHexId('cmt'),
        issueId,
        kind,
        authorType: author.type,
        authorId: author.id,
        body,
        createdAt: this.clock.now(),
      })
      .returning();
    return row!;
  }

  /** Starts a run of the assignee on the issue (its title, description and the reasons of earlier rejections). */
  private async work(tx: Tx, scope: Scope, issue: IssueRow, userId: string | null): Promise<string> {
    const rejections = await tx
      .select({ body: issueComments.body })
      .from(issueComments)
      .where(and(eq(issueComments.issueId, issue.id), eq(issueComments.kind, 'rejection')))
      .orderBy(asc(issueComments.createdAt));
    const feedback = rejections.map((r) => r.body);
    const message = [issue.title, issue.description, ...feedback.map((f) => `Feedback: ${f}`)]
      .filter(Boolean)
      .join('\n\n');
    const run = await this.orchestration.startRun(
      scope,
      userId,
      {
        target: { type: issue.assigneeType === 'team' ? 'team' : 'agent', id: issue.assigneeId! },
        input: {
          message,
          issue: { id: issue.id, title: issue.title, description: issue.description },
          feedback,
        },
      },
      { issueId: issue.id },
      tx,
    );
    return run.id;
  }

  /**
   * Creates an issue; with an assignee its run starts at once (`in_progress`).
   * @throws ApiError 404 for an assignee not in the scope.
   */
  async create(
    scope: Scope,
    userId: string,
    input: { title: string; description?: string; assignee?: Assignee },
  ) {
    return this.db.transaction(async (tx) => {
      const now = this.clock.now();
      const [row] = await tx
        .insert(issues)
        .values({
          id: prefixedHexId('iss'),
          tenantId: scope.tenant,
          namespaceId: scope.namespace,
          title: input.title,
          description: input.description ?? '',
          status: 'open',
          assigneeType: input.assignee?.type ?? null,
          assigneeId: input.assignee?.id ?? null,
          version: 1,
          createdBy: userId,
          createdAt: now,
          updatedAt: now,
        })
        .returning();
      await this.emit(tx, scope, 'issue.created', { issueId: row!.id, title: row!.title });
      if (!input.assignee) return issueView(row!);
      const runId = await this.work(tx, scope, row!, userId);
      const [started] = await tx
        .update(issues)
        .set({ status: 'in_progress', currentRunId: runId })
        .where(eq(issues.id, row!.id))
        .returning();
      return issueView(started!);
    });
  }

  /** A page of the scope's issues, newest first, optionally of one status. */
  async list(scope: Scope, page: PageRequest, status?: IssueRow['status']) {
    const where = and(inScope(issues, scope), status ? eq(issues.status, status) : undefined);
    const { rows, total } = await pagedRows(
      this.db,
      issues,
      where,
      [desc(issues.createdAt), desc(issues.id)],
      page,
    );
    return { items: rows.map(issueView), total };
  }

  /** One issue (with `version`). @throws ApiError 404. */
  async get(scope: Scope, id: string) {
    return issueView(await this.row(scope, id));
  }

  /**
   * Edits an issue at `expectedVersion`; a new assignee of an `open` or `blocked` issue starts working it.
   * @throws ApiError 404; 409 `version_conflict`; 409 `invalid_state` when reassigning work in progress or done.
   */
  async update(
    scope: Scope,
    id: string,
    userId: string,
    input: { expectedVersion: number; title?: string; description?: string; assignee?: Assignee },
  ) {
    return this.db.transaction(async (tx) => {
      const row = await this.row(scope, id, tx, true);
      expectVersion('issue', input.expectedVersion, row.version);
      if (input.assignee && !['open', 'blocked'].includes(row.status))
        throw invalidState(
          `Issue '${id}' is ${row.status}; only an open or blocked issue can be (re)assigned.`,
          { status: row.status },
        );
      const [updated] = await tx
        .update(issues)
        .set({
          ...(input.title !== undefined ? { title: input.title } : {}),
          ...(input.description !== undefined ? { description: input.description } : {}),
          ...(input.assignee ? { assigneeType: input.assignee.type, assigneeId: input.assignee.id } : {}),
          version: row.version + 1,
          updatedAt: this.clock.now(),
        })
        .where(eq(issues.id, id))
        .returning();
      if (!input.assignee) return issueView(updated!);
      const runId = await this.work(tx, scope, updated!, userId);
      const [started] = await tx
        .update(issues)
        .set({ status: 'in_progress', currentRunId: runId })
        .where(eq(issues.id, id))
        .returning();
      return issueView(started!);
    });
  }

  /**
   * Accepts the result of an issue in review (`done`).
   * @throws ApiError 404; 409 `version_conflict` with the current version; 409 `invalid_state` unless `in_review`.
   */
  async accept(scope: Scope, id: string, userId: string, expectedVersion: number) {
    return this.db.transaction(async (tx) => {
      const row = await this.decidable(tx, scope, id, expectedVersion);
      await this.comment(tx, id, 'acceptance', { type: 'user', id: userId }, 'Accepted.');
      await this.emit(tx, scope, 'issue.accepted', { issueId: id, result: row.result ?? null });
      const [updated] = await tx
        .update(issues)
        .set({ status: 'done', version: row.version + 1, updatedAt: this.clock.now() })
        .where(eq(issues.id, id))
        .returning();
      return issueView(updated!);
    });
  }

  /**
   * Rejects the result of an issue in review: back to `in_progress`, the reason recorded as a comment, and the
   * assignee works it again with the reason as feedback.
   * @throws ApiError 404; 409 `version_conflict` with the current version; 409 `invalid_state` unless `in_review`.
   */
  async reject(scope: Scope, id: string, userId: string, expectedVersion: number, reason: string) {
    return this.db.transaction(async (tx) => {
      const row = await this.decidable(tx, scope, id, expectedVersion);
      await this.comment(tx, id, 'rejection', { type: 'user', id: userId }, reason);
      await this.emit(tx, scope, 'issue.rejected', { issueId: id, reason });
      const runId = row.assigneeId ? await this.work(tx, scope, row, userId) : null;
      const [updated] = await tx
        .update(issues)
        .set({
          status: 'in_progress',
          version: row.version + 1,
          currentRunId: runId,
          updatedAt: this.clock.now(),
        })
        .where(eq(issues.id, id))
        .returning();
      return issueView(updated!);
    });
  }

  private async decidable(tx: Tx, scope: Scope, id: string, expectedVersion: number): Promise<IssueRow> {
    const row = await this.row(scope, id, tx, true);
    expectVersion('issue', expectedVersion, row.version);
    if (row.status !== 'in_review')
      throw invalidState(
        `Issue '${id}' is ${row.status}; only an issue in review can be accepted or rejected.`,
        { status: row.status },
      );
    return row;
  }

  /**
   * Takes the outcome of the issue's current run (a run observer, in the run's finishing transaction): its output
   * goes to review, a failure or cancellation blocks the issue.
   */
  async onRunFinished(tx: Tx, run: RunRow): Promise<void> {
    if (!run.issueId) return;
    const [row] = await tx.select().from(issues).where(eq(issues.id, run.issueId)).for('update');
    if (!row || row.currentRunId !== run.id || row.status !== 'in_progress') return;
    const completed = run.status === 'completed';
    await this.comment(
      tx,
      row.id,
      'system',
      { type: 'system', id: null },
      completed
        ? `Run ${run.id} completed; the result is ready for review.`
        : `Run ${run.id} ${run.status}: ${run.error?.message ?? ''}`.trim(),
    );
    await tx
      .update(issues)
      .set({
        status: completed ? 'in_review' : 'blocked',
        result: completed ? (run.output ?? null) : row.result,
        version: row.version + 1,
        updatedAt: this.clock.now(),
      })
      .where(eq(issues.id, row.id));
  }

  /** The comments of an issue, oldest first. @throws ApiError 404. */
  async comments(scope: Scope, id: string, page: PageRequest) {
    await this.row(scope, id);
    const where = eq(issueComments.issueId, id);
    const { rows, total } = await pagedRows(
      this.db,
      issueComments,
      where,
      [asc(issueComments.createdAt), asc(issueComments.id)],
      page,
    );
    return { items: rows.map(commentView), total };
  }

  /** Adds a comment (it does not change the issue's version). @throws ApiError 404. */
  async addComment(scope: Scope, id: string, userId: string, body: string) {
    await this.row(scope, id);
    return commentView(await this.comment(this.db, id, 'comment', { type: 'user', id: userId }, body));
  }

  /** The summary of an issue: state, counts, the latest run, the decisions and a one-line text. @throws ApiError 404. */
  async summary(scope: Scope, id: string) {
    const row = await this.row(scope, id);
    const [comments, issueRuns] = await Promise.all([
      this.db
        .select()
        .from(issueComments)
        .where(eq(issueComments.issueId, id))
        .orderBy(asc(issueComments.createdAt)),
      this.db
        .select({ id: runs.id, status: runs.status })
        .from(runs)
        .where(eq(runs.issueId, id))
        .orderBy(desc(runs.createdAt)),
    ]);
    const decisions = comments
      .filter((c) => c.kind === 'acceptance' || c.kind === 'rejection')
      .map((c) => ({
        decision: c.kind === 'acceptance' ? 'accepted' : 'rejected',
        by: c.authorId,
        reason: c.kind === 'rejection' ? c.body : null,
        at: c.createdAt.toISOString(),
      }));
    const rejections = decisions.filter((d) => d.decision === 'rejected').length;
    return {
      issueId: row.id,
      title: row.title,
      status: row.status,
      version: row.version,
      assignee: row.assigneeType && row.assigneeId ? { type: row.assigneeType, id: row.assigneeId } : null,
      commentCount: comments.filter((c) => c.kind === 'comment').length,
      runCount: issueRuns.length,
      latestRun: issueRuns[0] ?? null,
      decisions,
      result: row.result ?? null,
      text:
        `'${row.title}' is ${row.status.replace('_', ' ')} (version ${row.version}) after ${issueRuns.length} run(s)` +
        (rejections > 0 ? ` and ${rejections} rejection(s)` : '') +
        '.',
    };
  }

  /**
   * The caller's inbox in the scope, newest first: their issues waiting for review, and, for an editor or admin,
   * the scope's pending approvals.
   */
  async inbox(scope: Scope, userId: string, role: Role, page: PageRequest) {
    const inScope = sql`tenant_id = ${scope.tenant} and namespace_id = ${scope.namespace}`;
    const approvalsPart = roleAllows(role, 'editor')
      ? sql`union all select 'approval' as kind, id, title, run_id as subject, created_at from ${approvals} where ${inScope} and status = 'pending'`
      : sql``;
    const result = await this.db.execute(sql`
      select * from (
        select 'issue_review' as kind, id, title, current_run_id as subject, updated_at as created_at
        from ${issues} where ${inScope} and status = 'in_review' and created_by = ${userId}
        ${approvalsPart}
      ) items order by created_at desc, id desc limit ${page.limit + 1} offset ${page.offset}`);
    const rows = result.rows as {
      kind: 'issue_review' | 'approval';
      id: string;
      title: string;
      subject: string | null;
      created_at: string | Date;
    }[];
    return {
      items: rows.slice(0, page.limit).map((r) => ({
        kind: r.kind,
        id: r.id,
        title: r.title,
        runId: r.subject,
        createdAt: new Date(r.created_at).toISOString(),
        href: r.kind === 'approval' ? `/api/v1/approvals/${r.id}/decide` : `/api/v1/issues/${r.id}`,
      })),
      hasMore: rows.length > page.limit,
    };
  }
}
