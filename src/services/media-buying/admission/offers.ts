/**
 * Commercial Offers (spec "Signup": "A Commercial Offer attached to a first Buyer administrator invitation is pending
 * on arrival; joining the account does not accept it"). An offer (`ofr_`) is made by the operator with the setup
 * invitation of a Buyer Account's first administrator (see `invitations.ts` for "first"); it is `pending` until an
 * administrator of the organization accepts or declines it, in its own step, signed in directly; revoking the
 * invitation that carries a pending offer withdraws it (`withdrawn`). Every change is in the audit log.
 */
import { and, desc, eq } from 'drizzle-orm';
import type { Clock } from '../../../platform/clock.ts';
import type { Db, Executor } from '../../../platform/database.ts';
import { commercialOffers, type OFFER_STATUSES, users } from '../db/schema.ts';
import { conflict, notFound } from '../media-buying-errors.ts';
import type { Actor, Organizations } from '../organizations/index.ts';

/** A status of a Commercial Offer. */
export type OfferStatus = (typeof OFFER_STATUSES)[number];

/** A Commercial Offer as administrators (and the invitation's recipient) see it. */
export interface OfferView {
  /** `ofr_` + 32 hex. */
  id: string;
  title: string;
  terms: string;
  status: OfferStatus;
  createdAt: string;
  decidedAt: string | null;
  /** The administrator who accepted or declined it (`usr_...`), else null. */
  decidedBy: string | null;
}

type OfferRow = typeof commercialOffers.$inferSelect;

/** The view of an offer row, with its decider's public id. */
export function offerView(row: OfferRow, decidedBy: string | null): OfferView {
  return {
    id: row.publicId,
    title: row.title,
    terms: row.terms,
    status: row.status,
    createdAt: row.createdAt.toISOString(),
    decidedAt: row.decidedAt ? row.decidedAt.toISOString() : null,
    decidedBy,
  };
}

/** The Commercial Offers of organizations (module comment). */
export class CommercialOffers {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly organizations: Organizations,
  ) {}

  /** The offers of an organization, newest first. */
  async list(organizationId: number): Promise<OfferView[]> {
    const rows = await this.db
      .select({ offer: commercialOffers, decidedBy: users.publicId })
      .from(commercialOffers)
      .leftJoin(users, eq(users.id, commercialOffers.decidedByUserId))
      .where(eq(commercialOffers.organizationId, organizationId))
      .orderBy(desc(commercialOffers.id));
    return rows.map((r) => offerView(r.offer, r.decidedBy));
  }

  /** One offer by internal id (the invitation's), if any. */
  async byId(executor: Executor, id: number): Promise<OfferView | undefined> {
    const [row] = await executor
      .select({ offer: commercialOffers, decidedBy: users.publicId })
      .from(commercialOffers)
      .leftJoin(users, eq(users.id, commercialOffers.decidedByUserId))
      .where(eq(commercialOffers.id, id))
      .limit(1);
    return row ? offerView(row.offer, row.decidedBy) : undefined;
  }

  /**
   * Accepts or declines a pending offer of `organizationId` for administrator `actor`. Deciding the same way again
   * answers the offer as it is (a retry is safe).
   * @throws ApiError 404 for an unknown id or another organization's offer (the same answer); 409 `CONFLICT`
   *   (`details.reason` `offer_decided`, `details.status`) when it was decided otherwise or withdrawn.
   */
  async decide(
    organizationId: number,
    offerPublicId: string,
    decision: 'accepted' | 'declined',
    actor: Actor & { userId: number; userPublicId: string },
  ): Promise<OfferView> {
    return this.db.transaction(async (tx) => {
      const [row] = await tx
        .select()
        .from(commercialOffers)
        .where(
          and(
            eq(commercialOffers.publicId, offerPublicId),
            eq(commercialOffers.organizationId, organizationId),
          ),
        )
        .for('update');
      if (!row) throw notFound('Commercial Offer', offerPublicId);
      if (row.status === decision) return (await this.byId(tx, row.id))!;
      if (row.status !== 'pending')
        throw conflict(`This Commercial Offer is ${row.status}; it cannot be ${decision}.`, {
          reason: 'offer_decided',
          status: row.status,
        });
      const [updated] = await tx
        .update(commercialOffers)
        .set({ status: decision, decidedAt: this.clock.now(), decidedByUserId: actor.userId })
        .where(eq(commercialOffers.id, row.id))
        .returning();
      await this.organizations.audit(
        tx,
        organizationId,
        actor,
        `commercial_offer.${decision}`,
        'commercial_offer',
        row.publicId,
        { title: row.title },
      );
      return offerView(updated!, actor.userPublicId);
    });
  }

  /** Withdraws a pending offer (its invitation was revoked or expired unused), in the caller's transaction. */
  async withdraw(tx: Executor, row: OfferRow, actor: Actor, why: 'invitation_revoked' | 'superseded') {
    await tx
      .update(commercialOffers)
      .set({ status: 'withdrawn', decidedAt: this.clock.now() })
      .where(and(eq(commercialOffers.id, row.id), eq(commercialOffers.status, 'pending')));
    await this.organizations.audit(
      tx,
      row.organizationId,
      actor,
      'commercial_offer.withdrawn',
      'commercial_offer',
      row.publicId,
      { reason: why },
    );
  }
}
