import { randomBytes, randomUUID } from 'node:crypto';

/**
 * Identifier generation, from one place.
 *
 * - {@link prefixedHexId}: `<prefix>_` + 32 lowercase hex (128 random bits), the format of `pmi_`, `pli_`,
 *   `cpy_`, `vos_`, `pty_` ids in the payments spec.
 * - {@link randomToken}: URL-safe base64 of `bytes` random bytes, for secrets and API keys.
 * - {@link requestId}: a UUID v4 for request ids.
 */
export function prefixedHexId(prefix: string): string {
  return `${prefix}_${randomBytes(16).toString('hex')}`;
}

/** `bytes` random bytes as unpadded URL-safe base64 (default 32 bytes = 256 bits, 43 characters). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** A random UUID v4 (RFC 9562). */
export function requestId(): string {
  return randomUUID();
}

/** True when `value` is `<prefix>_` followed by exactly 32 lowercase hex characters. */
export function isPrefixedHexId(prefix: string, value: string): boolean {
  return (
    value.length === prefix.length + 33 &&
    value.startsWith(`${prefix}_`) &&
    /^[0-9a-f]{32}$/.test(value.slice(prefix.length + 1))
  );
}
