import type { Duplex } from 'node:stream';
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
import { bearerToken } from './auth.ts';
import type { TrustProxy } from './config.ts';
import { constantTimeEqual } from './crypto.ts';
import {
  ApiError,
  type FieldIssue,
  internalError,
  invalidRequest,
  type PlatformErrorCode,
  platformError,
  reasonPhrase,
} from './errors.ts';
import { requestId } from './ids.ts';
import type { AppLogger } from './logger.ts';
import { isCalendarDate, isRfc3339DateTime } from './schemas.ts';
import {
  integerPropertiesOf,
  nonCanonicalIntegerIssue,
  nonFiniteIssue,
  unboundedNumbersOf,
  unstorableIssue,
} from './storable-input.ts';

const AJV_OPTIONS = { allErrors: true, useDefaults: true, removeAdditional: false } as const;
const coercingValidators = AjvCompiler();
const strictValidators = AjvCompiler();

/**
 * Replaces ajv-formats' `date` and `date-time` with the platform's ({@link isCalendarDate}, {@link isRfc3339DateTime}
 * in schemas.ts, also TypeBox's FormatRegistry and the domain helpers'), so a value the request validator accepts is
 * one every service's own checks accept too.
 */
function usePlatformFormats(ajv: {
  addFormat(name: string, format: (value: string) => boolean): unknown;
}): void {
  ajv.addFormat('date', isCalendarDate);
  ajv.addFormat('date-time', isRfc3339DateTime);
}

/**
 * Request validation with Fastify's own Ajv compiler, in two modes: query strings, path parameters and headers are
 * text on the wire, so their values are coerced to the schema's types (`?limit=10` is the number 10, `?ids=a` the
 * array `['a']`); a JSON body already carries its types, so it is validated as sent (`"quantity": "2"` where an
 * integer is expected is a 400, never silently the number 2).
 */
function buildRequestValidator(externalSchemas: Parameters<ReturnType<typeof AjvCompiler>>[0]) {
  const query = coercingValidators(externalSchemas, {
    customOptions: { ...AJV_OPTIONS, coerceTypes: 'array' },
    onCreate: usePlatformFormats,
  });
  const body = strictValidators(externalSchemas, {
    customOptions: { ...AJV_OPTIONS, coerceTypes: false },
    onCreate: usePlatformFormats,
  });
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
 * added to the answer (after `error.headers`). Called for every error, including 404 for unknown routes, 500, and
 * requests the HTTP parser refused before any route was known (so it is given the request id only).
 */
export type ErrorFormatter = (
  error: ApiError,
  request: { readonly id: string },
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
  /** The service's error format (the default of its routes). */
  formatError: ErrorFormatter;
  /**
   * Other error formats by URL prefix (`/mcp/` for MCP errors, `/api/legacy/` for a flat legacy body): a request
   * under a prefix, matched to a route or not (a 404), is answered in its format; the longest prefix wins. A route's
   * `config.errorFormat` wins over both.
   */
  errorFormats?: readonly { prefix: string; format: ErrorFormatter }[];
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

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route's JSON body is optional: no body, or an empty body sent with a JSON content type, reaches
     * validation as `{}` (pricing's plan duplicate, entity-events' check_connectivity). Default false: an empty JSON
     * body is a 400.
     */
    optionalJsonBody?: boolean;
    /** The route's own error format, instead of its URL prefix's or the service's ({@link ServiceAppOptions}). */
    errorFormat?: ErrorFormatter;
    /**
     * The route's path holds a secret (a token as a path parameter): its request log line gives the route's pattern
     * (`/auth/verified-signup-data/:token`) as `path`, never the path itself. Default false.
     */
    secretPath?: boolean;
    /**
     * The route also takes an `application/x-www-form-urlencoded` body (an OAuth token endpoint, an HTML form),
     * parsed into an object of strings (a repeated field: an array). Default false: such a body is a 415.
     */
    formBody?: boolean;
  }
}

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** The methods a route may be registered with, in the order an `Allow` header lists them. */
const ROUTABLE_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** `application/json` and every JSON-based media type (`application/<x>+json`, RFC 6839), e.g. JSON:API's. */
const JSON_MEDIA_TYPES = /^application\/(?:[\w!#$&^.-]+\+)?json(?:\s*;|$)/i;

/**
 * The one JSON body parser of every service: Fastify's own (`secure-json-parse`: a body with a `__proto__` or
 * `constructor.prototype` key is refused, so no handler ever sees a poisoned object), for `application/json` and
 * every `+json` type, with two differences: a route with `config.optionalJsonBody` takes an empty body as no body,
 * and a body refused for a prototype key says so instead of "not valid JSON".
 */
function registerJsonParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(JSON_MEDIA_TYPES, { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '' && request.routeOptions.config.optionalJsonBody) return done(null, undefined);
    parseJson(request, text, (err, value) => {
      if (err && text.trim() !== '' && parsesAsPlainJson(text)) {
        return done(
          platformError(
            'bad_request',
            'The body has a "__proto__" or "constructor.prototype" key, which this API refuses.',
          ),
          undefined,
        );
      }
      if (err) return done(err, undefined);
      // Text storage cannot hold and nesting recursive code cannot walk: refused before any service code runs.
      const issue = unstorableIssue(value, 'body');
      done(issue ? invalidRequest([issue]) : null, issue ? undefined : value);
    });
  });
}

/**
 * The form body parser (`application/x-www-form-urlencoded`, WHATWG URL-encoded form data) of routes with
 * `config.formBody`: an object of strings (a field given twice becomes an array, which a string schema refuses), with
 * the same refusal of text storage cannot hold as JSON bodies. Other routes answer 415.
 */
function registerFormParser(app: FastifyInstance): void {
  app.addContentTypeParser(
    /^application\/x-www-form-urlencoded(?:\s*;|$)/i,
    { parseAs: 'string' },
    (request, body, done) => {
      if (!request.routeOptions.config.formBody)
        return done(
          platformError(
            'unsupported_media_type',
            'This route does not take form-encoded bodies; send JSON.',
            {
              status: 415,
            },
          ),
          undefined,
        );
      const fields = new Map<string, string | string[]>();
      for (const [name, value] of new URLSearchParams(
        typeof body === 'string' ? body : body.toString('utf8'),
      )) {
        const seen = fields.get(name);
        fields.set(name, seen === undefined ? value : [...[seen].flat(), value]);
      }
      // Object.fromEntries defines own properties: a field named __proto__ is a plain field, never the prototype.
      const value = Object.fromEntries(fields);
      const issue = unstorableIssue(value, 'body');
      done(issue ? invalidRequest([issue]) : null, issue ? undefined : value);
    },
  );
}

function parsesAsPlainJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

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

/** The platform code of a 4xx Fastify raised itself (its own status kept). */
function fastifyClientErrorCode(status: number): PlatformErrorCode {
  if (status === 413) return 'payload_too_large';
  if (status === 414) return 'uri_too_long';
  if (status === 415) return 'unsupported_media_type';
  if (status === 404) return 'not_found';
  if (status === 429) return 'rate_limited';
  return 'bad_request';
}

/**
 * Maps any thrown value to the {@link ApiError} to answer with: an ApiError as it is; a schema failure as
 * `validation_failed` with every issue; Fastify's own 4xx as a platform code with Fastify's status and message (they
 * describe the request, never internals: "Body is not valid JSON"); a 503 as `service_unavailable`; anything else as
 * `internal` (500).
 */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const fe = error as FastifyError;
  if (fe && Array.isArray(fe.validation)) {
    return invalidRequest(issuesFromValidation(fe));
  }
  const status = typeof fe?.statusCode === 'number' ? fe.statusCode : 500;
  if (status >= 400 && status < 500) {
    const message = typeof fe.message === 'string' && fe.message ? fe.message : reasonPhrase(status);
    return platformError(fastifyClientErrorCode(status), message, { status, cause: error });
  }
  if (status === 503) {
    return platformError('service_unavailable', 'The service is stopping; retry on another instance.', {
      cause: error,
    });
  }
  return internalError(error);
}

/** How long a connection refused by the HTTP parser is drained before it is closed, in ms. */
const CLIENT_ERROR_DRAIN_MS = 2_000;

/**
 * Answers a request Node's HTTP parser refused (`clientError`): 431 `header_fields_too_large` for headers over
 * `maxHeaderSize`, 408 `request_timeout` when they did not arrive in time, 400 `bad_request` otherwise (a control
 * character in a header, a malformed request line). The body is the service's own error body (`format`, with a new
 * request id, also sent as `x-request-id`), the answer says `Connection: close`, and the socket is ended after it and
 * drained for {@link CLIENT_ERROR_DRAIN_MS}: closing with unread input would reset the connection (RST) and the client
 * could lose the answer.
 */
function answerClientError(
  error: NodeJS.ErrnoException,
  socket: Duplex,
  format: ErrorFormatter,
  log: FastifyBaseLogger,
): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [code, message]: [PlatformErrorCode, string] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? ['header_fields_too_large', 'The request headers are too large.']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? ['request_timeout', 'The request headers did not arrive in time.']
        : ['bad_request', 'The request is malformed (request line or headers).'];
  const apiError = platformError(code, message);
  const id = requestId();
  const { body, headers } = format(apiError, { id });
  const text = JSON.stringify(body);
  const head = [
    `HTTP/1.1 ${apiError.status} ${reasonPhrase(apiError.status)}`,
    'Connection: close',
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(text)}`,
    `x-request-id: ${id}`,
    ...Object.entries(headers ?? {}).map(([name, value]) => `${name}: ${value}`),
  ];
  log.info(
    { reqId: id, statusCode: apiError.status, parserError: error.code },
    'request refused by the HTTP parser',
  );
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(`${head.join('\r\n')}\r\n\r\n${text}`);
  socket.resume();
  const timer = setTimeout(() => socket.destroy(), CLIENT_ERROR_DRAIN_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

/** The one log line of a request (`request`: method, path, route, status, duration in ms); 5xx at level error. */
function logRequest(request: FastifyRequest, reply: FastifyReply): void {
  const level = reply.statusCode >= 500 ? 'error' : 'info';
  request.log[level](
    {
      method: request.method,
      path: request.routeOptions?.config?.secretPath ? request.routeOptions.url : pathOf(request.url),
      route: request.routeOptions?.url,
      statusCode: reply.statusCode,
      durationMs: Math.round(reply.elapsedTime * 100) / 100,
    },
    'request',
  );
}

/**
 * The prefix formats, longest first, each without a trailing slash (`/mcp/` and `/mcp` both cover `/mcp` and
 * `/mcp/...`, never `/mcpx`).
 * @throws Error for a prefix that is not a path or is given twice (a service definition error, at start).
 */
function errorFormatPrefixes(
  formats: readonly { prefix: string; format: ErrorFormatter }[],
): { prefix: string; format: ErrorFormatter }[] {
  const seen = new Set<string>();
  const out = formats.map(({ prefix, format }) => {
    const clean = prefix.replace(/\/+$/, '');
    if (!clean.startsWith('/')) throw new Error(`error format prefix "${prefix}" is not a path`);
    if (seen.has(clean)) throw new Error(`error format prefix "${prefix}" is given twice`);
    seen.add(clean);
    return { prefix: clean, format };
  });
  return out.sort((a, b) => b.prefix.length - a.prefix.length);
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
  const prefixes = errorFormatPrefixes(options.errorFormats ?? []);
  /** The route's format, else the longest matching prefix's (whole path segments), else the service's. */
  const formatterFor = (request: FastifyRequest): ErrorFormatter => {
    const own = request.routeOptions?.config?.errorFormat;
    if (own) return own;
    const path = decodedPathOf(request.url);
    return (
      prefixes.find((p) => path === p.prefix || path.startsWith(`${p.prefix}/`))?.format ??
      options.formatError
    );
  };
  const sendError = (error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const apiError = toApiError(error);
    if (apiError.status >= 500) {
      request.log.error({ err: error }, 'request failed');
    }
    const { body, headers } = formatterFor(request)(apiError, request);
    reply.code(apiError.status);
    if (apiError.headers) reply.headers(apiError.headers);
    if (headers) reply.headers(headers);
    return reply.type('application/json; charset=utf-8').send(body);
  };
  const app = Fastify({
    loggerInstance: options.logger.child({ service: options.name }) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'reqId' }),
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID_PATTERN.test(incoming) ? incoming : requestId();
    },
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    trustProxy: fastifyTrustProxy(options.trustProxy ?? false),
    // Requests arriving while the app closes are answered by the hook below, in the service's error format (Fastify's
    // own 503 would be its fixed JSON body).
    return503OnClosing: false,
    // A malformed percent-escape (400) or an over-long path parameter (414), refused before routing: in the service's
    // format too, with the request id (no hook runs for these requests, so the request line is logged here).
    frameworkErrors: (error, request, reply) => {
      reply.header('x-request-id', request.id);
      sendError(error, request, reply);
      logRequest(request, reply);
    },
    // Requests Node's HTTP parser refuses before Fastify sees them (headers over `maxHeaderSize`, a control character
    // in a header, a malformed request line): answered in the service's default format (no route is known), with
    // `Connection: close`, and the connection ended after the answer rather than reset.
    clientErrorHandler: (error, socket) => {
      answerClientError(error as NodeJS.ErrnoException, socket, options.formatError, app.log);
    },
    forceCloseConnections: 'idle',
    // The factory type of @fastify/ajv-compiler cannot describe a per-part choice; the shapes are its own.
    schemaController: { compilersFactory: { buildValidator: buildRequestValidator as never } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  registerJsonParser(app);
  registerFormParser(app);
  app.addHook('preValidation', async (request) => {
    if (request.routeOptions.config.optionalJsonBody && (request.body === undefined || request.body === null))
      request.body = {};
  });

  // Once the app is stopping, every answer closes its connection (a keep-alive connection busy at the stop would
  // otherwise stay open until its keep-alive timeout and hold the stop), and a request that still arrives on one is
  // a 503 in the service's format.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close');
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    if (closing) {
      reply.header('connection', 'close');
      throw platformError('service_unavailable', 'The service is stopping; retry on another instance.');
    }
    if (isOperatorPath(request.routeOptions.url) || isOperatorPath(decodedPathOf(request.url))) {
      const token = bearerToken(request.headers.authorization);
      if (!token || !constantTimeEqual(token, options.operatorToken)) {
        throw platformError(
          'operator_unauthenticated',
          'This operator route needs Authorization: Bearer <OPERATOR_TOKEN>.',
        );
      }
    }
    // Path and query text storage cannot hold (`%00`), refused before the service's own hooks read it.
    const issue = unstorableIssue(request.params, 'params') ?? unstorableIssue(request.query, 'query');
    if (issue) throw invalidRequest([issue]);
  });

  // Ajv coerces a query or path value of `1e309` to Infinity and then skips `minimum`/`maximum` (they apply to finite
  // numbers only), so coerced values are checked once more after validation.
  app.addHook('preHandler', async (request) => {
    const issue = nonFiniteIssue(request.params, 'params') ?? nonFiniteIssue(request.query, 'query');
    if (issue) throw invalidRequest([issue]);
  });

  // Path and query integers in decimal digits only: Ajv's coercion reads `0x2`, `+2`, `1e3` and ` 2` as 2, so the
  // same resource would answer to many spellings (and a cache or log would not know they are one).
  const integerFields = new Map<string, { params: string[]; query: string[] }>();
  const routeKey = (method: string, url: string) => `${method} ${url}`;
  app.addHook('preValidation', async (request) => {
    const fields = integerFields.get(routeKey(request.method, request.routeOptions.url ?? ''));
    if (!fields) return;
    const issue =
      nonCanonicalIntegerIssue(request.params, fields.params, 'params') ??
      nonCanonicalIntegerIssue(request.query, fields.query, 'query');
    if (issue) throw invalidRequest([issue]);
  });

  // Every number a request schema accepts is bounded (storable-input.ts): a route that forgets is refused at start.
  app.addHook('onRoute', (route) => {
    const schema = route.schema as Record<string, unknown> | undefined;
    if (!schema) return;
    const params = integerPropertiesOf(schema.params);
    const query = integerPropertiesOf(schema.querystring);
    if (params.length + query.length > 0)
      for (const method of [route.method].flat())
        integerFields.set(routeKey(method, route.url), { params, query });
    const problems = (['params', 'querystring', 'headers', 'body'] as const).flatMap((part) =>
      unboundedNumbersOf(schema[part], part),
    );
    if (problems.length > 0) {
      const methods = Array.isArray(route.method) ? route.method.join(',') : route.method;
      throw new Error(
        `${options.name}: route ${methods} ${route.url} accepts unbounded numbers (declare minimum and maximum): ${problems.join('; ')}`,
      );
    }
  });

  app.addHook('onResponse', async (request, reply) => logRequest(request, reply));

  app.setErrorHandler((error, request, reply) => sendError(error, request, reply));
  // A path that exists with other methods is a 405 listing them in `Allow` (RFC 9110 section 15.5.6); any other
  // unmatched request a 404.
  app.setNotFoundHandler((request, reply) => {
    const path = pathOf(request.url);
    const allowed = ROUTABLE_METHODS.filter((method) => app.findRoute({ method, url: path }) !== null);
    if (allowed.length > 0)
      return sendError(
        platformError(
          'method_not_allowed',
          `${request.method} is not allowed on ${path}; use ${allowed.join(', ')}.`,
          {
            headers: { allow: allowed.join(', ') },
          },
        ),
        request,
        reply,
      );
    return sendError(platformError('not_found', `No route ${request.method} ${path}.`), request, reply);
  });

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
    configuration: {
      title: options.title,
      // The reference works offline and calls no one: system fonts instead of Scalar's font host, no AI agent (it
      // queries Scalar's registry through Scalar's proxy), no telemetry, no developer toolbar (share and SDK
      // generation are Scalar's online services); no `proxyUrl` is set, so "Try it" calls the service itself.
      withDefaultFonts: false,
      agent: { disabled: true },
      telemetry: false,
      showDeveloperTools: 'never',
    },
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
        security: [],
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
        security: [],
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
