/**
 * SSO through an external OpenID Connect provider (spec "Sign-in and signup": `GET /auth/sso/url`,
 * `POST /auth/sso/callback`), the client side done with `oauth4webapi` (OpenID Connect Core 1.0 section 3.1,
 * authorization code flow): discovery of the issuer (cached an hour), PKCE S256 (RFC 7636), `state` and `nonce`,
 * `iss` in the authorization response when the provider announces it (RFC 9207), client authentication by
 * `client_secret_basic` (or `client_secret_post` when that is all the provider takes), and the ID token validated:
 * issuer, audience, expiry and issue time on the service clock, nonce, and its signature by the provider's JWKS.
 *
 * The provider is the built-in simulator by default (reached in process), or any issuer configured by
 * `MEDIA_BUYING_OIDC_ISSUER`, reached through the platform's SSRF-guarded client (public addresses only unless
 * `OUTBOUND_ALLOW_PRIVATE`, no redirects, bounded time and size).
 *
 * An SSO identity (issuer + subject) is linked to one of the provider's identities: its link when it has one;
 * otherwise, only by an email the provider marks verified (`email_verified: true`), the identity of that email (made,
 * without a password, when none exists). An unverified email links nothing (403).
 */
import { and, eq } from 'drizzle-orm';
import * as oauth from 'oauth4webapi';
import type { Clock } from '../../../platform/clock.ts';
import type { Db, Executor } from '../../../platform/database.ts';
import type { AppLogger } from '../../../platform/logger.ts';
import { OutboundError, type OutboundHttp } from '../../../platform/outbound-http.ts';
import { identities, ssoLinks } from '../db/schema.ts';
import type { Accounts, SignInStates, SignupExperience } from '../identity/index.ts';
import {
  credentialInvalid,
  forbidden,
  semanticValidation,
  serviceUnavailable,
} from '../media-buying-errors.ts';

/** How long discovered provider metadata is kept, in milliseconds. */
const METADATA_TTL_MS = 3_600_000;

/** The scopes asked of the provider. */
const SCOPES = 'openid email profile';

/** A `fetch` for `oauth4webapi`. */
export type OidcTransport = (
  url: string,
  init: { method?: string; headers?: unknown; body?: unknown },
) => Promise<Response>;

/** The provider and this client's registration there. */
export interface SsoClientOptions {
  /** The issuer identifier (read per request: the simulator's follows the public URL). */
  issuer: () => string;
  clientId: string;
  /** The client secret (read per request). */
  clientSecret: () => string;
  /** Where the provider sends the browser back: `<UI origin>/sign-in/sso/callback` (read per request). */
  redirectUri: () => string;
  /** How requests reach the provider. */
  transport: OidcTransport;
  /** Allow an `http:` issuer (the simulator, a loopback development provider). */
  allowHttp: boolean;
}

/**
 * The transport to an external provider: the platform's SSRF-guarded client (module comment). A refused or failed
 * call rejects with the {@link OutboundError}.
 */
export function guardedTransport(outbound: OutboundHttp): OidcTransport {
  return async (url, init) => {
    const method = (init.method ?? 'GET').toUpperCase() as 'GET' | 'POST';
    const res = await outbound.send(url, {
      method,
      headers: Object.fromEntries(new Headers(init.headers as Record<string, string>).entries()),
      ...(init.body === undefined || init.body === null ? {} : { body: String(init.body) }),
      timeoutMs: 10_000,
      maxBodyBytes: 256 * 1024,
    });
    if (res.truncated) throw new OutboundError('network', 'The provider answer is too large.');
    const headers = new Headers();
    for (const [name, value] of Object.entries(res.headers))
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    return new Response(res.status === 204 || res.status === 304 ? null : new Uint8Array(res.body), {
      status: res.status,
      headers,
    });
  };
}

/** The SSO client; see the module comment. */
export class SsoClient {
  private metadata: { issuer: string; as: oauth.AuthorizationServer; fetchedAtMs: number } | undefined;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly states: SignInStates,
    private readonly accounts: Accounts,
    private readonly logger: AppLogger,
    private readonly options: SsoClientOptions,
  ) {}

  /** The options of every `oauth4webapi` request: the transport and, for an http issuer, permission to use it. */
  private requestOptions() {
    return {
      [oauth.customFetch]: this.options.transport as unknown as typeof fetch,
      ...(this.options.allowHttp ? { [oauth.allowInsecureRequests]: true } : {}),
    };
  }

  /** This client, its clock aligned with the service clock (ID token `iat`/`exp` are checked on the service clock). */
  private client(): oauth.Client {
    return {
      client_id: this.options.clientId,
      [oauth.clockSkew]: Math.round((this.clock.nowMs() - Date.now()) / 1000),
    };
  }

  /**
   * The provider's metadata (OpenID Connect Discovery), fetched once an hour.
   * @throws ApiError 503 `SERVICE_UNAVAILABLE` when the provider cannot be reached or answers nonsense.
   */
  private async authorizationServer(): Promise<oauth.AuthorizationServer> {
    const issuer = this.options.issuer();
    const cached = this.metadata;
    if (cached && cached.issuer === issuer && this.clock.nowMs() - cached.fetchedAtMs < METADATA_TTL_MS)
      return cached.as;
    try {
      const url = new URL(issuer);
      const response = await oauth.discoveryRequest(url, { ...this.requestOptions(), algorithm: 'oidc' });
      const as = await oauth.processDiscoveryResponse(url, response);
      if (!as.authorization_endpoint || !as.token_endpoint || !as.jwks_uri)
        throw new Error('the provider metadata lacks an authorization, token or JWKS endpoint');
      this.metadata = { issuer, as, fetchedAtMs: this.clock.nowMs() };
      return as;
    } catch (err) {
      this.logger.warn({ reason: reasonOf(err), issuer }, 'OpenID Connect discovery failed');
      throw serviceUnavailable('The sign-in provider cannot be reached right now; retry in a moment.');
    }
  }

  /**
   * `GET /auth/sso/url`: a new SSO round trip (state, PKCE verifier and nonce stored server-side).
   * @returns the provider's authorization URL and when the state expires.
   * @throws ApiError 503 when the provider cannot be reached or the state cannot be stored (flat
   *   `SIGNUP_EXPERIENCE_STATE_UNAVAILABLE` for a routing-intent flow).
   */
  async start(
    signupExperience: SignupExperience | null,
    binding: string,
  ): Promise<{ url: string; expiresAt: Date }> {
    const as = await this.authorizationServer();
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const nonce = oauth.generateRandomNonce();
    const redirectUri = this.options.redirectUri();
    const { state, expiresAt } = await this.states.create({
      flow: 'sso',
      signupExperience,
      secrets: { codeVerifier, nonce },
      redirectUri,
      binding,
    });
    const url = new URL(as.authorization_endpoint!);
    url.searchParams.set('client_id', this.options.clientId);
    url.searchParams.set('redirect_uri', redirectUri);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('scope', SCOPES);
    url.searchParams.set('state', state);
    url.searchParams.set('nonce', nonce);
    url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(codeVerifier));
    url.searchParams.set('code_challenge_method', 'S256');
    return { url: url.toString(), expiresAt };
  }

  /**
   * `POST /auth/sso/callback`: exchanges the code, validates the ID token, links the SSO identity and finishes the
   * sign-in (a session, or the interrupted signup with the state's routing metadata). The state is consumed in the
   * sign-in's transaction: a refused callback consumes nothing.
   * @throws ApiError for a refused state (flat 503 for a routing-intent flow, else 422); 422 on `code` for a code the
   *   provider refuses, on `iss` for another issuer; 401 when the ID token does not validate; 403 for an unverified
   *   email without a link; 503 when the provider cannot be reached.
   */
  async complete(input: { code: string; state: string; iss?: string; binding: string | undefined }) {
    const read = await this.states.read(input.state, 'sso', input.binding);
    const as = await this.authorizationServer();
    const client = this.client();
    const callback = new URLSearchParams({ code: input.code, state: input.state });
    if (input.iss !== undefined) callback.set('iss', input.iss);
    let params: URLSearchParams;
    try {
      params = oauth.validateAuthResponse(as, client, callback, input.state);
    } catch {
      throw semanticValidation([
        { location: 'body', field: 'iss', message: `must be the issuer of this sign-in, ${as.issuer}` },
      ]);
    }
    const methods = as.token_endpoint_auth_methods_supported;
    const authentication =
      methods === undefined || methods.includes('client_secret_basic')
        ? oauth.ClientSecretBasic(this.options.clientSecret())
        : oauth.ClientSecretPost(this.options.clientSecret());
    let claims: oauth.IDToken;
    try {
      const response = await oauth.authorizationCodeGrantRequest(
        as,
        client,
        authentication,
        params,
        read.redirectUri,
        read.secrets.codeVerifier,
        this.requestOptions(),
      );
      const result = await oauth.processAuthorizationCodeResponse(as, client, response, {
        expectedNonce: read.secrets.nonce ?? oauth.expectNoNonce,
        requireIdToken: true,
      });
      await oauth.validateApplicationLevelSignature(as, response, this.requestOptions());
      claims = oauth.getValidatedIdTokenClaims(result)!;
    } catch (err) {
      throw this.exchangeError(err);
    }
    return this.db.transaction(async (tx) => {
      await this.states.consume(tx, read);
      const identity = await this.linkedIdentity(tx, as.issuer, claims);
      return this.accounts.finishSignIn(tx, identity, 'sso', read.signupExperience);
    });
  }

  /** The answer for a failed code exchange or ID token validation (module comment of {@link complete}). */
  private exchangeError(err: unknown) {
    if (err instanceof oauth.ResponseBodyError && err.error === 'invalid_grant')
      return semanticValidation([
        {
          location: 'body',
          field: 'code',
          message: 'was refused by the sign-in provider (unknown, used or expired); restart sign-in',
        },
      ]);
    this.logger.warn({ reason: reasonOf(err) }, 'SSO code exchange failed');
    if (err instanceof oauth.OperationProcessingError && !(err.cause instanceof OutboundError))
      return credentialInvalid();
    return serviceUnavailable('The sign-in provider cannot complete the sign-in right now; restart sign-in.');
  }

  /**
   * The identity of an SSO sign-in (module comment): by its link, else by a verified email (linking it).
   * @throws ApiError 403 `FORBIDDEN` (`email_not_verified`) without a link and without a verified email.
   */
  private async linkedIdentity(tx: Executor, issuer: string, claims: oauth.IDToken) {
    const [linked] = await tx
      .select({ identity: identities })
      .from(ssoLinks)
      .innerJoin(identities, eq(identities.id, ssoLinks.identityId))
      .where(and(eq(ssoLinks.issuer, issuer), eq(ssoLinks.subject, claims.sub)))
      .limit(1);
    if (linked) return linked.identity;
    const email = typeof claims.email === 'string' ? claims.email : undefined;
    const verified = claims.email_verified === true || claims.email_verified === 'true';
    if (!email || !verified || !/^[^\s@]+@[^\s@]+$/.test(email) || email.length > 254)
      throw forbidden(
        'Your sign-in provider did not confirm your email address, so it cannot be linked to an account here.',
        { reason: 'email_not_verified' },
      );
    const identity = await this.accounts.verifiedIdentity(tx, {
      email,
      name: typeof claims.name === 'string' ? claims.name.slice(0, 200) : null,
    });
    await tx
      .insert(ssoLinks)
      .values({ identityId: identity.id, issuer, subject: claims.sub, createdAt: this.clock.now() })
      .onConflictDoNothing();
    return identity;
  }
}

/** A loggable reason of a failure (no secret: an error's kind or message). */
function reasonOf(err: unknown): string {
  if (err instanceof OutboundError) return err.kind;
  if (err instanceof oauth.ResponseBodyError) return `${err.status} ${err.error}`;
  if (err instanceof Error) return err.message.slice(0, 200);
  return 'failed';
}
