import { randomBytes } from 'node:crypto';
import { hmacSha256 } from '../../platform/crypto.ts';

/**
 * Webhook signing (spec 002 section G, its anchor): the secret is padded URL-safe base64 of 32 random bytes; the HMAC
 * key is its decoded bytes; `X-Signature` = padded URL-safe base64 of HMAC-SHA256(key, `<timestamp>.<raw body>`);
 * `X-Timestamp` is Unix seconds. Receivers reject when the timestamp is more than 300 s from their clock.
 */

/** Padded URL-safe base64 (`+`->`-`, `/`->`_`, `=` kept), the form Python's `base64.urlsafe_b64encode` produces. */
export function urlSafeBase64(bytes: Buffer): string {
  return bytes.toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
}

/** A new webhook secret: 32 random bytes as padded URL-safe base64 (44 characters). */
export function newWebhookSecret(): string {
  return urlSafeBase64(randomBytes(32));
}

/**
 * The signature of `body` (the exact bytes sent) at `timestampSeconds` under `secret`.
 * @returns padded URL-safe base64 of HMAC-SHA256(base64url-decode(secret), `${timestampSeconds}.${body}`).
 */
export function signPayload(secret: string, timestampSeconds: number, body: Buffer): string {
  const key = Buffer.from(secret.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return urlSafeBase64(hmacSha256(key, Buffer.concat([Buffer.from(`${timestampSeconds}.`, 'utf8'), body])));
}
