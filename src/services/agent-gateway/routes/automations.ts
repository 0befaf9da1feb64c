/** Automations: `GET, POST /api/v1/automations`, one automation, `PATCH` with `expectedVersion`. */
import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../../platform/http.ts';
import {
  AutomationSchema,
  AutomationTrigger,
  IdParam,
  ListOf,
  PageQuery,
  productErrors,
  RunTarget,
  ScopeFields,
  ScopeHeaders,
  Version,
} from '../agent-gateway-schemas.ts';
import type { AutomationService } from '../automations.ts';
import { type GatewayRouteContext, SECURITY } from './context.ts';
import { listAnswer, pageOf } from './paging.ts';

const tags = ['automations'];
const security = SECURITY.session;

/** Registers the automation routes. */
export function registerAutomationRoutes(
  app: ServiceApp,
  ctx: GatewayRouteContext,
  automations: AutomationService,
): void {
  app.get(
    '/api/v1/automations',
    {
      ...ctx.user('viewer'),
      schema: {
        operationId: 'listAutomations',
        tags,
        summary: 'The automations of the scope, newest first',
        security,
        headers: ScopeHeaders,
        querystring: Type.Object({ ...PageQuery, ...ScopeFields }, { additionalProperties: false }),
        response: { 200: ListOf('automations', AutomationSchema), ...productErrors },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      return listAnswer('automations', page, await automations.list(ctx.caller(request).scope, page));
    },
  );

  app.post(
    '/api/v1/automations',
    {
      ...ctx.user('admin'),
      schema: {
        operationId: 'createAutomation',
        tags,
        summary: 'Create an automation: a cron schedule or an event that starts a run',
        security,
        headers: ScopeHeaders,
        body: Type.Object(
          {
            ...ScopeFields,
            name: Type.String({ minLength: 1, maxLength: 200 }),
            enabled: Type.Optional(Type.Boolean()),
            trigger: AutomationTrigger,
            target: RunTarget,
            input: Type.Optional(Type.Unknown()),
          },
          {
            additionalProperties: false,
            examples: [
              {
                name: 'Nightly digest',
                trigger: { type: 'schedule', cron: '0 6 * * *', timezone: 'UTC' },
                target: { type: 'agent', id: 'agt_0123456789abcdef0123456789abcdef' },
                input: { message: 'digest' },
              },
            ],
          },
        ),
        response: { 201: Type.Object({ automation: AutomationSchema }), ...productErrors },
      },
    },
    async (request, reply) => {
      const caller = ctx.caller(request);
      return reply
        .code(201)
        .send({ automation: await automations.create(caller.scope, caller.userId, request.body) });
    },
  );

  app.get(
    '/api/v1/automations/:id',
    {
      ...ctx.user('viewer'),
      schema: {
        operationId: 'getAutomation',
        tags,
        summary: 'One automation with its next fire time',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        response: { 200: Type.Object({ automation: AutomationSchema }), ...productErrors },
      },
    },
    async (request) => ({ automation: await automations.get(ctx.caller(request).scope, request.params.id) }),
  );

  app.patch(
    '/api/v1/automations/:id',
    {
      ...ctx.user('admin'),
      schema: {
        operationId: 'updateAutomation',
        tags,
        summary: 'Change or disable an automation at `expectedVersion`',
        security,
        headers: ScopeHeaders,
        params: IdParam,
        body: Type.Object(
          {
            ...ScopeFields,
            expectedVersion: Version,
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            enabled: Type.Optional(Type.Boolean()),
            trigger: Type.Optional(AutomationTrigger),
            input: Type.Optional(Type.Unknown()),
          },
          { additionalProperties: false, examples: [{ expectedVersion: 1, enabled: false }] },
        ),
        response: { 200: Type.Object({ automation: AutomationSchema }), ...productErrors },
      },
    },
    async (request) => ({
      automation: await automations.update(ctx.caller(request).scope, request.params.id, request.body),
    }),
  );
}
