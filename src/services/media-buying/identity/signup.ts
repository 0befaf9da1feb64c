/**
 * The interrupted signup (spec "States and transitions", Signup): after a sign-in answers `{requiresSignup: true,
 * redirectUrl}`, the client reads the non-secret form fields of the signup-recovery token (`GET
 * /auth/verified-signup-data/:token`), checks the email's availability and creates the account, both with the token
 * as `verifiedSignupToken`.
 *
 * - The token (`mbv_`, ten minutes, bound to the identity's subject and email) is read under a row lock and consumed
 *   in the transaction that creates the account: two concurrent creations with one token make one account; the other
 *   is refused (422). A refused attempt (a form error, the plan rollout, the buyer waitlist, an identity that has an
 *   account) spends the token and writes nothing else (spec "Signup": after a failed attempt the user authenticates
 *   again); a consumed, expired or rebound token needs a new sign-in.
 * - Account types (`accountType`, chosen in the form; `signup_experience` only preselects it and grants nothing):
 *   `MEDIA_COMPANY` creates the user, an admitted Seller Account with the user as administrator, and its first
 *   storefront; `ADVERTISER` and `ADVERTISER_PORTFOLIO` create the user and an admitted Buyer Account with the user as
 *   administrator while public buyer signup is `open`, and are refused (403) while it is `waitlisted` (the advertiser
 *   preview form is the way then); `DEVELOPER` creates the user only (no organization: an invitation adds one).
 * - Plan selection (`plan`) and signup codes (`signupCode`) are part of a media company's signup and are refused while
 *   the plan rollout is `closed`.
 * - Creating the account signs the person in (a session, method `signup`).
 */
import type { Clock } from '../../../platform/clock.ts';
import type { Db, Executor } from '../../../platform/database.ts';
import type { FieldIssue } from '../../../platform/errors.ts';
import { accountSignups } from '../db/schema.ts';
import { conflict, forbidden, notFound, semanticValidation } from '../media-buying-errors.ts';
import type { Organizations } from '../organizations/index.ts';
import { type Accounts, normalizeEmail } from './accounts.ts';
import type { SignupExperience } from './sign-in-states.ts';

/** Account types of the signup form. */
export const ACCOUNT_TYPES = ['MEDIA_COMPANY', 'ADVERTISER', 'ADVERTISER_PORTFOLIO', 'DEVELOPER'] as const;
export type AccountType = (typeof ACCOUNT_TYPES)[number];

/** The plans a media company may select while the plan rollout is open. */
export const PLANS = ['starter', 'growth', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

/** The form of account creation. */
export interface AccountInput {
  verifiedSignupToken: string;
  accountType: AccountType;
  /** The person's display name. */
  name: string;
  /** The organization's name (media companies and advertisers). */
  organizationName?: string;
  /** A media company's first storefront (default: the organization's name, USD). */
  storefront?: { name?: string; currency?: string };
  plan?: Plan;
  signupCode?: string;
}

/** The platform settings account creation reads. */
type PlatformSettingsView = Awaited<ReturnType<Organizations['settings']>>;

const tokenRefused = (): FieldIssue => ({
  location: 'body',
  field: 'verifiedSignupToken',
  message: 'is unknown, used or expired, or your identity changed; sign in again for a new one',
});

/** The interrupted signup; see the module comment. */
export class Signup {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly accounts: Accounts,
    private readonly organizations: Organizations,
  ) {}

  /**
   * `GET /auth/verified-signup-data/:token`: the non-secret fields for the signup form.
   * @throws ApiError 404 `NOT_FOUND` for an unknown, used or expired token.
   */
  async signupData(token: string) {
    const row = await this.accounts.signupRecovery(this.db, token);
    if (!row) throw notFound('Signup data');
    return {
      email: row.identity.email,
      name: row.identity.name,
      emailVerified: true as const,
      signupExperience: row.token.signupExperience as SignupExperience | null,
      expiresAt: row.token.expiresAt!.toISOString(),
    };
  }

  /**
   * The email-availability check: may the token's email create an account, and is the plan-selection step open?
   * `storefrontSignupAllowed` is the legacy name of the plan-step flag (same value as `storefrontIuSignupAllowed`).
   * @throws ApiError 422 `VALIDATION_ERROR` for a refused token, or an `email` that is not the token's.
   */
  async emailAvailability(token: string, email: string) {
    const row = await this.accounts.signupRecovery(this.db, token);
    if (!row) throw semanticValidation([tokenRefused()]);
    if (normalizeEmail(email) !== row.identity.email)
      throw semanticValidation([
        { location: 'body', field: 'email', message: 'is not the verified email of this signup' },
      ]);
    const user = await this.accounts.userOfIdentity(row.identity.id);
    const settings = await this.organizations.settings();
    const accountAllowed = user === undefined;
    const planStep = accountAllowed && settings.planRollout === 'open';
    return {
      email: row.identity.email,
      storefrontAccountSignupAllowed: accountAllowed,
      storefrontIuSignupAllowed: planStep,
      storefrontSignupAllowed: planStep,
    };
  }

  /**
   * Account creation (module comment): everything is checked before anything is written, in one transaction that
   * consumes the token. A refused attempt consumes it too (spec "Signup": "after a failed attempt the user
   * authenticates again for a fresh token"): the refusal is answered once the token's consumption has committed.
   * @returns the user, the organization and storefront made (or null), and the session to set.
   * @throws ApiError 422 `VALIDATION_ERROR` (refused token, form errors, plan data while the rollout is closed),
   *   403 `FORBIDDEN` (`buyer_signup_waitlisted`), 409 `CONFLICT` (the identity already has an account).
   */
  async createAccount(input: AccountInput) {
    const result = await this.db.transaction(async (tx) => {
      const row = await this.accounts.signupRecovery(tx, input.verifiedSignupToken, true);
      if (!row) throw semanticValidation([tokenRefused()]);
      const refusal = await this.refusalOf(tx, input, row.identity.id);
      if (refusal) {
        await this.accounts.consumeSignupRecovery(tx, row.token.id);
        return { refusal };
      }
      const user = await this.accounts.createUser(tx, row.identity, input.name.trim());
      const made = await this.organizationOf(tx, input, user.id);
      await tx.insert(accountSignups).values({
        userId: user.id,
        organizationId: made.organization?.id ?? null,
        accountType: input.accountType,
        signupExperience: row.token.signupExperience,
        plan: input.plan ?? null,
        signupCode: input.signupCode ?? null,
        createdAt: this.clock.now(),
      });
      await this.accounts.consumeSignupRecovery(tx, row.token.id);
      const session = await this.accounts.openSession(tx, user.id, 'signup');
      return { created: { user, ...made, session } };
    });
    if ('refusal' in result) throw result.refusal;
    return result.created;
  }

  /**
   * Why an account cannot be created with a valid token, if it cannot: form errors, plan data while the rollout is
   * closed, a buyer account while buyer signup is waitlisted, an identity that already has an account.
   */
  private async refusalOf(tx: Executor, input: AccountInput, identityId: number) {
    const settings = await this.organizations.settings(tx);
    const issues = formIssues(input, settings);
    if (issues.length > 0)
      return semanticValidation(
        issues,
        issues.some((i) => i.message.startsWith('is not accepted yet'))
          ? 'Plan selection and signup codes are not available yet; sign up without them.'
          : undefined,
      );
    const buyer = input.accountType === 'ADVERTISER' || input.accountType === 'ADVERTISER_PORTFOLIO';
    if (buyer && settings.buyerSignup === 'waitlisted')
      return forbidden(
        'Advertiser signup is waitlisted: send the advertiser preview form, and you will be invited once admitted.',
        { reason: 'buyer_signup_waitlisted' },
      );
    if (await this.accounts.userOfIdentity(identityId, tx))
      return conflict('This identity already has an account; sign in instead.');
    return undefined;
  }

  /** The organization (administered by `userId`) and storefront of a new account, per its type (module comment). */
  private async organizationOf(tx: Executor, input: AccountInput, userId: number) {
    if (input.accountType === 'DEVELOPER') return { organization: null, storefront: null };
    const actor = { userId, kind: 'signup' };
    const seller = input.accountType === 'MEDIA_COMPANY';
    const organization = await this.organizations.create(
      tx,
      { kind: seller ? 'seller' : 'buyer', name: input.organizationName!.trim(), admitted: true },
      actor,
    );
    await this.organizations.addMember(tx, organization.id, userId, 'admin', actor);
    const storefront = seller
      ? await this.organizations.createStorefront(
          tx,
          organization.id,
          {
            name: (input.storefront?.name ?? input.organizationName!).trim(),
            currency: input.storefront?.currency ?? 'USD',
          },
          actor,
        )
      : null;
    return { organization, storefront };
  }
}

/** What the form gets wrong for its account type and the platform settings (module comment). */
function formIssues(input: AccountInput, settings: PlatformSettingsView): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const bad = (field: string, message: string) => issues.push({ location: 'body', field, message });
  const type = input.accountType;
  for (const field of ['plan', 'signupCode'] as const) {
    if (input[field] === undefined) continue;
    if (settings.planRollout === 'closed')
      bad(field, 'is not accepted yet: plan selection and signup codes are not open');
    else if (type !== 'MEDIA_COMPANY') bad(field, "is part of a media company's signup only");
  }
  if (type === 'DEVELOPER' && input.organizationName !== undefined)
    bad('organizationName', 'is not taken for a developer account (it has no organization)');
  if (type !== 'DEVELOPER' && input.organizationName === undefined)
    bad('organizationName', 'is required for this account type');
  if (type !== 'MEDIA_COMPANY' && input.storefront !== undefined)
    bad('storefront', "is part of a media company's signup only");
  return issues;
}
