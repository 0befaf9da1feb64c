/**
 * Tables of part 3's buying layer (spec 000, "Media-buy change outcomes", "Errors"): what the ad-platform adapters
 * need that part 2's records do not hold.
 *
 * - `ad_platform_faults`: outcome faults the operator sets on the simulator per storefront or per sales agent (the
 *   sales agent's row wins over its storefront's), so every row of the outcome table is reachable. In the database,
 *   not in config: the operator changes them at run time (`PUT /_ops/media-buying/ad-platform-faults/...`) and every
 *   instance must see the same faults.
 * - `storefront_buying_settings`: how a storefront's ad platform behaves for buyers: an operator approval hold on new
 *   buys, a managed ad server (account link required for creatives, destination profile, supported targeting).
 * - `media_buy_dispatches`: what happened when a media buy was sent to its ad platform (held, dispatched, failed with
 *   the source's error, outcome unknown, rolled back).
 *
 * FX reference rates are config (`buying/fx.ts`): they are market data of the simulator, not operator state; a gap in
 * them is a fault (`fxRateGaps`).
 */
import { bigint, boolean, jsonb, pgSchema, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { mediaBuys } from './catalog.ts';
import { storefronts } from './schema.ts';

const mediaBuying = pgSchema('media_buying');
const at = (name: string) => timestamp(name, { withTimezone: true });

/** The three configurable outcomes of a change sent to an ad platform (spec "Media-buy change outcomes"). */
export const MUTATION_FAULTS = ['unknown', 'rolled_back', 'not_dispatched'] as const;
export type MutationFault = (typeof MUTATION_FAULTS)[number];

/** A rejection an ad platform gives (its own code, passed through; the buyer-safe message; how to recover). */
export interface SourceRejection {
  code: string;
  message: string;
  recovery: 'transient' | 'correctable' | 'terminal';
}

/**
 * The faults of one scope (every field optional; an empty object is no fault). `create` / `update`: the outcome of
 * the next creates / updates (each stays until the operator clears it). `rejectCreate`: the platform refuses creates
 * with its own code. `discovery` (a storefront's only): the platform does not answer product discovery, with this
 * rejection (MCP `get_products` shows the storefront as a failed source). `creativeRejections`: per buyer creative id,
 * the platform's `X_PLATFORM_CREATIVE_*` code. `fxRateGaps`: currency pairs (`USD/EUR`, either order) with no rate.
 * `unresolvedSpend`: the platform reports spend without a currency. Every write of these rows moves the catalog
 * version (`catalog_versions`, by a trigger), which product discovery reads.
 */
export interface AdPlatformFaults {
  create?: MutationFault;
  update?: MutationFault;
  rejectCreate?: SourceRejection;
  discovery?: SourceRejection;
  creativeRejections?: { creativeId: string; code: string; message: string }[];
  fxRateGaps?: string[];
  unresolvedSpend?: boolean;
}

/** Scopes a fault row applies to. */
export const FAULT_SCOPES = ['storefront', 'sales_agent'] as const;

/** Simulator faults per storefront or sales agent (module comment). */
export const adPlatformFaults = mediaBuying.table(
  'ad_platform_faults',
  {
    scopeKind: text('scope_kind', { enum: FAULT_SCOPES }).notNull(),
    /** The storefront's or sales agent's internal id. */
    scopeId: bigint('scope_id', { mode: 'number' }).notNull(),
    faults: jsonb('faults').$type<AdPlatformFaults>().notNull(),
    updatedAt: at('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.scopeKind, t.scopeId] })],
);

/**
 * A managed ad server's destination profile for video creatives: the VAST versions it takes, the renditions it can
 * serve (`WIDTHxHEIGHT`), and the certified (format id) routes. Display creatives are not profiled.
 */
export interface DestinationProfile {
  vastVersions: string[];
  renditions: string[];
  certifiedFormatIds: string[];
}

/** Buying settings of a storefront (module comment); a storefront without a row has none of them. */
export const storefrontBuyingSettings = mediaBuying.table('storefront_buying_settings', {
  storefrontId: bigint('storefront_id', { mode: 'number' })
    .primaryKey()
    .references(() => storefronts.id),
  /** New media buys wait for the operator's approval before they are sent to the ad platform. */
  approvalRequired: boolean('approval_required').notNull().default(false),
  /** A managed ad server: creatives need an active account link and pass the destination profile. */
  managed: boolean('managed').notNull().default(false),
  /** Targeting dimensions (AdCP `targeting_overlay` keys) the ad server takes; null: any. */
  supportedTargeting: jsonb('supported_targeting').$type<string[]>(),
  destinationProfile: jsonb('destination_profile').$type<DestinationProfile>(),
  updatedAt: at('updated_at').notNull(),
});

/** Dispatch states of a media buy. */
export const DISPATCH_STATES = ['held', 'dispatched', 'failed', 'outcome_unknown', 'rolled_back'] as const;
export type DispatchState = (typeof DISPATCH_STATES)[number];

/** How a media buy went to its ad platform (module comment). */
export const mediaBuyDispatches = mediaBuying.table('media_buy_dispatches', {
  mediaBuyId: bigint('media_buy_id', { mode: 'number' })
    .primaryKey()
    .references(() => mediaBuys.id),
  state: text('state', { enum: DISPATCH_STATES }).notNull(),
  /** The platform's order reference once dispatched. */
  platformRef: text('platform_ref'),
  /** The source's error when the dispatch failed (`{code, message}`), else null. */
  forwardError: jsonb('forward_error').$type<{ code: string; message: string }>(),
  createdAt: at('created_at').notNull(),
  updatedAt: at('updated_at').notNull(),
});
