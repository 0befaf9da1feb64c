import { desc, eq } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.ts';
import { parseHttpUrl } from '../../platform/config.ts';
import type { Db } from '../../platform/database.ts';
import { ConfigError } from '../../platform/errors.ts';
import type { OutboundHttp } from '../../platform/outbound-http.ts';
import { parseCoinList } from './coin-list.ts';
import type { CoinStore } from './coin-store.ts';
import { upstreamSyncs } from './db/schema.ts';

/**
 * The optional upstream mirror: a CoinGecko-compatible API (`COINS_UPSTREAM_URL`, for example
 * `https://api.coingecko.com/api/v3`) whose `/coins/list?include_platform=true` is copied into the store by a
 * scheduled job. `COINS_UPSTREAM_KEY` is sent in `COINS_UPSTREAM_KEY_HEADER` (default `x-cg-demo-api-key`).
 */
export interface UpstreamConfig {
  baseUrl: string;
  key: string | undefined;
  keyHeader: string;
}

/** Reads the upstream settings; undefined when `COINS_UPSTREAM_URL` is unset. Throws ConfigError when invalid. */
export function readUpstreamConfig(
  env: Readonly<Record<string, string | undefined>>,
): UpstreamConfig | undefined {
  const raw = env.COINS_UPSTREAM_URL?.trim();
  if (!raw) return undefined;
  const url = parseHttpUrl('COINS_UPSTREAM_URL', raw);
  const keyHeader = env.COINS_UPSTREAM_KEY_HEADER?.trim() || 'x-cg-demo-api-key';
  if (!/^[A-Za-z0-9-]+$/.test(keyHeader))
    throw new ConfigError('COINS_UPSTREAM_KEY_HEADER must be an HTTP header name');
  return {
    baseUrl: url.toString().replace(/\/$/, ''),
    key: env.COINS_UPSTREAM_KEY?.trim() || undefined,
    keyHeader,
  };
}

/** A mirror run as recorded in `coins.upstream_syncs`. */
export interface SyncRun {
  id: number;
  startedAt: string;
  finishedAt: string | null;
  status: 'running' | 'succeeded' | 'failed';
  inserted: number;
  updated: number;
  deactivated: number;
  error: string | null;
}

const MAX_LIST_BYTES = 64 * 1024 * 1024;

/**
 * Copies the upstream list: the active list replaces our active coins (coins it no longer lists become inactive),
 * then the inactive list is merged as inactive. Each list is validated whole before anything is written; a failed
 * fetch or an invalid list changes nothing and is recorded with its reason.
 */
export class UpstreamMirror {
  constructor(
    private readonly config: UpstreamConfig,
    private readonly outbound: OutboundHttp,
    private readonly store: CoinStore,
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  async run(): Promise<SyncRun> {
    const [started] = await this.db
      .insert(upstreamSyncs)
      .values({ startedAt: this.clock.now(), status: 'running' })
      .returning();
    const id = started!.id;
    try {
      const active = parseCoinList(await this.fetchList('active'));
      const inactive = parseCoinList(await this.fetchList('inactive'));
      const a = await this.store.importCoins(active, { mode: 'replace', status: 'active' });
      const b = await this.store.importCoins(inactive, { mode: 'merge', status: 'inactive' });
      const [row] = await this.db
        .update(upstreamSyncs)
        .set({
          status: 'succeeded',
          finishedAt: this.clock.now(),
          inserted: a.inserted + b.inserted,
          updated: a.updated + b.updated,
          deactivated: a.deactivated,
        })
        .where(eq(upstreamSyncs.id, id))
        .returning();
      return toRun(row!);
    } catch (err) {
      const [row] = await this.db
        .update(upstreamSyncs)
        .set({ status: 'failed', finishedAt: this.clock.now(), error: (err as Error).message.slice(0, 500) })
        .where(eq(upstreamSyncs.id, id))
        .returning();
      return toRun(row!);
    }
  }

  private async fetchList(status: 'active' | 'inactive'): Promise<unknown> {
    const url = `${this.config.baseUrl}/coins/list?include_platform=true&status=${status}`;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.config.key) headers[this.config.keyHeader] = this.config.key;
    const res = await this.outbound.send(url, { headers, timeoutMs: 60_000, maxBodyBytes: MAX_LIST_BYTES });
    if (res.status !== 200) throw new Error(`upstream answered HTTP ${res.status} for the ${status} list`);
    if (res.truncated) throw new Error(`upstream ${status} list is larger than ${MAX_LIST_BYTES} bytes`);
    try {
      return JSON.parse(res.body.toString('utf8'));
    } catch {
      throw new Error(`upstream ${status} list is not valid JSON`);
    }
  }

  async recentRuns(limit = 20): Promise<SyncRun[]> {
    const rows = await this.db.select().from(upstreamSyncs).orderBy(desc(upstreamSyncs.id)).limit(limit);
    return rows.map(toRun);
  }
}

function toRun(row: typeof upstreamSyncs.$inferSelect): SyncRun {
  return {
    id: row.id,
    startedAt: row.startedAt.toISOString(),
    finishedAt: row.finishedAt ? row.finishedAt.toISOString() : null,
    status: row.status,
    inserted: row.inserted,
    updated: row.updated,
    deactivated: row.deactivated,
    error: row.error,
  };
}
