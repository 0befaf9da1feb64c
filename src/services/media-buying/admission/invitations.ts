/**
 * Invitations to join an organization (spec "Signup": "Once admitted, the administrator receives a setup invitation,
 * joins the organization, and accepts current Terms of Service if outstanding"; "Authentication" rule 9: "Invitation
 * to an organization lets the recipient create an account and join that organization even while public buyer signup
 * is waitlisted; the organization itself must be admitted").
 *
 * - Kinds: `setup` (sent by the operator to an admitted organization's administrator, role `admin`) and `member`
 *   (sent by an organization administrator from an interactive session, role `admin` or `member`).
 * - The link's token (`mbi_` + 43 URL-safe base64 characters, 256 random bits) is a credential: only its SHA-256 is
 *   stored, the plaintext is in the mail only; it is single use, expires after {@link INVITATION_SECONDS} (seven
 *   days), and is revocable by the organization's administrators (and the operator).
 * - One open invitation per organization and email at a time, none for an active member (409 `CONFLICT`); an
 *   organization's administrators send at most {@link MEMBER_INVITATIONS_PER_DAY} member invitations per rolling day
 *   (429: each invitation is a mail to an address of the sender's choosing).
 * - A Commercial Offer may be attached to a setup invitation only when it is the organization's **first
 *   administrator invitation**: a Buyer Account that has never had a member (no membership row, active or removed),
 *   so the invitation is the one its first administrator joins by. At most one offer is pending per organization: an
 *   earlier offer whose invitation can still be accepted makes a second one a 409 (revoke that invitation first); an
 *   earlier pending offer whose invitation expired unused is withdrawn by the new one.
 * - Acceptance works whatever public buyer signup is (waitlisted or open) and only while the organization is
 *   admitted. A person without an account sets a name and a password (the signup policy); the email counts as
 *   verified by the link (an identity left by an unfinished signup of that email gets the new password: only the
 *   mailbox's owner has the link). A person with an account signs in first: a signed-in user whose email is the
 *   invited one joins; a signed-in user with another email is refused (403). Concurrent acceptances of one link: one
 *   wins (the invitation row is locked), the other is told the link was used. Joining makes the organization the
 *   user's active one, never accepts the Terms of Service or a Commercial Offer (separate steps), and a new person's
 *   browser session opens (method `invitation`).
 */
import { and, count, desc, eq, gt, isNull, type SQL } from 'drizzle-orm';
import type { Clock } from '../../../platform/clock.ts';
import { hashApiKey, issueApiKey } from '../../../platform/crypto.ts';
import type { Db, Executor } from '../../../platform/database.ts';
import { prefixedHexId } from '../../../platform/ids.ts';
import { PREFIX } from '../credentials/index.ts';
import {
  commercialOffers,
  invitations,
  type MembershipRole,
  memberships,
  type OrganizationKind,
  organizations,
  termsAcceptances,
  users,
} from '../db/schema.ts';
import { type Accounts, normalizeEmail, passwordProblem } from '../identity/index.ts';
import type { Mailer } from '../mail/index.ts';
import {
  conflict,
  forbidden,
  invitationUnusable,
  notFound,
  rateLimited,
  semanticValidation,
  signInRequired,
} from '../media-buying-errors.ts';
import { type Actor, OPERATOR, type Organizations } from '../organizations/index.ts';
import { type CommercialOffers, type OfferView, offerView } from './offers.ts';
import { invitationMail } from './templates.ts';

/** An invitation's lifetime, in seconds (seven days). */
export const INVITATION_SECONDS = 7 * 86_400;
/** Member invitations one organization may send per rolling day. */
export const MEMBER_INVITATIONS_PER_DAY = 50;
/** The UI page an invitation link opens, with `?token=`. */
export const INVITATION_PATH = '/invitations/accept';

/** Where an invitation stands. */
export type InvitationStatus = 'pending' | 'accepted' | 'revoked' | 'expired';

/** An invitation as administrators and the operator see it (never its token). */
export interface InvitationView {
  /** `inv_` + 32 hex. */
  id: string;
  organizationId: string;
  kind: 'setup' | 'member';
  email: string;
  role: MembershipRole;
  /** The invitee's name as the inviter wrote it, if given. */
  name: string | null;
  status: InvitationStatus;
  /** The administrator who sent it (`usr_...`); null for the operator's setup invitations. */
  invitedBy: string | null;
  /** The Commercial Offer it carries (`ofr_...`), if any. */
  commercialOfferId: string | null;
  createdAt: string;
  expiresAt: string;
  acceptedAt: string | null;
  revokedAt: string | null;
}

/** What the holder of an invitation link may read (no other invitation, no member list). */
export interface InvitationDetails {
  invitation: Pick<InvitationView, 'id' | 'kind' | 'email' | 'role' | 'name' | 'expiresAt'>;
  organization: { id: string; name: string; kind: OrganizationKind };
  /** The inviting administrator's name; null for a setup invitation. */
  invitedBy: string | null;
  /** The Commercial Offer attached to the invitation, as it stands now. */
  commercialOffer: OfferView | null;
  /** True when the invited email has an account: its owner signs in, then accepts. */
  accountExists: boolean;
}

/** The outcome of an acceptance. */
export interface Acceptance {
  userId: number;
  /** The user who joined (for the answer). */
  user: { publicId: string; email: string; name: string; createdAt: Date };
  organizationId: number;
  role: MembershipRole;
  commercialOffer: OfferView | null;
  /** The latest Terms of Service version when the user has not accepted it yet (mutations wait for it), else null. */
  outstandingTerms: string | null;
  /** The browser session opened for a person who had no account (the signed-in user keeps theirs). */
  session: { secret: string; maxAgeSeconds: number } | null;
}

/** The signed-in user accepting an invitation, if any. */
export interface SignedInUser {
  id: number;
  email: string;
}

type InvitationRow = typeof invitations.$inferSelect;

/** The invitations of organizations (module comment). */
export class Invitations {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly deps: {
      organizations: Organizations;
      accounts: Accounts;
      mailer: Mailer;
      offers: CommercialOffers;
      /** The origin of the UI pages the links open (read per invitation). */
      uiOrigin: () => string;
    },
  ) {}

  /**
   * The operator's setup invitation of an admitted organization's administrator, with an optional Commercial Offer
   * (module comment: only on the first administrator invitation of a Buyer Account), mailed in the same transaction.
   * @throws ApiError 404 for an unknown organization; 409 `CONFLICT` with `details.reason`
   *   `organization_not_admitted`, `already_member`, `invitation_pending`, `not_a_buyer_account`,
   *   `not_first_administrator_invitation` or `offer_pending`.
   */
  async createSetup(
    organizationPublicId: string,
    input: { email: string; name?: string; commercialOffer?: { title: string; terms: string } },
  ): Promise<{ invitation: InvitationView; commercialOffer: OfferView | null }> {
    return this.db.transaction(async (tx) => {
      // Locked: invitations and offers of one organization are made one at a time.
      const org = await this.deps.organizations.byPublicId(organizationPublicId, tx, true);
      if (org.status !== 'admitted')
        throw conflict(`Only an admitted organization gets a setup invitation (this one is ${org.status}).`, {
          reason: 'organization_not_admitted',
        });
      const email = normalizeEmail(input.email);
      await this.assertInvitable(tx, org.id, email);
      let offerId: number | null = null;
      let offer: OfferView | null = null;
      if (input.commercialOffer) {
        const made = await this.makeOffer(tx, org, input.commercialOffer);
        offerId = made.id;
        offer = made.view;
      }
      const invitation = await this.insert(tx, {
        org,
        email,
        role: 'admin',
        kind: 'setup',
        invitedBy: null,
        name: input.name?.trim() || null,
        offerId,
        offerTitle: input.commercialOffer?.title,
      });
      return { invitation, commercialOffer: offer };
    });
  }

  /**
   * An administrator's invitation of a new member (or administrator), mailed in the same transaction.
   * @throws ApiError 409 `CONFLICT` (`already_member`, `invitation_pending`); 429 past
   *   {@link MEMBER_INVITATIONS_PER_DAY}.
   */
  async createMember(
    organizationId: number,
    inviter: { userId: number; name: string; kind: string },
    input: { email: string; role: MembershipRole; name?: string },
  ): Promise<InvitationView> {
    return this.db.transaction(async (tx) => {
      const [org] = await tx
        .select()
        .from(organizations)
        .where(eq(organizations.id, organizationId))
        .for('update');
      const email = normalizeEmail(input.email);
      await this.assertInvitable(tx, org!.id, email);
      const since = new Date(this.clock.nowMs() - 86_400_000);
      const today = and(
        eq(invitations.organizationId, org!.id),
        eq(invitations.kind, 'member'),
        gt(invitations.createdAt, since),
      );
      const [sent] = await tx.select({ n: count() }).from(invitations).where(today);
      if (sent!.n >= MEMBER_INVITATIONS_PER_DAY) {
        const [oldest] = await tx
          .select({ createdAt: invitations.createdAt })
          .from(invitations)
          .where(today)
          .orderBy(invitations.id)
          .limit(1);
        const retryAfter = Math.ceil((oldest!.createdAt.getTime() + 86_400_000 - this.clock.nowMs()) / 1000);
        throw rateLimited(
          `An organization sends at most ${MEMBER_INVITATIONS_PER_DAY} invitations a day; try again later.`,
          Math.max(1, retryAfter),
        );
      }
      return this.insert(tx, {
        org: org!,
        email,
        role: input.role,
        kind: 'member',
        invitedBy: { userId: inviter.userId, name: inviter.name, kind: inviter.kind },
        name: input.name?.trim() || null,
        offerId: null,
      });
    });
  }

  /** The invitations of an organization, newest first, one page, with the total. */
  async list(
    organizationId: number,
    page: { skip: number; take: number },
  ): Promise<{ items: InvitationView[]; total: number }> {
    const where = eq(invitations.organizationId, organizationId);
    const [rows, [total]] = await Promise.all([
      this.views(this.db, where, page),
      this.db.select({ n: count() }).from(invitations).where(where),
    ]);
    return { items: rows, total: total!.n };
  }

  /**
   * Revokes an invitation of `organizationId` (an administrator), or of any organization (`null`: the operator). Its
   * link stops at once; a pending Commercial Offer it carries is withdrawn. Revoking twice answers it as it is.
   * @throws ApiError 404 for an unknown id or another organization's invitation (the same answer); 409 `CONFLICT`
   *   (`invitation_used`) for an accepted one.
   */
  async revoke(organizationId: number | null, publicId: string, actor: Actor): Promise<InvitationView> {
    return this.db.transaction(async (tx) => {
      const [row] = await tx
        .select()
        .from(invitations)
        .where(
          and(
            eq(invitations.publicId, publicId),
            organizationId === null ? undefined : eq(invitations.organizationId, organizationId),
          ),
        )
        .for('update');
      if (!row) throw notFound('Invitation', publicId);
      if (row.acceptedAt)
        throw conflict('This invitation was accepted; remove the member instead.', {
          reason: 'invitation_used',
        });
      if (!row.revokedAt) {
        await tx.update(invitations).set({ revokedAt: this.clock.now() }).where(eq(invitations.id, row.id));
        if (row.commercialOfferId !== null) {
          const [offer] = await tx
            .select()
            .from(commercialOffers)
            .where(eq(commercialOffers.id, row.commercialOfferId));
          if (offer?.status === 'pending')
            await this.deps.offers.withdraw(tx, offer, actor, 'invitation_revoked');
        }
        await this.deps.organizations.audit(
          tx,
          row.organizationId,
          actor,
          'invitation.revoked',
          'invitation',
          row.publicId,
          { email: row.email },
        );
      }
      return (await this.views(tx, eq(invitations.id, row.id), { skip: 0, take: 1 }))[0]!;
    });
  }

  /**
   * What the holder of an invitation link may read (no side effect).
   * @throws ApiError 404 for an unknown token; 422 (`invitation_expired`, `invitation_revoked`, `invitation_used`);
   *   409 `CONFLICT` (`organization_not_admitted`) when the organization is not admitted now.
   */
  async lookup(token: string): Promise<InvitationDetails> {
    const row = await this.byToken(this.db, token, false);
    this.assertUsable(row, 'query');
    const [org] = await this.db.select().from(organizations).where(eq(organizations.id, row.organizationId));
    this.assertAdmitted(org!.status);
    const [inviter] = row.invitedByUserId
      ? await this.db.select({ name: users.name }).from(users).where(eq(users.id, row.invitedByUserId))
      : [];
    const identity = await this.deps.accounts.identityByEmail(row.email);
    const user = identity ? await this.deps.accounts.userOfIdentity(identity.id) : undefined;
    return {
      invitation: {
        id: row.publicId,
        kind: row.kind,
        email: row.email,
        role: row.role,
        name: row.inviteeName,
        expiresAt: row.expiresAt!.toISOString(),
      },
      organization: { id: org!.publicId, name: org!.name, kind: org!.kind },
      invitedBy: inviter?.name ?? null,
      commercialOffer: row.commercialOfferId
        ? ((await this.deps.offers.byId(this.db, row.commercialOfferId)) ?? null)
        : null,
      accountExists: user !== undefined,
    };
  }

  /**
   * Accepts an invitation (module comment), in one transaction with the invitation row locked.
   * @param signedIn the user of the request's browser session, if any.
   * @param input a new person's `name` (default: the name the inviter gave) and `password` (the signup policy).
   * @throws ApiError 404 for an unknown token; 422 (`invitation_expired`, `invitation_revoked`, `invitation_used`,
   *   or a missing name or password, or a password the policy refuses); 409 (`organization_not_admitted`); 401
   *   (`sign_in_required`: the email has an account and nobody is signed in); 403 (`invitation_email_mismatch`).
   */
  async accept(
    token: string,
    signedIn: SignedInUser | null,
    input: { name?: string; password?: string },
  ): Promise<Acceptance> {
    return this.db.transaction(async (tx) => {
      const row = await this.byToken(tx, token, true);
      if (row.acceptedAt && signedIn !== null && row.acceptedByUserId === signedIn.id)
        // The same person again (a retried request): joined already; answer as the first time.
        return this.acceptance(tx, row, signedIn.id, null);
      this.assertUsable(row, 'body');
      const [org] = await tx
        .select()
        .from(organizations)
        .where(eq(organizations.id, row.organizationId))
        .for('share');
      this.assertAdmitted(org!.status);
      let userId: number;
      let session: Acceptance['session'] = null;
      if (signedIn !== null) {
        if (signedIn.email !== row.email)
          throw forbidden(
            `This invitation is for another email address; sign out, then open the link again or sign in as that address.`,
            { reason: 'invitation_email_mismatch' },
          );
        userId = signedIn.id;
      } else {
        userId = await this.newAccount(tx, row, input);
        session = await this.deps.accounts.openSession(tx, userId, 'invitation');
      }
      const [current] = await tx
        .select({ role: memberships.role })
        .from(memberships)
        .where(
          and(
            eq(memberships.organizationId, org!.id),
            eq(memberships.userId, userId),
            isNull(memberships.removedAt),
          ),
        );
      // Joining never lowers a role: an administrator invited as a member stays one.
      const role: MembershipRole = current?.role === 'admin' ? 'admin' : row.role;
      const actor: Actor = { userId, kind: 'invitation' };
      await this.deps.organizations.addMember(tx, org!.id, userId, role, actor);
      await tx.update(users).set({ activeOrganizationId: org!.id }).where(eq(users.id, userId));
      await tx
        .update(invitations)
        .set({ acceptedAt: this.clock.now(), acceptedByUserId: userId })
        .where(eq(invitations.id, row.id));
      await this.deps.organizations.audit(
        tx,
        org!.id,
        actor,
        'invitation.accepted',
        'invitation',
        row.publicId,
        {
          kind: row.kind,
          role,
        },
      );
      return this.acceptance(tx, { ...row, role }, userId, session);
    });
  }

  /** The outcome of an acceptance of `row` by `userId`. */
  private async acceptance(
    tx: Executor,
    row: InvitationRow,
    userId: number,
    session: Acceptance['session'],
  ): Promise<Acceptance> {
    const [membership] = await tx
      .select({ role: memberships.role })
      .from(memberships)
      .where(
        and(
          eq(memberships.organizationId, row.organizationId),
          eq(memberships.userId, userId),
          isNull(memberships.removedAt),
        ),
      );
    const latest = await this.deps.organizations.latestTerms(tx);
    const [accepted] = latest
      ? await tx
          .select({ userId: termsAcceptances.userId })
          .from(termsAcceptances)
          .where(and(eq(termsAcceptances.userId, userId), eq(termsAcceptances.termsVersionId, latest.id)))
      : [];
    const [user] = await tx
      .select({ publicId: users.publicId, email: users.email, name: users.name, createdAt: users.createdAt })
      .from(users)
      .where(eq(users.id, userId));
    return {
      userId,
      user: user!,
      organizationId: row.organizationId,
      role: membership?.role ?? row.role,
      outstandingTerms: latest && !accepted ? latest.version : null,
      commercialOffer: row.commercialOfferId
        ? ((await this.deps.offers.byId(tx, row.commercialOfferId)) ?? null)
        : null,
      session,
    };
  }

  /**
   * The account of a person who has none: name and password checked (the signup policy), the email verified by the
   * link.
   * @returns the new user's id.
   * @throws ApiError 422 for a missing name or password or a password the policy refuses; 401 `sign_in_required`
   *   when the email has an account.
   */
  private async newAccount(
    tx: Executor,
    row: InvitationRow,
    input: { name?: string; password?: string },
  ): Promise<number> {
    const { accounts } = this.deps;
    await accounts.lockEmail(tx, row.email);
    let identity = await accounts.identityByEmail(row.email, tx);
    if (identity && (await accounts.userOfIdentity(identity.id, tx)))
      throw signInRequired(`${row.email} has an account: sign in with it, then accept the invitation.`);
    const name = input.name?.trim() || row.inviteeName;
    const issues = [];
    if (!name)
      issues.push({ location: 'body', field: 'name', message: 'is required to create your account' });
    if (input.password === undefined)
      issues.push({ location: 'body', field: 'password', message: 'is required to create your account' });
    else {
      const problem = passwordProblem(input.password, [row.email, ...(name ? [name] : [])]);
      if (problem) issues.push({ location: 'body', field: 'password', message: problem.message });
    }
    if (issues.length > 0) throw semanticValidation(issues);
    if (identity) {
      // An unfinished signup of this email: the link proves the mailbox, so the new password replaces any other.
      await accounts.setPassword(tx, identity.id, input.password!);
      await accounts.markVerified(tx, identity.id);
    } else {
      identity = await accounts.createIdentity(tx, {
        email: row.email,
        name: name!,
        password: input.password!,
        verified: true,
      });
    }
    return (await accounts.createUser(tx, identity, name!)).id;
  }

  /**
   * The invitation of a token (locked with `lock`).
   * @throws ApiError 404 for a token that matches none.
   */
  private async byToken(executor: Executor, token: string, lock: boolean): Promise<InvitationRow> {
    const query = executor
      .select()
      .from(invitations)
      .where(eq(invitations.keyHash, hashApiKey(token)))
      .limit(1);
    const [row] = lock ? await query.for('update') : await query;
    if (!row) throw notFound('Invitation');
    return row;
  }

  /** @throws ApiError 422 for a used, revoked or expired invitation. */
  private assertUsable(row: InvitationRow, location: 'body' | 'query'): void {
    if (row.acceptedAt) throw invitationUnusable('invitation_used', location);
    if (row.revokedAt) throw invitationUnusable('invitation_revoked', location);
    if (row.expiresAt!.getTime() <= this.clock.nowMs())
      throw invitationUnusable('invitation_expired', location);
  }

  /** @throws ApiError 409 `organization_not_admitted` (rule 9: the organization itself must be admitted). */
  private assertAdmitted(status: string): void {
    if (status !== 'admitted')
      throw conflict('This organization is not admitted now; its invitations cannot be used.', {
        reason: 'organization_not_admitted',
      });
  }

  /**
   * @throws ApiError 409 when `email` is an active member of the organization (`already_member`) or has an open
   *   invitation to it (`invitation_pending`, `details.invitationId`).
   */
  private async assertInvitable(tx: Executor, organizationId: number, email: string): Promise<void> {
    const [member] = await tx
      .select({ id: memberships.id })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(
        and(
          eq(memberships.organizationId, organizationId),
          eq(users.email, email),
          isNull(memberships.removedAt),
        ),
      )
      .limit(1);
    if (member)
      throw conflict(`${email} is a member of this organization already.`, { reason: 'already_member' });
    const [open] = await tx
      .select({ publicId: invitations.publicId })
      .from(invitations)
      .where(and(eq(invitations.organizationId, organizationId), eq(invitations.email, email), this.open()))
      .limit(1);
    if (open)
      throw conflict(`${email} has an open invitation to this organization; revoke it to send another.`, {
        reason: 'invitation_pending',
        invitationId: open.publicId,
      });
  }

  /** Invitations that can still be accepted: not accepted, not revoked, not expired. */
  private open() {
    return and(
      isNull(invitations.acceptedAt),
      isNull(invitations.revokedAt),
      gt(invitations.expiresAt, this.clock.now()),
    );
  }

  /**
   * The Commercial Offer of a first administrator invitation (module comment).
   * @throws ApiError 409 (`not_a_buyer_account`, `not_first_administrator_invitation`, `offer_pending`).
   */
  private async makeOffer(
    tx: Executor,
    org: typeof organizations.$inferSelect,
    input: { title: string; terms: string },
  ): Promise<{ id: number; view: OfferView }> {
    if (org.kind !== 'buyer')
      throw conflict('Commercial Offers attach to Buyer Account invitations only.', {
        reason: 'not_a_buyer_account',
      });
    const [anyone] = await tx
      .select({ id: memberships.id })
      .from(memberships)
      .where(eq(memberships.organizationId, org.id))
      .limit(1);
    if (anyone)
      throw conflict(
        'A Commercial Offer attaches only to the first administrator invitation of a Buyer Account (one nobody has joined yet).',
        { reason: 'not_first_administrator_invitation' },
      );
    const pending = await tx
      .select({ offer: commercialOffers, invitation: invitations })
      .from(commercialOffers)
      .leftJoin(invitations, eq(invitations.commercialOfferId, commercialOffers.id))
      .where(and(eq(commercialOffers.organizationId, org.id), eq(commercialOffers.status, 'pending')));
    for (const { offer, invitation } of pending) {
      const usable =
        invitation !== null &&
        !invitation.acceptedAt &&
        !invitation.revokedAt &&
        invitation.expiresAt!.getTime() > this.clock.nowMs();
      if (usable)
        throw conflict(
          'Another open setup invitation of this organization carries a pending Commercial Offer; revoke it first.',
          { reason: 'offer_pending', invitationId: invitation.publicId, offerId: offer.publicId },
        );
      await this.deps.offers.withdraw(tx, offer, OPERATOR, 'superseded');
    }
    const [row] = await tx
      .insert(commercialOffers)
      .values({
        publicId: prefixedHexId('ofr'),
        organizationId: org.id,
        title: input.title.trim(),
        terms: input.terms.trim(),
        status: 'pending',
        createdAt: this.clock.now(),
      })
      .returning();
    await this.deps.organizations.audit(
      tx,
      org.id,
      OPERATOR,
      'commercial_offer.created',
      'commercial_offer',
      row!.publicId,
      { title: row!.title },
    );
    return { id: row!.id, view: offerView(row!, null) };
  }

  /** Stores an invitation, mails its link and logs it, in `tx`. */
  private async insert(
    tx: Executor,
    input: {
      org: typeof organizations.$inferSelect;
      email: string;
      role: MembershipRole;
      kind: 'setup' | 'member';
      invitedBy: { userId: number; name: string; kind: string } | null;
      name: string | null;
      offerId: number | null;
      offerTitle?: string;
    },
  ): Promise<InvitationView> {
    const issued = issueApiKey(PREFIX.invitation);
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + INVITATION_SECONDS * 1000);
    const [row] = await tx
      .insert(invitations)
      .values({
        keyHash: issued.hash,
        hint: issued.hint,
        createdAt: now,
        expiresAt,
        publicId: prefixedHexId('inv'),
        organizationId: input.org.id,
        email: input.email,
        role: input.role,
        kind: input.kind,
        invitedByUserId: input.invitedBy?.userId ?? null,
        commercialOfferId: input.offerId,
        inviteeName: input.name,
      })
      .returning();
    const link = `${this.deps.uiOrigin()}${INVITATION_PATH}?token=${encodeURIComponent(issued.plaintext)}`;
    await this.deps.mailer.queue(
      tx,
      invitationMail({
        to: input.email,
        kind: input.kind,
        organizationName: input.org.name,
        role: input.role,
        link,
        expiresAt,
        inviterName: input.invitedBy?.name,
        offerTitle: input.offerTitle,
      }),
    );
    const actor: Actor = input.invitedBy
      ? { userId: input.invitedBy.userId, kind: input.invitedBy.kind }
      : OPERATOR;
    await this.deps.organizations.audit(
      tx,
      input.org.id,
      actor,
      'invitation.created',
      'invitation',
      row!.publicId,
      {
        kind: input.kind,
        role: input.role,
        email: input.email,
        commercialOffer: input.offerId !== null,
      },
    );
    return (await this.views(tx, eq(invitations.id, row!.id), { skip: 0, take: 1 }))[0]!;
  }

  /** Views of the invitations matching `where`, newest first. */
  private async views(
    executor: Executor,
    where: SQL,
    page: { skip: number; take: number },
  ): Promise<InvitationView[]> {
    const rows = await executor
      .select({
        invitation: invitations,
        organizationId: organizations.publicId,
        invitedBy: users.publicId,
        offerId: commercialOffers.publicId,
      })
      .from(invitations)
      .innerJoin(organizations, eq(organizations.id, invitations.organizationId))
      .leftJoin(users, eq(users.id, invitations.invitedByUserId))
      .leftJoin(commercialOffers, eq(commercialOffers.id, invitations.commercialOfferId))
      .where(where)
      .orderBy(desc(invitations.id))
      .limit(page.take)
      .offset(page.skip);
    const nowMs = this.clock.nowMs();
    return rows.map(({ invitation: r, organizationId, invitedBy, offerId }) => ({
      id: r.publicId,
      organizationId,
      kind: r.kind,
      email: r.email,
      role: r.role,
      name: r.inviteeName,
      status: r.acceptedAt
        ? 'accepted'
        : r.revokedAt
          ? 'revoked'
          : r.expiresAt!.getTime() <= nowMs
            ? 'expired'
            : 'pending',
      invitedBy,
      commercialOfferId: offerId,
      createdAt: r.createdAt.toISOString(),
      expiresAt: r.expiresAt!.toISOString(),
      acceptedAt: r.acceptedAt ? r.acceptedAt.toISOString() : null,
      revokedAt: r.revokedAt ? r.revokedAt.toISOString() : null,
    }));
  }
}
