/**
 * Mail of the media-buying service (magic codes, password resets, invitations, preview receipts) through
 * `nodemailer`: every message is first a row of the outbox table, written in the transaction of the change that sends
 * it (so a message exists exactly when the change commits), then handed to the SMTP server of `MEDIA_BUYING_SMTP_URL`
 * by a background job, retried with backoff when the server refuses it. Without an SMTP server the row is the
 * message (`transport: outbox`), read on the operator route `GET /_ops/mail`. Bodies hold sign-in codes and links, so
 * they are sealed at rest with the platform's AES-256-GCM secrets key.
 */
import { Type } from '@sinclair/typebox';
import { and, desc, eq, lt, type SQL } from 'drizzle-orm';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Clock } from '../../../platform/clock.ts';
import type { SecretBox } from '../../../platform/crypto.ts';
import type { Db, Executor } from '../../../platform/database.ts';
import { defineTask } from '../../../platform/jobs.ts';
import type { AppLogger } from '../../../platform/logger.ts';
import { mailOutbox } from '../db/schema.ts';

/** A message to send. */
export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html?: string;
  /** What the message is (`magic_code`, `password_reset`, `invitation`, `preview_receipt`, ...). */
  kind: string;
}

/** A stored message as the operator reads it. */
export interface MailRecord {
  id: number;
  to: string;
  subject: string;
  text: string;
  kind: string;
  transport: 'smtp' | 'outbox';
  createdAt: string;
  sentAt: string | null;
  lastError: string | null;
}

/** Delivers one stored message to the SMTP server (retried by the worker when it fails). */
export const sendMailTask = defineTask(
  'media-buying:send-mail',
  Type.Object({ mailId: Type.Integer({ minimum: 1 }) }),
  async ({ mailId }, deps: { mailer: Mailer }) => deps.mailer.deliver(mailId),
);

/** The associated data of sealed mail bodies. */
const BODY_AAD = 'media-buying:mail';

/** The mail of the service; see the module comment. */
export class Mailer {
  private readonly transport: Transporter | undefined;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly secrets: SecretBox,
    private readonly options: { smtpUrl: string | undefined; from: string; logger: AppLogger },
  ) {
    this.transport = options.smtpUrl ? nodemailer.createTransport(options.smtpUrl) : undefined;
  }

  /**
   * Stores `mail` in `tx` and, with an SMTP server, enqueues its delivery in the same transaction.
   * @returns the message's id.
   */
  async queue(tx: Executor, mail: OutgoingMail): Promise<number> {
    const [row] = await tx
      .insert(mailOutbox)
      .values({
        toAddress: mail.to,
        subject: mail.subject,
        textBody: this.secrets.encrypt(mail.text, BODY_AAD),
        htmlBody: mail.html === undefined ? null : this.secrets.encrypt(mail.html, BODY_AAD),
        kind: mail.kind,
        createdAt: this.clock.now(),
        transport: this.transport ? 'smtp' : 'outbox',
      })
      .returning({ id: mailOutbox.id });
    if (this.transport) await sendMailTask.enqueue(tx, { mailId: row!.id }, { maxAttempts: 10 });
    return row!.id;
  }

  /**
   * Hands stored message `mailId` to the SMTP server once (a message already sent is not sent again).
   * @throws Error with the server's reply when it refuses (the job is retried).
   */
  async deliver(mailId: number): Promise<void> {
    if (!this.transport) return;
    const [row] = await this.db.select().from(mailOutbox).where(eq(mailOutbox.id, mailId)).limit(1);
    if (!row || row.sentAt) return;
    try {
      const info = await this.transport.sendMail({
        from: this.options.from,
        to: row.toAddress,
        subject: row.subject,
        text: this.secrets.decrypt(row.textBody, BODY_AAD),
        ...(row.htmlBody ? { html: this.secrets.decrypt(row.htmlBody, BODY_AAD) } : {}),
      });
      await this.db
        .update(mailOutbox)
        .set({ sentAt: this.clock.now(), messageId: info.messageId ?? null, lastError: null })
        .where(eq(mailOutbox.id, mailId));
    } catch (err) {
      const reason = (err as Error).message.slice(0, 500);
      await this.db.update(mailOutbox).set({ lastError: reason }).where(eq(mailOutbox.id, mailId));
      this.options.logger.warn({ mailId, reason }, 'mail delivery failed; the job retries it');
      throw new Error(`SMTP delivery failed: ${reason}`);
    }
  }

  /** Stored messages, newest first, optionally to one address, before an id (paging), at most `limit`. */
  async list(options: { to?: string; beforeId?: number; limit: number }): Promise<MailRecord[]> {
    const filters: SQL[] = [];
    if (options.to) filters.push(eq(mailOutbox.toAddress, options.to.toLowerCase()));
    if (options.beforeId) filters.push(lt(mailOutbox.id, options.beforeId));
    const rows = await this.db
      .select()
      .from(mailOutbox)
      .where(and(...filters))
      .orderBy(desc(mailOutbox.id))
      .limit(options.limit);
    return rows.map((r) => ({
      id: r.id,
      to: r.toAddress,
      subject: r.subject,
      text: this.secrets.decrypt(r.textBody, BODY_AAD),
      kind: r.kind,
      transport: r.transport,
      createdAt: r.createdAt.toISOString(),
      sentAt: r.sentAt ? r.sentAt.toISOString() : null,
      lastError: r.lastError,
    }));
  }

  /** Closes the SMTP connections. */
  close(): void {
    this.transport?.close();
  }
}
