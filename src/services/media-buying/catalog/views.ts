/**
 * REST views of the part 2 records (camelCase, AdCP 3.x field names where the spec shows none): money as decimal
 * major units with its ISO 4217 currency ({@link fromMinor}), instants as ISO 8601 strings, ids as public ids.
 */
import type {
  advertiserAccounts,
  campaigns,
  creatives,
  humanFeedback,
  measurementRecords,
  mediaBuys,
  packages,
  pricingRules,
  products,
  salesAgents,
  storefronts,
  testCohorts,
} from '../db/schema.ts';
import { fromMinor } from './money.ts';

/** A storefront as its seller sees it. */
export function storefrontView(row: typeof storefronts.$inferSelect) {
  return {
    id: row.publicId,
    name: row.name,
    status: row.status,
    adapterMode: row.adapterMode,
    currency: row.currency,
    createdAt: row.createdAt.toISOString(),
  };
}

/** A sales agent with its declared capabilities and whether a pricing rule exists. */
export function salesAgentView(
  row: typeof salesAgents.$inferSelect,
  storefrontPublicId: string,
  rule: typeof pricingRules.$inferSelect | null,
) {
  return {
    id: row.publicId,
    storefrontId: storefrontPublicId,
    name: row.name,
    agentUrl: row.agentUrl,
    capabilities: row.capabilities,
    currency: row.currency,
    pricingConfigured: rule !== null,
    pricingRule: rule ? pricingRuleView(rule, row.publicId) : null,
    createdAt: row.createdAt.toISOString(),
  };
}

/** A pricing rule: the platform fee in basis points. */
export function pricingRuleView(row: typeof pricingRules.$inferSelect, salesAgentPublicId: string) {
  return {
    id: row.publicId,
    salesAgentId: salesAgentPublicId,
    platformFeeBps: row.platformFeeBps,
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** An AdCP product (camelCase): `productId`, formats, pricing options, delivery type, publisher properties. */
export function productView(row: typeof products.$inferSelect, storefrontPublicId: string) {
  return {
    productId: row.publicId,
    storefrontId: storefrontPublicId,
    name: row.name,
    description: row.description,
    deliveryType: row.deliveryType,
    channels: row.channels,
    formatIds: row.formatIds,
    publisherProperties: row.publisherProperties,
    pricingOptions: row.pricingOptions,
    status: row.status,
    createdAt: row.createdAt.toISOString(),
  };
}

/** An advertiser account (AdCP `account`; the storefront account link). */
export function advertiserAccountView(
  row: typeof advertiserAccounts.$inferSelect,
  refs: { advertiserId: string; storefrontId: string; sellerAccountId: string },
) {
  return {
    accountId: row.publicId,
    name: row.name,
    advertiserId: refs.advertiserId,
    storefrontId: refs.storefrontId,
    sellerAccountId: refs.sellerAccountId,
    status: row.status,
    operator: row.operator,
    currency: row.currency,
    /** The outstanding balance the seller recorded, decimal major units of `currency`. */
    balanceDue: fromMinor(row.balanceDueMinor, row.currency),
    revision: row.revision,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** A campaign: `budget.total` in decimal major units of `budget.currency`. */
export function campaignView(row: typeof campaigns.$inferSelect, advertiserPublicId: string) {
  return {
    id: row.publicId,
    advertiserId: advertiserPublicId,
    name: row.name,
    status: row.status,
    budget: { total: fromMinor(row.budgetTotalMinor, row.currency), currency: row.currency },
    flightStart: row.flightStart.toISOString(),
    flightEnd: row.flightEnd.toISOString(),
    createdAt: row.createdAt.toISOString(),
  };
}

/** A package of a media buy (AdCP `package`). */
export function packageView(row: typeof packages.$inferSelect, productPublicId: string, currency: string) {
  return {
    packageId: row.publicId,
    productId: productPublicId,
    pricingOptionId: row.pricingOptionId,
    budget: fromMinor(row.budgetMinor, currency),
    impressions: row.impressions,
    paused: row.paused,
    canceled: row.canceled,
  };
}

/** A media buy (AdCP `media-buy`, camelCase) with the seller account persisted on it. */
export function mediaBuyView(
  row: typeof mediaBuys.$inferSelect,
  refs: {
    advertiserId: string;
    campaignId: string;
    storefrontId: string;
    salesAgentId: string;
    sellerAccountId: string;
    accountId: string | null;
  },
  pkgs: ReturnType<typeof packageView>[],
) {
  return {
    mediaBuyId: row.publicId,
    name: row.name,
    status: row.status,
    advertiserId: refs.advertiserId,
    campaignId: refs.campaignId,
    storefrontId: refs.storefrontId,
    salesAgentId: refs.salesAgentId,
    sellerAccountId: refs.sellerAccountId,
    accountId: refs.accountId,
    operator: row.operator,
    currency: row.currency,
    totalBudget: fromMinor(row.totalBudgetMinor, row.currency),
    startTime: row.startTime.toISOString(),
    endTime: row.endTime.toISOString(),
    revision: row.revision,
    confirmedAt: row.confirmedAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    packages: pkgs,
  };
}

/** A creative (AdCP `creative-asset`). */
export function creativeView(row: typeof creatives.$inferSelect, advertiserPublicId: string) {
  return {
    creativeId: row.publicId,
    advertiserId: advertiserPublicId,
    name: row.name,
    formatId: row.formatId,
    assets: row.assets,
    status: row.status,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** A test cohort. */
export function testCohortView(row: typeof testCohorts.$inferSelect, advertiserPublicId: string) {
  return {
    id: row.publicId,
    advertiserId: advertiserPublicId,
    name: row.name,
    holdoutPercent: row.holdoutPercent,
    status: row.status,
    createdAt: row.createdAt.toISOString(),
  };
}

/** A human feedback entry. */
export function humanFeedbackView(
  row: Pick<typeof humanFeedback.$inferSelect, 'publicId' | 'rating' | 'comment' | 'createdAt'>,
  refs: { mediaBuyId: string | null; authorId: string | null },
) {
  return {
    id: row.publicId,
    mediaBuyId: refs.mediaBuyId,
    authorId: refs.authorId,
    rating: row.rating,
    comment: row.comment,
    createdAt: row.createdAt.toISOString(),
  };
}

/** A measurement-engine record (a study or an event source). */
export function measurementView(row: typeof measurementRecords.$inferSelect) {
  return {
    id: row.publicId,
    kind: row.kind,
    name: row.name,
    status: row.status,
    details: row.details,
    createdAt: row.createdAt.toISOString(),
  };
}
