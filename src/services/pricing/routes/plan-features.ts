import type { ServiceApp } from '../../../platform/http.ts';
import {
  AddPlanFeatureBody,
  PlanFeatureParams,
  PlanFeatureSchema,
  PlanParams,
  PricingErrorBody,
  SuccessResponse,
  UpdatePlanFeatureBody,
} from '../pricing-schemas.ts';
import { API_PREFIX, type PricingRouteContext, security, writeErrors } from './context.ts';

/** Registers the plan-feature routes. */
export function registerPlanFeatureRoutes(app: ServiceApp, ctx: PricingRouteContext) {
  const { write, projectOf } = ctx;
  app.post(
    `${API_PREFIX}/plans/:planId/features`,
    {
      onRequest: write,
      schema: {
        operationId: 'addPlanFeature',
        tags: ['plans'],
        summary: 'Add a feature to a plan',
        description:
          'Assigns a feature of the project to the plan with a multiplier (default 1). 409 when it is already on ' +
          'the plan. Needs read_write.',
        security,
        params: PlanParams,
        body: AddPlanFeatureBody,
        response: { 201: PlanFeatureSchema, 409: PricingErrorBody, ...writeErrors },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          await ctx.catalog.addFeatureToPlan(
            projectOf(request),
            request.params.planId,
            request.body.featureId,
            request.body.multiplier,
          ),
        ),
  );

  app.patch(
    `${API_PREFIX}/plans/:planId/features/:featureId`,
    {
      onRequest: write,
      schema: {
        operationId: 'updatePlanFeature',
        tags: ['plans'],
        summary: "Change a feature's multiplier on a plan",
        description: 'The path names the feature id (not the association id). Needs read_write.',
        security,
        params: PlanFeatureParams,
        body: UpdatePlanFeatureBody,
        response: { 200: PlanFeatureSchema, ...writeErrors },
      },
    },
    async (request) =>
      ctx.catalog.setPlanFeatureMultiplier(
        projectOf(request),
        request.params.planId,
        request.params.featureId,
        request.body.multiplier,
      ),
  );

  app.delete(
    `${API_PREFIX}/plans/:planId/features/:featureId`,
    {
      onRequest: write,
      schema: {
        operationId: 'removePlanFeature',
        tags: ['plans'],
        summary: 'Remove a feature from a plan',
        description: 'The feature stays in the project. Needs read_write.',
        security,
        params: PlanFeatureParams,
        response: { 200: SuccessResponse, ...writeErrors },
      },
    },
    async (request) => {
      await ctx.catalog.removeFeatureFromPlan(
        projectOf(request),
        request.params.planId,
        request.params.featureId,
      );
      return { success: true };
    },
  );
}
