/**
 * The keys that sign a service's own tokens (RFC 7515 / RFC 7517): ES256 key pairs generated with `jose`, one active
 * at a time, rotatable by the operator, published in the service's JWKS while any token they signed may still be
 * valid. A service gives it its key table (`signingKeyColumns()` of `db/columns.ts`).
 *
 * - The private JWK is sealed with the platform SecretBox (AES-256-GCM, associated data bound to the `kid`); only the
 *   active key keeps it: a rotation erases the retired key's private half.
 * - A retired key stays published until `retiredAt + maxTokenTtlSeconds + leeway`, where `maxTokenTtlSeconds` is the
 *   longest token lifetime any instance signed with it (an instance with a longer configured lifetime raises it
 *   before signing), so every token it signed has expired before its key disappears.
 * - Every instance keeps the keys in memory; a rotation is announced on `NOTIFY <service>_signing_keys` and each
 *   instance reloads. A token whose `kid` is not known here triggers one reload (at most one a second), which covers a
 *   token signed by a key newer than this instance's notification.
 */
import { randomBytes } from 'node:crypto';
import { eq, isNull, sql } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import {
  type CryptoKey,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
  type JWTPayload,
  type JWTVerifyGetKey,
  errors as joseErrors,
  SignJWT,
} from 'jose';
import type { Clock } from './clock.ts';
import type { SecretBox } from './crypto.ts';
import type { Db, Tx } from './database.ts';
import type { signingKeyColumns } from './db/columns.ts';
import { Notifier } from './notifications.ts';

/** The signature algorithm of the tokens (ECDSA P-256 with SHA-256, RFC 7518 section 3.4). */
export const SIGNING_ALGORITHM = 'ES256';

/** A signing-key table: `signingKeyColumns()` of `db/columns.ts`. */
export type SigningKeyTable = PgTable & { [K in keyof ReturnType<typeof signingKeyColumns>]: SQLColumn };
type SQLColumn = Parameters<typeof eq>[0];

/** A stored key. */
interface KeyRow {
  kid: string;
  alg: string;
  publicJwk: Record<string, unknown>;
  privateJwkSealed: string | null;
  maxTokenTtlSeconds: number;
  createdAt: Date;
  retiredAt: Date | null;
}

/** A key as operators see it. */
export interface SigningKeyRecord {
  kid: string;
  alg: string;
  status: 'active' | 'retired' | 'expired';
  createdAt: Date;
  retiredAt: Date | null;
  /** Until when the key is in the JWKS (null while active). */
  publishedUntil: Date | null;
}

/** The active key, ready to sign. */
export interface ActiveKey {
  kid: string;
  privateKey: CryptoKey;
  maxTokenTtlSeconds: number;
}

/** The signing keys of one service (see the module comment). */
export class SigningKeys {
  private readonly table: SigningKeyTable;
  private readonly channel: string;
  private readonly lock: ReturnType<typeof sql>;
  private readonly sealPrefix: string;
  private rows: KeyRow[] | undefined;
  private loading: Promise<KeyRow[]> | undefined;
  private active: ActiveKey | undefined;
  private publicKeys = new Map<string, Promise<CryptoKey>>();
  private lastUnknownKidReloadMs = Number.NEGATIVE_INFINITY;
  /** Moves on every change: a load that started before it is not kept. */
  private generation = 0;

  /**
   * @param options.service the service's name: its NOTIFY channel (`<service>_signing_keys`), advisory lock and the
   *   associated data of sealed private keys.
   * @param options.table the service's key table.
   * @param options.tokenTtlSeconds the lifetime this instance gives its tokens.
   * @param options.leewaySeconds the clock tolerance of verification (a retired key stays published this much longer).
   */
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly secrets: SecretBox,
    private readonly options: {
      service: string;
      table: SigningKeyTable;
      tokenTtlSeconds: number;
      leewaySeconds: number;
      /** The associated-data prefix of sealed keys (default `<service>:signing-key`). */
      sealPrefix?: string;
    },
  ) {
    this.table = options.table;
    this.channel = `${options.service.replace(/-/g, '_')}_signing_keys`;
    this.lock = sql`select pg_advisory_xact_lock(hashtext(${`${options.service}:signing-keys`}))`;
    this.sealPrefix = options.sealPrefix ?? `${options.service}:signing-key`;
  }

  /**
   * Signs `claims` with the active key as a JWT: header `alg`, `kid` and `typ` (`at+jwt` for RFC 9068 access
   * tokens); `iat` and `nbf` now, `exp` `lifetimeSeconds` later (at most the configured token lifetime).
   */
  async sign(claims: JWTPayload, options: { typ: string; lifetimeSeconds: number }): Promise<string> {
    const key = await this.signingKey();
    const now = Math.floor(this.clock.nowMs() / 1000);
    return new SignJWT(claims)
      .setProtectedHeader({ alg: SIGNING_ALGORITHM, kid: key.kid, typ: options.typ })
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(now + Math.min(options.lifetimeSeconds, this.options.tokenTtlSeconds))
      .sign(key.privateKey);
  }

  /**
   * The key to sign with: the active one (created when there is none yet), its lifetime bound raised to this
   * instance's token lifetime first when it was lower.
   */
  async signingKey(): Promise<ActiveKey> {
    let active = this.active;
    if (!active) {
      const row = await this.db.transaction(async (tx) => {
        await tx.execute(this.lock);
        const [current] = (await tx
          .select()
          .from(this.table)
          .where(isNull(this.table.retiredAt))) as unknown as KeyRow[];
        return current ?? (await this.insertKey(tx));
      });
      active = await this.toActive(row);
      this.active = active;
      // A key created here is not in the rows loaded before.
      this.generation += 1;
      this.rows = undefined;
    }
    if (active.maxTokenTtlSeconds < this.options.tokenTtlSeconds) {
      await this.db
        .update(this.table)
        .set({
          maxTokenTtlSeconds: sql`greatest(${this.table.maxTokenTtlSeconds}, ${this.options.tokenTtlSeconds})`,
        } as never)
        .where(eq(this.table.kid, active.kid));
      active.maxTokenTtlSeconds = this.options.tokenTtlSeconds;
    }
    return active;
  }

  /**
   * Rotates: a new key becomes active and the previous one is retired (its private half erased), in one transaction;
   * every instance reloads when it commits.
   * @returns the new key.
   */
  async rotate(): Promise<SigningKeyRecord> {
    const row = await this.db.transaction(async (tx) => {
      await tx.execute(this.lock);
      await tx
        .update(this.table)
        .set({ retiredAt: this.clock.now(), privateJwkSealed: null } as never)
        .where(isNull(this.table.retiredAt));
      const created = await this.insertKey(tx);
      await Notifier.notify(tx, this.channel, created.kid);
      return created;
    });
    this.forget();
    return this.record(row);
  }

  /** Every key, newest first, with its status now. */
  async list(): Promise<SigningKeyRecord[]> {
    const rows = (await this.db
      .select()
      .from(this.table)
      .orderBy(sql`${this.table.createdAt} desc`)) as unknown as KeyRow[];
    return rows.map((r) => this.record(r));
  }

  /** The JWK set to publish (RFC 7517 section 5): the active key and the retired keys still in their window. */
  async jwks(): Promise<{ keys: (JWK & { kty: string; kid: string; alg: string; use: string })[] }> {
    const rows = await this.published();
    return {
      keys: rows.map((r) => ({
        ...(r.publicJwk as JWK & { kty: string }),
        kid: r.kid,
        alg: r.alg,
        use: 'sig',
      })),
    };
  }

  /**
   * The key getter of token verification (jose `JWTVerifyGetKey`): the published key named by the header's `kid`.
   * @throws jose JWKSNoMatchingKey when no published key has that `kid` (after one reload, at most one a second).
   */
  readonly getKey: JWTVerifyGetKey = async (header) => {
    const kid = header.kid;
    if (typeof kid !== 'string' || header.alg !== SIGNING_ALGORITHM) throw new joseErrors.JWKSNoMatchingKey();
    let row = (await this.published()).find((r) => r.kid === kid);
    const nowMs = this.clock.nowMs();
    if (!row && nowMs - this.lastUnknownKidReloadMs >= 1000) {
      this.lastUnknownKidReloadMs = nowMs;
      this.forget();
      row = (await this.published()).find((r) => r.kid === kid);
    }
    if (!row) throw new joseErrors.JWKSNoMatchingKey();
    let key = this.publicKeys.get(kid);
    if (!key) {
      key = importJWK(row.publicJwk as JWK, SIGNING_ALGORITHM) as Promise<CryptoKey>;
      this.publicKeys.set(kid, key);
    }
    return key;
  };

  /**
   * Reloads the keys whenever any instance rotates them, and after a lost LISTEN connection.
   * @returns the function that unsubscribes.
   */
  async listen(notifier: Notifier): Promise<() => Promise<void>> {
    const unlisten = await notifier.listen(this.channel, () => this.forget());
    const unresync = notifier.onResync(() => this.forget());
    return async () => {
      unresync();
      await unlisten();
    };
  }

  /** The published rows (loaded once per change; the window is checked on the injected clock at each call). */
  private async published(): Promise<KeyRow[]> {
    let rows = this.rows;
    if (!rows) {
      const generation = this.generation;
      this.loading ??= this.db.select().from(this.table).execute() as unknown as Promise<KeyRow[]>;
      const loading = this.loading;
      rows = await loading;
      if (this.loading === loading) this.loading = undefined;
      if (generation === this.generation) this.rows = rows;
    }
    const nowMs = this.clock.nowMs();
    return rows.filter((r) => {
      const until = this.publishedUntil(r);
      return until === null || until.getTime() > nowMs;
    });
  }

  private forget(): void {
    this.generation += 1;
    this.rows = undefined;
    this.loading = undefined;
    this.active = undefined;
  }

  private publishedUntil(row: KeyRow): Date | null {
    if (!row.retiredAt) return null;
    return new Date(row.retiredAt.getTime() + (row.maxTokenTtlSeconds + this.options.leewaySeconds) * 1000);
  }

  private record(row: KeyRow): SigningKeyRecord {
    const until = this.publishedUntil(row);
    const status = !row.retiredAt
      ? 'active'
      : until && until.getTime() > this.clock.nowMs()
        ? 'retired'
        : 'expired';
    return {
      kid: row.kid,
      alg: row.alg,
      status,
      createdAt: row.createdAt,
      retiredAt: row.retiredAt,
      publishedUntil: until,
    };
  }

  private async insertKey(tx: Tx): Promise<KeyRow> {
    const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALGORITHM, { extractable: true });
    const kid = randomBytes(16).toString('base64url');
    const privateJwk = await exportJWK(privateKey);
    const [row] = (await tx
      .insert(this.table)
      .values({
        kid,
        alg: SIGNING_ALGORITHM,
        publicJwk: { ...(await exportJWK(publicKey)) },
        privateJwkSealed: this.secrets.encrypt(JSON.stringify(privateJwk), `${this.sealPrefix}:${kid}`),
        maxTokenTtlSeconds: this.options.tokenTtlSeconds,
        createdAt: this.clock.now(),
      } as never)
      .returning()) as unknown as KeyRow[];
    return row!;
  }

  private async toActive(row: KeyRow): Promise<ActiveKey> {
    if (!row.privateJwkSealed) throw new Error(`signing key ${row.kid} has no private key`);
    const jwk = JSON.parse(
      this.secrets.decrypt(row.privateJwkSealed, `${this.sealPrefix}:${row.kid}`),
    ) as JWK;
    const privateKey = (await importJWK(jwk, SIGNING_ALGORITHM)) as CryptoKey;
    return { kid: row.kid, privateKey, maxTokenTtlSeconds: row.maxTokenTtlSeconds };
  }
}
