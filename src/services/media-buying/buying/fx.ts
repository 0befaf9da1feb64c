/**
 * FX reference rates of the simulated ad platform (config, not operator state: see `db/buying.ts`). Rates are units of
 * each currency per US dollar, so a pair's rate is `perUsd[to] / perUsd[from]`. A real adapter asks its platform or a
 * rates provider for the UTC day instead; gaps are simulated by the `fxRateGaps` fault.
 */

/** Units of each currency per USD (mid-market, fixed for the simulator). */
const PER_USD: Readonly<Record<string, number>> = {
  USD: 1,
  EUR: 0.92,
  GBP: 0.79,
  CAD: 1.37,
  AUD: 1.52,
  CHF: 0.88,
  JPY: 151,
};

/**
 * The reference rate converting one unit of `from` into `to` (six significant decimals), or null when either
 * currency has no reference rate.
 */
export function referenceRate(from: string, to: string): number | null {
  if (from === to) return 1;
  const a = PER_USD[from];
  const b = PER_USD[to];
  if (a === undefined || b === undefined) return null;
  return Number((b / a).toFixed(6));
}

/** True when `gaps` (`USD/EUR` pairs, either order) names the pair. */
export function isGap(gaps: readonly string[] | undefined, from: string, to: string): boolean {
  return (gaps ?? []).some((g) => g === `${from}/${to}` || g === `${to}/${from}`);
}
