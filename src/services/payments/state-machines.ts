/**
 * The state machines of the payments service (spec 001 section A, "States and transitions": the spec lists the
 * states, we design the transitions). Each machine is a table of edges `(from, event) -> to`; {@link transition}
 * is the only place a status changes, and every store write of a status goes through it. The README shows the
 * same tables.
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
 * Events of a voice session: `paymentStarted` (a keyed card was approved or is processing), `paymentFailed` (a
 * keyed card was declined and the intent is still open: the payer may key another), `end` (hang-up, superseded by a
 * newer session, or the intent closed).
 */
export type VoiceSessionEvent = 'paymentStarted' | 'paymentFailed' | 'end';

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
  { from: 'active', event: 'paymentStarted', to: 'completed' },
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
