/**
 * The HTML document every page of the service is rendered in: the security headers, the shell (style sheet, icon, the
 * shared script and the page's own script, all served as files by the service: the Content-Security-Policy allows no
 * inline script or style), and the signed-in layout (who is signed in, the active organization with a switcher,
 * sign-out, the navigation). Every value put in the HTML is escaped with the platform's `escapeHtml`.
 */
import { escapeHtml } from '../../../platform/html.ts';

/** Where the page assets are served. */
export const ASSET_PATH = '/ui/assets';

/**
 * The security headers of every page: a Content-Security-Policy that allows only the service's own scripts, styles,
 * images and `fetch` targets (`connect-src 'self'`), no framing, no `<base>`, forms posting to the service only; no
 * caching (pages may show a secret once: a new key, a client secret); the referrer only to the service itself (page
 * URLs may carry a signup or invitation token; `no-referrer` would make browsers send `Origin: null` on the pages'
 * own form posts and, in some, their `fetch` posts, which the origin rule refuses); no MIME sniffing; no opener from
 * another origin.
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'cache-control': 'no-store',
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=()',
};

/**
 * The headers of the two pages of sign-in round trips (the hosted sign-in page, the OIDC simulator's page): as
 * {@link PAGE_HEADERS} without scripts or `fetch`, and a `form-action` that also allows the origin the form's answer
 * redirects to (browsers check the redirect of a form submission against it).
 */
export function roundTripPageHeaders(redirectOrigin: string): Record<string, string> {
  return {
    ...PAGE_HEADERS,
    'content-security-policy':
      "default-src 'none'; style-src 'self'; img-src 'self'; " +
      `form-action 'self' ${redirectOrigin}; frame-ancestors 'none'; base-uri 'none'`,
  };
}

/** The sections of the signed-in area, in navigation order. */
export const ACCOUNT_SECTIONS = [
  { id: 'account', path: '/account', title: 'Account' },
  { id: 'api-keys', path: '/account/api-keys', title: 'API keys' },
  { id: 'm2m-applications', path: '/account/m2m-applications', title: 'M2M applications' },
  { id: 'connected-apps', path: '/account/connected-apps', title: 'Connected apps' },
] as const;

/** A section of {@link ACCOUNT_SECTIONS}. */
export type AccountSection = (typeof ACCOUNT_SECTIONS)[number]['id'];

/** Who is signed in, as the signed-in layout shows it. */
export interface SignedInView {
  user: { id: string; name: string; email: string };
  /** The organization the session acts in, or null (none yet, or its membership ended). */
  organization: { id: string; name: string; kind: 'buyer' | 'seller' } | null;
  role: 'admin' | 'member' | null;
  /** Every organization the user is an active member of (the switcher's choices). */
  memberships: {
    id: string;
    name: string;
    kind: 'buyer' | 'seller';
    status: string;
    role: 'admin' | 'member';
  }[];
  /** The latest Terms of Service version when not accepted yet, else null. */
  outstandingTerms: string | null;
}

const KIND_NAMES = { buyer: 'Buyer Account', seller: 'Seller Account' } as const;

/** `data-*` attributes of `<body>` (names without the prefix, in kebab case; values escaped). */
function dataAttributes(data: Record<string, string>): string {
  return Object.entries(data)
    .map(([name, value]) => ` data-${name}="${escapeHtml(value)}"`)
    .join('');
}

/** The header of the signed-in area: navigation, the user, the organization switcher, sign-out. */
function signedInHeader(view: SignedInView, section: AccountSection): string {
  const nav = ACCOUNT_SECTIONS.map(
    (s) => `<a href="${s.path}"${s.id === section ? ' aria-current="page"' : ''}>${escapeHtml(s.title)}</a>`,
  ).join('');
  const options = view.memberships
    .map((m) => {
      const selected = m.id === view.organization?.id ? ' selected' : '';
      const disabled = m.status === 'admitted' ? '' : ' disabled';
      const label = `${m.name} (${KIND_NAMES[m.kind]}, ${m.role}${m.status === 'admitted' ? '' : `, ${m.status}`})`;
      return `<option value="${escapeHtml(m.id)}"${selected}${disabled}>${escapeHtml(label)}</option>`;
    })
    .join('');
  const noOrganization =
    view.organization === null ? '<option value="" selected disabled>No active organization</option>' : '';
  const switcher =
    view.memberships.length === 0
      ? '<span id="organization-name" class="muted">No organization</span>'
      : `<label class="switcher">Organization <select id="organization-switcher">${noOrganization}${options}</select></label>`;
  const terms =
    view.outstandingTerms === null
      ? ''
      : `<p id="terms-banner" class="banner">Accept the Terms of Service (version ${escapeHtml(view.outstandingTerms)}) ` +
        'before making changes: <a href="/account#terms">review and accept them</a>.</p>';
  return `<header class="top">
  <a class="brand" href="/account">Media Buying</a>
  <nav>${nav}</nav>
  <div class="who">
    <span id="user-name">${escapeHtml(view.user.name)}</span>
    <span id="user-email" class="muted">${escapeHtml(view.user.email)}</span>
    ${switcher}
    <button id="sign-out" type="button" class="link">Sign out</button>
  </div>
</header>
<p id="switch-error" class="error" role="alert" hidden></p>
${terms}`;
}

/**
 * A whole page.
 * @param options.title the page title (escaped); `heading` defaults to it.
 * @param options.script the page's own script (a file name under {@link ASSET_PATH}), loaded after `common.js`.
 * @param options.body the page's main content, HTML already escaped by its renderer.
 * @param options.data `data-*` attributes of `<body>` for the script (escaped).
 * @param options.signedIn the signed-in layout (with the section the page is), when the page is in that area.
 */
export function renderDocument(options: {
  title: string;
  heading?: string;
  script?: string;
  body: string;
  data?: Record<string, string>;
  signedIn?: { view: SignedInView; section: AccountSection };
}): string {
  const scripts = [
    `<script src="${ASSET_PATH}/common.js" defer></script>`,
    ...(options.script ? [`<script src="${ASSET_PATH}/${escapeHtml(options.script)}" defer></script>`] : []),
  ].join('\n');
  const header = options.signedIn
    ? signedInHeader(options.signedIn.view, options.signedIn.section)
    : '<header class="top"><span class="brand">Media Buying</span></header>';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(options.title)} · Media Buying</title>
<link rel="stylesheet" href="${ASSET_PATH}/ui.css">
<link rel="icon" href="${ASSET_PATH}/favicon.svg" type="image/svg+xml">
${scripts}
</head>
<body${dataAttributes(options.data ?? {})}>
${header}
<main>
<h1>${escapeHtml(options.heading ?? options.title)}</h1>
${options.body}
</main>
</body>
</html>
`;
}
