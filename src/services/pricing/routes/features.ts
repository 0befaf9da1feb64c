import type { ServiceApp } from '../../../platform/http.ts';
import {
  CreateFeatureBody,
  FeatureListResponse,
  FeatureParams,
  FeatureSchema,
  SlugParams,
  SuccessResponse,
  UpdateFeatureBody,
} from '../pricing-schemas.ts';
import { API_PREFIX, type PricingRouteContext, readErrors, security, writeErrors } from './context.ts';

/** Registers the feature routes. */
export function registerFeatureRoutes(app: ServiceApp, ctx: PricingRouteContext) {
  const { read, write, projectOf } = ctx;
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
    async (request) => ({ features: await ctx.catalog.listFeatures(projectOf(request)) }),
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
      reply.code(201).send(await ctx.catalog.createFeature(projectOf(request), request.body)),
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
    async (request) => ctx.catalog.getFeature(projectOf(request), request.params.featureId),
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
    async (request) => ctx.catalog.updateFeature(projectOf(request), request.params.featureId, request.body),
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
      await ctx.catalog.deleteFeature(projectOf(request), request.params.featureId);
      return { success: true };
    },
  );
}
