import { promisify } from 'node:util';
import zlib from 'node:zlib';

const gzip = promisify(zlib.gzip);

/** One computed answer: its JSON bytes, the gzip bytes made on first demand, and what the lookback check needs. */
export class PreparedBody {
  private gz: Promise<Buffer> | undefined;

  constructor(
    readonly identity: Buffer,
    /** The event's start (event-by-id answers), for the plan's lookback check on a cache hit. */
    readonly eventDate?: Date,
  ) {}

  /** The gzip bytes (level 6), compressed once per answer. */
  gzip(): Promise<Buffer> {
    this.gz ??= gzip(this.identity, { level: 6 });
    return this.gz;
  }
}

/**
 * Computed answers of the events endpoints, kept per instance and valid for one generation of the change feed: any
 * committed change (here or on another instance, through NOTIFY) moves the generation and so invalidates every entry.
 * Concurrent misses of one key share one computation. Bounded: at most `maxEntries` answers, the oldest dropped first.
 */
export class ResponseCache<T> {
  private readonly entries = new Map<string, { generation: number; value: Promise<T> }>();

  constructor(private readonly maxEntries = 500) {}

  /**
   * The answer for `key` in `generation`, computing it with `compute` on a miss (read the generation before calling).
   * A failed computation is not cached.
   */
  getOrCompute(key: string, generation: number, compute: () => Promise<T>): Promise<T> {
    const hit = this.entries.get(key);
    if (hit && hit.generation === generation) return hit.value;
    if (this.entries.size >= this.maxEntries && !hit) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    const value = compute();
    const entry = { generation, value };
    this.entries.set(key, entry);
    value.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return value;
  }
}

/** A stable cache key of a route and its query (parameters sorted, so their order does not matter). */
export function cacheKey(route: string, query: Record<string, unknown>): string {
  const parts = Object.keys(query)
    .filter((k) => query[k] !== undefined)
    .sort()
    .map((k) => `${k}=${String(query[k])}`);
  return `${route}?${parts.join('&')}`;
}
