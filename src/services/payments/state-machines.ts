/**
 * The state machines of the payments service (spec 001 section A, "States and transitions": the spec lists the
 * states, we design the transitions). Each machine is a table of edges `(from, event) -> to`; every status of a
 * payment intent, card payment or voice session that the service writes is the answer of {@link transition}
 * (compliance cases have their own table and check: compliance.ts). The README and `/openapi.json` (the
 * description of each `status` field, {@link describeTransitions}) show the same tables.
 */
import { ApiError } from '../../platform/errors.ts';

export const INTENT_STATUSES = [
  'open',
  'processing',
  'completed',
  'canceled',
  'declined',
  'expired',
] as const;
export type IntentStatus = (typeof INTENT_STATUSES)[number];

/**
 * Events of a payment intent:
 * - `replaceLineItems`: the merchant replaces the lines (only while open);
 * - `attemptStarted`: a card payment starts (link or voice; only while open and before `expiresAt`);
 * - `paymentSucceeded`: the running card payment succeeded;
 * - `paymentFailed`: the running attempt failed and the payer may try again;
 * - `paymentFailedFinal`: the running attempt failed and it was the last attempt allowed (`PAYMENTS_MAX_ATTEMPTS`);
 * - `paymentFailedAfterExpiry`: the running attempt failed after `expiresAt` passed;
 * - `cancel`: the merchant cancels;
 * - `expire`: `expiresAt` passed (cron job, or on read).
 */
export type IntentEvent =
  | 'replaceLineItems'
  | 'attemptStarted'
  | 'paymentSucceeded'
  | 'paymentFailed'
  | 'paymentFailedFinal'
  | 'paymentFailedAfterExpiry'
  | 'cancel'
  | 'expire';

export const CARD_PAYMENT_STATUSES = ['processing', 'succeeded', 'failed'] as const;
export type CardPaymentStatus = (typeof CARD_PAYMENT_STATUSES)[number];
/** Events of a card payment: the network's answer (immediately, or later through the settle job). */
export type CardPaymentEvent = 'approved' | 'declined';

export const VOICE_SESSION_STATUSES = ['active', 'completed', 'ended'] as const;
export type VoiceSessionStatus = (typeof VOICE_SESSION_STATUSES)[number];
/**
 * Events of a voice session:
 * - `paymentProcessing`: a keyed card is processing (every attempt starts so; a pending card stays so until the
 *   settle job answers): the session stays active, waiting for the answer;
 * - `paymentSucceeded`: the session's keyed card was approved (at once, or later by the settle job);
 * - `paymentFailed`: the session's keyed card was declined (at once, or later by the settle job) and the intent is
 *   open again: the payer may key another card;
 * - `end`: hang-up, superseded by a newer session, or the intent closed (`endedReason` says which).
 */
export type VoiceSessionEvent = 'paymentProcessing' | 'paymentSucceeded' | 'paymentFailed' | 'end';

/** One edge of a machine. */
export interface Edge<S extends string, E extends string> {
  from: S;
  event: E;
  to: S;
}

export const INTENT_EDGES: readonly Edge<IntentStatus, IntentEvent>[] = [
  { from: 'open', event: 'replaceLineItems', to: 'open' },
  { from: 'open', event: 'attemptStarted', to: 'processing' },
  { from: 'open', event: 'cancel', to: 'canceled' },
  { from: 'open', event: 'expire', to: 'expired' },
  { from: 'processing', event: 'paymentSucceeded', to: 'completed' },
  { from: 'processing', event: 'paymentFailed', to: 'open' },
  { from: 'processing', event: 'paymentFailedFinal', to: 'declined' },
  { from: 'processing', event: 'paymentFailedAfterExpiry', to: 'expired' },
];

export const CARD_PAYMENT_EDGES: readonly Edge<CardPaymentStatus, CardPaymentEvent>[] = [
  { from: 'processing', event: 'approved', to: 'succeeded' },
  { from: 'processing', event: 'declined', to: 'failed' },
];

export const VOICE_SESSION_EDGES: readonly Edge<VoiceSessionStatus, VoiceSessionEvent>[] = [
  { from: 'active', event: 'paymentProcessing', to: 'active' },
  { from: 'active', event: 'paymentSucceeded', to: 'completed' },
  { from: 'active', event: 'paymentFailed', to: 'active' },
  { from: 'active', event: 'end', to: 'ended' },
];

/** The machines by name, for {@link transition} and the tests. */
export const MACHINES = {
  paymentIntent: { states: INTENT_STATUSES, edges: INTENT_EDGES },
  cardPayment: { states: CARD_PAYMENT_STATUSES, edges: CARD_PAYMENT_EDGES },
  voiceSession: { states: VOICE_SESSION_STATUSES, edges: VOICE_SESSION_EDGES },
} as const;

export type MachineName = keyof typeof MACHINES;

/** The target of `(from, event)` in `machine`, or undefined when the edge does not exist. */
export function nextState(machine: MachineName, from: string, event: string): string | undefined {
  return (MACHINES[machine].edges as readonly Edge<string, string>[]).find(
    (e) => e.from === from && e.event === event,
  )?.to;
}

const RESOURCE: Record<MachineName, string> = {
  paymentIntent: 'payment intent',
  cardPayment: 'card payment',
  voiceSession: 'voice session',
};

/**
 * Applies `event` to a resource in state `from` and returns its new state.
 * @throws ApiError 409 `invalid_state` (JSON:API error) when the machine has no such edge, naming the state.
 */
export function transition<M extends MachineName>(
  machine: M,
  from: string,
  event: string,
): (typeof MACHINES)[M]['states'][number] {
  const to = nextState(machine, from, event);
  if (to === undefined) {
    throw new ApiError(
      409,
      'invalid_state',
      `This ${RESOURCE[machine]} is ${from}; ${describeEvent(event)} is not possible in that state.`,
      { details: { state: from, event } },
    );
  }
  return to as (typeof MACHINES)[M]['states'][number];
}

function describeEvent(event: string): string {
  switch (event) {
    case 'replaceLineItems':
      return 'replacing its line items';
    case 'attemptStarted':
      return 'starting a payment';
    case 'cancel':
      return 'canceling it';
    case 'expire':
      return 'expiring it';
    case 'end':
      return 'ending it';
    case 'paymentProcessing':
      return 'taking a keyed card';
    default:
      return `"${event}"`;
  }
}

/** True when no edge leaves `state` (other than self-loops). */
export function isTerminal(machine: MachineName, state: string): boolean {
  return !(MACHINES[machine].edges as readonly Edge<string, string>[]).some(
    (e) => e.from === state && e.to !== state,
  );
}

/**
 * The transition table of `machine` as a Markdown table (`| from | event | to |`, one row per edge, in table
 * order), for the description of the machine's `status` field in `/openapi.json`.
 */
export function describeTransitions(machine: MachineName): string {
  const rows = (MACHINES[machine].edges as readonly Edge<string, string>[]).map(
    (e) => `| ${e.from} | ${e.event} | ${e.to} |`,
  );
  const terminal = MACHINES[machine].states.filter((s) => isTerminal(machine, s));
  return [
    `Status of the ${RESOURCE[machine]}. Transitions (any other event answers 409 invalid_state):`,
    '',
    '| from | event | to |',
    '| --- | --- | --- |',
    ...rows,
    '',
    `Terminal: ${terminal.join(', ')}.`,
  ].join('\n');
}
