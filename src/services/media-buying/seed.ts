/**
 * The demo data of a first start: an admitted Buyer Account with an administrator (who accepted the current terms), an
 * advertiser and a user API key; a Seller Account with a storefront, a text line answered by it (phone lines enabled)
 * and a user API key of its administrator; the first Terms of Service version.
 */
import { randomBytes } from 'node:crypto';
import type { Executor } from '../../platform/database.ts';
import type { Texting } from './communications/index.ts';
import type { MediaBuyingCredentials } from './credentials/index.ts';
import type { Accounts } from './identity/index.ts';
import { type Actor, OPERATOR, type Organizations } from './organizations/index.ts';

/** The demo administrator's email. */
export const DEMO_EMAIL = 'admin@demo-buyer.example';

/** The demo Seller Account's text line (a fictional 555-01xx number of Washington, DC). */
export const DEMO_SELLER_LINE = '+12025550100';

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
 *   `password` (random, strong), `apiKey` (a user API key of the administrator) and the organization ids;
 *   `sellerApiKey` (the administrator's key in the Seller Account) and `sellerLine` (its line's number).
 */
export async function seedDemo(
  tx: Executor,
  deps: {
    organizations: Organizations;
    accounts: Accounts;
    credentials: MediaBuyingCredentials;
    texting: Texting;
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
  const storefront = await organizations.createStorefront(
    tx,
    seller.id,
    { name: 'Demo Storefront', currency: 'USD' },
    actor,
  );
  // Part 4: a text line for the Seller Account, answered by its storefront, with its phone lines enabled.
  await deps.texting.assignLine(tx, seller.id, {
    number: DEMO_SELLER_LINE,
    storefrontId: storefront.publicId,
  });
  await deps.texting.setPhoneLines(tx, seller.id, true);
  const sellerKey = await credentials.keys.createUserKey(tx, {
    userId: user.id,
    organizationId: seller.id,
    organizationPublicId: seller.publicId,
    label: 'demo seller key (first start)',
  });
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
    sellerApiKey: sellerKey.key,
    sellerLine: DEMO_SELLER_LINE,
  };
}
