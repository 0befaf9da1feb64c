/**
 * The demo data of a first start: an admitted Buyer Account with an administrator (who accepted the current terms), an
 * advertiser and a user API key; a Seller Account with a storefront; the first Terms of Service version.
 */
import { randomBytes } from 'node:crypto';
import type { Executor } from '../../platform/database.ts';
import type { MediaBuyingCredentials } from './credentials/index.ts';
import type { Accounts } from './identity/index.ts';
import { type Actor, OPERATOR, type Organizations } from './organizations/index.ts';

/** The demo administrator's email. */
export const DEMO_EMAIL = 'admin@demo-buyer.example';

/** The first Terms of Service version. */
export const INITIAL_TERMS = {
  version: '2026-11-01',
  title: 'Media Buying Terms of Service',
  body:
    'These terms govern the use of the media-buying platform by Buyer Accounts and Seller Accounts. ' +
    'Accept them to create, change or delete anything on the platform.',
};

/**
 * Seeds the demo data (module comment) in `tx`.
 * @returns the demo credentials for the banner and `credentials.json`: `uiUrl` (the sign-in page), `email`,
 *   `password` (random, strong), `apiKey` (a user API key of the administrator) and the organization ids.
 */
export async function seedDemo(
  tx: Executor,
  deps: {
    organizations: Organizations;
    accounts: Accounts;
    credentials: MediaBuyingCredentials;
    publicUrl: string;
  },
): Promise<Record<string, unknown>> {
  const { organizations, accounts, credentials } = deps;
  await organizations.publishTerms(tx, INITIAL_TERMS);
  const buyer = await organizations.create(
    tx,
    { kind: 'buyer', name: 'Demo Buyer', admitted: true },
    OPERATOR,
  );
  const seller = await organizations.create(
    tx,
    { kind: 'seller', name: 'Demo Seller', admitted: true },
    OPERATOR,
  );
  // Four random groups of letters and digits: strong by any estimate, never a dictionary word.
  const password = randomBytes(18).toString('base64url').match(/.{6}/g)!.join('-');
  const identity = await accounts.createIdentity(tx, {
    email: DEMO_EMAIL,
    name: 'Demo Admin',
    password,
    verified: true,
  });
  const user = await accounts.createUser(tx, identity, 'Demo Admin');
  await organizations.addMember(tx, buyer.id, user.id, 'admin', OPERATOR);
  await organizations.addMember(tx, seller.id, user.id, 'admin', OPERATOR);
  const actor: Actor = { userId: user.id, kind: 'operator' };
  await organizations.acceptTerms(tx, user.id, INITIAL_TERMS.version, { ...actor, organizationId: buyer.id });
  await organizations.createAdvertiser(tx, buyer.id, 'Demo Advertiser', actor);
  await organizations.createStorefront(tx, seller.id, { name: 'Demo Storefront', currency: 'USD' }, actor);
  const key = await credentials.keys.createUserKey(tx, {
    userId: user.id,
    organizationId: buyer.id,
    organizationPublicId: buyer.publicId,
    label: 'demo key (first start)',
  });
  return {
    uiUrl: `${deps.publicUrl}/sign-in`,
    email: DEMO_EMAIL,
    password,
    apiKey: key.key,
    organizationId: buyer.publicId,
    sellerOrganizationId: seller.publicId,
  };
}
