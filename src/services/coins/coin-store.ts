import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.ts';
import type { Db, Executor } from '../../platform/database.ts';
import { ApiError } from '../../platform/errors.ts';
import type { CoinEntry } from './coin-list.ts';
import { coins, seedUpdates } from './db/schema.ts';

export type CoinStatus = 'active' | 'inactive';

/** Counts of an import: new coins, changed coins, and coins marked inactive because the file left them out. */
export interface ImportResult {
  inserted: number;
  updated: number;
  unchanged: number;
  deactivated: number;
}

/** What the token lists add to the coin list, and the digest that identifies it (`seed-data.ts`). */
export interface ListPlatformsUpdate {
  digest: string;
  /** Coins the base list lacks, with their platforms. */
  newCoins: CoinEntry[];
  /** Coin id -> platform id -> contract address. */
  platforms: Record<string, Record<string, string>>;
}

/** The name of the token-list update in `coins.seed_updates`. */
export const LIST_PLATFORMS_UPDATE = 'token-list-platforms';

/** A coin row as the snapshot reads it. */
export interface CoinRow extends CoinEntry {
  status: CoinStatus;
}

const BATCH = 1000;

/**
 * Persistence of coins (schema `coins`).
 */
export class CoinStore {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /**
   * Imports a validated coin list in ONE transaction.
   * - `merge`: upserts the listed coins with `status` (default `active`); others are untouched.
   * - `replace` (with status `active`): as merge, and every active coin missing from the list becomes inactive
   *   (what a full upstream list of active coins means).
   */
  async importCoins(
    entries: CoinEntry[],
    options: { mode: 'merge' | 'replace'; status?: CoinStatus },
  ): Promise<ImportResult> {
    const status = options.status ?? 'active';
    const now = this.clock.now();
    return this.db.transaction(async (tx) => {
      // Serialise imports so two concurrent replaces cannot interleave.
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext('coins:import'))`);
      let inserted = 0;
      let updated = 0;
      let unchanged = 0;
      for (let i = 0; i < entries.length; i += BATCH) {
        const batch = entries.slice(i, i + BATCH);
        const result = await tx.execute<{ inserted: boolean; changed: boolean }>(sql`
          with input as (
            select * from jsonb_to_recordset(${JSON.stringify(batch)}::jsonb)
              as x(id text, symbol text, name text, platforms jsonb)
          ), upserted as (
            insert into coins.coins as c (id, symbol, name, platforms, status, created_at, updated_at)
            select id, symbol, name, coalesce(platforms, '{}'::jsonb), ${status}, ${now}, ${now} from input
            on conflict (id) do update set
              symbol = excluded.symbol, name = excluded.name, platforms = excluded.platforms,
              status = excluded.status, updated_at = excluded.updated_at
            where (c.symbol, c.name, c.platforms, c.status) is distinct from
                  (excluded.symbol, excluded.name, excluded.platforms, excluded.status)
            returning (xmax = 0) as inserted
          )
          select
            coalesce(sum(case when inserted then 1 else 0 end), 0)::int as inserted_count,
            coalesce(sum(case when inserted then 0 else 1 end), 0)::int as updated_count
          from upserted`);
        const row = result.rows[0] as unknown as { inserted_count: number; updated_count: number };
        inserted += row.inserted_count;
        updated += row.updated_count;
        unchanged += batch.length - row.inserted_count - row.updated_count;
      }
      let deactivated = 0;
      if (options.mode === 'replace' && status === 'active') {
        const ids = JSON.stringify(entries.map((e) => e.id));
        const gone = await tx
          .update(coins)
          .set({ status: 'inactive', updatedAt: now })
          .where(
            and(
              eq(coins.status, 'active'),
              sql`${coins.id} not in (select jsonb_array_elements_text(${ids}::jsonb))`,
            ),
          )
          .returning({ id: coins.id });
        deactivated = gone.length;
      }
      return { inserted, updated, unchanged, deactivated };
    });
  }

  /**
   * Sets the status of the given coins.
   * @throws ApiError 404 `coin_not_found` (nothing changed) when any id is unknown.
   */
  async setStatus(ids: string[], status: CoinStatus): Promise<number> {
    return this.db.transaction(async (tx) => {
      const found = await tx.select({ id: coins.id }).from(coins).where(inArray(coins.id, ids));
      if (found.length !== new Set(ids).size) {
        const known = new Set(found.map((r) => r.id));
        const missing = ids.filter((id) => !known.has(id));
        throw new ApiError(404, 'coin_not_found', `Unknown coin id(s): ${missing.slice(0, 10).join(', ')}.`);
      }
      const changed = await tx
        .update(coins)
        .set({ status, updatedAt: this.clock.now() })
        .where(and(inArray(coins.id, ids), sql`${coins.status} <> ${status}`))
        .returning({ id: coins.id });
      return changed.length;
    });
  }

  /**
   * Every coin, ordered by id in byte order (the order CoinGecko lists: `collate "C"`, so an external PostgreSQL
   * with a linguistic collation such as en_US.UTF-8 does not reorder hyphenated ids).
   */
  async all(executor: Executor = this.db): Promise<CoinRow[]> {
    return executor
      .select({
        id: coins.id,
        symbol: coins.symbol,
        name: coins.name,
        platforms: coins.platforms,
        status: coins.status,
      })
      .from(coins)
      .orderBy(sql`${coins.id} collate "C"`);
  }

  /**
   * Brings the token lists' platform map to a database seeded before it (or before its latest version), in ONE
   * transaction, once per digest (recorded in `coins.seed_updates`; concurrent starts serialise on a lock):
   * coins missing from the table are inserted as active, and each listed coin gets the platforms it lacks; a platform
   * the coin already has (from the seed, an import or the upstream mirror) is never replaced. An empty table is left
   * to the first start's seed, which records the digest itself ({@link recordListPlatforms}).
   * @returns `current` (already applied), `empty` (nothing seeded yet) or `applied` with the counts.
   */
  async applyListPlatforms(
    update: ListPlatformsUpdate,
  ): Promise<{ status: 'current' | 'empty' } | { status: 'applied'; inserted: number; updated: number }> {
    return this.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext('coins:import'))`);
      const [applied] = await tx
        .select({ digest: seedUpdates.digest })
        .from(seedUpdates)
        .where(eq(seedUpdates.name, LIST_PLATFORMS_UPDATE));
      if (applied?.digest === update.digest) return { status: 'current' as const };
      const [any] = await tx.select({ id: coins.id }).from(coins).limit(1);
      if (!any) return { status: 'empty' as const };
      const now = this.clock.now();
      const inserted = await tx.execute(sql`
        insert into coins.coins (id, symbol, name, platforms, status, created_at, updated_at)
        select id, symbol, name, platforms, 'active', ${now}, ${now}
          from jsonb_to_recordset(${JSON.stringify(update.newCoins)}::jsonb)
            as x(id text, symbol text, name text, platforms jsonb)
        on conflict (id) do nothing`);
      const updated = await tx.execute(sql`
        update coins.coins as c set platforms = x.platforms || c.platforms, updated_at = ${now}
          from jsonb_each(${JSON.stringify(update.platforms)}::jsonb) as x(id, platforms)
         where c.id = x.id and c.platforms is distinct from (x.platforms || c.platforms)`);
      await this.recordListPlatforms(tx, update.digest);
      return { status: 'applied' as const, inserted: inserted.rowCount ?? 0, updated: updated.rowCount ?? 0 };
    });
  }

  /** Records that the token lists' platform map with `digest` is in the table (the first start's seed calls it). */
  async recordListPlatforms(executor: Executor, digest: string): Promise<void> {
    const now = this.clock.now();
    await executor
      .insert(seedUpdates)
      .values({ name: LIST_PLATFORMS_UPDATE, digest, appliedAt: now })
      .onConflictDoUpdate({ target: seedUpdates.name, set: { digest, appliedAt: now } });
  }

  /** Counts by status. */
  async counts(): Promise<Record<CoinStatus, number>> {
    const rows = await this.db
      .select({ status: coins.status, n: sql<number>`count(*)::int` })
      .from(coins)
      .groupBy(coins.status);
    const out: Record<CoinStatus, number> = { active: 0, inactive: 0 };
    for (const r of rows) out[r.status] = r.n;
    return out;
  }
}
