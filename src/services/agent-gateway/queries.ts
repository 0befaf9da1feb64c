/**
 * The query shapes every resource of the gateway repeats, written once: the scope condition of a scoped table, one
 * page of rows with the total, and the version check of an update at `expectedVersion`.
 */
import { and, count, eq, getTableColumns, type SQL, sql } from 'drizzle-orm';
import type { AnyPgColumn, PgTable } from 'drizzle-orm/pg-core';
import { type Db, type Executor, NamedStatement } from '../../platform/database.ts';
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

/**
 * The select list of every column of `table` (qualified by `alias`), each named `<prefix><property>` as the table's
 * TypeScript row names it: for hand-written prepared statements ({@link NamedStatement}) whose rows are read back with
 * {@link rowOf}.
 */
export function selectColumns(table: PgTable, alias: string, prefix: string): SQL {
  return sql.raw(
    Object.entries(getTableColumns(table))
      .map(([key, column]) => `${alias}."${column.name}" as "${prefix}${key}"`)
      .join(', '),
  );
}

/**
 * The row of `table` in a result row selected with {@link selectColumns} under `prefix`; undefined when its
 * primary key `id` is null (the missing side of an outer join). Values are as node-postgres parses them (jsonb
 * parsed, timestamptz as Date, int8 as a number when safe), which is what Drizzle's mappers make of these columns.
 */
export function rowOf<T extends PgTable>(
  table: T,
  row: Record<string, unknown>,
  prefix: string,
): T['$inferSelect'] | undefined {
  if (row[`${prefix}id`] === null || row[`${prefix}id`] === undefined) return undefined;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(getTableColumns(table))) out[key] = row[`${prefix}${key}`];
  return out as T['$inferSelect'];
}

/**
 * A prepared insert of one whole row of `table` (every column, in the table's order; a `jsonb` value is sent as its
 * JSON text, a Date as ISO 8601, `null` as SQL NULL as Drizzle sends it): the hot paths' inserts without building
 * the statement for each row.
 * @returns `run(executor, row)`, which inserts `row` (every property of the table's row type present).
 */
export function insertRowStatement<T extends PgTable>(name: string, table: T) {
  const insert = insertRowSql(table);
  const statement = new NamedStatement<never>(name, insert.sql);
  return {
    async run(executor: Executor, row: T['$inferSelect']): Promise<void> {
      await statement.rows(executor, insert.values(row));
    },
  };
}

/**
 * The `insert into <table> (<every column>) values (<a placeholder each>)` of {@link insertRowStatement} (and its
 * `insert ... select` form), to build a larger prepared statement around it, and `values(row)`, the placeholder
 * values of a row.
 */
export function insertRowSql<T extends PgTable>(table: T) {
  const columns = Object.entries(getTableColumns(table));
  const placeholders = columns.map(([key, column]) => {
    const type = column.getSQLType();
    return sql`${sql.placeholder(key)}::${sql.raw(type)}`;
  });
  const into = sql`insert into ${table} (${sql.raw(columns.map(([, c]) => `"${c.name}"`).join(', '))})`;
  return {
    sql: sql`${into} values (${sql.join(placeholders, sql`, `)})`,
    /** `insert into <table> (...) select <the placeholders>`: add a `from` (a CTE) to insert only with its rows. */
    selectSql: sql`${into} select ${sql.join(placeholders, sql`, `)}`,
    values(row: T['$inferSelect']): Record<string, unknown> {
      const values: Record<string, unknown> = {};
      for (const [key, column] of columns) {
        const value = (row as Record<string, unknown>)[key];
        values[key] =
          value === null || value === undefined
            ? null
            : column.getSQLType() === 'jsonb'
              ? JSON.stringify(value)
              : value instanceof Date
                ? value.toISOString()
                : value;
      }
      return values;
    },
  };
}
