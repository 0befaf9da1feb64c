/**
 * OAuth for MCP connectors with the official MCP SDK client (`@modelcontextprotocol/client` v2) as the connector, its
 * own OAuth client (`OAuthClientProvider`, driven by the SDK's `auth()`), against the real MCP endpoints: the 401
 * challenge, RFC 9728 and RFC 8414 discovery, dynamic registration, the authorization code flow with PKCE S256 and
 * `resource` (RFC 8707), the consent page (driven over HTTP with a signed-in browser session; Chromium drives it in
 * `mcp-oauth-browser.test.ts`), the token exchange, tool calls, and a refresh the SDK makes by itself when the access
 * credential has expired (the clock moved). Every request the SDK makes is recorded, so the test asserts what went on
 * the wire, not only that a call succeeded.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  auth,
  Client,
  type FetchLike,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import { baseUrlOf } from '../../../../test/support/platform.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { type MediaBuyingHarness, STRONG_PASSWORD, startMediaBuying } from './support/harness.ts';

/** The SDK's stored client information and tokens (its own types, as `saveClientInformation`/`saveTokens` get them). */
type StoredClient = Parameters<NonNullable<OAuthClientProvider['saveClientInformation']>>[0];
type StoredTokens = Parameters<OAuthClientProvider['saveTokens']>[0];

/** One HTTP request the SDK made (method, URL, form or JSON body). */
interface Recorded {
  method: string;
  url: URL;
  body: string;
  status: number;
}

/**
 * An in-memory OAuth client of an MCP connector, as an app would keep it between the redirect and the callback: the
 * registered client, the tokens, the PKCE verifier, the discovery state; `redirectToAuthorization` records the URL the
 * user's browser would be sent to.
 */
class TestOAuthClient implements OAuthClientProvider {
  client: StoredClient | undefined;
  saved: StoredTokens | undefined;
  verifier: string | undefined;
  discovery: OAuthDiscoveryState | undefined;
  authorizationUrl: URL | undefined;
  readonly stateValue = `state-${Math.random().toString(36).slice(2)}`;

  constructor(
    readonly redirectUrl: string,
    private readonly scope?: string,
  ) {}

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'SDK test connector',
      redirect_uris: [this.redirectUrl],
      token_endpoint_auth_method: 'none',
      ...(this.scope ? { scope: this.scope } : {}),
    };
  }
  state() {
    return this.stateValue;
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(client: StoredClient) {
    this.client = client;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: StoredTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    assert.ok(this.verifier, 'a code verifier was saved before the redirect');
    return this.verifier;
  }
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') {
    if (scope === 'all' || scope === 'tokens') this.saved = undefined;
    if (scope === 'all' || scope === 'client') this.client = undefined;
    if (scope === 'all' || scope === 'verifier') this.verifier = undefined;
    if (scope === 'all' || scope === 'discovery') this.discovery = undefined;
  }
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
}

const STATELESS = { pin: '2026-07-28' };

describe('media buying: the MCP SDK client as an OAuth connector', () => {
  const clock = new ManualClock(new Date('2026-11-25T12:00:00Z'));
  let h: MediaBuyingHarness;
  let base: string;
  const redirectUri = 'http://127.0.0.1:53682/callback';
  const clients: Client[] = [];
  const recorded: Recorded[] = [];

  /** `fetch` recording every request of the SDK (bodies are strings: JSON-RPC or forms). */
  const recording: FetchLike = async (input, init) => {
    const response = await fetch(input, init);
    const body =
      typeof init?.body === 'string'
        ? init.body
        : init?.body instanceof URLSearchParams
          ? init.body.toString()
          : '';
    recorded.push({
      method: init?.method ?? 'GET',
      url: new URL(input instanceof Request ? input.url : String(input)),
      body,
      status: response.status,
    });
    return response;
  };
  const since = (mark: number) => recorded.slice(mark);
  const paths = (requests: Recorded[]) => requests.map((r) => `${r.method} ${r.url.pathname} ${r.status}`);

  before(async () => {
    h = await startMediaBuying({ clock, listen: true });
    base = baseUrlOf(h.platform.app('media-buying'));
  });
  after(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await h?.close();
  });

  /** A new SDK client on `path` with `provider`, in the stateless era (2026-07-28) or the session era (`legacy`). */
  const sdkClient = (
    path: string,
    provider: TestOAuthClient,
    mode: 'legacy' | { pin: string } = STATELESS,
  ) => {
    const client = new Client({ name: 'sdk-oauth-test', version: '1.0.0' }, { versionNegotiation: { mode } });
    const transport = new StreamableHTTPClientTransport(new URL(path, base), {
      authProvider: provider,
      fetch: recording,
    });
    clients.push(client);
    return { client, transport };
  };

  /** The user's browser on the consent page of `url`: approve in the first organization. @returns the callback URL. */
  const consent = async (cookie: string, url: URL): Promise<URL> => {
    const page = await fetch(url, { redirect: 'manual', headers: { cookie } });
    assert.equal(page.status, 200, await page.clone().text());
    const html = await page.text();
    const token = /name="consent" value="([^"]+)"/.exec(html)?.[1];
    const organization = /<option value="([^"]+)" selected>/.exec(html)?.[1];
    assert.ok(token && organization, 'a consent form with an organization');
    const decided = await fetch(`${base}/oauth/authorize`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, origin: base, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ consent: token, decision: 'approve', organization }).toString(),
    });
    assert.equal(decided.status, 303, await decided.text());
    return new URL(decided.headers.get('location')!);
  };

  /** Connects `provider` to `path` from scratch: challenge, discovery, registration, consent, token. */
  const authorize = async (path: string, provider: TestOAuthClient, cookie: string) => {
    const first = sdkClient(path, provider);
    await assert.rejects(first.client.connect(first.transport), UnauthorizedError);
    assert.ok(provider.authorizationUrl, 'the SDK sent the user to the authorization endpoint');
    const callback = await consent(cookie, provider.authorizationUrl);
    assert.equal(callback.searchParams.get('state'), provider.stateValue);
    await first.transport.finishAuth(callback.searchParams);
    const connected = sdkClient(path, provider);
    await connected.client.connect(connected.transport);
    return connected;
  };

  test('401 challenge -> RFC 9728 -> RFC 8414 -> registration -> PKCE S256 + resource -> consent -> token -> tool call -> refresh by the SDK', async () => {
    const provider = new TestOAuthClient(redirectUri);
    const cookie = await h.signIn(h.demo.email, h.demo.password);
    const resource = `${base}/mcp/v3`;

    const mark = recorded.length;
    const first = sdkClient('/mcp/v3', provider);
    await assert.rejects(first.client.connect(first.transport), UnauthorizedError);
    // What the SDK did after the 401: the protected-resource metadata named by the challenge, the authorization
    // server's metadata, a dynamic registration.
    assert.deepEqual(paths(since(mark)), [
      'POST /mcp/v3 401',
      'GET /.well-known/oauth-protected-resource/mcp/v3 200',
      'GET /.well-known/oauth-authorization-server 200',
      'POST /oauth/register 201',
    ]);
    assert.match(provider.client?.client_id ?? '', /^mcpc_[0-9a-f]{32}$/);
    const url = provider.authorizationUrl!;
    assert.equal(url.origin + url.pathname, `${base}/oauth/authorize`);
    assert.equal(url.searchParams.get('response_type'), 'code');
    assert.equal(url.searchParams.get('client_id'), provider.client!.client_id);
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
    assert.match(url.searchParams.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.equal(url.searchParams.get('resource'), resource);
    assert.equal(url.searchParams.get('redirect_uri'), redirectUri);

    // The user approves; the SDK exchanges the code (checking `iss`, RFC 9207) with its verifier and the resource.
    const callback = await consent(cookie, url);
    assert.equal(callback.searchParams.get('iss'), base);
    const exchangeMark = recorded.length;
    await first.transport.finishAuth(callback.searchParams);
    const exchange = since(exchangeMark).find((r) => r.url.pathname === '/oauth/token')!;
    const form = new URLSearchParams(exchange.body);
    assert.equal(exchange.status, 200);
    assert.equal(form.get('grant_type'), 'authorization_code');
    assert.equal(form.get('resource'), resource);
    assert.ok(form.get('code_verifier'));
    assert.match(provider.saved?.access_token ?? '', /^mcp_at_/);
    assert.match(provider.saved?.refresh_token ?? '', /^mcp_rt_/);

    // Connected: a tool call acts as the user in the organization of the consent.
    const { client, transport } = sdkClient('/mcp/v3', provider);
    await client.connect(transport);
    const listed = await client.callTool({ name: 'get_media_buys', arguments: { adcp_version: '3.1' } });
    assert.equal(listed.isError, undefined, JSON.stringify(listed.structuredContent));
    assert.ok((listed.structuredContent as { media_buys: unknown[] }).media_buys.length >= 1);

    // An hour later the access credential has expired: the endpoint answers 401, the SDK refreshes by itself (rotating
    // refresh credential, the same resource) and retries.
    const before = provider.saved!;
    clock.advance(3600_000 + 1000);
    const refreshMark = recorded.length;
    const again = await client.callTool({ name: 'get_media_buys', arguments: { adcp_version: '3.1' } });
    assert.equal(again.isError, undefined, JSON.stringify(again.structuredContent));
    assert.deepEqual(paths(since(refreshMark)), [
      'POST /mcp/v3 401',
      'POST /oauth/token 200',
      'POST /mcp/v3 200',
    ]);
    const refresh = since(refreshMark).find((r) => r.url.pathname === '/oauth/token')!;
    const refreshForm = new URLSearchParams(refresh.body);
    assert.equal(refreshForm.get('grant_type'), 'refresh_token');
    assert.equal(refreshForm.get('refresh_token'), before.refresh_token);
    assert.equal(refreshForm.get('resource'), resource);
    assert.notEqual(provider.saved!.refresh_token, before.refresh_token);
    assert.notEqual(provider.saved!.access_token, before.access_token);
  });

  test('the connection ends (removed from the organization; disconnected): the call is refused, the SDK refresh gets invalid_grant, and it asks the user again', async () => {
    const memberId = await h.addMember(h.demo.organizationId, 'sdk-leaver@example.com', 'member');
    const member = await h.signInAccepted('sdk-leaver@example.com', STRONG_PASSWORD);
    for (const end of ['removal', 'disconnect'] as const) {
      const provider = new TestOAuthClient(redirectUri);
      const cookie = end === 'removal' ? member : await h.signIn(h.demo.email, h.demo.password);
      const { client } = await authorize('/mcp/v3', provider, cookie);
      const ok = await client.callTool({ name: 'get_media_buys', arguments: { adcp_version: '3.1' } });
      assert.equal(ok.isError, undefined, JSON.stringify(ok.structuredContent));
      if (end === 'removal') {
        const admin = await h.signInAccepted(h.demo.email, h.demo.password);
        const removed = await h.session(admin, {
          method: 'DELETE',
          url: `/api/v2/organizations/current/members/${memberId}`,
        });
        assert.equal(removed.statusCode, 200, removed.body);
      } else {
        const apps = await h.session(cookie, { url: '/api/v2/connected-apps' });
        const app = (apps.json() as { data: { id: string; clientId: string }[] }).data.find(
          (a) => a.clientId === provider.client!.client_id,
        );
        const disconnected = await h.session(cookie, {
          method: 'DELETE',
          url: `/api/v2/connected-apps/${app!.id}`,
        });
        assert.equal(disconnected.statusCode, 200, disconnected.body);
      }
      provider.authorizationUrl = undefined;
      const mark = recorded.length;
      await assert.rejects(
        client.callTool({ name: 'get_media_buys', arguments: { adcp_version: '3.1' } }),
        UnauthorizedError,
        end,
      );
      // Refused at once (the access credential is still within its hour), the refresh refused with invalid_grant,
      // the tokens dropped, and the user sent to the authorization endpoint again.
      assert.deepEqual(paths(since(mark)), ['POST /mcp/v3 401', 'POST /oauth/token 400'], end);
      const refused = since(mark).find((r) => r.url.pathname === '/oauth/token')!;
      assert.equal(new URLSearchParams(refused.body).get('grant_type'), 'refresh_token');
      assert.equal(provider.saved, undefined, end);
      assert.ok(provider.authorizationUrl, end);
    }
  });

  test('scopes with the SDK: it asks for what the metadata offers; a read-only connection meets insufficient_scope on a mutating tool and the SDK steps up (session era)', async () => {
    const cookie = await h.signIn(h.demo.email, h.demo.password);
    // Left to itself, the SDK asks for the resource's scopes_supported (RFC 9728): both.
    const defaults = new TestOAuthClient(redirectUri);
    const first = sdkClient('/mcp/v3', defaults);
    await assert.rejects(first.client.connect(first.transport), UnauthorizedError);
    assert.equal(defaults.authorizationUrl!.searchParams.get('scope'), 'adcp:read adcp:write');

    // A connector that asks for adcp:read only (the SDK's auth() with a scope), in the session era.
    const provider = new TestOAuthClient(redirectUri);
    const serverUrl = new URL('/mcp/v3', base);
    assert.equal(await auth(provider, { serverUrl, scope: 'adcp:read', fetchFn: recording }), 'REDIRECT');
    assert.equal(provider.authorizationUrl!.searchParams.get('scope'), 'adcp:read');
    const callback = await consent(cookie, provider.authorizationUrl!);
    assert.equal(
      await auth(provider, {
        serverUrl,
        authorizationCode: callback.searchParams.get('code')!,
        iss: callback.searchParams.get('iss')!,
        fetchFn: recording,
      }),
      'AUTHORIZED',
    );
    assert.equal(provider.saved?.scope, 'adcp:read');
    const { client, transport } = sdkClient('/mcp/v3', provider, 'legacy');
    await client.connect(transport);
    assert.match(transport.sessionId ?? '', /^mcs_/);
    const read = await client.callTool({ name: 'get_media_buys', arguments: { adcp_version: '3.1' } });
    assert.equal(read.isError, undefined, JSON.stringify(read.structuredContent));

    // A mutating tool: 403 insufficient_scope naming adcp:write; the SDK does not refresh (a refresh cannot widen) but
    // sends the user to authorize adcp:read and adcp:write.
    provider.authorizationUrl = undefined;
    const mark = recorded.length;
    const buy = { adcp_version: '3.1', idempotency_key: 'sdk-step-up-0001' };
    await assert.rejects(client.callTool({ name: 'create_media_buy', arguments: buy }), UnauthorizedError);
    assert.deepEqual(paths(since(mark)), ['POST /mcp/v3 403']);
    assert.equal(provider.authorizationUrl!.searchParams.get('scope'), 'adcp:read adcp:write');
    assert.equal(provider.authorizationUrl!.searchParams.get('resource'), serverUrl.href);

    // The user approves the wider scope; the same session goes on and the call reaches the tool (its validation).
    await transport.finishAuth((await consent(cookie, provider.authorizationUrl!)).searchParams);
    assert.equal(provider.saved?.scope, 'adcp:read adcp:write');
    const reached = await client.callTool({ name: 'create_media_buy', arguments: buy });
    assert.equal(reached.isError, true);
    assert.equal(
      (reached.structuredContent as { adcp_error: { code: string } }).adcp_error.code,
      'VALIDATION_ERROR',
    );
  });
});
