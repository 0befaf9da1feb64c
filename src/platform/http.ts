import { AjvCompiler, type RouteDefinition } from '@fastify/ajv-compiler';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import scalar from '@scalar/fastify-api-reference';
import { Type } from '@sinclair/typebox';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
  type RawReplyDefaultExpression,
  type RawRequestDefaultExpression,
  type RawServerDefault,
} from 'fastify';
import type { TrustProxy } from './config.ts';
import { constantTimeEqual } from './crypto.ts';
import { ApiError, type FieldIssue, internalError, invalidRequest } from './errors.ts';
import { requestId } from './ids.ts';
import type { AppLogger } from './logger.ts';

const AJV_OPTIONS = { allErrors: true, useDefaults: true, removeAdditional: false } as const;
const coercingValidators = AjvCompiler();
const strictValidators = AjvCompiler();

/**
 * Request validation with Fastify's own Ajv compiler, in two modes: query strings, path parameters and headers are
 * text on the wire, so their values are coerced to the schema's types (`?limit=10` is the number 10, `?ids=a` the
 * array `['a']`); a JSON body already carries its types, so it is validated as sent (`"quantity": "2"` where an
 * integer is expected is a 400, never silently the number 2).
 */
function buildRequestValidator(externalSchemas: Parameters<ReturnType<typeof AjvCompiler>>[0]) {
  const query = coercingValidators(externalSchemas, {
    customOptions: { ...AJV_OPTIONS, coerceTypes: 'array' },
  });
  const body = strictValidators(externalSchemas, { customOptions: { ...AJV_OPTIONS, coerceTypes: false } });
  return (route: RouteDefinition) => (route.httpPart === 'body' ? body(route) : query(route));
}

/** A service's Fastify instance, typed by TypeBox schemas. Only routes (HTTP layer) use it. */
export type ServiceApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/**
 * Turns an {@link ApiError} into the service's own error body. The status is `error.status`; returned headers are
 * added to the answer (after `error.headers`). Called for every error, including 404 for unknown routes and 500.
 */
export type ErrorFormatter = (
  error: ApiError,
  request: FastifyRequest,
) => { body: unknown; headers?: Record<string, string> };

/** What {@link createServiceApp} needs to know about the service. */
export interface ServiceAppOptions {
  /** Service folder name (`coins`); used in logs. */
  name: string;
  /** OpenAPI `info`. */
  title: string;
  version: string;
  description: string;
  /** The service's public base URL (OpenAPI `servers[0]`). */
  publicUrl: string;
  formatError: ErrorFormatter;
  /** The operator token guarding `/_ops/*` (compared in constant time). */
  operatorToken: string;
  logger: AppLogger;
  /** OpenAPI tags with descriptions, in display order (`health` and `operator` are added). */
  tags?: { name: string; description: string }[];
  /** OpenAPI security schemes of the service (`operatorToken` is added). */
  securitySchemes?: Record<string, unknown>;
  /** Largest accepted request body in bytes (default 1 MiB). */
  bodyLimit?: number;
  /** Peers whose `X-Forwarded-For` sets `request.ip` (config `TRUST_PROXY`; default none). */
  trustProxy?: TrustProxy;
  /** Readiness probe: true when the service can serve (database reachable). */
  ready: () => Promise<boolean>;
}

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

function issuesFromValidation(error: FastifyError): FieldIssue[] {
  const location = error.validationContext === 'querystring' ? 'query' : (error.validationContext ?? 'body');
  return (error.validation ?? []).map((v) => {
    const params = (v.params ?? {}) as Record<string, unknown>;
    const base = v.instancePath.replace(/^\//, '');
    let field = base;
    let message = v.message ?? 'is invalid';
    if (v.keyword === 'required' && typeof params.missingProperty === 'string') {
      field = base ? `${base}/${params.missingProperty}` : params.missingProperty;
      message = 'is required';
    } else if (v.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
      field = base ? `${base}/${params.additionalProperty}` : params.additionalProperty;
      message = 'is not an allowed field';
    } else if (v.keyword === 'enum' && Array.isArray(params.allowedValues)) {
      message = `must be one of ${params.allowedValues.map((x) => JSON.stringify(x)).join(', ')}`;
    } else if (v.keyword === 'const' && 'allowedValue' in params) {
      message = `must be ${JSON.stringify(params.allowedValue)}`;
    }
    return { location, field, message };
  });
}

/** Maps any thrown value to the {@link ApiError} to answer with. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const fe = error as FastifyError;
  if (fe && Array.isArray(fe.validation)) {
    return invalidRequest(issuesFromValidation(fe));
  }
  const status = typeof fe?.statusCode === 'number' ? fe.statusCode : 500;
  if (status >= 400 && status < 500) {
    const code =
      status === 413
        ? 'payload_too_large'
        : status === 415
          ? 'unsupported_media_type'
          : status === 404
            ? 'not_found'
            : status === 429
              ? 'rate_limited'
              : 'bad_request';
    // Fastify's own 4xx messages describe the request, never internals (for example "Body is not valid JSON").
    return new ApiError(
      status,
      code,
      typeof fe.message === 'string' && fe.message ? fe.message : 'Bad request',
      {
        cause: error,
      },
    );
  }
  return internalError(error);
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/** True for `/_ops` and everything under it. */
function isOperatorPath(path: string | undefined): boolean {
  return path !== undefined && (path === '/_ops' || path.startsWith('/_ops/'));
}

/**
 * The path of a request URL with percent-escapes decoded, as the router matches it (so `/%5Fops/x` is `/_ops/x`).
 * A malformed escape leaves the raw path; the router refuses such a URL anyway.
 */
function decodedPathOf(url: string): string {
  const path = pathOf(url);
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/**
 * Fastify's `trustProxy` for a {@link TrustProxy}: a hop count becomes the function proxy-addr makes of one (trust the
 * first `hops` peers from the right), since Fastify's types omit the number form; the other forms pass as they are.
 */
function fastifyTrustProxy(
  trust: TrustProxy,
): false | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trust !== 'number') return trust;
  return (_address, hop) => hop < trust;
}

/**
 * Creates a service's Fastify instance with the platform's contract already in place:
 * request ids (`x-request-id`, accepted from the caller when well-formed, otherwise a UUID) on every answer and log
 * line; one log line per request; TypeBox validation; every error (validation, unknown route, 5xx, rate limit)
 * rendered by `formatError`, with 5xx never echoing internal messages; `GET /healthz`, `GET /readyz`,
 * `GET /openapi.json` (OpenAPI 3.1 from the route schemas), `GET /docs` (Scalar); and the operator token on `/_ops/*`.
 *
 * Register routes on the returned instance, then call `ready()`.
 */
export async function createServiceApp(options: ServiceAppOptions): Promise<ServiceApp> {
  const app = Fastify({
    loggerInstance: options.logger.child({ service: options.name }) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'reqId' }),
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID_PATTERN.test(incoming) ? incoming : requestId();
    },
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    trustProxy: fastifyTrustProxy(options.trustProxy ?? false),
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // The factory type of @fastify/ajv-compiler cannot describe a per-part choice; the shapes are its own.
    schemaController: { compilersFactory: { buildValidator: buildRequestValidator as never } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    if (isOperatorPath(request.routeOptions.url) || isOperatorPath(decodedPathOf(request.url))) {
      const header = request.headers.authorization;
      const token = typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7).trim() : '';
      if (!token || !constantTimeEqual(token, options.operatorToken)) {
        throw new ApiError(
          401,
          'operator_unauthenticated',
          'This operator route needs Authorization: Bearer <OPERATOR_TOKEN>.',
        );
      }
    }
  });

  app.addHook('onResponse', async (request, reply) => {
    const level = reply.statusCode >= 500 ? 'error' : 'info';
    request.log[level](
      {
        method: request.method,
        path: pathOf(request.url),
        route: request.routeOptions.url,
        statusCode: reply.statusCode,
        durationMs: Math.round(reply.elapsedTime * 100) / 100,
      },
      'request',
    );
  });

  const sendError = (error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const apiError = toApiError(error);
    if (apiError.status >= 500) {
      request.log.error({ err: error }, 'request failed');
    }
    const { body, headers } = options.formatError(apiError, request);
    reply.code(apiError.status);
    if (apiError.headers) reply.headers(apiError.headers);
    if (headers) reply.headers(headers);
    return reply.type('application/json; charset=utf-8').send(body);
  };
  app.setErrorHandler((error, request, reply) => sendError(error, request, reply));
  app.setNotFoundHandler((request, reply) =>
    sendError(
      new ApiError(404, 'not_found', `No route ${request.method} ${pathOf(request.url)}.`),
      request,
      reply,
    ),
  );

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: options.title, version: options.version, description: options.description },
      servers: [{ url: options.publicUrl }],
      tags: [
        ...(options.tags ?? []),
        { name: 'health', description: 'Liveness and readiness probes.' },
        {
          name: 'operator',
          description:
            'Operator routes under `/_ops`: seed data, issue credentials, drive simulators. Bearer OPERATOR_TOKEN.',
        },
      ],
      components: {
        securitySchemes: {
          ...(options.securitySchemes ?? {}),
          operatorToken: { type: 'http', scheme: 'bearer', description: 'The platform operator token.' },
        },
      },
    },
  });
  await app.register(scalar, {
    routePrefix: '/docs',
    logLevel: 'warn',
    configuration: { title: options.title },
  });

  app.get('/openapi.json', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('application/json; charset=utf-8').send(app.swagger()),
  );

  const Health = Type.Object({ status: Type.String() });
  app.get(
    '/healthz',
    {
      schema: {
        operationId: 'getHealth',
        tags: ['health'],
        summary: 'Liveness: the process is up',
        response: { 200: Health },
      },
    },
    async () => ({ status: 'ok' }),
  );
  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'getReadiness',
        tags: ['health'],
        summary: 'Readiness: the database answers',
        response: { 200: Health, 503: Health },
      },
    },
    async (_request, reply) => {
      if (await options.ready()) return { status: 'ready' };
      return reply.code(503).send({ status: 'unavailable' });
    },
  );

  return app as unknown as ServiceApp;
}
