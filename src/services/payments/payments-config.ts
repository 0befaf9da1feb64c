import { integerVar, parseHttpUrl } from '../../platform/config.ts';
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
 * - `PAYMENTS_PAYER_RATE_LIMIT`: payment attempts per minute per client address on the payer route (default 30);
 * - the OAuth settings ({@link OAuthConfig}).
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
  oauth: OAuthConfig;
}

/**
 * OAuth settings (README "OAuth access tokens"):
 * - `PAYMENTS_OAUTH_ACCESS_TOKEN_TTL_SECONDS`: lifetime of the access tokens the service issues (default 900);
 * - `PAYMENTS_OAUTH_TOKEN_RATE_LIMIT`: token requests per minute per client address (default 60);
 * - an external issuer, all or none of: `PAYMENTS_OAUTH_ISSUER` (its `iss`), `PAYMENTS_OAUTH_JWKS_URL` (its keys,
 *   fetched through the SSRF-guarded client); optional `PAYMENTS_OAUTH_AUDIENCE` (the `aud` it gives tokens for this
 *   service; default the payments public URL) and `PAYMENTS_OAUTH_PARTY_CLAIM` (the claim naming the merchant party;
 *   default `party_id`).
 */
export interface OAuthConfig {
  accessTokenTtlSeconds: number;
  tokenRateLimit: number;
  external: ExternalIssuerConfig | null;
}

/** A trusted external OAuth issuer whose JWT access tokens the service accepts besides its own. */
export interface ExternalIssuerConfig {
  issuer: string;
  jwksUrl: URL;
  /** Required `aud`; undefined: the payments public URL. */
  audience: string | undefined;
  /** The claim whose value is the merchant party id (`pty_...`). */
  partyClaim: string;
}

/** Reads the OAuth settings. @throws ConfigError naming the variable. */
function readOAuthConfig(env: Readonly<Record<string, string | undefined>>): OAuthConfig {
  const issuer = env.PAYMENTS_OAUTH_ISSUER?.trim();
  const jwksUrl = env.PAYMENTS_OAUTH_JWKS_URL?.trim();
  const audience = env.PAYMENTS_OAUTH_AUDIENCE?.trim();
  const partyClaim = env.PAYMENTS_OAUTH_PARTY_CLAIM?.trim();
  let external: ExternalIssuerConfig | null = null;
  if (issuer || jwksUrl) {
    if (!issuer || !jwksUrl)
      throw new ConfigError('PAYMENTS_OAUTH_ISSUER and PAYMENTS_OAUTH_JWKS_URL must be set together');
    if (partyClaim !== undefined && !/^[\x21-\x7e]{1,200}$/.test(partyClaim))
      throw new ConfigError(`PAYMENTS_OAUTH_PARTY_CLAIM must be a claim name (got "${partyClaim}")`);
    // The issuer is compared with `iss` exactly as written (RFC 8414 section 2: no normalisation).
    parseHttpUrl('PAYMENTS_OAUTH_ISSUER', issuer);
    external = {
      issuer,
      jwksUrl: parseHttpUrl('PAYMENTS_OAUTH_JWKS_URL', jwksUrl),
      audience: audience || undefined,
      partyClaim: partyClaim || 'party_id',
    };
  } else if (audience || partyClaim) {
    throw new ConfigError(
      'PAYMENTS_OAUTH_AUDIENCE and PAYMENTS_OAUTH_PARTY_CLAIM need PAYMENTS_OAUTH_ISSUER and PAYMENTS_OAUTH_JWKS_URL',
    );
  }
  return {
    accessTokenTtlSeconds: integerVar(env, 'PAYMENTS_OAUTH_ACCESS_TOKEN_TTL_SECONDS', 900, 60, 86_400),
    tokenRateLimit: integerVar(env, 'PAYMENTS_OAUTH_TOKEN_RATE_LIMIT', 60, 1, 100_000_000),
    external,
  };
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
    oauth: readOAuthConfig(env),
  };
}
