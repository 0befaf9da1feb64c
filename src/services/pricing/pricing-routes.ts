import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServiceApp } from '../../platform/http.ts';
import { authorize, type KeyPrincipal, type Permission, type PricingKeyService } from './api-keys.ts';
import type { PricingCatalog } from './catalog.ts';
import { rateLimited } from './pricing-errors.ts';
import {
  AddPlanFeatureBody,
  CreateFeatureBody,
  CreatePlanBody,
  DuplicatePlanBody,
  FeatureListResponse,
  FeatureParams,
  FeatureSchema,
  PlanFeatureParams,
  PlanFeatureSchema,
  PlanListResponse,
  PlanParams,
  PlanSchema,
  PricingErrorBody,
  SlugParams,
  SuccessResponse,
  UpdateFeatureBody,
  UpdatePlanBody,
  UpdatePlanFeatureBody,
} from './pricing-schemas.ts';

declare module 'fastify' {
  interface FastifyRequest {
    pricingPrincipal?: KeyPrincipal;
  }
}

/** The prefix of every public route (spec B). */
export const API_PREFIX = '/api/v1/projects/:slug';

const readErrors = {
  400: PricingErrorBody,
  401: PricingErrorBody,
  404: PricingErrorBody,
  429: PricingErrorBody,
};
const writeErrors = { ...readErrors, 403: PricingErrorBody };
const security = [{ apiKey: [] }];

/**
 * The public API under `/api/v1/projects/{slug}`: the three operations of spec B (`GET /plans`,
 * `POST /plans/{planId}/duplicate`, `DELETE /features/{featureId}`) and the anchor's plan, feature and assignment
 * operations. Every route runs, in `onRequest` and so before validation: the key (401), the key's rate limit (429),
 * then the project and permission check (404 for another project's slug, 403 for a read key on a mutating call).
 */
export async function registerPricingRoutes(
  app: ServiceApp,
  deps: { keys: PricingKeyService; catalog: PricingCatalog },
) {
  const authenticate = async (request: FastifyRequest) => {
    const header = request.headers.authorization;
    request.pricingPrincipal = await deps.keys.authenticate(typeof header === 'string' ? header : undefined);
  };
  const limit = app.rateLimit({
    timeWindow: 60_000,
    max: (request: FastifyRequest) => request.pricingPrincipal?.rateLimitPerMinute ?? 1,
    keyGenerator: (request: FastifyRequest) => `key:${request.pricingPrincipal?.keyId ?? 'none'}`,
    errorResponseBuilder: (request, context) =>
      rateLimited(
        request.pricingPrincipal?.rateLimitPerMinute ?? context.max,
        Math.max(1, Math.ceil(context.ttl / 1000)),
      ),
  });
  const access = (needs: Permission) => async (request: FastifyRequest) => {
    authorize(request.pricingPrincipal!, (request.params as { slug: string }).slug, needs);
  };
  const read = [authenticate, limit, access('read')];
  const write = [authenticate, limit, access('read_write')];
  const projectOf = (request: FastifyRequest) => request.pricingPrincipal!.projectId;

  // Plans

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
      reply
        .type('application/json; charset=utf-8')
        .send(await deps.catalog.listPlansJson(projectOf(request))),
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
      reply.code(201).send(await deps.catalog.createPlan(projectOf(request), request.body)),
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
    async (request) => deps.catalog.getPlan(projectOf(request), request.params.planId),
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
    async (request) => deps.catalog.updatePlan(projectOf(request), request.params.planId, request.body),
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
      await deps.catalog.deletePlan(projectOf(request), request.params.planId);
      return { success: true };
    },
  );

  // The body of a duplicate is optional: no body, an empty body (even with `Content-Type: application/json`) or
  // `{}` names the copy "<original name> (Copy)". The JSON parser that accepts an empty body is scoped to this route.
  await app.register(async (scope: ServiceApp) => {
    const parseJson = scope.getDefaultJsonParser('error', 'error');
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      if (text.trim() === '') return done(null, undefined);
      parseJson(request, text, done);
    });
    scope.post(
      `${API_PREFIX}/plans/:planId/duplicate`,
      {
        onRequest: write,
        preValidation: async (request) => {
          if (request.body === undefined || request.body === null) request.body = {};
        },
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
          .send(
            await deps.catalog.duplicatePlan(projectOf(request), request.params.planId, request.body.name),
          ),
    );
  });

  // Features on a plan

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
          await deps.catalog.addFeatureToPlan(
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
      deps.catalog.setPlanFeatureMultiplier(
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
      await deps.catalog.removeFeatureFromPlan(
        projectOf(request),
        request.params.planId,
        request.params.featureId,
      );
      return { success: true };
    },
  );

  // Features

  app.get(
    `${API_PREFIX}/features`,
    {
      onRequest: read,
      schema: {
        operationId: 'listFeatures',
        tags: ['features'],
        summary: 'List features',
        description: 'Every feature of the project (at most 50), ordered by id. Needs read.',
        security,
        params: SlugParams,
        response: { 200: FeatureListResponse, ...readErrors },
      },
    },
    async (request) => ({ features: await deps.catalog.listFeatures(projectOf(request)) }),
  );

  app.post(
    `${API_PREFIX}/features`,
    {
      onRequest: write,
      schema: {
        operationId: 'createFeature',
        tags: ['features'],
        summary: 'Create a feature',
        description:
          'At most 50 features per project: the 51st is a 400 `feature_limit_reached`. `countableData` is ' +
          'required exactly when `isCountable` is true. Needs read_write.',
        security,
        params: SlugParams,
        body: CreateFeatureBody,
        response: { 201: FeatureSchema, ...writeErrors },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await deps.catalog.createFeature(projectOf(request), request.body)),
  );

  app.get(
    `${API_PREFIX}/features/:featureId`,
    {
      onRequest: read,
      schema: {
        operationId: 'getFeature',
        tags: ['features'],
        summary: 'Get a feature',
        security,
        params: FeatureParams,
        response: { 200: FeatureSchema, ...readErrors },
      },
    },
    async (request) => deps.catalog.getFeature(projectOf(request), request.params.featureId),
  );

  app.patch(
    `${API_PREFIX}/features/:featureId`,
    {
      onRequest: write,
      schema: {
        operationId: 'updateFeature',
        tags: ['features'],
        summary: 'Update a feature',
        description:
          'Changes the fields sent (at least one); plans holding the feature show the change. `isCountable: false` ' +
          'alone clears `countableData`; `countableData` alone sets `isCountable`. Needs read_write.',
        security,
        params: FeatureParams,
        body: UpdateFeatureBody,
        response: { 200: FeatureSchema, ...writeErrors },
      },
    },
    async (request) => deps.catalog.updateFeature(projectOf(request), request.params.featureId, request.body),
  );

  app.delete(
    `${API_PREFIX}/features/:featureId`,
    {
      onRequest: write,
      schema: {
        operationId: 'deleteFeature',
        tags: ['features'],
        summary: 'Delete a feature (and remove it from every plan)',
        description:
          'Removes the feature from the project and from every plan containing it, permanently, in one ' +
          'transaction. Needs read_write.',
        security,
        params: FeatureParams,
        response: { 200: SuccessResponse, ...writeErrors },
      },
    },
    async (request) => {
      await deps.catalog.deleteFeature(projectOf(request), request.params.featureId);
      return { success: true };
    },
  );
}
