import type { Clock } from '../../platform/clock.ts';
import type { Tx } from '../../platform/database.ts';
import { bumpCatalogVersion } from './catalog.ts';
import { features, planFeatures, plans } from './db/schema.ts';
import {
  type FeatureCreateInput,
  type PlanCreateInput,
  validateFeatureCreate,
  validatePlanCreate,
} from './pricing-rules.ts';

/** The slug of the demo project created on the first start. */
export const DEMO_PROJECT = { slug: 'demo', name: 'Demo SaaS' } as const;

/**
 * Features of the demo project: every feature type (`Standart`, `Limits`, `Usage Based`), countable and not.
 * Prices in the project's units (US dollars here): a feature's `basePrice` is the price of one multiple of it as an
 * add-on (for `Usage Based`, the price per `countableData.amount` units used).
 */
export const DEMO_FEATURES: readonly (FeatureCreateInput & { key: string })[] = [
  {
    key: 'seats',
    name: 'Team members',
    description: 'People who can sign in to the workspace.',
    basePrice: 8,
    featureType: 'Limits',
    countableData: { unit: 'seat', amount: 1 },
  },
  {
    key: 'projects',
    name: 'Projects',
    description: 'Active projects at the same time.',
    basePrice: 5,
    featureType: 'Limits',
    countableData: { unit: 'project', amount: 3 },
  },
  {
    key: 'storage',
    name: 'File storage',
    description: 'Storage for uploads and exports.',
    basePrice: 2,
    featureType: 'Limits',
    countableData: { unit: 'GB', amount: 5 },
  },
  {
    key: 'api',
    name: 'API requests',
    description: 'Requests to the public API, billed per 1,000 beyond the included amount.',
    basePrice: 0.5,
    featureType: 'Usage Based',
    countableData: { unit: 'request', amount: 1000 },
  },
  {
    key: 'sms',
    name: 'SMS notifications',
    description: 'Text messages sent to your customers, billed per message.',
    basePrice: 0.0075,
    featureType: 'Usage Based',
    countableData: { unit: 'message', amount: 1 },
  },
  {
    key: 'analytics',
    name: 'Analytics dashboard',
    description: 'Usage and revenue charts.',
    basePrice: 0,
    featureType: 'Standart',
  },
  {
    key: 'domain',
    name: 'Custom domain',
    description: 'Serve the workspace from your own domain.',
    basePrice: 10,
    featureType: 'Standart',
  },
  {
    key: 'support',
    name: 'Priority support',
    description: 'Answers within four business hours.',
    basePrice: 25,
    featureType: 'Standart',
  },
  {
    key: 'sso',
    name: 'SAML single sign-on',
    description: 'Sign in through your identity provider.',
    basePrice: 50,
    featureType: 'Standart',
  },
];

/**
 * Plans of the demo project (Free, Pro marked popular, Business) with the multiplier of each feature on them
 * (feature key -> multiplier).
 */
export const DEMO_PLANS: readonly (PlanCreateInput & { features: Record<string, number> })[] = [
  {
    name: 'Free',
    description: 'For individuals trying things out.',
    basePrice: 0,
    isFree: true,
    features: { seats: 1, projects: 1, storage: 1, api: 1, analytics: 1 },
  },
  {
    name: 'Pro',
    description: 'For small teams shipping every week.',
    basePrice: 29,
    isPopular: true,
    features: { seats: 5, projects: 5, storage: 10, api: 50, sms: 1, analytics: 1, domain: 1 },
  },
  {
    name: 'Business',
    description: 'For companies that need control and support.',
    basePrice: 99,
    features: {
      seats: 25,
      projects: 20,
      storage: 100,
      api: 500,
      sms: 1,
      analytics: 1,
      domain: 1,
      support: 1,
      sso: 1,
    },
  },
];

/** Creates the demo features, plans and assignments in project `projectId` inside `tx` (first start). */
export async function seedDemoCatalog(tx: Tx, projectId: number, clock: Clock): Promise<void> {
  await bumpCatalogVersion(tx, projectId);
  const now = clock.now();
  const featureIds = new Map<string, number>();
  for (const { key, ...input } of DEMO_FEATURES) {
    const [row] = await tx
      .insert(features)
      .values({ projectId, ...validateFeatureCreate(input), createdAt: now, updatedAt: now })
      .returning({ id: features.id });
    featureIds.set(key, row!.id);
  }
  for (const { features: assigned, ...input } of DEMO_PLANS) {
    const [plan] = await tx
      .insert(plans)
      .values({ projectId, ...validatePlanCreate(input), createdAt: now, updatedAt: now })
      .returning({ id: plans.id });
    for (const [key, multiplier] of Object.entries(assigned)) {
      const featureId = featureIds.get(key);
      if (featureId === undefined) throw new Error(`demo plan ${input.name} names unknown feature ${key}`);
      await tx
        .insert(planFeatures)
        .values({ projectId, planId: plan!.id, featureId, multiplier, createdAt: now });
    }
  }
}
