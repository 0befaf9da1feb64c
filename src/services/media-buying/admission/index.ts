/**
 * Staged buyer admission: the advertiser preview form, setup and member invitations, their acceptance, Commercial
 * Offers, and their mail. Other folders use this module through this file only.
 */
import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/database.ts';
import type { Accounts } from '../identity/index.ts';
import type { Mailer } from '../mail/index.ts';
import type { Organizations } from '../organizations/index.ts';
import { Invitations } from './invitations.ts';
import { CommercialOffers } from './offers.ts';
import { AdvertiserPreviews } from './previews.ts';

export { PREVIEW_SIGNUP_EXPERIENCES } from './previews.ts';

/** The admission services of one instance. */
export interface Admission {
  previews: AdvertiserPreviews;
  invitations: Invitations;
  offers: CommercialOffers;
}

/** Builds the admission services. `uiOrigin` is the origin of the UI pages invitation links open (read per use). */
export function createAdmission(deps: {
  db: Db;
  clock: Clock;
  organizations: Organizations;
  accounts: Accounts;
  mailer: Mailer;
  uiOrigin: () => string;
}): Admission {
  const offers = new CommercialOffers(deps.db, deps.clock, deps.organizations);
  return {
    offers,
    previews: new AdvertiserPreviews(deps.db, deps.clock, deps.organizations, deps.mailer),
    invitations: new Invitations(deps.db, deps.clock, {
      organizations: deps.organizations,
      accounts: deps.accounts,
      mailer: deps.mailer,
      offers,
      uiOrigin: deps.uiOrigin,
    }),
  };
}
