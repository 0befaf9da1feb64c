/**
 * A cheap witness that nothing was written: per table of the given schemas, the row count and the newest row
 * version (`xmin`, the id of the transaction that wrote the row). An insert, update or delete changes one of them.
 */
import type pg from 'pg';

/** The schemas a service's data lives in: its own (`pricing`, `entity_events`) and the platform's. */
export function schemasOf(service: string): string[] {
  return [service.replace(/-/g, '_'), 'platform'];
}

/**
 * A fingerprint of every table of `schemas`: `schema.table:count:max(xmin)` entries, sorted, space-separated.
 * @param client a connection to the service's database (any role that may read its tables).
 * @param exclude tables (`schema.table`) left out: a service's declared failure counters (`refusalCounters`).
 */
export async function dataFingerprint(
  client: pg.ClientBase,
  schemas: string[],
  exclude: readonly string[] = [],
): Promise<string> {
  const tables = (
    await client.query(
      `select table_schema, table_name from information_schema.tables
       where table_schema = any($1) and table_type = 'BASE TABLE' order by 1, 2`,
      [schemas],
    )
  ).rows as { table_schema: string; table_name: string }[];
  const kept = tables.filter((t) => !exclude.includes(`${t.table_schema}.${t.table_name}`));
  if (kept.length === 0) return '';
  const parts = kept.map(
    (t) =>
      `select '${t.table_schema}.${t.table_name}' as t, count(*)::text as n, coalesce(max(xmin::text::bigint), 0)::text as x from "${t.table_schema}"."${t.table_name}"`,
  );
  const rows = (await client.query(`${parts.join(' union all ')} order by 1`)).rows as {
    t: string;
    n: string;
    x: string;
  }[];
  return rows.map((r) => `${r.t}:${r.n}:${r.x}`).join(' ');
}

/** The entries of fingerprint `after` that differ from `before` (the tables written between the two). */
export function changedTables(before: string, after: string): string[] {
  const earlier = new Set(before.split(' '));
  return after.split(' ').filter((entry) => !earlier.has(entry));
}
