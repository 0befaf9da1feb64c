/**
 * The MCP endpoints (spec "MCP"): `GET`, `POST` and `DELETE` on every path of {@link MCP_ENDPOINTS}, handed to the
 * web-standard MCP transport (`mcp/transport.ts`) as a `Request` (the body already parsed by the platform's JSON
 * parser: size limit, prototype keys, unstorable text refused before) and answered with its `Response`. The routes
 * are not part of the REST OpenAPI document: MCP clients discover tools with `tools/list`, and their JSON-RPC bodies
 * are described by the MCP specification (the README shows how to connect).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiError } from '../../../platform/errors.ts';
import type { ErrorFormatter, ServiceApp } from '../../../platform/http.ts';
import { perMinuteLimit } from '../../../platform/rate-limit.ts';
import type { Caller } from '../credentials/index.ts';
import {
  errorBodyOf,
  MCP_ENDPOINTS,
  type McpTarget,
  type McpTransport,
  mcpTargetOfPath,
} from '../mcp/index.ts';
import { rateLimited } from '../media-buying-errors.ts';

/** Request headers not carried to the web `Request` (its body is not carried either: it is parsed already). */
const DROPPED_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection']);

/** The web `Request` of a Fastify request (headers and URL; the body travels parsed). */
function webRequest(request: FastifyRequest, publicUrl: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || DROPPED_HEADERS.has(name)) continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return new Request(new URL(request.url, publicUrl), { method: request.method, headers });
}

/** Sends a web `Response` through Fastify (JSON bodies as text; an event stream as its stream). */
async function sendResponse(reply: FastifyReply, response: Response) {
  reply.code(response.status);
  response.headers.forEach((value, name) => {
    reply.header(name, value);
  });
  if (response.headers.get('content-type')?.startsWith('text/event-stream')) return reply.send(response.body);
  return reply.send(response.body === null ? '' : await response.text());
}

/**
 * Errors the platform answers on an MCP route (the rate limit's 429, a body the JSON parser refused) as a JSON-RPC
 * error whose `data` is the AdCP error body (`RATE_LIMITED`, `transient`, `retry_after` in seconds); the status and
 * headers (`Retry-After`) stay the platform's.
 */
const jsonRpcErrorFormat: ErrorFormatter = (error: ApiError) => {
  const data = errorBodyOf(error);
  const retryAfter = error.details?.retryAfterSeconds;
  return {
    body: {
      jsonrpc: '2.0',
      id: null,
      error: {
        code: error.status === 429 ? -32000 : error.status < 500 ? -32600 : -32603,
        message: error.message,
        data: typeof retryAfter === 'number' ? { ...data, retry_after: retryAfter } : data,
      },
    },
  };
};

/** What the `onRequest` authentication of an MCP request found (the handler answers a refusal). */
interface Authenticated {
  target: McpTarget;
  request: Request;
  outcome: Caller | Response;
}

/**
 * Registers the MCP endpoints (module comment). Each request is authenticated first, then counted by the service's
 * REST per-minute limit (`MEDIA_BUYING_REQUESTS_PER_MINUTE`): per credential (`<kind>:<credential id>`) once
 * authenticated, per client address (`ip:`) when not (a refused credential counts against its address); past it,
 * 429 with `Retry-After` and the JSON-RPC error {@link jsonRpcErrorFormat}.
 */
export function registerMcpRoutes(
  app: ServiceApp,
  deps: { transport: McpTransport; publicUrl: () => string; requestsPerMinute: () => number },
) {
  const authenticated = new WeakMap<FastifyRequest, Authenticated>();
  const authenticate = async (request: FastifyRequest) => {
    const target = mcpTargetOfPath(request.url.split('?')[0]!);
    if (!target) return;
    const web = webRequest(request, deps.publicUrl());
    authenticated.set(request, {
      target,
      request: web,
      outcome: await deps.transport.authenticateRequest(target, web),
    });
  };
  const limit = perMinuteLimit(app, {
    max: () => deps.requestsPerMinute(),
    bucket: (request) => {
      const outcome = authenticated.get(request)?.outcome;
      return outcome && !(outcome instanceof Response)
        ? `${outcome.kind}:${outcome.credentialId}`
        : `ip:${request.ip}`;
    },
    exceeded: (retryAfterSeconds, max) =>
      rateLimited(
        `More than ${max} requests per minute with this credential; retry later.`,
        retryAfterSeconds,
      ),
  });
  for (const endpoint of MCP_ENDPOINTS) {
    app.route({
      method: ['GET', 'POST', 'DELETE'],
      url: endpoint.path,
      schema: { hide: true },
      config: { errorFormat: jsonRpcErrorFormat },
      onRequest: [authenticate, limit],
      handler: async (request, reply) => {
        const found = authenticated.get(request);
        if (!found) {
          const path = request.url.split('?')[0]!;
          reply.code(404).header('content-type', 'application/json');
          return JSON.stringify({
            jsonrpc: '2.0',
            id: null,
            error: { code: -32002, message: `No MCP endpoint at ${path}.` },
          });
        }
        if (found.outcome instanceof Response) return sendResponse(reply, found.outcome);
        const response = await deps.transport.serve(
          {
            target: found.target,
            request: found.request,
            body: request.method === 'POST' ? request.body : undefined,
          },
          found.outcome,
        );
        return sendResponse(reply, response);
      },
    });
  }
}
