/**
 * OAuth for MCP connectors (issue 18) with `oauth4webapi` as an independent client over real HTTP: discovery from a
 * `WWW-Authenticate` challenge (simulated: the MCP endpoint is another engineer's), protected-resource and
 * authorization-server metadata, dynamic registration and client ID metadata documents, the authorization code flow
 * with PKCE S256 and `resource` (RFC 8707), the consent page (Chromium in `mcp-oauth-browser.test.ts`), the token
 * endpoint (exact binding, single-use codes, rotating refresh credentials, reuse and the grace window by the clock,
 * two concurrent refreshes), revocation, and when a connection ends (spec "Authentication" rules 1-4). The stored
 * grant and credentials are asserted in the database.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { and, eq, isNull } from 'drizzle-orm';
import * as oauth from 'oauth4webapi';
import { baseUrlOf } from '../../../../test/support/platform.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { hashApiKey } from '../../../platform/crypto.ts';
import type { Db } from '../../../platform/database.ts';
import {
  mcpAccessTokens,
  mcpGrants,
  mcpRefreshTokens,
  oauthClients,
  organizations,
  storefronts,
  users,
} from '../db/schema.ts';
import { insertConnection } from './support/connectors.ts';
import { type MediaBuyingHarness, STRONG_PASSWORD, startMediaBuying } from './support/harness.ts';

const insecure = { [oauth.allowInsecureRequests]: true };

describe('media buying: OAuth for MCP connectors', () => {
  const clock = new ManualClock(new Date());
  let h: MediaBuyingHarness;
  let base: string;
  let db: Db;
  let as: oauth.AuthorizationServer;
  let buyerResource: string;
  let callbackServer: http.Server;
  let redirectUri: string;
  /** The client ID metadata document server: path -> [status, body]; hits counted. */
  const documents = new Map<string, [number, string]>();
  const hits = new Map<string, number>();
  let documentBase: string;
  let documentServer: http.Server;

  before(async () => {
    h = await startMediaBuying({ clock, listen: true });
    base = baseUrlOf(h.platform.app('media-buying'));
    db = h.platform.booted.services.get('media-buying')!.ctx.db;
    buyerResource = `${base}/mcp/v3`;
    as = await oauth.processDiscoveryResponse(
      new URL(base),
      await oauth.discoveryRequest(new URL(base), { algorithm: 'oauth2', ...insecure }),
    );
    // The connector's redirect URI: a loopback listener (RFC 8252).
    callbackServer = http.createServer((_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve));
    redirectUri = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}/callback`;
    documentServer = http.createServer((req, res) => {
      hits.set(req.url!, (hits.get(req.url!) ?? 0) + 1);
      const doc = documents.get(req.url!);
      res.writeHead(doc?.[0] ?? 404, { 'content-type': 'application/json' });
      res.end(doc?.[1] ?? '{}');
    });
    await new Promise<void>((resolve) => documentServer.listen(0, '127.0.0.1', resolve));
    documentBase = `http://127.0.0.1:${(documentServer.address() as AddressInfo).port}`;
  });
  after(async () => {
    callbackServer?.close();
    documentServer?.close();
    await h?.close();
  });

  /** Registers a public client with oauth4webapi (RFC 7591). */
  const register = async (name = 'Test assistant'): Promise<oauth.Client> =>
    oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        { client_name: name, redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' },
        insecure,
      ),
    ) as Promise<oauth.Client>;

  /** The authorization URL of a code flow with PKCE S256 and `resource`. */
  const authorizationUrl = async (
    client: oauth.Client,
    params: Record<string, string | undefined> = {},
  ): Promise<{ url: URL; verifier: string; state: string }> => {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    const all: Record<string, string | undefined> = {
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: redirectUri,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      resource: buyerResource,
      state,
      ...params,
    };
    for (const [k, v] of Object.entries(all)) if (v !== undefined) url.searchParams.set(k, v);
    return { url, verifier, state };
  };

  /** GET with a session cookie (no redirects followed). */
  const get = (url: URL | string, cookie?: string) =>
    fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });

  /** The consent form of a consent page: its token and first organization. */
  const consentForm = (html: string) => ({
    consent: /name="consent" value="([^"]+)"/.exec(html)?.[1],
    organization: /<option value="([^"]+)" selected>/.exec(html)?.[1],
  });

  /** Posts the consent form as the page's browser would (the UI origin, the session cookie). */
  const decide = (cookie: string, form: Record<string, string>, origin = base) =>
    fetch(`${base}/oauth/authorize`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });

  /** A whole consent round: the page for `url`, then approve (the first organization). @returns the callback URL. */
  const approve = async (cookie: string, url: URL, organization?: string): Promise<URL> => {
    const pageRes = await get(url, cookie);
    assert.equal(pageRes.status, 200, await pageRes.clone().text());
    const form = consentForm(await pageRes.text());
    const res = await decide(cookie, {
      consent: form.consent!,
      decision: 'approve',
      organization: organization ?? form.organization!,
    });
    assert.equal(res.status, 303, await res.text());
    return new URL(res.headers.get('location')!);
  };

  /** Authorizes and exchanges the code: a fresh connection of the demo user to `resource`. */
  const connect = async (client: oauth.Client, cookie: string, resource = buyerResource) => {
    const { url, verifier, state } = await authorizationUrl(client, { resource });
    const callback = await approve(cookie, url);
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.None(),
      params,
      redirectUri,
      verifier,
      { additionalParameters: { resource }, ...insecure },
    );
    return oauth.processAuthorizationCodeResponse(as, client, response);
  };

  /** A refresh with oauth4webapi, returning the raw response. */
  const refreshRequest = (client: oauth.Client, refreshToken: string, resource = buyerResource) =>
    oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshToken, {
      additionalParameters: { resource },
      ...insecure,
    });

  /** The OAuth error of a token response (RFC 6749 section 5.2), asserting its form. */
  const oauthError = async (response: Response): Promise<string> => {
    assert.equal(response.status, 400);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const body = (await response.json()) as { error: string; error_description?: string };
    assert.equal(typeof body.error, 'string');
    return body.error;
  };

  /** The stored grant of an access credential. */
  const grantOfAccess = async (accessToken: string) => {
    const [row] = await db
      .select({
        grant: mcpGrants,
        revokedAt: mcpAccessTokens.revokedAt,
        expiresAt: mcpAccessTokens.expiresAt,
      })
      .from(mcpAccessTokens)
      .innerJoin(mcpGrants, eq(mcpGrants.id, mcpAccessTokens.grantId))
      .where(eq(mcpAccessTokens.keyHash, hashApiKey(accessToken)));
    return row!;
  };

  /** Whether a stored refresh credential is revoked. */
  const refreshRevoked = async (refreshToken: string) => {
    const [row] = await db
      .select({ revokedAt: mcpRefreshTokens.revokedAt })
      .from(mcpRefreshTokens)
      .where(eq(mcpRefreshTokens.keyHash, hashApiKey(refreshToken)));
    return row!.revokedAt !== null;
  };

  test('metadata: RFC 8414 authorization server, RFC 9728 per MCP endpoint (a storefront only while active)', async () => {
    assert.equal(as.issuer, base);
    assert.equal(as.authorization_endpoint, `${base}/oauth/authorize`);
    assert.equal(as.token_endpoint, `${base}/oauth/token`);
    assert.equal(as.registration_endpoint, `${base}/oauth/register`);
    assert.equal(as.revocation_endpoint, `${base}/oauth/revoke`);
    assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
    assert.equal(as.client_id_metadata_document_supported, true);
    assert.ok(as.token_endpoint_auth_methods_supported?.includes('none'));
    for (const grant of ['authorization_code', 'refresh_token', 'client_credentials'])
      assert.ok(as.grant_types_supported?.includes(grant), grant);
    assert.deepEqual(as.response_types_supported, ['code']);

    const buyer = await oauth.processResourceDiscoveryResponse(
      new URL(buyerResource),
      await oauth.resourceDiscoveryRequest(new URL(buyerResource), insecure),
    );
    assert.equal(buyer.resource, buyerResource);
    assert.deepEqual(buyer.authorization_servers, [base]);
    assert.deepEqual(buyer.bearer_methods_supported, ['header']);
    assert.deepEqual(buyer.scopes_supported, ['adcp:buyer']);
    assert.equal(buyer.resource_name, 'Media buying (buyer)');
    for (const path of ['/mcp/v3/creative', '/mcp/v3/admin']) {
      const doc = await oauth.processResourceDiscoveryResponse(
        new URL(`${base}${path}`),
        await oauth.resourceDiscoveryRequest(new URL(`${base}${path}`), insecure),
      );
      assert.equal(doc.resource, `${base}${path}`);
    }

    const [storefront] = await db.select().from(storefronts).where(eq(storefronts.status, 'active')).limit(1);
    const sfResource = `${base}/mcp/v3/storefronts/${storefront!.publicId}`;
    const sf = await oauth.processResourceDiscoveryResponse(
      new URL(sfResource),
      await oauth.resourceDiscoveryRequest(new URL(sfResource), insecure),
    );
    assert.equal(sf.resource, sfResource);
    assert.deepEqual(sf.scopes_supported, ['adcp:storefront']);
    assert.match(String(sf.resource_name), new RegExp(storefront!.name));
    const unknown = await fetch(
      `${base}/.well-known/oauth-protected-resource/mcp/v3/storefronts/sf_${'0'.repeat(32)}`,
    );
    assert.equal(unknown.status, 404);
    await db.update(storefronts).set({ status: 'archived' }).where(eq(storefronts.id, storefront!.id));
    try {
      const archived = await fetch(
        `${base}/.well-known/oauth-protected-resource/mcp/v3/storefronts/${storefront!.publicId}`,
      );
      assert.equal(archived.status, 404);
    } finally {
      await db.update(storefronts).set({ status: 'active' }).where(eq(storefronts.id, storefront!.id));
    }
    assert.equal((await fetch(`${base}/.well-known/oauth-protected-resource/mcp/v4`)).status, 404);
  });

  test('dynamic registration (RFC 7591): https or loopback http redirect URIs only, public clients', async () => {
    const client = await register('Registered app');
    assert.match(client.client_id, /^mcpc_[0-9a-f]{32}$/);
    assert.equal(client.token_endpoint_auth_method, 'none');
    assert.deepEqual(client.redirect_uris, [redirectUri]);
    const [row] = await db.select().from(oauthClients).where(eq(oauthClients.clientId, client.client_id));
    assert.equal(row!.name, 'Registered app');
    assert.equal(row!.kind, 'dynamic');

    const refused = async (metadata: Record<string, unknown>, error: string) => {
      const res = await fetch(`${base}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(metadata),
      });
      assert.equal(res.status, 400, JSON.stringify(metadata));
      assert.equal(((await res.json()) as { error: string }).error, error, JSON.stringify(metadata));
    };
    await refused({ redirect_uris: ['http://connector.example/callback'] }, 'invalid_redirect_uri');
    await refused({ redirect_uris: ['https://connector.example/cb#frag'] }, 'invalid_redirect_uri');
    await refused({ redirect_uris: ['com.example.app:/callback'] }, 'invalid_redirect_uri');
    await refused({ redirect_uris: ['https://user:pw@connector.example/cb'] }, 'invalid_redirect_uri');
    await refused({ redirect_uris: [] }, 'invalid_client_metadata');
    await refused(
      { redirect_uris: ['https://connector.example/cb'], token_endpoint_auth_method: 'client_secret_basic' },
      'invalid_client_metadata',
    );
    await refused(
      { redirect_uris: ['https://connector.example/cb'], grant_types: ['client_credentials'] },
      'invalid_client_metadata',
    );
    // https anywhere and http on loopback (localhost, [::1]) are fine.
    for (const uri of ['https://connector.example/cb', 'http://localhost:8080/cb', 'http://[::1]:9/cb']) {
      const res = await fetch(`${base}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [uri] }),
      });
      assert.equal(res.status, 201, uri);
    }
  });
});
