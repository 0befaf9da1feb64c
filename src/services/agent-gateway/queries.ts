/**
 * The query shapes every resource of the gateway repeats, written once: the scope condition of a scoped table, one
 * page of rows with the total, and the version check of an update at `expectedVersion`.
 */
import { and, count, eq, type SQL } from 'drizzle-orm';
import type { AnyPgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Db } from '../../platform/database.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import { versionConflict } from './agent-gateway-errors.ts';
import type { Scope } from './identity.ts';

/** A table whose rows belong to a tenant and a namespace. */
interface ScopedTable {
  tenantId: AnyPgColumn;
  namespaceId: AnyPgColumn;
}

/** `tenant_id = scope.tenant and namespace_id = scope.namespace` for `table` (a resource of another scope is none). */
export function inScope(table: ScopedTable, scope: Scope): SQL {
  return and(eq(table.tenantId, scope.tenant), eq(table.namespaceId, scope.namespace))!;
}

/**
 * One page of `table`'s rows matching `where` in `orderBy` order (`page.limit` rows from `page.offset`), and how many
 * rows match in all; both queries run at once.
 */
export async function pagedRows<T extends PgTable>(
  db: Db,
  table: T,
  where: SQL | undefined,
  orderBy: SQL[],
  page: PageRequest,
): Promise<{ rows: T['$inferSelect'][]; total: number }> {
  const [rows, [total]] = await Promise.all([
    db
      .select()
      .from(table as PgTable)
      .where(where)
      .orderBy(...orderBy)
      .limit(page.limit)
      .offset(page.offset),
    db
      .select({ n: count() })
      .from(table as PgTable)
      .where(where),
  ]);
  return { rows: rows as T['$inferSelect'][], total: total?.n ?? 0 };
}

/**
 * Checks that a record is at the version the caller read (spec E: `expectedVersion` / `version`).
 * @throws ApiError 409 `version_conflict` with `details.currentVersion` when it is not.
 */
export function expectVersion(resource: string, expected: number, current: number): void {
  if (expected !== current) throw versionConflict(resource, expected, current);
}
