/**
 * The card part of the idempotency fingerprint of the card routes (payer payment, voice keyed card): a keyed
 * HMAC-SHA256 of the card number's digits and the CVC, so that the same `Idempotency-Key` with another card (even
 * one with the same brand, last4 and expiry) or another CVC is a 409 `idempotency_key_reused`, while neither the
 * number nor the CVC is ever stored. The fingerprint record holds only SHA-256 of a body that contains this HMAC.
 *
 * The HMAC key is a server secret derived from the platform secrets key (`SecretBox.deriveKey`, HKDF-SHA256, label
 * `payments:card-fingerprint`): every instance with the same secrets key computes the same fingerprints, and nothing
 * is stored. Without the key, a card's fingerprint cannot be brute-forced from its brand, last4 and expiry (about
 * 10^9 candidates for the middle digits and the CVC).
 */
import type { SecretBox } from '../../platform/crypto.ts';
import { hmacSha256 } from '../../platform/crypto.ts';
import type { CheckedCard } from './card-network.ts';

/** HKDF label of the card-fingerprint key. */
export const CARD_FINGERPRINT_KEY_LABEL = 'payments:card-fingerprint';

/** Computes the keyed card fingerprint (no I/O: the key is derived once, at construction). */
export class CardFingerprinter {
  private readonly key: Buffer;

  constructor(secrets: SecretBox) {
    this.key = secrets.deriveKey(CARD_FINGERPRINT_KEY_LABEL);
  }

  /**
   * HMAC-SHA256 (lowercase hex, 64 characters) of `<digits>:<cvc>` under the card-fingerprint key.
   * @param card a checked card (digits only, CVC as keyed).
   */
  fingerprint(card: Pick<CheckedCard, 'digits' | 'cvc'>): string {
    return hmacSha256(this.key, `${card.digits}:${card.cvc}`).toString('hex');
  }
}
