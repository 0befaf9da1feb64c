/** Agents: `GET, POST /api/v1/agents`, `GET /api/v1/agents/{id}`, versions, `PATCH .../definition`, chat agents. */
import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../../platform/http.ts';
import {
  AgentSchema,
  DefinitionInput,
  IdParam,
  ListOf,
  PageQuery,
  productErrors,
  ScopeFields,
  ScopeHeaders,
  Version,
} from '../agent-gateway-schemas.ts';
import type { AgentService } from '../agents.ts';
import { type GatewayRouteContext, SECURITY } from './context.ts';
import { listAnswer, pageOf } from './paging.ts';

const tags = ['agents'];
const security = SECURITY.session;
const ListQuery = Type.Object({ ...PageQuery, ...ScopeFields }, { additionalProperties: false });

/** Registers the agent routes. */
export function registerAgentRoutes(app: ServiceApp, ctx: GatewayRouteContext, agents: AgentService): void {
  app.get(
    '/api/v1/agents',
    {
      ...ctx.user('viewer'),
      schema: {
        operationId: 'listAgents',
        tags,
        summary: 'The agent catalog of the scope, newest first',
        security,
        headers: ScopeHeaders,
        querystring: ListQuery,
        response: { 200: ListOf('agents', AgentSchema), ...productErrors },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      return listAnswer('agents', page, await agents.list(ctx.caller(request).scope, page));
    },
  );

  app.get(
    '/api/v1/chat-agents',
    {
      ...ctx.user('viewer'),
      schema: {
        operationId: 'listChatAgents',
        tags,
        summary: 'Conversation-capable agents of the scope (those a chat can use)',
        security,
        headers: ScopeHeaders,
        querystring: ListQuery,
        response: { 200: ListOf('agents', AgentSchema), ...productErrors },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      return listAnswer(
        'agents',
        page,
        await agents.list(ctx.caller(request).scope, page, { conversational: true }),
      );
    },
  );

  app.post(
    '/api/v1/agents',
    {
      ...ctx.user('editor'),
      schema: {
        operationId: 'createAgent',
        tags,
        summary: 'Create an agent (version 1)',
        security,
        headers: ScopeHeaders,
        body: Type.Object(
          {
            ...ScopeFields,
            name: Type.String({ minLength: 1, maxLength: 200 }),
            description: Type.Optional(Type.String({ maxLength: 2000 })),
            conversational: Type.Optional(Type.Boolean()),
            definition: DefinitionInput,
          },
          {
            additionalProperties: false,
            examples: [
              {
                name: 'Greeter',
                description: 'Says hello',
                definition: { kind: 'template', template: 'Hello, {{ message }}!' },
              },
            ],
          },
        ),
        response: { 201: Type.Object({ agent: AgentSchema }), ...productErrors },
      },
    },
    async (request, reply) => {
      const caller = ctx.caller(request);
      const agent = await agents.create(caller.scope, caller.userId, request.body);
      return reply.code(201).send({ agent });
    },
  );

  app.get(
    '/api/v1/agents/:id',
    {
      ...ctx.user('viewer'),
      schema: {
        operationId: 'getAgent',
        tags,
        summary: 'One agent with its current definition and version',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        response: { 200: Type.Object({ agent: AgentSchema }), ...productErrors },
      },
    },
    async (request) => ({ agent: await agents.get(ctx.caller(request).scope, request.params.id) }),
  );

  app.get(
    '/api/v1/agents/:id/versions',
    {
      ...ctx.user('viewer'),
      schema: {
        operationId: 'listAgentVersions',
        tags,
        summary: 'Every version of an agent definition, newest first',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        response: {
          200: Type.Object({
            versions: Type.Array(
              Type.Object({
                version: Type.Integer(),
                kind: Type.String(),
                conversational: Type.Boolean(),
                definition: Type.Object({}, { additionalProperties: true }),
                createdBy: Type.Union([Type.String(), Type.Null()]),
                createdAt: Type.String({ format: 'date-time' }),
              }),
            ),
          }),
          ...productErrors,
        },
      },
    },
    async (request) => ({ versions: await agents.versions(ctx.caller(request).scope, request.params.id) }),
  );

  app.patch(
    '/api/v1/agents/:id/definition',
    {
      ...ctx.user('editor'),
      schema: {
        operationId: 'updateAgentDefinition',
        tags,
        summary: 'Replace the definition (a new version; 409 with the current version on a mismatch)',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        body: Type.Object(
          {
            ...ScopeFields,
            expectedVersion: Version,
            definition: DefinitionInput,
            conversational: Type.Optional(Type.Boolean()),
          },
          {
            additionalProperties: false,
            examples: [
              { expectedVersion: 1, definition: { kind: 'template', template: 'Hi {{ message }}' } },
            ],
          },
        ),
        response: { 200: Type.Object({ agent: AgentSchema }), ...productErrors },
      },
    },
    async (request) => {
      const caller = ctx.caller(request);
      return {
        agent: await agents.updateDefinition(caller.scope, request.params.id, caller.userId, request.body),
      };
    },
  );
}
