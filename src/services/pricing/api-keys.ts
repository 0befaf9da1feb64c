import { eq } from 'drizzle-orm';
import type { Executor } from '../../platform/database.ts';
import type { ServiceContext } from '../../platform/service.ts';
import { apiKeys, projects } from './db/schema.ts';
import { projectNotFound, readOnlyKey } from './pricing-errors.ts';

/** `read` allows the read-only calls; `read_write` allows every call (spec B, Authentication). */
export type Permission = 'read' | 'read_write';

export const PERMISSIONS = ['read', 'read_write'] as const;

/** Key prefix (the anchor's keys look like `cpk_...`). A key is `cpk_` + 43 URL-safe base64 characters. */
export const KEY_PREFIX = 'cpk_';

/** Requests per minute per key unless the key has its own `rateLimitPerMinute` (the anchor's default). */
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 100;

/** An authenticated caller: the key, its project and what it may do. */
export interface KeyPrincipal {
  keyId: number;
  projectId: number;
  projectSlug: string;
  permission: Permission;
  /** Requests per minute allowed for this key. */
  rateLimitPerMinute: number;
}

/** The pricing-specific fields of a key in operator records. */
export interface KeyAttributes {
  projectSlug: string;
  permission: Permission;
  rateLimitPerMinute: number;
}

/**
 * The API keys of projects, on the platform credential kit: SHA-256 at rest, shown once, lookups cached per
 * instance, revocations effective on every instance at once.
 */
export function createKeyStore(ctx: ServiceContext) {
  return ctx.credentialStore<typeof apiKeys, KeyPrincipal, KeyAttributes>({
    table: apiKeys,
    prefixes: [KEY_PREFIX],
    principal: async (row, db) => ({
      keyId: row.id,
      projectId: row.projectId,
      projectSlug: await projectSlugOf(db, row.projectId),
      permission: row.permission,
      rateLimitPerMinute: row.rateLimitPerMinute ?? DEFAULT_RATE_LIMIT_PER_MINUTE,
    }),
    attributes: async (row, executor) => ({
      projectSlug: await projectSlugOf(executor, row.projectId),
      permission: row.permission,
      rateLimitPerMinute: row.rateLimitPerMinute ?? DEFAULT_RATE_LIMIT_PER_MINUTE,
    }),
  });
}

/** The slug of a key's project (it exists: foreign key with cascading delete, so this read cannot miss). */
async function projectSlugOf(executor: Executor, projectId: number): Promise<string> {
  const [project] = await executor
    .select({ slug: projects.slug })
    .from(projects)
    .where(eq(projects.id, projectId));
  return project!.slug;
}

/** The key store of the pricing service. */
export type KeyStore = ReturnType<typeof createKeyStore>;

/**
 * The id of project `slug`.
 * @throws ApiError 404 `not_found` when the project does not exist.
 */
export async function projectIdOf(executor: Executor, slug: string): Promise<number> {
  const [project] = await executor
    .select({ id: projects.id })
    .from(projects)
    .where(eq(projects.slug, slug))
    .limit(1);
  if (!project) throw projectNotFound(slug);
  return project.id;
}

/**
 * Issues a key for project `projectSlug`; the plaintext `key` is in the answer once.
 * @param rateLimitPerMinute requests per minute for this key (1..1,000,000); default 100.
 * @throws ApiError 404 `not_found` when the project does not exist.
 */
export async function issueKey(
  keys: KeyStore,
  executor: Executor,
  input: {
    projectSlug: string;
    permission: Permission;
    label?: string | null;
    rateLimitPerMinute?: number | null;
  },
) {
  const projectId = await projectIdOf(executor, input.projectSlug);
  return keys.issue(executor, {
    label: input.label,
    values: { projectId, permission: input.permission, rateLimitPerMinute: input.rateLimitPerMinute ?? null },
  });
}

/**
 * The access rule of every public call: the key must belong to the project named in the path (otherwise 404, the
 * same answer as for an unknown slug), and a mutating call needs `read_write` (otherwise 403).
 * @throws ApiError 404 `not_found` for another project's slug; 403 `forbidden` for a `read` key on a mutating call.
 */
export function authorize(principal: KeyPrincipal, slug: string, needs: Permission): void {
  if (principal.projectSlug !== slug) throw projectNotFound(slug);
  if (needs === 'read_write' && principal.permission !== 'read_write') throw readOnlyKey();
}
