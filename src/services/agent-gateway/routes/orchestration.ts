/**
 * Workflows and runs: `GET, POST /api/v1/orchestration-definitions`, one definition, its draft `PATCH`, `publish`
 * with `expectedVersion`, its revisions; `GET, POST /api/v1/orchestration-runs`, one run, its `graph` and `events`,
 * signals and cancel; `POST /api/v1/approvals/{id}/decide`.
 */
import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../../platform/http.ts';
import type { IdempotencyStore } from '../../../platform/idempotency.ts';
import { StringEnum } from '../../../platform/schemas.ts';
import {
  ApprovalSchema,
  DefinitionSchema,
  GraphInput,
  IdParam,
  ListOf,
  PageQuery,
  productErrors,
  RevisionSchema,
  RUN_STATUSES,
  RunEventSchema,
  RunGraphSchema,
  RunSchema,
  RunTarget,
  ScopeFields,
  ScopeHeaders,
  Version,
} from '../agent-gateway-schemas.ts';
import type { ApprovalService } from '../approvals.ts';
import { type OrchestrationService, runView } from '../orchestration.ts';
import type { RunEngine } from '../run-engine.ts';
import { type GatewayRouteContext, SECURITY } from './context.ts';
import { IdempotencyHeader, idempotent } from './idempotency.ts';
import { listAnswer, pageOf } from './paging.ts';

const security = SECURITY.session;
const EXAMPLE_GRAPH = {
  nodes: [
    { id: 'start', type: 'start' },
    { id: 'greet', type: 'agent', agentId: 'agt_0123456789abcdef0123456789abcdef' },
    { id: 'end', type: 'end' },
  ],
  edges: [
    { from: 'start', to: 'greet' },
    { from: 'greet', to: 'end' },
  ],
};

/** Registers the workflow, run and approval routes. */
export function registerOrchestrationRoutes(
  app: ServiceApp,
  ctx: GatewayRouteContext,
  deps: {
    orchestration: OrchestrationService;
    engine: RunEngine;
    approvals: ApprovalService;
    idempotency: IdempotencyStore;
  },
): void {
  const { orchestration, engine } = deps;
  const tags = ['workflows'];

  app.get(
    '/api/v1/orchestration-definitions',
    {
      ...ctx.user('viewer'),
      schema: {
        operationId: 'listOrchestrationDefinitions',
        tags,
        summary: 'The workflows of the scope, newest first',
        security,
        headers: ScopeHeaders,
        querystring: Type.Object({ ...PageQuery, ...ScopeFields }, { additionalProperties: false }),
        response: { 200: ListOf('definitions', DefinitionSchema), ...productErrors },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      return listAnswer('definitions', page, await orchestration.list(ctx.caller(request).scope, page));
    },
  );

  app.post(
    '/api/v1/orchestration-definitions',
    {
      ...ctx.user('editor'),
      schema: {
        operationId: 'createOrchestrationDefinition',
        tags,
        summary: 'Create a workflow (a draft graph, checked; unpublished)',
        security,
        headers: ScopeHeaders,
        body: Type.Object(
          {
            ...ScopeFields,
            name: Type.String({ minLength: 1, maxLength: 200 }),
            description: Type.Optional(Type.String({ maxLength: 2000 })),
            graph: GraphInput,
          },
          { additionalProperties: false, examples: [{ name: 'Greeting', graph: EXAMPLE_GRAPH }] },
        ),
        response: { 201: Type.Object({ definition: DefinitionSchema }), ...productErrors },
      },
    },
    async (request, reply) => {
      const caller = ctx.caller(request);
      return reply
        .code(201)
        .send({ definition: await orchestration.create(caller.scope, caller.userId, request.body) });
    },
  );

  app.get(
    '/api/v1/orchestration-definitions/:id',
    {
      ...ctx.user('viewer'),
      schema: {
        operationId: 'getOrchestrationDefinition',
        tags,
        summary: 'One workflow: its draft graph, version and latest published revision',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        response: { 200: Type.Object({ definition: DefinitionSchema }), ...productErrors },
      },
    },
    async (request) => ({
      definition: await orchestration.get(ctx.caller(request).scope, request.params.id),
    }),
  );

  app.patch(
    '/api/v1/orchestration-definitions/:id',
    {
      ...ctx.user('editor'),
      schema: {
        operationId: 'updateOrchestrationDefinition',
        tags,
        summary: 'Change the draft at `expectedVersion` (409 with the current version on a mismatch)',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        body: Type.Object(
          {
            ...ScopeFields,
            expectedVersion: Version,
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            description: Type.Optional(Type.String({ maxLength: 2000 })),
            graph: Type.Optional(GraphInput),
          },
          { additionalProperties: false, examples: [{ expectedVersion: 1, name: 'Renamed' }] },
        ),
        response: { 200: Type.Object({ definition: DefinitionSchema }), ...productErrors },
      },
    },
    async (request) => ({
      definition: await orchestration.update(ctx.caller(request).scope, request.params.id, request.body),
    }),
  );

  app.post(
    '/api/v1/orchestration-definitions/:id/publish',
    {
      ...ctx.user('admin'),
      schema: {
        operationId: 'publishOrchestrationDefinition',
        tags,
        summary: 'Publish the draft at `expectedVersion` as the next immutable revision',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        body: Type.Object(
          { ...ScopeFields, expectedVersion: Version },
          { additionalProperties: false, examples: [{ expectedVersion: 1 }] },
        ),
        response: {
          200: Type.Object({ definition: DefinitionSchema, revision: RevisionSchema }),
          ...productErrors,
        },
      },
    },
    async (request) => {
      const caller = ctx.caller(request);
      return orchestration.publish(
        caller.scope,
        request.params.id,
        caller.userId,
        request.body.expectedVersion,
      );
    },
  );

  app.get(
    '/api/v1/orchestration-definitions/:id/revisions',
    {
      ...ctx.user('viewer'),
      schema: {
        operationId: 'listOrchestrationRevisions',
        tags,
        summary: 'The published revisions of a workflow, newest first',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        response: { 200: Type.Object({ revisions: Type.Array(RevisionSchema) }), ...productErrors },
      },
    },
    async (request) => ({
      revisions: await orchestration.revisions(ctx.caller(request).scope, request.params.id),
    }),
  );

  const runTags = ['runs'];
  app.get(
    '/api/v1/orchestration-runs',
    {
      ...ctx.user('viewer'),
      schema: {
        operationId: 'listOrchestrationRuns',
        tags: runTags,
        summary: 'The runs of the scope, newest first',
        security,
        headers: ScopeHeaders,
        querystring: Type.Object(
          { ...PageQuery, ...ScopeFields, status: Type.Optional(StringEnum(RUN_STATUSES)) },
          { additionalProperties: false },
        ),
        response: { 200: ListOf('runs', RunSchema), ...productErrors },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      return listAnswer(
        'runs',
        page,
        await orchestration.listRuns(ctx.caller(request).scope, page, { status: request.query.status }),
      );
    },
  );

  app.post(
    '/api/v1/orchestration-runs',
    {
      ...ctx.user('editor'),
      schema: {
        operationId: 'startOrchestrationRun',
        tags: runTags,
        summary: 'Start a run of an agent, a team or a published workflow revision',
        description:
          'The run executes in the background (Graphile Worker jobs); follow it with `graph` and `events`. An ' +
          '`Idempotency-Key` makes a retry safe: the same key and body replay the first answer.',
        security,
        headers: Type.Object({ ...ScopeHeaders.properties, ...IdempotencyHeader }),
        body: Type.Object(
          { ...ScopeFields, target: RunTarget, input: Type.Optional(Type.Unknown()) },
          {
            additionalProperties: false,
            examples: [
              {
                target: { type: 'agent', id: 'agt_0123456789abcdef0123456789abcdef' },
                input: { message: 'hi' },
              },
            ],
          },
        ),
        response: { 201: Type.Object({ run: RunSchema }), ...productErrors },
      },
    },
    async (request, reply) => {
      const caller = ctx.caller(request);
      return idempotent(deps.idempotency, request, reply, caller, async (tx) => {
        const run = await orchestration.startRun(caller.scope, caller.userId, request.body, {}, tx);
        return { status: 201, body: { run: runView(run) } };
      });
    },
  );

  app.get(
    '/api/v1/orchestration-runs/:id',
    {
      ...ctx.user('viewer'),
      schema: {
        operationId: 'getOrchestrationRun',
        tags: runTags,
        summary: 'One run: status, input, output or error',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        response: { 200: Type.Object({ run: RunSchema }), ...productErrors },
      },
    },
    async (request) => ({
      run: runView(await orchestration.runRow(ctx.caller(request).scope, request.params.id)),
    }),
  );

  app.get(
    '/api/v1/orchestration-runs/:id/graph',
    {
      ...ctx.user('viewer'),
      schema: {
        operationId: 'getOrchestrationRunGraph',
        tags: runTags,
        summary: 'The execution graph: each node with the state of its step',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        response: { 200: RunGraphSchema, ...productErrors },
      },
    },
    async (request) => orchestration.graph(ctx.caller(request).scope, request.params.id),
  );

  app.get(
    '/api/v1/orchestration-runs/:id/events',
    {
      ...ctx.user('viewer'),
      schema: {
        operationId: 'listOrchestrationRunEvents',
        tags: runTags,
        summary: 'The events of a run, oldest first, after the event id `after`',
        description:
          'Event ids increase across the service; pass the last id seen as `after` for the next page.',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        querystring: Type.Object(
          {
            ...ScopeFields,
            after: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 })),
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ events: Type.Array(RunEventSchema), nextAfter: Type.Integer() }),
          ...productErrors,
        },
      },
    },
    async (request) => {
      const after = request.query.after ?? 0;
      const events = await orchestration.events(
        ctx.caller(request).scope,
        request.params.id,
        after,
        request.query.limit ?? 100,
      );
      return { events, nextAfter: events.at(-1)?.id ?? after };
    },
  );

  app.post(
    '/api/v1/orchestration-runs/:id/signals',
    {
      ...ctx.user('editor'),
      schema: {
        operationId: 'signalOrchestrationRun',
        tags: runTags,
        summary: 'Send a signal to a run (a signal node waiting for the name continues)',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        body: Type.Object(
          {
            ...ScopeFields,
            name: Type.String({ minLength: 1, maxLength: 200 }),
            payload: Type.Optional(Type.Unknown()),
          },
          { additionalProperties: false, examples: [{ name: 'documents-ready', payload: { count: 3 } }] },
        ),
        response: {
          202: Type.Object({ signalId: Type.Integer(), consumed: Type.Boolean() }),
          ...productErrors,
        },
      },
    },
    async (request, reply) => {
      const result = await engine.signal(
        ctx.caller(request).scope,
        request.params.id,
        request.body.name,
        request.body.payload,
      );
      return reply.code(202).send(result);
    },
  );

  app.post(
    '/api/v1/orchestration-runs/:id/cancel',
    {
      ...ctx.user('editor'),
      schema: {
        operationId: 'cancelOrchestrationRun',
        tags: runTags,
        summary: 'Cancel a run and its sub-runs',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        response: { 200: Type.Object({ run: RunSchema }), ...productErrors },
      },
    },
    async (request) => {
      const caller = ctx.caller(request);
      return { run: runView(await engine.cancel(caller.scope, request.params.id, caller.userId)) };
    },
  );

  app.get(
    '/api/v1/approvals',
    {
      ...ctx.user('viewer'),
      schema: {
        operationId: 'listApprovals',
        tags: ['approvals'],
        summary: 'Approval requests of the scope, newest first (pending ones with `status=pending`)',
        security,
        headers: ScopeHeaders,
        querystring: Type.Object(
          {
            ...PageQuery,
            ...ScopeFields,
            status: Type.Optional(StringEnum(['pending', 'approved', 'rejected', 'cancelled'] as const)),
          },
          { additionalProperties: false },
        ),
        response: { 200: ListOf('approvals', ApprovalSchema), ...productErrors },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      return listAnswer(
        'approvals',
        page,
        await deps.approvals.list(ctx.caller(request).scope, page, request.query.status),
      );
    },
  );

  app.post(
    '/api/v1/approvals/:id/decide',
    {
      ...ctx.user('editor'),
      schema: {
        operationId: 'decideApproval',
        tags: ['approvals'],
        summary: 'Approve or reject a pending approval; the run follows the decision',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        body: Type.Object(
          {
            ...ScopeFields,
            decision: StringEnum(['approve', 'reject'] as const),
            comment: Type.Optional(Type.String({ maxLength: 2000 })),
          },
          { additionalProperties: false, examples: [{ decision: 'approve', comment: 'Looks good' }] },
        ),
        response: { 200: Type.Object({ approval: ApprovalSchema }), ...productErrors },
      },
    },
    async (request) => {
      const caller = ctx.caller(request);
      const decided = await engine.decide(
        caller.scope,
        request.params.id,
        caller.userId,
        request.body.decision === 'approve' ? 'approved' : 'rejected',
        request.body.comment,
      );
      return { approval: deps.approvals.view(decided) };
    },
  );
}
