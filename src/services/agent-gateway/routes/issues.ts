/**
 * Issues and the inbox: `GET, POST /api/v1/issues`, one issue (`issue.version`), `PATCH`, summary, comments,
 * `accept` / `reject` with `expectedVersion`, `GET /api/v1/inbox`.
 */
import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../../platform/http.ts';
import { StringEnum } from '../../../platform/schemas.ts';
import {
  AssigneeSchema,
  CommentSchema,
  IdParam,
  IssueSchema,
  ListOf,
  PageQuery,
  productErrors,
  ScopeFields,
  ScopeHeaders,
  Version,
} from '../agent-gateway-schemas.ts';
import { ISSUE_STATUSES, type IssueService } from '../issues.ts';
import { type GatewayRouteContext, SECURITY } from './context.ts';
import { listAnswer, pageOf } from './paging.ts';

const tags = ['issues'];
const security = SECURITY.session;
const IssueAnswer = Type.Object({ issue: IssueSchema });

/** Registers the issue and inbox routes. */
export function registerIssueRoutes(app: ServiceApp, ctx: GatewayRouteContext, issues: IssueService): void {
  app.get(
    '/api/v1/issues',
    {
      ...ctx.user('viewer'),
      schema: {
        operationId: 'listIssues',
        tags,
        summary: 'The issues of the scope, newest first',
        security,
        headers: ScopeHeaders,
        querystring: Type.Object(
          { ...PageQuery, ...ScopeFields, status: Type.Optional(StringEnum(ISSUE_STATUSES)) },
          { additionalProperties: false },
        ),
        response: { 200: ListOf('issues', IssueSchema), ...productErrors },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      return listAnswer(
        'issues',
        page,
        await issues.list(ctx.caller(request).scope, page, request.query.status),
      );
    },
  );

  app.post(
    '/api/v1/issues',
    {
      ...ctx.user('editor'),
      schema: {
        operationId: 'createIssue',
        tags,
        summary: 'Create an issue (an assignee starts working it at once)',
        security,
        headers: ScopeHeaders,
        body: Type.Object(
          {
            ...ScopeFields,
            title: Type.String({ minLength: 1, maxLength: 300 }),
            description: Type.Optional(Type.String({ maxLength: 20_000 })),
            assignee: Type.Optional(AssigneeSchema),
          },
          {
            additionalProperties: false,
            examples: [{ title: 'Summarise the release notes', description: 'For 2.3' }],
          },
        ),
        response: { 201: IssueAnswer, ...productErrors },
      },
    },
    async (request, reply) => {
      const caller = ctx.caller(request);
      return reply.code(201).send({ issue: await issues.create(caller.scope, caller.userId, request.body) });
    },
  );

  app.get(
    '/api/v1/issues/:id',
    {
      ...ctx.user('viewer'),
      schema: {
        operationId: 'getIssue',
        tags,
        summary: 'One issue, with `issue.version`',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        response: { 200: IssueAnswer, ...productErrors },
      },
    },
    async (request) => ({ issue: await issues.get(ctx.caller(request).scope, request.params.id) }),
  );

  app.patch(
    '/api/v1/issues/:id',
    {
      ...ctx.user('editor'),
      schema: {
        operationId: 'updateIssue',
        tags,
        summary: 'Edit or (re)assign an issue at `expectedVersion`',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        body: Type.Object(
          {
            ...ScopeFields,
            expectedVersion: Version,
            title: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
            description: Type.Optional(Type.String({ maxLength: 20_000 })),
            assignee: Type.Optional(AssigneeSchema),
          },
          { additionalProperties: false, examples: [{ expectedVersion: 1, title: 'A better title' }] },
        ),
        response: { 200: IssueAnswer, ...productErrors },
      },
    },
    async (request) => {
      const caller = ctx.caller(request);
      return { issue: await issues.update(caller.scope, request.params.id, caller.userId, request.body) };
    },
  );

  app.get(
    '/api/v1/issues/:id/summary',
    {
      ...ctx.user('viewer'),
      schema: {
        operationId: 'getIssueSummary',
        tags,
        summary: 'The summary of an issue: state, runs, decisions, result',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        response: {
          200: Type.Object({
            summary: Type.Object({
              issueId: Type.String(),
              title: Type.String(),
              status: Type.String(),
              version: Type.Integer(),
              assignee: Type.Union([Type.Object({ type: Type.String(), id: Type.String() }), Type.Null()]),
              commentCount: Type.Integer(),
              runCount: Type.Integer(),
              latestRun: Type.Union([Type.Object({ id: Type.String(), status: Type.String() }), Type.Null()]),
              decisions: Type.Array(
                Type.Object({
                  decision: Type.String(),
                  by: Type.Union([Type.String(), Type.Null()]),
                  reason: Type.Union([Type.String(), Type.Null()]),
                  at: Type.String({ format: 'date-time' }),
                }),
              ),
              result: Type.Unknown(),
              text: Type.String(),
            }),
          }),
          ...productErrors,
        },
      },
    },
    async (request) => ({ summary: await issues.summary(ctx.caller(request).scope, request.params.id) }),
  );

  app.get(
    '/api/v1/issues/:id/comments',
    {
      ...ctx.user('viewer'),
      schema: {
        operationId: 'listIssueComments',
        tags,
        summary: 'The comments of an issue (decisions and system notes included), oldest first',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        querystring: Type.Object({ ...PageQuery, ...ScopeFields }, { additionalProperties: false }),
        response: { 200: ListOf('comments', CommentSchema), ...productErrors },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      return listAnswer(
        'comments',
        page,
        await issues.comments(ctx.caller(request).scope, request.params.id, page),
      );
    },
  );

  app.post(
    '/api/v1/issues/:id/comments',
    {
      ...ctx.user('editor'),
      schema: {
        operationId: 'addIssueComment',
        tags,
        summary: 'Comment on an issue',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        body: Type.Object(
          { ...ScopeFields, body: Type.String({ minLength: 1, maxLength: 20_000 }) },
          { additionalProperties: false, examples: [{ body: 'Please keep it short.' }] },
        ),
        response: { 201: Type.Object({ comment: CommentSchema }), ...productErrors },
      },
    },
    async (request, reply) => {
      const caller = ctx.caller(request);
      return reply.code(201).send({
        comment: await issues.addComment(caller.scope, request.params.id, caller.userId, request.body.body),
      });
    },
  );

  app.post(
    '/api/v1/issues/:id/accept',
    {
      ...ctx.user('editor'),
      schema: {
        operationId: 'acceptIssue',
        tags,
        summary:
          'Accept the result of an issue in review (`expectedVersion`: 409 with the current version otherwise)',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        body: Type.Object(
          { ...ScopeFields, expectedVersion: Version },
          { additionalProperties: false, examples: [{ expectedVersion: 3 }] },
        ),
        response: { 200: IssueAnswer, ...productErrors },
      },
    },
    async (request) => {
      const caller = ctx.caller(request);
      return {
        issue: await issues.accept(
          caller.scope,
          request.params.id,
          caller.userId,
          request.body.expectedVersion,
        ),
      };
    },
  );

  app.post(
    '/api/v1/issues/:id/reject',
    {
      ...ctx.user('editor'),
      schema: {
        operationId: 'rejectIssue',
        tags,
        summary: 'Reject the result of an issue in review with a reason: back to in progress',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        body: Type.Object(
          {
            ...ScopeFields,
            expectedVersion: Version,
            reason: Type.String({ minLength: 1, maxLength: 20_000 }),
          },
          {
            additionalProperties: false,
            examples: [{ expectedVersion: 3, reason: 'Too long; one paragraph please.' }],
          },
        ),
        response: { 200: IssueAnswer, ...productErrors },
      },
    },
    async (request) => {
      const caller = ctx.caller(request);
      return {
        issue: await issues.reject(
          caller.scope,
          request.params.id,
          caller.userId,
          request.body.expectedVersion,
          request.body.reason,
        ),
      };
    },
  );

  app.get(
    '/api/v1/inbox',
    {
      ...ctx.user('viewer'),
      schema: {
        operationId: 'getInbox',
        tags: ['inbox'],
        summary: 'What waits for the caller: their issues in review and (editors) pending approvals',
        security,
        headers: ScopeHeaders,
        querystring: Type.Object({ ...PageQuery, ...ScopeFields }, { additionalProperties: false }),
        response: {
          200: Type.Object({
            items: Type.Array(
              Type.Object({
                kind: StringEnum(['issue_review', 'approval'] as const),
                id: Type.String(),
                title: Type.String(),
                runId: Type.Union([Type.String(), Type.Null()]),
                createdAt: Type.String({ format: 'date-time' }),
                href: Type.String(),
              }),
            ),
            hasMore: Type.Boolean(),
          }),
          ...productErrors,
        },
      },
    },
    async (request) => {
      const caller = ctx.caller(request);
      return issues.inbox(caller.scope, caller.userId, caller.role, pageOf(request.query));
    },
  );
}
