/**
 * OAuth for MCP connectors (issue 18) with `oauth4webapi` as an independent client over real HTTP: protected-resource
 * and authorization-server metadata, dynamic registration and client ID metadata documents, the authorization code
 * flow with PKCE S256 and `resource` (RFC 8707), the consent page (Chromium in `mcp-oauth-browser.test.ts`), the token
 * endpoint (exact binding, single-use codes, rotating refresh credentials, reuse and the grace window by the clock,
 * two concurrent refreshes), scopes (asked, approved, carried, narrowed, enforced on the MCP endpoint with the
 * `insufficient_scope` challenge), revocation, and when a connection ends (spec "Authentication" rules 1-4). The
 * stored grant and credentials are asserted in the database. The MCP SDK client's own OAuth client runs the flow in
 * `mcp-oauth-sdk.test.ts`.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { and, eq, isNull, sql } from 'drizzle-orm';
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
import { adcpSchemaErrors } from './support/adcp-schemas.ts';
import { insertConnection } from './support/connectors.ts';
import { type MediaBuyingHarness, STRONG_PASSWORD, startMediaBuying } from './support/harness.ts';
import { initializeMessage } from './support/mcp-messages.ts';

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
  const connect = async (
    client: oauth.Client,
    cookie: string,
    resource = buyerResource,
    organization?: string,
    scope?: string,
  ) => {
    const { url, verifier, state } = await authorizationUrl(client, { resource, scope });
    const callback = await approve(cookie, url, organization);
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

  /** A refresh request; `resource` null sends none (a connector from before resource binding). */
  const refreshRequest = (
    client: oauth.Client,
    refreshToken: string,
    resource: string | null = buyerResource,
  ) =>
    oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshToken, {
      additionalParameters: resource === null ? {} : { resource },
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
    assert.ok(as.scopes_supported?.includes('adcp:read') && as.scopes_supported.includes('adcp:write'));

    const buyer = await oauth.processResourceDiscoveryResponse(
      new URL(buyerResource),
      await oauth.resourceDiscoveryRequest(new URL(buyerResource), insecure),
    );
    assert.equal(buyer.resource, buyerResource);
    assert.deepEqual(buyer.authorization_servers, [base]);
    assert.deepEqual(buyer.bearer_methods_supported, ['header']);
    assert.deepEqual(buyer.scopes_supported, ['adcp:read', 'adcp:write']);
    assert.equal(buyer.resource_name, 'Media buying (buyer)');
    for (const path of ['/mcp/v3/creative', '/mcp/v3/admin']) {
      const doc = await oauth.processResourceDiscoveryResponse(
        new URL(`${base}${path}`),
        await oauth.resourceDiscoveryRequest(new URL(`${base}${path}`), insecure),
      );
      assert.equal(doc.resource, `${base}${path}`);
      // No tool of these endpoints makes changes: they offer adcp:read only.
      assert.deepEqual(doc.scopes_supported, ['adcp:read'], path);
    }

    const [storefront] = await db.select().from(storefronts).where(eq(storefronts.status, 'active')).limit(1);
    const sfResource = `${base}/mcp/v3/storefronts/${storefront!.publicId}`;
    const sf = await oauth.processResourceDiscoveryResponse(
      new URL(sfResource),
      await oauth.resourceDiscoveryRequest(new URL(sfResource), insecure),
    );
    assert.equal(sf.resource, sfResource);
    assert.deepEqual(sf.scopes_supported, ['adcp:read', 'adcp:write']);
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

    // An endpoint offers adcp:write exactly when one of its tools makes changes (tools/list: readOnlyHint false).
    for (const resource of [buyerResource, sfResource, `${base}/mcp/v3/creative`, `${base}/mcp/v3/admin`]) {
      const post = (body: unknown, session?: string) =>
        fetch(resource, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${h.demo.apiKey}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' } : {}),
          },
          body: JSON.stringify(body),
        });
      const opened = await post(initializeMessage('meta'));
      assert.equal(opened.status, 200, resource);
      const listed = await post(
        { jsonrpc: '2.0', id: 2, method: 'tools/list' },
        opened.headers.get('mcp-session-id')!,
      );
      const { tools } = (
        (await listed.json()) as { result: { tools: { annotations: { readOnlyHint: boolean } }[] } }
      ).result;
      const metadata = await oauth.processResourceDiscoveryResponse(
        new URL(resource),
        await oauth.resourceDiscoveryRequest(new URL(resource), insecure),
      );
      assert.equal(
        metadata.scopes_supported?.includes('adcp:write'),
        tools.some((t) => !t.annotations.readOnlyHint),
        resource,
      );
    }
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

  test('client ID metadata documents: fetched through the outbound guard, client_id must be the URL, bounded, cached', async () => {
    const cookie = await h.signIn(h.demo.email, h.demo.password);
    const url = `${documentBase}/clients/assistant.json`;
    documents.set('/clients/assistant.json', [
      200,
      JSON.stringify({ client_id: url, client_name: 'Metadata Assistant', redirect_uris: [redirectUri] }),
    ]);
    const client: oauth.Client = { client_id: url, token_endpoint_auth_method: 'none' };
    const { url: authUrl } = await authorizationUrl(client);
    const pageRes = await get(authUrl, cookie);
    assert.equal(pageRes.status, 200);
    const html = await pageRes.text();
    assert.match(html, /Metadata Assistant/);
    const [row] = await db.select().from(oauthClients).where(eq(oauthClients.clientId, url));
    assert.equal(row!.kind, 'metadata_document');
    // Cached: a second authorization does not fetch again; past the cache period it does.
    assert.equal((await get(authUrl, cookie)).status, 200);
    assert.equal(hits.get('/clients/assistant.json'), 1);
    clock.advance(16 * 60_000);
    assert.equal((await get(authUrl, cookie)).status, 200);
    assert.equal(hits.get('/clients/assistant.json'), 2);
    // The whole flow works for such a client.
    const token = await connect(client, cookie);
    assert.match(token.access_token, /^mcp_at_/);

    const refusedPage = async (path: string, doc: [number, string]) => {
      documents.set(path, doc);
      const { url: u } = await authorizationUrl({ client_id: `${documentBase}${path}` });
      const res = await get(u, cookie);
      assert.equal(res.status, 400, path);
      assert.match(await res.text(), /metadata document is refused/);
    };
    await refusedPage('/clients/other.json', [
      200,
      JSON.stringify({ client_id: 'https://elsewhere.example/app.json', redirect_uris: [redirectUri] }),
    ]);
    await refusedPage('/clients/big.json', [
      200,
      JSON.stringify({
        client_id: `${documentBase}/clients/big.json`,
        redirect_uris: [redirectUri],
        client_name: 'x'.repeat(6000),
      }),
    ]);
    await refusedPage('/clients/gone.json', [404, '{}']);
    await refusedPage('/clients/bad-redirect.json', [
      200,
      JSON.stringify({
        client_id: `${documentBase}/clients/bad-redirect.json`,
        redirect_uris: ['http://evil.example/cb'],
      }),
    ]);
    // A fetched document is not request input: text storage cannot take (NUL, lone surrogate) is refused, not a 500.
    await refusedPage('/clients/nul-name.json', [
      200,
      JSON.stringify({
        client_id: `${documentBase}/clients/nul-name.json`,
        client_name: 'Evil\u0000App',
        redirect_uris: [redirectUri],
      }),
    ]);
    await refusedPage('/clients/surrogate-name.json', [
      200,
      `{"client_id":"${documentBase}/clients/surrogate-name.json","client_name":"Evil\\ud800App","redirect_uris":["${redirectUri}"]}`,
    ]);
    await refusedPage('/clients/nul-redirect.json', [
      200,
      JSON.stringify({
        client_id: `${documentBase}/clients/nul-redirect.json`,
        redirect_uris: [`${redirectUri}?x=\u0000`],
      }),
    ]);
    // A redirect URI not in the document is never redirected to.
    const { url: other } = await authorizationUrl(client, { redirect_uri: 'http://127.0.0.1:1/elsewhere' });
    assert.equal((await get(other, cookie)).status, 400);
  });

  test('authorization request errors: unknown client and wrong redirect URI shown, the others sent back with state', async () => {
    const client = await register();
    const cookie = await h.signIn(h.demo.email, h.demo.password);
    const page = async (params: Record<string, string | undefined>) => {
      const { url } = await authorizationUrl(client, params);
      const res = await get(url, cookie);
      assert.equal(res.status, 400);
      assert.equal(res.headers.get('location'), null);
    };
    await page({ client_id: 'mcpc_00000000000000000000000000000000' });
    await page({ client_id: undefined });
    await page({ redirect_uri: `${redirectUri}/other` });
    await page({ redirect_uri: undefined });
    const back = async (params: Record<string, string | undefined>, error: string) => {
      const { url, state } = await authorizationUrl(client, params);
      const res = await get(url, cookie);
      assert.equal(res.status, 303, JSON.stringify(params));
      const location = new URL(res.headers.get('location')!);
      assert.equal(`${location.origin}${location.pathname}`, redirectUri);
      assert.equal(location.searchParams.get('error'), error, JSON.stringify(params));
      assert.equal(location.searchParams.get('state'), state);
      assert.equal(location.searchParams.get('iss'), base);
      assert.throws(() => oauth.validateAuthResponse(as, client, location, state));
    };
    await back({ response_type: 'token' }, 'unsupported_response_type');
    await back({ code_challenge_method: 'plain' }, 'invalid_request');
    await back({ code_challenge_method: undefined }, 'invalid_request');
    await back({ code_challenge: 'short' }, 'invalid_request');
    await back({ resource: undefined }, 'invalid_target');
    await back({ resource: `${base}/mcp/v3/` }, 'invalid_target');
    await back({ resource: `${base}/api/v2` }, 'invalid_target');
    await back({ resource: 'https://elsewhere.example/mcp/v3' }, 'invalid_target');
    await back({ resource: `${base}/mcp/v3/storefronts/sf_${'0'.repeat(32)}` }, 'invalid_target');
    // Scopes are adcp:read and adcp:write (the names of the past, one per endpoint, are gone); the admin endpoint has no
    // mutating tool, so it does not offer adcp:write.
    await back({ scope: 'adcp:buyer' }, 'invalid_scope');
    await back({ scope: 'adcp:read openid' }, 'invalid_scope');
    await back({ scope: 'adcp:write', resource: `${base}/mcp/v3/admin` }, 'invalid_scope');
    // Signed out, an error never goes to the redirect URI (anyone can register one: RFC 9700 section 4.11.2): the
    // visitor signs in first.
    for (const params of [{ response_type: 'token' }, { resource: 'https://elsewhere.example/mcp/v3' }]) {
      const { url } = await authorizationUrl(client, params);
      const res = await get(url);
      assert.equal(res.status, 303);
      assert.equal(new URL(res.headers.get('location')!, base).pathname, '/sign-in');
    }
  });

  test('signed out: to the sign-in page and back; consent names app, resource and organization; CSRF and origin rules; deny', async () => {
    const client = await register('Consent App');
    const { url, state } = await authorizationUrl(client);
    const signedOut = await get(url);
    assert.equal(signedOut.status, 303);
    const signIn = new URL(signedOut.headers.get('location')!, base);
    assert.equal(signIn.pathname, '/sign-in');
    assert.equal(signIn.searchParams.get('next'), `${url.pathname}${url.search}`);
    assert.equal((await get(signIn)).status, 200);

    const cookie = await h.signIn(h.demo.email, h.demo.password);
    const pageRes = await get(url, cookie);
    const csp = pageRes.headers.get('content-security-policy')!;
    assert.match(csp, new RegExp(`form-action 'self' ${new URL(redirectUri).origin.replace(/\./g, '\\.')}`));
    assert.equal(pageRes.headers.get('cache-control'), 'no-store');
    const html = await pageRes.text();
    assert.match(html, /Consent App/);
    assert.ok(html.includes(buyerResource));
    assert.ok(html.includes(h.demo.email));
    const [org] = await db
      .select()
      .from(organizations)
      .where(eq(organizations.publicId, h.demo.organizationId));
    assert.ok(html.includes(org!.name), 'the organization is named');
    const form = consentForm(html);
    assert.equal(form.organization, h.demo.organizationId);

    // Rule 4: another origin is refused, whatever the form carries.
    const foreign = await decide(
      cookie,
      { consent: form.consent!, decision: 'approve', organization: form.organization! },
      'http://127.0.0.1:1',
    );
    assert.equal(foreign.status, 403);
    // The consent token is bound to its session: another session of the same user cannot post it.
    const other = await h.signIn(h.demo.email, h.demo.password);
    const stolen = await decide(other, {
      consent: form.consent!,
      decision: 'approve',
      organization: form.organization!,
    });
    assert.equal(stolen.status, 400);
    // A tampered token is refused; so is an organization the user is not in.
    const tampered = await decide(cookie, {
      consent: `${form.consent!.slice(0, -2)}AA`,
      decision: 'approve',
      organization: form.organization!,
    });
    assert.equal(tampered.status, 400);
    const notMine = await decide(cookie, {
      consent: form.consent!,
      decision: 'approve',
      organization: `org_${'0'.repeat(32)}`,
    });
    assert.equal(notMine.status, 400);
    // Without a session, no decision.
    const anonymous = await fetch(`${base}/oauth/authorize`, {
      method: 'POST',
      redirect: 'manual',
      headers: { origin: base, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ consent: form.consent!, decision: 'approve' }).toString(),
    });
    assert.equal(anonymous.status, 401);
    // The page expires.
    clock.advance(601_000);
    const late = await decide(cookie, {
      consent: form.consent!,
      decision: 'approve',
      organization: form.organization!,
    });
    assert.equal(late.status, 400);

    const fresh = consentForm(await (await get(url, cookie)).text());
    const denied = await decide(cookie, { consent: fresh.consent!, decision: 'deny' });
    assert.equal(denied.status, 303);
    const location = new URL(denied.headers.get('location')!);
    assert.equal(location.searchParams.get('error'), 'access_denied');
    assert.equal(location.searchParams.get('state'), state);
    const grants = await db
      .select()
      .from(mcpGrants)
      .innerJoin(oauthClients, eq(oauthClients.id, mcpGrants.oauthClientId))
      .where(eq(oauthClients.clientId, client.client_id));
    assert.equal(grants.length, 0, 'nothing was granted');
  });

  test('code exchange: bound to client, redirect URI, verifier and resource; single use (a replay revokes what it issued); short-lived', async () => {
    const client = await register();
    const otherClient = await register('Other');
    const cookie = await h.signIn(h.demo.email, h.demo.password);
    const attempt = async (change: {
      verifier?: string;
      redirect?: string;
      resource?: string;
      client?: oauth.Client;
    }) => {
      const { url, verifier, state } = await authorizationUrl(client);
      const params = oauth.validateAuthResponse(as, client, await approve(cookie, url), state);
      const raw = new URLSearchParams({
        grant_type: 'authorization_code',
        code: params.get('code')!,
        client_id: (change.client ?? client).client_id,
        code_verifier: change.verifier ?? verifier,
        redirect_uri: change.redirect ?? redirectUri,
        ...(change.resource === '' ? {} : { resource: change.resource ?? buyerResource }),
      });
      const post = () =>
        fetch(as.token_endpoint!, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: raw.toString(),
        });
      return { post, code: params.get('code')! };
    };
    for (const [change, error] of [
      [{ verifier: oauth.generateRandomCodeVerifier() }, 'invalid_grant'],
      [{ redirect: `${redirectUri}/x` }, 'invalid_grant'],
      [{ resource: `${base}/mcp/v3/admin` }, 'invalid_grant'],
      [{ resource: 'https://elsewhere.example/mcp/v3' }, 'invalid_target'],
      [{ resource: '' }, 'invalid_target'],
      [{ client: otherClient }, 'invalid_grant'],
    ] as const) {
      const { post } = await attempt(change);
      assert.equal(await oauthError(await post()), error, JSON.stringify(change));
    }

    // A code used twice: the second use fails and revokes the credentials the first one got.
    const { post } = await attempt({});
    const first = await post();
    assert.equal(first.status, 200);
    const issued = (await first.json()) as {
      access_token: string;
      refresh_token: string;
      expires_in: number;
    };
    assert.equal(issued.expires_in, 3600);
    assert.equal((await grantOfAccess(issued.access_token)).revokedAt, null);
    assert.equal(await oauthError(await post()), 'invalid_grant');
    assert.notEqual((await grantOfAccess(issued.access_token)).revokedAt, null);
    assert.equal(await refreshRevoked(issued.refresh_token), true);

    // Codes live a minute.
    const late = await attempt({});
    clock.advance(61_000);
    assert.equal(await oauthError(await late.post()), 'invalid_grant');
  });

  test('the connection: grant bound to user, client, exact resource and chosen organization; mcp_at_ refused on REST', async () => {
    const client = await register('Bound App');
    const cookie = await h.signIn(h.demo.email, h.demo.password);
    const token = await connect(client, cookie);
    assert.match(token.access_token, /^mcp_at_[A-Za-z0-9_-]{43}$/);
    assert.match(token.refresh_token!, /^mcp_rt_[A-Za-z0-9_-]{43}$/);
    assert.equal(token.token_type, 'bearer');
    // No scope asked for: everything the resource offers.
    assert.equal(token.scope, 'adcp:read adcp:write');
    const { grant, expiresAt } = await grantOfAccess(token.access_token);
    const [user] = await db.select().from(users).where(eq(users.email, h.demo.email));
    const [org] = await db
      .select()
      .from(organizations)
      .where(eq(organizations.publicId, h.demo.organizationId));
    assert.equal(grant.userId, user!.id);
    assert.equal(grant.organizationId, org!.id);
    assert.equal(grant.resource, buyerResource);
    assert.equal(grant.lastRefreshedAt, null);
    assert.equal(expiresAt!.getTime(), clock.nowMs() + 3600_000);
    // The user's connected apps list it.
    const apps = await h.session(cookie, { url: '/api/v2/connected-apps' });
    const listed = (apps.json() as { data: { id: string; resource: string; appName: string }[] }).data;
    assert.ok(
      listed.some(
        (a) => a.id === grant.publicId && a.resource === buyerResource && a.appName === 'Bound App',
      ),
    );
    // REST routes refuse it (spec: MCP credentials are rejected on REST routes), and the refresh credential too.
    for (const credential of [token.access_token, token.refresh_token!]) {
      const rest = await h.bearer(credential, { url: '/api/v2/organizations' });
      assert.equal(rest.statusCode, 401, credential.slice(0, 7));
    }
    // Approving again updates the one grant (no second connection).
    await connect(client, cookie);
    const grants = await db
      .select()
      .from(mcpGrants)
      .where(and(eq(mcpGrants.oauthClientId, grant.oauthClientId), isNull(mcpGrants.revokedAt)));
    assert.equal(grants.length, 1);

    // Approving again in another organization (another installation sharing the client_id) is another grant: the
    // credentials issued under the first consent keep acting in the organization it named.
    const otherOrg = await h.createOrganization('buyer', 'Other Installation Co');
    await h.addMember(h.demo.organizationId, 'two-orgs@example.com', 'member');
    await h.addMember(otherOrg, 'two-orgs@example.com', 'member');
    const twoOrgs = await h.signInAccepted('two-orgs@example.com', STRONG_PASSWORD);
    const inA = await connect(client, twoOrgs, buyerResource, h.demo.organizationId);
    const pending = await authorizationUrl(client);
    const pendingCode = await approve(twoOrgs, pending.url, h.demo.organizationId);
    const inB = await connect(client, twoOrgs, buyerResource, otherOrg);
    const grantA = (await grantOfAccess(inA.access_token)).grant;
    const grantB = (await grantOfAccess(inB.access_token)).grant;
    assert.equal(
      grantA.organizationId,
      org!.id,
      'the first credentials stay in the organization consented to',
    );
    assert.notEqual(grantB.id, grantA.id);
    assert.equal(grantB.revokedAt, null);
    const [orgB] = await db.select().from(organizations).where(eq(organizations.publicId, otherOrg));
    assert.equal(grantB.organizationId, orgB!.id);
    // A code approved for the first organization, exchanged after the second approval, still acts in the first.
    const params = oauth.validateAuthResponse(as, client, pendingCode, pending.state);
    const fromPending = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(
        as,
        client,
        oauth.None(),
        params,
        redirectUri,
        pending.verifier,
        {
          additionalParameters: { resource: buyerResource },
          ...insecure,
        },
      ),
    );
    assert.equal((await grantOfAccess(fromPending.access_token)).grant.organizationId, org!.id);
    const refreshedA = await oauth.processRefreshTokenResponse(
      as,
      client,
      await refreshRequest(client, inA.refresh_token!),
    );
    assert.equal((await grantOfAccess(refreshedA.access_token)).grant.organizationId, org!.id);
  });

  test('scopes: asked for, shown on the consent page, carried by the code and every credential; a refresh narrows and never widens', async () => {
    const client = await register('Scoped App');
    const cookie = await h.signIn(h.demo.email, h.demo.password);
    /** A refresh asking for `scope` (undefined: none). */
    const refreshWith = (refreshToken: string, scope?: string) =>
      oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshToken, {
        additionalParameters: { resource: buyerResource, ...(scope === undefined ? {} : { scope }) },
        ...insecure,
      });
    /** The scope stored on a credential. */
    const storedScope = async (accessToken: string, refreshToken: string) => {
      const [access] = await db
        .select({ scope: mcpAccessTokens.scope })
        .from(mcpAccessTokens)
        .where(eq(mcpAccessTokens.keyHash, hashApiKey(accessToken)));
      const [refresh] = await db
        .select({ scope: mcpRefreshTokens.scope })
        .from(mcpRefreshTokens)
        .where(eq(mcpRefreshTokens.keyHash, hashApiKey(refreshToken)));
      return [access!.scope, refresh!.scope];
    };

    // The consent page says what the requested scope lets the app do.
    const readPage = await (
      await get((await authorizationUrl(client, { scope: 'adcp:read' })).url, cookie)
    ).text();
    assert.deepEqual(
      [...readPage.matchAll(/<li data-scope="([^"]+)"/g)].map((m) => m[1]),
      ['adcp:read'],
    );
    const fullPage = await (await get((await authorizationUrl(client)).url, cookie)).text();
    assert.deepEqual(
      [...fullPage.matchAll(/<li data-scope="([^"]+)"/g)].map((m) => m[1]),
      ['adcp:read', 'adcp:write'],
    );

    // adcp:read only: the code and both credentials carry it.
    const reader = await connect(client, cookie, buyerResource, undefined, 'adcp:read');
    assert.equal(reader.scope, 'adcp:read');
    assert.deepEqual(await storedScope(reader.access_token, reader.refresh_token!), [
      'adcp:read',
      'adcp:read',
    ]);
    // A refresh cannot widen it (the credential stays usable: a refused request uses nothing up)...
    assert.equal(
      await oauthError(await refreshWith(reader.refresh_token!, 'adcp:read adcp:write')),
      'invalid_scope',
    );
    assert.equal(await oauthError(await refreshWith(reader.refresh_token!, 'adcp:write')), 'invalid_scope');
    // ...and without scope it keeps the credential's own.
    const kept = await oauth.processRefreshTokenResponse(
      as,
      client,
      await refreshWith(reader.refresh_token!),
    );
    assert.equal(kept.scope, 'adcp:read');
    assert.deepEqual(await storedScope(kept.access_token, kept.refresh_token!), ['adcp:read', 'adcp:read']);

    // adcp:write asked for alone: adcp:read comes with it.
    const writer = await connect(client, cookie, buyerResource, undefined, 'adcp:write');
    assert.equal(writer.scope, 'adcp:read adcp:write');
    // A refresh may narrow (RFC 6749 section 6); what was narrowed away cannot come back on a later refresh.
    const narrowed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await refreshWith(writer.refresh_token!, 'adcp:read'),
    );
    assert.equal(narrowed.scope, 'adcp:read');
    assert.deepEqual(await storedScope(narrowed.access_token, narrowed.refresh_token!), [
      'adcp:read',
      'adcp:read',
    ]);
    assert.equal(await oauthError(await refreshWith(narrowed.refresh_token!, 'adcp:write')), 'invalid_scope');
    const same = await oauth.processRefreshTokenResponse(
      as,
      client,
      await refreshWith(narrowed.refresh_token!, 'adcp:read adcp:read'),
    );
    assert.equal(same.scope, 'adcp:read');

    // The grant shows the latest approval (Connected apps); credentials already issued keep their own scope.
    const full = await connect(client, cookie);
    await connect(client, cookie, buyerResource, undefined, 'adcp:read');
    assert.equal((await grantOfAccess(full.access_token)).grant.scope, 'adcp:read');
    const fullAgain = await oauth.processRefreshTokenResponse(
      as,
      client,
      await refreshWith(full.refresh_token!),
    );
    assert.equal(fullAgain.scope, 'adcp:read adcp:write');
  });

  test('scopes on the MCP endpoint: adcp:read lists and reads; a mutating tool without adcp:write is the 403 insufficient_scope challenge with an AdCP error', async () => {
    const client = await register('Scope Enforcement App');
    const cookie = await h.signIn(h.demo.email, h.demo.password);
    const metadata = `${base}/.well-known/oauth-protected-resource/mcp/v3`;
    /** A session-era JSON-RPC POST to /mcp/v3 with `accessToken` (and the session, once open). */
    const rpc = (accessToken: string, body: unknown, sessionId?: string) =>
      fetch(buyerResource, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${accessToken}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(sessionId ? { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' } : {}),
        },
        body: JSON.stringify(body),
      });
    const open = async (accessToken: string) => {
      const res = await rpc(accessToken, {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'scope', version: '1' },
        },
      });
      assert.equal(res.status, 200, await res.clone().text());
      return res.headers.get('mcp-session-id')!;
    };
    const call = (accessToken: string, sessionId: string, name: string, args: Record<string, unknown>) =>
      rpc(
        accessToken,
        { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args } },
        sessionId,
      );

    const reader = await connect(client, cookie, buyerResource, undefined, 'adcp:read');
    const session = await open(reader.access_token);
    const listed = await rpc(reader.access_token, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, session);
    assert.equal(listed.status, 200);
    const tools = ((await listed.json()) as { result: { tools: { name: string }[] } }).result.tools;
    assert.ok(
      tools.some((t) => t.name === 'create_media_buy'),
      'every tool is listed; the call is what needs the scope',
    );
    const read = await call(reader.access_token, session, 'get_media_buys', { adcp_version: '3.1' });
    assert.equal(read.status, 200);
    assert.equal(((await read.json()) as { result: { isError?: boolean } }).result.isError, undefined);

    // A mutating tool: refused before it runs (its arguments are not even read).
    for (const name of ['create_media_buy', 'update_media_buy', 'sync_creatives']) {
      const refused = await call(reader.access_token, session, name, {});
      assert.equal(refused.status, 403, name);
      assert.equal(
        refused.headers.get('www-authenticate'),
        `Bearer error="insufficient_scope", scope="adcp:write", resource_metadata="${metadata}", ` +
          `error_description="${name} makes changes: it needs the adcp:write scope, which this credential lacks."`,
      );
      const body = (await refused.json()) as {
        id: number;
        error: { code: number; data: Record<string, unknown> };
      };
      assert.equal(body.id, 7);
      assert.equal(body.error.code, -32001);
      assert.deepEqual(adcpSchemaErrors('core/error.json', body.error.data), []);
      assert.equal(body.error.data.code, 'PERMISSION_DENIED');
      assert.equal(body.error.data.recovery, 'correctable');
      assert.deepEqual(body.error.data.details, {
        reason: 'insufficient_scope',
        required_scope: 'adcp:write',
        granted_scope: 'adcp:read',
      });
    }
    // In a batch too; an unknown tool is not a scope question (the tool layer answers it).
    const batch = await rpc(
      reader.access_token,
      [
        { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'get_media_buys', arguments: {} } },
        { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'create_media_buy', arguments: {} } },
      ],
      session,
    );
    assert.equal(batch.status, 403);
    const unknownTool = await call(reader.access_token, session, 'no_such_tool', {});
    assert.notEqual(unknownTool.status, 403);

    // With adcp:write the same call reaches the tool (here its argument validation).
    const writer = await connect(client, cookie, buyerResource, undefined, 'adcp:read adcp:write');
    const writerSession = await open(writer.access_token);
    const reached = await call(writer.access_token, writerSession, 'create_media_buy', {});
    assert.equal(reached.status, 200);
    const result = (
      (await reached.json()) as {
        result: { isError: boolean; structuredContent: Record<string, { code: string }> };
      }
    ).result;
    assert.equal(result.isError, true);
    assert.equal(result.structuredContent.adcp_error!.code, 'VALIDATION_ERROR');
  });

  test('refresh: rotates, carries the same resource, updates last_refreshed_at; a replay past the grace window revokes the whole grant', async () => {
    const client = await register();
    const cookie = await h.signIn(h.demo.email, h.demo.password);
    const first = await connect(client, cookie);
    // The resource must be the grant's, exactly.
    assert.equal(
      await oauthError(await refreshRequest(client, first.refresh_token!, `${base}/mcp/v3/admin`)),
      'invalid_grant',
    );
    assert.equal(
      await oauthError(await refreshRequest(client, first.refresh_token!, 'https://elsewhere.example/x')),
      'invalid_target',
    );
    assert.equal(
      await oauthError(await refreshRequest(client, first.refresh_token!, null)),
      'invalid_target',
    );
    clock.advance(5_000);
    const second = await oauth.processRefreshTokenResponse(
      as,
      client,
      await refreshRequest(client, first.refresh_token!),
    );
    assert.notEqual(second.refresh_token, first.refresh_token);
    assert.notEqual(second.access_token, first.access_token);
    const { grant } = await grantOfAccess(second.access_token);
    assert.equal(grant.lastRefreshedAt!.getTime(), clock.nowMs());
    // Within the grace window the rotated one still refreshes (a concurrent refresh that crossed).
    clock.advance(20_000);
    const sibling = await oauth.processRefreshTokenResponse(
      as,
      client,
      await refreshRequest(client, first.refresh_token!),
    );
    assert.match(sibling.access_token, /^mcp_at_/);
    // Past it, presenting the rotated one again is a replay: the grant and every credential under it end.
    clock.advance(11_000);
    assert.equal(await oauthError(await refreshRequest(client, first.refresh_token!)), 'invalid_grant');
    const after = await grantOfAccess(second.access_token);
    assert.notEqual(after.grant.revokedAt, null);
    for (const t of [first, second, sibling]) {
      assert.notEqual((await grantOfAccess(t.access_token)).revokedAt, null);
      assert.equal(await refreshRevoked(t.refresh_token!), true);
    }
    assert.equal(await oauthError(await refreshRequest(client, second.refresh_token!)), 'invalid_grant');
    // Another client cannot use a refresh credential.
    const third = await connect(client, cookie);
    const stranger = await register('Stranger');
    assert.equal(await oauthError(await refreshRequest(stranger, third.refresh_token!)), 'invalid_grant');
  });

  test('two concurrent refreshes with one credential both succeed (grace window); the grant stays active', async () => {
    const client = await register();
    const cookie = await h.signIn(h.demo.email, h.demo.password);
    const first = await connect(client, cookie);
    const [a, b] = await Promise.all([
      refreshRequest(client, first.refresh_token!),
      refreshRequest(client, first.refresh_token!),
    ]);
    const ta = await oauth.processRefreshTokenResponse(as, client, a);
    const tb = await oauth.processRefreshTokenResponse(as, client, b);
    assert.notEqual(ta.refresh_token, tb.refresh_token);
    const { grant } = await grantOfAccess(ta.access_token);
    assert.equal(grant.revokedAt, null);
    // Each new one keeps rotating.
    await oauth.processRefreshTokenResponse(as, client, await refreshRequest(client, tb.refresh_token!));
  });

  test('the grace window never forks a lineage replay detection cannot see', async () => {
    const client = await register();
    const cookie = await h.signIn(h.demo.email, h.demo.password);
    // A rotated credential replayed within the window, after its successor was used: a replay (the grant ends).
    const first = await connect(client, cookie);
    const second = await oauth.processRefreshTokenResponse(
      as,
      client,
      await refreshRequest(client, first.refresh_token!),
    );
    await oauth.processRefreshTokenResponse(as, client, await refreshRequest(client, second.refresh_token!));
    clock.advance(5_000);
    assert.equal(await oauthError(await refreshRequest(client, first.refresh_token!)), 'invalid_grant');
    assert.notEqual((await grantOfAccess(second.access_token)).grant.revokedAt, null);

    // Two answers to one rotation (a concurrent refresh, or a thief inside the window): the first one used supersedes
    // the other, and presenting that other later, even within the window, ends the grant.
    const again = await connect(client, cookie);
    const [a, b] = await Promise.all([
      refreshRequest(client, again.refresh_token!),
      refreshRequest(client, again.refresh_token!),
    ]);
    const ta = await oauth.processRefreshTokenResponse(as, client, a);
    const tb = await oauth.processRefreshTokenResponse(as, client, b);
    const tc = await oauth.processRefreshTokenResponse(
      as,
      client,
      await refreshRequest(client, tb.refresh_token!),
    );
    assert.equal((await grantOfAccess(tc.access_token)).grant.revokedAt, null);
    assert.equal(await oauthError(await refreshRequest(client, ta.refresh_token!)), 'invalid_grant');
    assert.notEqual((await grantOfAccess(tc.access_token)).grant.revokedAt, null);
    assert.equal(await refreshRevoked(tc.refresh_token!), true);
  });

  test('rule 1: a connector authorized before resource binding is refused at the token endpoint and must authorize again', async () => {
    const [user] = await db.select().from(users).where(eq(users.email, h.demo.email));
    const legacy = await insertConnection(db, {
      userPublicId: user!.publicId,
      appName: 'Old connector',
      resource: null,
      firstConnectedAt: clock.now(),
    });
    const client: oauth.Client = { client_id: legacy.clientId, token_endpoint_auth_method: 'none' };
    // Such a connector sends no resource (it predates RFC 8707 here), or one: either way invalid_grant, never
    // invalid_target.
    for (const resource of [null, buyerResource]) {
      const res = await refreshRequest(client, legacy.refreshTokens[0]!, resource);
      assert.equal(res.status, 400);
      const body = (await res.json()) as { error: string; error_description: string };
      assert.equal(body.error, 'invalid_grant', String(resource));
      assert.match(body.error_description, /authorize the app again/);
    }
  });

  test('ends: not on browser sign-out or session expiry; on lost access, security sign-out and disconnect (both credentials at once)', async () => {
    const client = await register();
    // Browser sign-out does not end it.
    let cookie = await h.signIn(h.demo.email, h.demo.password);
    let token = await connect(client, cookie);
    const signOut = await h.session(cookie, { method: 'POST', url: '/auth/sign-out' });
    assert.equal(signOut.statusCode, 200, signOut.body);
    token = await oauth.processRefreshTokenResponse(
      as,
      client,
      await refreshRequest(client, token.refresh_token!),
    );
    // Session expiry (a week) does not either; the access credential expires after its hour, the refresh goes on.
    cookie = await h.signIn(h.demo.email, h.demo.password);
    clock.advance(8 * 24 * 3600_000);
    assert.equal(
      (await h.session(cookie, { url: '/api/v2/connected-apps' })).statusCode,
      401,
      'the session expired',
    );
    token = await oauth.processRefreshTokenResponse(
      as,
      client,
      await refreshRequest(client, token.refresh_token!),
    );
    assert.equal((await grantOfAccess(token.access_token)).revokedAt, null);

    // Disconnect in Connected apps: access and refresh credentials at once.
    cookie = await h.signIn(h.demo.email, h.demo.password);
    const { grant } = await grantOfAccess(token.access_token);
    const disconnected = await h.session(cookie, {
      method: 'DELETE',
      url: `/api/v2/connected-apps/${grant.publicId}`,
    });
    assert.equal(disconnected.statusCode, 200, disconnected.body);
    assert.notEqual((await grantOfAccess(token.access_token)).revokedAt, null);
    assert.equal(await oauthError(await refreshRequest(client, token.refresh_token!)), 'invalid_grant');

    // Security sign-out (operator, platform-wide).
    token = await connect(client, await h.signIn(h.demo.email, h.demo.password));
    const security = await h.ops({ method: 'POST', url: '/_ops/security-sign-out' });
    assert.equal(security.statusCode, 200, security.body);
    assert.notEqual((await grantOfAccess(token.access_token)).revokedAt, null);
    assert.equal(await oauthError(await refreshRequest(client, token.refresh_token!)), 'invalid_grant');

    // Lost access: the member removed from the grant's organization; the refresh ends the grant.
    const orgId = await h.createOrganization('buyer', 'Leaving Co');
    const userId = await h.addMember(orgId, 'leaver@example.com', 'member');
    const leaver = await h.signInAccepted('leaver@example.com', STRONG_PASSWORD);
    const leaverToken = await connect(client, leaver);
    const leaverGrant = (await grantOfAccess(leaverToken.access_token)).grant;
    const [orgRow] = await db
      .select()
      .from(organizations)
      .where(eq(organizations.id, leaverGrant.organizationId));
    assert.equal(orgRow!.publicId, orgId);
    const disabled = await h.ops({ method: 'POST', url: `/_ops/users/${userId}/disable` });
    assert.ok(disabled.statusCode < 300, disabled.body);
    assert.equal(await oauthError(await refreshRequest(client, leaverToken.refresh_token!)), 'invalid_grant');
    assert.notEqual((await grantOfAccess(leaverToken.access_token)).grant.revokedAt, null);

    // Lost access by removal: an administrator removes the member from the grant's organization.
    const removedId = await h.addMember(h.demo.organizationId, 'removed@example.com', 'member');
    const removedToken = await connect(
      client,
      await h.signInAccepted('removed@example.com', STRONG_PASSWORD),
    );
    const admin = await h.signIn(h.demo.email, h.demo.password);
    const removal = await h.session(admin, {
      method: 'DELETE',
      url: `/api/v2/organizations/current/members/${removedId}`,
    });
    assert.equal(removal.statusCode, 200, removal.body);
    assert.equal(
      await oauthError(await refreshRequest(client, removedToken.refresh_token!)),
      'invalid_grant',
    );
    assert.notEqual((await grantOfAccess(removedToken.access_token)).grant.revokedAt, null);
  });

  test('one rule for lost access (user disabled, membership removed, organization suspended): the connection ends at once and stays ended when access comes back', async () => {
    const client = await register('Rule App');
    /** An MCP request with the access credential: the session-era `initialize` (200, or the 401 challenge). */
    const mcpStatus = async (accessToken: string) => {
      const res = await fetch(buyerResource, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${accessToken}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify(initializeMessage('rule')),
      });
      await res.text();
      return res.status;
    };
    for (const loss of ['disabled', 'removed', 'suspended'] as const) {
      // Removal is by an administrator of the organization: the demo Buyer Account's; the others in their own.
      const orgId =
        loss === 'removed' ? h.demo.organizationId : await h.createOrganization('buyer', `Rule ${loss} Co`);
      const userId = await h.addMember(orgId, `rule-${loss}@example.com`, 'member');
      const token = await connect(
        client,
        await h.signInAccepted(`rule-${loss}@example.com`, STRONG_PASSWORD),
      );
      assert.equal(await mcpStatus(token.access_token), 200, loss);
      const lost =
        loss === 'disabled'
          ? await h.ops({ method: 'POST', url: `/_ops/users/${userId}/disable` })
          : loss === 'suspended'
            ? await h.ops({ method: 'POST', url: `/_ops/organizations/${orgId}/suspend` })
            : await h.session(await h.signIn(h.demo.email, h.demo.password), {
                method: 'DELETE',
                url: `/api/v2/organizations/current/members/${userId}`,
              });
      assert.ok(lost.statusCode < 300, lost.body);
      // The connection ends in the transaction that takes the access away (spec rule 2), not at the next refresh:
      // the grant is revoked and the access credential refused at once (its hour is not over).
      assert.notEqual((await grantOfAccess(token.access_token)).grant.revokedAt, null, loss);
      assert.equal(await mcpStatus(token.access_token), 401, loss);
      // Access restored with no refresh in between: the ended connection stays ended (the user connects the app
      // again). A disabled user has no way back here (no operator route enables one).
      if (loss === 'suspended') {
        const admitted = await h.ops({ method: 'POST', url: `/_ops/organizations/${orgId}/admit` });
        assert.equal(admitted.statusCode, 200, admitted.body);
      }
      if (loss === 'removed') await h.addMember(orgId, `rule-${loss}@example.com`, 'member');
      assert.equal(await mcpStatus(token.access_token), 401, loss);
      assert.equal(
        await oauthError(await refreshRequest(client, token.refresh_token!)),
        'invalid_grant',
        loss,
      );
    }
  });

  test('revocation (RFC 7009): a refresh token with its access tokens; unknown and foreign tokens change nothing', async () => {
    const client = await register();
    const stranger = await register('Stranger');
    const token = await connect(client, await h.signIn(h.demo.email, h.demo.password));
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, stranger, oauth.None(), token.refresh_token!, insecure),
    );
    assert.equal(await refreshRevoked(token.refresh_token!), false);
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, oauth.None(), 'mcp_rt_unknown', insecure),
    );
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, oauth.None(), token.refresh_token!, insecure),
    );
    assert.equal(await refreshRevoked(token.refresh_token!), true);
    assert.notEqual((await grantOfAccess(token.access_token)).revokedAt, null);
    const again = await connect(client, await h.signIn(h.demo.email, h.demo.password));
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, oauth.None(), again.access_token, insecure),
    );
    assert.notEqual((await grantOfAccess(again.access_token)).revokedAt, null);
    assert.equal(await refreshRevoked(again.refresh_token!), false);
  });

  test('the authorization endpoint (open, it may fetch a metadata document) is limited per client address like registration', async () => {
    const url = `/oauth/authorize?client_id=mcpc_${'0'.repeat(32)}`;
    const from = (remoteAddress: string) => h.call({ url, remoteAddress });
    for (let i = 0; i < 120; i++)
      assert.notEqual((await from('198.51.100.7')).statusCode, 429, `request ${i + 1}`);
    const limited = await from('198.51.100.7');
    assert.equal(limited.statusCode, 429);
    assert.ok(Number(limited.headers['retry-after']) >= 1);
    assert.equal((limited.json() as { error: { code: string } }).error.code, 'RATE_LIMITED');
    assert.notEqual((await from('198.51.100.8')).statusCode, 429, 'another address has its own budget');
  });

  /** Resolves once another backend of this test database waits on a row lock (the race under test reached it). */
  const someoneWaitsOnALock = async () => {
    for (let i = 0; i < 2000; i++) {
      const { rows } = await db.execute<{ n: number }>(
        sql`select count(*)::int as n from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock'`,
      );
      if (rows[0]!.n > 0) return;
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.fail('nothing waited on the lock');
  };

  test('races: a code exchanged while its grant is disconnected, and a refresh during the security sign-out, leave no live credential', async () => {
    const client = await register('Racing App');
    const cookie = await h.signIn(h.demo.email, h.demo.password);
    const pending = await authorizationUrl(client);
    const callback = await approve(cookie, pending.url);
    const params = oauth.validateAuthResponse(as, client, callback, pending.state);
    const [grant] = await db
      .select()
      .from(mcpGrants)
      .innerJoin(oauthClients, eq(oauthClients.id, mcpGrants.oauthClientId))
      .where(and(eq(oauthClients.clientId, client.client_id), isNull(mcpGrants.revokedAt)));
    // Disconnect (its statements, in its order: the grant locked, then its credentials revoked) while the code is
    // exchanged: the exchange waits for the grant and then finds it revoked.
    let exchange: Promise<Response> | undefined;
    await db.transaction(async (tx) => {
      await tx.select().from(mcpGrants).where(eq(mcpGrants.id, grant!.mcp_grants.id)).for('update');
      exchange = oauth.authorizationCodeGrantRequest(
        as,
        client,
        oauth.None(),
        params,
        redirectUri,
        pending.verifier,
        { additionalParameters: { resource: buyerResource }, ...insecure },
      );
      await someoneWaitsOnALock();
      await tx
        .update(mcpGrants)
        .set({ revokedAt: clock.now() })
        .where(eq(mcpGrants.id, grant!.mcp_grants.id));
      await tx
        .update(mcpAccessTokens)
        .set({ revokedAt: clock.now() })
        .where(eq(mcpAccessTokens.grantId, grant!.mcp_grants.id));
      await tx
        .update(mcpRefreshTokens)
        .set({ revokedAt: clock.now() })
        .where(eq(mcpRefreshTokens.grantId, grant!.mcp_grants.id));
    });
    assert.equal(await oauthError(await exchange!), 'invalid_grant');
    const live = await db
      .select()
      .from(mcpAccessTokens)
      .where(and(eq(mcpAccessTokens.grantId, grant!.mcp_grants.id), isNull(mcpAccessTokens.revokedAt)));
    assert.equal(live.length, 0, 'no live access credential under a disconnected grant');

    // A refresh holding its grant's lock issues credentials while the security sign-out runs: the sign-out takes the
    // grants first, so it waits for the refresh and then revokes what it issued.
    const token = await connect(client, await h.signIn(h.demo.email, h.demo.password));
    const { grant: bound } = await grantOfAccess(token.access_token);
    let signOut: Promise<{ statusCode: number; body: string }> | undefined;
    await db.transaction(async (tx) => {
      await tx.select().from(mcpGrants).where(eq(mcpGrants.id, bound.id)).for('update');
      signOut = h.ops({ method: 'POST', url: '/_ops/security-sign-out' });
      await someoneWaitsOnALock();
      await tx.insert(mcpRefreshTokens).values({
        keyHash: hashApiKey('mcp_rt_issued_by_the_racing_refresh'),
        hint: 'racing',
        createdAt: clock.now(),
        expiresAt: null,
        grantId: bound.id,
        familyId: null,
        scope: 'adcp:read adcp:write',
      });
    });
    const ended = await signOut!;
    assert.ok(ended.statusCode < 300, ended.body);
    assert.equal(await refreshRevoked('mcp_rt_issued_by_the_racing_refresh'), true);
  });
});

describe('media buying: OAuth for MCP connectors with a UI on another origin (MEDIA_BUYING_UI_ORIGIN)', () => {
  const clock = new ManualClock(new Date());
  const uiOrigin = 'https://app.media-buying.example';
  let h: MediaBuyingHarness;
  let base: string;
  before(async () => {
    h = await startMediaBuying({ clock, listen: true, env: { MEDIA_BUYING_UI_ORIGIN: uiOrigin } });
    base = baseUrlOf(h.platform.app('media-buying'));
  });
  after(async () => {
    await h?.close();
  });

  test('the consent page (served by the service) posts from its own origin or the UI origin, nothing else', async () => {
    const redirectUri = 'http://127.0.0.1:9/callback';
    const registered = await fetch(`${base}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Split Origin App', redirect_uris: [redirectUri] }),
    });
    assert.equal(registered.status, 201);
    const { client_id } = (await registered.json()) as { client_id: string };
    const cookie = await h.signIn(h.demo.email, h.demo.password);
    const consent = async () => {
      const url = new URL(`${base}/oauth/authorize`);
      const verifier = oauth.generateRandomCodeVerifier();
      for (const [k, v] of Object.entries({
        response_type: 'code',
        client_id,
        redirect_uri: redirectUri,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        resource: `${base}/mcp/v3`,
        state: 'split',
      }))
        url.searchParams.set(k, v);
      const page = await fetch(url, { redirect: 'manual', headers: { cookie } });
      assert.equal(page.status, 200);
      const html = await page.text();
      assert.match(html, /action="\/oauth\/authorize"/, 'the form posts to this service');
      return {
        consent: /name="consent" value="([^"]+)"/.exec(html)![1]!,
        organization: /<option value="([^"]+)" selected>/.exec(html)![1]!,
        decision: 'approve',
      };
    };
    const post = async (origin: string | undefined) =>
      fetch(`${base}/oauth/authorize`, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          cookie,
          'content-type': 'application/x-www-form-urlencoded',
          ...(origin === undefined ? {} : { origin }),
        },
        body: new URLSearchParams(await consent()).toString(),
      });
    // The browser posts the page's form with the service's own origin: accepted.
    const own = await post(new URL(base).origin);
    assert.equal(own.status, 303, await own.clone().text());
    assert.equal(new URL(own.headers.get('location')!).searchParams.get('state'), 'split');
    assert.ok(new URL(own.headers.get('location')!).searchParams.get('code'));
    // The UI origin too.
    assert.equal((await post(uiOrigin)).status, 303);
    // Any other origin, or none with the session cookie: 403 (rule 4).
    for (const origin of ['https://evil.example', 'http://127.0.0.1:1', undefined]) {
      const res = await post(origin);
      assert.equal(res.status, 403, String(origin));
    }
    // The service's own origin is accepted for this form only: another session route still wants the UI origin.
    const rest = await fetch(`${base}/api/v2/user-api-keys`, {
      method: 'POST',
      headers: { cookie, origin: new URL(base).origin, 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'x' }),
    });
    assert.equal(rest.status, 403);
  });
});
