import { Type } from '@sinclair/typebox';
import { eq } from 'drizzle-orm';
import { registerCredentialRoutes } from '../../../platform/credential-routes.ts';
import type { Db } from '../../../platform/database.ts';
import type { ServiceApp } from '../../../platform/http.ts';
import { issueKey, type KeyStore, projectIdOf } from '../api-keys.ts';
import { apiKeys } from '../db/schema.ts';
import {
  CreateProjectBody,
  PermissionSchema,
  PricingErrorBody,
  ProjectSchema,
  ProjectSlugSchema,
} from '../pricing-schemas.ts';
import type { ProjectService } from '../projects.ts';

const errors = { 400: PricingErrorBody, 401: PricingErrorBody, 404: PricingErrorBody };
const ops = { tags: ['operator'], security: [{ operatorToken: [] }] };

/**
 * Operator routes (`/_ops/*`, bearer OPERATOR_TOKEN checked by the platform): projects, and their API keys on the
 * platform's `/_ops/keys` routes (issue with `projectSlug`, list filtered by `?projectSlug=`).
 */
export async function registerOpsRoutes(
  app: ServiceApp,
  deps: { projects: ProjectService; keys: KeyStore; db: Db },
) {
  app.post(
    '/_ops/projects',
    {
      schema: {
        ...ops,
        operationId: 'opsCreateProject',
        summary: 'Create a project',
        description: 'The slug names the project in URLs (`/api/v1/projects/{slug}`) and never changes.',
        body: CreateProjectBody,
        response: { 201: ProjectSchema, 409: PricingErrorBody, ...errors },
      },
    },
    async (request, reply) => reply.code(201).send(await deps.projects.create(request.body)),
  );

  app.get(
    '/_ops/projects',
    {
      schema: {
        ...ops,
        operationId: 'opsListProjects',
        summary: 'List projects with their counts of plans, features and active keys',
        response: { 200: Type.Object({ projects: Type.Array(ProjectSchema) }), 401: PricingErrorBody },
      },
    },
    async () => ({ projects: await deps.projects.list() }),
  );

  registerCredentialRoutes(app, {
    store: deps.keys,
    db: deps.db,
    attributes: {
      projectSlug: Type.String(),
      permission: PermissionSchema,
      rateLimitPerMinute: Type.Integer(),
    },
    issueFields: {
      projectSlug: ProjectSlugSchema,
      permission: PermissionSchema,
      rateLimitPerMinute: Type.Optional(
        Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Requests per minute; default 100.' }),
      ),
    },
    issue: (tx, body) => issueKey(deps.keys, tx, body),
    filters: {
      fields: { projectSlug: Type.Optional(ProjectSlugSchema) },
      where: async (query) =>
        query.projectSlug === undefined
          ? undefined
          : eq(apiKeys.projectId, await projectIdOf(deps.db, query.projectSlug)),
    },
    errorBody: PricingErrorBody,
  });
}
