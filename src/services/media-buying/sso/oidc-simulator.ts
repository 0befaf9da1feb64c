/**
 * The built-in OpenID Connect provider simulator (the outside world of SSO, served under `/_sim/oidc` when no
 * external issuer is configured), so SSO works offline: discovery (OpenID Connect Discovery 1.0), a JWKS, an
 * authorization page where a test identity is chosen, and a token endpoint answering ID tokens (OpenID Connect Core
 * 1.0, section 3.1: authorization code flow; PKCE S256 required, RFC 7636; `iss` in the authorization response,
 * RFC 9207).
 *
 * - It asserts only people of its own domain, {@link SIMULATOR_EMAIL_DOMAIN} (`<login>@sso-simulator.example`,
 *   subject `sim-<login>`), verified or not as chosen on its page: it can never speak for a real mailbox, so running it
 *   by default lets nobody take over an account by email.
 * - Its signing key (ES256) and client secrets are derived from the secrets key (HKDF), so every instance agrees and
 *   nothing is stored. A client's secret is `BASE64URL(HMAC-SHA256(key, client_id))`; the operator reads it on
 *   `POST /_ops/oidc-simulator/clients` (any `client_id` is a client; a redirect URI on the UI origin or a loopback address is
 *   accepted and bound to the code: a simulator, not a registry, and never an open redirect).
 * - Authorization codes are sealed (AES-256-GCM) rather than stored: one minute, bound to client, redirect URI, code
 *   challenge, nonce and the chosen person; single use per instance (an in-memory list of used codes).
 * - The service's own client reaches it in process ({@link OidcSimulator.fetch}), not over the network.
 */
import { createECDH, createHash, createPrivateKey, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, type JWK, SignJWT } from 'jose';
import { LRUCache } from 'lru-cache';
import { isLoopbackHost } from '../../../platform/addresses.ts';
import { basicCredentials } from '../../../platform/auth.ts';
import type { Clock } from '../../../platform/clock.ts';
import {
  constantTimeEqual,
  hmacSha256,
  pkceS256Challenge,
  type SecretBox,
} from '../../../platform/crypto.ts';
import { randomToken } from '../../../platform/ids.ts';

/** Where the simulator is served, under the service's public URL. */
export const SIMULATOR_PATH = '/_sim/oidc';
/** The only email domain the simulator asserts. */
export const SIMULATOR_EMAIL_DOMAIN = 'sso-simulator.example';
/** Lifetime of a simulator authorization code, in seconds. */
const CODE_SECONDS = 60;
/** Lifetime of a simulator ID token and access token, in seconds. */
const TOKEN_SECONDS = 300;
/** A person's login at the simulator (the local part of the email). */
export const LOGIN_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** The people offered on the authorization page (any other login may be typed). */
export const SIMULATOR_PEOPLE: readonly SimulatedPerson[] = [
  { login: 'ada', name: 'Ada Lovelace', emailVerified: true },
  { login: 'grace', name: 'Grace Hopper', emailVerified: true },
  { login: 'alan', name: 'Alan Turing', emailVerified: false },
];

/** A person the simulator signs in. */
export interface SimulatedPerson {
  login: string;
  name: string;
  emailVerified: boolean;
}

/** The parameters of an authorization request. */
export type AuthorizationParams = Partial<
  Record<
    | 'response_type'
    | 'client_id'
    | 'redirect_uri'
    | 'scope'
    | 'state'
    | 'nonce'
    | 'code_challenge'
    | 'code_challenge_method',
    string
  >
>;

/** An HTTP answer of the simulator (JSON body). */
export interface SimulatorAnswer {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

interface SealedCode {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  nonce: string | null;
  login: string;
  name: string;
  emailVerified: boolean;
  authTime: number;
  expiresAtMs: number;
  jti: string;
}

const CODE_AAD = 'media-buying:oidc-simulator:code';
/** The order of P-256 (a private scalar must be in [1, n-1]). */
const P256_ORDER = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551');

/**
 * The ES256 key pair of the simulator, derived from `seed`: the private scalar is the seed (re-hashed in the
 * negligible case it is out of range), the public point computed from it.
 */
function derivedP256(seed: Buffer): { privateKey: KeyObject; publicJwk: JWK } {
  let d = seed;
  while (BigInt(`0x${d.toString('hex')}`) === 0n || BigInt(`0x${d.toString('hex')}`) >= P256_ORDER)
    d = createHash('sha256').update(d).digest();
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(d);
  const point = ecdh.getPublicKey();
  const publicJwk: JWK = {
    kty: 'EC',
    crv: 'P-256',
    x: point.subarray(1, 33).toString('base64url'),
    y: point.subarray(33, 65).toString('base64url'),
  };
  const privateKey = createPrivateKey({ key: { ...publicJwk, d: d.toString('base64url') }, format: 'jwk' });
  return { privateKey, publicJwk };
}

/** The client authentication of a token request: HTTP Basic (RFC 6749 section 2.3.1) or the body. */
function clientCredentials(
  form: Record<string, string | undefined>,
  authorization: string | undefined,
): { id: string; secret: string } | 'malformed' | undefined {
  if (authorization !== undefined) {
    const basic = basicCredentials(authorization);
    return basic === undefined || form.client_secret !== undefined ? 'malformed' : basic;
  }
  if (form.client_id !== undefined && form.client_secret !== undefined)
    return { id: form.client_id, secret: form.client_secret };
  return undefined;
}

/** The simulator; see the module comment. */
export class OidcSimulator {
  private readonly key: { privateKey: KeyObject; publicJwk: JWK };
  private kid: string | undefined;
  private readonly clientKey: Buffer;
  private readonly usedCodes: LRUCache<string, true>;

  constructor(
    private readonly secrets: SecretBox,
    private readonly clock: Clock,
    /** The service's public URL (read per request: tests bind a port after the boot). */
    private readonly publicUrl: () => string,
    /** The UI origin, read at use: the service's own SSO callback lives there. */
    private readonly uiOrigin: () => string,
  ) {
    this.key = derivedP256(secrets.deriveKey('media-buying:oidc-simulator:signing-key'));
    this.clientKey = secrets.deriveKey('media-buying:oidc-simulator:client-secret');
    this.usedCodes = new LRUCache({
      max: 100_000,
      ttl: 2 * CODE_SECONDS * 1000,
      ttlResolution: 0,
      perf: { now: () => clock.nowMs() },
    });
  }

  /** The issuer identifier: `<public URL>/_sim/oidc`. */
  issuer(): string {
    return `${this.publicUrl()}${SIMULATOR_PATH}`;
  }

  /** The client secret of `clientId` (`POST /_ops/oidc-simulator/clients`, and the service's own client). */
  clientSecret(clientId: string): string {
    return hmacSha256(this.clientKey, clientId).toString('base64url');
  }

  /** The provider metadata (OpenID Connect Discovery 1.0, section 3). */
  discovery(): Record<string, unknown> {
    const issuer = this.issuer();
    return {
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      jwks_uri: `${issuer}/jwks`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['ES256'],
      scopes_supported: ['openid', 'email', 'profile'],
      claims_supported: [
        'sub',
        'iss',
        'aud',
        'exp',
        'iat',
        'auth_time',
        'nonce',
        'email',
        'email_verified',
        'name',
      ],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
    };
  }

  /** The public signing key set (RFC 7517). */
  async jwks(): Promise<{ keys: JWK[] }> {
    return { keys: [{ ...this.key.publicJwk, kid: await this.keyId(), alg: 'ES256', use: 'sig' }] };
  }

  private async keyId(): Promise<string> {
    this.kid ??= await calculateJwkThumbprint(this.key.publicJwk);
    return this.kid;
  }

  /**
   * What is wrong with an authorization request, if anything (the page shows it instead of redirecting anywhere).
   * @returns `{field, message}` of the first problem, or undefined.
   */
  authorizationProblem(params: AuthorizationParams): { field: string; message: string } | undefined {
    if (!params.client_id) return { field: 'client_id', message: 'is required' };
    let redirect: URL | undefined;
    try {
      redirect = params.redirect_uri ? new URL(params.redirect_uri) : undefined;
    } catch {
      redirect = undefined;
    }
    if (!redirect || !/^https?:$/.test(redirect.protocol) || redirect.hash !== '')
      return { field: 'redirect_uri', message: 'must be an absolute http(s) URL without a fragment' };
    // Never an open redirect: the service's own UI origin, or a loopback address (RFC 8252 section 7.3: a client on
    // this machine, such as another local instance), which no one else can receive on.
    if (redirect.origin !== this.uiOrigin() && !isLoopbackHost(redirect.hostname))
      return { field: 'redirect_uri', message: `must be on ${this.uiOrigin()} or a loopback address` };
    if (params.response_type !== 'code') return { field: 'response_type', message: 'must be code' };
    if (!(params.scope ?? '').split(' ').includes('openid'))
      return { field: 'scope', message: 'must include openid' };
    if (params.code_challenge_method !== 'S256')
      return { field: 'code_challenge_method', message: 'must be S256 (PKCE is required)' };
    if (!/^[A-Za-z0-9_-]{43}$/.test(params.code_challenge ?? ''))
      return { field: 'code_challenge', message: 'must be a 43-character S256 challenge' };
    return undefined;
  }

  /**
   * Signs `person` in for a valid authorization request (check {@link authorizationProblem} first).
   * @returns the redirect: `redirect_uri` with `code`, `state` and `iss`.
   */
  authorize(params: AuthorizationParams, person: SimulatedPerson): string {
    const sealed: SealedCode = {
      clientId: params.client_id!,
      redirectUri: params.redirect_uri!,
      codeChallenge: params.code_challenge!,
      nonce: params.nonce || null,
      login: person.login,
      name: person.name,
      emailVerified: person.emailVerified,
      authTime: Math.floor(this.clock.nowMs() / 1000),
      expiresAtMs: this.clock.nowMs() + CODE_SECONDS * 1000,
      jti: randomToken(16),
    };
    const target = new URL(params.redirect_uri!);
    target.searchParams.set('code', this.secrets.encrypt(JSON.stringify(sealed), CODE_AAD));
    if (params.state) target.searchParams.set('state', params.state);
    target.searchParams.set('iss', this.issuer());
    return target.toString();
  }

  /**
   * The token endpoint (RFC 6749 section 4.1.3; errors as section 5.2): exchanges a code for an access token and an
   * ID token (`sub`, `email`, `email_verified`, `name`, `nonce`, `auth_time`; ES256).
   */
  async token(
    form: Record<string, string | undefined>,
    authorization: string | undefined,
  ): Promise<SimulatorAnswer> {
    const noStore = { 'cache-control': 'no-store', pragma: 'no-cache' };
    const error = (status: number, code: string, description: string): SimulatorAnswer => ({
      status,
      headers: status === 401 ? { ...noStore, 'www-authenticate': 'Basic realm="oidc-simulator"' } : noStore,
      body: { error: code, error_description: description },
    });
    if (form.grant_type !== 'authorization_code')
      return error(400, 'unsupported_grant_type', 'Only the authorization_code grant is supported.');
    const client = clientCredentials(form, authorization);
    if (client === 'malformed')
      return error(400, 'invalid_request', 'Authenticate the client one way: HTTP Basic or the body.');
    if (!client || !constantTimeEqual(client.secret, this.clientSecret(client.id)))
      return error(401, 'invalid_client', 'Client authentication failed.');
    const invalidGrant = () =>
      error(400, 'invalid_grant', 'The code is invalid, used, expired or not yours.');
    let code: SealedCode;
    try {
      code = JSON.parse(this.secrets.decrypt(form.code ?? '', CODE_AAD)) as SealedCode;
    } catch {
      return invalidGrant();
    }
    const verifier = form.code_verifier ?? '';
    const challenge = pkceS256Challenge(verifier);
    if (
      code.expiresAtMs <= this.clock.nowMs() ||
      code.clientId !== client.id ||
      code.redirectUri !== form.redirect_uri ||
      !constantTimeEqual(challenge, code.codeChallenge) ||
      this.usedCodes.has(code.jti)
    )
      return invalidGrant();
    this.usedCodes.set(code.jti, true);
    const now = Math.floor(this.clock.nowMs() / 1000);
    const idToken = await new SignJWT({
      email: `${code.login}@${SIMULATOR_EMAIL_DOMAIN}`,
      email_verified: code.emailVerified,
      name: code.name,
      auth_time: code.authTime,
      ...(code.nonce === null ? {} : { nonce: code.nonce }),
    })
      .setProtectedHeader({ alg: 'ES256', kid: await this.keyId(), typ: 'JWT' })
      .setIssuer(this.issuer())
      .setSubject(`sim-${code.login}`)
      .setAudience(client.id)
      .setIssuedAt(now)
      .setExpirationTime(now + TOKEN_SECONDS)
      .sign(this.key.privateKey);
    return {
      status: 200,
      headers: noStore,
      body: {
        access_token: randomToken(32),
        token_type: 'Bearer',
        expires_in: TOKEN_SECONDS,
        scope: 'openid email profile',
        id_token: idToken,
      },
    };
  }

  /**
   * The in-process transport of the service's own OIDC client (a `fetch` for `oauth4webapi`): discovery, JWKS and the
   * token endpoint answered without a network hop.
   */
  async fetch(url: string, init: { method?: string; headers?: unknown; body?: unknown }): Promise<Response> {
    const path = url.startsWith(this.issuer()) ? url.slice(this.issuer().length).split('?')[0] : undefined;
    const method = (init.method ?? 'GET').toUpperCase();
    let answer: SimulatorAnswer;
    if (method === 'GET' && path === '/.well-known/openid-configuration')
      answer = { status: 200, headers: {}, body: this.discovery() };
    else if (method === 'GET' && path === '/jwks')
      answer = { status: 200, headers: {}, body: await this.jwks() };
    else if (method === 'POST' && path === '/token') {
      const headers = new Headers(init.headers as Record<string, string>);
      const form = Object.fromEntries(new URLSearchParams(String(init.body ?? '')).entries());
      answer = await this.token(form, headers.get('authorization') ?? undefined);
    } else answer = { status: 404, headers: {}, body: { error: 'not_found' } };
    return new Response(JSON.stringify(answer.body), {
      status: answer.status,
      headers: { 'content-type': 'application/json', ...answer.headers },
    });
  }
}
