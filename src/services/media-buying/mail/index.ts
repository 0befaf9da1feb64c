/** Mail of the service (outbox and SMTP delivery). Other folders use this module through this file only. */
export { Mailer, sendMailTask } from './mailer.ts';
