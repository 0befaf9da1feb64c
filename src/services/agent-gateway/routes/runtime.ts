/**
 * The runtime host protocol and the internal component API (spec E identities): host registration and heartbeat
 * (host credential), claiming executions (environment key, `X-Builder-Environment-Key`), the runtime session event
 * protocol `/api/sessions/{sessionId}` (attempt token), and `POST /api/internal/v1/events` (internal service token).
 */
import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../../platform/http.ts';
import { StringEnum } from '../../../platform/schemas.ts';
import { ErrorBody, ScopeId } from '../agent-gateway-schemas.ts';
import { EVENT_TYPE_PATTERN } from '../automations.ts';
import { type HostProtocol, SESSION_EVENT_TYPES } from '../host-protocol.ts';
import { noStore } from './auth.ts';
import { type GatewayRouteContext, SECURITY } from './context.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody, 409: ErrorBody, 429: ErrorBody };
const HostSchema = Type.Object({
  id: Type.String(),
  environmentId: Type.String(),
  name: Type.String(),
  capabilities: Type.Array(Type.String()),
  registeredAt: Type.String({ format: 'date-time' }),
  lastHeartbeatAt: Type.String({ format: 'date-time' }),
  leaseExpiresAt: Type.String({ format: 'date-time' }),
  heartbeatIntervalSeconds: Type.Integer(),
});
const SessionParams = Type.Object({ sessionId: Type.String({ minLength: 1, maxLength: 100 }) });
const FinishAnswer = Type.Object({
  execution: Type.Object({ id: Type.String(), status: Type.String(), attempt: Type.Integer() }),
});

/** Registers the host, session and internal routes. */
export function registerRuntimeRoutes(
  app: ServiceApp,
  ctx: GatewayRouteContext,
  deps: {
    hosts: HostProtocol;
    fireEvent: (
      scope: { tenant: string; namespace: string },
      type: string,
      data: unknown,
    ) => Promise<{ automationId: string; runId: string }[]>;
  },
): void {
  const { hosts } = deps;
  const tags = ['runtime hosts'];

  app.post(
    '/api/runtime/hosts',
    {
      onRequest: ctx.auth.host.onRequest,
      schema: {
        operationId: 'registerRuntimeHost',
        tags,
        summary: 'Register the host of this host credential (its lease starts)',
        security: SECURITY.host,
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 200 }),
            capabilities: Type.Optional(
              Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50 }),
            ),
          },
          { additionalProperties: false, examples: [{ name: 'gpu-host-1', capabilities: ['remote'] }] },
        ),
        response: { 200: Type.Object({ host: HostSchema }), ...errors },
      },
    },
    async (request) => ({ host: await hosts.register(ctx.auth.host.principal(request), request.body) }),
  );

  app.post(
    '/api/runtime/hosts/heartbeat',
    {
      onRequest: ctx.auth.host.onRequest,
      schema: {
        operationId: 'heartbeatRuntimeHost',
        tags,
        summary: 'Extend the host’s lease; lists the executions it still holds',
        security: SECURITY.host,
        response: { 200: Type.Object({ host: HostSchema, claims: Type.Array(Type.String()) }), ...errors },
      },
    },
    async (request) => hosts.heartbeat(ctx.auth.host.principal(request)),
  );

  app.post(
    '/api/runtime/executions/claim',
    {
      onRequest: ctx.auth.environment.onRequest,
      schema: {
        operationId: 'claimExecutions',
        tags,
        summary:
          'Claim executions of the environment for a live host (each a new attempt with its own token)',
        description:
          'Takes queued executions, and those held by hosts whose lease ran out. Each answer item carries its ' +
          '`attemptToken` (shown once, `Cache-Control: no-store`) for the session routes.',
        security: SECURITY.environment,
        body: Type.Object(
          {
            hostId: Type.String({ minLength: 1, maxLength: 100 }),
            max: Type.Optional(Type.Integer({ minimum: 1, maximum: 20 })),
          },
          {
            additionalProperties: false,
            examples: [{ hostId: 'hst_0123456789abcdef0123456789abcdef', max: 1 }],
          },
        ),
        response: {
          200: Type.Object({
            executions: Type.Array(
              Type.Object({
                id: Type.String(),
                sessionId: Type.String(),
                attempt: Type.Integer(),
                attemptToken: Type.String(),
                sessionUrl: Type.String(),
                agent: Type.Object({
                  id: Type.String(),
                  version: Type.Integer(),
                  instructions: Type.Unknown(),
                }),
                input: Type.Unknown(),
                source: Type.Object({ type: Type.String(), id: Type.Union([Type.String(), Type.Null()]) }),
              }),
            ),
          }),
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const claimed = await hosts.claim(ctx.auth.environment.principal(request), {
        hostId: request.body.hostId,
        max: request.body.max ?? 1,
      });
      noStore(reply); // attempt tokens, shown once
      return claimed;
    },
  );

  const sessionTags = ['runtime sessions'];
  app.get(
    '/api/sessions/:sessionId',
    {
      onRequest: ctx.auth.attempt.onRequest,
      schema: {
        operationId: 'getRuntimeSession',
        tags: sessionTags,
        summary: 'The state of this attempt’s session',
        security: SECURITY.attempt,
        params: SessionParams,
        response: {
          200: Type.Object({
            session: Type.Object({
              id: Type.String(),
              executionId: Type.String(),
              attempt: Type.Integer(),
              current: Type.Boolean(),
              status: Type.String(),
              input: Type.Unknown(),
            }),
          }),
          ...errors,
        },
      },
    },
    async (request) => hosts.session(ctx.auth.attempt.principal(request), request.params.sessionId),
  );

  app.post(
    '/api/sessions/:sessionId/events',
    {
      onRequest: ctx.auth.attempt.onRequest,
      schema: {
        operationId: 'reportRuntimeSessionEvents',
        tags: sessionTags,
        summary: 'Report session events (recorded as `session.<type>` run events)',
        description:
          'The runtime event protocol: `{events: [{type, data}]}`, never the chat API’s `{message}`.',
        security: SECURITY.attempt,
        params: SessionParams,
        body: Type.Object(
          {
            events: Type.Array(
              Type.Object(
                { type: StringEnum(SESSION_EVENT_TYPES), data: Type.Optional(Type.Unknown()) },
                { additionalProperties: false },
              ),
              { minItems: 1, maxItems: 50 },
            ),
          },
          {
            additionalProperties: false,
            examples: [{ events: [{ type: 'progress', data: { percent: 50 } }] }],
          },
        ),
        response: { 202: Type.Object({ accepted: Type.Integer() }), ...errors },
      },
    },
    async (request, reply) =>
      reply
        .code(202)
        .send(
          await hosts.report(
            ctx.auth.attempt.principal(request),
            request.params.sessionId,
            request.body.events,
          ),
        ),
  );

  app.post(
    '/api/sessions/:sessionId/complete',
    {
      onRequest: ctx.auth.attempt.onRequest,
      schema: {
        operationId: 'completeRuntimeSession',
        tags: sessionTags,
        summary: 'Complete the execution with its output (the run step or chat turn continues)',
        security: SECURITY.attempt,
        params: SessionParams,
        body: Type.Object(
          { output: Type.Unknown() },
          { additionalProperties: false, examples: [{ output: { text: 'done' } }] },
        ),
        response: { 200: FinishAnswer, ...errors },
      },
    },
    async (request) =>
      hosts.finish(ctx.auth.attempt.principal(request), request.params.sessionId, {
        output: request.body.output,
      }),
  );

  app.post(
    '/api/sessions/:sessionId/fail',
    {
      onRequest: ctx.auth.attempt.onRequest,
      schema: {
        operationId: 'failRuntimeSession',
        tags: sessionTags,
        summary: 'Fail the execution (the run fails, or the chat turn records the error)',
        security: SECURITY.attempt,
        params: SessionParams,
        body: Type.Object(
          {
            error: Type.Object(
              {
                code: Type.String({ minLength: 1, maxLength: 100 }),
                message: Type.String({ maxLength: 2000 }),
              },
              { additionalProperties: false },
            ),
          },
          {
            additionalProperties: false,
            examples: [{ error: { code: 'tool_crashed', message: 'The tool exited.' } }],
          },
        ),
        response: { 200: FinishAnswer, ...errors },
      },
    },
    async (request) =>
      hosts.finish(ctx.auth.attempt.principal(request), request.params.sessionId, {
        error: request.body.error,
      }),
  );

  app.post(
    '/api/internal/v1/events',
    {
      onRequest: ctx.auth.internal.onRequest,
      schema: {
        operationId: 'postInternalEvent',
        tags: ['internal'],
        summary:
          'A trusted component raises an event: the scope’s automations listening for it start their runs',
        security: SECURITY.internal,
        body: Type.Object(
          {
            tenant: ScopeId,
            namespace: ScopeId,
            type: Type.String({ pattern: EVENT_TYPE_PATTERN, maxLength: 120 }),
            data: Type.Optional(Type.Unknown()),
          },
          {
            additionalProperties: false,
            examples: [
              { tenant: 'demo', namespace: 'default', type: 'custom.deploy', data: { version: '2.3' } },
            ],
          },
        ),
        response: {
          202: Type.Object({
            fired: Type.Array(Type.Object({ automationId: Type.String(), runId: Type.String() })),
          }),
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const { tenant, namespace, type, data } = request.body;
      return reply.code(202).send({ fired: await deps.fireEvent({ tenant, namespace }, type, data) });
    },
  );
}
