import { createHash } from 'node:crypto';
import { and, eq, lte, type SQL, sql } from 'drizzle-orm';
import type { Clock } from './clock.ts';
import { type Db, NamedStatement, type Tx } from './database.ts';
import { idempotencyKeys } from './db/schema.ts';
import { ApiError, PLATFORM_ERRORS, type PlatformErrorCode, platformError } from './errors.ts';

/** What an idempotent operation answered: replayed verbatim for a repeat of the same request. */
export interface IdempotentResponse {
  status: number;
  body: unknown;
}

/** The outcome of {@link IdempotencyStore.run}: `replayed` is true when `response` is the stored first answer. */
export interface IdempotentOutcome {
  replayed: boolean;
  response: IdempotentResponse;
}

/**
 * Thrown when a key is reused with a different request (status 409, code `idempotency_key_reused`).
 * Services map it to their own error body.
 */
export class IdempotencyConflictError extends ApiError {
  constructor() {
    super(
      PLATFORM_ERRORS.idempotency_key_reused,
      'idempotency_key_reused' satisfies PlatformErrorCode,
      'This idempotency key was already used with a different request.',
    );
    this.name = 'IdempotencyConflictError';
  }
}

/**
 * SHA-256 (hex) over a canonical form of the request: method, path and the JSON body with object keys sorted,
 * so key order and whitespace do not make two equal requests differ.
 */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method.toUpperCase()} ${path}\n${canonicalJson(body)}`)
    .digest('hex');
}

/** JSON with object keys sorted recursively (arrays keep their order). */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return '';
  return JSON.stringify(value, (_k, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      return Object.fromEntries(
        Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
      );
    }
    return v;
  });
}

/** An idempotency record as its statements read it. */
interface StoredRecord {
  fingerprint: string;
  responseStatus: number | null;
  response: unknown;
  expiresAt: Date;
}

/**
 * A value a caller checks before an idempotent request replays or runs (a precondition such as an account's readiness),
 * read by {@link IdempotencyStore.peek} in the same statement as the key's record: one round trip instead of two.
 * `value` is a scalar SQL expression with its own `sql.placeholder`s; `name` names its statement (one per expression).
 */
export interface IdempotencyGuard {
  name: string;
  value: SQL;
}

/** What {@link IdempotencyStore.peek} read: the guard's value, and the key's stored answer once the guard passed. */
export interface IdempotencyPeek<V> {
  /** The guard's value (null when the expression is SQL null). */
  guard: V | null;
  /**
   * The stored answer exactly as {@link IdempotencyStore.recorded} decides it from the same read.
   * @throws IdempotencyConflictError when the record holds another fingerprint.
   */
  recorded(): IdempotentOutcome | undefined;
}

/**
 * The claim of an idempotency key as SQL, the one rule of every claim: a new record, or an expired one replaced (an
 * expired record no longer binds its key); an unexpired record is left as it is (the condition fails; its row is
 * locked, so a first use still in flight is waited for, then seen committed). Returns the claimed key (no row when
 * the key is taken, or when `guard` is false: then nothing is written).
 *
 * Placeholders: `scope`, `key`, `fingerprint`, `responseStatus`, `response` (JSON text), `now`, `expiresAt` (ISO
 * 8601; {@link IdempotencyStore.claimValues} makes them). A service composes it into its own prepared statement as a
 * data-modifying CTE when its whole operation is one statement guarded by `guard` (one round trip, no transaction);
 * the platform's own claim uses it with `true`.
 */
export function claimKeySql(guard: SQL): SQL {
  const p = (name: string) => sql.placeholder(name);
  return sql`insert into ${idempotencyKeys} as k
      (scope, key, fingerprint, response_status, response, created_at, expires_at)
    select ${p('scope')}, ${p('key')}, ${p('fingerprint')}, ${p('responseStatus')}::int,
      ${p('response')}::jsonb, ${p('now')}::timestamptz, ${p('expiresAt')}::timestamptz
    where ${guard}
    on conflict (scope, key) do update set fingerprint = excluded.fingerprint,
      response_status = excluded.response_status, response = excluded.response,
      created_at = excluded.created_at, expires_at = excluded.expires_at
      where k.expires_at <= ${p('now')}::timestamptz
    returning k.key`;
}

/**
 * The platform idempotency store (docs/architecture.md, "Conventions", idempotency).
 *
 * {@link IdempotencyStore.run} executes an operation and its idempotency record in ONE transaction:
 * - first use of (scope, key): the operation runs; its answer is stored with the request fingerprint;
 * - same key, same fingerprint, record unexpired: the stored answer is returned (`replayed: true`), nothing runs;
 * - same key, other fingerprint: {@link IdempotencyConflictError};
 * - concurrent use of one key: the second transaction's insert waits on the first's row lock, then sees the
 *   committed record and replays it (or runs, if the first rolled back). Exactly one execution.
 * If the operation throws, nothing is stored, so a retry runs it again.
 */
export class IdempotencyStore {
  /**
   * The statements of every idempotent request, built once and run by name (also inside the transaction): the record
   * of (scope, key), and the claim of a key.
   */
  private readonly statements;
  /** The statements of {@link peek}, one per guard name, built on first use. */
  private readonly peeks = new Map<string, NamedStatement<StoredRecord & { guard: unknown }>>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {
    const p = (name: string) => sql.placeholder(name);
    this.statements = {
      record: new NamedStatement<StoredRecord>(
        'platform_idempotency_record',
        sql`select fingerprint, response_status as "responseStatus", response, expires_at as "expiresAt"
          from ${idempotencyKeys} where scope = ${p('scope')} and key = ${p('key')}`,
      ),
      claim: new NamedStatement<{ key: string }>('platform_idempotency_claim', claimKeySql(sql`true`)),
    };
  }

  /**
   * The placeholder values of {@link claimKeySql} for a key claimed with its known answer (as {@link runKnown}
   * claims it).
   */
  claimValues(
    params: { scope: string; key: string; fingerprint: string; ttlMs: number },
    response: IdempotentResponse,
  ): Record<string, unknown> {
    const now = this.clock.now();
    return {
      scope: params.scope,
      key: params.key,
      fingerprint: params.fingerprint,
      responseStatus: response.status,
      response: JSON.stringify(response.body ?? null),
      now: now.toISOString(),
      expiresAt: new Date(now.getTime() + params.ttlMs).toISOString(),
    };
  }

  /**
   * @param scope who owns the key space (`payments:<merchantId>`): keys of different scopes never collide.
   * @param ttlMs how long the record is kept, in milliseconds (payments: 48 h).
   */
  async run(
    params: { scope: string; key: string; fingerprint: string; ttlMs: number },
    operation: (tx: Tx) => Promise<IdempotentResponse>,
  ): Promise<IdempotentOutcome> {
    return this.claimThen(params, undefined, operation);
  }

  /**
   * {@link run} for an operation whose answer is known before it runs (its ids are made by the caller): the record
   * is written with `response` by the statement that claims the key, so the transaction has one statement fewer.
   * The same guarantees as {@link run}: if `operation` throws, nothing is stored (the claim rolls back with it).
   */
  async runKnown(
    params: { scope: string; key: string; fingerprint: string; ttlMs: number },
    response: IdempotentResponse,
    operation: (tx: Tx) => Promise<void>,
  ): Promise<IdempotentOutcome> {
    return this.claimThen(params, response, async (tx) => {
      await operation(tx);
      return response;
    });
  }

  private async claimThen(
    params: { scope: string; key: string; fingerprint: string; ttlMs: number },
    known: IdempotentResponse | undefined,
    operation: (tx: Tx) => Promise<IdempotentResponse>,
  ): Promise<IdempotentOutcome> {
    const now = this.clock.now();
    return this.db.transaction(async (tx) => {
      const claimed = await this.statements.claim.rows(tx, {
        scope: params.scope,
        key: params.key,
        fingerprint: params.fingerprint,
        responseStatus: known ? known.status : null,
        response: known ? JSON.stringify(known.body ?? null) : null,
        now: now.toISOString(),
        expiresAt: new Date(now.getTime() + params.ttlMs).toISOString(),
      });
      if (claimed.length === 0) {
        const [existing] = await this.statements.record.rows(tx, { scope: params.scope, key: params.key });
        if (!existing)
          throw platformError(
            'idempotency_key_in_use',
            'A request with this idempotency key is in progress; retry.',
          );
        if (existing.fingerprint !== params.fingerprint) throw new IdempotencyConflictError();
        return {
          replayed: true,
          response: { status: existing.responseStatus ?? 200, body: existing.response },
        };
      }
      const response = await operation(tx);
      if (!known)
        await tx
          .update(idempotencyKeys)
          .set({
            responseStatus: response.status,
            response: sql`${JSON.stringify(response.body ?? null)}::jsonb`,
          })
          .where(and(eq(idempotencyKeys.scope, params.scope), eq(idempotencyKeys.key, params.key)));
      return { replayed: false, response };
    });
  }

  /**
   * The stored answer of a committed, unexpired record of (scope, key) in one read and no transaction: the fast
   * path of a replay, before {@link run}. Undefined when there is none (never used, expired, or its first request
   * still in flight: uncommitted, so invisible here); the caller then calls {@link run}, which decides.
   * @throws IdempotencyConflictError when the record holds another fingerprint.
   */
  async recorded(params: {
    scope: string;
    key: string;
    fingerprint: string;
  }): Promise<IdempotentOutcome | undefined> {
    const [existing] = await this.statements.record.rows(this.db, {
      scope: params.scope,
      key: params.key,
    });
    return this.replayOf(existing, params.fingerprint);
  }

  /**
   * {@link recorded}, with `guard` read in the same statement (its placeholders filled from `values`): the caller checks
   * the guard's value first, then asks for the record's decision ({@link IdempotencyPeek.recorded}).
   */
  async peek<V>(
    params: { scope: string; key: string; fingerprint: string },
    guard: IdempotencyGuard,
    values: Record<string, unknown>,
  ): Promise<IdempotencyPeek<V>> {
    let statement = this.peeks.get(guard.name);
    if (!statement) {
      statement = new NamedStatement(
        `platform_idempotency_peek_${guard.name}`,
        sql`select (${guard.value}) as guard, k.fingerprint, k.response_status as "responseStatus", k.response,
            k.expires_at as "expiresAt"
          from (select 1) one
          left join ${idempotencyKeys} k on k.scope = ${sql.placeholder('scope')} and k.key = ${sql.placeholder('key')}`,
      );
      this.peeks.set(guard.name, statement);
    }
    const [row] = await statement.rows(this.db, { ...values, scope: params.scope, key: params.key });
    const existing = row === undefined || row.fingerprint === null ? undefined : row;
    return {
      guard: (row?.guard ?? null) as V | null,
      recorded: () => this.replayOf(existing, params.fingerprint),
    };
  }

  /** The replay of a record read outside a transaction (module comment of {@link recorded}). */
  private replayOf(existing: StoredRecord | undefined, fingerprint: string): IdempotentOutcome | undefined {
    if (!existing || existing.expiresAt <= this.clock.now()) return undefined;
    if (existing.fingerprint !== fingerprint) throw new IdempotencyConflictError();
    return {
      replayed: true,
      response: { status: existing.responseStatus ?? 200, body: existing.response },
    };
  }

  /** Deletes expired records; returns how many. Run by the platform's hourly job. */
  async prune(): Promise<number> {
    const deleted = await this.db
      .delete(idempotencyKeys)
      .where(lte(idempotencyKeys.expiresAt, this.clock.now()))
      .returning({ key: idempotencyKeys.key });
    return deleted.length;
  }
}
