/**
 * The service's JWT signing keys (RFC 7517 JWKS, RFC 7515 `kid`): ES256 key pairs made with `jose`, the private half
 * sealed with the platform's AES-256-GCM secrets key. One key signs at a time; rotating retires it (it signs nothing
 * more) and keeps it in the published JWKS until every token it signed has expired, so verifiers never see a valid
 * token they cannot check. Tokens are verified against the same set, so any instance verifies what any other signed.
 */
import { and, desc, eq, gt, isNull, or, sql } from 'drizzle-orm';
import {
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
  type JWTPayload,
  errors as joseErrors,
  SignJWT,
} from 'jose';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../../../platform/clock.ts';
import type { SecretBox } from '../../../platform/crypto.ts';
import type { Db } from '../../../platform/database.ts';
import { randomToken } from '../../../platform/ids.ts';
import { signingKeys } from '../db/schema.ts';

/** The signature algorithm of every token the service signs (ECDSA P-256 with SHA-256). */
export const SIGNING_ALGORITHM = 'ES256';

/** Seconds a retired key stays published after its retirement beyond the longest token lifetime (clock skew). */
const RETIRED_KEY_GRACE_SECONDS = 300;

type KeyLike = Awaited<ReturnType<typeof importJWK>>;

/** Signing keys of the service; see the module comment. */
export class SigningKeys {
  /** Published keys by kid, for five minutes (a retirement elsewhere shows within that). */
  private readonly publicKeys = new LRUCache<string, { key: KeyLike; removeAfterMs: number | null }>({
    max: 100,
    ttl: 300_000,
  });

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly secrets: SecretBox,
    /** The longest lifetime of a token signed here, in seconds (how long a retired key stays published). */
    private readonly maxTokenSeconds: number,
  ) {}

  /**
   * Signs `claims` with the current key (made on first use, once across instances) as a JWT with `typ`
   * (`at+jwt` for access tokens, RFC 9068), `iat` now and `exp` `lifetimeSeconds` later.
   */
  async sign(claims: JWTPayload, options: { typ: string; lifetimeSeconds: number }): Promise<string> {
    const key = await this.current();
    const now = Math.floor(this.clock.nowMs() / 1000);
    const privateKey = await importJWK(
      JSON.parse(this.secrets.decrypt(key.privateJwkSealed, `signing-key:${key.kid}`)) as JWK,
      SIGNING_ALGORITHM,
    );
    return new SignJWT(claims)
      .setProtectedHeader({ alg: SIGNING_ALGORITHM, kid: key.kid, typ: options.typ })
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(now + options.lifetimeSeconds)
      .sign(privateKey);
  }

  /** The published key set (RFC 7517): the current key and retired keys whose tokens may still be valid. */
  async jwks(): Promise<{ keys: JWK[] }> {
    const rows = await this.db
      .select()
      .from(signingKeys)
      .where(or(isNull(signingKeys.removeAfter), gt(signingKeys.removeAfter, this.clock.now())))
      .orderBy(desc(signingKeys.id));
    return { keys: rows.map((r) => ({ ...r.publicJwk, kid: r.kid, alg: r.alg, use: 'sig' })) };
  }

  /**
   * The verification key of a token header (jose's key getter): a published key with that `kid`.
   * @throws jose's JWKSNoMatchingKey when the kid is missing, unknown or no longer published (the token is refused).
   */
  readonly verificationKey = async (header: { kid?: string }): Promise<KeyLike> => {
    const kid = header.kid;
    if (typeof kid !== 'string') throw new joseErrors.JWKSNoMatchingKey();
    // A cached key is safe to use until it is unpublished: a key is retired before it is unpublished, and every
    // token it signed expires before that.
    const cached = this.publicKeys.get(kid);
    if (cached && (cached.removeAfterMs === null || cached.removeAfterMs > this.clock.nowMs()))
      return cached.key;
    const [row] = await this.db
      .select()
      .from(signingKeys)
      .where(
        and(
          eq(signingKeys.kid, kid),
          or(isNull(signingKeys.removeAfter), gt(signingKeys.removeAfter, this.clock.now())),
        ),
      )
      .limit(1);
    if (!row) throw new joseErrors.JWKSNoMatchingKey();
    const key = await importJWK(row.publicJwk as JWK, row.alg);
    this.publicKeys.set(kid, { key, removeAfterMs: row.removeAfter?.getTime() ?? null });
    return key;
  };

  /**
   * Retires the current key and makes a new one, which signs from now on; the retired key stays published for
   * the longest token lifetime (plus a grace period) so tokens it signed stay verifiable until they expire.
   * @returns the new key's `kid`.
   */
  async rotate(): Promise<string> {
    return this.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext('media_buying.signing_keys'))`);
      const now = this.clock.now();
      await tx
        .update(signingKeys)
        .set({
          retiredAt: now,
          removeAfter: new Date(now.getTime() + (this.maxTokenSeconds + RETIRED_KEY_GRACE_SECONDS) * 1000),
        })
        .where(isNull(signingKeys.retiredAt));
      return (await this.insertKey(tx)).kid;
    });
  }

  /** The key that signs now, made once (across instances, under an advisory lock) when there is none. */
  private async current() {
    const [existing] = await this.db
      .select()
      .from(signingKeys)
      .where(isNull(signingKeys.retiredAt))
      .orderBy(desc(signingKeys.id))
      .limit(1);
    if (existing) return existing;
    return this.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext('media_buying.signing_keys'))`);
      const [again] = await tx
        .select()
        .from(signingKeys)
        .where(isNull(signingKeys.retiredAt))
        .orderBy(desc(signingKeys.id))
        .limit(1);
      return again ?? (await this.insertKey(tx));
    });
  }

  private async insertKey(executor: Pick<Db, 'insert'>) {
    const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALGORITHM, { extractable: true });
    const kid = randomToken(12);
    const [row] = await executor
      .insert(signingKeys)
      .values({
        kid,
        alg: SIGNING_ALGORITHM,
        publicJwk: (await exportJWK(publicKey)) as Record<string, unknown>,
        privateJwkSealed: this.secrets.encrypt(
          JSON.stringify(await exportJWK(privateKey)),
          `signing-key:${kid}`,
        ),
        createdAt: this.clock.now(),
      })
      .returning();
    return row!;
  }
}
