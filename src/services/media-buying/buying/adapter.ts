/**
 * Ad platforms behind adapters (spec "Media-buy change outcomes", "Errors"): the MCP buying tools send every media buy
 * and change through an {@link AdPlatformAdapter}, which answers with the platform's outcome. The built-in
 * {@link SimulatedAdPlatform} is the default; its outcome faults are set by the operator per storefront or sales agent
 * (`ad_platform_faults`, see `db/buying.ts`), so every row of the outcome table can be reached, and a storefront's
 * product discovery can fail (MCP `get_products`: a failed source).
 *
 * Adapters take the caller's transaction: the simulator reads its faults and settings in it; a real adapter would
 * ignore it and call its platform's API.
 */
import { and, eq, or, sql } from 'drizzle-orm';
import { type Executor, NamedStatement } from '../../../platform/database.ts';
import {
  type AdPlatformFaults,
  adPlatformFaults,
  type DestinationProfile,
  type MutationFault,
  type SalesAgentCapability,
  type SourceRejection,
  salesAgents,
  storefrontBuyingSettings,
  storefronts,
} from '../db/schema.ts';
import { isGap, referenceRate } from './fx.ts';

/** Which storefront and sales agent a call is for (internal ids). */
export interface PlatformScope {
  storefrontId: number;
  salesAgentId: number;
}

/** What an ad platform declares about a sales agent's buys. */
export interface PlatformCapabilities {
  /** The operations on live buys (AdCP `update_media_buy` capabilities). */
  operations: readonly SalesAgentCapability[];
  /** Targeting dimensions taken (AdCP `targeting_overlay` keys); null: any. */
  targeting: readonly string[] | null;
  /** A managed ad server (account link required for creatives, destination profile). */
  managed: boolean;
  /** New buys wait for the operator's approval before dispatch. */
  approvalRequired: boolean;
  destinationProfile: DestinationProfile | null;
}

/** A media buy as sent to the platform. */
export interface PlatformOrder {
  mediaBuyId: string;
  currency: string;
  totalBudgetMinor: number;
  startTime: Date;
  endTime: Date;
  packages: { packageId: string; budgetMinor: number }[];
}

/** A change of a live order (only the fields that change). */
export interface OrderChange {
  totalBudgetMinor?: number;
  startTime?: Date;
  endTime?: Date;
}

/**
 * The platform's answer to a create or change: accepted, or failed with the spec's `mutation_outcome` (`unknown`: sent,
 * result unknown; `rolled_back`: sent, then removed; `not_dispatched`: refused before anything was sent) and, when
 * the platform gave one, its own rejection (code passed through).
 */
export type DispatchResult =
  | { status: 'accepted'; platformRef: string }
  | { status: 'failed'; outcome: MutationFault; rejection?: SourceRejection };

/** A creative as sent to the platform for review. */
export interface CreativeSubmission {
  /** The buyer's creative id. */
  creativeId: string;
  formatId: string;
  assets: Record<string, unknown>;
}

/** The platform's review of one creative. */
export type CreativeReview =
  | { creativeId: string; accepted: true }
  | { creativeId: string; accepted: false; code: string; message: string };

/** The spend a platform reports for a buy so far: minor units, and its currency (null: the platform gave none). */
export interface SpendToDate {
  spendMinor: number;
  currency: string | null;
}

/** An ad platform (module comment). */
export interface AdPlatformAdapter {
  /** What the platform declares for a sales agent. */
  capabilities(tx: Executor, scope: PlatformScope): Promise<PlatformCapabilities>;
  /** Sends a new media buy. */
  createOrder(tx: Executor, scope: PlatformScope, order: PlatformOrder): Promise<DispatchResult>;
  /** Changes a live order's budget or flight. */
  updateOrder(
    tx: Executor,
    scope: PlatformScope,
    mediaBuyId: string,
    change: OrderChange,
  ): Promise<DispatchResult>;
  /** Pauses (true) or resumes (false) a live order. */
  setPaused(tx: Executor, scope: PlatformScope, mediaBuyId: string, paused: boolean): Promise<DispatchResult>;
  /** Cancels a live order. */
  cancelOrder(tx: Executor, scope: PlatformScope, mediaBuyId: string): Promise<DispatchResult>;
  /** Reviews creatives (one review per submission, in order). */
  syncCreatives(
    tx: Executor,
    scope: PlatformScope,
    creatives: CreativeSubmission[],
  ): Promise<CreativeReview[]>;
  /** Today's rate converting one unit of `from` into `to`, or null when the platform has none. */
  fxRate(tx: Executor, scope: PlatformScope, from: string, to: string): Promise<number | null>;
  /**
   * The storefronts (public ids) among `storefrontIds` whose platform does not answer product discovery now, each
   * with the platform's rejection (its own code, passed through). `stateVersion` is the discovery state version read
   * for the call (`catalog_versions.version`, moved by every change of the catalog and of the simulator's faults): an
   * adapter whose answer depends on the database only may reuse an answer given for the same version.
   */
  discoveryFailures(
    executor: Executor,
    storefrontIds: readonly string[],
    stateVersion: number,
  ): Promise<Map<string, SourceRejection>>;
  /** What a buy has spent so far (the `delivered` minor units, as the caller counts them). */
  spendToDate(
    tx: Executor,
    scope: PlatformScope,
    deliveredMinor: number,
    currency: string,
  ): Promise<SpendToDate>;
}

/**
 * The faults in force for a scope: the storefront's row, overridden field by field by the sales agent's.
 */
export async function faultsOf(tx: Executor, scope: PlatformScope): Promise<AdPlatformFaults> {
  const rows = await tx
    .select()
    .from(adPlatformFaults)
    .where(
      or(
        and(eq(adPlatformFaults.scopeKind, 'storefront'), eq(adPlatformFaults.scopeId, scope.storefrontId)),
        and(eq(adPlatformFaults.scopeKind, 'sales_agent'), eq(adPlatformFaults.scopeId, scope.salesAgentId)),
      ),
    );
  const storefront = rows.find((r) => r.scopeKind === 'storefront')?.faults ?? {};
  const agent = rows.find((r) => r.scopeKind === 'sales_agent')?.faults ?? {};
  return { ...storefront, ...agent };
}

const TRANSIENT_REFUSAL: SourceRejection = {
  code: 'SERVICE_UNAVAILABLE',
  message: 'The ad platform refused the request before anything was sent; try again later.',
  recovery: 'transient',
};

/**
 * The built-in ad platform. It accepts every order and change (platform reference `sim_<media buy id>`) unless a
 * fault says otherwise: `create` / `update` (update, pause, resume and cancel) give their outcome, `rejectCreate`
 * refuses creates with the platform's own code, `creativeRejections` reject named creatives, `fxRateGaps` remove
 * pairs from its reference rates (`fx.ts`), `unresolvedSpend` reports spend without a currency. Display creatives
 * need a click URL and an image matching their format's size (`display_WIDTHxHEIGHT`).
 */
export class SimulatedAdPlatform implements AdPlatformAdapter {
  /**
   * The storefronts' `discovery` faults as read at one discovery state version: every write of a fault row moves that
   * version (a trigger), so an answer for the version a call read is the database's answer for that call, on any
   * instance.
   */
  private discovery: { version: number; failures: Map<string, SourceRejection> } | undefined;
  private readonly discoveryFaults = new NamedStatement<{ storefrontId: string; rejection: SourceRejection }>(
    'mb_sim_discovery_faults',
    sql`select s.public_id as "storefrontId", f.faults->'discovery' as rejection
      from ${adPlatformFaults} f join ${storefronts} s on s.id = f.scope_id
      where f.scope_kind = 'storefront' and f.faults ? 'discovery'`,
  );

  async discoveryFailures(
    executor: Executor,
    storefrontIds: readonly string[],
    stateVersion: number,
  ): Promise<Map<string, SourceRejection>> {
    let known = this.discovery;
    if (known?.version !== stateVersion) {
      const rows = await this.discoveryFaults.rows(executor);
      known = {
        version: stateVersion,
        failures: new Map(rows.map((r) => [r.storefrontId, r.rejection])),
      };
      this.discovery = known;
    }
    const failed = new Map<string, SourceRejection>();
    for (const id of storefrontIds) {
      const rejection = known.failures.get(id);
      if (rejection) failed.set(id, rejection);
    }
    return failed;
  }

  async capabilities(tx: Executor, scope: PlatformScope): Promise<PlatformCapabilities> {
    const [agent] = await tx
      .select({ capabilities: salesAgents.capabilities })
      .from(salesAgents)
      .where(eq(salesAgents.id, scope.salesAgentId));
    const [settings] = await tx
      .select()
      .from(storefrontBuyingSettings)
      .where(eq(storefrontBuyingSettings.storefrontId, scope.storefrontId));
    return {
      operations: agent?.capabilities ?? [],
      targeting: settings?.supportedTargeting ?? null,
      managed: settings?.managed ?? false,
      approvalRequired: settings?.approvalRequired ?? false,
      destinationProfile: settings?.destinationProfile ?? null,
    };
  }

  private async outcome(
    tx: Executor,
    scope: PlatformScope,
    mediaBuyId: string,
    kind: 'create' | 'update',
  ): Promise<DispatchResult> {
    const faults = await faultsOf(tx, scope);
    if (kind === 'create' && faults.rejectCreate)
      return { status: 'failed', outcome: 'not_dispatched', rejection: faults.rejectCreate };
    const fault = faults[kind];
    if (fault === 'not_dispatched') return { status: 'failed', outcome: fault, rejection: TRANSIENT_REFUSAL };
    if (fault) return { status: 'failed', outcome: fault };
    return { status: 'accepted', platformRef: `sim_${mediaBuyId}` };
  }

  createOrder(tx: Executor, scope: PlatformScope, order: PlatformOrder): Promise<DispatchResult> {
    return this.outcome(tx, scope, order.mediaBuyId, 'create');
  }

  updateOrder(tx: Executor, scope: PlatformScope, mediaBuyId: string): Promise<DispatchResult> {
    return this.outcome(tx, scope, mediaBuyId, 'update');
  }

  setPaused(tx: Executor, scope: PlatformScope, mediaBuyId: string): Promise<DispatchResult> {
    return this.outcome(tx, scope, mediaBuyId, 'update');
  }

  cancelOrder(tx: Executor, scope: PlatformScope, mediaBuyId: string): Promise<DispatchResult> {
    return this.outcome(tx, scope, mediaBuyId, 'update');
  }

  async syncCreatives(
    tx: Executor,
    scope: PlatformScope,
    creatives: CreativeSubmission[],
  ): Promise<CreativeReview[]> {
    const faults = await faultsOf(tx, scope);
    return creatives.map((c): CreativeReview => {
      const rejected = faults.creativeRejections?.find((r) => r.creativeId === c.creativeId);
      if (rejected)
        return { creativeId: c.creativeId, accepted: false, code: rejected.code, message: rejected.message };
      const size = /^display_(\d+)x(\d+)$/.exec(c.formatId);
      if (size) {
        const image = c.assets.image as { width?: unknown; height?: unknown } | undefined;
        if (!(c.assets.click_url as { url?: unknown } | undefined)?.url)
          return {
            creativeId: c.creativeId,
            accepted: false,
            code: 'X_PLATFORM_CREATIVE_MISSING_CLICK_URL',
            message: 'A display creative needs a click_url asset.',
          };
        if (image?.width !== Number(size[1]) || image?.height !== Number(size[2]))
          return {
            creativeId: c.creativeId,
            accepted: false,
            code: 'X_PLATFORM_CREATIVE_SIZE_MISMATCH',
            message: `The image must be ${size[1]}x${size[2]} for format ${c.formatId}.`,
          };
      }
      return { creativeId: c.creativeId, accepted: true };
    });
  }

  async fxRate(tx: Executor, scope: PlatformScope, from: string, to: string): Promise<number | null> {
    if (from === to) return 1;
    const faults = await faultsOf(tx, scope);
    return isGap(faults.fxRateGaps, from, to) ? null : referenceRate(from, to);
  }

  async spendToDate(
    tx: Executor,
    scope: PlatformScope,
    deliveredMinor: number,
    currency: string,
  ): Promise<SpendToDate> {
    const faults = await faultsOf(tx, scope);
    return { spendMinor: deliveredMinor, currency: faults.unresolvedSpend ? null : currency };
  }
}
