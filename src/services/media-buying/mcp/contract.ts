/**
 * The contract between the MCP layer of the media-buying service (transport, eras, authentication, versions, error
 * rendering) and the tools it serves (spec "MCP", "Errors", "Versioning"; AdCP 3.x `core/error.json`).
 *
 * - {@link MCP_ENDPOINTS}: every MCP endpoint, each its own OAuth protected resource (RFC 9728). The resource URI of an
 *   endpoint is the service's public URL plus its path, exactly ({@link mcpResourceUri}); its protected-resource
 *   metadata lives at the RFC 9728 path-inserted well-known URL ({@link protectedResourceMetadataPath}).
 * - {@link McpTool}: a tool is a name, a JSON Schema (draft 2020-12) for its arguments, the audiences (endpoints) that
 *   list it, and a handler. A handler returns the AdCP response object (the tool result's `structuredContent`) or
 *   throws: an {@link AdcpError} is rendered as is; an `ApiError` of the REST domain is rendered with the same code and
 *   a `recovery` derived from its status ({@link recoveryOfStatus}); anything else is `INTERNAL_ERROR` without the
 *   internal message.
 * - Mutating tools take `idempotency_key` and are wrapped by their module's idempotency layer (AdCP: canonical-JSON
 *   fingerprint, `replayed`, `IDEMPOTENCY_CONFLICT`, the spec's `mutation_outcome` deviations); the MCP layer does not
 *   know about it.
 */
import type { Caller } from '../credentials/index.ts';

/** Which records an MCP endpoint serves: a buyer's (Buyer Account) or a seller's (storefronts of a Seller Account). */
export type McpAudience = 'buyer' | 'storefront' | 'creative' | 'admin';

/** The two MCP request styles (spec "Versioning"): stateless (MCP 2026-07-28) and initialize/session. */
export type McpEra = 'stateless' | 'session';

/** One MCP endpoint of the service. */
export interface McpEndpoint {
  /**
   * URL path, e.g. `/mcp/v3`. The storefront endpoint is one per storefront (`:storefrontId` is a storefront's public
   * id, `sf_...`): each storefront is an AdCP seller agent of its own and its own protected resource.
   */
  path: string;
  audience: McpAudience;
  /** The eras it answers on the same URL (spec: creative and admin endpoints stay on the session lifecycle). */
  eras: readonly McpEra[];
  /** Human name (protected-resource metadata `resource_name`, consent page). */
  name: string;
}

/** Every MCP endpoint (spec "MCP": each is its own protected resource). */
export const MCP_ENDPOINTS = [
  { path: '/mcp/v3', audience: 'buyer', eras: ['stateless', 'session'], name: 'Media buying (buyer)' },
  {
    path: '/mcp/v3/storefronts/:storefrontId',
    audience: 'storefront',
    eras: ['stateless', 'session'],
    name: 'Media buying (storefront)',
  },
  { path: '/mcp/v3/creative', audience: 'creative', eras: ['session'], name: 'Media buying (creative)' },
  { path: '/mcp/v3/admin', audience: 'admin', eras: ['session'], name: 'Media buying (admin)' },
] as const satisfies readonly McpEndpoint[];

/**
 * The exact resource URI of an MCP endpoint (RFC 8707 `resource`; RFC 9728 `resource`): public URL + the concrete
 * path (a storefront endpoint's path with its storefront id, e.g. `/mcp/v3/storefronts/sf_...`).
 */
export function mcpResourceUri(publicUrl: string, path: string): string {
  return new URL(
    path.replace(/^\/+/, ''),
    publicUrl.endsWith('/') ? publicUrl : `${publicUrl}/`,
  ).href.replace(/\/$/, '');
}

/** The RFC 9728 protected-resource metadata path of an MCP endpoint (well-known segment inserted before the path). */
export function protectedResourceMetadataPath(path: string): string {
  return `/.well-known/oauth-protected-resource${path}`;
}

/** A concrete MCP path matched to its endpoint (with the storefront id of a storefront endpoint). */
export interface McpTarget {
  endpoint: McpEndpoint;
  /** The concrete path, e.g. `/mcp/v3/storefronts/sf_0123`. */
  path: string;
  /** The storefront public id of a storefront endpoint, else null (its existence is not checked here). */
  storefrontId: string | null;
}

/** The endpoint a concrete path belongs to, or undefined. */
export function mcpTargetOfPath(path: string): McpTarget | undefined {
  for (const endpoint of MCP_ENDPOINTS) {
    const [prefix, param] = endpoint.path.split('/:');
    if (param === undefined) {
      if (path === endpoint.path) return { endpoint, path, storefrontId: null };
    } else if (path.startsWith(`${prefix}/`)) {
      const id = path.slice(prefix!.length + 1);
      if (/^sf_[0-9a-f]{32}$/.test(id)) return { endpoint, path, storefrontId: id };
    }
  }
  return undefined;
}

/** The MCP target whose resource URI is `resource` exactly (resource binding, RFC 8707), or undefined. */
export function mcpTargetOfResource(publicUrl: string, resource: string): McpTarget | undefined {
  const base = mcpResourceUri(publicUrl, '/');
  if (!resource.startsWith(base)) return undefined;
  const target = mcpTargetOfPath(resource.slice(base.length));
  return target && mcpResourceUri(publicUrl, target.path) === resource ? target : undefined;
}

/** AdCP `recovery`: how a caller recovers (AdCP `core/error.json`). */
export type AdcpRecovery = 'transient' | 'correctable' | 'terminal';

/** A buyer-actionable reason (spec "Errors": `code` from the AdCP vocabulary or `X_<VENDOR>_<CODE>`; message safe). */
export interface BuyerReason {
  code: string;
  message: string;
}

/** One rejected field of a `VALIDATION_ERROR` (AdCP `core/error.json` `issues[]`; added for the MCP layer). */
export interface AdcpIssue {
  /** RFC 6901 JSON Pointer into the tool arguments (Ajv's `instancePath`; `` for the arguments object). */
  pointer: string;
  message: string;
  /** The JSON Schema keyword that rejected it (`required`, `type`, `enum`, ...). */
  keyword: string;
}

/**
 * The `adcp_error` object of a failed tool call (spec "Errors", AdCP `core/error.json`): also sent as the text content
 * and mirrored in the result's `errors[]`.
 */
export interface AdcpErrorBody {
  code: string;
  message: string;
  recovery: AdcpRecovery;
  /** The request field at fault, when one is. */
  field?: string;
  /** Every rejected field of a `VALIDATION_ERROR` (`field` is then `issues[0]` in JSONPath-lite). */
  issues?: AdcpIssue[];
  details?: Record<string, unknown>;
  /** On buyer-actionable errors of `create_media_buy`, `update_media_buy`, `sync_creatives`; agrees with `recovery`. */
  buyer_reason?: BuyerReason;
}

/** A tool failure in AdCP's shape. Thrown by tool handlers; rendered by the MCP layer. */
export class AdcpError extends Error {
  readonly body: AdcpErrorBody;
  constructor(body: AdcpErrorBody) {
    super(body.message);
    this.name = 'AdcpError';
    this.body = body;
  }
}

/** `recovery` for an `ApiError` of the REST domain: 429 and 5xx are `transient`, other 4xx `correctable`. */
export function recoveryOfStatus(status: number): AdcpRecovery {
  return status === 429 || status >= 500 ? 'transient' : 'correctable';
}

/** What a tool handler is given besides its arguments. */
export interface McpToolContext {
  /** The authenticated caller (a user API key, organization key, M2M token, or `mcp_at_` access credential's user). */
  caller: Caller;
  /** The endpoint the call came to. */
  endpoint: McpEndpoint;
  /** On a storefront endpoint, its storefront (checked active by the MCP layer); else null. */
  storefront: { id: number; publicId: string; organizationId: number } | null;
  /** The AdCP version the call is answered in (the caller's `adcp_version` downshifted within the major, e.g. `3.1`). */
  adcpVersion: string;
}

/** One MCP tool (module comment). */
export interface McpTool {
  name: string;
  description: string;
  /** Endpoints that list and serve it. */
  audiences: readonly McpAudience[];
  /** JSON Schema (draft 2020-12) of the arguments; the MCP layer validates before calling {@link handler}. */
  inputSchema: Record<string, unknown>;
  /** True for tools that change state (they require `idempotency_key`). */
  mutating: boolean;
  /**
   * Refused while the caller has Terms of Service to accept (`TOS_ACCEPTANCE_REQUIRED`), like a REST mutation. Every
   * mutating tool is; a tool whose REST counterpart is a `POST` (`get_products`: discover-products, which may start a
   * discovery session) sets it too, so MCP and REST agree.
   */
  requiresTerms?: boolean;
  /** @returns the AdCP response object. @throws AdcpError, ApiError. */
  handler(ctx: McpToolContext, args: Record<string, unknown>): Promise<Record<string, unknown>>;
}
