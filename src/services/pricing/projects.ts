import { sql } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.ts';
import type { Db, Executor } from '../../platform/database.ts';
import { ApiError, type FieldIssue } from '../../platform/errors.ts';
import { projects } from './db/schema.ts';
import { invalidFields, PricingErrorName } from './pricing-errors.ts';
import { PRICING_LIMITS, PROJECT_SLUG_PATTERN } from './pricing-rules.ts';

/** A project as the operator API shows it, with how many plans, features and active keys it has. */
export interface ProjectRecord {
  id: number;
  slug: string;
  name: string;
  plans: number;
  features: number;
  activeKeys: number;
  createdAt: string;
  updatedAt: string;
}

const SLUG = new RegExp(PROJECT_SLUG_PATTERN);

/**
 * Projects (the tenants of the service). Created by the operator API; a slug is unique and never changes, since API
 * keys and URLs name it.
 */
export class ProjectService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /**
   * Creates a project.
   * @param input `slug` matches `^[a-z0-9]+(-[a-z0-9]+)*$` (at most 64 characters); `name` is not blank.
   * @throws ValidationError 400 for a bad slug or name; ApiError 409 `conflict` when the slug is taken.
   */
  async create(input: { slug: string; name: string }, executor: Executor = this.db): Promise<ProjectRecord> {
    const name = input.name.trim();
    const issues: FieldIssue[] = [];
    if (!SLUG.test(input.slug) || input.slug.length > PRICING_LIMITS.projectSlugMaxLength)
      issues.push({
        location: 'body',
        field: 'slug',
        message: `must be lowercase letters and digits in groups joined by single hyphens, at most ${PRICING_LIMITS.projectSlugMaxLength} characters`,
      });
    if (name === '') issues.push({ location: 'body', field: 'name', message: 'must not be blank' });
    if (issues.length > 0) throw invalidFields(issues);
    const now = this.clock.now();
    const [row] = await executor
      .insert(projects)
      .values({ slug: input.slug, name, createdAt: now, updatedAt: now })
      .onConflictDoNothing({ target: projects.slug })
      .returning();
    if (!row)
      throw new ApiError(
        409,
        PricingErrorName.conflict,
        `A project with slug '${input.slug}' already exists.`,
      );
    return {
      id: row.id,
      slug: row.slug,
      name: row.name,
      plans: 0,
      features: 0,
      activeKeys: 0,
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    };
  }

  /** True when a project with `slug` exists. */
  async exists(slug: string, executor: Executor = this.db): Promise<boolean> {
    const result = await executor.execute(sql`select 1 from pricing.projects where slug = ${slug}`);
    return result.rows.length > 0;
  }

  /** Every project, ordered by slug, with its counts. */
  async list(): Promise<ProjectRecord[]> {
    const result = await this.db.execute<{
      id: number;
      slug: string;
      name: string;
      plans: number;
      features: number;
      active_keys: number;
      created_at: Date;
      updated_at: Date;
    }>(sql`
      select p.id, p.slug, p.name, p.created_at, p.updated_at,
        (select count(*)::int from pricing.plans x where x.project_id = p.id) as plans,
        (select count(*)::int from pricing.features x where x.project_id = p.id) as features,
        (select count(*)::int from pricing.api_keys x where x.project_id = p.id and x.revoked_at is null) as active_keys
      from pricing.projects p
      order by p.slug`);
    return result.rows.map((r) => ({
      id: Number(r.id),
      slug: r.slug,
      name: r.name,
      plans: r.plans,
      features: r.features,
      activeKeys: r.active_keys,
      createdAt: new Date(r.created_at).toISOString(),
      updatedAt: new Date(r.updated_at).toISOString(),
    }));
  }
}
