/**
 * The route reference of the media-buying service: every route the app registers, with who may call it and what an
 * activation-sandbox credential gets there, generated from the routes' own declarations (their `onRequest` hooks,
 * {@link declaredAccess}) and the sandbox's one policy table (`activation/policy.ts`), so the README's table
 * (between `<!-- routes:start -->` and `<!-- routes:end -->`, checked by a test) cannot disagree with the service.
 */
import type { ServiceApp } from '../../../platform/http.ts';
import { decide } from '../activation/index.ts';
import { type DeclaredAccess, declaredAccess, type Guard } from './context.ts';

/** One registered route: method, Fastify URL pattern, and the access its hooks declare (none: see below). */
export interface RouteEntry {
  method: string;
  url: string;
  access: DeclaredAccess | undefined;
}

const recorded = new WeakMap<object, RouteEntry[]>();

/** Records every route registered on `app` from now on (call before the routes are registered). */
export function recordRoutes(app: ServiceApp): void {
  const entries: RouteEntry[] = [];
  recorded.set(app, entries);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat())
      entries.push({ method, url: route.url, access: declaredAccess(route.onRequest) });
  });
}

/** The routes recorded on `app` ({@link recordRoutes}), in registration order. */
export function recordedRoutes(app: ServiceApp): readonly RouteEntry[] {
  const entries = recorded.get(app);
  if (!entries) throw new Error('the routes of this app were not recorded');
  return entries;
}

/**
 * Routes that admit their callers themselves (no `authenticated`, `anonymous` or `servicePage` hook), by pattern: a
 * prefix ends in `*`. Every recorded route must be declared by its hooks or named here ({@link routeTable} throws
 * otherwise), so a new route cannot go undocumented.
 */
const SELF_ADMITTED: readonly { pattern: string; access: string }[] = [
  { pattern: '/_ops/*', access: 'operator token' },
  {
    pattern: '/mcp/v3*',
    access: 'bearer credential for this MCP resource (API key, M2M token, or `mcp_at_` bound to it)',
  },
  { pattern: '/.well-known/*', access: 'none (public document)' },
  { pattern: '/auth.md', access: 'none (public document)' },
  { pattern: '/oauth/register', access: 'none (dynamic client registration, 30 a minute per address)' },
  {
    pattern: '/oauth/authorize',
    access: 'browser session (consent page; signed-out visitors sign in first)',
  },
  { pattern: '/oauth/token', access: 'OAuth client (authorization code with PKCE, or refresh credential)' },
  { pattern: '/oauth/revoke', access: 'OAuth client' },
  { pattern: '/auth/*', access: 'none (sign-in flow step)' },
  { pattern: '/_sim/oidc/*', access: 'none (the built-in OIDC simulator, when enabled)' },
  { pattern: '/carrier/webhooks/*', access: "the carrier's HMAC-SHA256 signature (300 s window)" },
  { pattern: '/ui/assets/*', access: 'none (static asset)' },
  { pattern: '/account*', access: 'page: the browser session (signed-out visitors are sent to sign in)' },
  { pattern: '/sign-in*', access: 'none (page)' },
  { pattern: '/signup', access: 'none (page)' },
  { pattern: '/invitations/accept', access: 'none (page)' },
  { pattern: '/forgot-password', access: 'none (page)' },
  { pattern: '/reset-password', access: 'none (page)' },
];

/** The access text of a {@link Guard} (`authenticated(guard)`). */
function guardText(guard: Guard): string {
  if (guard.sandbox) return 'an agent registration credential';
  const parts: string[] = [];
  if (guard.needs) parts.push(`${guard.needs.fn} ${guard.needs.level}`);
  if (guard.admin) parts.push('admin in an interactive session');
  else if (guard.interactive) parts.push('interactive session');
  else if (guard.user) parts.push('a user');
  if (guard.organization === false) parts.push('no organization needed');
  if (guard.alpha) parts.push(`alpha \`${guard.alpha}\``);
  if (guard.serviceForm) parts.push("form of the service's own page");
  if (guard.termsExempt) parts.push('allowed with terms to accept');
  return parts.length > 0 ? parts.join(', ') : 'any credential acting in an organization';
}

/** The sandbox column: what an agent registration credential gets on a route it may present itself to. */
const SANDBOX_TEXT: Record<ReturnType<typeof decide>['decision'], string> = {
  allow: 'allowed',
  write: 'WRITE',
  foreign_tenancy: 'TENANCY',
  spend: 'SPEND',
};

function matchesPattern(pattern: string, url: string): boolean {
  return pattern.endsWith('*') ? url.startsWith(pattern.slice(0, -1)) : url === pattern;
}

/**
 * The README's route reference (module comment) as a Markdown table: one row per path and access (GET and its HEAD
 * on one row), in registration order with the operator's routes (`/_ops/...`) last: method, path (`{param}` for
 * Fastify's `:param`), who may call it, and the sandbox's answer to an agent registration credential (for routes
 * that take a bearer credential).
 * @throws Error naming a route that neither declares its access nor is in {@link SELF_ADMITTED}.
 */
export function routeTable(entries: readonly RouteEntry[]): string {
  const rows: { methods: string[]; url: string; access: string; sandbox: string }[] = [];
  const byUrl = new Map<string, (typeof rows)[number]>();
  for (const entry of entries) {
    let access: string;
    let bearer: boolean;
    if (entry.access?.kind === 'authenticated') {
      access = guardText(entry.access.guard);
      bearer = true;
    } else if (entry.access?.kind === 'anonymous') {
      access = 'none';
      bearer = false;
    } else if (entry.access?.kind === 'servicePage') {
      access = "none (form of the service's own page)";
      bearer = false;
    } else {
      const self = SELF_ADMITTED.find((s) => matchesPattern(s.pattern, entry.url));
      if (!self) throw new Error(`route ${entry.method} ${entry.url} declares no access`);
      access = self.access;
      bearer = entry.url.startsWith('/mcp/');
    }
    const sandbox = bearer ? SANDBOX_TEXT[decide('unbound_free', entry.method, entry.url).decision] : '';
    const key = `${entry.url} ${access} ${sandbox}`;
    const same = byUrl.get(key);
    if (same && !same.methods.includes(entry.method)) {
      same.methods.push(entry.method);
      continue;
    }
    const row = { methods: [entry.method], url: entry.url, access, sandbox };
    rows.push(row);
    byUrl.set(key, row);
  }
  const operator = (row: (typeof rows)[number]) => (row.url.startsWith('/_ops/') ? 1 : 0);
  const lines = ['| method | path | who may call it | sandbox |', '| --- | --- | --- | --- |'];
  for (const row of rows.sort((a, b) => operator(a) - operator(b)))
    lines.push(
      `| ${row.methods.join(', ')} | \`${row.url.replace(/:([A-Za-z]+)/g, '{$1}')}\` | ${row.access} | ${row.sandbox} |`,
    );
  return lines.join('\n');
}
