/**
 * The invocation API (spec 002 section E: `/invoke/v1`): jobs, conversations and turns (each needing an
 * `Idempotency-Key`), the status view at the returned `statusUrl`, cancel, and the server-sent event streams at the
 * returned `eventsUrl`. Credentials: the endpoint's API key (`X-API-Key`) or a platform bearer token, as the
 * endpoint's `authPolicy.type` says; at most `invokePerMinute` requests a minute per credential (429 with
 * `Retry-After`).
 */
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { bearerToken, defineAuthentication, firstHeader } from '../../../platform/auth.ts';
import type { ChangeFeed } from '../../../platform/change-feed.ts';
import type { Db } from '../../../platform/database.ts';
import { ApiError } from '../../../platform/errors.ts';
import type { ServiceApp } from '../../../platform/http.ts';
import { requestFingerprint } from '../../../platform/idempotency.ts';
import { perMinuteLimit } from '../../../platform/rate-limit.ts';
import { StringEnum } from '../../../platform/schemas.ts';
import { StreamRegistry } from '../../../platform/streams.ts';
import { rateLimited, tokenRevoked } from '../agent-gateway-errors.ts';
import { ErrorBody } from '../agent-gateway-schemas.ts';
import type { EndpointKeyService, EndpointPrincipal } from '../endpoints/index.ts';
import {
  checkCursor,
  followInvocationEvents,
  type InvocationEventRow,
  type InvocationService,
  type Part2,
  type StreamTarget,
} from '../invocations/index.ts';
import type { GatewayRouteContext } from './context.ts';
import { registerEndpointRoutes } from './endpoints.ts';

const tags = ['invocations'];
const security: { [scheme: string]: string[] }[] = [{ endpointApiKey: [] }, { platformToken: [] }];
const errors = {
  400: ErrorBody,
  401: ErrorBody,
  404: ErrorBody,
  409: ErrorBody,
  413: ErrorBody,
  429: ErrorBody,
};

const IdempotencyKeyHeader = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: '^[\\x21-\\x7e]+$',
  description:
    'Required. The same key with the same body replays the first answer (also while the first is in flight); ' +
    'with another body it is 409 `idempotency_key_reused`. Use a new key for new work.',
});
const InvokeHeaders = Type.Object({
  'idempotency-key': IdempotencyKeyHeader,
  'x-api-key': Type.Optional(Type.String({ maxLength: 200 })),
});
const Ack = Type.Object({
  invocationId: Type.String(),
  status: Type.String(),
  statusUrl: Type.String({ description: 'Follow as given: relative to the origin, or absolute.' }),
  eventsUrl: Type.String({ description: 'Follow as given (keep its `invocationId` query parameter).' }),
  conversationId: Type.Optional(Type.String()),
});
const STATUSES = [
  'accepted',
  'dispatching',
  'running',
  'waiting',
  'cancel_requested',
  'completed',
  'failed',
  'cancelled',
  'timed_out',
] as const;
const StatusView = Type.Object({
  invocation: Type.Object({
    id: Type.String(),
    endpointId: Type.String(),
    releaseId: Type.String(),
    kind: StringEnum(['job', 'turn'] as const),
    conversationId: Type.Union([Type.String(), Type.Null()]),
    turn: Type.Union([Type.Integer(), Type.Null()]),
    status: StringEnum(STATUSES),
    title: Type.Union([Type.String(), Type.Null()]),
    description: Type.Union([Type.String(), Type.Null()]),
    input: Type.Unknown(),
    result: Type.Unknown({ description: "Shaped by the endpoint's output schema (null until completed)." }),
    error: Type.Unknown(),
    runId: Type.Union([Type.String(), Type.Null()]),
    history: Type.Array(
      Type.Object({ status: Type.String(), at: Type.String(), reason: Type.Optional(Type.String()) }),
    ),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    deadlineAt: Type.String({ format: 'date-time' }),
    finishedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  }),
  statusUrl: Type.String(),
  eventsUrl: Type.String(),
});
const Id = Type.String({ minLength: 1, maxLength: 100 });
const Cursor = Type.String({ pattern: '^[0-9]{1,15}$' });
const StreamHeaders = Type.Object({
  accept: Type.Optional(Type.String({ maxLength: 1000 })),
  'last-event-id': Type.Optional(Type.String({ maxLength: 100, description: 'Wins over `?after=`.' })),
});
const STREAM_DESCRIPTION =
  'Server-sent events (`Accept: text/event-stream`): each frame has `id:` (the cursor), `event: status` and ' +
  'JSON `data:` `{invocationId, status, at, error?}`; heartbeat comments keep the connection. Resume with ' +
  '`Last-Event-ID` (wins over `?after=`); a cursor whose events are no longer kept is 410 `cursor_expired`. A ' +
  'disconnect is not a failure: read `statusUrl` first. The final result is read from the status view. The stream ' +
  'closes when its credential is revoked (revoked before the stream opens: 401 `token_revoked`, no frame).';

/** The OpenAPI security schemes of the invocation routes. */
export const INVOCATION_SECURITY_SCHEMES = {
  endpointApiKey: {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description: 'An endpoint API key (`agk_...`) for endpoints whose `authPolicy.type` is `api_key`.',
  },
  platformToken: {
    type: 'http',
    scheme: 'bearer',
    description: 'A platform bearer token (`agp_...`) for endpoints whose `authPolicy.type` is `platform`.',
  },
};

/** Registers part 2: endpoint management and `/invoke/v1`, and starts the event feed when the app is ready. */
export function registerPart2Routes(app: ServiceApp, ctx: GatewayRouteContext, part2: Part2): void {
  registerEndpointRoutes(app, ctx, { endpoints: part2.endpoints, keys: part2.keys });
  registerInvocationRoutes(app, part2);
  app.addHook('onReady', () => part2.startFeed());
}

/** Registers `/invoke/v1`. */
function registerInvocationRoutes(
  app: ServiceApp,
  deps: {
    db: Db;
    keys: EndpointKeyService;
    invocations: InvocationService;
    feed: ChangeFeed<InvocationEventRow>;
    invokePerMinute: number;
    heartbeatMs: number;
  },
): void {
  const { invocations } = deps;
  const auth = defineAuthentication<EndpointPrincipal>(async (request) =>
    deps.keys.authenticate({
      apiKey: firstHeader(request.headers['x-api-key']),
      bearer: bearerToken(request.headers.authorization),
    }),
  );
  const limit = perMinuteLimit(app, {
    max: () => deps.invokePerMinute,
    bucket: (request) => `invoke:${auth.optionalPrincipal(request)?.credentialId ?? request.ip}`,
    exceeded: (retryAfter) => rateLimited('invocation requests for this credential', retryAfter),
  });
  const hooks = { onRequest: [auth.onRequest, limit] };
  const idem = (request: FastifyRequest) => ({
    key: request.headers['idempotency-key'] as string,
    fingerprint: requestFingerprint(request.method, request.url.split('?')[0]!, request.body),
  });
  const answer = (
    reply: FastifyReply,
    outcome: { replayed: boolean; response: { status: number; body: unknown } },
  ) => {
    if (outcome.replayed) reply.header('idempotency-replayed', 'true');
    return reply.code(outcome.response.status).send(outcome.response.body);
  };

  app.post(
    '/invoke/v1/endpoints/:slug/jobs',
    {
      ...hooks,
      schema: {
        operationId: 'submitJob',
        tags,
        summary: 'Submit a job (202 with statusUrl and eventsUrl)',
        description:
          "`input` is validated against the endpoint's input schema (400 naming every issue) and its payload " +
          'limit (413) before acceptance.',
        security,
        headers: InvokeHeaders,
        params: Type.Object({ slug: Type.String({ minLength: 1, maxLength: 63 }) }),
        body: Type.Object(
          {
            title: Type.String({ minLength: 1, maxLength: 500 }),
            description: Type.Optional(Type.String({ maxLength: 20_000 })),
            input: Type.Object(
              {},
              {
                additionalProperties: true,
                description: "A JSON object matching the endpoint's input schema.",
              },
            ),
          },
          { additionalProperties: false, examples: [{ title: 'Summarize', input: { text: 'Hello' } }] },
        ),
        response: { 202: Ack, ...errors },
      },
    },
    async (request, reply) =>
      answer(
        reply,
        await invocations.submitJob(
          auth.principal(request),
          request.params.slug,
          request.body,
          idem(request),
        ),
      ),
  );

  app.post(
    '/invoke/v1/endpoints/:slug/conversations',
    {
      ...hooks,
      schema: {
        operationId: 'startConversation',
        tags,
        summary: 'Start a conversation with its first message (202 with conversationId)',
        security,
        headers: InvokeHeaders,
        params: Type.Object({ slug: Type.String({ minLength: 1, maxLength: 63 }) }),
        body: Type.Object(
          { message: Type.String({ minLength: 1, maxLength: 1_048_576 }) },
          { additionalProperties: false, examples: [{ message: 'Hello' }] },
        ),
        response: { 202: Ack, ...errors },
      },
    },
    async (request, reply) =>
      answer(
        reply,
        await invocations.startConversation(
          auth.principal(request),
          request.params.slug,
          request.body.message,
          idem(request),
        ),
      ),
  );

  app.post(
    '/invoke/v1/conversations/:conversationId/turns',
    {
      ...hooks,
      schema: {
        operationId: 'sendConversationTurn',
        tags,
        summary: 'A later turn of a conversation (a new Idempotency-Key)',
        security,
        headers: InvokeHeaders,
        params: Type.Object({ conversationId: Id }),
        body: Type.Object(
          { message: Type.String({ minLength: 1, maxLength: 1_048_576 }) },
          { additionalProperties: false, examples: [{ message: 'And then?' }] },
        ),
        response: { 202: Ack, ...errors },
      },
    },
    async (request, reply) =>
      answer(
        reply,
        await invocations.sendTurn(
          auth.principal(request),
          request.params.conversationId,
          request.body.message,
          idem(request),
        ),
      ),
  );

  app.get(
    '/invoke/v1/invocations/:invocationId',
    {
      ...hooks,
      schema: {
        operationId: 'getInvocation',
        tags,
        summary: 'The status view (statusUrl): state, every move, and the result',
        security,
        params: Type.Object({ invocationId: Id }),
        response: { 200: StatusView, ...errors },
      },
    },
    async (request) =>
      invocations.view(await invocations.rowFor(auth.principal(request), request.params.invocationId)),
  );

  app.post(
    '/invoke/v1/invocations/:invocationId/cancel',
    {
      ...hooks,
      schema: {
        operationId: 'cancelInvocation',
        tags,
        summary: 'Cancel an invocation (cancel_requested until its run stops, then cancelled)',
        security,
        params: Type.Object({ invocationId: Id }),
        response: { 202: StatusView, ...errors },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await invocations.cancel(auth.principal(request), request.params.invocationId)),
  );

  app.post(
    '/_ops/invocations/tick',
    {
      schema: {
        tags: ['operator'],
        security: [{ operatorToken: [] }],
        operationId: 'opsInvocationTick',
        summary: 'Run the invocation sweep now: timeouts by the clock, event retention',
        response: { 200: Type.Record(Type.String(), Type.Integer()), 401: ErrorBody },
      },
    },
    async () => invocations.sweep(),
  );

  const streams = new StreamRegistry(app);
  const stream = async (request: FastifyRequest, reply: FastifyReply, target: StreamTarget) => {
    const accept = request.headers.accept ?? '';
    if (!/text\/event-stream|\*\/\*/.test(accept))
      throw new ApiError(
        406,
        'not_acceptable',
        'The event stream is served as text/event-stream (send that Accept).',
      );
    const header = request.headers['last-event-id'];
    const after = (request.query as { after?: string }).after;
    const raw = typeof header === 'string' && header !== '' ? header : after;
    if (raw !== undefined && !/^[0-9]{1,15}$/.test(raw))
      throw new ApiError(400, 'validation_failed', 'Last-Event-ID and after must be event ids (digits).');
    const cursor = raw === undefined ? 0 : Number(raw);
    await checkCursor(deps.db, target, cursor);
    const { credentialId } = auth.principal(request);
    // A credential revoked after the request's authentication gets no frame: its revocation is watched first, then
    // read; revoked by then, the answer is the 401 of every route; revoked later, the watch closes the stream (the
    // stream's own watch takes over in the same tick as the stream opens, before any replay).
    let revokedMeanwhile = false;
    const unwatch = deps.keys.watch(credentialId, () => {
      revokedMeanwhile = true;
    });
    let sse: ReturnType<typeof streams.sse>;
    try {
      if (await deps.keys.isRevoked(credentialId)) throw tokenRevoked();
      sse = streams.sse(request, reply, {
        heartbeatMs: deps.heartbeatMs,
        retryMs: 2000,
        // A key or token revoked on any instance closes the streams it opened.
        watchCredential: (onRevoked) => deps.keys.watch(credentialId, onRevoked),
      });
    } finally {
      unwatch();
    }
    if (revokedMeanwhile) {
      sse.close('revoked');
      return reply;
    }
    const stop = await followInvocationEvents(
      deps.db,
      deps.feed,
      target,
      cursor,
      (frame) => sse.send(frame),
      () => sse.close('server'),
    ).catch((err: unknown) => {
      sse.close('server');
      throw err;
    });
    void sse.done.then(stop);
    return reply;
  };

  const streamResponses = {
    200: Type.String({ description: 'text/event-stream' }),
    ...errors,
    406: ErrorBody,
    410: ErrorBody,
  };
  app.get(
    '/invoke/v1/invocations/:invocationId/events',
    {
      ...hooks,
      schema: {
        operationId: 'streamInvocationEvents',
        tags,
        summary: 'The event stream of a job (eventsUrl); ends after the terminal state',
        description: STREAM_DESCRIPTION,
        security,
        headers: StreamHeaders,
        params: Type.Object({ invocationId: Id }),
        querystring: Type.Object({ after: Type.Optional(Cursor) }, { additionalProperties: false }),
        response: streamResponses,
      },
    },
    async (request, reply) => {
      const row = await invocations.rowFor(auth.principal(request), request.params.invocationId);
      return stream(request, reply, { invocationId: row.id });
    },
  );

  app.get(
    '/invoke/v1/conversations/:conversationId/events',
    {
      ...hooks,
      schema: {
        operationId: 'streamConversationEvents',
        tags,
        summary: 'The event stream of a conversation, or of one turn with `invocationId` (eventsUrl)',
        description: `${STREAM_DESCRIPTION} With \`invocationId\` the stream follows that turn and ends after it.`,
        security,
        headers: StreamHeaders,
        params: Type.Object({ conversationId: Id }),
        querystring: Type.Object(
          { after: Type.Optional(Cursor), invocationId: Type.Optional(Id) },
          { additionalProperties: false },
        ),
        response: streamResponses,
      },
    },
    async (request, reply) => {
      const principal = auth.principal(request);
      const { conversation } = await invocations.conversationFor(principal, request.params.conversationId);
      const turnId = request.query.invocationId;
      if (turnId) {
        const row = await invocations.rowFor(principal, turnId);
        if (row.conversationId !== conversation.id)
          throw new ApiError(404, 'not_found', `No invocation '${turnId}' in this conversation.`);
        return stream(request, reply, { invocationId: row.id, conversationId: conversation.id });
      }
      return stream(request, reply, { conversationId: conversation.id });
    },
  );
}
