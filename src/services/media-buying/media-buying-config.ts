import { isLoopbackHost } from '../../platform/addresses.ts';
import { ConfigError } from '../../platform/errors.ts';

/** Settings of the media-buying service (`MEDIA_BUYING_...`). */
export interface MediaBuyingConfig {
  /**
   * `MEDIA_BUYING_UI_ORIGIN`: the one origin whose browsers may make state-changing requests with a session cookie
   * (spec "Authentication", rule 4), where mailed links and sign-in callbacks point. Unset (undefined): the origin of
   * the service's public URL, whose pages it serves itself, read at use ({@link uiOriginOf}).
   */
  uiOrigin: string | undefined;
  /**
   * `MEDIA_BUYING_COOKIE_DOMAIN` (default unset: host-only cookies): a parent domain (`example.com`) the session
   * cookie is scoped to, used only when it is a strict parent of the service's host (rule 4).
   */
  cookieDomain: string | undefined;
  /** `MEDIA_BUYING_SMTP_URL` (default unset: mail goes to the outbox table, read on `/_ops/mail`). */
  smtpUrl: string | undefined;
  /** `MEDIA_BUYING_MAIL_FROM` (default `"Media Buying" <no-reply@media-buying.invalid>`). */
  mailFrom: string;
  /** `MEDIA_BUYING_SESSION_HOURS` (default 168, one week): a browser session's absolute lifetime. */
  sessionHours: number;
  /** `MEDIA_BUYING_BRAND_CUTOVER` (default false): `featureFlags.productBrandCutover` of `GET /auth/me`. */
  productBrandCutover: boolean;
  /** `MEDIA_BUYING_BRAND_WORDMARK_URL` (default unset): `featureFlags.productBrandWordmarkUrl`. */
  productBrandWordmarkUrl: string | undefined;
  /** `MEDIA_BUYING_REQUESTS_PER_MINUTE` (default 600): REST requests per minute per credential. */
  requestsPerMinute: number;
  /**
   * The external OpenID Connect provider of SSO: `MEDIA_BUYING_OIDC_ISSUER` (its issuer identifier, https, or http on a
   * loopback host), `MEDIA_BUYING_OIDC_CLIENT_ID` and `MEDIA_BUYING_OIDC_CLIENT_SECRET` (this service's registration
   * there), all three or none. Unset: the built-in simulator under `/_sim/oidc`.
   */
  oidc: { issuer: string; clientId: string; clientSecret: string } | undefined;
}

type Env = Readonly<Record<string, string | undefined>>;

function set(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function httpUrl(name: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL (got "${value}")`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ConfigError(`${name} must be an http(s) URL (got "${value}")`);
  return url;
}

/**
 * The UI origin now: the configured one, or else the origin of the service's public URL (read at each use: a test
 * platform learns its port after the service is set up).
 */
export function uiOriginOf(config: MediaBuyingConfig, publicUrl: () => string): () => string {
  return () => config.uiOrigin ?? new URL(publicUrl()).origin;
}

/**
 * Reads and validates the service's variables.
 * @throws ConfigError with a one-line reason.
 */
export function readMediaBuyingConfig(env: Env): MediaBuyingConfig {
  const uiRaw = set(env, 'MEDIA_BUYING_UI_ORIGIN');
  const uiOrigin = uiRaw ? httpUrl('MEDIA_BUYING_UI_ORIGIN', uiRaw).origin : undefined;
  const cookieDomain = set(env, 'MEDIA_BUYING_COOKIE_DOMAIN')?.replace(/^\./, '').toLowerCase();
  if (
    cookieDomain !== undefined &&
    !/^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/.test(cookieDomain)
  )
    throw new ConfigError(
      `MEDIA_BUYING_COOKIE_DOMAIN must be a domain name such as example.com (got "${cookieDomain}")`,
    );
  const smtpUrl = set(env, 'MEDIA_BUYING_SMTP_URL');
  if (smtpUrl !== undefined) {
    let protocol: string;
    try {
      protocol = new URL(smtpUrl).protocol;
    } catch {
      throw new ConfigError('MEDIA_BUYING_SMTP_URL must be an smtp:// or smtps:// URL');
    }
    if (protocol !== 'smtp:' && protocol !== 'smtps:')
      throw new ConfigError('MEDIA_BUYING_SMTP_URL must be an smtp:// or smtps:// URL');
  }
  const hoursRaw = set(env, 'MEDIA_BUYING_SESSION_HOURS');
  let sessionHours = 168;
  if (hoursRaw !== undefined) {
    if (!/^\d+$/.test(hoursRaw) || Number(hoursRaw) < 1 || Number(hoursRaw) > 720)
      throw new ConfigError(
        `MEDIA_BUYING_SESSION_HOURS must be an integer from 1 to 720 (got "${hoursRaw}")`,
      );
    sessionHours = Number(hoursRaw);
  }
  const cutoverRaw = set(env, 'MEDIA_BUYING_BRAND_CUTOVER') ?? 'false';
  if (cutoverRaw !== 'true' && cutoverRaw !== 'false')
    throw new ConfigError(`MEDIA_BUYING_BRAND_CUTOVER must be true or false (got "${cutoverRaw}")`);
  const rateRaw = set(env, 'MEDIA_BUYING_REQUESTS_PER_MINUTE');
  let requestsPerMinute = 600;
  if (rateRaw !== undefined) {
    if (!/^\d+$/.test(rateRaw) || Number(rateRaw) < 1 || Number(rateRaw) > 1_000_000)
      throw new ConfigError(
        `MEDIA_BUYING_REQUESTS_PER_MINUTE must be an integer from 1 to 1000000 (got "${rateRaw}")`,
      );
    requestsPerMinute = Number(rateRaw);
  }
  const wordmark = set(env, 'MEDIA_BUYING_BRAND_WORDMARK_URL');
  if (wordmark !== undefined) httpUrl('MEDIA_BUYING_BRAND_WORDMARK_URL', wordmark);
  return {
    oidc: readOidc(env),
    uiOrigin,
    cookieDomain,
    smtpUrl,
    mailFrom: set(env, 'MEDIA_BUYING_MAIL_FROM') ?? '"Media Buying" <no-reply@media-buying.invalid>',
    sessionHours,
    productBrandCutover: cutoverRaw === 'true',
    productBrandWordmarkUrl: wordmark,
    requestsPerMinute,
  };
}

/** The external OpenID Connect provider settings (`MediaBuyingConfig.oidc`). @throws ConfigError. */
function readOidc(env: Env): MediaBuyingConfig['oidc'] {
  const issuer = set(env, 'MEDIA_BUYING_OIDC_ISSUER');
  const clientId = set(env, 'MEDIA_BUYING_OIDC_CLIENT_ID');
  const clientSecret = set(env, 'MEDIA_BUYING_OIDC_CLIENT_SECRET');
  if (issuer === undefined) {
    if (clientId !== undefined || clientSecret !== undefined)
      throw new ConfigError(
        'MEDIA_BUYING_OIDC_CLIENT_ID and MEDIA_BUYING_OIDC_CLIENT_SECRET need MEDIA_BUYING_OIDC_ISSUER',
      );
    return undefined;
  }
  const url = httpUrl('MEDIA_BUYING_OIDC_ISSUER', issuer);
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname))
    throw new ConfigError(
      `MEDIA_BUYING_OIDC_ISSUER must be an https URL (http only on a loopback host; got "${issuer}")`,
    );
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '')
    throw new ConfigError(
      `MEDIA_BUYING_OIDC_ISSUER must be an issuer identifier, without query, fragment or credentials (got "${issuer}")`,
    );
  if (clientId === undefined || clientSecret === undefined)
    throw new ConfigError(
      'MEDIA_BUYING_OIDC_ISSUER needs MEDIA_BUYING_OIDC_CLIENT_ID and MEDIA_BUYING_OIDC_CLIENT_SECRET',
    );
  if (clientId.length > 200 || clientSecret.length > 500)
    throw new ConfigError('MEDIA_BUYING_OIDC_CLIENT_ID or MEDIA_BUYING_OIDC_CLIENT_SECRET is too long');
  return { issuer, clientId, clientSecret };
}
