/**
 * The ONE policy table of the activation sandbox (spec "Activation state"; Authentication rule 8: access comes from
 * the verified registration credential and its state, never from extra permissions). The route guard enforces it on
 * every REST route an agent registration credential calls, and `/.well-known/buyer-activation.json` and `/auth.md`
 * are generated from it, so the published contract and the enforcement cannot disagree.
 *
 * Every route falls in one class:
 * - `read`: the listed read routes (allowed in every sandbox state);
 * - `provider_binding`: the one allowed mutation;
 * - `spend`: spend-changing and money-moving routes -> `UNBOUND_FREE_SPEND_PROHIBITED` (MCP calls too, part 3);
 * - `nested_advertiser`: routes under one advertiser -> `UNBOUND_FREE_FOREIGN_TENANCY_PROHIBITED`;
 * - `other_tenant`: seller (storefront) routes, account and credential administration, and every read not listed ->
 *   `UNBOUND_FREE_FOREIGN_TENANCY_PROHIBITED`;
 * - `mutation`: every other state-changing request -> `UNBOUND_FREE_WRITE_PROHIBITED`.
 */
import { ACTIVATION_STATES } from '../db/schema.ts';
import type { SandboxDenial } from '../media-buying-errors.ts';

/** The activation states (spec "Activation state"): the agent registration's `state` column. */
export const SANDBOX_STATES = ACTIVATION_STATES;
export type SandboxState = (typeof SANDBOX_STATES)[number];

/** A class of routes for the sandbox. */
export type RouteClass =
  | 'read'
  | 'provider_binding'
  | 'spend'
  | 'nested_advertiser'
  | 'other_tenant'
  | 'mutation';

/** What the sandbox does with a class: allow it, or deny it with one of the three codes. */
export const CLASS_DECISIONS: Record<RouteClass, 'allow' | SandboxDenial> = {
  read: 'allow',
  provider_binding: 'allow',
  spend: 'spend',
  nested_advertiser: 'foreign_tenancy',
  other_tenant: 'foreign_tenancy',
  mutation: 'write',
};

/**
 * One rule: a method (`GET` covers `HEAD`) and a route pattern (Fastify's, `:name` params), or a prefix (`*`). Params
 * match by position whatever their names (`/advertisers/:id/*` and `/advertisers/:advertiserId/*` are one rule).
 */
export interface RouteRule {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | '*';
  /** A route pattern, or a prefix ending in `/*`. */
  path: string;
  class: RouteClass;
  /** What it is, for the published contract. */
  description: string;
}

/** Explicit rules, checked in order before the fallbacks (first match wins). */
export const SANDBOX_RULES: readonly RouteRule[] = [
  { method: 'GET', path: '/api/v2/buyer/activation', class: 'read', description: 'The activation probe' },
  {
    method: 'GET',
    path: '/api/v2/buyer/advertisers',
    class: 'read',
    description: 'Advertisers (the sandbox tenancy)',
  },
  {
    method: 'GET',
    path: '/api/v2/buyer/advertisers/:advertiserId',
    class: 'read',
    description: 'One advertiser',
  },
  { method: 'GET', path: '/api/v2/buyer/audit-logs', class: 'read', description: 'Audit log' },
  { method: 'GET', path: '/api/v2/buyer/reporting/metrics', class: 'read', description: 'Delivery metrics' },
  { method: 'GET', path: '/api/v2/buyer/creatives', class: 'read', description: 'Creatives' },
  { method: 'GET', path: '/api/v2/buyer/test-cohorts', class: 'read', description: 'Test cohorts' },
  { method: 'GET', path: '/api/v2/buyer/human-feedback', class: 'read', description: 'Human feedback' },
  {
    method: 'GET',
    path: '/api/v2/buyer/measurement-engine/studies',
    class: 'read',
    description: 'Measurement-engine studies',
  },
  {
    method: 'GET',
    path: '/api/v2/buyer/measurement-engine/event-sources',
    class: 'read',
    description: 'Measurement-engine event sources',
  },
  {
    method: 'GET',
    path: '/api/v2/buyer/advertiser-accounts',
    class: 'read',
    description: 'Advertiser accounts',
  },
  {
    method: 'POST',
    path: '/api/v2/buyer/activation/provider-binding',
    class: 'provider_binding',
    description: 'Bind the first connected provider account (no spend)',
  },
  {
    method: 'POST',
    path: '/api/v2/buyer/campaigns',
    class: 'spend',
    description: 'Create a campaign with a budget',
  },
  { method: 'POST', path: '/api/v2/buyer/media-buys', class: 'spend', description: 'Create a media buy' },
  {
    method: '*',
    path: '/api/v2/buyer/advertisers/:advertiserId/*',
    class: 'nested_advertiser',
    description: 'Routes nested under one advertiser (its accounts, campaigns, media buys)',
  },
  {
    method: '*',
    path: '/api/v2/storefront/*',
    class: 'other_tenant',
    description: 'Seller (storefront) routes',
  },
  { method: '*', path: '/mcp/*', class: 'spend', description: 'MCP calls (every MCP endpoint)' },
];

/** The fallback classes of routes no rule names. */
export const FALLBACK_CLASSES = {
  /** POST, PUT, PATCH, DELETE. */
  unsafe: 'mutation',
  /** GET, HEAD not listed. */
  safe: 'other_tenant',
} as const satisfies Record<string, RouteClass>;

/** A route pattern with every `:param` segment reduced to `:` (rules match whatever a route names its params). */
function normalise(pattern: string): string {
  return pattern.replace(/\/:[^/]+/g, '/:');
}

function matches(rule: RouteRule, method: string, path: string): boolean {
  const m = method === 'HEAD' ? 'GET' : method;
  if (rule.method !== '*' && rule.method !== m) return false;
  const route = normalise(path);
  if (rule.path.endsWith('/*')) return route.startsWith(normalise(rule.path.slice(0, -1)));
  return normalise(rule.path) === route;
}

/**
 * The class of a route for the sandbox: the first matching rule of {@link SANDBOX_RULES}, else the fallback for the
 * method. `routePattern` is the route's pattern as registered (`request.routeOptions.url`).
 */
export function classify(
  method: string,
  routePattern: string,
): { class: RouteClass; rule: RouteRule | null } {
  const rule = SANDBOX_RULES.find((r) => matches(r, method, routePattern)) ?? null;
  if (rule) return { class: rule.class, rule };
  const unsafe = !['GET', 'HEAD', 'OPTIONS'].includes(method);
  return { class: unsafe ? FALLBACK_CLASSES.unsafe : FALLBACK_CLASSES.safe, rule: null };
}

/**
 * The sandbox's decision for a route in `state`: `allow`, or the denial. The same in every state (the spec: "in
 * every state the sandbox denies ..."): the state changes the tenancy (an account once claimed), not the grants.
 */
export function decide(_state: SandboxState, method: string, routePattern: string) {
  const { class: routeClass, rule } = classify(method, routePattern);
  return { routeClass, rule, decision: CLASS_DECISIONS[routeClass] };
}

/** The grants (allowed routes) of a state, as `METHOD path` strings: the probe's `allowance.grants`. */
export function grantsOf(state: SandboxState): string[] {
  return SANDBOX_RULES.filter((r) => decide(state, r.method, r.path).decision === 'allow').map(
    (r) => `${r.method === 'GET' ? 'GET, HEAD' : r.method} ${r.path}`,
  );
}
