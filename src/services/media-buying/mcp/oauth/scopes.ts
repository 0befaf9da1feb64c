/**
 * The OAuth scopes of MCP connectors (issue 18; the README's "Scopes"). The resource (RFC 8707) already says which
 * endpoint a credential is for; the scope says what it may do there:
 *
 * | scope        | what                                                                                       |
 * | ------------ | ------------------------------------------------------------------------------------------ |
 * | `adcp:read`  | the connection itself and every read-only tool (`tools/list`, `get_products`, ...)          |
 * | `adcp:write` | the mutating tools (`create_media_buy`, `update_media_buy`, `sync_creatives`, `sync_accounts`) |
 *
 * `adcp:read` is part of every grant (a connection that cannot list its tools is no connection); `adcp:write` is
 * offered only by endpoints that serve a mutating tool ({@link SCOPES_OF_AUDIENCE}). An authorization request without
 * `scope` asks for everything the resource offers (RFC 6749 section 3.3 lets the server pick a default; the consent
 * page shows it). Neither scope widens what the user may do: the connector acts with the user's live role, and the
 * scope narrows that.
 *
 * Scope values are space-separated sets (RFC 6749 section 3.3), kept in the canonical order of
 * {@link SCOPES_OF_AUDIENCE} so a stored or answered scope is one string per set.
 */
import type { McpAudience } from '../contract.ts';

/** The scopes of MCP connectors (module comment). */
export const MCP_SCOPE = { read: 'adcp:read', write: 'adcp:write' } as const;

/** One scope of MCP connectors. */
export type McpScope = (typeof MCP_SCOPE)[keyof typeof MCP_SCOPE];

/** Every scope, in canonical order. */
export const ALL_MCP_SCOPES: readonly McpScope[] = [MCP_SCOPE.read, MCP_SCOPE.write];

/** The scopes each kind of endpoint offers (RFC 9728 `scopes_supported`): `adcp:write` where a tool mutates. */
export const SCOPES_OF_AUDIENCE: Readonly<Record<McpAudience, readonly McpScope[]>> = {
  buyer: [MCP_SCOPE.read, MCP_SCOPE.write],
  storefront: [MCP_SCOPE.read, MCP_SCOPE.write],
  creative: [MCP_SCOPE.read],
  admin: [MCP_SCOPE.read],
};

/** What each scope lets a connector do, as the consent page says it. */
export const SCOPE_DESCRIPTIONS: Readonly<Record<McpScope, string>> = {
  'adcp:read': 'See products, media buys, creatives, delivery and account links',
  'adcp:write': 'Make changes: create and update media buys, sync creatives and account links',
};

/** The scope tokens of a `scope` parameter (RFC 6749 section 3.3: space-separated; empty or absent: none). */
export function scopeTokens(value: string | undefined): string[] {
  return value === undefined ? [] : value.split(' ').filter((s) => s !== '');
}

/** The outcome of {@link grantScope} and {@link narrowScope}: the scope string, or the tokens that are refused. */
export type ScopeOutcome = { scope: string } | { refused: string[] };

/**
 * The scope an authorization request for a resource offering `offered` gets: everything offered when `requested` is
 * absent or empty, else `adcp:read` and what was requested.
 * @returns the canonical scope string, or the requested tokens the resource does not offer (`invalid_scope`).
 */
export function grantScope(requested: string | undefined, offered: readonly McpScope[]): ScopeOutcome {
  const tokens = scopeTokens(requested);
  const refused = tokens.filter((t) => !(offered as readonly string[]).includes(t));
  if (refused.length > 0) return { refused };
  if (tokens.length === 0) return { scope: offered.join(' ') };
  return { scope: offered.filter((s) => s === MCP_SCOPE.read || tokens.includes(s)).join(' ') };
}

/**
 * The scope of a refresh (RFC 6749 section 6): the credential's own scope `held` when `requested` is absent or empty,
 * else the requested subset of it (with `adcp:read`). A refresh never widens.
 * @returns the canonical scope string, or the requested tokens `held` does not include (`invalid_scope`).
 */
export function narrowScope(requested: string | undefined, held: string): ScopeOutcome {
  const heldTokens = scopeTokens(held);
  const tokens = scopeTokens(requested);
  const refused = tokens.filter((t) => !heldTokens.includes(t));
  if (refused.length > 0) return { refused };
  if (tokens.length === 0) return { scope: held };
  return {
    scope: ALL_MCP_SCOPES.filter(
      (s) => heldTokens.includes(s) && (s === MCP_SCOPE.read || tokens.includes(s)),
    ).join(' '),
  };
}
