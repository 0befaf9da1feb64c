/**
 * The advertiser preview form (spec "Signup": "While closed, choosing Advertiser opens a preview form; an accepted
 * form sends a receipt to the submitted work email. The receipt means details were received, not that an account or
 * access exists."):
 *
 * - accepted only while public buyer signup is `waitlisted`; while it is `open` the form is refused (409 `CONFLICT`,
 *   `details.reason` `buyer_signup_open`: sign up instead), nothing stored, nothing mailed;
 * - an accepted form is stored and a receipt is queued to the work email in the same transaction; nothing else
 *   happens: no identity, user, organization, membership or credential;
 * - a mail cannon it is not: at most {@link PREVIEWS_PER_EMAIL} forms per work email per
 *   {@link PREVIEW_EMAIL_WINDOW_SECONDS}, and {@link PREVIEWS_PER_ADDRESS} per client address per
 *   {@link PREVIEW_ADDRESS_WINDOW_SECONDS} (loopback clients are not counted per address: behind a local proxy without
 *   `TRUST_PROXY` every client is loopback), then 429 `RATE_LIMITED` with `Retry-After`; the counts are the stored
 *   forms themselves, counted under a per-email and per-address advisory lock, so instances agree and concurrent
 *   forms cannot pass the limit together;
 * - a retry is safe: the same form (same email, name, company, message and experience) sent again within the email
 *   window answers the first one (`duplicate: true`) without storing or mailing anything.
 */
import { and, asc, count, desc, eq, gt, lt, sql } from 'drizzle-orm';
import { clientBucket, isLoopbackAddress } from '../../../platform/addresses.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { Db, Executor } from '../../../platform/database.ts';
import { prefixedHexId } from '../../../platform/ids.ts';
import { advertiserPreviews } from '../db/schema.ts';
import { normalizeEmail } from '../identity/index.ts';
import type { Mailer } from '../mail/index.ts';
import { conflict, rateLimited } from '../media-buying-errors.ts';
import type { Organizations } from '../organizations/index.ts';
import { previewReceiptMail } from './templates.ts';

/** Forms one work email may send per window. */
export const PREVIEWS_PER_EMAIL = 3;
/** The per-email window, in seconds (one day). */
export const PREVIEW_EMAIL_WINDOW_SECONDS = 24 * 3600;
/** Forms one client address may send per window. */
export const PREVIEWS_PER_ADDRESS = 10;
/** The per-address window, in seconds (one hour). */
export const PREVIEW_ADDRESS_WINDOW_SECONDS = 3600;

/** The signup experiences of an advertiser preview (spec `signup_experience`: routing metadata only). */
export const PREVIEW_SIGNUP_EXPERIENCES = ['ADVERTISER', 'ADVERTISER_PORTFOLIO'] as const;

/** A preview form as submitted. */
export interface PreviewForm {
  workEmail: string;
  name: string;
  company: string;
  message?: string;
  signupExperience?: (typeof PREVIEW_SIGNUP_EXPERIENCES)[number];
}

/** What the submitter is told: received, nothing more. */
export interface PreviewReceipt {
  /** `apv_` + 32 hex. */
  id: string;
  receivedAt: string;
  /** True when this is a repeat of a form already received (no new receipt was sent). */
  duplicate: boolean;
}

/** A stored form as the operator reads it. */
export interface PreviewRecord {
  id: string;
  workEmail: string;
  name: string;
  company: string;
  message: string | null;
  signupExperience: string | null;
  receivedAt: string;
}

type PreviewRow = typeof advertiserPreviews.$inferSelect;

/** The advertiser preview forms (module comment). */
export class AdvertiserPreviews {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly organizations: Organizations,
    private readonly mailer: Mailer,
  ) {}

  /**
   * Receives a form from `clientAddress` (module comment).
   * @throws ApiError 409 `CONFLICT` while buyer signup is open; 429 `RATE_LIMITED` past a limit.
   */
  async submit(form: PreviewForm, clientAddress: string): Promise<PreviewReceipt> {
    const email = normalizeEmail(form.workEmail);
    const input = {
      name: form.name.trim(),
      company: form.company.trim(),
      message: form.message?.trim() || null,
      signupExperience: form.signupExperience ?? null,
    };
    const address = isLoopbackAddress(clientAddress) ? null : clientBucket(clientAddress);
    return this.db.transaction(async (tx) => {
      if ((await this.organizations.settings(tx)).buyerSignup === 'open')
        throw conflict(
          'Buyer signup is open: sign up as an advertiser instead of sending the preview form.',
          {
            reason: 'buyer_signup_open',
          },
        );
      // One form at a time per email and per address (emails first, so two forms never wait on each other in turn).
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`mb-preview-email:${email}`}))`);
      if (address !== null)
        await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`mb-preview-address:${address}`}))`);
      const nowMs = this.clock.nowMs();
      const emailSince = new Date(nowMs - PREVIEW_EMAIL_WINDOW_SECONDS * 1000);
      const recent = await tx
        .select()
        .from(advertiserPreviews)
        .where(and(eq(advertiserPreviews.workEmail, email), gt(advertiserPreviews.createdAt, emailSince)))
        .orderBy(asc(advertiserPreviews.id));
      const same = recent.find(
        (r) =>
          r.name === input.name &&
          r.company === input.company &&
          r.message === input.message &&
          r.signupExperience === input.signupExperience,
      );
      if (same) return { id: same.publicId, receivedAt: same.createdAt.toISOString(), duplicate: true };
      if (recent.length >= PREVIEWS_PER_EMAIL)
        throw this.limited(recent[0]!.createdAt, PREVIEW_EMAIL_WINDOW_SECONDS, nowMs);
      if (address !== null) await this.assertAddressBudget(tx, address, nowMs);
      const [row] = await tx
        .insert(advertiserPreviews)
        .values({
          publicId: prefixedHexId('apv'),
          workEmail: email,
          ...input,
          createdAt: new Date(nowMs),
          clientAddress: address,
        })
        .returning();
      const mailId = await this.mailer.queue(tx, previewReceiptMail(email));
      await tx
        .update(advertiserPreviews)
        .set({ receiptMailId: mailId })
        .where(eq(advertiserPreviews.id, row!.id));
      await this.organizations.audit(
        tx,
        null,
        { userId: null, kind: 'anonymous' },
        'advertiser_preview.received',
        'advertiser_preview',
        row!.publicId,
        {},
      );
      return { id: row!.publicId, receivedAt: row!.createdAt.toISOString(), duplicate: false };
    });
  }

  /** Stored forms, newest first, before an id (paging), at most `limit` (operator). */
  async list(options: { beforeId?: string; limit: number }): Promise<PreviewRecord[]> {
    let before: number | undefined;
    if (options.beforeId !== undefined) {
      const [row] = await this.db
        .select({ id: advertiserPreviews.id })
        .from(advertiserPreviews)
        .where(eq(advertiserPreviews.publicId, options.beforeId))
        .limit(1);
      before = row?.id ?? 0;
    }
    const rows = await this.db
      .select()
      .from(advertiserPreviews)
      .where(before === undefined ? undefined : lt(advertiserPreviews.id, before))
      .orderBy(desc(advertiserPreviews.id))
      .limit(options.limit);
    return rows.map(view);
  }

  /** @throws ApiError 429 when `address` sent its window's forms already. */
  private async assertAddressBudget(tx: Executor, address: string, nowMs: number): Promise<void> {
    const since = new Date(nowMs - PREVIEW_ADDRESS_WINDOW_SECONDS * 1000);
    const where = and(eq(advertiserPreviews.clientAddress, address), gt(advertiserPreviews.createdAt, since));
    const [n] = await tx.select({ n: count() }).from(advertiserPreviews).where(where);
    if (n!.n < PREVIEWS_PER_ADDRESS) return;
    const [oldest] = await tx
      .select({ createdAt: advertiserPreviews.createdAt })
      .from(advertiserPreviews)
      .where(where)
      .orderBy(asc(advertiserPreviews.id))
      .limit(1);
    throw this.limited(oldest!.createdAt, PREVIEW_ADDRESS_WINDOW_SECONDS, nowMs);
  }

  /** 429 with the seconds until the oldest counted form leaves its window. */
  private limited(oldest: Date, windowSeconds: number, nowMs: number) {
    const retryAfter = Math.max(1, Math.ceil((oldest.getTime() + windowSeconds * 1000 - nowMs) / 1000));
    return rateLimited(
      'Too many preview forms from this address or for this email; try again later.',
      retryAfter,
    );
  }
}

/** The operator's view of a stored form. */
function view(row: PreviewRow): PreviewRecord {
  return {
    id: row.publicId,
    workEmail: row.workEmail,
    name: row.name,
    company: row.company,
    message: row.message,
    signupExperience: row.signupExperience,
    receivedAt: row.createdAt.toISOString(),
  };
}
