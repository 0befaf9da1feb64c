/**
 * Money of the buying records: stored as integer minor units of an ISO 4217 currency, shown on REST as decimal
 * numbers in major units (AdCP's `total_budget`, `budget`, prices), e.g. `{total: 1250.5, currency: "USD"}` is
 * 125,050 cents.
 */

/** ISO 4217 codes this service trades in, with their minor-unit exponent. */
export const CURRENCY_EXPONENTS: Readonly<Record<string, number>> = {
  USD: 2,
  EUR: 2,
  GBP: 2,
  CAD: 2,
  AUD: 2,
  CHF: 2,
  JPY: 0,
};

/** The supported currencies. */
export const CURRENCIES = Object.keys(CURRENCY_EXPONENTS);

/** Largest amount in minor units a request may carry (10^13: 100 billion dollars; exact in a double). */
export const MAX_MINOR_UNITS = 10_000_000_000_000;

/** The minor-unit exponent of `currency` (2 for USD, 0 for JPY). @throws Error for an unsupported currency. */
export function exponentOf(currency: string): number {
  const exponent = CURRENCY_EXPONENTS[currency];
  if (exponent === undefined) throw new Error(`unsupported currency ${currency}`);
  return exponent;
}

/**
 * Converts a decimal major-unit amount to minor units.
 * @returns the integer, or null when the amount has more decimals than the currency's exponent, is negative or
 *   exceeds {@link MAX_MINOR_UNITS}.
 */
export function toMinor(amount: number, currency: string): number | null {
  const factor = 10 ** exponentOf(currency);
  const minor = Math.round(amount * factor);
  if (!Number.isFinite(amount) || amount < 0 || minor > MAX_MINOR_UNITS) return null;
  if (Math.abs(minor / factor - amount) > 1e-9) return null;
  return minor;
}

/** Converts minor units to a decimal major-unit number. */
export function fromMinor(minor: number, currency: string): number {
  const exponent = exponentOf(currency);
  return Number((minor / 10 ** exponent).toFixed(exponent));
}

/**
 * Converts an amount in minor units of `from` to minor units of `to` at `rate` (one major unit of `from` in major
 * units of `to`), rounded up (a budget check never undercounts): the minor-unit exponents of both currencies apply
 * (USD 1.00 = 100 minor units -> JPY at 150 = 150 minor units).
 */
export function convertMinor(amountMinor: number, from: string, to: string, rate: number): number {
  // Floating-point noise (100 * 1.1 = 110.00000000000001) is not a minor unit more.
  return Math.ceil(amountMinor * rate * 10 ** (exponentOf(to) - exponentOf(from)) - 1e-6);
}
