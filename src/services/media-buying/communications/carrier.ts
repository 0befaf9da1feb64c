/**
 * The SMS/RCS carrier: an external system behind {@link Carrier}, so a real carrier can be configured later without
 * touching the domain code. The default is {@link CarrierSimulator}.
 *
 * Carrier webhooks (inbound texts, delivery receipts) are signed (README, "Carrier webhooks"): header
 * `x-carrier-timestamp` (Unix seconds) and `x-carrier-signature: v1=<hex>`, where `<hex>` is HMAC-SHA256 under the
 * webhook secret of `<timestamp>.<raw body>`. A signature is accepted when it matches (constant-time comparison) and
 * the timestamp is within {@link SIGNATURE_TOLERANCE_SECONDS} of the service clock (replay window).
 */
import { setTimeout } from 'node:timers/promises';
import { constantTimeEqual, hmacSha256 } from '../../../platform/crypto.ts';
import { prefixedHexId } from '../../../platform/ids.ts';
import type { TextChannel } from '../db/schema.ts';

/** One text handed to the carrier. */
export interface CarrierText {
  channel: TextChannel;
  /** The line's number, E.164. */
  from: string;
  /** E.164. */
  to: string;
  text: string;
  /**
   * The same for every attempt to send one text (the outbox id): a carrier that already accepted it answers the same
   * message id and does not send it twice.
   */
  idempotencyKey: string;
  /**
   * Fires when the service gives up on this call (`MEDIA_BUYING_CARRIER_TIMEOUT_MS`): the carrier stops waiting and
   * throws. The service stops waiting at that moment anyway.
   */
  signal: AbortSignal;
}

/** The carrier's answer: accepted (with its message id) or refused (with its reason). */
export type CarrierOutcome =
  | { accepted: true; carrierMessageId: string }
  | { accepted: false; reason: string };

/** What the service needs of a carrier. */
export interface Carrier {
  /**
   * Hands one text to the carrier. Throws on a transport failure (the outbound job retries); answers `accepted: false`
   * when the carrier refuses the text for good.
   */
  send(text: CarrierText): Promise<CarrierOutcome>;
}

/** A destination the simulator refuses (to exercise the carrier check): `+1 202 555 0199`. */
export const SIMULATOR_REFUSED_NUMBER = '+12025550199';

/**
 * The built-in carrier: accepts every text except to {@link SIMULATOR_REFUSED_NUMBER} (a text whose idempotency key it
 * accepted before answers the same message id, not sent again), and keeps the last 1,000 texts it
 * accepted in memory (this process only: it stands for the carrier's own log, read on `GET /_ops/carrier/messages`).
 */
export class CarrierSimulator implements Carrier {
  private readonly log: (CarrierText & { carrierMessageId: string })[] = [];
  /** Idempotency key -> message id of the last 1,000 accepted texts. */
  private readonly accepted = new Map<string, string>();

  /** @param latencyMs how long each acceptance takes (default 0). */
  constructor(private readonly latencyMs = 0) {}

  async send(text: CarrierText): Promise<CarrierOutcome> {
    if (this.latencyMs > 0) await setTimeout(this.latencyMs, undefined, { signal: text.signal });
    if (text.to === SIMULATOR_REFUSED_NUMBER)
      return { accepted: false, reason: 'carrier_refused_destination' };
    const known = this.accepted.get(text.idempotencyKey);
    if (known !== undefined) return { accepted: true, carrierMessageId: known };
    const carrierMessageId = prefixedHexId('sim');
    this.log.push({ ...text, carrierMessageId });
    this.accepted.set(text.idempotencyKey, carrierMessageId);
    if (this.log.length > 1000) this.accepted.delete(this.log.shift()!.idempotencyKey);
    return { accepted: true, carrierMessageId };
  }

  /** The texts accepted by this process, oldest first. */
  sent(): readonly (CarrierText & { carrierMessageId: string })[] {
    return this.log;
  }
}

/** How far a webhook's timestamp may be from the service clock, in seconds. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** The signature header value of `rawBody` sent at `timestampSeconds` under `secret` (module comment). */
export function signCarrierWebhook(secret: Buffer, timestampSeconds: number, rawBody: string): string {
  return `v1=${hmacSha256(secret, `${timestampSeconds}.${rawBody}`).toString('hex')}`;
}

/** Why a webhook signature is refused. */
export type SignatureRefusal = 'signature_missing' | 'timestamp_outside_window' | 'signature_mismatch';

/**
 * Verifies a carrier webhook (module comment).
 * @param nowMs the service clock.
 * @returns null when valid, else why not.
 */
export function verifyCarrierWebhook(
  secret: Buffer,
  headers: { timestamp: string | undefined; signature: string | undefined },
  rawBody: string,
  nowMs: number,
): SignatureRefusal | null {
  const { timestamp, signature } = headers;
  if (timestamp === undefined || signature === undefined || !/^\d{1,12}$/.test(timestamp))
    return 'signature_missing';
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > SIGNATURE_TOLERANCE_SECONDS)
    return 'timestamp_outside_window';
  const expected = signCarrierWebhook(secret, Number(timestamp), rawBody);
  // Several signatures may be sent during a secret rotation (`v1=a,v1=b`): any one matching is enough.
  const presented = signature.split(',').map((s) => s.trim());
  let ok = false;
  for (const candidate of presented) if (constantTimeEqual(candidate, expected)) ok = true;
  return ok ? null : 'signature_mismatch';
}
