/**
 * Cross-organization probes on every route that takes an id (spec "Errors": `NOT_FOUND` is "unknown id or hidden from
 * scope"): an administrator of another organization, signed in, sends each id of this organization to each route and
 * gets the same 404 as for an unknown id, and nothing changes. The route list is read from the OpenAPI document, so a
 * route added later without a probe fails here.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { advertiserAccounts, salesAgents, storefronts } from '../db/schema.ts';
import { insertConnection } from './support/connectors.ts';
import {
  envelopeData,
  envelopeError,
  type MediaBuyingHarness,
  STRONG_PASSWORD,
  startMediaBuying,
} from './support/harness.ts';

/** Routes with an id that are not organization resources (a token in the path, static assets). */
const NOT_ORGANIZATION_RESOURCES = new Set([
  '/auth/verified-signup-data/{token}',
  '/ui/assets/{name}',
  // RFC 9728 metadata of a storefront's MCP endpoint: a public discovery document every MCP client reads.
  '/.well-known/oauth-protected-resource/mcp/v3/storefronts/{storefrontId}',
]);

/** Valid bodies of POST and PUT routes with an id (so the probe reaches the id, not the schema). */
const BODIES: Record<string, unknown> = {
  'post /api/v2/buyer/discovery/{discoveryId}/discover-products': { advertiserId: 'adv_probe' },
  'post /api/v2/storefront/account-links/{accountId}/decision': { decision: 'approve' },
  'post /api/v2/storefront/account-links/{accountId}/payments': { amount: 1 },
  'post /api/v2/storefront/storefronts/{storefrontId}/sales-agents': { name: 'taken over', capabilities: [] },
  'put /api/v2/storefront/sales-agents/{salesAgentId}/pricing-rule': { platformFeeBps: 1 },
  'post /api/v2/storefront/storefronts/{storefrontId}/products': {
    name: 'taken over',
    description: 'x',
    deliveryType: 'guaranteed',
    channels: [],
    formatIds: [{ agentUrl: 'https://creative.example', id: 'f' }],
    publisherProperties: [{ publisherDomain: 'x.example', selectionType: 'all' }],
    pricingOptions: [{ pricingOptionId: 'p', pricingModel: 'cpm', currency: 'USD', fixedPrice: 1 }],
  },
};

/** The body a probe sends: a valid one where the route needs it, so the probe reaches the id. */
function probeBody(method: string, path: string): unknown {
  const known = BODIES[`${method} ${path}`];
  if (known !== undefined || method !== 'patch') return known;
  return path.includes('members') ? { role: 'admin' } : { name: 'taken over' };
}

describe('media buying: every id route answers another organization 404', () => {
  let h: MediaBuyingHarness;
  let ids: Record<string, string>;
  let outsider: string;
  let sellerOutsider: string;

  before(async () => {
    h = await startMediaBuying();
    const owner = await h.signIn(h.demo.email, h.demo.password);
    const memberId = await h.addMember(h.demo.organizationId, 'probed-member@example.com', 'member');
    await h.createUserKey(owner, 'probed key');
    const keyId = envelopeData<{ id: string }[]>(await h.session(owner, { url: '/api/v2/user-api-keys' }))[0]!
      .id;
    const orgKey = (
      await h.ops({
        method: 'POST',
        url: '/_ops/org-api-keys',
        payload: { organizationId: h.demo.organizationId, permissions: ['platform:read'] },
      })
    ).json() as { id: string };
    const app = envelopeData<{ application: { id: string; secrets: { id: number }[] } }>(
      await h.session(owner, {
        method: 'POST',
        url: '/api/v2/m2m-applications',
        payload: { name: 'probed app' },
      }),
    ).application;
    const agent = envelopeData<{ record: { id: string } }>(
      await h.session(owner, {
        method: 'POST',
        url: '/api/v2/buyer-agent-credentials',
        payload: { agentIdentifier: 'https://probed.example' },
      }),
    ).record;
    const advertiser = envelopeData<{ id: string }[]>(
      await h.session(owner, { url: '/api/v2/buyer/advertisers' }),
    )[0]!;
    const invitation = envelopeData<{ id: string }>(
      await h.session(owner, {
        method: 'POST',
        url: '/api/v2/organizations/current/invitations',
        payload: { email: 'probed-invitee@example.com', role: 'member' },
      }),
    );
    const me = envelopeData<{ user: { id: string } }>(await h.session(owner, { url: '/auth/me' }));
    const connection = await insertConnection(h.platform.booted.services.get('media-buying')!.ctx.db, {
      userPublicId: me.user.id,
      appName: 'Probed connector',
      resource: 'http://127.0.0.1:4100/mcp/v3',
      firstConnectedAt: new Date(),
    });
    // A Commercial Offer lives in an organization that was admitted with a first-administrator invitation.
    const offered = await h.createOrganization('buyer', 'Offered Buyer');
    const setup = (
      await h.ops({
        method: 'POST',
        url: `/_ops/organizations/${offered}/setup-invitation`,
        payload: {
          email: 'offered-admin@example.com',
          commercialOffer: { title: 'Launch', terms: '8% fee' },
        },
      })
    ).json() as { commercialOffer: { id: string } };
    // Part 2: a discovery session of the demo buyer, and the demo seller's storefront, agent and account link.
    const discovery = envelopeData<{ discoveryId: string }>(
      await h.session(owner, {
        method: 'POST',
        url: '/api/v2/buyer/discovery/new/discover-products',
        payload: { advertiserId: advertiser.id },
      }),
    );
    const mbDb = h.platform.booted.services.get('media-buying')!.ctx.db;
    const [sf] = await mbDb
      .select({ id: storefronts.id, publicId: storefronts.publicId })
      .from(storefronts)
      .where(eq(storefronts.name, 'Demo Storefront'));
    const [agent2] = await mbDb
      .select({ publicId: salesAgents.publicId })
      .from(salesAgents)
      .where(eq(salesAgents.storefrontId, sf!.id));
    const [link] = await mbDb
      .select({ publicId: advertiserAccounts.publicId })
      .from(advertiserAccounts)
      .where(eq(advertiserAccounts.storefrontId, sf!.id));
    ids = {
      mediaBuyId: h.demo.mediaBuyId,
      discoveryId: discovery.discoveryId,
      storefrontId: sf!.publicId,
      salesAgentId: agent2!.publicId,
      accountId: link!.publicId,
      userId: memberId,
      keyId,
      orgKeyId: orgKey.id,
      applicationId: app.id,
      secretId: String(app.secrets[0]!.id),
      credentialId: agent.id,
      advertiserId: advertiser.id,
      invitationId: invitation.id,
      connectionId: connection.id,
      offerId: setup.commercialOffer.id,
    };
    const other = await h.createOrganization('buyer', 'Outsider Buyer');
    await h.addMember(other, 'outsider-admin@example.com', 'admin');
    outsider = await h.signInAccepted('outsider-admin@example.com', STRONG_PASSWORD);
    // Seller routes are probed by a seller's administrator (a buyer is refused them as the wrong account kind).
    const otherSeller = await h.createOrganization('seller', 'Outsider Seller');
    await h.addMember(otherSeller, 'outsider-seller@example.com', 'admin');
    sellerOutsider = await h.signInAccepted('outsider-seller@example.com', STRONG_PASSWORD);
  });
  after(() => h?.close());

  test("each route with an id, each method: 404 NOT_FOUND for another organization's id, nothing changed", async () => {
    const doc = (await h.call({ url: '/openapi.json' })).json() as {
      paths: Record<string, Record<string, { requestBody?: unknown }>>;
    };
    const probed: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      if (!path.includes('{') || path.startsWith('/_ops/') || NOT_ORGANIZATION_RESOURCES.has(path)) continue;
      for (const method of Object.keys(operations)) {
        if (method === 'head') continue;
        const url = path.replace(/\{(\w+)\}/g, (_, name: string) => {
          const key = name === 'keyId' && path.startsWith('/api/v2/org-api-keys') ? 'orgKeyId' : name;
          assert.ok(ids[key], `no probe id for {${name}} of ${path}: add one`);
          return ids[key]!;
        });
        const payload = probeBody(method, path);
        const res = await h.session(path.startsWith('/api/v2/storefront/') ? sellerOutsider : outsider, {
          method: method.toUpperCase() as 'GET',
          url,
          ...(payload ? { payload } : {}),
        });
        assert.equal(res.statusCode, 404, `${method.toUpperCase()} ${url}: ${res.body}`);
        assert.equal(envelopeError(res).code, 'NOT_FOUND');
        probed.push(`${method.toUpperCase()} ${path}`);
      }
    }
    assert.ok(probed.length >= 14, probed.join('\n'));
    // Nothing was changed by the probes: the owner's resources are all still there.
    const owner = await h.signIn(h.demo.email, h.demo.password);
    const members = envelopeData<{ userId: string; role: string }[]>(
      await h.session(owner, { url: '/api/v2/organizations/current/members' }),
    );
    assert.equal(members.find((m) => m.userId === ids.userId)?.role, 'member');
    assert.ok(
      envelopeData<{ id: string }[]>(await h.session(owner, { url: '/api/v2/m2m-applications' })).some(
        (a) => a.id === ids.applicationId,
      ),
    );
    assert.ok(
      envelopeData<{ id: string }[]>(await h.session(owner, { url: '/api/v2/buyer-agent-credentials' })).some(
        (c) => c.id === ids.credentialId,
      ),
    );
    assert.equal(
      envelopeData<{ id: string }[]>(await h.session(owner, { url: '/api/v2/connected-apps' })).length,
      1,
    );
  });
});
