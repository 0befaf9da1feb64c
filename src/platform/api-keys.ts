import { eq } from 'drizzle-orm';
import type { AnyPgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Executor, Tx } from './database.ts';
import type { KeyCache } from './key-cache.ts';

/** A service's API-key table: any Drizzle table with a numeric `id`, the key's SHA-256 `keyHash` and `revokedAt`. */
export type ApiKeyTable = PgTable & { id: AnyPgColumn; keyHash: AnyPgColumn; revokedAt: AnyPgColumn };

/**
 * Revokes API key `id` of `table` in one transaction (a savepoint when `db` is already a transaction): locks the row, sets `revokedAt = now` (a key already revoked
 * keeps its first revocation time), and drops the key from `cache` on this instance and, once the transaction
 * commits, on every instance ({@link KeyCache.revoked}, PostgreSQL NOTIFY). `extra(tx, row)` runs last in the same
 * transaction (to read what the answer needs, such as the key's project); if it throws, nothing is revoked.
 * @returns the key's row after the revocation with `extra`'s value, or `undefined` when there is no key `id` (the
 *   caller answers 404 in its own error format).
 */
export async function revokeApiKey<T extends ApiKeyTable, E = undefined>(
  db: Executor,
  table: T,
  id: number,
  options: {
    now: Date;
    cache: KeyCache<unknown>;
    extra?: (tx: Tx, row: T['$inferSelect']) => Promise<E>;
  },
): Promise<{ row: T['$inferSelect']; extra: E } | undefined> {
  return db.transaction(async (tx) => {
    const [row] = (await tx
      .select()
      .from(table as PgTable)
      .where(eq(table.id, id))
      .for('update')) as T['$inferSelect'][];
    if (!row) return undefined;
    let result = row;
    const current = row as { revokedAt: Date | null; keyHash: string };
    if (!current.revokedAt) {
      const [updated] = (await tx
        .update(table)
        .set({ revokedAt: options.now } as never)
        .where(eq(table.id, id))
        .returning()) as T['$inferSelect'][];
      await options.cache.revoked(tx, current.keyHash);
      result = updated!;
    }
    const extra = (await options.extra?.(tx, result)) as E;
    return { row: result, extra };
  });
}
