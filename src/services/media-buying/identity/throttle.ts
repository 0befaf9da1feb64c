/**
 * Fixed-window counters of the identity provider (table `sign_in_throttle`, shared by every instance): failed
 * sign-ins (passwords and codes) per account and per client address, and mails sent on anonymous requests (sign-in
 * codes, signup verifications, password resets) per email and per client address. Loopback clients are never
 * counted per address: behind a local proxy without `TRUST_PROXY` every client is loopback, and a budget shared by
 * everyone would lock everyone out.
 */
import { inArray, lt, sql } from 'drizzle-orm';
import { clientBucket, isLoopbackAddress } from '../../../platform/addresses.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/database.ts';
import { signInThrottle } from '../db/schema.ts';
import { rateLimited } from '../media-buying-errors.ts';

/** Failed sign-ins one account may have per window before its sign-ins are refused until the window ends. */
export const ACCOUNT_FAILURES_PER_WINDOW = 10;
/** Failed sign-ins one client address may have per window. */
export const ADDRESS_FAILURES_PER_WINDOW = 30;
/** Mails (codes, verifications, resets) one email address may be sent per window on anonymous requests. */
export const MAILS_PER_EMAIL_PER_WINDOW = 5;
/** Anonymous requests that send mail one client address may make per window. */
export const MAILS_PER_ADDRESS_PER_WINDOW = 20;
/** The fixed window of every counter, in seconds. */
export const THROTTLE_WINDOW_SECONDS = 15 * 60;

/** One counter and its budget per window. */
export interface ThrottleBucket {
  /** `account:<email>`, `address:<ip>`, `mail:<email>`, `mail-address:<ip>`. */
  bucket: string;
  max: number;
}

/** The sign-in failure buckets of an account (a normalized email) and a client address. */
export function signInBuckets(email: string, clientAddress: string): ThrottleBucket[] {
  return [
    { bucket: `account:${email}`, max: ACCOUNT_FAILURES_PER_WINDOW },
    ...(isLoopbackAddress(clientAddress)
      ? []
      : [{ bucket: `address:${clientBucket(clientAddress)}`, max: ADDRESS_FAILURES_PER_WINDOW }]),
  ];
}

/** The mail budgets of an email address (normalized) and a client address. */
export function mailBuckets(email: string, clientAddress: string): ThrottleBucket[] {
  return [
    { bucket: `mail:${email}`, max: MAILS_PER_EMAIL_PER_WINDOW },
    ...(isLoopbackAddress(clientAddress)
      ? []
      : [{ bucket: `mail-address:${clientBucket(clientAddress)}`, max: MAILS_PER_ADDRESS_PER_WINDOW }]),
  ];
}

/** The counters; see the module comment. */
export class Throttle {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /** Adds one to each bucket, in order. @returns each bucket's count and window start after the addition. */
  private async increment(buckets: readonly ThrottleBucket[]) {
    const now = this.clock.now();
    const out: { failures: number; windowStart: Date }[] = [];
    const windowStartBefore = new Date(now.getTime() - THROTTLE_WINDOW_SECONDS * 1000).toISOString();
    for (const { bucket } of buckets) {
      const [row] = await this.db
        .insert(signInThrottle)
        .values({ bucket, windowStart: now, failures: 1 })
        .onConflictDoUpdate({
          target: signInThrottle.bucket,
          set: {
            failures: sql`case when ${signInThrottle.windowStart} <= ${windowStartBefore}::timestamptz then 1 else ${signInThrottle.failures} + 1 end`,
            windowStart: sql`case when ${signInThrottle.windowStart} <= ${windowStartBefore}::timestamptz then ${now.toISOString()}::timestamptz else ${signInThrottle.windowStart} end`,
          },
        })
        .returning({ failures: signInThrottle.failures, windowStart: signInThrottle.windowStart });
      out.push(row!);
    }
    return out;
  }

  /**
   * Spends one unit of each bucket's budget and refuses when one went over it: the check and the count of a
   * mail-sending request in one statement per bucket, so concurrent requests cannot both take the last unit. A refused
   * request is counted too (the window does not move, so its end stays the same).
   * @throws ApiError 429 `RATE_LIMITED` with `Retry-After` (the seconds until the window of that bucket ends).
   */
  async spend(buckets: readonly ThrottleBucket[], message: string): Promise<void> {
    const rows = await this.increment(buckets);
    const now = this.clock.nowMs();
    let retryAfter = 0;
    for (const [i, row] of rows.entries())
      if (row.failures > buckets[i]!.max)
        retryAfter = Math.max(
          retryAfter,
          Math.ceil((row.windowStart.getTime() + THROTTLE_WINDOW_SECONDS * 1000 - now) / 1000),
        );
    if (retryAfter > 0) throw rateLimited(message, Math.max(1, retryAfter));
  }

  /**
   * Reserves one failure of each bucket before an attempt is checked (a password, a code): the attempt is counted as
   * a failure in one statement per bucket, so concurrent attempts cannot all pass a check made before any of them was
   * counted; a successful attempt gives its unit back ({@link release}).
   * @throws ApiError 429 `RATE_LIMITED` with `Retry-After` when a bucket's budget was already used up.
   */
  async reserve(buckets: readonly ThrottleBucket[], message: string): Promise<void> {
    await this.spend(buckets, message);
  }

  /** Gives back the unit a successful attempt reserved ({@link reserve}); never below zero. */
  async release(buckets: readonly ThrottleBucket[]): Promise<void> {
    if (buckets.length === 0) return;
    await this.db
      .update(signInThrottle)
      .set({ failures: sql`greatest(${signInThrottle.failures} - 1, 0)` })
      .where(
        inArray(
          signInThrottle.bucket,
          buckets.map((b) => b.bucket),
        ),
      );
  }

  /** Deletes windows that ended (housekeeping, by a cron job). @returns how many. */
  async prune(): Promise<number> {
    const before = new Date(this.clock.nowMs() - THROTTLE_WINDOW_SECONDS * 1000);
    const deleted = await this.db
      .delete(signInThrottle)
      .where(lt(signInThrottle.windowStart, before))
      .returning({ bucket: signInThrottle.bucket });
    return deleted.length;
  }
}
