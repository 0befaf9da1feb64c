/**
 * The hosted sign-in round trip (spec "Sign-in and signup": `GET /auth/url` -> `POST /auth/token`): the built-in
 * identity provider acts as an OAuth 2.0 authorization server (RFC 6749 section 4.1, authorization code grant with
 * PKCE S256, RFC 7636) for one client, the first-party web UI (`client_id` {@link FIRST_PARTY_CLIENT_ID}).
 *
 * 1. `GET /auth/url` stores the round trip's state (`sign-in-states.ts`: routing intent and the PKCE verifier) and
 *    answers the URL of the hosted sign-in page, `GET /auth/authorize?response_type=code&client_id=...&
 *    redirect_uri=<UI origin>/sign-in/callback&state=...&code_challenge=...&code_challenge_method=S256`.
 * 2. The person signs in there with email and password (`POST /auth/authorize`, under the sign-in throttle); the
 *    provider issues an authorization code (`mbac_`, one minute, single use, bound to the identity, the client, the
 *    redirect URI and the code challenge) and redirects the browser to `redirect_uri?code=...&state=...`.
 * 3. The UI posts `{code, state}` to `POST /auth/token`: the state is read back, the code checked against it (its
 *    redirect URI, and `BASE64URL(SHA-256(verifier)) = code_challenge`), both are consumed in one transaction and the
 *    sign-in finishes: a session cookie, or `{requiresSignup, redirectUrl}` carrying the state's routing metadata.
 */
import { and, eq, isNull, lt } from 'drizzle-orm';
import type { Clock } from '../../../platform/clock.ts';
import { constantTimeEqual, hashApiKey, issueApiKey, pkceS256Challenge } from '../../../platform/crypto.ts';
import type { Db } from '../../../platform/database.ts';
import { type FieldIssue, invalidRequest } from '../../../platform/errors.ts';
import { randomToken } from '../../../platform/ids.ts';
import { authorizationCodes, identities } from '../db/schema.ts';
import { forbidden, invalidSignIn, semanticValidation } from '../media-buying-errors.ts';
import type { Accounts } from './accounts.ts';
import type { SignInStates, SignupExperience } from './sign-in-states.ts';

/** The `client_id` of the first-party web UI, the one client of the hosted sign-in. */
export const FIRST_PARTY_CLIENT_ID = 'media-buying-web';

/** Lifetime of an authorization code, in seconds (RFC 6749 section 4.1.2 recommends ten minutes at most). */
export const AUTHORIZATION_CODE_SECONDS = 60;

/** The parameters of an authorization request (RFC 6749 section 4.1.1, RFC 7636 section 4.3). */
export interface AuthorizationRequest {
  response_type: string;
  client_id: string;
  redirect_uri: string;
  state: string;
  code_challenge: string;
  code_challenge_method: string;
}

const CODE_PATTERN = /^mbac_[A-Za-z0-9_-]{43}$/;

/** The hosted sign-in; see the module comment. */
export class HostedSignIn {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly states: SignInStates,
    private readonly accounts: Accounts,
    private readonly options: {
      /** The service's public URL (read per request: tests bind a port after the boot). */
      publicUrl: () => string;
      /** Where the UI receives the code: `<UI origin>/sign-in/callback` (read per request). */
      redirectUri: () => string;
    },
  ) {}

  /** The registered redirect URI of the first-party client. */
  get redirectUri(): string {
    return this.options.redirectUri();
  }

  /**
   * `GET /auth/url`: a new round trip.
   * @returns the hosted sign-in page's URL and when its state expires.
   * @throws ApiError 503 when the state cannot be stored (`SignInStates.create`).
   */
  async start(
    signupExperience: SignupExperience | null,
    binding: string,
  ): Promise<{ url: string; expiresAt: Date }> {
    const codeVerifier = randomToken(32);
    const { state, expiresAt } = await this.states.create({
      flow: 'auth',
      signupExperience,
      secrets: { codeVerifier },
      redirectUri: this.options.redirectUri(),
      binding,
    });
    const url = new URL(`${this.options.publicUrl()}/auth/authorize`);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: FIRST_PARTY_CLIENT_ID,
      redirect_uri: this.options.redirectUri(),
      state,
      code_challenge: pkceS256Challenge(codeVerifier),
      code_challenge_method: 'S256',
    }).toString();
    return { url: url.toString(), expiresAt };
  }

  /**
   * Checks an authorization request: the first-party client, its registered redirect URI, `response_type=code`, an
   * S256 code challenge. Nothing is ever redirected to an unchecked URI.
   * @throws ApiError 400 `VALIDATION_ERROR` listing every bad parameter.
   */
  checkRequest(request: AuthorizationRequest): void {
    const issues: FieldIssue[] = [];
    const bad = (field: string, message: string) => issues.push({ location: 'query', field, message });
    if (request.response_type !== 'code') bad('response_type', 'must be code');
    if (request.client_id !== FIRST_PARTY_CLIENT_ID) bad('client_id', 'is not a client of this sign-in');
    if (request.redirect_uri !== this.options.redirectUri())
      bad('redirect_uri', 'is not the registered redirect URI of the client');
    if (request.code_challenge_method !== 'S256') bad('code_challenge_method', 'must be S256');
    if (!/^[A-Za-z0-9_-]{43}$/.test(request.code_challenge))
      bad('code_challenge', 'must be the 43-character S256 challenge');
    if (request.state === '') bad('state', 'is required');
    if (issues.length > 0) throw invalidRequest(issues);
  }

  /**
   * `POST /auth/authorize`: signs the person in with email and password (the throttle of password sign-in) and issues
   * an authorization code for the request.
   * @returns the URL to send the browser to: the redirect URI with `code` and `state`.
   * @throws ApiError 400 for a bad request, 401 `UNAUTHORIZED` for a wrong email or password, 403 `FORBIDDEN` for an
   *   unverified email, 429 while throttled.
   */
  async authorize(
    request: AuthorizationRequest,
    credentials: { email: string; password: string },
    clientAddress: string,
  ): Promise<string> {
    this.checkRequest(request);
    const identity = await this.accounts.authenticatePassword(
      credentials.email,
      credentials.password,
      clientAddress,
    );
    if (identity === undefined) throw invalidSignIn();
    if (identity === 'unverified')
      throw forbidden('Verify your email first: sign in with the code sent to it.', {
        reason: 'email_not_verified',
      });
    const issued = issueApiKey('mbac_');
    const now = this.clock.now();
    await this.db.insert(authorizationCodes).values({
      codeHash: issued.hash,
      identityId: identity.id,
      clientId: request.client_id,
      redirectUri: request.redirect_uri,
      codeChallenge: request.code_challenge,
      createdAt: now,
      expiresAt: new Date(now.getTime() + AUTHORIZATION_CODE_SECONDS * 1000),
    });
    const target = new URL(request.redirect_uri);
    target.searchParams.set('code', issued.plaintext);
    target.searchParams.set('state', request.state);
    return target.toString();
  }

  /**
   * `POST /auth/token`: completes the round trip (module comment, step 3).
   * @returns the finished sign-in (a session to set, or the interrupted signup's recovery token).
   * @throws ApiError for a refused state (flat 503 `SIGNUP_EXPERIENCE_STATE_UNAVAILABLE` for a routing-intent flow,
   *   else 422), 422 `VALIDATION_ERROR` on `code` for an unknown, used, expired or mismatched code, 401 for a disabled
   *   user. A refused request consumes nothing.
   */
  async complete(code: string, state: string, binding: string | undefined) {
    const read = await this.states.read(state, 'auth', binding);
    const refused = () =>
      semanticValidation([
        {
          location: 'body',
          field: 'code',
          message: 'is unknown, used, expired or not issued for this sign-in; restart sign-in',
        },
      ]);
    if (!CODE_PATTERN.test(code)) throw refused();
    const [row] = await this.db
      .select()
      .from(authorizationCodes)
      .where(eq(authorizationCodes.codeHash, hashApiKey(code)))
      .limit(1);
    if (
      !row ||
      row.consumedAt !== null ||
      row.expiresAt.getTime() <= this.clock.nowMs() ||
      row.clientId !== FIRST_PARTY_CLIENT_ID ||
      row.redirectUri !== read.redirectUri ||
      !constantTimeEqual(row.codeChallenge, pkceS256Challenge(read.secrets.codeVerifier))
    )
      throw refused();
    return this.db.transaction(async (tx) => {
      await this.states.consume(tx, read);
      const taken = await tx
        .update(authorizationCodes)
        .set({ consumedAt: this.clock.now() })
        .where(and(eq(authorizationCodes.id, row.id), isNull(authorizationCodes.consumedAt)))
        .returning({ id: authorizationCodes.id });
      if (taken.length === 0) throw refused();
      const [identity] = await tx.select().from(identities).where(eq(identities.id, row.identityId));
      return this.accounts.finishSignIn(tx, identity!, 'oauth', read.signupExperience);
    });
  }

  /** Deletes authorization codes that expired more than a day ago (housekeeping). @returns how many. */
  async prune(): Promise<number> {
    const deleted = await this.db
      .delete(authorizationCodes)
      .where(lt(authorizationCodes.expiresAt, new Date(this.clock.nowMs() - 86_400_000)))
      .returning({ id: authorizationCodes.id });
    return deleted.length;
  }
}
