/**
 * The card part of the idempotency fingerprint of the card routes (payer payment, voice keyed card): a keyed
 * HMAC-SHA256 of the card number's digits and the CVC, so that the same `Idempotency-Key` with another card (even
 * one with the same brand, last4 and expiry) or another CVC is a 409 `idempotency_key_reused`, while neither the
 * number nor the CVC is ever stored. The fingerprint record holds only SHA-256 of a body that contains this HMAC.
 *
 * The HMAC key is a server secret: 32 random bytes the service generates once per database and keeps in
 * `payments.service_keys` (name `card-fingerprint`) sealed with the platform SecretBox (AES-256-GCM under the
 * platform secrets key), so every instance uses the same key and the database alone does not reveal it. Without
 * the key, a card's fingerprint cannot be brute-forced from its brand, last4 and expiry (about 10^9 candidates for
 * the middle digits and the CVC).
 */
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { SecretBox } from '../../platform/crypto.ts';
import { hmacSha256 } from '../../platform/crypto.ts';
import type { Db } from '../../platform/database.ts';
import type { CheckedCard } from './card-network.ts';
import { serviceKeys } from './db/schema.ts';

/** Name of the key in `payments.service_keys`. */
export const CARD_FINGERPRINT_KEY_NAME = 'card-fingerprint';

/** Computes the keyed card fingerprint; loads (or creates, once per database) its key on first use. */
export class CardFingerprinter {
  private key: Promise<Buffer> | undefined;

  constructor(
    private readonly db: Db,
    private readonly secrets: SecretBox,
    private readonly now: () => Date,
  ) {}

  /**
   * HMAC-SHA256 (lowercase hex, 64 characters) of `<digits>:<cvc>` under the service's card-fingerprint key.
   * @param card a checked card (digits only, CVC as keyed).
   * @throws Error when the stored key cannot be unsealed (another platform secrets key).
   */
  async fingerprint(card: Pick<CheckedCard, 'digits' | 'cvc'>): Promise<string> {
    const key = await this.loadKey();
    return hmacSha256(key, `${card.digits}:${card.cvc}`).toString('hex');
  }

  private loadKey(): Promise<Buffer> {
    this.key ??= this.readOrCreate().catch((error: unknown) => {
      this.key = undefined; // a failed load (database down) is retried by the next request
      throw error;
    });
    return this.key;
  }

  /** Inserts a fresh sealed key unless one exists (concurrent first starts agree on the first), then reads it. */
  private async readOrCreate(): Promise<Buffer> {
    const aad = `payments:${CARD_FINGERPRINT_KEY_NAME}`;
    await this.db
      .insert(serviceKeys)
      .values({
        name: CARD_FINGERPRINT_KEY_NAME,
        sealed: this.secrets.encrypt(randomBytes(32).toString('base64'), aad),
        createdAt: this.now(),
      })
      .onConflictDoNothing();
    const [row] = await this.db
      .select()
      .from(serviceKeys)
      .where(eq(serviceKeys.name, CARD_FINGERPRINT_KEY_NAME))
      .limit(1);
    if (!row) throw new Error('card fingerprint key missing after insert');
    return Buffer.from(this.secrets.decrypt(row.sealed, aad), 'base64');
  }
}
