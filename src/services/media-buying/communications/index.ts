/**
 * Agent text-message lines (spec document 000, "Text messaging", "Events", "Limits"; issue 19). Other folders use this
 * module through this file only.
 */
export {
  type Carrier,
  type CarrierOutcome,
  CarrierSimulator,
  type CarrierText,
  SIGNATURE_TOLERANCE_SECONDS,
  SIMULATOR_REFUSED_NUMBER,
  signCarrierWebhook,
  verifyCarrierWebhook,
} from './carrier.ts';
export { readTextingConfig, type TextingConfig } from './config.ts';
export { classifyDestination, E164_PATTERN } from './destinations.ts';
export {
  type Brief,
  DeterministicDraftingAgent,
  type DraftingAgent,
  refuseDraft,
  shortenName,
} from './drafting.ts';
export { keywordOf } from './keywords.ts';
export { DRAFTING_INSTRUCTIONS, OpenAiDraftingAgent } from './model-drafting.ts';
export { countSegments, isOneGsm7Segment } from './segments.ts';
export { draftReplyTask, sendTextTask, textRetentionTask } from './tasks.ts';
export {
  type InboundText,
  REPLIES_PER_LINE_HOUR,
  REPLIES_PER_NUMBER,
  REPLY_WINDOW_MS,
  RETENTION_MS,
  type TextCommand,
  type TextCommandResult,
  Texting,
} from './texting.ts';
