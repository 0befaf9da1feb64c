import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';
import { randomToken } from './ids.ts';

/**
 * A newly issued API key: `plaintext` is shown to its owner once; only `hash` (and the short `hint`) is stored.
 * `plaintext` is `<prefix>` + 43 characters of URL-safe base64 (256 random bits).
 */
export interface IssuedApiKey {
  plaintext: string;
  hash: string;
  /** The last four characters, to help a person recognise the key in a list. */
  hint: string;
}

/** Issues a random API key with a service-specific prefix (for example `cpk_`, `coin_demo_`). */
export function issueApiKey(prefix: string): IssuedApiKey {
  const plaintext = `${prefix}${randomToken(32)}`;
  return { plaintext, hash: hashApiKey(plaintext), hint: plaintext.slice(-4) };
}

/**
 * SHA-256 of an API key, lowercase hex (64 characters). API keys carry 256 random bits, so a fast unsalted hash
 * is the standard storage (a lookup by hash is then a unique-index hit); passwords use argon2id (`passwords.ts`).
 */
export function hashApiKey(plaintext: string): string {
  return createHash('sha256').update(plaintext, 'utf8').digest('hex');
}

/** Compares two strings in time independent of where they differ (lengths are compared via SHA-256 digests). */
export function constantTimeEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a, 'utf8').digest();
  const db = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(da, db) && a.length === b.length;
}

/** HMAC-SHA256 of `data` under `key`, as raw bytes. */
export function hmacSha256(key: Buffer | string, data: Buffer | string): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

/** The PKCE S256 code challenge of a code verifier (RFC 7636 section 4.2): BASE64URL(SHA-256(ASCII(verifier))). */
export function pkceS256Challenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/**
 * AES-256-GCM for secrets that must be read back (webhook signing secrets, stored message text).
 * Ciphertext format: `v1.<iv b64url>.<tag b64url>.<ciphertext b64url>` with a 12-byte random IV and 16-byte tag.
 * `aad` (optional) binds the ciphertext to its context (for example a row id): decrypting with another aad fails.
 */
export class SecretBox {
  private readonly key: Buffer;

  /** @param key 32 bytes. Throws `RangeError` for any other length. */
  constructor(key: Buffer) {
    if (key.length !== 32) throw new RangeError('SecretBox key must be 32 bytes');
    this.key = key;
  }

  /**
   * A 32-byte key for one purpose, derived from the box key with HKDF-SHA256 (RFC 5869; no salt, `label` as info):
   * the same on every instance that shares the secrets key, different per `label`, and revealing nothing of the box
   * key. For keyed hashes that must agree across instances (for example `payments:card-fingerprint`).
   */
  deriveKey(label: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.key, Buffer.alloc(0), label, 32));
  }

  encrypt(plaintext: string, aad?: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    if (aad !== undefined) cipher.setAAD(Buffer.from(aad, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return `v1.${iv.toString('base64url')}.${tag.toString('base64url')}.${ciphertext.toString('base64url')}`;
  }

  /** Throws `Error('secret cannot be decrypted')` when the ciphertext was altered, or the key or aad differ. */
  decrypt(sealed: string, aad?: string): string {
    const parts = sealed.split('.');
    if (parts.length !== 4 || parts[0] !== 'v1') throw new Error('secret cannot be decrypted');
    try {
      const [, ivB64, tagB64, ctB64] = parts as [string, string, string, string];
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(ivB64, 'base64url'), {
        authTagLength: 16, // the v1 format fixes the tag at 16 bytes; GCM would otherwise accept truncated tags
      });
      if (aad !== undefined) decipher.setAAD(Buffer.from(aad, 'utf8'));
      decipher.setAuthTag(Buffer.from(tagB64, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ctB64, 'base64url')), decipher.final()]).toString(
        'utf8',
      );
    } catch {
      throw new Error('secret cannot be decrypted');
    }
  }
}
