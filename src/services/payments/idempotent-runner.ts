/**
 * `Idempotency-Key` for every POST of the payments service (as the anchor: header on creates, records kept 48 h,
 * replays marked `X-Idempotency-Replayed: true`), on the platform {@link IdempotencyStore}.
 *
 * Without a key the operation simply runs in one transaction. With a key, the first answer is stored in the same
 * transaction as the operation; the same key and body replays it; the same key with another body is a 409
 * `idempotency_key_reused`. Stored answers never hold a client secret, pay URL or issued key in clear: those fields
 * (`clientSecret`, `payUrl`, `key`) are sealed with the platform SecretBox before storage and unsealed on replay.
 */

import type { SecretBox } from '../../platform/crypto.ts';
import type { Db, Tx } from '../../platform/database.ts';
import { ApiError } from '../../platform/errors.ts';
import { type IdempotencyStore, requestFingerprint } from '../../platform/idempotency.ts';

/** Records are kept 48 hours (milliseconds). */
export const IDEMPOTENCY_TTL_MS = 48 * 60 * 60 * 1000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
const SEALED_FIELDS = new Set(['clientSecret', 'payUrl', 'key']);

/** What an operation answers: HTTP status and JSON body. */
export interface OperationAnswer {
  status: number;
  body: unknown;
}

/**
 * Runs the operation of one POST under its `Idempotency-Key` (scope = the merchant party, or the intent for the
 * payer route), in one transaction with its record. Answers are sealed at rest (see the module comment).
 */
export class IdempotentRunner {
  constructor(
    private readonly db: Db,
    private readonly store: IdempotencyStore,
    private readonly secrets: SecretBox,
  ) {}

  /**
   * Runs `operation` once per (scope, key).
   * @param key the `Idempotency-Key` header (undefined: no idempotency), 1-255 printable ASCII characters.
   * @param fingerprintBody what identifies the request (the body; card numbers already redacted by the caller).
   * @throws ApiError 400 `invalid_value` (header) for a malformed key, 409 `idempotency_key_reused`.
   */
  async run(
    params: {
      scope: string;
      key: string | undefined;
      method: string;
      path: string;
      fingerprintBody: unknown;
    },
    operation: (tx: Tx) => Promise<OperationAnswer>,
  ): Promise<OperationAnswer & { replayed: boolean }> {
    if (params.key === undefined) {
      const answer = await this.db.transaction(operation);
      return { ...answer, replayed: false };
    }
    if (!KEY_PATTERN.test(params.key)) {
      throw new ApiError(400, 'invalid_value', 'Idempotency-Key must be 1-255 printable ASCII characters.', {
        details: { header: 'idempotency-key' },
      });
    }
    let clear: OperationAnswer | undefined;
    const outcome = await this.store.run(
      {
        scope: params.scope,
        key: params.key,
        fingerprint: requestFingerprint(params.method, params.path, params.fingerprintBody ?? null),
        ttlMs: IDEMPOTENCY_TTL_MS,
      },
      async (tx) => {
        clear = await operation(tx);
        return { status: clear.status, body: this.seal(clear.body) };
      },
    );
    if (!outcome.replayed && clear) return { ...clear, replayed: false };
    return { status: outcome.response.status, body: this.unseal(outcome.response.body), replayed: true };
  }

  private seal(value: unknown): unknown {
    if (Array.isArray(value)) return value.map((v) => this.seal(v));
    if (value && typeof value === 'object') {
      return Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([k, v]) =>
          SEALED_FIELDS.has(k) && typeof v === 'string'
            ? [k, { $sealed: this.secrets.encrypt(v, `idempotency:${k}`) }]
            : [k, this.seal(v)],
        ),
      );
    }
    return value;
  }

  private unseal(value: unknown): unknown {
    if (Array.isArray(value)) return value.map((v) => this.unseal(v));
    if (value && typeof value === 'object') {
      return Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([k, v]) => {
          const sealed = (v as { $sealed?: unknown } | null)?.$sealed;
          if (SEALED_FIELDS.has(k) && typeof sealed === 'string')
            return [k, this.secrets.decrypt(sealed, `idempotency:${k}`)];
          return [k, this.unseal(v)];
        }),
      );
    }
    return value;
  }
}
