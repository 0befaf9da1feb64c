import path from 'node:path';
import type { ServiceDefinition } from '../../platform/service.ts';
import { createKeyStore, issueKey } from './api-keys.ts';
import { PricingCatalog } from './catalog.ts';
import { formatPricingError } from './pricing-errors.ts';
import { ProjectService } from './projects.ts';
import { registerOpsRoutes, registerPricingRoutes } from './routes/index.ts';
import { DEMO_PROJECT, seedDemoCatalog } from './seed-data.ts';

/**
 * The pricing-plan service (spec document 001, section B; anchor: a SaaS pricing-page builder): the plans and
 * features of a project under `/api/v1/projects/{slug}` (list plans, duplicate a plan, delete a feature with its
 * cascade, and the anchor's create/read/update/delete of plans, features and assignments), project API keys with
 * `read` / `read_write` permission, 100 requests per minute per key, and an operator API for projects and keys.
 */
export const pricingService: ServiceDefinition = {
  name: 'pricing',
  envPrefix: 'PRICING',
  title: 'Pricing-plan API',
  version: '1.0.0',
  description:
    'Plans and features of a project, under `/api/v1/projects/{slug}`. Authenticate with `Authorization: Bearer ' +
    '<API_KEY>` (`cpk_...`): `read` keys call the read-only endpoints, `read_write` keys every endpoint. 100 ' +
    "requests per minute per key. Money is a number in the project's units. Errors: `{error, message}`.",
  defaultPort: 4102,
  migrations: { schema: 'pricing', folder: path.join(import.meta.dirname, 'db', 'migrations') },
  formatError: formatPricingError,
  tags: [
    { name: 'plans', description: 'Pricing plans and the features on them' },
    { name: 'features', description: 'Features of the project (at most 50)' },
  ],
  securitySchemes: {
    apiKey: {
      type: 'http',
      scheme: 'bearer',
      description: 'A project API key (`cpk_...`) with `read` or `read_write` permission',
    },
  },
  setup(ctx) {
    const keys = createKeyStore(ctx);
    const projects = new ProjectService(ctx.db, ctx.clock);
    const catalog = new PricingCatalog(ctx.db, ctx.clock);
    return {
      async routes(app) {
        await registerPricingRoutes(app, { keys, catalog });
        await registerOpsRoutes(app, { projects, keys, db: ctx.db });
      },
      async seed(tx) {
        if (!(await projects.exists(DEMO_PROJECT.slug, tx))) {
          const project = await projects.create(DEMO_PROJECT, tx);
          await seedDemoCatalog(tx, project.id, ctx.clock);
        }
        const read = await issueKey(keys, tx, {
          projectSlug: DEMO_PROJECT.slug,
          permission: 'read',
          label: 'demo read key (first start)',
        });
        const readWrite = await issueKey(keys, tx, {
          projectSlug: DEMO_PROJECT.slug,
          permission: 'read_write',
          label: 'demo read_write key (first start)',
        });
        return { projectSlug: DEMO_PROJECT.slug, readKey: read.key, readWriteKey: readWrite.key };
      },
    };
  },
};
