/**
 * Money and tax arithmetic of payment intents (spec 001 section A). All amounts are integer US cents; rates are
 * integer parts per million (8.875 % = 88 750 ppm) so that no floating point touches money.
 *
 * The one rounding rule: the tax of a line is computed once, from the line's exact amount, and rounded half up
 * (half a cent goes up) to a whole cent:
 * - `exclusive`: net = quantity × unitAmount; tax = round(net × rate); total = net + tax; subtotal = net.
 * - `inclusive`: total = quantity × unitAmount; tax = round(total × rate / (1 + rate)); subtotal = total − tax.
 * The intent's `amount` is the sum of the lines' `totalAmount`, its `taxAmount` the sum of their `taxAmount`
 * (sums of already rounded cents: no second rounding).
 */
import { ApiError } from '../../platform/errors.ts';
import { prefixedHexId } from '../../platform/ids.ts';
import type { LineItemRow } from './db/schema.ts';

export const PPM = 1_000_000;

/** A requested line (what the merchant sends). */
export interface LineItemInput {
  referenceId?: string | null;
  description: string;
  quantity: number;
  unitAmount: number;
  taxCode?: string | null;
}

export type TaxMode = 'exclusive' | 'inclusive';

/** `numerator / denominator` rounded half up, for non-negative integers (BigInt, exact). */
export function divideRoundHalfUp(numerator: bigint, denominator: bigint): bigint {
  return (numerator * 2n + denominator) / (denominator * 2n);
}

/**
 * Tax of one line in cents.
 * @param lineAmount quantity × unitAmount in cents (net for exclusive, gross for inclusive).
 * @param ratePpm the tax rate in parts per million.
 */
export function lineTax(lineAmount: number, ratePpm: number, mode: TaxMode): number {
  if (ratePpm === 0 || lineAmount === 0) return 0;
  const amount = BigInt(lineAmount);
  const rate = BigInt(ratePpm);
  const denominator = mode === 'exclusive' ? BigInt(PPM) : BigInt(PPM) + rate;
  return Number(divideRoundHalfUp(amount * rate, denominator));
}

/** Intent totals in cents. */
export interface Totals {
  lineItems: LineItemRow[];
  amount: number;
  taxAmount: number;
}

/** Largest intent amount in cents ($999,999.99, the usual card-network ceiling). */
export const MAX_AMOUNT = 99_999_999;

/**
 * Prices `lines` (in display order, positions 0..n-1, new `pli_` ids) with `rates` (tax code -> ppm; a null tax
 * code is untaxed).
 * @throws ApiError 400 `invalid_value` (pointer `/data/attributes/lineItems/<i>/taxCode`) for an unknown tax code,
 *   400 `invalid_value` (pointer `/data/attributes/lineItems`) when the total is 0 or above {@link MAX_AMOUNT}.
 */
export function priceLineItems(
  lines: readonly LineItemInput[],
  mode: TaxMode,
  rates: ReadonlyMap<string, number>,
  pointerBase = '/data/attributes/lineItems',
): Totals {
  let amount = 0;
  let taxAmount = 0;
  const lineItems = lines.map((line, position): LineItemRow => {
    const taxCode = line.taxCode ?? null;
    let ratePpm = 0;
    if (taxCode !== null) {
      const rate = rates.get(taxCode);
      if (rate === undefined) {
        throw new ApiError(
          400,
          'invalid_value',
          `Unknown tax code "${taxCode}"; known codes: ${[...rates.keys()].join(', ')}.`,
          { details: { pointer: `${pointerBase}/${position}/taxCode` } },
        );
      }
      ratePpm = rate;
    }
    const lineAmount = line.quantity * line.unitAmount;
    if (!Number.isSafeInteger(lineAmount) || lineAmount > MAX_AMOUNT) {
      throw new ApiError(400, 'invalid_value', `A line may total at most ${MAX_AMOUNT} cents.`, {
        details: { pointer: `${pointerBase}/${position}` },
      });
    }
    const tax = lineTax(lineAmount, ratePpm, mode);
    const totalAmount = mode === 'exclusive' ? lineAmount + tax : lineAmount;
    amount += totalAmount;
    taxAmount += tax;
    return {
      id: prefixedHexId('pli'),
      position,
      referenceId: line.referenceId ?? null,
      description: line.description,
      quantity: line.quantity,
      unitAmount: line.unitAmount,
      subtotalAmount: totalAmount - tax,
      taxAmount: tax,
      totalAmount,
      taxCode,
    };
  });
  if (amount <= 0 || amount > MAX_AMOUNT) {
    throw new ApiError(
      400,
      'invalid_value',
      `The intent amount must be from 1 to ${MAX_AMOUNT} cents (got ${amount}).`,
      { details: { pointer: pointerBase } },
    );
  }
  return { lineItems, amount, taxAmount };
}

/**
 * Parses a percentage with at most four decimals ("8.875") into parts per million.
 * @returns undefined when the text is not such a number from 0 to 100.
 */
export function percentToPpm(text: string): number | undefined {
  const m = /^(\d{1,3})(?:\.(\d{1,4}))?$/.exec(text.trim());
  if (!m) return undefined;
  const ppm = Number(m[1]) * 10_000 + Number((m[2] ?? '').padEnd(4, '0'));
  return ppm <= PPM ? ppm : undefined;
}
