/**
 * The credential kit: one implementation of issued secrets (API keys, agent keys, tokens) for every service.
 *
 * A service gives a {@link CredentialStore} its key table (the `credentialColumns()` of `db/columns.ts` plus its own columns), the
 * prefixes of its secrets, and a mapping from a stored row to its principal (the caller as the service's routes see
 * it). The store then:
 * - issues secrets (`<prefix>` + 43 URL-safe base64 characters, 256 random bits), stores only their SHA-256 and a
 *   four-character hint, and returns the plaintext once;
 * - resolves a presented secret to `active` (with the principal), `unknown`, `revoked` or `expired`, through a
 *   per-instance `lru-cache` (60 s by default, bounded, one database load per secret at a time, negative answers
 *   cached too so a flood of wrong keys does not reach the database);
 * - revokes in one transaction (row lock; a revoked key keeps its first revocation time) and drops the secret from
 *   the cache of every instance when the transaction commits (PostgreSQL `NOTIFY <service>_credential_revoked`);
 * - clears its cache when the LISTEN connection was lost and is back (a revocation may have been missed), and tells
 *   {@link CredentialStore.watch}ers (open streams) whose credential was revoked meanwhile;
 * - lists and renders credentials for operators (never the secret).
 *
 * Other kinds of credentials implement {@link CredentialSource} (M2M JWTs: {@link JwtCredentialSource}); the HTTP side
 * (reading a header, the service's 401 body, typed principals on routes) is `src/platform/auth.ts`.
 */
import { and, desc, eq, getTableName, inArray, isNotNull, isNull, type SQL } from 'drizzle-orm';
import type { AnyPgColumn, PgTable } from 'drizzle-orm/pg-core';
import { type JWTPayload, type JWTVerifyGetKey, errors as joseErrors, jwtVerify } from 'jose';
import { LRUCache } from 'lru-cache';
import type { Clock } from './clock.ts';
import { hashApiKey, issueApiKey } from './crypto.ts';
import type { Db, Executor, Tx } from './database.ts';
import type { AppLogger } from './logger.ts';
import { Notifier } from './notifications.ts';

/** A credential table: `credentialColumns()` (and optionally `expiresAt`, db/columns.ts) next to the service's own columns. */
export type CredentialTable = PgTable & {
  id: AnyPgColumn;
  keyHash: AnyPgColumn;
  hint: AnyPgColumn;
  label: AnyPgColumn;
  createdAt: AnyPgColumn;
  revokedAt: AnyPgColumn;
  expiresAt?: AnyPgColumn;
};

/** The common fields of a stored credential row. */
export interface CredentialRowBase {
  id: number;
  keyHash: string;
  hint: string;
  label: string | null;
  createdAt: Date;
  revokedAt: Date | null;
  expiresAt?: Date | null;
}

/** A row of table `T`. */
export type CredentialRow<T extends CredentialTable> = T['$inferSelect'] & CredentialRowBase;

/** The service's own columns of `T` (what {@link CredentialStore.issue} needs besides the secret). */
export type CredentialValues<T extends CredentialTable> = Omit<
  T['$inferInsert'],
  'id' | 'keyHash' | 'hint' | 'label' | 'createdAt' | 'revokedAt' | 'expiresAt'
>;

/**
 * What a presented secret is: `active` with the caller's principal, or why it is not. `unknown` also covers a
 * secret that is not of the source's form (never looked up).
 */
export type Resolution<P> =
  | { status: 'active'; principal: P }
  | { status: 'unknown' | 'revoked' | 'expired' };

/** Anything that turns a presented secret into a principal (a key table, a JWT verifier, several of them). */
export interface CredentialSource<P> {
  resolve(secret: string): Promise<Resolution<P>>;
}

/**
 * A credential as operators see it: never the secret. Times are ISO 8601; `expiresAt` only for tables that have the
 * column. `A` is the service's attributes (tier, owner, permission, rate limit).
 */
export type CredentialRecord<A> = {
  id: number;
  hint: string;
  label: string | null;
  createdAt: string;
  revokedAt: string | null;
  expiresAt?: string | null;
} & A;

/** A newly issued credential: its row, its record, and the plaintext `key`, shown this once. */
export interface IssuedCredential<T extends CredentialTable, A> {
  row: CredentialRow<T>;
  record: CredentialRecord<A>;
  key: string;
}

/** Settings of a {@link CredentialStore}. */
export interface CredentialStoreOptions<T extends CredentialTable, P, A> {
  /** The service's name; revocations travel on `NOTIFY <service>_credential_revoked` (dashes as underscores). */
  service: string;
  table: T;
  db: Db;
  clock: Clock;
  /**
   * Prefixes of this store's secrets (`cpk_`, or `coin_demo_` and `coin_pro_`). A presented secret that is not one
   * of them followed by 43 URL-safe base64 characters resolves `unknown` without a database read.
   */
  prefixes: readonly string[];
  /**
   * The principal of an active row (read once per cache period). May read more (the owner's slug) through `db`;
   * throwing fails the request (500), so keep it to reads that cannot miss (foreign keys).
   */
  principal(row: CredentialRow<T>, db: Db): P | Promise<P>;
  /**
   * The service's attributes of a row in operator records (owner, tier, permission, rate limit); may read more (the
   * owner's slug) through `executor`.
   */
  attributes(row: CredentialRow<T>, executor: Executor): A | Promise<A>;
  /** Cache lifetime of a resolution in milliseconds (default 60,000). */
  ttlMs?: number;
  /** Resolutions kept per instance (default 10,000; least recently used first out). */
  maxEntries?: number;
  logger?: AppLogger;
}

type CachedResolution<P> =
  | { status: 'active'; principal: P; expiresAtMs: number | null }
  | { status: 'unknown' | 'revoked' | 'expired' };

const SECRET_BODY = '[A-Za-z0-9_-]{43}';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Any credential store, as the per-instance registry of stores holds them. */
type AnyStore = { cache: { delete(hash: string): unknown; clear(): void } };

/** A database failure while loading a credential (told apart from lru-cache aborting a load). */
class LoadFailure extends Error {
  constructor(cause: unknown) {
    super('credential lookup failed', { cause });
  }
}

/** The NOTIFY channel of a service's revocations. */
export function revocationChannel(service: string): string {
  return `${service.replace(/-/g, '_')}_credential_revoked`;
}

/**
 * Issued secrets of one key table; see the module comment. One instance per table per process; call
 * {@link CredentialStore.listen} once (the runtime does it for stores made with `ctx.credentialStore`).
 */
export class CredentialStore<T extends CredentialTable, P, A> implements CredentialSource<P> {
  readonly table: T;
  private readonly options: CredentialStoreOptions<T, P, A>;
  private readonly format: RegExp;
  private readonly cache: LRUCache<string, CachedResolution<P>>;
  private readonly watchers = new Map<number, Set<() => void>>();
  private readonly channel: string;
  /** The table's name: a service's stores share its channel, and a revocation names its table. */
  private readonly tableName: string;
  /**
   * The listening stores of one instance (one notifier) by channel and table: a revocation through one store clears
   * the caches of the others on the same table at once (a service may read one table through two stores, such as API
   * keys and OAuth client secrets), not when its NOTIFY comes back. Other instances learn by NOTIFY, even in the same
   * process.
   */
  private static readonly local = new WeakMap<Notifier, Map<string, Set<AnyStore>>>();
  private peers: Set<AnyStore> | undefined;

  constructor(options: CredentialStoreOptions<T, P, A>) {
    if (options.prefixes.length === 0) throw new Error('a credential store needs at least one prefix');
    this.options = options;
    this.table = options.table;
    this.channel = revocationChannel(options.service);
    this.tableName = getTableName(options.table);
    this.format = new RegExp(`^(?:${options.prefixes.map(escapeRegExp).join('|')})${SECRET_BODY}$`);
    const clock = options.clock;
    this.cache = new LRUCache<string, CachedResolution<P>>({
      max: options.maxEntries ?? 10_000,
      ttl: options.ttlMs ?? 60_000,
      // Entry ages follow the injected clock, so tests cross the cache period by moving it.
      perf: { now: () => clock.nowMs() },
      ttlResolution: 0,
      fetchMethod: (hash) => this.load(hash),
    });
  }

  /**
   * Resolves a presented secret. Never throws for a bad secret (only for a database failure).
   * @returns `active` with the principal, or `unknown` (also: not of this store's form), `revoked` or `expired`.
   */
  async resolve(secret: string): Promise<Resolution<P>> {
    if (!this.format.test(secret)) return { status: 'unknown' };
    const cached = await this.fetch(hashApiKey(secret));
    if (cached.status !== 'active') return cached;
    if (cached.expiresAtMs !== null && cached.expiresAtMs <= this.options.clock.nowMs())
      return { status: 'expired' };
    return { status: 'active', principal: cached.principal };
  }

  /**
   * Issues a secret `<prefix>` + 43 URL-safe base64 characters with the service's `values`, inside `executor`'s
   * transaction when it is one. Only its SHA-256 and last four characters are stored.
   * @param input.prefix one of the store's prefixes (default the first).
   * @param input.expiresAt for tables with `expiresAt`: when the credential stops working (null: never).
   * @throws Error for a prefix the store does not know (a programming error).
   */
  async issue(
    executor: Executor,
    input: { prefix?: string; label?: string | null; expiresAt?: Date | null; values: CredentialValues<T> },
  ): Promise<IssuedCredential<T, A>> {
    const prefix = input.prefix ?? this.options.prefixes[0]!;
    if (!this.options.prefixes.includes(prefix)) throw new Error(`unknown credential prefix ${prefix}`);
    const issued = issueApiKey(prefix);
    const row = {
      ...input.values,
      keyHash: issued.hash,
      hint: issued.hint,
      label: input.label ?? null,
      createdAt: this.options.clock.now(),
      ...(this.table.expiresAt ? { expiresAt: input.expiresAt ?? null } : {}),
    };
    const [inserted] = (await executor
      .insert(this.table as PgTable)
      .values(row as never)
      .returning()) as unknown as CredentialRow<T>[];
    // A lookup of this secret may have been cached as unknown (someone guessed it): forget it.
    this.cache.delete(issued.hash);
    return { row: inserted!, record: await this.record(inserted!, executor), key: issued.plaintext };
  }

  /**
   * Revokes credential `id` in one transaction (a savepoint inside the caller's): locks the row, sets `revokedAt`
   * (a revoked credential keeps its first revocation time) and, when the transaction commits, drops it from the cache
   * of every instance and closes the streams that {@link watch} it.
   * @param options.allowed whether the caller may revoke this row (for example: it belongs to the caller's party);
   *   when false nothing changes and the answer is `undefined`, as for an unknown id, so ownership never leaks.
   * @param options.beforeCommit runs last in the same transaction (to read what the answer needs); if it throws,
   *   nothing is revoked.
   * @returns the row after revocation, or `undefined` when there is no such credential (or it is not `allowed`).
   */
  async revoke(
    id: number,
    options: {
      executor?: Executor;
      allowed?: (row: CredentialRow<T>) => boolean;
      beforeCommit?: (tx: Tx, row: CredentialRow<T>) => Promise<void>;
    } = {},
  ): Promise<CredentialRow<T> | undefined> {
    const table = this.table;
    return (options.executor ?? this.options.db).transaction(async (tx) => {
      const [row] = (await tx
        .select()
        .from(table as PgTable)
        .where(eq(table.id, id))
        .for('update')) as CredentialRow<T>[];
      if (!row || (options.allowed && !options.allowed(row))) return undefined;
      let result = row;
      if (!row.revokedAt) {
        const [updated] = (await tx
          .update(table as PgTable)
          .set({ revokedAt: this.options.clock.now() } as never)
          .where(eq(table.id, id))
          .returning()) as unknown as CredentialRow<T>[];
        result = updated!;
        await Notifier.notify(
          tx,
          this.channel,
          JSON.stringify({ table: this.tableName, id, hash: row.keyHash }),
        );
        for (const store of this.sameTable()) store.cache.delete(row.keyHash);
      }
      await options.beforeCommit?.(tx, result);
      return result;
    });
  }

  /**
   * Revokes every active credential matching `where` (all sessions of a user, every token of a grant, a platform-wide
   * security sign-out) in `executor`'s transaction; when it commits, every instance forgets its cached resolutions of
   * this table and closes the streams watching a revoked credential.
   * @returns the ids revoked now.
   */
  async revokeWhere(where: SQL, executor: Executor = this.options.db): Promise<number[]> {
    const table = this.table;
    const revoked = (await executor
      .update(table as PgTable)
      .set({ revokedAt: this.options.clock.now() } as never)
      .where(and(where, isNull(table.revokedAt)))
      .returning({ id: table.id })) as unknown as { id: number }[];
    if (revoked.length > 0) {
      await Notifier.notify(executor, this.channel, JSON.stringify({ table: this.tableName, all: true }));
      for (const store of this.sameTable()) store.cache.clear();
    }
    return revoked.map((r) => r.id);
  }

  /**
   * Credentials newest first.
   * @param options.where the service's filter (an owner); `includeRevoked` (default false) adds revoked ones.
   */
  async list(
    options: { where?: SQL; includeRevoked?: boolean; executor?: Executor } = {},
  ): Promise<CredentialRow<T>[]> {
    const table = this.table;
    return (await (options.executor ?? this.options.db)
      .select()
      .from(table as PgTable)
      .where(and(options.where, options.includeRevoked ? undefined : isNull(table.revokedAt)))
      .orderBy(desc(table.id))) as CredentialRow<T>[];
  }

  /** One credential by id, or undefined. */
  async find(id: number, executor: Executor = this.options.db): Promise<CredentialRow<T> | undefined> {
    const table = this.table;
    const [row] = (await executor
      .select()
      .from(table as PgTable)
      .where(eq(table.id, id))
      .limit(1)) as CredentialRow<T>[];
    return row;
  }

  /** The operator record of a row (never the secret). */
  async record(row: CredentialRow<T>, executor: Executor = this.options.db): Promise<CredentialRecord<A>> {
    return {
      id: row.id,
      hint: row.hint,
      label: row.label,
      createdAt: row.createdAt.toISOString(),
      revokedAt: row.revokedAt ? row.revokedAt.toISOString() : null,
      ...(this.table.expiresAt ? { expiresAt: row.expiresAt ? row.expiresAt.toISOString() : null } : {}),
      ...(await this.options.attributes(row, executor)),
    } as CredentialRecord<A>;
  }

  /**
   * Calls `onRevoked` once when credential `id` is revoked on any instance (a long-lived stream closes itself), also
   * when the revocation happened while this instance's LISTEN connection was down (checked at reconnection).
   * @returns the function that stops watching.
   */
  watch(id: number, onRevoked: () => void): () => void {
    let set = this.watchers.get(id);
    if (!set) {
      set = new Set();
      this.watchers.set(id, set);
    }
    set.add(onRevoked);
    return () => {
      const current = this.watchers.get(id);
      current?.delete(onRevoked);
      if (current?.size === 0) this.watchers.delete(id);
    };
  }

  /**
   * Subscribes this instance to revocations made anywhere, and to the notifier's resynchronisation after a lost
   * connection (the cache is cleared and watched credentials are checked again).
   * @returns the function that unsubscribes.
   */
  async listen(notifier: Notifier): Promise<() => Promise<void>> {
    const unlisten = await notifier.listen(this.channel, (payload) => this.onRevocation(payload));
    const unresync = notifier.onResync(() => this.resync());
    const key = `${this.channel}:${this.tableName}`;
    const byTable = CredentialStore.local.get(notifier) ?? new Map<string, Set<AnyStore>>();
    CredentialStore.local.set(notifier, byTable);
    const peers = byTable.get(key) ?? new Set<AnyStore>();
    byTable.set(key, peers);
    peers.add(this as unknown as AnyStore);
    this.peers = peers;
    return async () => {
      peers.delete(this as unknown as AnyStore);
      this.peers = undefined;
      unresync();
      await unlisten();
    };
  }

  /** This store's cache and those of the other listening stores of this instance on the same table. */
  private sameTable(): AnyStore[] {
    const self = this as unknown as AnyStore;
    return this.peers ? [...new Set([...this.peers, self])] : [self];
  }

  private onRevocation(payload: string): void {
    let message: { table?: unknown; id?: unknown; hash?: unknown; all?: unknown };
    try {
      message = JSON.parse(payload) as typeof message;
    } catch {
      return;
    }
    if (message.table !== this.tableName) return;
    if (message.all === true) {
      void this.resync();
      return;
    }
    if (typeof message.hash === 'string') this.cache.delete(message.hash);
    if (typeof message.id === 'number') this.fire(message.id);
  }

  private fire(id: number): void {
    const set = this.watchers.get(id);
    if (!set) return;
    this.watchers.delete(id);
    for (const onRevoked of set) {
      try {
        onRevoked();
      } catch (err) {
        this.options.logger?.warn({ err }, 'credential watcher failed');
      }
    }
  }

  /** After a lost LISTEN connection: forget every resolution and close the streams of credentials revoked meanwhile. */
  private async resync(): Promise<void> {
    this.cache.clear();
    const ids = [...this.watchers.keys()];
    if (ids.length === 0) return;
    const table = this.table;
    try {
      const revoked = (await this.options.db
        .select({ id: table.id })
        .from(table as PgTable)
        .where(and(inArray(table.id, ids), isNotNull(table.revokedAt)))) as unknown as { id: number }[];
      for (const { id } of revoked) this.fire(id);
    } catch (err) {
      this.options.logger?.warn({ err }, 'credential resync failed');
    }
  }

  /**
   * The cached resolution of `hash`, loading it once for concurrent callers. A revocation arriving while a load is in
   * flight aborts that load (lru-cache drops it, so a value read before the revocation is never cached); the lookup
   * then starts again and reads the committed state.
   * @throws the database's error when the lookup fails.
   */
  private async fetch(hash: string): Promise<CachedResolution<P>> {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        return (await this.cache.fetch(hash)) ?? { status: 'unknown' };
      } catch (err) {
        if (err instanceof LoadFailure) throw err.cause;
      }
    }
    // Revocations kept arriving during the loads: answer from the database without caching.
    return this.read(hash);
  }

  private async load(hash: string): Promise<CachedResolution<P>> {
    try {
      return await this.read(hash);
    } catch (err) {
      throw new LoadFailure(err);
    }
  }

  private async read(hash: string): Promise<CachedResolution<P>> {
    const table = this.table;
    const [row] = (await this.options.db
      .select()
      .from(table as PgTable)
      .where(eq(table.keyHash, hash))
      .limit(1)) as CredentialRow<T>[];
    if (!row) return { status: 'unknown' };
    if (row.revokedAt) return { status: 'revoked' };
    return {
      status: 'active',
      principal: await this.options.principal(row, this.options.db),
      expiresAtMs: row.expiresAt ? row.expiresAt.getTime() : null,
    };
  }
}

/** Settings of a {@link JwtCredentialSource}. */
export interface JwtCredentialSourceOptions<P> {
  /** The keys that may have signed: a JWKS (`createLocalJWKSet`, `createRemoteJWKSet`) or a key getter. */
  keys: JWTVerifyGetKey;
  /** Required `iss`. */
  issuer: string;
  /** Required `aud` (the service's public URL, RFC 8707 / RFC 9068). */
  audience: string;
  /** Accepted signature algorithms (never `none`; default RS256 and ES256). */
  algorithms?: string[];
  clock: Clock;
  /** Allowed clock skew for `exp` / `nbf` in seconds (default 30). */
  clockToleranceSeconds?: number;
  /** Required `typ` header, e.g. `at+jwt` for RFC 9068 access tokens (default: not checked). */
  typ?: string;
  /** Claims that must be present (default `exp`: a token that never expires is refused). */
  requiredClaims?: string[];
  /**
   * The principal of a verified token's claims, or `'revoked'` (its client or grant was revoked) or `'unknown'` (the
   * claims name nobody this service knows).
   */
  principal(claims: JWTPayload): Promise<P | 'revoked' | 'unknown'> | P | 'revoked' | 'unknown';
}

/**
 * Machine-to-machine bearer tokens: JWT access tokens (RFC 9068) verified with `jose` (signature by one of `keys`
 * with an accepted algorithm, `iss`, `aud`, `exp` (required) and `nbf` on the injected clock, `typ` when set). An
 * expired token is `expired`;
 * any other verification failure (bad signature, another issuer or audience, `alg: none`, not a JWT) is `unknown`.
 */
export class JwtCredentialSource<P> implements CredentialSource<P> {
  constructor(private readonly options: JwtCredentialSourceOptions<P>) {}

  async resolve(secret: string): Promise<Resolution<P>> {
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(secret, this.options.keys, {
        issuer: this.options.issuer,
        audience: this.options.audience,
        algorithms: this.options.algorithms ?? ['RS256', 'ES256'],
        currentDate: this.options.clock.now(),
        clockTolerance: this.options.clockToleranceSeconds ?? 30,
        requiredClaims: this.options.requiredClaims ?? ['exp'],
        ...(this.options.typ === undefined ? {} : { typ: this.options.typ }),
      }));
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) return { status: 'expired' };
      if (err instanceof joseErrors.JOSEError || err instanceof TypeError) return { status: 'unknown' };
      throw err;
    }
    const principal = await this.options.principal(claims);
    if (principal === 'revoked') return { status: 'revoked' };
    if (principal === 'unknown') return { status: 'unknown' };
    return { status: 'active', principal: principal as P };
  }
}

/**
 * Several sources behind one header: the first source whose `accepts(secret)` is true resolves it (by prefix for
 * keys, by shape for JWTs); a secret no source accepts is `unknown`.
 */
export function firstAccepting<P>(
  sources: readonly { accepts(secret: string): boolean; source: CredentialSource<P> }[],
): CredentialSource<P> {
  return {
    resolve: async (secret) => {
      const match = sources.find((s) => s.accepts(secret));
      return match ? match.source.resolve(secret) : { status: 'unknown' };
    },
  };
}
