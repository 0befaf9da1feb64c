/**
 * The card network behind an interface (docs/architecture.md: external systems sit behind an interface with a
 * simulator as the default). The domain hands the network the card for one attempt; the network answers approved,
 * declined (with a decline code) or pending (answered later through {@link CardNetwork.settle}, run by the job
 * `payments:settle-card-payment`). The card number never leaves this call: only brand and last4 are kept.
 */
import valid from 'card-validator';
import { ApiError } from '../../platform/errors.ts';

/** A card as keyed by the payer. `expMonth` 1-12, `expYear` four digits. */
export interface CardInput {
  number: string;
  expMonth: number;
  expYear: number;
  cvc: string;
}

/** A checked card: digits only, its brand (`visa`, `mastercard`, ...) and last four digits. */
export interface CheckedCard {
  digits: string;
  brand: string;
  last4: string;
  expMonth: number;
  expYear: number;
  cvc: string;
}

/** The network's answer to one attempt. */
export type NetworkOutcome =
  | { result: 'approved'; reference: string }
  | { result: 'declined'; reference: string; declineCode: DeclineCode; message: string }
  | { result: 'pending'; reference: string };

export type DeclineCode = 'card_declined' | 'insufficient_funds' | 'expired_card' | 'incorrect_cvc';

/** The card network a payment is sent to. */
export interface CardNetwork {
  /** Sends one authorization for `amount` cents. */
  authorize(card: CheckedCard, amount: number): Promise<NetworkOutcome>;
  /** The final answer of a `pending` attempt (by its reference). */
  settle(reference: string): Promise<Exclude<NetworkOutcome, { result: 'pending' }>>;
}

/** Payer-facing text of each decline code (shown on the checkout page). */
export const DECLINE_MESSAGES: Readonly<Record<DeclineCode, string>> = {
  card_declined: 'Your card was declined.',
  insufficient_funds: 'Your card has insufficient funds.',
  expired_card: 'Your card has expired.',
  incorrect_cvc: "Your card's security code is incorrect.",
};

/**
 * The simulator's test cards (the well-known numbers of card test modes). Any other valid card is approved.
 * The two pending cards (…0077 settles approved, …0093 settles declined) are the simulator's own choice (README).
 */
export const TEST_CARDS = {
  success: '4242424242424242',
  genericDecline: '4000000000000002',
  insufficientFunds: '4000000000009995',
  expiredCard: '4000000000000069',
  incorrectCvc: '4000000000000127',
  /** Stays `processing`; the settle job approves it later. */
  pendingThenSuccess: '4000000000000077',
  /** Stays `processing`; the settle job declines it later (`card_declined`). */
  pendingThenDecline: '4000000000000093',
} as const;

const SIMULATED_DECLINES: Readonly<Record<string, DeclineCode>> = {
  [TEST_CARDS.genericDecline]: 'card_declined',
  [TEST_CARDS.insufficientFunds]: 'insufficient_funds',
  [TEST_CARDS.expiredCard]: 'expired_card',
  [TEST_CARDS.incorrectCvc]: 'incorrect_cvc',
};

/** The default {@link CardNetwork}: answers from the card number alone, deterministically. */
export class SimulatedCardNetwork implements CardNetwork {
  private counter = 0;

  async authorize(card: CheckedCard): Promise<NetworkOutcome> {
    const reference = `sim_${Date.now().toString(36)}_${(this.counter++).toString(36)}`;
    const declineCode = SIMULATED_DECLINES[card.digits];
    if (declineCode)
      return { result: 'declined', reference, declineCode, message: DECLINE_MESSAGES[declineCode] };
    if (card.digits === TEST_CARDS.pendingThenSuccess)
      return { result: 'pending', reference: `${reference}_pa` };
    if (card.digits === TEST_CARDS.pendingThenDecline)
      return { result: 'pending', reference: `${reference}_pd` };
    return { result: 'approved', reference };
  }

  async settle(reference: string): Promise<Exclude<NetworkOutcome, { result: 'pending' }>> {
    if (reference.endsWith('_pd')) {
      return {
        result: 'declined',
        reference,
        declineCode: 'card_declined',
        message: DECLINE_MESSAGES.card_declined,
      };
    }
    return { result: 'approved', reference };
  }
}

/**
 * Checks a keyed card with `card-validator` (Luhn, brand, length, CVC length of the brand) and the expiry against
 * `now` (a card is valid through the last day of its expiry month, UTC).
 * @throws ApiError 400 `invalid_value` with the pointer of the first bad field under `pointerBase`; the message
 *   never contains the card number.
 */
export function checkCard(input: CardInput, now: Date, pointerBase: string): CheckedCard {
  const digits = input.number.replace(/[\s-]/g, '');
  const number = valid.number(digits);
  if (!/^\d{12,19}$/.test(digits) || !number.isValid || !number.card) {
    throw new ApiError(400, 'invalid_value', 'The card number is not valid.', {
      details: { pointer: `${pointerBase}/number` },
    });
  }
  if (!Number.isInteger(input.expMonth) || input.expMonth < 1 || input.expMonth > 12) {
    throw new ApiError(400, 'invalid_value', 'The expiry month must be 1-12.', {
      details: { pointer: `${pointerBase}/expMonth` },
    });
  }
  const year = input.expYear < 100 ? 2000 + input.expYear : input.expYear;
  const endOfMonth = Date.UTC(year, input.expMonth, 1);
  if (!Number.isInteger(year) || endOfMonth <= now.getTime()) {
    throw new ApiError(400, 'invalid_value', 'The card has expired (check the expiry date).', {
      details: { pointer: `${pointerBase}/expYear` },
    });
  }
  if (year > now.getUTCFullYear() + 20) {
    throw new ApiError(400, 'invalid_value', 'The expiry year is too far in the future.', {
      details: { pointer: `${pointerBase}/expYear` },
    });
  }
  if (!valid.cvv(input.cvc, number.card.code.size).isValid) {
    throw new ApiError(
      400,
      'invalid_value',
      `The security code must be ${number.card.code.size} digits for this card.`,
      { details: { pointer: `${pointerBase}/cvc` } },
    );
  }
  return {
    digits,
    brand: number.card.type,
    last4: digits.slice(-4),
    expMonth: input.expMonth,
    expYear: year,
    cvc: input.cvc,
  };
}
