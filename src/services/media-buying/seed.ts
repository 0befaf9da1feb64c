/**
 * The demo data of a first start: an admitted Buyer Account with an administrator (who accepted the current terms), an
 * advertiser and a user API key; a Seller Account with a storefront, a text line answered by it (phone lines enabled)
 * and a user API key of its administrator; the first Terms of Service version.
 */
import { randomBytes } from 'node:crypto';
import type { Executor } from '../../platform/database.ts';
import type { Catalog, ProductInput } from './catalog/index.ts';
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
    catalog: Catalog;
    now: Date;
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
  const advertiser = await organizations.createAdvertiser(tx, buyer.id, 'Demo Advertiser', actor);
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
  const catalog = await seedCatalog(tx, deps.catalog, {
    actor,
    buyerId: buyer.id,
    sellerId: seller.id,
    storefrontPublicId: storefront.publicId,
    advertiserPublicId: advertiser.publicId,
    europe: await organizations.create(
      tx,
      { kind: 'seller', name: 'Demo Seller Europe', admitted: true },
      OPERATOR,
    ),
    organizations,
    now: deps.now,
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
    advertiserId: advertiser.publicId,
    ...catalog,
  };
}

const FORMAT_AGENT = 'https://creative.adcontextprotocol.org';

function product(
  name: string,
  currency: string,
  price: { model: 'cpm' | 'cpc' | 'flat_rate'; fixed?: number; floor?: number },
  extra: Partial<ProductInput> = {},
): ProductInput {
  return {
    name,
    description: `${name}: demo inventory of the seeded catalog.`,
    deliveryType: price.fixed !== undefined ? 'guaranteed' : 'non_guaranteed',
    channels: ['display'],
    formatIds: [{ agentUrl: FORMAT_AGENT, id: 'display_300x250' }],
    publisherProperties: [{ publisherDomain: 'news.example', selectionType: 'all' }],
    pricingOptions: [
      {
        pricingOptionId: `${price.model}_${currency.toLowerCase()}`,
        pricingModel: price.model,
        currency,
        ...(price.fixed !== undefined ? { fixedPrice: price.fixed } : { floorPrice: price.floor ?? 1 }),
      },
    ],
    ...extra,
  };
}

/**
 * The demo catalog: three storefronts in two currencies (USD on the Demo Seller, EUR on Demo Seller Europe), each
 * with a sales agent, its pricing rule and products; the Demo Buyer's operator identity (Buyer Setup step 1), an
 * active account link, a campaign of USD 50,000 and a live media buy whose delivery the simulator reports daily.
 */
async function seedCatalog(
  tx: Executor,
  catalog: Catalog,
  s: {
    actor: Actor;
    buyerId: number;
    sellerId: number;
    storefrontPublicId: string;
    advertiserPublicId: string;
    europe: { id: number; publicId: string };
    organizations: Organizations;
    now: Date;
  },
) {
  const seller = { ...s.actor, organizationId: s.sellerId };
  const europe = { ...OPERATOR, organizationId: s.europe.id };
  const buyer = { ...s.actor, organizationId: s.buyerId };
  const streaming = await s.organizations.createStorefront(
    tx,
    s.sellerId,
    { name: 'Demo Streaming', currency: 'USD' },
    s.actor,
  );
  const euro = await s.organizations.createStorefront(
    tx,
    s.europe.id,
    { name: 'Demo Europe', currency: 'EUR' },
    OPERATOR,
  );
  const all = ['update_budget', 'update_flight', 'pause', 'resume', 'cancel', 'update_creatives'] as const;
  for (const [acting, sf, name] of [
    [seller, s.storefrontPublicId, 'Demo Display Agent'],
    [seller, streaming.publicId, 'Demo Streaming Agent'],
    [europe, euro.publicId, 'Demo Europe Agent'],
  ] as const) {
    const { agent } = await catalog.createSalesAgent(tx, acting, sf, { name, capabilities: [...all] });
    await catalog.setPricingRule(tx, acting, agent.publicId, 1500);
  }
  const display = await catalog.createProduct(
    tx,
    seller,
    s.storefrontPublicId,
    product('Homepage takeover', 'USD', { model: 'cpm', fixed: 12.5 }),
  );
  await catalog.createProduct(
    tx,
    seller,
    s.storefrontPublicId,
    product('Run of site', 'USD', { model: 'cpm', floor: 2.75 }),
  );
  await catalog.createProduct(
    tx,
    seller,
    s.storefrontPublicId,
    product('Search clicks', 'USD', { model: 'cpc', fixed: 0.9 }),
  );
  await catalog.createProduct(
    tx,
    seller,
    streaming.publicId,
    product(
      'Connected TV prime time',
      'USD',
      { model: 'cpm', fixed: 32 },
      {
        channels: ['ctv'],
        formatIds: [{ agentUrl: FORMAT_AGENT, id: 'video_30s' }],
      },
    ),
  );
  await catalog.createProduct(
    tx,
    europe,
    euro.publicId,
    product('Premium news EU', 'EUR', { model: 'cpm', fixed: 9.8 }),
  );
  await catalog.createProduct(
    tx,
    europe,
    euro.publicId,
    product('Sponsorship EU', 'EUR', { model: 'flat_rate', fixed: 2500 }),
  );
  await catalog.setOperatorIdentity(tx, buyer, { domain: 'demo-buyer.example', name: 'Demo Buyer Ltd' });
  const link = await catalog.requestAccountLink(tx, buyer, {
    advertiserId: s.advertiserPublicId,
    storefrontId: s.storefrontPublicId,
  });
  await catalog.decideAccountLink(tx, seller, link.row.publicId, 'approve');
  const start = s.now;
  const end = new Date(start.getTime() + 30 * 86_400_000);
  const { campaign } = await catalog.createCampaign(tx, buyer, {
    advertiserId: s.advertiserPublicId,
    name: 'Demo Campaign',
    budget: { total: 50_000, currency: 'USD' },
    flightStart: start,
    flightEnd: end,
  });
  const { buy } = await catalog.createMediaBuy(tx, buyer, {
    campaignId: campaign.publicId,
    name: 'Demo homepage buy',
    packages: [{ productId: display.product.publicId, pricingOptionId: 'cpm_usd', budget: 15_000 }],
  });
  await catalog.createCreative(tx, buyer, {
    advertiserId: s.advertiserPublicId,
    name: 'Demo banner',
    formatId: { agentUrl: FORMAT_AGENT, id: 'display_300x250' },
    assets: { image: { url: 'https://cdn.demo-buyer.example/banner.png', width: 300, height: 250 } },
  });
  return {
    campaignId: campaign.publicId,
    mediaBuyId: buy.publicId,
    europeSellerOrganizationId: s.europe.publicId,
  };
}
