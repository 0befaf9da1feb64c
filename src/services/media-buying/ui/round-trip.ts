/**
 * The two pages of the sign-in round trips: the hosted sign-in page of the built-in identity provider
 * (`GET /auth/authorize`) and the authorization page of the OpenID Connect provider simulator
 * (`GET /_sim/oidc/authorize`). Plain HTML forms, no script; the style sheet of the other pages; every value escaped.
 * Served with {@link roundTripPageHeaders} (their form's answer redirects to the callback's origin).
 */
import { escapeHtml } from '../../../platform/html.ts';
import { ASSET_PATH } from './document.ts';

function hidden(params: Record<string, string | undefined>): string {
  return Object.entries(params)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value!)}">`)
    .join('\n    ');
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="robots" content="noindex">
  <title>${escapeHtml(title)}</title>
  <link rel="stylesheet" href="${ASSET_PATH}/ui.css">
  <link rel="icon" href="${ASSET_PATH}/favicon.svg" type="image/svg+xml">
</head>
<body>
  <main>
  <h1>${escapeHtml(title)}</h1>
  ${body}
  </main>
</body>
</html>
`;
}

/** The hosted sign-in page: email and password, posted with the authorization request to `POST /auth/authorize`. */
export function renderHostedSignInPage(request: Record<string, string | undefined>): string {
  return page(
    'Sign in to Media Buying',
    `<form method="post" action="/auth/authorize">
    ${hidden(request)}
    <label>Email <input type="email" name="email" autocomplete="username" required maxlength="254"></label>
    <label>Password <input type="password" name="password" autocomplete="current-password" required maxlength="1024"></label>
    <button type="submit">Sign in</button>
  </form>`,
  );
}

/**
 * The simulator's authorization page: one button per preset person, and a form for any other login at the
 * simulator's domain (verified or not).
 */
export function renderSimulatorPage(
  request: Record<string, string | undefined>,
  people: readonly { login: string; name: string; emailVerified: boolean }[],
  domain: string,
): string {
  const presets = people
    .map(
      (p) => `<form method="post" action="authorize" class="preset">
    ${hidden({ ...request, login: p.login, name: p.name, email_verified: String(p.emailVerified) })}
    <button type="submit" data-login="${escapeHtml(p.login)}">${escapeHtml(`${p.name} <${p.login}@${domain}>`)}${p.emailVerified ? '' : ' (email not verified)'}</button>
  </form>`,
    )
    .join('\n  ');
  return page(
    'OpenID Connect provider simulator',
    `<p>Choose who signs in (test identities only: every email is at ${escapeHtml(domain)}).</p>
  ${presets}
  <form method="post" action="authorize">
    ${hidden(request)}
    <label>Login <input name="login" required pattern="[a-z0-9][a-z0-9._\\-]{0,63}">@${escapeHtml(domain)}</label>
    <label>Name <input name="name" required maxlength="200"></label>
    <label class="check"><input type="checkbox" name="email_verified" value="true" checked> Email verified</label>
    <button type="submit">Sign in as this person</button>
  </form>`,
  );
}
