/**
 * The authorization endpoint of MCP connectors (RFC 6749 section 4.1 with PKCE, RFC 7636; resource indicators, RFC
 * 8707; MCP authorization):
 *
 * 1. {@link McpAuthorization.check} validates the request in RFC 6749's order: an unknown `client_id` or a
 *    `redirect_uri` that is not exactly one of the client's is shown on an error page and never redirected to; every
 *    other error goes back to the client's redirect URI (`error`, `state`, `iss`): `response_type` other than `code`
 *    (`unsupported_response_type`), PKCE other than S256 (`plain` and no method are refused: `invalid_request`), a
 *    `resource` that is missing or not exactly the URI of an MCP endpoint that exists now (`invalid_target`), a scope
 *    the resource does not offer (`invalid_scope`). The scope granted is `scopes.ts`'s {@link grantScope}: what was
 *    asked for, with `adcp:read`; everything the resource offers when `scope` is absent.
 * 2. The signed-in user sees the consent page: the app, the resource, what the scope lets it do, and the
 *    organization the connector will act in (chosen among the user's organizations). The page carries the request as a consent token: an HS256 JWT (`jose`,
 *    key derived from the service secret) bound to the browser session, living {@link CONSENT_SECONDS}: the form's
 *    CSRF token, so nothing of the request can be changed on the way.
 * 3. {@link McpAuthorization.decide}: deny redirects with `access_denied`; approve creates or updates the grant (one
 *    active grant per user, client, resource and organization: its scope follows the latest approval) and a one-time
 *    code (SHA-256 at rest, {@link CODE_SECONDS}, single use, bound to the grant, redirect URI, challenge, resource
 *    and the scope approved: the credentials issued from it carry that scope).
 */
import { and, eq, isNull, sql } from 'drizzle-orm';
import { jwtVerify, SignJWT } from 'jose';
import type { Clock } from '../../../../platform/clock.ts';
import { hashApiKey } from '../../../../platform/crypto.ts';
import type { Db, Executor } from '../../../../platform/database.ts';
import { prefixedHexId, randomToken } from '../../../../platform/ids.ts';
import { hasActiveAccess } from '../../credentials/index.ts';
import {
  mcpGrants,
  memberships,
  type OrganizationKind,
  oauthAuthorizationCodes,
  organizations,
} from '../../db/schema.ts';
import type { McpAudience } from '../contract.ts';
import { type McpOAuthClients, type OAuthClientRow, RegistrationError } from './clients.ts';
import { type LiveResource, liveResourceOfUri } from './resources.ts';
import { grantScope, SCOPES_OF_AUDIENCE } from './scopes.ts';

/** Lifetime of an authorization code, in seconds (short: it is exchanged at once). */
export const CODE_SECONDS = 60;
/** Lifetime of a consent page's token (how long the page may stay open), in seconds. */
export const CONSENT_SECONDS = 600;

/** The query of `GET /oauth/authorize` (every parameter optional: each is checked here). */
export interface AuthorizationQuery {
  response_type?: string;
  client_id?: string;
  redirect_uri?: string;
  code_challenge?: string;
  code_challenge_method?: string;
  resource?: string;
  scope?: string;
  state?: string;
}

/** A valid authorization request. */
export interface AuthorizationRequest {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  resource: string;
  scope: string;
  state: string | null;
}

/** The outcome of checking an authorization request (module comment, step 1). */
export type AuthorizationCheck =
  | { kind: 'error_page'; message: string }
  | { kind: 'redirect'; location: string }
  | { kind: 'valid'; request: AuthorizationRequest; client: OAuthClientRow; resource: LiveResource };

/** An organization the user may choose on the consent page. */
export interface ConsentOrganization {
  id: string;
  name: string;
  kind: OrganizationKind;
}

/** The outcome of a consent decision: where the browser goes, or why the form is refused (an error page). */
export type ConsentOutcome = { kind: 'redirect'; location: string } | { kind: 'error_page'; message: string };

/** The organization kinds a connector of each endpoint kind may act in (buyer tools act for a Buyer Account). */
const KINDS_OF_AUDIENCE: Readonly<Record<McpAudience, readonly OrganizationKind[]>> = {
  buyer: ['buyer'],
  storefront: ['buyer'],
  creative: ['buyer', 'seller'],
  admin: ['buyer', 'seller'],
};

/** `redirectUri` with the response parameters added (RFC 6749 section 4.1.2, RFC 9207 `iss`). */
function withParams(redirectUri: string, params: Record<string, string | null>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== null) url.searchParams.set(name, value);
  return url.href;
}

/** The authorization endpoint (module comment). */
export class McpAuthorization {
  private readonly consentKey: Uint8Array;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly clients: McpOAuthClients,
    private readonly publicUrl: () => string,
    consentKey: Buffer,
  ) {
    this.consentKey = new Uint8Array(consentKey);
  }

  /** Checks an authorization request (module comment, step 1). Fetches a client ID metadata document when needed. */
  async check(query: AuthorizationQuery): Promise<AuthorizationCheck> {
    if (!query.client_id) return { kind: 'error_page', message: 'The request has no client_id.' };
    let client: OAuthClientRow | undefined;
    try {
      client = await this.clients.resolve(query.client_id);
    } catch (err) {
      if (err instanceof RegistrationError)
        return {
          kind: 'error_page',
          message: `The app's client ID metadata document is refused: ${err.message}`,
        };
      throw err;
    }
    if (!client) return { kind: 'error_page', message: 'The app (client_id) is not known.' };
    const redirectUri = query.redirect_uri;
    if (redirectUri === undefined || !client.redirectUris.includes(redirectUri))
      return {
        kind: 'error_page',
        message: 'The redirect_uri is missing or is not exactly one of the redirect URIs the app registered.',
      };
    const state = query.state ?? null;
    const fail = (error: string, description: string): AuthorizationCheck => ({
      kind: 'redirect',
      location: withParams(redirectUri, {
        error,
        error_description: description,
        state,
        iss: this.publicUrl(),
      }),
    });
    if (query.response_type !== 'code')
      return fail(
        'unsupported_response_type',
        'Only the authorization code flow (response_type=code) is supported.',
      );
    if (query.code_challenge_method !== 'S256')
      return fail('invalid_request', 'PKCE with code_challenge_method=S256 is required (plain is refused).');
    if (query.code_challenge === undefined || !/^[A-Za-z0-9_-]{43}$/.test(query.code_challenge))
      return fail('invalid_request', 'code_challenge must be the base64url SHA-256 of the code verifier.');
    if (query.resource === undefined)
      return fail('invalid_target', 'resource (RFC 8707) is required: the exact URI of the MCP endpoint.');
    const resource = await liveResourceOfUri(this.db, this.publicUrl(), query.resource);
    if (!resource)
      return fail('invalid_target', 'resource is not exactly the URI of an MCP endpoint of this service.');
    const offered = SCOPES_OF_AUDIENCE[resource.target.endpoint.audience];
    const granted = grantScope(query.scope, offered);
    if ('refused' in granted)
      return fail('invalid_scope', `This resource offers the scopes ${offered.join(' ')} only.`);
    const scope = granted.scope;
    return {
      kind: 'valid',
      client,
      resource,
      request: {
        clientId: client.clientId,
        redirectUri,
        codeChallenge: query.code_challenge,
        resource: query.resource,
        scope,
        state,
      },
    };
  }

  /**
   * The organizations the user may let a connector of `resource` act in: the user's active memberships in admitted
   * organizations of the kinds the endpoint serves.
   */
  async organizationsFor(userId: number, resource: LiveResource): Promise<ConsentOrganization[]> {
    const rows = await this.db
      .select({ id: organizations.publicId, name: organizations.name, kind: organizations.kind })
      .from(memberships)
      .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
      .where(
        and(
          eq(memberships.userId, userId),
          isNull(memberships.removedAt),
          eq(organizations.status, 'admitted'),
        ),
      )
      .orderBy(organizations.name, organizations.id);
    const kinds = KINDS_OF_AUDIENCE[resource.target.endpoint.audience];
    return rows.filter((r) => kinds.includes(r.kind));
  }

  /** The consent form's token: the request, bound to the browser session `sessionId` (module comment, step 2). */
  consentToken(request: AuthorizationRequest, sessionId: number): Promise<string> {
    const now = Math.floor(this.clock.nowMs() / 1000);
    return new SignJWT({ req: request, sid: sessionId })
      .setProtectedHeader({ alg: 'HS256', typ: 'mcp-consent+jwt' })
      .setIssuer(this.publicUrl())
      .setAudience('mcp-consent')
      .setIssuedAt(now)
      .setExpirationTime(now + CONSENT_SECONDS)
      .sign(this.consentKey);
  }

  /**
   * Carries out the user's decision on the consent page (module comment, step 3), in `tx`.
   * @param input.sessionId the browser session posting the form: it must be the one the page was rendered for.
   * @param input.organizationId the public id of the chosen organization (approve).
   */
  async decide(
    tx: Executor,
    input: {
      userId: number;
      sessionId: number;
      consent: string;
      decision: 'approve' | 'deny';
      organizationId: string | undefined;
    },
  ): Promise<ConsentOutcome> {
    const request = await this.readConsent(input.consent, input.sessionId);
    if (!request)
      return {
        kind: 'error_page',
        message:
          'This consent page has expired or belongs to another sign-in. Start the connection again from the app.',
      };
    const iss = this.publicUrl();
    if (input.decision === 'deny')
      return {
        kind: 'redirect',
        location: withParams(request.redirectUri, {
          error: 'access_denied',
          error_description: 'The user denied the request.',
          state: request.state,
          iss,
        }),
      };
    const client = await this.clients.find(request.clientId);
    const resource = await liveResourceOfUri(tx, iss, request.resource);
    if (!client || !resource)
      return { kind: 'error_page', message: 'The app or the resource is no longer available.' };
    const choices = await this.organizationsFor(input.userId, resource);
    const chosen = choices.find((o) => o.id === input.organizationId);
    if (!chosen) return { kind: 'error_page', message: 'Choose one of your organizations.' };
    const [organization] = await tx
      .select({ id: organizations.id })
      .from(organizations)
      .where(eq(organizations.publicId, chosen.id));
    if (!organization || !(await hasActiveAccess(tx, input.userId, organization.id)))
      return { kind: 'error_page', message: 'Choose one of your organizations.' };
    const now = this.clock.now();
    const [grant] = await tx
      .insert(mcpGrants)
      .values({
        publicId: prefixedHexId('mcg'),
        userId: input.userId,
        oauthClientId: client.id,
        organizationId: organization.id,
        resource: request.resource,
        scope: request.scope,
        firstConnectedAt: now,
      })
      .onConflictDoUpdate({
        // Another organization is another grant: the credentials already issued keep acting in the organization
        // their consent named (one client_id may be shared by every installation of an app).
        target: [mcpGrants.userId, mcpGrants.oauthClientId, mcpGrants.resource, mcpGrants.organizationId],
        targetWhere: sql`${mcpGrants.revokedAt} is null`,
        set: { scope: request.scope },
      })
      .returning({ id: mcpGrants.id });
    const code = randomToken(32);
    await tx.insert(oauthAuthorizationCodes).values({
      codeHash: hashApiKey(code),
      grantId: grant!.id,
      redirectUri: request.redirectUri,
      codeChallenge: request.codeChallenge,
      resource: request.resource,
      scope: request.scope,
      createdAt: now,
      expiresAt: new Date(now.getTime() + CODE_SECONDS * 1000),
    });
    return {
      kind: 'redirect',
      location: withParams(request.redirectUri, { code, state: request.state, iss }),
    };
  }

  /** The request of a consent token, when it is valid, unexpired and bound to `sessionId`; else undefined. */
  private async readConsent(token: string, sessionId: number): Promise<AuthorizationRequest | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.consentKey, {
        algorithms: ['HS256'],
        issuer: this.publicUrl(),
        audience: 'mcp-consent',
        typ: 'mcp-consent+jwt',
        currentDate: this.clock.now(),
      });
      if (payload.sid !== sessionId) return undefined;
      return payload.req as AuthorizationRequest;
    } catch {
      return undefined;
    }
  }
}
