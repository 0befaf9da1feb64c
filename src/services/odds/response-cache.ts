import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { LRUCache } from 'lru-cache';

const gzip = promisify(zlib.gzip);
const brotli = promisify(zlib.brotliCompress);

/** The content codings a prepared answer can be sent in, in order of preference on a tie. */
export const ENCODINGS = ['br', 'gzip', 'identity'] as const;
export type Encoding = (typeof ENCODINGS)[number];

/**
 * Brotli quality 5: on a heavy soccer day (3.4 MB of JSON) about 20 % smaller than gzip level 6 for about 1.5 times
 * its CPU (~60 ms once per answer and change); qualities above 6 cost several times more for 1-3 % less.
 */
const BROTLI_QUALITY = 5;

/** One computed answer: its JSON bytes, the compressed bytes made on first demand, and what the lookback check needs. */
export class PreparedBody {
  private gz: Promise<Buffer> | undefined;
  private br: Promise<Buffer> | undefined;

  constructor(
    readonly identity: Buffer,
    /** The event's start (event-by-id answers), for the plan's lookback check on a cache hit. */
    readonly eventDate?: Date,
  ) {}

  /** The gzip bytes (level 6), compressed once per answer (in the libuv pool, off the event loop). */
  gzip(): Promise<Buffer> {
    this.gz ??= gzip(this.identity, { level: 6 });
    return this.gz;
  }

  /** The brotli bytes (quality 5, text mode), compressed once per answer (in the libuv pool, off the event loop). */
  brotli(): Promise<Buffer> {
    this.br ??= brotli(this.identity, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
        [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: this.identity.length,
      },
    });
    return this.br;
  }

  /** The bytes in `encoding`. */
  encoded(encoding: Encoding): Promise<Buffer> | Buffer {
    if (encoding === 'br') return this.brotli();
    if (encoding === 'gzip') return this.gzip();
    return this.identity;
  }

  /** Bytes held (the JSON; compressed copies add about a tenth). */
  get size(): number {
    return this.identity.length;
  }
}

/** Bounds of a {@link ResponseCache}. */
export interface ResponseCacheLimits {
  /** Most answers kept. */
  maxEntries: number;
  /** Most bytes kept (sum of `sizeOf` of the computed answers). */
  maxBytes: number;
}

/**
 * Computed answers of the events endpoints, kept per instance and valid for one generation of the change feed: any
 * committed change (here or on another instance, through NOTIFY) moves the generation, which drops every entry at
 * once. An `lru-cache` per generation: bounded by entries and by bytes (`sizeOf`), the least recently used answer
 * first out; concurrent misses of one key share one computation (`fetch`); a failed computation is not kept. A new
 * generation starts a new cache instead of clearing the old one, so computations still running for the old one
 * answer their callers (clearing would abort them) and then go with it.
 */
export class ResponseCache<T extends object> {
  private generation = Number.NEGATIVE_INFINITY;
  private cache: LRUCache<string, T, () => Promise<T>>;
  private readonly limits: ResponseCacheLimits;

  constructor(
    private readonly sizeOf: (value: T) => number = () => 0,
    limits: Partial<ResponseCacheLimits> = {},
  ) {
    this.limits = { maxEntries: 500, maxBytes: 256 * 1024 * 1024, ...limits };
    this.cache = this.newCache();
  }

  private newCache(): LRUCache<string, T, () => Promise<T>> {
    return new LRUCache<string, T, () => Promise<T>>({
      max: this.limits.maxEntries,
      maxSize: this.limits.maxBytes,
      // lru-cache needs a positive size: an empty answer counts as one byte.
      sizeCalculation: (value) => Math.max(1, this.sizeOf(value)),
      fetchMethod: (_key, _stale, { context }) => context(),
    });
  }

  /** Number of answers held (tests). */
  get entryCount(): number {
    return this.cache.size;
  }

  /** Bytes held by computed answers (tests). */
  get byteCount(): number {
    return this.cache.calculatedSize;
  }

  /**
   * The answer for `key` in `generation`, computing it with `compute` on a miss (read the generation before calling).
   * A failed computation is not cached; an answer computed for an older generation than the current one is served to
   * its caller but not kept.
   */
  async getOrCompute(key: string, generation: number, compute: () => Promise<T>): Promise<T> {
    if (generation > this.generation) {
      this.generation = generation;
      this.cache = this.newCache();
    } else if (generation < this.generation) {
      return compute();
    }
    const value = await this.cache.fetch(key, { context: compute });
    // fetch answers the computed value even when it is too large to keep; undefined (no value and no stale one) is
    // not expected, and then this caller computes alone.
    return value ?? compute();
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
