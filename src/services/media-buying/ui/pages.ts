/**
 * The pages of the service (issue 16), server-rendered HTML with no build step and no framework: each page is a
 * document ({@link renderDocument}) whose own script (a file under `/ui/assets/`) calls the service's JSON API with
 * `fetch` from the page's origin, so the browser sends `Origin` and the session cookie. What the server knows when it
 * renders (who is signed in, the platform settings, the terms to accept) is in the HTML, escaped; what the scripts
 * read later they put in the page as text (`textContent`), never as HTML.
 */
import { escapeHtml } from '../../../platform/html.ts';
import { renderDocument, type SignedInView } from './document.ts';

/** The account types of the signup form, as the page names them. */
const ACCOUNT_TYPE_CHOICES = [
  ['ADVERTISER', 'Advertiser', 'You buy media for your own brands.'],
  ['ADVERTISER_PORTFOLIO', 'Agency or advertiser portfolio', 'You buy media for several advertisers.'],
  ['MEDIA_COMPANY', 'Media company', 'You sell media from a storefront.'],
  ['DEVELOPER', 'Developer', 'You build on the API; an organization can invite you later.'],
] as const;

const PASSWORD_HINT =
  'At least 10 characters; a few unrelated words make a strong password. Common and breached passwords are refused.';

/** An error line a script fills (hidden until then). */
const errorLine = (id: string) => `<p id="${id}" class="error" role="alert" hidden></p>`;

/** The radio buttons of the account types (`name`), one checked when `checked` names it. */
function accountTypeChoices(name: string): string {
  return ACCOUNT_TYPE_CHOICES.map(
    ([value, title, hint]) =>
      `<label class="choice"><input type="radio" name="${name}" value="${value}" required> <strong>${escapeHtml(title)}</strong> <span class="muted">${escapeHtml(hint)}</span></label>`,
  ).join('\n');
}

/**
 * `GET /sign-in`: password; a magic code (request, then verify); SSO through `GET /auth/sso/url`; the identity
 * provider's hosted page through `GET /auth/url`. `next` is where a successful sign-in goes (a local path, checked by
 * the route).
 */
export function renderSignInPage(next: string): string {
  return renderDocument({
    title: 'Sign in',
    script: 'sign-in.js',
    data: { next },
    body: `<form id="password-form">
  <label>Email <input id="email" type="email" autocomplete="username" required maxlength="254"></label>
  <label>Password <input id="password" type="password" autocomplete="current-password" required maxlength="1024"></label>
  ${errorLine('password-error')}
  <button id="password-submit" type="submit">Sign in</button>
  <p><a href="/forgot-password">Forgot your password?</a></p>
</form>
<h2>Sign in with a code</h2>
<form id="code-request-form">
  <label>Email <input id="code-email" type="email" autocomplete="username" required maxlength="254"></label>
  <button type="submit" class="secondary">Email me a code</button>
</form>
<form id="code-verify-form" hidden>
  <p id="code-sent" role="status"></p>
  <label>Code <input id="code" inputmode="numeric" pattern="[0-9]{6}" maxlength="6" autocomplete="one-time-code" required></label>
  <button type="submit">Sign in with the code</button>
</form>
${errorLine('code-error')}
<h2>Other ways to sign in</h2>
<p class="actions">
  <button id="sso-button" type="button" class="secondary">Sign in with SSO</button>
  <button id="hosted-button" type="button" class="secondary">Use the identity provider's page</button>
</p>
${errorLine('redirect-error')}
<p>New here? <a href="/signup">Create an account</a>.</p>`,
  });
}

/**
 * `GET /sign-in/callback` (`flow` `auth`: the hosted sign-in) and `GET /sign-in/sso/callback` (`flow` `sso`): the
 * script checks that the callback's `state` is the one this browser started with (login CSRF), then posts `code` and
 * `state` (and `iss`) to `POST /auth/token` or `POST /auth/sso/callback`.
 */
export function renderCallbackPage(flow: 'auth' | 'sso'): string {
  return renderDocument({
    title: 'Signing in',
    script: 'callback.js',
    data: { flow },
    body: `<p id="callback-status" role="status">Finishing sign-in…</p>
${errorLine('callback-error')}
<p id="restart" hidden><a href="/sign-in">Start again</a></p>`,
  });
}

/**
 * `GET /signup`: without a token, a new signup (the account type first; while buyer signup is waitlisted, Advertiser
 * opens the preview form; otherwise email, name and password, then the mailed code); with `?pending=true&token=`
 * (the `redirectUrl` of an interrupted signup), the recovery: the verified signup data, the email-availability check
 * and account creation with `verifiedSignupToken`.
 */
export function renderSignupPage(input: {
  recovery: boolean;
  buyerSignup: 'waitlisted' | 'open';
  planRollout: 'closed' | 'open';
}): string {
  return renderDocument({
    title: input.recovery ? 'Finish signing up' : 'Create an account',
    script: 'signup.js',
    data: {
      mode: input.recovery ? 'recovery' : 'start',
      'buyer-signup': input.buyerSignup,
      'plan-rollout': input.planRollout,
    },
    body: `<p id="recovery-loading" role="status"${input.recovery ? '' : ' hidden'}>Loading your signup…</p>
<div id="recovery-expired" class="notice" hidden>This signup link has expired or was used. <a href="/sign-in">Sign in again</a> to continue where you left off.</div>
<div id="recovery-has-account" class="notice" hidden>This email already has an account. <a href="/sign-in">Sign in</a>.</div>
<fieldset id="account-type"${input.recovery ? ' hidden' : ''}>
<legend>What describes you best?</legend>
${accountTypeChoices('accountType')}
</fieldset>
<section id="account-section" hidden>
  <form id="signup-form">
    <label>Work email <input id="signup-email" type="email" autocomplete="email" required maxlength="254"></label>
    <label>Your name <input id="signup-name" autocomplete="name" required maxlength="200"></label>
    <label>Password <input id="signup-password" type="password" autocomplete="new-password" required maxlength="1024"></label>
    <p class="muted">${escapeHtml(PASSWORD_HINT)}</p>
    <button type="submit">Create account</button>
  </form>
  <form id="signup-code-form" hidden>
    <p id="signup-code-sent" role="status"></p>
    <label>Verification code <input id="signup-code" inputmode="numeric" pattern="[0-9]{6}" maxlength="6" autocomplete="one-time-code" required></label>
    <button type="submit">Verify and continue</button>
  </form>
  ${errorLine('signup-error')}
  <p><button id="signup-sso" type="button" class="secondary">Sign up with SSO instead</button></p>
</section>
<section id="preview-section" hidden>
  <p>Advertiser signup is waitlisted for now. Tell us about your company and we will be in touch: an admitted advertiser receives an invitation to set up its account.</p>
  <form id="preview-form">
    <label>Work email <input id="preview-email" type="email" autocomplete="email" required maxlength="254"></label>
    <label>Your name <input id="preview-name" autocomplete="name" required maxlength="200"></label>
    <label>Company <input id="preview-company" autocomplete="organization" required maxlength="200"></label>
    <label>What do you want to do? (optional) <textarea id="preview-message" maxlength="5000" rows="3"></textarea></label>
    <button type="submit">Send</button>
  </form>
  ${errorLine('preview-error')}
  <div id="preview-done" class="notice" role="status" hidden>We received your details. This only confirms that we received them: it does not create an account and does not give access to the platform. A receipt was sent to your work email.</div>
</section>
<form id="account-form" hidden>
  <p>Email: <strong id="recovery-email"></strong> <span class="muted">(verified)</span></p>
  <label>Your name <input id="account-name" autocomplete="name" required maxlength="200"></label>
  <fieldset>
  <legend>Account type</legend>
  ${accountTypeChoices('recoveryType')}
  </fieldset>
  <label id="organization-field">Organization name <input id="organization-name" autocomplete="organization" maxlength="200"></label>
  <div id="storefront-fields" hidden>
    <label>Storefront name (default: the organization's) <input id="storefront-name" maxlength="200"></label>
    <label>Currency <input id="storefront-currency" value="USD" pattern="[A-Z]{3}" maxlength="3"></label>
  </div>
  <div id="plan-fields" hidden>
    <label>Plan <select id="plan"><option value="">No plan yet</option><option value="starter">Starter</option><option value="growth">Growth</option><option value="enterprise">Enterprise</option></select></label>
    <label>Signup code (optional) <input id="signup-code-value" maxlength="64"></label>
  </div>
  <button id="create-account" type="submit">Create account</button>
</form>
${errorLine('account-error')}
<p>Already have an account? <a href="/sign-in">Sign in</a>.</p>`,
  });
}

/**
 * `GET /invitations/accept?token=`: the organization, the role and any pending Commercial Offer of the invitation;
 * creating the account (or joining as the signed-in user); then the outstanding Terms of Service and their acceptance.
 * The offer is accepted in a separate step, by an administrator, on the account page.
 */
export function renderInvitationPage(): string {
  return renderDocument({
    title: 'Invitation',
    script: 'invitation.js',
    body: `<p id="invitation-loading" role="status">Loading the invitation…</p>
${errorLine('invitation-error')}
<section id="invitation" hidden>
  <p>You are invited to join <strong id="invitation-organization"></strong> (<span id="invitation-kind"></span>) as <strong id="invitation-role"></strong>.</p>
  <p class="muted">For <span id="invitation-email"></span><span id="invitation-inviter"></span>; the link expires <span id="invitation-expires"></span>.</p>
  <section id="offer" class="card" hidden>
    <h2>Commercial Offer: <span id="offer-title"></span></h2>
    <p id="offer-terms" class="pre"></p>
    <p class="muted">This offer is pending. Joining does not accept it: once you have joined, an administrator of the organization accepts or declines it on the account page.</p>
  </section>
  <form id="create-form" hidden>
    <p>Create your account to join.</p>
    <label>Your name <input id="accept-name" autocomplete="name" required maxlength="200"></label>
    <label>Password <input id="accept-password" type="password" autocomplete="new-password" required maxlength="1024"></label>
    <p class="muted">${escapeHtml(PASSWORD_HINT)}</p>
    <button id="create-and-join" type="submit">Create account and join</button>
  </form>
  <div id="sign-in-first" class="notice" hidden><span id="sign-in-first-email"></span> already has an account: <a id="sign-in-link" href="/sign-in">sign in</a> with it, then accept.</div>
  <div id="signed-in-other" class="notice" hidden>You are signed in as <span id="other-email"></span>, not as the invited address. <button id="sign-out-other" type="button" class="link">Sign out</button> and open the link again.</div>
  <form id="join-form" hidden>
    <p>Signed in as <strong id="join-email"></strong>.</p>
    <button id="join" type="submit">Join the organization</button>
  </form>
  ${errorLine('accept-error')}
</section>
<section id="terms-step" hidden>
  <h2>Terms of Service</h2>
  <p>Accept the current terms before making any change.</p>
  <h3 id="terms-title"></h3>
  <div id="terms-body" class="pre card"></div>
  <button id="accept-terms" type="button">I accept the Terms of Service</button>
  ${errorLine('terms-error')}
</section>
<section id="done" class="notice" role="status" hidden>
  <p>You have joined <strong id="done-organization"></strong>.</p>
  <p id="done-offer" hidden>The Commercial Offer waits for an administrator's decision on the <a href="/account#offers">account page</a>.</p>
  <p><a id="to-api-keys" href="/account/api-keys">Create an API key</a> · <a href="/account">Go to your account</a></p>
</section>`,
  });
}

/** `GET /forgot-password`: asks for a reset link (the same answer whatever the account). */
export function renderForgotPasswordPage(): string {
  return renderDocument({
    title: 'Reset your password',
    script: 'password-reset.js',
    data: { mode: 'request' },
    body: `<form id="forgot-form">
  <label>Email <input id="forgot-email" type="email" autocomplete="username" required maxlength="254"></label>
  <button type="submit">Email me a reset link</button>
</form>
<p id="forgot-done" class="notice" role="status" hidden></p>
${errorLine('forgot-error')}
<p><a href="/sign-in">Back to sign-in</a></p>`,
  });
}

/** `GET /reset-password#token=mbp_...`: a new password with the mailed link (the token stays in the fragment). */
export function renderResetPasswordPage(): string {
  return renderDocument({
    title: 'Choose a new password',
    script: 'password-reset.js',
    data: { mode: 'confirm' },
    body: `<div id="reset-missing" class="notice" hidden>This reset link is incomplete. Open the whole link from the mail, or <a href="/forgot-password">ask for a new one</a>.</div>
<form id="reset-form">
  <label>New password <input id="new-password" type="password" autocomplete="new-password" required maxlength="1024"></label>
  <label>New password again <input id="confirm-password" type="password" autocomplete="new-password" required maxlength="1024"></label>
  <p class="muted">${escapeHtml(PASSWORD_HINT)}</p>
  <button type="submit">Set the password and sign in</button>
</form>
${errorLine('reset-error')}`,
  });
}

/** The current Terms of Service, when the signed-in user must still accept them. */
export interface TermsToAccept {
  version: string;
  title: string;
  body: string;
}

const KIND_NAMES = { buyer: 'Buyer Account', seller: 'Seller Account' } as const;

/**
 * `GET /account`: who is signed in, the active organization and every membership, the Terms of Service to accept
 * (when outstanding), and, for administrators, the organization's Commercial Offers to accept or decline.
 */
export function renderAccountPage(view: SignedInView, terms: TermsToAccept | null): string {
  const memberships =
    view.memberships.length === 0
      ? '<p id="no-memberships">You are not a member of any organization yet. An administrator can invite you.</p>'
      : `<table id="memberships"><thead><tr><th>Organization</th><th>Type</th><th>Your role</th><th>Status</th></tr></thead><tbody>
${view.memberships
  .map(
    (m) =>
      `<tr data-organization="${escapeHtml(m.id)}"><td>${escapeHtml(m.name)}${m.id === view.organization?.id ? ' <span class="badge">active</span>' : ''}</td><td>${KIND_NAMES[m.kind]}</td><td>${escapeHtml(m.role)}</td><td>${escapeHtml(m.status)}</td></tr>`,
  )
  .join('\n')}
</tbody></table>`;
  const termsSection =
    terms === null
      ? ''
      : `<section id="terms" class="card">
  <h2>Terms of Service to accept</h2>
  <h3 id="terms-title">${escapeHtml(terms.title)} <span class="muted">(version ${escapeHtml(terms.version)})</span></h3>
  <div id="terms-body" class="pre">${escapeHtml(terms.body)}</div>
  <button id="accept-terms" type="button" data-version="${escapeHtml(terms.version)}">I accept the Terms of Service</button>
  ${errorLine('terms-error')}
</section>`;
  const offers =
    view.role === 'admin'
      ? `<section id="offers">
  <h2>Commercial Offers</h2>
  <p class="muted">Offers attached to this organization's setup invitation. Joining never accepts one: decide here.</p>
  <div id="offers-list"></div>
  <p id="offers-empty" hidden>No Commercial Offer.</p>
  ${errorLine('offers-error')}
</section>`
      : '';
  return renderDocument({
    title: 'Account',
    script: 'account.js',
    signedIn: { view, section: 'account' },
    body: `${termsSection}
<dl class="facts">
  <dt>Name</dt><dd>${escapeHtml(view.user.name)}</dd>
  <dt>Email</dt><dd>${escapeHtml(view.user.email)}</dd>
  <dt>Active organization</dt><dd id="active-organization">${view.organization ? `${escapeHtml(view.organization.name)} (${KIND_NAMES[view.organization.kind]}, ${escapeHtml(view.role ?? '')})` : 'None'}</dd>
</dl>
<h2>Your organizations</h2>
${memberships}
${offers}`,
  });
}

/** `GET /account/api-keys`: create a key (shown once, with a copy button), the keys masked, revoke. */
export function renderApiKeysPage(view: SignedInView): string {
  const where = view.organization
    ? `in the organization active when it is created (now <strong>${escapeHtml(view.organization.name)}</strong>)`
    : 'in the organization active when it is created (you have none now: join one first)';
  return renderDocument({
    title: 'API keys',
    script: 'api-keys.js',
    signedIn: { view, section: 'api-keys' },
    body: `<p>A key acts as you, with your live access, ${where}. Send it as <code>Authorization: Bearer &lt;key&gt;</code>. It is shown once, when it is created.</p>
<form id="key-form" class="inline">
  <label>Label (optional) <input id="key-label" maxlength="100" placeholder="reporting script"></label>
  <button id="create-key" type="submit">Create key</button>
</form>
${errorLine('key-error')}
<section id="new-key-panel" class="card secret" hidden>
  <p><strong>Copy your new key now: it will not be shown again.</strong></p>
  <div class="copy"><input id="new-key" readonly aria-label="New API key"><button id="copy-key" type="button">Copy</button></div>
  <p id="copy-status" class="muted" role="status"></p>
</section>
<h2>Your keys</h2>
<table id="keys"><thead><tr><th>Label</th><th>Key</th><th>Organization</th><th>Created</th><th></th></tr></thead><tbody id="keys-body"></tbody></table>
<p id="keys-empty" hidden>You have no API keys.</p>
${errorLine('keys-error')}`,
  });
}

/**
 * `GET /account/m2m-applications`: an administrator creates an application (the client secret shown once, with the
 * token endpoint and the resource indicator), lists them, adds and deletes client secrets, deletes an application.
 * Others see why they cannot.
 */
export function renderM2mPage(
  view: SignedInView,
  oauth: { tokenEndpoint: string; resource: string },
  permissions: readonly string[],
): string {
  const intro = `<p>An M2M application is an OAuth client of your organization for a backend: it gets short-lived access tokens with the client-credentials grant at <code id="token-endpoint">${escapeHtml(oauth.tokenEndpoint)}</code> for the resource <code id="resource">${escapeHtml(oauth.resource)}</code>.</p>`;
  if (view.role !== 'admin')
    return renderDocument({
      title: 'M2M applications',
      signedIn: { view, section: 'm2m-applications' },
      body: `${intro}\n<p id="admin-only" class="notice">Only an administrator of the active organization manages its M2M applications.</p>`,
    });
  const checks = permissions
    .map(
      (p) =>
        `<label class="check"><input type="checkbox" name="permission" value="${escapeHtml(p)}"${p === 'platform:read' ? ' checked' : ''}> <code>${escapeHtml(p)}</code></label>`,
    )
    .join('\n');
  return renderDocument({
    title: 'M2M applications',
    script: 'm2m.js',
    signedIn: { view, section: 'm2m-applications' },
    body: `${intro}
<form id="app-form">
  <label>Name <input id="app-name" required maxlength="100" placeholder="reporting backend"></label>
  <fieldset><legend>Permissions</legend>
${checks}
  </fieldset>
  <button id="create-app" type="submit">Create application</button>
</form>
${errorLine('app-error')}
<section id="secret-panel" class="card secret" hidden>
  <p><strong>Copy the client secret now: it will not be shown again.</strong></p>
  <dl class="facts">
    <dt>Application</dt><dd id="secret-app-name"></dd>
    <dt>Client ID</dt><dd><code id="secret-client-id"></code></dd>
    <dt>Client secret</dt><dd><div class="copy"><input id="client-secret" readonly aria-label="Client secret"><button id="copy-secret" type="button">Copy</button></div></dd>
    <dt>Token endpoint</dt><dd><code id="secret-token-endpoint"></code></dd>
    <dt>Resource</dt><dd><code id="secret-resource"></code></dd>
  </dl>
  <p id="copy-status" class="muted" role="status"></p>
</section>
<h2>Applications</h2>
<div id="apps"></div>
<p id="apps-empty" hidden>No M2M application yet.</p>
${errorLine('apps-error')}`,
  });
}

/** `GET /account/connected-apps`: the MCP connectors you connected, and disconnecting one. */
export function renderConnectedAppsPage(view: SignedInView): string {
  return renderDocument({
    title: 'Connected apps',
    script: 'connected-apps.js',
    signedIn: { view, section: 'connected-apps' },
    body: `<p>AI assistants and other MCP clients you connected to your account. Signing out of the browser does not disconnect them; disconnecting ends their access at once.</p>
<table id="connected"><thead><tr><th>App</th><th>Resource</th><th>First connected</th><th>Last credential refresh</th><th></th></tr></thead><tbody id="connected-body"></tbody></table>
<p id="connected-empty" hidden>No app is connected.</p>
<p id="connected-more" class="muted" hidden>Showing the 100 most recently connected apps.</p>
${errorLine('connected-error')}`,
  });
}
