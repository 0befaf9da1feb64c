/**
 * OAuth 2.0 access tokens of the payments API (spec A "Authentication": the bearer credential may be an OAuth access
 * token): the service as an authorization server issuing JWT access tokens (RFC 9068) for the `client_credentials`
 * grant (RFC 6749 section 4.4), and as a resource server verifying them with `jose`, its own and, when configured, an
 * external issuer's.
 *
 * A token of this service: header `{alg: ES256, kid, typ: at+jwt}`; claims `iss` and `aud` (both the payments public
 * URL), `sub` and `client_id` (the client), `scope`, `iat`, `nbf`, `exp`, `jti`. It is accepted while its signature
 * verifies with a published key, `iss`, `aud` and `typ` match, `exp` and `nbf` hold on the service clock (30 s
 * leeway), and its client is not revoked; its scopes are those it was granted that the client still has.
 *
 * An external issuer's token (`PAYMENTS_OAUTH_ISSUER`): signed by a key of its JWKS (fetched through the platform's
 * SSRF-guarded client), with its `iss`, the configured audience, an `exp`, and the configured party claim naming a
 * merchant party of this service; its `scope` claim gives its scopes. A token naming no known merchant is refused.
 */
import {
  createRemoteJWKSet,
  customFetch,
  decodeJwt,
  type JWTPayload,
  errors as joseErrors,
  SignJWT,
} from 'jose';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../../platform/clock.ts';
import { type CredentialSource, firstAccepting, JwtCredentialSource } from '../../platform/credentials.ts';
import { isPrefixedHexId, randomToken } from '../../platform/ids.ts';
import type { AppLogger } from '../../platform/logger.ts';
import { OutboundError, type OutboundHttp } from '../../platform/outbound-http.ts';
import { SIGNING_ALGORITHM, type SigningKeys } from '../../platform/signing-keys.ts';
import type { AuthenticatedClient, OAuthClients } from './oauth-clients.ts';
import { knownScopes, parseScopeList, type Scope } from './oauth-scopes.ts';
import {
  AGENT_KEY_PREFIX,
  API_KEY_PREFIX,
  type CredentialStore,
  type PartyService,
  type Principal,
} from './parties.ts';
import type { ExternalIssuerConfig } from './payments-config.ts';

/** Clock tolerance of `exp` and `nbf`, in seconds (also how much longer a retired signing key stays published). */
export const TOKEN_LEEWAY_SECONDS = 30;

/** Signature algorithms accepted from an external issuer (asymmetric only: never `none`, never HMAC). */
const EXTERNAL_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'];

/** An issued access token (the RFC 6749 section 5.1 answer). */
export interface IssuedToken {
  accessToken: string;
  /** Seconds. */
  expiresIn: number;
  scopes: Scope[];
}

/**
 * Issues the service's access tokens (RFC 9068 JWTs signed with the active key of {@link SigningKeys}).
 */
export class TokenIssuer {
  constructor(
    private readonly keys: SigningKeys,
    private readonly clock: Clock,
    private readonly options: { issuer: () => string; ttlSeconds: number },
  ) {}

  /** A token for `client` with `scopes` (already checked to be the client's), valid `ttlSeconds` from now. */
  async issue(client: AuthenticatedClient, scopes: readonly Scope[]): Promise<IssuedToken> {
    const key = await this.keys.signingKey();
    const now = Math.floor(this.clock.nowMs() / 1000);
    const issuer = this.options.issuer();
    const accessToken = await new SignJWT({ client_id: client.clientId, scope: scopes.join(' ') })
      .setProtectedHeader({ alg: SIGNING_ALGORITHM, kid: key.kid, typ: 'at+jwt' })
      .setIssuer(issuer)
      .setAudience(issuer)
      .setSubject(client.clientId)
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(now + this.options.ttlSeconds)
      .setJti(randomToken(16))
      .sign(key.privateKey);
    return { accessToken, expiresIn: this.options.ttlSeconds, scopes: [...scopes] };
  }
}

/** The `iss` of a JWT-shaped string, without verifying anything; undefined when it is not a JWT with one. */
function unverifiedIssuer(token: string): string | undefined {
  if (token.split('.').length !== 3) return undefined;
  try {
    const iss = decodeJwt(token).iss;
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
}

/** The scopes of a verified token's `scope` claim that this service defines. */
function claimedScopes(claims: JWTPayload): Scope[] {
  const scope = claims.scope;
  if (typeof scope !== 'string') return [];
  return knownScopes(parseScopeList(scope) ?? []);
}

/**
 * A `fetch` for jose's remote JWKS through the platform's SSRF-guarded client (public addresses only unless
 * `OUTBOUND_ALLOW_PRIVATE`, no redirects, bounded time and size). A refused or failed call is a jose error, so the
 * token is refused (401), never a 500; the reason is logged.
 */
function guardedFetch(outbound: OutboundHttp, logger: AppLogger) {
  return async (url: string, init: { headers: Headers; signal: AbortSignal }): Promise<Response> => {
    try {
      const res = await outbound.send(url, {
        method: 'GET',
        headers: Object.fromEntries(init.headers.entries()),
        timeoutMs: 5_000,
        maxBodyBytes: 256 * 1024,
      });
      if (res.truncated) throw new joseErrors.JOSEError('The JWKS answer is too large');
      return new Response(new Uint8Array(res.body), { status: res.status });
    } catch (err) {
      const reason = err instanceof OutboundError ? err.kind : err instanceof Error ? err.message : 'failed';
      logger.warn({ reason }, 'external OAuth issuer JWKS unavailable');
      if (err instanceof joseErrors.JOSEError) throw err;
      throw new joseErrors.JOSEError('The JWKS could not be fetched');
    }
  };
}

/** What the bearer credential resolver needs. */
export interface BearerResolverDeps {
  keys: CredentialStore;
  clients: OAuthClients;
  signingKeys: SigningKeys;
  parties: PartyService;
  clock: Clock;
  outbound: OutboundHttp;
  logger: AppLogger;
  /** The payments public URL (this service's issuer and audience); read per request (tests learn it late). */
  publicUrl: () => string;
  external: ExternalIssuerConfig | null;
}

/**
 * The payments bearer credentials behind one header (spec A "Authentication"): `sk_` API keys and `ak_` agent keys
 * (the credential kit), then JWT access tokens by their `iss`: this service's, and the external issuer's when
 * configured. Anything else is `unknown`.
 */
export function bearerCredentials(deps: BearerResolverDeps): CredentialSource<Principal> {
  const own = memoByIssuer((issuer) => ownTokenSource(deps, issuer));
  const external = deps.external ? externalTokenSource(deps, deps.external) : undefined;
  return firstAccepting<Principal>([
    {
      accepts: (s) => s.startsWith(API_KEY_PREFIX) || s.startsWith(AGENT_KEY_PREFIX),
      source: deps.keys,
    },
    {
      accepts: (s) => unverifiedIssuer(s) === deps.publicUrl(),
      source: { resolve: (s) => own(deps.publicUrl()).resolve(s) },
    },
    {
      accepts: (s) => external !== undefined && unverifiedIssuer(s) === deps.external?.issuer,
      source: { resolve: (s) => external!(deps.publicUrl()).resolve(s) },
    },
  ]);
}

/** One source per value of the public URL (it is fixed in production; tests bind a port after the boot). */
function memoByIssuer<T>(make: (issuer: string) => T): (issuer: string) => T {
  let last: { issuer: string; value: T } | undefined;
  return (issuer) => {
    if (last?.issuer !== issuer) last = { issuer, value: make(issuer) };
    return last.value;
  };
}

/** The service's own tokens: its signing keys, `typ: at+jwt`, and the client's current state. */
function ownTokenSource(deps: BearerResolverDeps, issuer: string): JwtCredentialSource<Principal> {
  return new JwtCredentialSource<Principal>({
    keys: deps.signingKeys.getKey,
    issuer,
    audience: issuer,
    algorithms: [SIGNING_ALGORITHM],
    typ: 'at+jwt',
    requiredClaims: ['exp', 'iat', 'jti', 'sub', 'client_id'],
    clock: deps.clock,
    clockToleranceSeconds: TOKEN_LEEWAY_SECONDS,
    async principal(claims) {
      const clientId = claims.client_id;
      if (typeof clientId !== 'string' || claims.sub !== clientId) return 'unknown';
      const client = await deps.clients.state(clientId);
      if (!client) return 'unknown';
      if (client.revoked) return 'revoked';
      const still = new Set(client.scopes);
      return {
        partyId: client.partyId,
        credentialId: client.id,
        kind: 'oauth',
        scopes: claimedScopes(claims).filter((s) => still.has(s)),
        bucket: `key:${client.id}`,
      };
    },
  });
}

/**
 * An external issuer's tokens: its remote JWKS (jose, through the guarded client), its `iss`, the configured audience
 * (default the payments public URL), and the party claim naming a merchant party of this service (cached 60 s).
 */
function externalTokenSource(
  deps: BearerResolverDeps,
  config: ExternalIssuerConfig,
): (publicUrl: string) => JwtCredentialSource<Principal> {
  const jwks = createRemoteJWKSet(config.jwksUrl, {
    timeoutDuration: 5_000,
    [customFetch]: guardedFetch(deps.outbound, deps.logger),
  });
  const merchants = new LRUCache<string, boolean>({
    max: 10_000,
    ttl: 60_000,
    ttlResolution: 0,
    perf: { now: () => deps.clock.nowMs() },
  });
  const isMerchant = async (partyId: string) => {
    let known = merchants.get(partyId);
    if (known === undefined) {
      known = (await deps.parties.find(partyId))?.kind === 'merchant';
      merchants.set(partyId, known);
    }
    return known;
  };
  return memoByIssuer(
    (publicUrl) =>
      new JwtCredentialSource<Principal>({
        keys: jwks,
        issuer: config.issuer,
        audience: config.audience ?? publicUrl,
        algorithms: EXTERNAL_ALGORITHMS,
        clock: deps.clock,
        clockToleranceSeconds: TOKEN_LEEWAY_SECONDS,
        async principal(claims) {
          const partyId = claims[config.partyClaim];
          if (typeof partyId !== 'string' || !isPrefixedHexId('pty', partyId)) return 'unknown';
          if (!(await isMerchant(partyId))) return 'unknown';
          const client =
            typeof claims.client_id === 'string'
              ? claims.client_id
              : typeof claims.sub === 'string'
                ? claims.sub
                : '';
          return {
            partyId,
            credentialId: null,
            kind: 'oauth',
            scopes: claimedScopes(claims),
            bucket: `ext:${partyId}:${client.slice(0, 200)}`,
          };
        },
      }),
  );
}
