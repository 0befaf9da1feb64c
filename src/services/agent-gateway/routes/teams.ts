/** Teams: `GET, POST /api/v1/teams`, one team, `PATCH` with `expectedVersion`. */
import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../../platform/http.ts';
import {
  IdParam,
  ListOf,
  PageQuery,
  productErrors,
  ScopeFields,
  ScopeHeaders,
  TeamSchema,
  Version,
} from '../agent-gateway-schemas.ts';
import type { TeamService } from '../teams.ts';
import { type GatewayRouteContext, SECURITY } from './context.ts';
import { listAnswer, pageOf } from './paging.ts';

const tags = ['teams'];
const security = SECURITY.session;
const Members = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 20 });

/** Registers the team routes. */
export function registerTeamRoutes(app: ServiceApp, ctx: GatewayRouteContext, teams: TeamService): void {
  app.get(
    '/api/v1/teams',
    {
      ...ctx.user('viewer'),
      schema: {
        operationId: 'listTeams',
        tags,
        summary: 'The teams of the scope, newest first',
        security,
        headers: ScopeHeaders,
        querystring: Type.Object({ ...PageQuery, ...ScopeFields }, { additionalProperties: false }),
        response: { 200: ListOf('teams', TeamSchema), ...productErrors },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      return listAnswer('teams', page, await teams.list(ctx.caller(request).scope, page));
    },
  );

  app.post(
    '/api/v1/teams',
    {
      ...ctx.user('editor'),
      schema: {
        operationId: 'createTeam',
        tags,
        summary: 'Create a team: member agents that hand the work on, in order',
        security,
        headers: ScopeHeaders,
        body: Type.Object(
          {
            ...ScopeFields,
            name: Type.String({ minLength: 1, maxLength: 200 }),
            description: Type.Optional(Type.String({ maxLength: 2000 })),
            members: Members,
          },
          {
            additionalProperties: false,
            examples: [{ name: 'Pipeline', members: ['agt_0123456789abcdef0123456789abcdef'] }],
          },
        ),
        response: { 201: Type.Object({ team: TeamSchema }), ...productErrors },
      },
    },
    async (request, reply) => {
      const caller = ctx.caller(request);
      return reply.code(201).send({ team: await teams.create(caller.scope, caller.userId, request.body) });
    },
  );

  app.get(
    '/api/v1/teams/:id',
    {
      ...ctx.user('viewer'),
      schema: {
        operationId: 'getTeam',
        tags,
        summary: 'One team',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        response: { 200: Type.Object({ team: TeamSchema }), ...productErrors },
      },
    },
    async (request) => ({ team: await teams.get(ctx.caller(request).scope, request.params.id) }),
  );

  app.patch(
    '/api/v1/teams/:id',
    {
      ...ctx.user('editor'),
      schema: {
        operationId: 'updateTeam',
        tags,
        summary: 'Change a team at `expectedVersion` (409 with the current version on a mismatch)',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        body: Type.Object(
          {
            ...ScopeFields,
            expectedVersion: Version,
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            description: Type.Optional(Type.String({ maxLength: 2000 })),
            members: Type.Optional(Members),
          },
          { additionalProperties: false, examples: [{ expectedVersion: 1, name: 'Renamed' }] },
        ),
        response: { 200: Type.Object({ team: TeamSchema }), ...productErrors },
      },
    },
    async (request) => ({
      team: await teams.update(ctx.caller(request).scope, request.params.id, request.body),
    }),
  );
}
