/**
 * The background jobs of text-message lines (Graphile Worker): sending one line's queued texts, drafting the reply to
 * one inbound text, the send sweep (every minute) and the retention sweep (hourly).
 */
import { Type } from '@sinclair/typebox';
import { defineTask } from '../../../platform/jobs.ts';
import type { Texting } from './texting.ts';

/**
 * Sends the queued texts of one line (`ln_` id) under its limits (spec "Limits"). One job per line (job key: the
 * line), added or kept by every queued text; it reschedules itself while texts wait for the minute to free.
 */
export const sendTextTask = defineTask(
  'media-buying:send-texts',
  Type.Object({ lineId: Type.String({ maxLength: 64 }) }),
  async (payload, deps: { texting: Texting }) => {
    await deps.texting.pump(payload.lineId);
  },
);

/** Runs the storefront agent on one inbound text (`txi_` id) (spec "Events", rules 2-5). */
export const draftReplyTask = defineTask(
  'media-buying:draft-reply',
  Type.Object({ inboundId: Type.String({ maxLength: 64 }) }),
  async (payload, deps: { texting: Texting }) => {
    await deps.texting.answer(payload.inboundId);
  },
);

/** Deletes the words and numbers of texts older than the retention (spec "Events", rule 7). */
export const textRetentionTask = defineTask(
  'media-buying:text-retention',
  Type.Object({}),
  async (_payload, deps: { texting: Texting }) => {
    await deps.texting.purge();
  },
);

/**
 * Adds the send job of every line that has texts to send but no job that will run (after a process stopped between a
 * commit and its job, or a job failed for good): `Texting.sweep`.
 */
export const textSendSweepTask = defineTask(
  'media-buying:text-send-sweep',
  Type.Object({}),
  async (_payload, deps: { texting: Texting }) => {
    await deps.texting.sweep();
  },
);
