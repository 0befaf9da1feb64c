/**
 * The MCP endpoints (spec "MCP"): `GET`, `POST` and `DELETE` on every path of {@link MCP_ENDPOINTS}, handed to the
 * web-standard MCP transport (`mcp/transport.ts`) as a `Request` (the body already parsed by the platform's JSON
 * parser: size limit, prototype keys, unstorable text refused before) and answered with its `Response`. The routes
 * are not part of the REST OpenAPI document: MCP clients discover tools with `tools/list`, and their JSON-RPC bodies
 * are described by the MCP specification (the README shows how to connect).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServiceApp } from '../../../platform/http.ts';
import { MCP_ENDPOINTS, type McpTransport, mcpTargetOfPath } from '../mcp/index.ts';

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

/** Registers the MCP endpoints (module comment). */
export function registerMcpRoutes(
  app: ServiceApp,
  deps: { transport: McpTransport; publicUrl: () => string },
) {
  for (const endpoint of MCP_ENDPOINTS) {
    app.route({
      method: ['GET', 'POST', 'DELETE'],
      url: endpoint.path,
      schema: { hide: true },
      handler: async (request, reply) => {
        const path = request.url.split('?')[0]!;
        const target = mcpTargetOfPath(path);
        if (!target) {
          reply.code(404).header('content-type', 'application/json');
          return JSON.stringify({
            jsonrpc: '2.0',
            id: null,
            error: { code: -32002, message: `No MCP endpoint at ${path}.` },
          });
        }
        const response = await deps.transport.handle({
          target,
          request: webRequest(request, deps.publicUrl()),
          body: request.method === 'POST' ? request.body : undefined,
        });
        return sendResponse(reply, response);
      },
    });
  }
}
