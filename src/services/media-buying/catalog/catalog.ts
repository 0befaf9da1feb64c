/**
 * The buying and selling records of part 2 (spec 000, "Resources and fields"; shapes from AdCP 3.x): the storefront
 * side (storefronts, sales agents, pricing rules, products, decisions on account links) and the buyer side (Buyer
 * Setup step 1, campaigns, media buys and packages, creatives, test cohorts, human feedback, measurement records).
 * Every mutation is one transaction of the caller and writes an audit log row in it. Part 3's MCP tools call the same
 * methods.
 */
import { and, asc, eq, inArray, isNull, ne, sql } from 'drizzle-orm';
import { getDomain } from 'tldts';
import type { Clock } from '../../../platform/clock.ts';
import { type Db, type Executor, NamedStatement } from '../../../platform/database.ts';
import { prefixedHexId } from '../../../platform/ids.ts';
import {
  type AccountLinkStatus,
  advertiserAccounts,
  advertisers,
  buyerOperatorIdentities,
  campaigns,
  creatives,
  type FormatId,
  humanFeedback,
  type MeasurementKind,
  measurementRecords,
  mediaBuys,
  organizations,
  type PricingOption,
  type PublisherProperty,
  packages,
  pricingRules,
  products,
  type SalesAgentCapability,
  salesAgents,
  storefronts,
  testCohorts,
} from '../db/schema.ts';
import {
  buyerSetupRequired,
  conflict,
  currencyMismatch,
  fxRateUnavailable,
  insufficientMediaBudget,
  notFound,
  pricingNotConfigured,
  semanticValidation,
} from '../media-buying-errors.ts';
import type { Actor, Organizations } from '../organizations/index.ts';
import { CURRENCIES, convertMinor, fromMinor, toMinor } from './money.ts';

/** Who acts, in which organization (the audit log's actor plus the tenancy). */
export interface Acting extends Actor {
  organizationId: number;
}

/** A decision of a seller on an account link, and the statuses it moves from and to (spec "Storefront account link"). */
export const ACCOUNT_LINK_DECISIONS = {
  approve: { from: ['pending_approval'], to: 'active' },
  reject: { from: ['pending_approval'], to: 'rejected' },
  suspend: { from: ['active', 'payment_required'], to: 'suspended' },
  reactivate: { from: ['suspended'], to: 'active' },
  require_payment: { from: ['active'], to: 'payment_required' },
  mark_paid: { from: ['payment_required'], to: 'active' },
  close: { from: ['pending_approval', 'active', 'payment_required', 'suspended'], to: 'closed' },
} as const satisfies Record<string, { from: readonly AccountLinkStatus[]; to: AccountLinkStatus }>;
export type AccountLinkDecision = keyof typeof ACCOUNT_LINK_DECISIONS;

/** Input of a product (AdCP product fields, camelCase). */
export interface ProductInput {
  name: string;
  description: string;
  deliveryType: 'guaranteed' | 'non_guaranteed';
  channels: string[];
  formatIds: FormatId[];
  publisherProperties: PublisherProperty[];
  pricingOptions: PricingOption[];
  salesAgentId?: string;
}

/** Input of a media buy: a campaign, and packages of products of one storefront (one sales agent). */
export interface MediaBuyInput {
  campaignId: string;
  name?: string;
  startTime?: Date;
  endTime?: Date;
  packages: { productId: string; pricingOptionId: string; budget: number; impressions?: number }[];
  /**
   * ISO 4217 of the package budgets (default: the campaign's). Another currency than the campaign's needs
   * {@link MediaBuyOptions.fxRate} (the MCP tools; REST buys are in the campaign's currency).
   */
  currency?: string;
}

/** How part 3 creates a media buy through {@link Catalog.createMediaBuy}. */
export interface MediaBuyOptions {
  /**
   * The rate converting one unit of `from` into `to` (today's, on the injected clock) for counting a buy in another
   * currency against its campaign's budget. @throws whatever the caller's FX source throws for a missing rate.
   */
  fxRate?: (from: string, to: string) => Promise<number>;
  /** Held for the operator's approval: `pending_start`, unconfirmed (`confirmedAt` null) until dispatched. */
  provisional?: boolean;
}

/**
 * The platform's own domains for Buyer Setup (spec "Buyer Setup": the service never acts as, nor lets a buyer name,
 * its own platform as the operator): each host the platform serves from (public URL, UI origin), the registrable
 * domain of each (its apex: one label under its public suffix in the Public Suffix List, private suffixes such as
 * `herokuapp.com` included, via `tldts`; none for an IP address or `localhost`), and the configured parent domain
 * (`MEDIA_BUYING_COOKIE_DOMAIN`). An operator identity equal to one of them, or under one, is refused.
 * @param hosts host names, any case.
 * @returns lower-case domains, without duplicates.
 */
export function platformDomainsOf(hosts: readonly string[], parentDomain: string | undefined): string[] {
  const out = new Set<string>();
  for (const raw of hosts) {
    const host = raw.toLowerCase();
    out.add(host);
    const apex = getDomain(host, { allowPrivateDomains: true });
    if (apex) out.add(apex);
  }
  if (parentDomain) out.add(parentDomain.toLowerCase());
  return [...out];
}

/** {@link Catalog.operatorIdentity}'s statement, built once and run by name on any executor. */
const operatorIdentityStatement = new NamedStatement<typeof buyerOperatorIdentities.$inferSelect>(
  'mb_operator_identity',
  sql`select organization_id as "organizationId", domain, name, updated_at as "updatedAt"
    from ${buyerOperatorIdentities} where organization_id = ${sql.placeholder('orgId')}`,
);

/**
 * The operator domain of Buyer Account `orgId` (placeholder) as a scalar SQL value, for reading it in the same
 * statement as something else (the idempotency record of an MCP buying tool); checked with
 * {@link Catalog.checkBuyerSetup}.
 */
export const BUYER_SETUP_GUARD = {
  name: 'mb_operator_domain',
  value: sql`select domain from ${buyerOperatorIdentities} where organization_id = ${sql.placeholder('orgId')}`,
};

/** The buying and selling records (module comment). */
export class Catalog {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly organizations: Organizations,
    /** Domains that are this platform's own (never an operator identity): read per use. */
    private readonly platformDomains: () => string[],
  ) {}

  // ---------------------------------------------------------------- storefront side

  /** A storefront of Seller Account `organizationId`. @throws ApiError 404 for an unknown or another's id. */
  async storefront(organizationId: number, publicId: string, executor: Executor = this.db, lock = false) {
    const query = executor
      .select()
      .from(storefronts)
      .where(and(eq(storefronts.publicId, publicId), eq(storefronts.organizationId, organizationId)))
      .limit(1);
    const [row] = lock ? await query.for('update') : await query;
    if (!row) throw notFound('Storefront', publicId);
    return row;
  }

  /**
   * Changes a storefront: name, `adapterMode`, status. `replaced` is final (409 `CONFLICT`); `active` and `archived`
   * move both ways.
   */
  async updateStorefront(
    tx: Executor,
    acting: Acting,
    publicId: string,
    patch: { name?: string; status?: 'active' | 'archived' | 'replaced'; adapterMode?: boolean },
  ) {
    const row = await this.storefront(acting.organizationId, publicId, tx, true);
    if (patch.status !== undefined && patch.status !== row.status && row.status === 'replaced')
      throw conflict('A replaced storefront cannot change status.', { reason: 'storefront_replaced' });
    const [updated] = await tx
      .update(storefronts)
      .set({
        ...(patch.name === undefined ? {} : { name: patch.name }),
        ...(patch.status === undefined ? {} : { status: patch.status }),
        ...(patch.adapterMode === undefined ? {} : { adapterMode: patch.adapterMode }),
      })
      .where(eq(storefronts.id, row.id))
      .returning();
    await this.organizations.audit(
      tx,
      acting.organizationId,
      acting,
      'storefront.updated',
      'storefront',
      publicId,
      {
        ...patch,
      },
    );
    return updated!;
  }

  /** A sales agent of the seller. @throws ApiError 404. */
  async salesAgent(organizationId: number, publicId: string, executor: Executor = this.db) {
    const [row] = await executor
      .select({ agent: salesAgents, storefrontPublicId: storefronts.publicId })
      .from(salesAgents)
      .innerJoin(storefronts, eq(storefronts.id, salesAgents.storefrontId))
      .where(and(eq(salesAgents.publicId, publicId), eq(salesAgents.organizationId, organizationId)))
      .limit(1);
    if (!row) throw notFound('Sales agent', publicId);
    return row;
  }

  /** The sales agents of a storefront with their pricing rules, in creation order. */
  async salesAgentsOf(organizationId: number, storefrontPublicId: string) {
    const sf = await this.storefront(organizationId, storefrontPublicId);
    return this.db
      .select({ agent: salesAgents, rule: pricingRules })
      .from(salesAgents)
      .leftJoin(pricingRules, eq(pricingRules.salesAgentId, salesAgents.id))
      .where(and(eq(salesAgents.storefrontId, sf.id), isNull(salesAgents.archivedAt)))
      .orderBy(asc(salesAgents.id));
  }

  /** Creates a sales agent behind a storefront (currency default: the storefront's). */
  async createSalesAgent(
    tx: Executor,
    acting: Acting,
    storefrontPublicId: string,
    input: { name: string; agentUrl?: string; capabilities: SalesAgentCapability[]; currency?: string },
  ) {
    const sf = await this.storefront(acting.organizationId, storefrontPublicId, tx);
    const [row] = await tx
      .insert(salesAgents)
      .values({
        publicId: prefixedHexId('sa'),
        organizationId: acting.organizationId,
        storefrontId: sf.id,
        name: input.name,
        agentUrl: input.agentUrl ?? null,
        capabilities: [...new Set(input.capabilities)],
        currency: input.currency ?? sf.currency,
        createdAt: this.clock.now(),
      })
      .returning();
    await this.organizations.audit(
      tx,
      acting.organizationId,
      acting,
      'sales_agent.created',
      'sales_agent',
      row!.publicId,
      { storefrontId: sf.publicId, name: input.name },
    );
    return { agent: row!, storefrontPublicId: sf.publicId };
  }

  /** Sets (creates or replaces) the pricing rule of a sales agent. */
  async setPricingRule(tx: Executor, acting: Acting, salesAgentPublicId: string, platformFeeBps: number) {
    const { agent } = await this.salesAgent(acting.organizationId, salesAgentPublicId, tx);
    const now = this.clock.now();
    const [rule] = await tx
      .insert(pricingRules)
      .values({
        publicId: prefixedHexId('pr'),
        organizationId: acting.organizationId,
        salesAgentId: agent.id,
        platformFeeBps,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoUpdate({ target: pricingRules.salesAgentId, set: { platformFeeBps, updatedAt: now } })
      .returning();
    await this.organizations.audit(
      tx,
      acting.organizationId,
      acting,
      'pricing_rule.set',
      'sales_agent',
      salesAgentPublicId,
      { platformFeeBps },
    );
    return rule!;
  }

  /** The pricing rule of a sales agent, or null. */
  async pricingRuleOf(organizationId: number, salesAgentPublicId: string) {
    const { agent } = await this.salesAgent(organizationId, salesAgentPublicId);
    const [rule] = await this.db.select().from(pricingRules).where(eq(pricingRules.salesAgentId, agent.id));
    return rule ?? null;
  }

  /**
   * Creates a product of a storefront. Every pricing option is in the storefront's currency and has a unique id; a
   * named sales agent must be one of the storefront's.
   * @throws ApiError 422 `VALIDATION_ERROR` naming the field; 404 for an unknown storefront.
   */
  async createProduct(tx: Executor, acting: Acting, storefrontPublicId: string, input: ProductInput) {
    const sf = await this.storefront(acting.organizationId, storefrontPublicId, tx);
    const ids = new Set<string>();
    input.pricingOptions.forEach((option, i) => {
      if (option.currency !== sf.currency)
        throw semanticValidation([
          {
            field: `pricingOptions/${i}/currency`,
            location: 'body',
            message: `must be the storefront's currency ${sf.currency}`,
          },
        ]);
      if (ids.has(option.pricingOptionId))
        throw semanticValidation([
          { field: `pricingOptions/${i}/pricingOptionId`, location: 'body', message: 'must be unique' },
        ]);
      if ((option.fixedPrice === undefined) === (option.floorPrice === undefined))
        throw semanticValidation([
          {
            field: `pricingOptions/${i}`,
            location: 'body',
            message: 'needs exactly one of fixedPrice and floorPrice',
          },
        ]);
      ids.add(option.pricingOptionId);
    });
    let salesAgentId: number | null = null;
    if (input.salesAgentId !== undefined) {
      const [agent] = await tx
        .select()
        .from(salesAgents)
        .where(and(eq(salesAgents.publicId, input.salesAgentId), eq(salesAgents.storefrontId, sf.id)));
      if (!agent)
        throw semanticValidation([
          { field: 'salesAgentId', location: 'body', message: 'is not a sales agent of this storefront' },
        ]);
      salesAgentId = agent.id;
    }
    const now = this.clock.now();
    const [row] = await tx
      .insert(products)
      .values({
        publicId: prefixedHexId('prd'),
        organizationId: acting.organizationId,
        storefrontId: sf.id,
        salesAgentId,
        name: input.name,
        description: input.description,
        deliveryType: input.deliveryType,
        channels: input.channels,
        formatIds: input.formatIds,
        publisherProperties: input.publisherProperties,
        pricingOptions: input.pricingOptions,
        status: 'active',
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    await this.organizations.audit(
      tx,
      acting.organizationId,
      acting,
      'product.created',
      'product',
      row!.publicId,
      {
        storefrontId: sf.publicId,
        name: input.name,
      },
    );
    return { product: row!, storefrontPublicId: sf.publicId };
  }

  /**
   * Decides an account link of one of the seller's storefronts ({@link ACCOUNT_LINK_DECISIONS}). Deciding into the
   * status it already has answers it unchanged; any other move is 409 `CONFLICT` (`rejected` and `closed` are final).
   */
  async decideAccountLink(
    tx: Executor,
    acting: Acting,
    accountPublicId: string,
    decision: AccountLinkDecision,
    balanceDue?: number,
  ) {
    const [row] = await tx
      .select()
      .from(advertiserAccounts)
      .where(
        and(
          eq(advertiserAccounts.publicId, accountPublicId),
          eq(advertiserAccounts.sellerOrganizationId, acting.organizationId),
        ),
      )
      .for('update');
    if (!row) throw notFound('Account', accountPublicId);
    const rule = ACCOUNT_LINK_DECISIONS[decision];
    if (row.status === rule.to) return { row, changed: false };
    if (!(rule.from as readonly string[]).includes(row.status))
      throw conflict(`An account in status ${row.status} cannot be moved by '${decision}'.`, {
        reason: 'illegal_transition',
        status: row.status,
        decision,
      });
    // The balance: `require_payment` records what is owed (decimal major units; omitted: unchanged), `mark_paid`
    // clears it.
    let balanceDueMinor = row.balanceDueMinor;
    if (decision === 'mark_paid') balanceDueMinor = 0;
    if (decision === 'require_payment' && balanceDue !== undefined) {
      const owed = toMinor(balanceDue, row.currency);
      if (owed === null)
        throw semanticValidation([
          { field: 'balanceDue', location: 'body', message: `has more decimals than ${row.currency} allows` },
        ]);
      balanceDueMinor = owed;
    }
    const [updated] = await tx
      .update(advertiserAccounts)
      .set({
        status: rule.to,
        balanceDueMinor,
        revision: sql`${advertiserAccounts.revision} + 1`,
        updatedAt: this.clock.now(),
      })
      .where(eq(advertiserAccounts.id, row.id))
      .returning();
    const metadata = { decision, from: row.status, to: rule.to };
    await this.organizations.audit(
      tx,
      acting.organizationId,
      acting,
      'account.decided',
      'account',
      accountPublicId,
      metadata,
    );
    // The buyer sees the decision on its own audit log too.
    await this.organizations.audit(
      tx,
      row.organizationId,
      acting,
      'account.decided',
      'account',
      accountPublicId,
      metadata,
    );
    return { row: updated!, changed: true };
  }

  /**
   * Records a payment of the buyer on an account link of one of the seller's storefronts (decimal major units of the
   * link's currency): the balance goes down (never below 0); a `payment_required` link whose balance is cleared
   * becomes `active` (spec "Storefront account link").
   * @throws ApiError 404; 422 `VALIDATION_ERROR` on `amount` (more decimals than the currency has, or 0).
   */
  async recordAccountPayment(tx: Executor, acting: Acting, accountPublicId: string, amount: number) {
    const [row] = await tx
      .select()
      .from(advertiserAccounts)
      .where(
        and(
          eq(advertiserAccounts.publicId, accountPublicId),
          eq(advertiserAccounts.sellerOrganizationId, acting.organizationId),
        ),
      )
      .for('update');
    if (!row) throw notFound('Account', accountPublicId);
    const paid = toMinor(amount, row.currency);
    if (paid === null || paid === 0)
      throw semanticValidation([
        {
          field: 'amount',
          location: 'body',
          message: `must be positive with at most ${row.currency}'s decimals`,
        },
      ]);
    const balanceDueMinor = Math.max(0, row.balanceDueMinor - paid);
    const cleared = balanceDueMinor === 0 && row.status === 'payment_required';
    const [updated] = await tx
      .update(advertiserAccounts)
      .set({
        balanceDueMinor,
        ...(cleared ? { status: 'active' as const } : {}),
        revision: sql`${advertiserAccounts.revision} + 1`,
        updatedAt: this.clock.now(),
      })
      .where(eq(advertiserAccounts.id, row.id))
      .returning();
    const metadata = {
      amount,
      balanceDue: fromMinor(balanceDueMinor, row.currency),
      from: row.status,
      to: updated!.status,
    };
    for (const organizationId of [acting.organizationId, row.organizationId])
      await this.organizations.audit(
        tx,
        organizationId,
        acting,
        'account.payment_recorded',
        'account',
        accountPublicId,
        metadata,
      );
    return updated!;
  }

  /** The public ids an account link's view names (advertiser, storefront, Seller Account). */
  async accountLinkRefs(id: number) {
    const [row] = await this.db
      .select({
        advertiserId: advertisers.publicId,
        storefrontId: storefronts.publicId,
        sellerAccountId: organizations.publicId,
      })
      .from(advertiserAccounts)
      .innerJoin(advertisers, eq(advertisers.id, advertiserAccounts.advertiserId))
      .innerJoin(storefronts, eq(storefronts.id, advertiserAccounts.storefrontId))
      .innerJoin(organizations, eq(organizations.id, advertiserAccounts.sellerOrganizationId))
      .where(eq(advertiserAccounts.id, id));
    return row!;
  }

  /**
   * Requests an account link (the `sync_accounts` of part 3; `pending_approval`). Requesting an existing link answers
   * it `unchanged` whatever its status (no speed-up; `rejected` and `closed` need out-of-band re-onboarding).
   */
  async requestAccountLink(
    tx: Executor,
    acting: Acting,
    input: { advertiserId: string; storefrontId: string; name?: string },
  ) {
    const operator = await this.requireBuyerSetup(acting.organizationId, tx);
    const advertiser = await this.advertiser(acting.organizationId, input.advertiserId, tx);
    const [sf] = await tx
      .select()
      .from(storefronts)
      .where(and(eq(storefronts.publicId, input.storefrontId), eq(storefronts.status, 'active')));
    if (!sf) throw notFound('Storefront', input.storefrontId);
    const [existing] = await tx
      .select()
      .from(advertiserAccounts)
      .where(
        and(eq(advertiserAccounts.advertiserId, advertiser.id), eq(advertiserAccounts.storefrontId, sf.id)),
      );
    if (existing) return { row: existing, action: 'unchanged' as const };
    const now = this.clock.now();
    const [row] = await tx
      .insert(advertiserAccounts)
      .values({
        publicId: prefixedHexId('acc'),
        organizationId: acting.organizationId,
        advertiserId: advertiser.id,
        storefrontId: sf.id,
        sellerOrganizationId: sf.organizationId,
        name: input.name ?? advertiser.name,
        status: 'pending_approval',
        operator,
        currency: sf.currency,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing()
      .returning();
    if (!row) {
      const [raced] = await tx
        .select()
        .from(advertiserAccounts)
        .where(
          and(eq(advertiserAccounts.advertiserId, advertiser.id), eq(advertiserAccounts.storefrontId, sf.id)),
        );
      return { row: raced!, action: 'unchanged' as const };
    }
    await this.organizations.audit(
      tx,
      acting.organizationId,
      acting,
      'account.requested',
      'account',
      row.publicId,
      {
        advertiserId: advertiser.publicId,
        storefrontId: sf.publicId,
      },
    );
    return { row, action: 'created' as const };
  }

  // ---------------------------------------------------------------- buyer side

  /** An advertiser of Buyer Account `organizationId`. @throws ApiError 404. */
  async advertiser(organizationId: number, publicId: string, executor: Executor = this.db) {
    const [row] = await executor
      .select()
      .from(advertisers)
      .where(
        and(
          eq(advertisers.publicId, publicId),
          eq(advertisers.organizationId, organizationId),
          isNull(advertisers.archivedAt),
        ),
      )
      .limit(1);
    if (!row) throw notFound('Advertiser', publicId);
    return row;
  }

  /** The campaigns of one advertiser, in creation order. */
  async campaignsOf(organizationId: number, advertiserId: number) {
    return this.db
      .select()
      .from(campaigns)
      .where(and(eq(campaigns.organizationId, organizationId), eq(campaigns.advertiserId, advertiserId)))
      .orderBy(asc(campaigns.id));
  }

  /**
   * The operator identity of a Buyer Account (Buyer Setup step 1), or null. A prepared statement: every buying call
   * (REST and MCP, replays included) reads it first.
   */
  async operatorIdentity(
    organizationId: number,
    executor: Executor = this.db,
  ): Promise<typeof buyerOperatorIdentities.$inferSelect | null> {
    const [row] = await operatorIdentityStatement.rows(executor, { orgId: organizationId });
    return row ?? null;
  }

  /** True when `domain` is this platform's own domain or a subdomain of it. */
  isPlatformDomain(domain: string): boolean {
    const d = domain.toLowerCase();
    return this.platformDomains().some((p) => d === p || d.endsWith(`.${p}`));
  }

  /**
   * The readiness check `operator_identity` of buying routes.
   * @returns the operator domain to persist on what is bought.
   * @throws ApiError 409 `BUYER_SETUP_REQUIRED` (`missing_operator_identity`, or `platform_operator_not_allowed`
   *   when the stored identity names the platform's own domain: it is never used, nor substituted).
   */
  async requireBuyerSetup(organizationId: number, executor: Executor = this.db): Promise<string> {
    const identity = await this.operatorIdentity(organizationId, executor);
    return this.checkBuyerSetup(identity?.domain ?? null);
  }

  /**
   * {@link requireBuyerSetup} on an operator domain read already (null: none), e.g. with {@link BUYER_SETUP_GUARD}.
   * @returns the domain. @throws ApiError 409 `BUYER_SETUP_REQUIRED` as {@link requireBuyerSetup}.
   */
  checkBuyerSetup(domain: string | null): string {
    if (domain === null) throw buyerSetupRequired('missing_operator_identity');
    if (this.isPlatformDomain(domain)) throw buyerSetupRequired('platform_operator_not_allowed');
    return domain;
  }

  /**
   * Sets the operator identity (Buyer Setup step 1). `force` (the operator's data migration only) stores even the
   * platform's own domain, which buying routes then refuse.
   * @throws ApiError 422 `VALIDATION_ERROR` on `domain` for the platform's own domain.
   */
  async setOperatorIdentity(
    tx: Executor,
    acting: Acting,
    input: { domain: string; name: string },
    force = false,
  ) {
    const domain = input.domain.toLowerCase();
    if (!force && this.isPlatformDomain(domain))
      throw semanticValidation([
        {
          field: 'domain',
          location: 'body',
          message: "must be your own operator domain, not this platform's (it is never substituted)",
        },
      ]);
    const now = this.clock.now();
    const [row] = await tx
      .insert(buyerOperatorIdentities)
      .values({ organizationId: acting.organizationId, domain, name: input.name, updatedAt: now })
      .onConflictDoUpdate({
        target: buyerOperatorIdentities.organizationId,
        set: { domain, name: input.name, updatedAt: now },
      })
      .returning();
    await this.organizations.audit(
      tx,
      acting.organizationId,
      acting,
      'buyer_setup.operator_identity_set',
      'organization',
      null,
      { domain, name: input.name },
    );
    return row!;
  }

  /**
   * Creates a campaign (a buying route: Buyer Setup step 1 first). `budget.total` is decimal major units of
   * `budget.currency`; the flight must end after it starts.
   */
  async createCampaign(
    tx: Executor,
    acting: Acting,
    input: {
      advertiserId: string;
      name: string;
      budget: { total: number; currency: string };
      flightStart: Date;
      flightEnd: Date;
    },
  ) {
    await this.requireBuyerSetup(acting.organizationId, tx);
    const advertiser = await this.advertiser(acting.organizationId, input.advertiserId, tx);
    const totalMinor = toMinor(input.budget.total, input.budget.currency);
    if (totalMinor === null)
      throw semanticValidation([
        {
          field: 'budget/total',
          location: 'body',
          message: `has more decimals than ${input.budget.currency} allows`,
        },
      ]);
    if (input.flightEnd <= input.flightStart)
      throw semanticValidation([
        { field: 'flightEnd', location: 'body', message: 'must be after flightStart' },
      ]);
    const now = this.clock.now();
    const [row] = await tx
      .insert(campaigns)
      .values({
        publicId: prefixedHexId('cmp'),
        organizationId: acting.organizationId,
        advertiserId: advertiser.id,
        name: input.name,
        status: 'active',
        currency: input.budget.currency,
        budgetTotalMinor: totalMinor,
        flightStart: input.flightStart,
        flightEnd: input.flightEnd,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    await this.organizations.audit(
      tx,
      acting.organizationId,
      acting,
      'campaign.created',
      'campaign',
      row!.publicId,
      {
        advertiserId: advertiser.publicId,
        budget: input.budget,
      },
    );
    return { campaign: row!, advertiserPublicId: advertiser.publicId };
  }

  /**
   * Creates a media buy (AdCP `create_media_buy`'s record), in this order of checks: Buyer Setup step 1 (409
   * `BUYER_SETUP_REQUIRED`), the campaign (404), products of one active storefront and one sales agent (422), each
   * pricing option (422), the agent's pricing rule (409 `PRICING_NOT_CONFIGURED`), the campaign currency against the
   * agent's and storefront's (400 `CURRENCY_MISMATCH`), the campaign budget against what its buys committed (409
   * `INSUFFICIENT_MEDIA_BUDGET`). The storefront's Seller Account and the operator domain are persisted on the buy.
   * The campaign row is locked so concurrent buys cannot overspend it.
   */
  async createMediaBuy(tx: Executor, acting: Acting, input: MediaBuyInput, options: MediaBuyOptions = {}) {
    const operator = await this.requireBuyerSetup(acting.organizationId, tx);
    const [locked] = await tx
      .select()
      .from(campaigns)
      .where(
        and(eq(campaigns.publicId, input.campaignId), eq(campaigns.organizationId, acting.organizationId)),
      )
      .for('update');
    if (!locked) throw notFound('Campaign', input.campaignId);
    const campaign = { campaign: locked };
    const productIds = [...new Set(input.packages.map((p) => p.productId))];
    const found = await tx
      .select({ product: products, storefront: storefronts })
      .from(products)
      .innerJoin(storefronts, eq(storefronts.id, products.storefrontId))
      .where(
        and(
          inArray(products.publicId, productIds),
          eq(products.status, 'active'),
          eq(storefronts.status, 'active'),
        ),
      );
    const byId = new Map(found.map((f) => [f.product.publicId, f]));
    input.packages.forEach((p, i) => {
      if (!byId.has(p.productId))
        throw semanticValidation([
          { field: `packages/${i}/productId`, location: 'body', message: 'is not an available product' },
        ]);
    });
    const storefront = found[0]!.storefront;
    if (found.some((f) => f.storefront.id !== storefront.id))
      throw semanticValidation([
        { field: 'packages', location: 'body', message: 'must all be products of one storefront' },
      ]);
    // The sales agent: the products' own, else the storefront's first.
    const agentIds = new Set(found.map((f) => f.product.salesAgentId));
    if (agentIds.size > 1)
      throw semanticValidation([
        { field: 'packages', location: 'body', message: 'must all be sold by one sales agent' },
      ]);
    const named = [...agentIds][0] ?? null;
    const [agent] = await tx
      .select()
      .from(salesAgents)
      .where(
        named !== null
          ? eq(salesAgents.id, named)
          : and(eq(salesAgents.storefrontId, storefront.id), isNull(salesAgents.archivedAt)),
      )
      .orderBy(asc(salesAgents.id))
      .limit(1);
    if (!agent)
      throw semanticValidation([
        { field: 'packages', location: 'body', message: 'the storefront has no sales agent' },
      ]);
    if (agent.archivedAt !== null)
      throw semanticValidation([
        {
          field: 'packages/0/productId',
          location: 'body',
          message: 'is sold by an archived sales agent: it cannot be bought now',
        },
      ]);
    const currency = input.currency ?? campaign.campaign.currency;
    // A currency the service does not know cannot be the sales agent's: refused before any amount is converted.
    if (!CURRENCIES.includes(currency)) throw currencyMismatch(currency, agent.currency, 'currency');
    let requestedMinor = 0;
    const pkgs = input.packages.map((p, i) => {
      const { product } = byId.get(p.productId)!;
      const option = product.pricingOptions.find((o) => o.pricingOptionId === p.pricingOptionId);
      if (!option)
        throw semanticValidation([
          {
            field: `packages/${i}/pricingOptionId`,
            location: 'body',
            message: 'is not a pricing option of the product',
          },
        ]);
      const budgetMinor = toMinor(p.budget, currency);
      if (budgetMinor === null || budgetMinor === 0)
        throw semanticValidation([
          {
            field: `packages/${i}/budget`,
            location: 'body',
            message: `must be positive with at most ${currency}'s decimals`,
          },
        ]);
      requestedMinor += budgetMinor;
      return { ...p, product, budgetMinor };
    });
    const [rule] = await tx.select().from(pricingRules).where(eq(pricingRules.salesAgentId, agent.id));
    if (!rule) throw pricingNotConfigured(agent.publicId);
    const campaignCurrency = campaign.campaign.currency;
    if (
      currency !== agent.currency ||
      currency !== storefront.currency ||
      (currency !== campaignCurrency && !options.fxRate)
    )
      throw currencyMismatch(
        currency,
        agent.currency !== currency ? agent.currency : storefront.currency,
        input.currency === undefined ? 'campaignId' : 'currency',
      );
    // Without an FX source (a caller that never buys in another currency) a live buy in another currency cannot be
    // counted: FX_RATE_UNAVAILABLE rather than a crash.
    const rateOf = (from: string, to: string) => {
      if (!options.fxRate) throw fxRateUnavailable(from, to);
      return options.fxRate(from, to);
    };
    // The campaign's budget counts every live buy in the campaign's currency (buys in another currency at today's rate).
    const inCampaignCurrency = async (amountMinor: number, from: string) =>
      from === campaignCurrency
        ? amountMinor
        : convertMinor(amountMinor, from, campaignCurrency, await rateOf(from, campaignCurrency));
    const committedRows = await tx
      .select({
        currency: mediaBuys.currency,
        total: sql<string>`coalesce(sum(${mediaBuys.totalBudgetMinor}), 0)`,
      })
      .from(mediaBuys)
      .where(
        and(
          eq(mediaBuys.campaignId, campaign.campaign.id),
          ne(mediaBuys.status, 'canceled'),
          ne(mediaBuys.status, 'rejected'),
        ),
      )
      .groupBy(mediaBuys.currency);
    let committedMinor = 0;
    for (const row of committedRows)
      committedMinor += await inCampaignCurrency(Number(row.total), row.currency);
    const requestedInCampaign = await inCampaignCurrency(requestedMinor, currency);
    if (committedMinor + requestedInCampaign > campaign.campaign.budgetTotalMinor)
      throw insufficientMediaBudget({
        campaignId: campaign.campaign.publicId,
        currency: campaignCurrency,
        budgetTotal: fromMinor(campaign.campaign.budgetTotalMinor, campaignCurrency),
        committed: fromMinor(committedMinor, campaignCurrency),
        requested: fromMinor(requestedInCampaign, campaignCurrency),
      });
    const now = this.clock.now();
    const startTime =
      input.startTime ?? (now > campaign.campaign.flightStart ? now : campaign.campaign.flightStart);
    const endTime = input.endTime ?? campaign.campaign.flightEnd;
    if (endTime <= startTime)
      throw semanticValidation([{ field: 'endTime', location: 'body', message: 'must be after startTime' }]);
    // The buy runs inside its campaign's flight.
    if (startTime < campaign.campaign.flightStart)
      throw semanticValidation([
        { field: 'startTime', location: 'body', message: "must not be before the campaign's flightStart" },
      ]);
    if (endTime > campaign.campaign.flightEnd)
      throw semanticValidation([
        { field: 'endTime', location: 'body', message: "must not be after the campaign's flightEnd" },
      ]);
    const [account] = await tx
      .select()
      .from(advertiserAccounts)
      .where(
        and(
          eq(advertiserAccounts.advertiserId, campaign.campaign.advertiserId),
          eq(advertiserAccounts.storefrontId, storefront.id),
          eq(advertiserAccounts.status, 'active'),
        ),
      );
    const [buy] = await tx
      .insert(mediaBuys)
      .values({
        publicId: prefixedHexId('mb'),
        organizationId: acting.organizationId,
        advertiserId: campaign.campaign.advertiserId,
        campaignId: campaign.campaign.id,
        storefrontId: storefront.id,
        salesAgentId: agent.id,
        sellerOrganizationId: storefront.organizationId,
        advertiserAccountId: account?.id ?? null,
        operator,
        name: input.name ?? `${campaign.campaign.name} on ${storefront.name}`,
        status: !options.provisional && startTime <= now ? 'active' : 'pending_start',
        currency,
        totalBudgetMinor: requestedMinor,
        platformFeeBps: rule.platformFeeBps,
        startTime,
        endTime,
        confirmedAt: options.provisional ? null : now,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    const inserted = await tx
      .insert(packages)
      .values(
        pkgs.map((p) => ({
          publicId: prefixedHexId('pkg'),
          mediaBuyId: buy!.id,
          productId: p.product.id,
          pricingOptionId: p.pricingOptionId,
          budgetMinor: p.budgetMinor,
          impressions: p.impressions ?? null,
          createdAt: now,
        })),
      )
      .returning();
    await this.organizations.audit(
      tx,
      acting.organizationId,
      acting,
      'media_buy.created',
      'media_buy',
      buy!.publicId,
      {
        campaignId: campaign.campaign.publicId,
        storefrontId: storefront.publicId,
        totalBudget: fromMinor(requestedMinor, currency),
        currency,
      },
    );
    return { buy: buy!, packages: inserted };
  }

  /** A media buy of the Buyer Account with its references and packages. @throws ApiError 404. */
  async mediaBuy(organizationId: number, publicId: string, executor: Executor = this.db) {
    const [row] = await executor
      .select({
        buy: mediaBuys,
        advertiserId: advertisers.publicId,
        campaignId: campaigns.publicId,
        storefrontId: storefronts.publicId,
        salesAgentId: salesAgents.publicId,
        sellerAccountId: organizations.publicId,
        accountId: advertiserAccounts.publicId,
      })
      .from(mediaBuys)
      .innerJoin(advertisers, eq(advertisers.id, mediaBuys.advertiserId))
      .innerJoin(campaigns, eq(campaigns.id, mediaBuys.campaignId))
      .innerJoin(storefronts, eq(storefronts.id, mediaBuys.storefrontId))
      .innerJoin(salesAgents, eq(salesAgents.id, mediaBuys.salesAgentId))
      .innerJoin(organizations, eq(organizations.id, mediaBuys.sellerOrganizationId))
      .leftJoin(advertiserAccounts, eq(advertiserAccounts.id, mediaBuys.advertiserAccountId))
      .where(and(eq(mediaBuys.publicId, publicId), eq(mediaBuys.organizationId, organizationId)))
      .limit(1);
    if (!row) throw notFound('Media buy', publicId);
    const pkgs = await executor
      .select({ pkg: packages, productId: products.publicId })
      .from(packages)
      .innerJoin(products, eq(products.id, packages.productId))
      .where(eq(packages.mediaBuyId, row.buy.id))
      .orderBy(asc(packages.id));
    return { ...row, packages: pkgs };
  }

  /** Creates a creative of an advertiser (`pending_review`; part 3's `sync_creatives` reviews and assigns). */
  async createCreative(
    tx: Executor,
    acting: Acting,
    input: { advertiserId: string; name: string; formatId: FormatId; assets: Record<string, unknown> },
  ) {
    const advertiser = await this.advertiser(acting.organizationId, input.advertiserId, tx);
    const now = this.clock.now();
    const [row] = await tx
      .insert(creatives)
      .values({
        publicId: prefixedHexId('cr'),
        organizationId: acting.organizationId,
        advertiserId: advertiser.id,
        name: input.name,
        formatId: input.formatId,
        assets: input.assets,
        status: 'pending_review',
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    await this.organizations.audit(
      tx,
      acting.organizationId,
      acting,
      'creative.created',
      'creative',
      row!.publicId,
      {
        advertiserId: advertiser.publicId,
      },
    );
    return { creative: row!, advertiserPublicId: advertiser.publicId };
  }

  /** Creates a test cohort (`draft`) of an advertiser. */
  async createTestCohort(
    tx: Executor,
    acting: Acting,
    input: { advertiserId: string; name: string; holdoutPercent: number },
  ) {
    const advertiser = await this.advertiser(acting.organizationId, input.advertiserId, tx);
    const [row] = await tx
      .insert(testCohorts)
      .values({
        publicId: prefixedHexId('tc'),
        organizationId: acting.organizationId,
        advertiserId: advertiser.id,
        name: input.name,
        holdoutPercent: input.holdoutPercent,
        status: 'draft',
        createdAt: this.clock.now(),
      })
      .returning();
    await this.organizations.audit(
      tx,
      acting.organizationId,
      acting,
      'test_cohort.created',
      'test_cohort',
      row!.publicId,
      {
        advertiserId: advertiser.publicId,
        holdoutPercent: input.holdoutPercent,
      },
    );
    return { cohort: row!, advertiserPublicId: advertiser.publicId };
  }

  /** Records a person's feedback, optionally on a media buy of the account. */
  async createHumanFeedback(
    tx: Executor,
    acting: Acting,
    input: { mediaBuyId?: string; rating: number; comment: string },
  ) {
    let mediaBuyId: number | null = null;
    if (input.mediaBuyId !== undefined)
      mediaBuyId = (await this.mediaBuy(acting.organizationId, input.mediaBuyId, tx)).buy.id;
    const [row] = await tx
      .insert(humanFeedback)
      .values({
        publicId: prefixedHexId('hf'),
        organizationId: acting.organizationId,
        mediaBuyId,
        authorUserId: acting.userId,
        rating: input.rating,
        comment: input.comment,
        createdAt: this.clock.now(),
      })
      .returning();
    await this.organizations.audit(
      tx,
      acting.organizationId,
      acting,
      'human_feedback.created',
      'human_feedback',
      row!.publicId,
      {
        mediaBuyId: input.mediaBuyId ?? null,
        rating: input.rating,
      },
    );
    return row!;
  }

  /** Creates a measurement-engine record (`study` or `event_source`). */
  async createMeasurement(
    tx: Executor,
    acting: Acting,
    kind: MeasurementKind,
    input: { name: string; details: Record<string, unknown> },
  ) {
    const [row] = await tx
      .insert(measurementRecords)
      .values({
        publicId: prefixedHexId('me'),
        organizationId: acting.organizationId,
        kind,
        name: input.name,
        status: kind === 'study' ? 'planned' : 'active',
        details: input.details,
        createdAt: this.clock.now(),
      })
      .returning();
    await this.organizations.audit(
      tx,
      acting.organizationId,
      acting,
      `measurement.${kind}_created`,
      'measurement',
      row!.publicId,
      {
        name: input.name,
      },
    );
    return row!;
  }
}
