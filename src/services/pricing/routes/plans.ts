/**
 * Plans of a project: list (spec B `GET /plans`), create, read, update, delete and duplicate (spec B).
 */
import type { FastifyReply } from 'fastify';
import type { ServiceApp } from '../../../platform/http.ts';
import {
  CreatePlanBody,
  DuplicatePlanBody,
  PlanListResponse,
  PlanParams,
  PlanSchema,
  SlugParams,
  SuccessResponse,
  UpdatePlanBody,
} from '../pricing-schemas.ts';
import { API_PREFIX, type PricingRouteContext, readErrors, security, writeErrors } from './context.ts';

/** Registers the plan routes. */
export function registerPlanRoutes(app: ServiceApp, ctx: PricingRouteContext) {
  const { read, write, projectOf } = ctx;
  app.get(
    `${API_PREFIX}/plans`,
    {
      onRequest: read,
      schema: {
        operationId: 'listPlans',
        tags: ['plans'],
        summary: 'List plans with their features',
        description: 'Every plan of the project, ordered by id, each with its `planFeatures[]`. Needs read.',
        security,
        params: SlugParams,
        response: { 200: PlanListResponse, ...readErrors },
      },
    },
    // The body is JSON text already (cached per catalog version, PricingCatalog.listPlansJson), of the 200 schema's
    // shape: Fastify sends a JSON string as is, so the reply is widened from the schema-typed one.
    async (request, reply: FastifyReply) =>
      reply.type('application/json; charset=utf-8').send(await ctx.catalog.listPlansJson(projectOf(request))),
  );

  app.post(
    `${API_PREFIX}/plans`,
    {
      onRequest: write,
      schema: {
        operationId: 'createPlan',
        tags: ['plans'],
        summary: 'Create a plan',
        description:
          'A plan without features (add them with `POST /plans/{planId}/features`). `isFree` defaults to ' +
          '`basePrice` being 0; a free plan must cost 0. Needs read_write.',
        security,
        params: SlugParams,
        body: CreatePlanBody,
        response: { 201: PlanSchema, ...writeErrors },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await ctx.catalog.createPlan(projectOf(request), request.body)),
  );

  app.get(
    `${API_PREFIX}/plans/:planId`,
    {
      onRequest: read,
      schema: {
        operationId: 'getPlan',
        tags: ['plans'],
        summary: 'Get a plan with its features',
        security,
        params: PlanParams,
        response: { 200: PlanSchema, ...readErrors },
      },
    },
    async (request) => ctx.catalog.getPlan(projectOf(request), request.params.planId),
  );

  app.patch(
    `${API_PREFIX}/plans/:planId`,
    {
      onRequest: write,
      schema: {
        operationId: 'updatePlan',
        tags: ['plans'],
        summary: 'Update a plan',
        description: 'Changes the fields sent (at least one). Needs read_write.',
        security,
        params: PlanParams,
        body: UpdatePlanBody,
        response: { 200: PlanSchema, ...writeErrors },
      },
    },
    async (request) => ctx.catalog.updatePlan(projectOf(request), request.params.planId, request.body),
  );

  app.delete(
    `${API_PREFIX}/plans/:planId`,
    {
      onRequest: write,
      schema: {
        operationId: 'deletePlan',
        tags: ['plans'],
        summary: 'Delete a plan',
        description: 'Deletes the plan and its feature assignments; the features stay. Needs read_write.',
        security,
        params: PlanParams,
        response: { 200: SuccessResponse, ...writeErrors },
      },
    },
    async (request) => {
      await ctx.catalog.deletePlan(projectOf(request), request.params.planId);
      return { success: true };
    },
  );

  // The body of a duplicate is optional: no body, an empty body (even with `Content-Type: application/json`) or
  // `{}` names the copy "<original name> (Copy)".
  app.post(
    `${API_PREFIX}/plans/:planId/duplicate`,
    {
      onRequest: write,
      config: { optionalJsonBody: true },
      schema: {
        operationId: 'duplicatePlan',
        tags: ['plans'],
        summary: 'Duplicate a plan',
        description:
          'Creates a copy named `name` (default: the original name followed by " (Copy)"), not popular, with ' +
          'every feature assignment copied: new association ids, same features, same multipliers. The body is ' +
          'optional. Needs read_write.',
        security,
        params: PlanParams,
        body: DuplicatePlanBody,
        response: { 201: PlanSchema, ...writeErrors },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(await ctx.catalog.duplicatePlan(projectOf(request), request.params.planId, request.body.name)),
  );
}
