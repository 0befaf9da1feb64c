/**
 * The OAuth clients of MCP connectors, two ways (MCP authorization, "Client registration"):
 *
 * - Dynamic client registration (RFC 7591): `POST /oauth/register` with the client's metadata; the service assigns a
 *   `client_id` (`mcpc_` + 32 hex). Only public clients: `token_endpoint_auth_method` `none` (PKCE protects the code),
 *   grant types `authorization_code` and `refresh_token`, response type `code`.
 * - Client ID metadata documents (OAuth Client ID Metadata Document, draft-ietf-oauth-client-id-metadata-document): the
 *   `client_id` is an https URL with a path; the service fetches the JSON document there through the platform's
 *   SSRF-guarded outbound HTTP (no redirects, {@link METADATA_TIMEOUT_MS}, at most {@link METADATA_MAX_BYTES}), checks
 *   that its `client_id` is the URL exactly and that its redirect URIs are valid, and stores it in `oauth_clients`
 *   (cached {@link METADATA_CACHE_MS}, then fetched again). `http:` is accepted on a loopback host only when the
 *   outbound guard allows private addresses (`OUTBOUND_ALLOW_PRIVATE`: local development and tests).
 *
 * Redirect URIs (RFC 8252, OAuth 2.1 section 2.3.1): absolute `https:` URLs, or `http:` on a loopback host (a native
 * app's local listener), no fragment, no credentials, at most 2,000 characters; the authorization request must name
 * one of them exactly.
 */
import { eq } from 'drizzle-orm';
import { isLoopbackHost } from '../../../../platform/addresses.ts';
import type { Clock } from '../../../../platform/clock.ts';
import type { Db } from '../../../../platform/database.ts';
import { prefixedHexId } from '../../../../platform/ids.ts';
import type { OutboundHttp } from '../../../../platform/outbound-http.ts';
import { unstorableTextReason } from '../../../../platform/storable-input.ts';
import { oauthClients } from '../../db/schema.ts';

/** Longest wait for a client ID metadata document, in milliseconds. */
export const METADATA_TIMEOUT_MS = 5_000;
/** Largest client ID metadata document read, in bytes (the draft suggests 5 KB). */
export const METADATA_MAX_BYTES = 5 * 1024;
/** How long a fetched client ID metadata document is used before it is fetched again, in milliseconds. */
export const METADATA_CACHE_MS = 15 * 60_000;

/** A stored client. */
export type OAuthClientRow = typeof oauthClients.$inferSelect;

/** RFC 7591 section 3.2.2 error codes of registration (and of a client ID metadata document that does not qualify). */
export type RegistrationErrorCode = 'invalid_redirect_uri' | 'invalid_client_metadata';

/** A registration (or metadata document) refused: RFC 7591 section 3.2.2. */
export class RegistrationError extends Error {
  constructor(
    readonly code: RegistrationErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'RegistrationError';
  }
}

/** The RFC 7591 client information response (section 3.2.1). */
export interface ClientInformation {
  client_id: string;
  client_id_issued_at: number;
  client_name: string;
  redirect_uris: string[];
  grant_types: string[];
  response_types: string[];
  token_endpoint_auth_method: 'none';
  client_uri?: string;
}

const GRANT_TYPES = ['authorization_code', 'refresh_token'];

/** True when `value` is an acceptable redirect URI (module comment). */
export function isValidRedirectUri(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > 2000) return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.hash !== '' || value.includes('#') || url.username !== '' || url.password !== '') return false;
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && isLoopbackHost(url.hostname);
}

/** An optional string field of client metadata, at most `max` characters. @throws RegistrationError. */
function optionalString(metadata: Record<string, unknown>, name: string, max: number): string | undefined {
  const value = metadata[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value.length === 0 || value.length > max)
    throw new RegistrationError(
      'invalid_client_metadata',
      `${name} must be a string of 1 to ${max} characters.`,
    );
  return value;
}

/**
 * The client metadata the service keeps, checked (RFC 7591 section 2): redirect URIs, public client only, the code
 * flow's grant and response types, a name (default: the host of the first redirect URI) and `client_uri`.
 * @throws RegistrationError `invalid_redirect_uri` or `invalid_client_metadata`.
 */
function checkMetadata(metadata: Record<string, unknown>): {
  name: string;
  redirectUris: string[];
  clientUri: string | undefined;
} {
  const uris = metadata.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > 10)
    throw new RegistrationError('invalid_redirect_uri', 'redirect_uris must list 1 to 10 redirect URIs.');
  for (const uri of uris)
    if (!isValidRedirectUri(uri))
      throw new RegistrationError(
        'invalid_redirect_uri',
        'Each redirect URI must be an absolute https URL, or http on a loopback host, without fragment.',
      );
  const method = metadata.token_endpoint_auth_method;
  if (method !== undefined && method !== 'none')
    throw new RegistrationError(
      'invalid_client_metadata',
      'Only public clients are registered: token_endpoint_auth_method must be "none" (PKCE protects the code).',
    );
  const grants = metadata.grant_types;
  if (
    grants !== undefined &&
    (!Array.isArray(grants) || grants.some((g) => typeof g !== 'string' || !GRANT_TYPES.includes(g)))
  )
    throw new RegistrationError(
      'invalid_client_metadata',
      'grant_types may list authorization_code and refresh_token only.',
    );
  const responses = metadata.response_types;
  if (responses !== undefined && (!Array.isArray(responses) || responses.some((r) => r !== 'code')))
    throw new RegistrationError('invalid_client_metadata', 'response_types may list code only.');
  const clientUri = optionalString(metadata, 'client_uri', 2000);
  if (clientUri !== undefined && !/^https?:\/\//.test(clientUri))
    throw new RegistrationError('invalid_client_metadata', 'client_uri must be an http(s) URL.');
  const name = optionalString(metadata, 'client_name', 200) ?? new URL(uris[0] as string).host;
  // A fetched metadata document is not request input: the platform's storable-input check never saw it.
  for (const [field, text] of [
    ['client_name', name],
    ['client_uri', clientUri ?? ''],
    ...uris.map((uri) => ['redirect_uris', uri as string]),
  ]) {
    const reason = unstorableTextReason(text as string);
    if (reason !== undefined)
      throw new RegistrationError(
        field === 'redirect_uris' ? 'invalid_redirect_uri' : 'invalid_client_metadata',
        `${field} ${reason}.`,
      );
  }
  return { name, redirectUris: uris as string[], clientUri };
}

/** The OAuth clients of MCP connectors (module comment). */
export class McpOAuthClients {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly outbound: OutboundHttp,
    /** Whether `http:` metadata document URLs on a loopback host are accepted (the outbound guard's allowance). */
    private readonly allowLoopbackHttp: boolean,
  ) {}

  /**
   * Registers a client (RFC 7591 section 3.1).
   * @returns the client information response (section 3.2.1).
   * @throws RegistrationError for metadata the service does not accept.
   */
  async register(metadata: Record<string, unknown>): Promise<ClientInformation> {
    const checked = checkMetadata(metadata);
    const now = this.clock.now();
    const [row] = await this.db
      .insert(oauthClients)
      .values({
        clientId: prefixedHexId('mcpc'),
        name: checked.name,
        redirectUris: checked.redirectUris,
        kind: 'dynamic',
        clientUri: checked.clientUri ?? null,
        createdAt: now,
      })
      .returning();
    return {
      client_id: row!.clientId,
      client_id_issued_at: Math.floor(now.getTime() / 1000),
      client_name: row!.name,
      redirect_uris: row!.redirectUris,
      grant_types: GRANT_TYPES,
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...(row!.clientUri ? { client_uri: row!.clientUri } : {}),
    };
  }

  /** True when `clientId` has the form of a client ID metadata document URL (module comment). */
  isMetadataDocumentUrl(clientId: string): boolean {
    let url: URL;
    try {
      url = new URL(clientId);
    } catch {
      return false;
    }
    const httpAllowed = this.allowLoopbackHttp && url.protocol === 'http:' && isLoopbackHost(url.hostname);
    return (
      (url.protocol === 'https:' || httpAllowed) &&
      url.pathname !== '/' &&
      url.hash === '' &&
      !clientId.includes('#') &&
      url.username === '' &&
      url.password === '' &&
      url.href === clientId
    );
  }

  /**
   * The client of `clientId` for an authorization request: a registered one, or the client ID metadata document at
   * that URL (fetched when not cached or older than {@link METADATA_CACHE_MS}).
   * @returns the stored client, or undefined for an unknown `client_id`.
   * @throws RegistrationError when a metadata document cannot be fetched or does not qualify.
   */
  async resolve(clientId: string): Promise<OAuthClientRow | undefined> {
    if (clientId.length > 2000) return undefined;
    const [row] = await this.db.select().from(oauthClients).where(eq(oauthClients.clientId, clientId));
    if (!this.isMetadataDocumentUrl(clientId)) return row?.kind === 'dynamic' ? row : undefined;
    const fresh =
      row?.metadataFetchedAt && this.clock.nowMs() - row.metadataFetchedAt.getTime() < METADATA_CACHE_MS;
    if (row && fresh) return row;
    const checked = await this.fetchMetadataDocument(clientId);
    const now = this.clock.now();
    const values = {
      name: checked.name,
      redirectUris: checked.redirectUris,
      clientUri: checked.clientUri ?? null,
      metadataFetchedAt: now,
    };
    const [stored] = await this.db
      .insert(oauthClients)
      .values({ clientId, kind: 'metadata_document', createdAt: now, ...values })
      .onConflictDoUpdate({ target: oauthClients.clientId, set: values })
      .returning();
    return stored;
  }

  /** The stored client of `clientId` as it is (no fetch): the token and revocation endpoints. */
  async find(clientId: string): Promise<OAuthClientRow | undefined> {
    if (clientId.length > 2000) return undefined;
    const [row] = await this.db.select().from(oauthClients).where(eq(oauthClients.clientId, clientId));
    return row;
  }

  /**
   * Fetches and checks a client ID metadata document.
   * @throws RegistrationError `invalid_client_metadata` (unreachable, not 200, too large, not JSON, `client_id` not
   *   the URL) or `invalid_redirect_uri`.
   */
  private async fetchMetadataDocument(url: string) {
    let body: Buffer;
    try {
      const res = await this.outbound.send(url, {
        headers: { accept: 'application/json' },
        timeoutMs: METADATA_TIMEOUT_MS,
        maxBodyBytes: METADATA_MAX_BYTES,
      });
      if (res.status !== 200)
        throw new RegistrationError(
          'invalid_client_metadata',
          `The client ID metadata document answered HTTP ${res.status}.`,
        );
      if (res.truncated)
        throw new RegistrationError(
          'invalid_client_metadata',
          `The client ID metadata document is larger than ${METADATA_MAX_BYTES} bytes.`,
        );
      body = res.body;
    } catch (err) {
      if (err instanceof RegistrationError) throw err;
      throw new RegistrationError(
        'invalid_client_metadata',
        'The client ID metadata document could not be fetched.',
      );
    }
    let document: unknown;
    try {
      document = JSON.parse(body.toString('utf8'));
    } catch {
      throw new RegistrationError('invalid_client_metadata', 'The client ID metadata document is not JSON.');
    }
    if (typeof document !== 'object' || document === null || Array.isArray(document))
      throw new RegistrationError(
        'invalid_client_metadata',
        'The client ID metadata document is not a JSON object.',
      );
    const metadata = document as Record<string, unknown>;
    if (metadata.client_id !== url)
      throw new RegistrationError(
        'invalid_client_metadata',
        'The client_id of the metadata document must be the URL it is served at.',
      );
    return checkMetadata(metadata);
  }
}
