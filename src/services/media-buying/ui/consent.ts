/**
 * The consent page of MCP connectors (`GET /oauth/authorize` for a signed-in user) and the authorization endpoint's
 * error page: plain HTML forms, no script (served with {@link roundTripPageHeaders} of the client's redirect origin:
 * the form's answer redirects there), the style sheet of the other pages, every value escaped.
 */
import { escapeHtml } from '../../../platform/html.ts';
import { ASSET_PATH } from './document.ts';

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="robots" content="noindex">
  <title>${escapeHtml(title)} · Media Buying</title>
  <link rel="stylesheet" href="${ASSET_PATH}/ui.css">
  <link rel="icon" href="${ASSET_PATH}/favicon.svg" type="image/svg+xml">
</head>
<body>
  <header class="top"><span class="brand">Media Buying</span></header>
  <main>
  <h1>${escapeHtml(title)}</h1>
  ${body}
  </main>
</body>
</html>
`;
}

/** What the consent page shows and carries. */
export interface ConsentView {
  app: { name: string; clientId: string; clientUri: string | null; redirectHost: string };
  resource: { name: string; uri: string };
  /** What the requested OAuth scope lets the app do: each scope with its description. */
  scopes: { scope: string; description: string }[];
  user: { name: string; email: string };
  /** The organizations the user may choose (the connector acts in the chosen one). */
  organizations: { id: string; name: string; kind: 'buyer' | 'seller' }[];
  /** The signed consent token (the form's CSRF token). */
  consent: string;
}

const KIND_NAMES = { buyer: 'Buyer Account', seller: 'Seller Account' } as const;

/**
 * The consent page: the app, the resource, what it may do there (the scope), the organization to act in, Allow and
 * Deny (posted to
 * `POST /oauth/authorize`).
 */
export function renderConsentPage(view: ConsentView): string {
  const options = view.organizations
    .map(
      (o, i) =>
        `<option value="${escapeHtml(o.id)}"${i === 0 ? ' selected' : ''}>${escapeHtml(`${o.name} (${KIND_NAMES[o.kind]})`)}</option>`,
    )
    .join('');
  const choose =
    view.organizations.length === 0
      ? '<p id="no-organization" class="notice">None of your organizations can use this resource: you can only deny.</p>'
      : `<label>Organization the app acts in <select id="organization" name="organization" required>${options}</select></label>`;
  const scopes = view.scopes
    .map(
      (s) =>
        `<li data-scope="${escapeHtml(s.scope)}">${escapeHtml(s.description)} <code>${escapeHtml(s.scope)}</code></li>`,
    )
    .join('');
  const homepage = view.app.clientUri ? ` · <span id="app-uri">${escapeHtml(view.app.clientUri)}</span>` : '';
  return page(
    `Connect ${view.app.name}`,
    `<p><strong id="app-name">${escapeHtml(view.app.name)}</strong> wants to use Media Buying as you, <span id="user-email">${escapeHtml(view.user.email)}</span>.</p>
  <dl class="facts">
    <dt>App</dt><dd><code id="client-id">${escapeHtml(view.app.clientId)}</code>${homepage}</dd>
    <dt>Returns to</dt><dd id="redirect-host">${escapeHtml(view.app.redirectHost)}</dd>
    <dt>Resource</dt><dd><span id="resource-name">${escapeHtml(view.resource.name)}</span> <code id="resource-uri">${escapeHtml(view.resource.uri)}</code></dd>
    <dt>It may</dt><dd><ul id="scopes">${scopes}</ul></dd>
  </dl>
  <p class="muted">The app acts with your role in the organization you choose, for this resource only. It stays connected when you sign out of the browser; disconnect it any time in Connected apps.</p>
  <form method="post" action="/oauth/authorize">
    <input type="hidden" name="consent" value="${escapeHtml(view.consent)}">
    ${choose}
    <p class="actions">
      ${view.organizations.length === 0 ? '' : '<button id="approve" type="submit" name="decision" value="approve">Allow</button>'}
      <button id="deny" type="submit" name="decision" value="deny" class="secondary" formnovalidate>Deny</button>
    </p>
  </form>`,
  );
}

/** The authorization endpoint's error page (a request that cannot be sent back to the app). */
export function renderAuthorizationErrorPage(message: string): string {
  return page(
    'Cannot connect the app',
    `<p id="authorization-error" class="error" role="alert">${escapeHtml(message)}</p>`,
  );
}
