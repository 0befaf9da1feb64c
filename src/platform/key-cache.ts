import type { Clock } from './clock.ts';
import type { Executor } from './database.ts';
import { Notifier } from './notifications.ts';

/**
 * A per-instance cache of API-key lookups by key hash, for services that authenticate every request.
 *
 * Entries live `ttlMs` (default 60 s). A revocation must reach every instance at once: the service calls
 * {@link KeyCache.revoked} inside the transaction that revokes the key, which sends the hash on a
 * PostgreSQL `NOTIFY` channel; every instance {@link KeyCache.listen}s on it and drops the entry on commit.
 * Negative answers (unknown keys) are cached too, so a flood of wrong keys does not reach the database.
 */
export class KeyCache<T> {
  private readonly entries = new Map<string, { value: T; expiresAtMs: number }>();
  private readonly pending = new Map<string, Promise<T>>();

  /**
   * @param channel the NOTIFY channel of this service's revocations (for example `coins_api_key_revoked`).
   * @param maxEntries entries kept at most; the cache is cleared when full.
   */
  constructor(
    private readonly channel: string,
    private readonly clock: Clock,
    private readonly ttlMs = 60_000,
    private readonly maxEntries = 10_000,
  ) {}

  /** The cached value for `hash`, or `load(hash)` (one load at a time per hash), cached for `ttlMs`. */
  async get(hash: string, load: (hash: string) => Promise<T>): Promise<T> {
    const now = this.clock.nowMs();
    const hit = this.entries.get(hash);
    if (hit && hit.expiresAtMs > now) return hit.value;
    let loading = this.pending.get(hash);
    if (!loading) {
      loading = load(hash).finally(() => this.pending.delete(hash));
      this.pending.set(hash, loading);
    }
    const value = await loading;
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(hash, { value, expiresAtMs: now + this.ttlMs });
    return value;
  }

  /** Drops `hash` here and, through `executor`'s transaction, on every instance once it commits. */
  async revoked(executor: Executor, hash: string): Promise<void> {
    await Notifier.notify(executor, this.channel, hash);
    this.entries.delete(hash);
  }

  /** Subscribes this instance to revocations; returns the unsubscribe function. */
  listen(notifier: Notifier): Promise<() => Promise<void>> {
    return notifier.listen(this.channel, (hash) => this.entries.delete(hash));
  }
}
