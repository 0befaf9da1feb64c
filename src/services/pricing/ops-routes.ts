import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../platform/http.ts';
import type { PricingKeyService } from './api-keys.ts';
import {
  CreateProjectBody,
  IssuedKeySchema,
  IssueKeyBody,
  KeyIdParams,
  KeyListQuery,
  KeyRecordSchema,
  PricingErrorBody,
  ProjectSchema,
  ProjectSlugParams,
} from './pricing-schemas.ts';
import type { ProjectService } from './projects.ts';

const errors = { 400: PricingErrorBody, 401: PricingErrorBody, 404: PricingErrorBody };
const ops = { tags: ['operator'], security: [{ operatorToken: [] }] };

/** Operator routes (`/_ops/*`, bearer OPERATOR_TOKEN checked by the platform): projects and their API keys. */
export async function registerOpsRoutes(
  app: ServiceApp,
  deps: { projects: ProjectService; keys: PricingKeyService },
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

  app.post(
    '/_ops/projects/:slug/keys',
    {
      schema: {
        ...ops,
        operationId: 'opsIssueKey',
        summary: 'Issue an API key for a project',
        description:
          'Permission `read` or `read_write`; optional `rateLimitPerMinute` (default 100) for benchmarks. The key ' +
          '(`cpk_...`) is in the answer once; only its SHA-256 is stored.',
        params: ProjectSlugParams,
        body: IssueKeyBody,
        response: { 201: IssuedKeySchema, ...errors },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await deps.keys.issue({ projectSlug: request.params.slug, ...request.body })),
  );

  app.get(
    '/_ops/projects/:slug/keys',
    {
      schema: {
        ...ops,
        operationId: 'opsListKeys',
        summary: "List a project's API keys (never the keys themselves)",
        params: ProjectSlugParams,
        querystring: KeyListQuery,
        response: { 200: Type.Object({ keys: Type.Array(KeyRecordSchema) }), ...errors },
      },
    },
    async (request) => ({
      keys: await deps.keys.list(request.params.slug, {
        includeRevoked: request.query.include_revoked === 'true',
      }),
    }),
  );

  app.post(
    '/_ops/keys/:id/revoke',
    {
      schema: {
        ...ops,
        operationId: 'opsRevokeKey',
        summary: 'Revoke an API key (effective on every instance at once)',
        params: KeyIdParams,
        response: { 200: KeyRecordSchema, ...errors },
      },
    },
    async (request) => deps.keys.revoke(request.params.id),
  );
}
