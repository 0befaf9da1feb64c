/**
 * The MCP transport of the media-buying service (spec "MCP", "Authentication"), web-standard (`Request` in,
 * `Response` out; `routes/mcp.ts` mounts it in Fastify) on `@modelcontextprotocol/server` v2. Every request of every
 * MCP endpoint ({@link MCP_ENDPOINTS}) goes:
 *
 * 1. **Authentication** (`Authorization: Bearer`, {@link McpAuthenticator}): missing, unknown, revoked or expired
 *    credentials, and `mcp_at_` credentials bound to another resource, are HTTP 401 with the RFC 9728 §5.1 challenge
 *    `WWW-Authenticate: Bearer resource_metadata="<public URL>/.well-known/oauth-protected-resource<path>"` (plus
 *    `error="invalid_token"` when a credential was presented); activation-sandbox credentials are 403 with their
 *    `UNBOUND_FREE_*` code. Bodies are JSON-RPC errors (`data` = the AdCP error object).
 *    **The scope** of an OAuth credential ({@link McpTransport.scopeChallenge}): a `tools/call` of a mutating tool
 *    without `adcp:write` is HTTP 403 with the RFC 6750 §3.1 `insufficient_scope` challenge naming the scope.
 * 2. **The storefront** of a storefront endpoint: unknown or not active is 404.
 * 3. **The era**, decided per request by the SDK's own classifier (`isLegacyRequest`):
 *    - stateless (MCP 2026-07-28, the `_meta` envelope): served by the SDK's `createMcpHandler` (strict modern leg),
 *      one fresh low-level `Server` per request. The session-only endpoints (creative, admin) answer it with the
 *      protocol's unsupported-version error (`-32022`, naming the session-era revisions).
 *    - session (2025-era): `initialize` opens a session (the SDK's streamable HTTP transport answers it and issues the
 *      `Mcp-Session-Id` we generate), stored in PostgreSQL ({@link McpSessions}); each later request must carry a
 *      live session id of the same principal on the same endpoint (missing: 400; unknown, ended, expired, foreign:
 *      404) and is then served by a fresh server over the SDK's stateless transport, on whichever instance it lands.
 *      `DELETE` ends the session; `GET` (the optional standalone SSE stream) is 405: the service sends no
 *      server-initiated messages.
 *
 * Tools are dispatched by {@link McpDispatcher}.
 */
import {
  createMcpHandler,
  isLegacyRequest,
  type ListToolsResult,
  type McpRequestContext,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  UnsupportedProtocolVersionError,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { bearerToken } from '../../../platform/auth.ts';
import type { AppLogger } from '../../../platform/logger.ts';
import { decide } from '../activation/index.ts';
import type { Caller, MediaBuyingCredentials } from '../credentials/index.ts';
import { MediaBuyingCode, sandboxDenied } from '../media-buying-errors.ts';
import {
  type AdcpErrorBody,
  type McpEndpoint,
  type McpTarget,
  type McpToolContext,
  mcpResourceUri,
  protectedResourceMetadataPath,
} from './contract.ts';
import { errorBodyOf, type McpDispatcher } from './dispatch.ts';
import { MCP_SCOPE } from './oauth/scopes.ts';
import type { McpSessions } from './sessions.ts';

/** The MCP revisions of the session era (the only ones the session-only endpoints answer). */
const SESSION_ERA_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];

/**
 * A stateless-era request to a session-only endpoint: the protocol's unsupported-version error (`-32022`, HTTP 400,
 * `data.supported` lists the session-era revisions), so a negotiating client falls back to `initialize`.
 */
function sessionOnly(request: Request, body: unknown): Response {
  const meta = (body as { params?: { _meta?: Record<string, unknown> } } | null)?.params?._meta;
  const requested =
    request.headers.get('mcp-protocol-version') ??
    (typeof meta?.['io.modelcontextprotocol/protocolVersion'] === 'string'
      ? (meta['io.modelcontextprotocol/protocolVersion'] as string)
      : 'unknown');
  const error = new UnsupportedProtocolVersionError(
    { supported: SESSION_ERA_VERSIONS, requested },
    `This endpoint serves the initialize/session lifecycle only (${SESSION_ERA_VERSIONS.join(', ')}).`,
  );
  return new Response(
    JSON.stringify({
      jsonrpc: '2.0',
      id: idOf(body),
      error: { code: error.code, message: error.message, data: error.data },
    }),
    { status: 400, headers: { 'content-type': 'application/json' } },
  );
}

/** The server identity in `initialize` and `server/discover` answers. */
const SERVER_INFO = { name: 'media-buying', title: 'Media-buying AdCP agent', version: '3.1.0' };

/** A storefront as the MCP layer sees it. */
export interface McpStorefront {
  id: number;
  publicId: string;
  organizationId: number;
  status: string;
}

/** What the transport needs. */
export interface McpTransportDeps {
  credentials: Pick<MediaBuyingCredentials, 'bearer' | 'callers'>;
  dispatcher: McpDispatcher;
  sessions: McpSessions;
  /** The storefront of a public id (`sf_...`), any status, or null. */
  storefront(publicId: string): Promise<McpStorefront | null>;
  /** The service's public URL (read per request: a test platform learns its port after setup). */
  publicUrl(): string;
  logger?: AppLogger;
}

/** One MCP HTTP request, framework-free. */
export interface McpHttpRequest {
  target: McpTarget;
  /** The web request (its body already read: see `body`). */
  request: Request;
  /** The parsed JSON body of a POST, else undefined. */
  body: unknown;
}

/** The per-request state a server instance is built for (carried to the SDK's factory in `authInfo.extra`). */
interface Served {
  caller: Caller;
  endpoint: McpEndpoint;
  storefront: McpToolContext['storefront'];
}

/** A JSON-RPC error answer outside any dispatch (authentication, session and storefront refusals). */
function jsonRpcError(
  status: number,
  message: string,
  options: { id?: unknown; data?: AdcpErrorBody; headers?: Record<string, string> } = {},
): Response {
  const code = status === 401 || status === 403 ? -32001 : status === 404 ? -32002 : -32600;
  return new Response(
    JSON.stringify({
      jsonrpc: '2.0',
      id: options.id ?? null,
      error: { code, message, ...(options.data ? { data: options.data } : {}) },
    }),
    { status, headers: { 'content-type': 'application/json', ...options.headers } },
  );
}

/** The JSON-RPC id of a single request body, for error answers. */
function idOf(body: unknown): unknown {
  return body !== null && typeof body === 'object' && !Array.isArray(body) && 'id' in body
    ? (body as { id: unknown }).id
    : null;
}

/** The MCP transport (module comment). Built once per instance. */
export class McpTransport {
  /** The strict modern leg of the endpoints that answer the stateless era. */
  private readonly modern;

  constructor(private readonly deps: McpTransportDeps) {
    const onerror = (error: Error) => deps.logger?.debug({ err: error }, 'MCP request refused');
    this.modern = createMcpHandler(
      ({ authInfo }: McpRequestContext) => this.server(authInfo!.extra as unknown as Served),
      { legacy: 'reject', onerror },
    );
  }

  /** Serves one MCP HTTP request (module comment): {@link authenticateRequest}, then {@link serve}. Never throws. */
  async handle(http: McpHttpRequest): Promise<Response> {
    const caller = await this.authenticateRequest(http.target, http.request);
    if (caller instanceof Response) return caller;
    return this.serve(http, caller);
  }

  /**
   * Step 1 alone (module comment): the bearer credential of `request` resolved for `target`'s exact resource. The
   * route runs it before its rate limit (a refused request counts against the client address).
   * @returns the caller, or the refusal to answer (401 challenge, 403 sandbox).
   */
  authenticateRequest(target: McpTarget, request: Request): Promise<Caller | Response> {
    const resource = mcpResourceUri(this.deps.publicUrl(), target.path);
    const authorization = request.headers.get('authorization') ?? undefined;
    return this.authenticate(authorization, resource, request.method, target);
  }

  /** Steps 2 and 3 (module comment) for a request already authenticated as `caller`. Never throws. */
  async serve({ target, request, body }: McpHttpRequest, caller: Caller): Promise<Response> {
    const insufficient = this.scopeChallenge(target, caller, body);
    if (insufficient) return insufficient;
    const resource = mcpResourceUri(this.deps.publicUrl(), target.path);
    let storefront: McpToolContext['storefront'] = null;
    if (target.storefrontId !== null) {
      const found = await this.deps.storefront(target.storefrontId);
      if (found?.status !== 'active')
        return jsonRpcError(404, `No active storefront ${target.storefrontId}.`, { id: idOf(body) });
      storefront = { id: found.id, publicId: found.publicId, organizationId: found.organizationId };
    }
    const served: Served = { caller, endpoint: target.endpoint, storefront };
    const authInfo = {
      // The SDK passes authInfo through untouched; the secret itself is not needed past authentication.
      token: '',
      clientId: `${caller.kind}:${caller.credentialId}`,
      scopes: [],
      resource: new URL(resource),
      extra: served as unknown as Record<string, unknown>,
    };
    if (!(await isLegacyRequest(request, body))) {
      if (!(target.endpoint.eras as readonly string[]).includes('stateless'))
        return sessionOnly(request, body);
      return this.modern.fetch(request, { parsedBody: body, authInfo });
    }
    return this.legacy(target, request, body, served, authInfo);
  }

  /** Closes the modern legs (in-flight exchanges aborted). */
  async close(): Promise<void> {
    await this.modern.close();
  }

  /** The RFC 9728 protected-resource metadata URL of `target` (the challenges' `resource_metadata`). */
  private metadataUrl(target: McpTarget): string {
    return `${mcpResourceUri(this.deps.publicUrl(), '/')}${protectedResourceMetadataPath(target.path)}`;
  }

  /**
   * The scope of an OAuth credential, checked before anything runs (RFC 6750 §3.1; MCP authorization, "Scope
   * Challenge Handling"): a `tools/call` (alone or in a batch) of a mutating tool this endpoint serves, by an `mcp_at_`
   * credential without `adcp:write`, is refused with HTTP 403 and
   * `WWW-Authenticate: Bearer error="insufficient_scope", scope="adcp:write", resource_metadata="..."`, so the
   * client can ask the user for the scope (step-up authorization) and retry; the body is a JSON-RPC error whose `data`
   * is the AdCP error (`PERMISSION_DENIED`, `correctable`, `details.reason` `insufficient_scope`, `required_scope`,
   * `granted_scope`). Other credentials carry no OAuth scope: nothing to check.
   * @returns the refusal, or undefined.
   */
  private scopeChallenge(target: McpTarget, caller: Caller, body: unknown): Response | undefined {
    const scopes = caller.oauthScopes;
    if (scopes === undefined || scopes.includes(MCP_SCOPE.write)) return undefined;
    const { dispatcher } = this.deps;
    for (const message of Array.isArray(body) ? body : [body]) {
      const call = message as { method?: unknown; params?: { name?: unknown } } | null;
      const name = call?.method === 'tools/call' ? call.params?.name : undefined;
      if (
        typeof name !== 'string' ||
        !dispatcher.serves(target.endpoint.audience, name) ||
        !dispatcher.mutates(name)
      )
        continue;
      const description = `${name} makes changes: it needs the ${MCP_SCOPE.write} scope, which this credential lacks.`;
      return jsonRpcError(403, description, {
        id: idOf(message),
        data: {
          code: 'PERMISSION_DENIED',
          message: `${description} Authorize the app again with ${MCP_SCOPE.write}.`,
          recovery: 'correctable',
          details: {
            reason: 'insufficient_scope',
            required_scope: MCP_SCOPE.write,
            granted_scope: scopes.join(' '),
          },
        },
        headers: {
          'www-authenticate': `Bearer error="insufficient_scope", scope="${MCP_SCOPE.write}", resource_metadata="${this.metadataUrl(target)}", error_description="${description}"`,
        },
      });
    }
    return undefined;
  }

  /**
   * The bearer credential of a request, resolved for this endpoint (module comment, step 1).
   * @returns the caller, or the refusal to answer.
   */
  private async authenticate(
    authorization: string | undefined,
    resource: string,
    method: string,
    target: McpTarget,
  ): Promise<Caller | Response> {
    const metadata = this.metadataUrl(target);
    const challenge = (presented: boolean) =>
      jsonRpcError(
        401,
        presented
          ? 'The bearer credential is invalid, expired, revoked or not for this MCP endpoint.'
          : 'Authenticate with Authorization: Bearer <credential>.',
        {
          data: {
            code: MediaBuyingCode.unauthorized,
            message: presented ? 'Invalid credential for this resource.' : 'Credential missing.',
            recovery: 'terminal',
          },
          headers: {
            'www-authenticate': presented
              ? `Bearer resource_metadata="${metadata}", error="invalid_token"`
              : `Bearer resource_metadata="${metadata}"`,
          },
        },
      );
    if (authorization === undefined) return challenge(false);
    const secret = bearerToken(authorization);
    if (secret === undefined) return challenge(true);
    const resolution = await this.deps.credentials.bearer.resolve(secret);
    if (resolution.status !== 'active') return challenge(true);
    const caller = await this.deps.credentials.callers.resolveForMcp(resolution.principal, resource);
    if (typeof caller === 'string') return challenge(true);
    if (caller.sandbox) {
      // The activation sandbox's one policy table decides (it classes every MCP call).
      const { decision, routeClass } = decide(caller.sandbox.state, method, target.endpoint.path);
      if (decision !== 'allow') {
        const denied = sandboxDenied(decision, caller.sandbox.state, routeClass);
        return jsonRpcError(denied.status, denied.message, { data: errorBodyOf(denied) });
      }
    }
    return caller;
  }

  /** The session era (module comment, step 3). */
  private async legacy(
    target: McpTarget,
    request: Request,
    body: unknown,
    served: Served,
    authInfo: { token: string; clientId: string; scopes: string[]; extra: Record<string, unknown> },
  ): Promise<Response> {
    const { sessions } = this.deps;
    const sessionId = request.headers.get('mcp-session-id');
    if (request.method === 'GET')
      return new Response(null, { status: 405, headers: { allow: 'POST, DELETE' } });
    if (request.method === 'DELETE') {
      if (sessionId === null) return jsonRpcError(400, 'Bad Request: Mcp-Session-Id header is required.');
      return (await sessions.end(sessionId, target.path, served.caller))
        ? new Response(null, { status: 200 })
        : jsonRpcError(404, 'Session not found.');
    }
    const initialize =
      body !== null && typeof body === 'object' && (body as { method?: unknown }).method === 'initialize';
    if (initialize) {
      const server = this.server(served);
      const id = sessions.newId();
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => id,
        enableJsonResponse: true,
      });
      await server.connect(transport);
      try {
        const response = await transport.handleRequest(request, { parsedBody: body, authInfo });
        const negotiated = server.getNegotiatedProtocolVersion();
        const client = server.getClientVersion();
        if (response.ok && negotiated && client)
          await sessions.open(id, {
            path: target.path,
            caller: served.caller,
            protocolVersion: negotiated,
            clientName: client.name,
            clientVersion: client.version,
          });
        return response;
      } finally {
        await server.close();
      }
    }
    if (sessionId === null)
      return jsonRpcError(400, 'Bad Request: Mcp-Session-Id header is required.', { id: idOf(body) });
    const session = await sessions.touch(sessionId, target.path, served.caller);
    if (!session) return jsonRpcError(404, 'Session not found.', { id: idOf(body) });
    const version = request.headers.get('mcp-protocol-version');
    if (version !== null && version !== session.protocolVersion)
      return jsonRpcError(
        400,
        `Bad Request: MCP-Protocol-Version ${version} is not the session's (${session.protocolVersion}).`,
        { id: idOf(body) },
      );
    const server = this.server(served);
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await transport.handleRequest(request, { parsedBody: body, authInfo });
    } finally {
      await server.close();
    }
  }

  /**
   * A low-level server for one request (or one `initialize`): `tools/list` of the endpoint's audience and
   * `tools/call` through the dispatcher.
   */
  private server(served: Served): Server {
    const { dispatcher } = this.deps;
    const audience = served.endpoint.audience;
    const server = new Server(SERVER_INFO, {
      capabilities: { tools: {} },
      instructions:
        'AdCP 3.x media-buying agent. Send adcp_version ("3.0" or "3.1") with each tool call; see get_adcp_capabilities.',
    });
    // Every listed schema is an object schema (`type: 'object'`; checked when the dispatcher compiles it).
    const tools = dispatcher.list(audience) as unknown as ListToolsResult['tools'];
    server.setRequestHandler('tools/list', async () => ({ tools }));
    server.setRequestHandler('tools/call', async (req) => {
      const { name } = req.params;
      if (!dispatcher.serves(audience, name))
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
      const args = (req.params.arguments ?? {}) as Record<string, unknown>;
      return dispatcher.call(name, args, served);
    });
    return server;
  }
}
