/**
 * Creatives synced to a storefront's ad server (spec "Errors": `MANAGED_ACCOUNT_LINKAGE_REQUIRED`, the four
 * `destination_*` codes, `X_PLATFORM_CREATIVE_*`; AdCP `sync_creatives`). Per creative, in order:
 *
 * 1. a managed storefront (`storefront_buying_settings.managed`) needs an active account link of the creative's
 *    advertiser: else `MANAGED_ACCOUNT_LINKAGE_REQUIRED` (`correctable`: check `list_accounts`, act by link status);
 * 2. a video creative (`format_id.id` starting `video`) on a managed storefront with a destination profile:
 *    `destination_profile_not_certified` (format not certified for the route, `terminal`: do not retry the route),
 *    `destination_profile_rejected` (VAST version outside the profile, or `missing:vastVersion`), then
 *    `destination_rendition_required` (the file's size is not a rendition the destination serves: provide one);
 * 3. the ad platform's review (`X_PLATFORM_CREATIVE_*`, `correctable`).
 *
 * A `delete_missing` sync that mixes admitted and rejected creatives forwards nothing
 * (`destination_destructive_sync_blocked`); otherwise admitted creatives are stored (by the buyer's `creative_id`,
 * per advertiser) as `approved`, and with `delete_missing` the advertiser's other synced creatives are archived.
 */
import canonicalize from 'canonicalize';
import { and, eq, isNotNull, ne, notInArray } from 'drizzle-orm';
import type { Clock } from '../../../platform/clock.ts';
import type { Executor } from '../../../platform/database.ts';
import { prefixedHexId } from '../../../platform/ids.ts';
import type { Acting } from '../catalog/index.ts';
import {
  advertiserAccounts,
  advertisers,
  creatives,
  type DestinationProfile,
  storefrontBuyingSettings,
} from '../db/schema.ts';
import type { Organizations } from '../organizations/index.ts';
import type { AdPlatformAdapter } from './adapter.ts';
import { accountNotFound, BuyingRefusal } from './errors.ts';

/** A creative of a sync (AdCP `creative-asset`, the fields used here). */
export interface SyncedCreative {
  creativeId: string;
  name: string;
  formatId: { agentUrl: string; id: string };
  assets: Record<string, unknown>;
}

/** One creative's result (AdCP `sync-creatives-response` item). */
export interface CreativeResult {
  creative_id: string;
  action: 'created' | 'updated' | 'unchanged' | 'failed' | 'deleted';
  status?: 'approved';
  platform_id?: string;
  errors?: { code: string; message: string; recovery: 'correctable' | 'terminal' }[];
}

type Failure = NonNullable<CreativeResult['errors']>[number];

/**
 * The destination profile's verdict on a video creative (module comment, step 2), or undefined when it passes (or
 * is not a video).
 */
function destinationFailure(c: SyncedCreative, profile: DestinationProfile): Failure | undefined {
  if (!c.formatId.id.startsWith('video')) return undefined;
  // AdCP assets: the `video` file (width, height) and its `vast` tag (vast_version).
  const video = (c.assets.video ?? {}) as { width?: unknown; height?: unknown };
  const vastVersion = ((c.assets.vast ?? {}) as { vast_version?: unknown }).vast_version;
  if (!profile.certifiedFormatIds.includes(c.formatId.id))
    return {
      code: 'destination_profile_not_certified',
      message: `The managed ad-server route has no certified evidence for format ${c.formatId.id}; do not retry this route.`,
      recovery: 'terminal',
    };
  if (typeof vastVersion !== 'string')
    return {
      code: 'destination_profile_rejected',
      message: `The creative fails the destination profile: missing:vastVersion (accepted VAST ${profile.vastVersions.join(', ')}).`,
      recovery: 'correctable',
    };
  if (!profile.vastVersions.includes(vastVersion))
    return {
      code: 'destination_profile_rejected',
      message: `The creative fails the destination profile: vastVersion ${vastVersion} not in ${profile.vastVersions.join(', ')}.`,
      recovery: 'correctable',
    };
  if (!profile.renditions.includes(`${video.width}x${video.height}`))
    return {
      code: 'destination_rendition_required',
      message: `The source could meet the destination after a rendition; provide a file in one of ${profile.renditions.join(', ')}.`,
      recovery: 'correctable',
    };
  return undefined;
}

/** Creatives through the storefront's ad server (module comment). */
export class CreativeDesk {
  constructor(
    private readonly clock: Clock,
    private readonly organizations: Organizations,
    private readonly adapter: AdPlatformAdapter,
  ) {}

  /**
   * Syncs creatives of the account's advertiser to its storefront (`storefrontId`: the storefront endpoint's, else the
   * account link's).
   * @throws BuyingRefusal `ACCOUNT_NOT_FOUND`, `destination_destructive_sync_blocked`.
   */
  async sync(
    tx: Executor,
    acting: Acting,
    input: {
      storefrontId: number | null;
      account: { accountId: string } | { brandId: string | undefined };
      creatives: SyncedCreative[];
      deleteMissing: boolean;
    },
  ): Promise<CreativeResult[]> {
    const { advertiserId, storefrontId, link } = await this.resolve(tx, acting, input);
    const [settings] = await tx
      .select()
      .from(storefrontBuyingSettings)
      .where(eq(storefrontBuyingSettings.storefrontId, storefrontId));
    const managed = settings?.managed ?? false;
    const profile = managed ? (settings?.destinationProfile ?? null) : null;
    const failures = new Map<string, Failure>();
    for (const c of input.creatives) {
      if (managed && link?.status !== 'active') {
        failures.set(c.creativeId, {
          code: 'MANAGED_ACCOUNT_LINKAGE_REQUIRED',
          message: `This managed storefront needs an active account link (now: ${link?.status ?? 'none'}); check list_accounts, then act by its status.`,
          recovery: 'correctable',
        });
        continue;
      }
      const failure = profile ? destinationFailure(c, profile) : undefined;
      if (failure) failures.set(c.creativeId, failure);
    }
    const admitted = input.creatives.filter((c) => !failures.has(c.creativeId));
    const scope = { storefrontId, salesAgentId: 0 };
    const reviews = await this.adapter.syncCreatives(
      tx,
      scope,
      admitted.map((c) => ({ creativeId: c.creativeId, formatId: c.formatId.id, assets: c.assets })),
    );
    for (const review of reviews)
      if (!review.accepted)
        failures.set(review.creativeId, {
          code: review.code,
          message: review.message,
          recovery: 'correctable',
        });
    if (input.deleteMissing && failures.size > 0 && failures.size < input.creatives.length)
      throw new BuyingRefusal({
        code: 'destination_destructive_sync_blocked',
        message:
          'A delete_missing sync mixed admitted and rejected creatives; nothing was forwarded. Fix or drop the rejected ones and resubmit.',
        recovery: 'correctable',
        field: 'delete_missing',
        details: {
          admitted: input.creatives.filter((c) => !failures.has(c.creativeId)).map((c) => c.creativeId),
          rejected: [...failures].map(([creative_id, e]) => ({ creative_id, code: e.code })),
        },
        buyer_reason: {
          code: 'INVALID_REQUEST',
          message: 'Nothing was forwarded: fix or drop the rejected creatives.',
        },
      });
    const now = this.clock.now();
    const results: CreativeResult[] = [];
    for (const c of input.creatives) {
      const failure = failures.get(c.creativeId);
      results.push(
        failure
          ? { creative_id: c.creativeId, action: 'failed', errors: [failure] }
          : await this.store(tx, acting, { advertiserId, storefrontId }, c, now),
      );
    }
    if (input.deleteMissing && failures.size === 0) {
      const kept = input.creatives.map((c) => c.creativeId);
      const deleted = await tx
        .update(creatives)
        .set({ status: 'archived', updatedAt: now })
        .where(
          and(
            // The account's creatives only: the advertiser's on this storefront.
            eq(creatives.advertiserId, advertiserId),
            eq(creatives.storefrontId, storefrontId),
            isNotNull(creatives.buyerCreativeId),
            ne(creatives.status, 'archived'),
            ...(kept.length > 0 ? [notInArray(creatives.buyerCreativeId, kept)] : []),
          ),
        )
        .returning({ creativeId: creatives.buyerCreativeId, publicId: creatives.publicId });
      for (const d of deleted)
        results.push({ creative_id: d.creativeId!, action: 'deleted', platform_id: d.publicId });
    }
    return results;
  }

  /**
   * The advertiser, storefront and link of a sync: by account id (the link), or by the brand's advertiser id on the
   * storefront endpoint's storefront. @throws BuyingRefusal `ACCOUNT_NOT_FOUND`.
   */
  private async resolve(
    tx: Executor,
    acting: Acting,
    input: { storefrontId: number | null; account: { accountId: string } | { brandId: string | undefined } },
  ): Promise<{
    advertiserId: number;
    storefrontId: number;
    link: typeof advertiserAccounts.$inferSelect | undefined;
  }> {
    // The advertiser and the link: by account id (the link), or by the brand's advertiser id on the storefront.
    let advertiserId: number;
    let storefrontId = input.storefrontId;
    let link: typeof advertiserAccounts.$inferSelect | undefined;
    if ('accountId' in input.account) {
      [link] = await tx
        .select()
        .from(advertiserAccounts)
        .where(
          and(
            eq(advertiserAccounts.publicId, input.account.accountId),
            eq(advertiserAccounts.organizationId, acting.organizationId),
            ...(storefrontId === null ? [] : [eq(advertiserAccounts.storefrontId, storefrontId)]),
          ),
        );
      if (!link) throw accountNotFound(input.account.accountId, 'account');
      advertiserId = link.advertiserId;
      storefrontId = link.storefrontId;
    } else {
      const [advertiser] = await tx
        .select()
        .from(advertisers)
        .where(
          and(
            eq(advertisers.publicId, input.account.brandId ?? ''),
            eq(advertisers.organizationId, acting.organizationId),
          ),
        );
      if (!advertiser || storefrontId === null) throw accountNotFound(undefined, 'account');
      advertiserId = advertiser.id;
      [link] = await tx
        .select()
        .from(advertiserAccounts)
        .where(
          and(
            eq(advertiserAccounts.advertiserId, advertiserId),
            eq(advertiserAccounts.storefrontId, storefrontId),
          ),
        );
    }
    return { advertiserId, storefrontId, link };
  }

  /**
   * Stores an admitted creative (by the buyer's id, per account: advertiser x storefront) as `approved`. A new one is
   * inserted with `ON CONFLICT DO NOTHING`, so a concurrent sync of the same new id waits on the unique index and then
   * updates the row the other made (never a unique violation).
   */
  private async store(
    tx: Executor,
    acting: Acting,
    account: { advertiserId: number; storefrontId: number },
    c: SyncedCreative,
    now: Date,
  ): Promise<CreativeResult> {
    const [inserted] = await tx
      .insert(creatives)
      .values({
        publicId: prefixedHexId('cr'),
        organizationId: acting.organizationId,
        advertiserId: account.advertiserId,
        storefrontId: account.storefrontId,
        name: c.name,
        formatId: c.formatId,
        assets: c.assets,
        status: 'approved',
        buyerCreativeId: c.creativeId,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing({
        target: [creatives.advertiserId, creatives.storefrontId, creatives.buyerCreativeId],
      })
      .returning({ publicId: creatives.publicId });
    let publicId: string;
    let action: CreativeResult['action'];
    if (inserted) {
      publicId = inserted.publicId;
      action = 'created';
    } else {
      const [existing] = await tx
        .select()
        .from(creatives)
        .where(
          and(
            eq(creatives.advertiserId, account.advertiserId),
            eq(creatives.storefrontId, account.storefrontId),
            eq(creatives.buyerCreativeId, c.creativeId),
          ),
        )
        .for('update');
      const same =
        existing!.name === c.name &&
        existing!.status === 'approved' &&
        canonicalize(existing!.formatId) === canonicalize(c.formatId) &&
        // jsonb does not keep key order: compare canonical JSON (RFC 8785).
        canonicalize(existing!.assets) === canonicalize(c.assets);
      publicId = existing!.publicId;
      action = same ? 'unchanged' : 'updated';
      if (!same)
        await tx
          .update(creatives)
          .set({ name: c.name, formatId: c.formatId, assets: c.assets, status: 'approved', updatedAt: now })
          .where(eq(creatives.id, existing!.id));
    }
    if (action !== 'unchanged')
      await this.organizations.audit(
        tx,
        acting.organizationId,
        acting,
        `creative.${action}`,
        'creative',
        publicId,
        {
          creativeId: c.creativeId,
        },
      );
    return { creative_id: c.creativeId, action, status: 'approved', platform_id: publicId };
  }
}
