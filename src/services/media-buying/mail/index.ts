/** Mail of the service (outbox and SMTP delivery). Other folders use this module through this file only. */
export { Mailer, type OutgoingMail, sendMailTask } from './mailer.ts';
