import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { Clock } from '../../platform/clock.ts';
import type { CoinRow, CoinStatus, CoinStore } from './coin-store.ts';

const gzip = promisify(zlib.gzip);
const brotli = promisify(zlib.brotliCompress);

/** Who reads a snapshot: the public tier (demo keys) or paid tiers (pro keys). */
export type Audience = 'public' | 'paid';

/**
 * Refresh intervals of the spec (section D, Limits): the public tier sees a snapshot refreshed every 30 minutes,
 * paid tiers every 5 minutes. Snapshots are aligned to wall-clock boundaries (:00 and :30 for public; every fifth
 * minute for paid), so every instance switches at the same moments.
 */
export const REFRESH_INTERVAL_MS: Record<Audience, number> = { public: 30 * 60_000, paid: 5 * 60_000 };

/** One serialized answer of `/coins/list`: identity, gzip and brotli bytes, prepared once per snapshot. */
export interface SnapshotBody {
  identity: Buffer;
  gzip: Buffer;
  br: Buffer;
  /** Strong ETag over the identity bytes: `"<base64url SHA-256, 27 chars>"`. */
  etag: string;
  /** When the snapshot's data was read. */
  takenAt: Date;
  /** When the next snapshot of this audience begins (the data may change then). */
  refreshAt: Date;
  count: number;
}

interface Snapshot {
  epoch: number;
  takenAt: Date;
  rows: Promise<CoinRow[]>;
  bodies: Map<string, Promise<SnapshotBody>>;
}

/**
 * Per-instance cache of the coin list, one snapshot per audience and refresh period. The first request of a period
 * reads the store once; each variant (status x include_platform) is serialized and compressed once, then served as
 * bytes to every request of the period. Concurrent first requests share one read (single flight).
 */
export class SnapshotCache {
  private readonly snapshots = new Map<Audience, Snapshot>();

  constructor(
    private readonly store: CoinStore,
    private readonly clock: Clock,
  ) {}

  /** The answer for `audience` with `status` coins, with or without `platforms`. */
  async get(
    audience: Audience,
    options: { status: CoinStatus; includePlatform: boolean },
  ): Promise<SnapshotBody> {
    const interval = REFRESH_INTERVAL_MS[audience];
    const nowMs = this.clock.nowMs();
    const epoch = Math.floor(nowMs / interval);
    let snapshot = this.snapshots.get(audience);
    if (!snapshot || snapshot.epoch !== epoch) {
      const rows = this.store.all();
      snapshot = { epoch, takenAt: new Date(nowMs), rows, bodies: new Map() };
      this.snapshots.set(audience, snapshot);
      const current = snapshot;
      rows.catch(() => {
        // A failed read must not stick for the whole period: the next request reads again.
        if (this.snapshots.get(audience) === current) this.snapshots.delete(audience);
      });
    }
    const variant = `${options.status}:${options.includePlatform ? 'p' : '-'}`;
    let body = snapshot.bodies.get(variant);
    if (!body) {
      const s = snapshot;
      body = buildBody(s, options, new Date((epoch + 1) * interval));
      s.bodies.set(variant, body);
      body.catch(() => s.bodies.delete(variant));
    }
    return body;
  }

  /** Forgets every snapshot (the next request reads the store). Operator use only; the tiers' periods still apply. */
  clear(): void {
    this.snapshots.clear();
  }
}

async function buildBody(
  snapshot: Snapshot,
  options: { status: CoinStatus; includePlatform: boolean },
  refreshAt: Date,
): Promise<SnapshotBody> {
  const rows = (await snapshot.rows).filter((r) => r.status === options.status);
  const list = options.includePlatform
    ? rows.map((r) => ({ id: r.id, symbol: r.symbol, name: r.name, platforms: r.platforms }))
    : rows.map((r) => ({ id: r.id, symbol: r.symbol, name: r.name }));
  const identity = Buffer.from(JSON.stringify(list), 'utf8');
  const [gz, br] = await Promise.all([
    gzip(identity, { level: 9 }),
    brotli(identity, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: 9,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: identity.length,
        [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
      },
    }),
  ]);
  const etag = `"${createHash('sha256').update(identity).digest('base64url').slice(0, 27)}"`;
  return { identity, gzip: gz, br, etag, takenAt: snapshot.takenAt, refreshAt, count: list.length };
}
