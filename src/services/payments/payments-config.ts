import { integerVar } from '../../platform/config.ts';
import { ConfigError } from '../../platform/errors.ts';
import { percentToPpm } from './money.ts';

/**
 * Settings of the payments service, from the environment (README "Configuration"):
 * - `PAYMENTS_TAX_RATES`: the tax-code rate table, `code=percent` comma list (replaces the defaults);
 * - `PAYMENTS_DEFAULT_EXPIRY_SECONDS`: lifetime of an intent created without `expiresAt` (default 86400);
 * - `PAYMENTS_MAX_EXPIRY_SECONDS`: latest allowed `expiresAt`, from now (default 2592000 = 30 days);
 * - `PAYMENTS_MAX_ATTEMPTS`: failed card payments after which an intent is `declined` (default 3);
 * - `PAYMENTS_SIM_SETTLE_DELAY_SECONDS`: delay before the settle job of a pending simulated card (default 5);
 * - `PAYMENTS_KEY_RATE_LIMIT`: requests per minute per credential on merchant routes (default 6000);
 * - `PAYMENTS_PAYER_RATE_LIMIT`: payment attempts per minute per client address on the payer route (default 30).
 */
export interface PaymentsConfig {
  /** Tax code -> rate in parts per million. */
  taxRates: Map<string, number>;
  defaultExpirySeconds: number;
  maxExpirySeconds: number;
  maxAttempts: number;
  settleDelaySeconds: number;
  keyRateLimit: number;
  payerRateLimit: number;
}

/**
 * Default tax-code rates (Stripe-style product tax codes): general tangible goods 8.875 % (New York City combined
 * sales tax), electronically supplied services 6 %, general services 4.5 %, nontaxable 0 %.
 */
export const DEFAULT_TAX_RATES = 'txcd_99999999=8.875,txcd_10000000=6,txcd_20030000=4.5,txcd_00000000=0';

/** Parses a `code=percent,...` table. @throws ConfigError naming `PAYMENTS_TAX_RATES`. */
export function parseTaxRates(raw: string): Map<string, number> {
  const rates = new Map<string, number>();
  for (const part of raw.split(',')) {
    const [code, percent, ...rest] = part.split('=').map((s) => s.trim());
    const ppm = percent === undefined ? undefined : percentToPpm(percent);
    if (!code || !/^[A-Za-z0-9_.-]{1,64}$/.test(code) || ppm === undefined || rest.length > 0) {
      throw new ConfigError(
        `PAYMENTS_TAX_RATES must be a comma list of code=percent (0-100, up to 4 decimals), got "${part}"`,
      );
    }
    rates.set(code, ppm);
  }
  return rates;
}

/**
 * Reads and checks the settings (README "Configuration").
 * @throws ConfigError naming the variable (out of range, malformed tax table, default expiry above the maximum).
 */
export function readPaymentsConfig(env: Readonly<Record<string, string | undefined>>): PaymentsConfig {
  const defaultExpirySeconds = integerVar(env, 'PAYMENTS_DEFAULT_EXPIRY_SECONDS', 86_400, 60, 2_592_000);
  const maxExpirySeconds = integerVar(env, 'PAYMENTS_MAX_EXPIRY_SECONDS', 2_592_000, 60, 31_536_000);
  if (defaultExpirySeconds > maxExpirySeconds) {
    throw new ConfigError(
      `PAYMENTS_DEFAULT_EXPIRY_SECONDS (${defaultExpirySeconds}) must not exceed PAYMENTS_MAX_EXPIRY_SECONDS (${maxExpirySeconds})`,
    );
  }
  return {
    taxRates: parseTaxRates(env.PAYMENTS_TAX_RATES?.trim() || DEFAULT_TAX_RATES),
    defaultExpirySeconds,
    maxExpirySeconds,
    maxAttempts: integerVar(env, 'PAYMENTS_MAX_ATTEMPTS', 3, 1, 100),
    settleDelaySeconds: integerVar(env, 'PAYMENTS_SIM_SETTLE_DELAY_SECONDS', 5, 0, 3600),
    keyRateLimit: integerVar(env, 'PAYMENTS_KEY_RATE_LIMIT', 6000, 1, 100_000_000),
    payerRateLimit: integerVar(env, 'PAYMENTS_PAYER_RATE_LIMIT', 30, 1, 100_000_000),
  };
}
