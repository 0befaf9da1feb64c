/**
 * OAuth for MCP connectors end to end with a real browser: `oauth4webapi` as the connector (an independent client) and
 * playwright-core driving Debian's Chromium (`/usr/bin/chromium`, or `CHROMIUM_PATH`) for the user. The connector
 * meets the real `/mcp/v3` endpoint's 401 with a `WWW-Authenticate` challenge, follows its `resource_metadata` to the protected-resource metadata, discovers the authorization server, registers,
 * and sends the user's browser to the authorization endpoint with PKCE and `resource`; the user signs in (part 1's
 * page), chooses the organization on the consent page and allows; the connector exchanges the code, refreshes, and the
 * user disconnects it in Connected apps, which ends both credentials at once.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { eq } from 'drizzle-orm';
import * as oauth from 'oauth4webapi';
import { type Browser, chromium } from 'playwright-core';
import { baseUrlOf } from '../../../../test/support/platform.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { hashApiKey } from '../../../platform/crypto.ts';
import type { Db } from '../../../platform/database.ts';
import { mcpAccessTokens, mcpGrants, mcpRefreshTokens, organizations } from '../db/schema.ts';
import { type MediaBuyingHarness, startMediaBuying } from './support/harness.ts';
import { initializeMessage } from './support/mcp-messages.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const insecure = { [oauth.allowInsecureRequests]: true };

describe('media buying: an MCP connector authorized in Chromium', () => {
  const clock = new ManualClock(new Date());
  let h: MediaBuyingHarness;
  let browser: Browser;
  let base: string;
  let db: Db;
  let callbackServer: http.Server;
  let redirectUri: string;

  before(async () => {
    h = await startMediaBuying({ clock, listen: true });
    base = baseUrlOf(h.platform.app('media-buying'));
    db = h.platform.booted.services.get('media-buying')!.ctx.db;
    callbackServer = http.createServer((_req, res) => res.end('connected'));
    await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve));
    redirectUri = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}/callback`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  });
  after(async () => {
    await browser?.close();
    callbackServer?.close();
    await h?.close();
  });

  test('challenge -> metadata -> registration -> sign-in and consent in Chromium -> tokens -> refresh -> disconnect in Connected apps', async () => {
    // The user is in two Buyer Accounts and picks the second on the consent page.
    const secondOrg = await h.createOrganization('buyer', 'Second Buyer <Co>');
    await h.addMember(secondOrg, h.demo.email, 'member');

    // 1. The MCP endpoint's challenge names the protected-resource metadata.
    const mcpUrl = new URL(`${base}/mcp/v3`);
    let resourceMetadata: string | undefined;
    try {
      // A connector whose credential is no longer accepted meets the same challenge as one without.
      await oauth.protectedResourceRequest('mcp_at_expired', 'POST', mcpUrl, new Headers(), null, insecure);
      assert.fail('the MCP endpoint challenges');
    } catch (err) {
      assert.ok(err instanceof oauth.WWWAuthenticateChallengeError, String(err));
      resourceMetadata = err.cause[0]?.parameters.resource_metadata;
    }
    assert.equal(resourceMetadata, `${base}/.well-known/oauth-protected-resource/mcp/v3`);
    const resource = `${base}/mcp/v3`;
    const rs = await oauth.processResourceDiscoveryResponse(
      new URL(resource),
      await fetch(resourceMetadata!),
    );
    const issuer = new URL(rs.authorization_servers![0]!);
    const as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    );

    // 2. Registration.
    const client = (await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        { client_name: 'Desk Assistant', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' },
        insecure,
      ),
    )) as oauth.Client;

    // 3. The user's browser: sign-in, then the consent page.
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const authorize = new URL(as.authorization_endpoint!);
    for (const [k, v] of Object.entries({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: redirectUri,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      resource,
      scope: 'adcp:read adcp:write',
      state,
    }))
      authorize.searchParams.set(k, v);
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(err.message));
    page.on('console', (msg) => {
      if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource'))
        problems.push(msg.text());
    });
    await page.goto(authorize.href);
    await page.waitForURL(/\/sign-in\?next=/);
    await page.fill('#email', h.demo.email);
    await page.fill('#password', h.demo.password);
    await page.click('#password-submit');
    await page.waitForURL((url) => url.pathname === '/oauth/authorize');
    assert.equal(await page.textContent('#app-name'), 'Desk Assistant');
    assert.equal(await page.textContent('#resource-uri'), resource);
    assert.equal(await page.textContent('#user-email'), h.demo.email);
    // What the scope lets the app do.
    assert.deepEqual(
      await page.$$eval('#scopes li', (items) => items.map((i) => i.getAttribute('data-scope'))),
      ['adcp:read', 'adcp:write'],
    );
    const choices = await page.$$eval('#organization option', (options) =>
      options.map((o) => [(o as unknown as { value: string }).value, o.textContent]),
    );
    assert.ok(choices.some(([id, name]) => id === secondOrg && name?.startsWith('Second Buyer <Co>')));
    assert.ok(choices.some(([id]) => id === h.demo.organizationId));
    await page.selectOption('#organization', secondOrg);
    await page.click('#approve');
    await page.waitForURL((url) => url.href.startsWith(redirectUri));
    const callback = new URL(page.url());
    assert.deepEqual(problems, []);
    await context.close();

    // 4. Tokens, bound to the exact resource and the chosen organization.
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const token = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, verifier, {
        additionalParameters: { resource },
        ...insecure,
      }),
    );
    assert.match(token.access_token, /^mcp_at_/);
    assert.equal(token.scope, 'adcp:read adcp:write');
    const [stored] = await db
      .select({ grant: mcpGrants, organizationPublicId: organizations.publicId })
      .from(mcpAccessTokens)
      .innerJoin(mcpGrants, eq(mcpGrants.id, mcpAccessTokens.grantId))
      .innerJoin(organizations, eq(organizations.id, mcpGrants.organizationId))
      .where(eq(mcpAccessTokens.keyHash, hashApiKey(token.access_token)));
    assert.equal(stored!.grant.resource, resource);
    assert.equal(stored!.organizationPublicId, secondOrg);

    // 5. Refresh (rotation).
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), token.refresh_token!, {
        additionalParameters: { resource },
        ...insecure,
      }),
    );
    assert.notEqual(refreshed.refresh_token, token.refresh_token);
    // The MCP endpoint takes the new access credential (a session-era initialize).
    const initialize = (accessToken: string) =>
      oauth.protectedResourceRequest(
        accessToken,
        'POST',
        mcpUrl,
        new Headers({ 'content-type': 'application/json', accept: 'application/json, text/event-stream' }),
        JSON.stringify(initializeMessage('desk')),
        insecure,
      );
    assert.equal((await initialize(refreshed.access_token)).status, 200);

    // 6. The user disconnects it in Connected apps: both credentials end at once.
    const appsContext = await browser.newContext();
    const appsPage = await appsContext.newPage();
    appsPage.on('dialog', (dialog) => dialog.accept());
    await appsPage.goto(`${base}/sign-in?next=/account/connected-apps`);
    await appsPage.fill('#email', h.demo.email);
    await appsPage.fill('#password', h.demo.password);
    await appsPage.click('#password-submit');
    await appsPage.waitForURL(`${base}/account/connected-apps`);
    const row = appsPage.locator(`tr[data-connection="${stored!.grant.publicId}"]`);
    await row.getByText('Desk Assistant').waitFor();
    await row.getByRole('button', { name: 'Disconnect' }).click();
    await row.waitFor({ state: 'detached' });
    await appsContext.close();
    const [access] = await db
      .select({ revokedAt: mcpAccessTokens.revokedAt })
      .from(mcpAccessTokens)
      .where(eq(mcpAccessTokens.keyHash, hashApiKey(refreshed.access_token)));
    const [refresh] = await db
      .select({ revokedAt: mcpRefreshTokens.revokedAt })
      .from(mcpRefreshTokens)
      .where(eq(mcpRefreshTokens.keyHash, hashApiKey(refreshed.refresh_token!)));
    assert.notEqual(access!.revokedAt, null);
    assert.deepEqual(access!.revokedAt, refresh!.revokedAt, 'revoked at the same instant');
    await assert.rejects(initialize(refreshed.access_token), oauth.WWWAuthenticateChallengeError);
    const after = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshed.refresh_token!, {
      additionalParameters: { resource },
      ...insecure,
    });
    assert.equal(after.status, 400);
    assert.equal(((await after.json()) as { error: string }).error, 'invalid_grant');
  });
});
