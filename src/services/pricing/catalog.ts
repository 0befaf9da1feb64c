import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../../platform/clock.ts';
import type { Db, Executor, Tx } from '../../platform/database.ts';
import { type CountableData, features, planFeatures, plans, projects } from './db/schema.ts';
import {
  featureAlreadyOnPlan,
  featureLimitReached,
  featureNotFound,
  planFeatureNotFound,
  planNotFound,
} from './pricing-errors.ts';
import {
  checkMultiplier,
  duplicateName,
  type FeatureCreateInput,
  type FeaturePatch,
  type FeatureType,
  type FeatureValues,
  mergeFeature,
  mergePlan,
  type PlanCreateInput,
  type PlanPatch,
  type PlanValues,
  PRICING_LIMITS,
  validateFeatureCreate,
  validateFeaturePatch,
  validatePlanCreate,
  validatePlanPatch,
} from './pricing-rules.ts';

/**
 * A feature as the API returns it (spec B; fields of the anchor). Money in the project's units; times ISO 8601.
 * `countableData` is `{unit, amount}` when `isCountable`, otherwise null.
 */
export interface FeatureView {
  id: number;
  name: string;
  description: string;
  basePrice: number;
  featureType: FeatureType;
  isCountable: boolean;
  countableData: CountableData | null;
  createdAt: string;
  updatedAt: string;
}

/** One entry of a plan's `planFeatures[]`: the association `id`, its `multiplier` and the feature. */
export interface PlanFeatureView {
  id: number;
  multiplier: number;
  feature: FeatureView;
}

/**
 * A plan as the API returns it (spec B, "Plan"): `basePrice` is the monthly base price in the project's units;
 * `planFeatures` are ordered by association id (the order features were added). Times ISO 8601.
 */
export interface PlanView {
  id: number;
  name: string;
  description: string;
  basePrice: number;
  isPopular: boolean;
  isVisible: boolean;
  isFree: boolean;
  planFeatures: PlanFeatureView[];
  createdAt: string;
  updatedAt: string;
}

/** Projects whose `GET /plans` text an instance keeps at most (least recently used dropped first). */
const PLANS_CACHE_PROJECTS = 1_000;

type PlanRow = typeof plans.$inferSelect;
type FeatureRow = typeof features.$inferSelect;
type PlanFeatureRow = typeof planFeatures.$inferSelect;

/**
 * Plans, features and their assignments within one project (spec B). Every method takes the caller's `projectId`
 * (from its API key): a plan or feature of another project is "not found".
 *
 * Writes are validated before anything is written and run in one transaction that first adds one to the project's
 * `catalog_version` (an `UPDATE`, so it locks the project row until the transaction ends): the writes of one project
 * are serialized, the 50-feature cap holds under concurrent creates, and a duplicate never copies an assignment whose
 * feature is being deleted. Reads take no lock.
 *
 * `GET /plans`, the hot read, keeps its serialized answer per
 * project and instance with the version it was read at, and each request asks PostgreSQL only for the current version
 * (one indexed single-row read): a write committed on any instance is seen by the next request on every instance.
 */
export class PricingCatalog {
  /** Serialized `GET /plans` answers by project id, with the `catalog_version` they were read at. */
  private readonly plansJson = new LRUCache<number, { version: number; json: string }>({
    max: PLANS_CACHE_PROJECTS,
  });
  private readonly catalogVersion;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {
    this.catalogVersion = db
      .select({ version: projects.catalogVersion })
      .from(projects)
      .where(eq(projects.id, sql.placeholder('projectId')))
      .prepare('pricing_catalog_version');
  }

  /**
   * Every plan of the project with its features, ordered by plan id (creation order). Spec B `GET /plans`. Read in
   * one snapshot (repeatable read), with the project's `catalogVersion` at that snapshot (-1 for no such project).
   */
  async listPlans(projectId: number): Promise<{ version: number; plans: PlanView[] }> {
    return this.db.transaction(
      async (tx) => {
        const [project] = await tx
          .select({ version: projects.catalogVersion })
          .from(projects)
          .where(eq(projects.id, projectId));
        const rows = await tx
          .select()
          .from(plans)
          .where(eq(plans.projectId, projectId))
          .orderBy(asc(plans.id));
        return { version: project?.version ?? -1, plans: await this.planViews(tx, rows, projectId) };
      },
      { isolationLevel: 'repeatable read', accessMode: 'read only' },
    );
  }

  /**
   * The body of `GET /plans` (`{"plans":[PlanView...]}`, JSON text) for the project: the cached text while the
   * project's `catalogVersion` is the one it was read at, otherwise read again ({@link listPlans}) and cached.
   */
  async listPlansJson(projectId: number): Promise<string> {
    const [current] = await this.catalogVersion.execute({ projectId });
    const version = current?.version ?? -1;
    const hit = this.plansJson.get(projectId);
    if (hit && hit.version === version) return hit.json;
    const fresh = await this.listPlans(projectId);
    const json = JSON.stringify({ plans: fresh.plans });
    // A write committed between the two reads makes `fresh` newer than `version`: keep the newest text.
    const cached = this.plansJson.get(projectId);
    if (!cached || cached.version < fresh.version)
      this.plansJson.set(projectId, { version: fresh.version, json });
    return json;
  }

  /** @throws ApiError 404 `not_found` when the project has no plan `planId`. */
  async getPlan(projectId: number, planId: number): Promise<PlanView> {
    return this.planView(this.db, await this.findPlan(this.db, projectId, planId));
  }

  /**
   * Creates a plan without features (add them with {@link PricingCatalog.addFeatureToPlan}).
   * @throws ValidationError 400 for a blank name, a bad price, or a free plan with a price.
   */
  async createPlan(projectId: number, input: PlanCreateInput): Promise<PlanView> {
    const values = validatePlanCreate(input);
    return this.write(projectId, async (tx) => {
      const now = this.clock.now();
      const [row] = await tx
        .insert(plans)
        .values({ projectId, ...values, createdAt: now, updatedAt: now })
        .returning();
      return this.planView(tx, row!);
    });
  }

  /**
   * Changes the fields present in `patch`.
   * @throws ValidationError 400 for a bad value (nothing changes); ApiError 404 for an unknown plan.
   */
  async updatePlan(projectId: number, planId: number, patch: PlanPatch): Promise<PlanView> {
    const checked = validatePlanPatch(patch);
    return this.write(projectId, async (tx) => {
      const existing = await this.findPlan(tx, projectId, planId);
      const merged = mergePlan(planValues(existing), checked);
      const [row] = await tx
        .update(plans)
        .set({ ...merged, updatedAt: this.clock.now() })
        .where(eq(plans.id, planId))
        .returning();
      return this.planView(tx, row!);
    });
  }

  /**
   * Deletes a plan and its feature assignments (the features stay in the project), in one transaction.
   * @throws ApiError 404 for an unknown plan.
   */
  async deletePlan(projectId: number, planId: number): Promise<void> {
    await this.write(projectId, async (tx) => {
      await this.findPlan(tx, projectId, planId);
      await tx.delete(planFeatures).where(eq(planFeatures.planId, planId));
      await tx.delete(plans).where(eq(plans.id, planId));
    });
  }

  /**
   * Spec B `POST /plans/{planId}/duplicate`: a new plan with the original's fields, named `name` or the original
   * name + ` (Copy)`, not popular, with a copy of every feature assignment (new association ids, same features,
   * same multipliers, same order). One transaction.
   * @throws ValidationError 400 for a blank name; ApiError 404 for an unknown plan.
   */
  async duplicatePlan(projectId: number, planId: number, name?: string): Promise<PlanView> {
    // Validate a given name before the transaction; the default name needs the original plan.
    if (name !== undefined) duplicateName('', name);
    return this.write(projectId, async (tx) => {
      const original = await this.findPlan(tx, projectId, planId);
      const now = this.clock.now();
      const [copy] = await tx
        .insert(plans)
        .values({
          projectId,
          name: duplicateName(original.name, name),
          description: original.description,
          basePrice: original.basePrice,
          isPopular: false,
          isVisible: original.isVisible,
          isFree: original.isFree,
          createdAt: now,
          updatedAt: now,
        })
        .returning();
      const assignments = await tx
        .select()
        .from(planFeatures)
        .where(eq(planFeatures.planId, original.id))
        .orderBy(asc(planFeatures.id));
      // One row at a time keeps the new association ids in the original's order.
      for (const a of assignments) {
        await tx.insert(planFeatures).values({
          projectId,
          planId: copy!.id,
          featureId: a.featureId,
          multiplier: a.multiplier,
          createdAt: now,
        });
      }
      return this.planView(tx, copy!);
    });
  }

  /** Every feature of the project, ordered by id (creation order). */
  async listFeatures(projectId: number): Promise<FeatureView[]> {
    const rows = await this.db
      .select()
      .from(features)
      .where(eq(features.projectId, projectId))
      .orderBy(asc(features.id));
    return rows.map(featureView);
  }

  /** @throws ApiError 404 `not_found` when the project has no feature `featureId`. */
  async getFeature(projectId: number, featureId: number): Promise<FeatureView> {
    return featureView(await this.findFeature(this.db, projectId, featureId));
  }

  /**
   * Creates a feature. A project has at most 50 features; the cap is checked under the project lock, so concurrent
   * creates never exceed it.
   * @throws ValidationError 400 for a bad value; ApiError 400 `feature_limit_reached` for a 51st feature.
   */
  async createFeature(projectId: number, input: FeatureCreateInput): Promise<FeatureView> {
    const values = validateFeatureCreate(input);
    return this.write(projectId, async (tx) => {
      const [count] = await tx
        .select({ n: sql<number>`count(*)::int` })
        .from(features)
        .where(eq(features.projectId, projectId));
      if ((count?.n ?? 0) >= PRICING_LIMITS.maxFeaturesPerProject)
        throw featureLimitReached(PRICING_LIMITS.maxFeaturesPerProject);
      const now = this.clock.now();
      const [row] = await tx
        .insert(features)
        .values({ projectId, ...values, createdAt: now, updatedAt: now })
        .returning();
      return featureView(row!);
    });
  }

  /**
   * Changes the fields present in `patch` (see `mergeFeature` for `isCountable` and `countableData`). Plans holding
   * the feature show the change.
   * @throws ValidationError 400 for a bad value (nothing changes); ApiError 404 for an unknown feature.
   */
  async updateFeature(projectId: number, featureId: number, patch: FeaturePatch): Promise<FeatureView> {
    const checked = validateFeaturePatch(patch);
    return this.write(projectId, async (tx) => {
      const existing = await this.findFeature(tx, projectId, featureId);
      const merged = mergeFeature(featureValues(existing), checked);
      const [row] = await tx
        .update(features)
        .set({ ...merged, updatedAt: this.clock.now() })
        .where(eq(features.id, featureId))
        .returning();
      return featureView(row!);
    });
  }

  /**
   * Spec B `DELETE /features/{featureId}`: removes the feature from every plan holding it and from the project,
   * permanently, in one transaction (the plans it left get a new `updatedAt`).
   * @throws ApiError 404 for an unknown feature.
   */
  async deleteFeature(projectId: number, featureId: number): Promise<void> {
    await this.write(projectId, async (tx) => {
      await this.findFeature(tx, projectId, featureId);
      const removed = await tx
        .delete(planFeatures)
        .where(eq(planFeatures.featureId, featureId))
        .returning({ planId: planFeatures.planId });
      await tx.delete(features).where(eq(features.id, featureId));
      const planIds = [...new Set(removed.map((r) => r.planId))];
      if (planIds.length > 0)
        await tx.update(plans).set({ updatedAt: this.clock.now() }).where(inArray(plans.id, planIds));
    });
  }

  /**
   * Puts feature `featureId` on plan `planId` with `multiplier` (default 1; > 0, at most 4 decimal places).
   * @throws ValidationError 400 for a bad multiplier; ApiError 404 for an unknown plan or feature; 409 `conflict`
   * when the feature is already on the plan.
   */
  async addFeatureToPlan(
    projectId: number,
    planId: number,
    featureId: number,
    multiplier = 1,
  ): Promise<PlanFeatureView> {
    checkMultiplier(multiplier);
    return this.write(projectId, async (tx) => {
      await this.findPlan(tx, projectId, planId);
      const feature = await this.findFeature(tx, projectId, featureId);
      const [existing] = await tx
        .select({ id: planFeatures.id })
        .from(planFeatures)
        .where(and(eq(planFeatures.planId, planId), eq(planFeatures.featureId, featureId)));
      if (existing) throw featureAlreadyOnPlan(planId, featureId);
      const now = this.clock.now();
      const [row] = await tx
        .insert(planFeatures)
        .values({ projectId, planId, featureId, multiplier, createdAt: now })
        .returning();
      await tx.update(plans).set({ updatedAt: now }).where(eq(plans.id, planId));
      return planFeatureView(row!, feature);
    });
  }

  /**
   * Changes the multiplier of feature `featureId` on plan `planId` (the association keeps its id).
   * @throws ValidationError 400 for a bad multiplier; ApiError 404 for an unknown plan, or a feature not on it.
   */
  async setPlanFeatureMultiplier(
    projectId: number,
    planId: number,
    featureId: number,
    multiplier: number,
  ): Promise<PlanFeatureView> {
    checkMultiplier(multiplier);
    return this.write(projectId, async (tx) => {
      await this.findPlan(tx, projectId, planId);
      const feature = await this.findFeature(tx, projectId, featureId);
      const now = this.clock.now();
      const [row] = await tx
        .update(planFeatures)
        .set({ multiplier })
        .where(and(eq(planFeatures.planId, planId), eq(planFeatures.featureId, featureId)))
        .returning();
      if (!row) throw planFeatureNotFound(planId, featureId);
      await tx.update(plans).set({ updatedAt: now }).where(eq(plans.id, planId));
      return planFeatureView(row, feature);
    });
  }

  /**
   * Takes feature `featureId` off plan `planId` (the feature stays in the project).
   * @throws ApiError 404 for an unknown plan, or a feature not on it.
   */
  async removeFeatureFromPlan(projectId: number, planId: number, featureId: number): Promise<void> {
    await this.write(projectId, async (tx) => {
      await this.findPlan(tx, projectId, planId);
      await this.findFeature(tx, projectId, featureId);
      const removed = await tx
        .delete(planFeatures)
        .where(and(eq(planFeatures.planId, planId), eq(planFeatures.featureId, featureId)))
        .returning({ id: planFeatures.id });
      if (removed.length === 0) throw planFeatureNotFound(planId, featureId);
      await tx.update(plans).set({ updatedAt: this.clock.now() }).where(eq(plans.id, planId));
    });
  }

  /**
   * Runs `fn` in one transaction that first bumps the project's `catalogVersion`, which also takes the project's row
   * lock (writes of a project are serialized). A transaction that fails leaves the version as it was.
   */
  private write<T>(projectId: number, fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction(async (tx) => {
      await bumpCatalogVersion(tx, projectId);
      return fn(tx);
    });
  }

  private async findPlan(ex: Executor, projectId: number, planId: number): Promise<PlanRow> {
    const [row] = await ex
      .select()
      .from(plans)
      .where(and(eq(plans.id, planId), eq(plans.projectId, projectId)))
      .limit(1);
    if (!row) throw planNotFound(planId);
    return row;
  }

  private async findFeature(ex: Executor, projectId: number, featureId: number): Promise<FeatureRow> {
    const [row] = await ex
      .select()
      .from(features)
      .where(and(eq(features.id, featureId), eq(features.projectId, projectId)))
      .limit(1);
    if (!row) throw featureNotFound(featureId);
    return row;
  }

  private async planView(ex: Executor, row: PlanRow): Promise<PlanView> {
    const [view] = await this.planViews(ex, [row], row.projectId);
    return view!;
  }

  /** Builds the views of `rows` (plans of one project) with one query for their assignments. */
  private async planViews(ex: Executor, rows: PlanRow[], projectId: number): Promise<PlanView[]> {
    if (rows.length === 0) return [];
    const ids = rows.map((r) => r.id);
    const assigned = await ex
      .select({ link: planFeatures, feature: features })
      .from(planFeatures)
      .innerJoin(features, eq(features.id, planFeatures.featureId))
      .where(
        and(
          eq(planFeatures.projectId, projectId),
          rows.length === 1 ? eq(planFeatures.planId, ids[0]!) : inArray(planFeatures.planId, ids),
        ),
      )
      .orderBy(asc(planFeatures.id));
    const byPlan = new Map<number, PlanFeatureView[]>();
    for (const { link, feature } of assigned) {
      const list = byPlan.get(link.planId) ?? [];
      list.push(planFeatureView(link, feature));
      byPlan.set(link.planId, list);
    }
    return rows.map((row) => ({
      id: row.id,
      name: row.name,
      description: row.description,
      basePrice: row.basePrice,
      isPopular: row.isPopular,
      isVisible: row.isVisible,
      isFree: row.isFree,
      planFeatures: byPlan.get(row.id) ?? [],
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    }));
  }
}

/**
 * Adds one to the project's `catalog_version` inside `tx`, locking its row until `tx` ends. Every transaction that
 * changes a project's plans, features or assignments calls it first.
 */
export async function bumpCatalogVersion(tx: Executor, projectId: number): Promise<void> {
  await tx
    .update(projects)
    .set({ catalogVersion: sql`${projects.catalogVersion} + 1` })
    .where(eq(projects.id, projectId));
}

function planValues(row: PlanRow): PlanValues {
  return {
    name: row.name,
    description: row.description,
    basePrice: row.basePrice,
    isPopular: row.isPopular,
    isVisible: row.isVisible,
    isFree: row.isFree,
  };
}

function featureValues(row: FeatureRow): FeatureValues {
  return {
    name: row.name,
    description: row.description,
    basePrice: row.basePrice,
    featureType: row.featureType,
    isCountable: row.isCountable,
    countableData: row.countableData ?? null,
  };
}

function featureView(row: FeatureRow): FeatureView {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    basePrice: row.basePrice,
    featureType: row.featureType,
    isCountable: row.isCountable,
    countableData: row.countableData ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function planFeatureView(link: PlanFeatureRow, feature: FeatureRow): PlanFeatureView {
  return { id: link.id, multiplier: link.multiplier, feature: featureView(feature) };
}
