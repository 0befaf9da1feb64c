/** Approval requests (spec E: `POST /api/v1/approvals/{id}/decide`; listing and views; decisions are the run engine's). */
import { and, desc, eq } from 'drizzle-orm';
import type { Db } from '../../platform/database.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import { approvals } from './db/schema.ts';
import type { Scope } from './identity.ts';
import { inScope, pagedRows } from './queries.ts';

/** An approval row. */
export type ApprovalRow = typeof approvals.$inferSelect;

/** Approvals of a scope. */
export class ApprovalService {
  constructor(private readonly db: Db) {}

  /** The API view of an approval. */
  view(row: ApprovalRow) {
    return {
      id: row.id,
      tenant: row.tenantId,
      namespace: row.namespaceId,
      runId: row.runId,
      stepId: row.stepId,
      title: row.title,
      status: row.status,
      decidedBy: row.decidedBy,
      comment: row.comment,
      createdAt: row.createdAt.toISOString(),
      decidedAt: row.decidedAt ? row.decidedAt.toISOString() : null,
    };
  }

  /** A page of the scope's approvals, newest first, optionally of one status. */
  async list(scope: Scope, page: PageRequest, status?: ApprovalRow['status']) {
    const where = and(inScope(approvals, scope), status ? eq(approvals.status, status) : undefined);
    const { rows, total } = await pagedRows(
      this.db,
      approvals,
      where,
      [desc(approvals.createdAt), desc(approvals.id)],
      page,
    );
    return { items: rows.map((r) => this.view(r)), total };
  }
}
