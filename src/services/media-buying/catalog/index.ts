/**
 * Part 2's buying and selling records: the catalog (storefronts, sales agents, pricing rules, products), the buyer's
 * records (Buyer Setup, campaigns, media buys, creatives, cohorts, feedback, measurement), their offset lists,
 * discovery and the ad-platform delivery. Other folders import this module only through this file.
 */
export {
  ACCOUNT_LINK_DECISIONS,
  type AccountLinkDecision,
  type Acting,
  BUYER_SETUP_GUARD,
  Catalog,
  type ProductInput,
  platformDomainsOf,
} from './catalog.ts';
export { DeliveryRunner, SimulatedAdPlatform, simulateDeliveryTask } from './delivery.ts';
export { Discovery, NEW_DISCOVERY } from './discovery.ts';
export {
  DiscoveryAccountError,
  DiscoveryPages,
  type FoundDiscovery,
  type ProductCandidate,
  type ProductsAccount,
  type ProductsPageItem,
} from './discovery-pages.ts';
export { BuyerLists, DEFAULT_TAKE, LIST_CAPS } from './lists.ts';
export { CURRENCIES, convertMinor, fromMinor, toMinor } from './money.ts';
export * from './views.ts';
