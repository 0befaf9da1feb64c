/** Chats: `GET, POST /api/v1/chats`, one chat, `PATCH` with `version`, turns (spec E gateway table). */
import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../../platform/http.ts';
import type { IdempotencyStore } from '../../../platform/idempotency.ts';
import {
  ChatSchema,
  IdParam,
  ListOf,
  PageQuery,
  productErrors,
  ScopeFields,
  ScopeHeaders,
  TurnSchema,
  Version,
} from '../agent-gateway-schemas.ts';
import type { ChatService } from '../chats.ts';
import { type GatewayRouteContext, SECURITY } from './context.ts';
import { IdempotencyHeader, idempotent } from './idempotency.ts';
import { listAnswer, pageOf } from './paging.ts';

const tags = ['chats'];
const security = SECURITY.session;

/** Registers the chat routes. */
export function registerChatRoutes(
  app: ServiceApp,
  ctx: GatewayRouteContext,
  chats: ChatService,
  idempotency: IdempotencyStore,
): void {
  app.get(
    '/api/v1/chats',
    {
      ...ctx.user('viewer'),
      schema: {
        operationId: 'listChats',
        tags,
        summary: "The caller's chats in the scope, most recently active first",
        security,
        headers: ScopeHeaders,
        querystring: Type.Object(
          { ...PageQuery, ...ScopeFields, includeArchived: Type.Optional(Type.Boolean()) },
          { additionalProperties: false },
        ),
        response: { 200: ListOf('chats', ChatSchema), ...productErrors },
      },
    },
    async (request) => {
      const caller = ctx.caller(request);
      const page = pageOf(request.query);
      return listAnswer(
        'chats',
        page,
        await chats.list(caller.scope, caller.userId, page, {
          includeArchived: request.query.includeArchived,
        }),
      );
    },
  );

  app.post(
    '/api/v1/chats',
    {
      ...ctx.user('editor'),
      schema: {
        operationId: 'createChat',
        tags,
        summary: 'Create a chat with a conversation-capable agent',
        description: 'Body `{tenant, namespace, agentId, title}` (spec E); the answer holds `chat.id`.',
        security,
        headers: ScopeHeaders,
        body: Type.Object(
          {
            ...ScopeFields,
            agentId: Type.String({ minLength: 1, maxLength: 100 }),
            title: Type.String({ minLength: 1, maxLength: 200 }),
          },
          {
            additionalProperties: false,
            examples: [{ agentId: 'agt_0123456789abcdef0123456789abcdef', title: 'Support' }],
          },
        ),
        response: { 201: Type.Object({ chat: ChatSchema }), ...productErrors },
      },
    },
    async (request, reply) => {
      const caller = ctx.caller(request);
      return reply.code(201).send({ chat: await chats.create(caller.scope, caller.userId, request.body) });
    },
  );

  app.get(
    '/api/v1/chats/:id',
    {
      ...ctx.user('viewer'),
      schema: {
        operationId: 'getChat',
        tags,
        summary: 'One of the caller’s chats',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        response: { 200: Type.Object({ chat: ChatSchema }), ...productErrors },
      },
    },
    async (request) => {
      const caller = ctx.caller(request);
      return { chat: await chats.get(caller.scope, caller.userId, request.params.id) };
    },
  );

  app.patch(
    '/api/v1/chats/:id',
    {
      ...ctx.user('editor'),
      schema: {
        operationId: 'updateChat',
        tags,
        summary: 'Rename or archive a chat at `version` (409 with the current version on a mismatch)',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        body: Type.Object(
          {
            ...ScopeFields,
            version: Version,
            title: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            archived: Type.Optional(Type.Boolean()),
          },
          { additionalProperties: false, examples: [{ version: 1, title: 'Renamed' }] },
        ),
        response: { 200: Type.Object({ chat: ChatSchema }), ...productErrors },
      },
    },
    async (request) => {
      const caller = ctx.caller(request);
      return { chat: await chats.patch(caller.scope, caller.userId, request.params.id, request.body) };
    },
  );

  app.get(
    '/api/v1/chats/:id/turns',
    {
      ...ctx.user('viewer'),
      schema: {
        operationId: 'listChatTurns',
        tags,
        summary: 'The turns of a chat, oldest first',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        querystring: Type.Object({ ...PageQuery, ...ScopeFields }, { additionalProperties: false }),
        response: { 200: ListOf('turns', TurnSchema), ...productErrors },
      },
    },
    async (request) => {
      const caller = ctx.caller(request);
      const page = pageOf(request.query);
      return listAnswer(
        'turns',
        page,
        await chats.turns(caller.scope, caller.userId, request.params.id, page),
      );
    },
  );

  app.post(
    '/api/v1/chats/:id/turns',
    {
      ...ctx.user('editor'),
      schema: {
        operationId: 'sendChatTurn',
        tags,
        summary: 'Send a turn: the agent runs and the turn is recorded',
        description:
          'Body `{message}` (spec E). In-process agents answer in this response (`status` `completed`, or `failed` ' +
          'with the agent’s error); a remote agent’s turn is `pending` (202) until a runtime host reports it. ' +
          'An `Idempotency-Key` makes a retry safe: the same key and body replay the first answer.',
        security,
        headers: Type.Object({ ...ScopeHeaders.properties, ...IdempotencyHeader }),
        params: IdParam,
        body: Type.Object(
          { ...ScopeFields, message: Type.String({ minLength: 1, maxLength: 32_000 }) },
          { additionalProperties: false, examples: [{ message: 'Hello there' }] },
        ),
        response: {
          201: Type.Object({
            turn: TurnSchema,
            chat: Type.Object({ id: Type.String(), version: Type.Integer(), turnCount: Type.Integer() }),
          }),
          202: Type.Object({
            turn: TurnSchema,
            chat: Type.Object({ id: Type.String(), version: Type.Integer(), turnCount: Type.Integer() }),
          }),
          ...productErrors,
        },
      },
    },
    async (request, reply) => {
      const caller = ctx.caller(request);
      return idempotent(idempotency, request, reply, caller, async (tx) => {
        const result = await chats.sendTurn(
          caller.scope,
          caller.userId,
          request.params.id,
          request.body.message,
          tx,
        );
        return { status: result.turn.status === 'pending' ? 202 : 201, body: result };
      });
    },
  );
}
