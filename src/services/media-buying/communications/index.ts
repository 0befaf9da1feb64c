/**
 * Agent text-message lines (spec document 000, "Text messaging", "Events", "Limits"; issue 19). Other folders use this
 * module through this file only.
 */
export {
  CarrierSimulator,
  SIMULATOR_REFUSED_NUMBER,
  signCarrierWebhook,
  verifyCarrierWebhook,
} from './carrier.ts';
export { readTextingConfig } from './config.ts';
export { E164_PATTERN } from './destinations.ts';
export {
  DeterministicDraftingAgent,
  type DraftingAgent,
  ReplyTemplate,
  refuseDraft,
  shortenName,
} from './drafting.ts';
export { keywordOf } from './keywords.ts';
export { OpenAiDraftingAgent } from './model-drafting.ts';
export { countSegments, isOneGsm7Segment } from './segments.ts';
export { draftReplyTask, sendTextTask, textRetentionTask, textSendSweepTask } from './tasks.ts';
export { Texting } from './texting.ts';
