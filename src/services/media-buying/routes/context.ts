/**
 * What every media-buying route plugin shares, built once per app: authentication (a bearer credential, or the
 * browser session cookie), the guards that decide what a caller may do on a route, the browser-origin rule, the
 * session cookie, and the envelope of successful answers.
 */
import { parse as parseCookies, serialize as serializeCookie } from 'cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { bearerToken, defineAuthentication, firstHeader } from '../../../platform/auth.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/database.ts';
import type { ServiceApp } from '../../../platform/http.ts';
import { perMinuteLimit } from '../../../platform/rate-limit.ts';
import { type ActivationSandbox, decide } from '../activation/index.ts';
import type { MediaBuyDesk } from '../buying/index.ts';
import type { BuyerLists, Catalog, DeliveryRunner, Discovery } from '../catalog/index.ts';
import {
  type AccessLevel,
  allows,
  type Caller,
  type CredentialStores,
  type MediaBuyingCredentials,
  type PlatformFunction,
} from '../credentials/index.ts';
import type { SignInOutcome } from '../identity/index.ts';
import type { MediaBuyingConfig } from '../media-buying-config.ts';
import {
  alphaOptInRequired,
  credentialInvalid,
  credentialMissing,
  forbidden,
  rateLimited,
  sandboxDenied,
  termsAcceptanceRequired,
} from '../media-buying-errors.ts';
import type { Organizations } from '../organizations/index.ts';
import { signInAnswer } from './auth.ts';

/** The browser session cookie (host-only unless a parent domain is configured; HttpOnly; SameSite=Lax). */
export const SESSION_COOKIE = 'mb_session';

/** Dependencies of the route plugins. */
export interface MediaBuyingRouteDeps {
  db: Db;
  clock: Clock;
  config: MediaBuyingConfig;
  /** The service's public URL (read per use: a test platform learns its port after setup). */
  publicUrl: () => string;
  /** The UI origin (rule 4): the configured one, or the service's own public origin (read per use). */
  uiOrigin: () => string;
  stores: CredentialStores;
  credentials: MediaBuyingCredentials;
  organizations: Organizations;
  /** Part 2: the buying and selling records, discovery and the offset lists. */
  catalog: Catalog;
  discovery: Discovery;
  lists: BuyerLists;
  sandbox: ActivationSandbox;
  delivery: DeliveryRunner;
  /** Part 3: media buys through the ad-platform adapters (the operator's approval of held buys). */
  desk: MediaBuyDesk;
}

/** What a route requires of its caller. */
export interface Guard {
  /** Only a browser session, signed in directly (creating credentials, administering the account). */
  interactive?: boolean;
  /** The caller must be a user (not an organization-owned key, an M2M token or an agent). */
  user?: boolean;
  /** The caller must act in an organization (default true). */
  organization?: boolean;
  /** The function and level the route needs (`buyer` read, `seller` write, ...). */
  needs?: { fn: PlatformFunction; level: AccessLevel };
  /**
   * A form on a page the service serves itself (the MCP consent page): posted with the session cookie from the
   * service's own public origin, or from the UI origin; the `Origin` header is still required, any other origin is
   * refused, and the form carries its own session-bound CSRF token.
   */
  serviceForm?: boolean;
  /** Account administration: an admin of the organization in an interactive session. */
  admin?: boolean;
  /** An alpha feature the organization must be opted into. */
  alpha?: string;
  /** The route mutates but is allowed with outstanding terms (accepting them, signing out). */
  termsExempt?: boolean;
  /** Only an agent registration credential (the activation sandbox's own routes: the probe, provider binding). */
  sandbox?: boolean;
}

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * How a route admits its caller, as its `onRequest` hooks declare it (read by the route reference, `route-table.ts`):
 * a {@link Guard} of `authenticated()`, an open route (`anonymous`), or a form of the service's own pages
 * (`servicePage`).
 */
export type DeclaredAccess =
  | { kind: 'authenticated'; guard: Guard }
  | { kind: 'anonymous' }
  | { kind: 'servicePage' };

const ACCESS = Symbol('media-buying route access');

/** Marks `hook` as the hook that declares its route's access. */
function declaring<T extends object>(hook: T, access: DeclaredAccess): T {
  return Object.assign(hook, { [ACCESS]: access });
}

/** The access the `onRequest` hooks of a route declare, if one of them does. */
export function declaredAccess(onRequest: unknown): DeclaredAccess | undefined {
  const hooks = Array.isArray(onRequest) ? onRequest : [onRequest];
  for (const hook of hooks) {
    const access = (hook as { [ACCESS]?: DeclaredAccess } | null)?.[ACCESS];
    if (access) return access;
  }
  return undefined;
}

/** True when `request` is a state-changing request. */
export function isUnsafe(request: FastifyRequest): boolean {
  return UNSAFE_METHODS.has(request.method);
}

/**
 * The shared context of the route plugins: `authenticated(guard)`, the `onRequest` hooks of an authenticated route
 * (credential 401, per-credential rate limit 429, browser origin and guard 403s, before validation); `anonymous`, the
 * hooks of a route open to anyone (the origin rule for browsers); `caller(request)`; the session cookie; `ok` and
 * `list`, the envelope of an answer.
 */
export function mediaBuyingRouteContext(app: ServiceApp, deps: MediaBuyingRouteDeps) {
  const { uiOrigin } = deps;
  // The scheme and host of the public URL are fixed at start (only a test platform's port is learnt later).
  const publicUrl = new URL(deps.publicUrl());
  const secureCookies = publicUrl.protocol === 'https:';
  const host = publicUrl.hostname.toLowerCase();
  // Only a strict parent domain of the API host: naming the host itself would widen a host-only cookie to every
  // subdomain for nothing (rule 4: cookies are host-only unless the API host matches a configured parent domain).
  const cookieDomain =
    deps.config.cookieDomain && host.endsWith(`.${deps.config.cookieDomain}`)
      ? deps.config.cookieDomain
      : undefined;

  /** Requests to a {@link Guard.serviceForm} route: their own origin is accepted besides the UI origin. */
  const serviceForms = new WeakSet<FastifyRequest>();
  const markServiceForm = async (request: FastifyRequest) => {
    serviceForms.add(request);
  };

  /**
   * Rule 4 of "Authentication": a state-changing browser request is accepted only from the exact configured UI
   * origin. It applies to requests a browser's ambient credentials authorize: those with the session cookie (the
   * `Origin` header is then required: browsers send it on every state-changing request) and the open sign-in
   * routes (when an `Origin` is sent), which set the cookie. A request with a bearer credential carries its authority
   * itself and is not subject to it.
   * @throws ApiError 403 `FORBIDDEN` (`details.reason` `origin_not_allowed`).
   */
  const checkOrigin = (request: FastifyRequest, withSessionCookie: boolean) => {
    if (!isUnsafe(request)) return;
    const origin = firstHeader(request.headers.origin);
    if (origin === undefined && !withSessionCookie) return;
    if (serviceForms.has(request) && origin === new URL(deps.publicUrl()).origin) return;
    if (origin !== uiOrigin())
      throw forbidden(`State-changing browser requests are accepted only from ${uiOrigin()}.`, {
        reason: 'origin_not_allowed',
      });
  };

  const auth = defineAuthentication<Caller>(async (request) => {
    const header = request.headers.authorization;
    let presented: string | undefined;
    let cookie = false;
    if (header !== undefined) {
      presented = bearerToken(header);
      if (presented === undefined) throw credentialInvalid();
    } else {
      presented = sessionCookieOf(request);
      cookie = presented !== undefined;
    }
    if (presented === undefined) throw credentialMissing();
    const resolution = cookie
      ? await deps.stores.sessions.resolve(presented)
      : await deps.credentials.bearer.resolve(presented);
    if (resolution.status !== 'active') throw credentialInvalid();
    const caller = await deps.credentials.callers.resolve(resolution.principal);
    if (typeof caller === 'string') throw credentialInvalid();
    if (cookie) checkOrigin(request, true);
    return caller;
  });

  const limit = perMinuteLimit(app, {
    max: () => deps.config.requestsPerMinute,
    bucket: (request) => {
      const caller = auth.optionalPrincipal(request);
      return caller ? `${caller.kind}:${caller.credentialId}` : `ip:${request.ip}`;
    },
    exceeded: (retryAfterSeconds, max) =>
      rateLimited(
        `More than ${max} requests per minute with this credential; retry later.`,
        retryAfterSeconds,
      ),
  });

  const guardHook = (guard: Guard) =>
    declaring(
      async (request: FastifyRequest) => {
        const caller = auth.principal(request);
        if (guard.sandbox && !caller.sandbox)
          throw forbidden('This route is for agent registration credentials (the activation sandbox).', {
            reason: 'activation_credential_required',
          });
        if (caller.sandbox) {
          // The activation sandbox: the policy table decides from the credential's state and the route alone (rule 8).
          const { decision, routeClass } = decide(
            caller.sandbox.state,
            request.method,
            request.routeOptions.url ?? '',
          );
          if (decision !== 'allow') throw sandboxDenied(decision, caller.sandbox.state, routeClass);
          // An allowed route still applies every other rule of the route: a registration bound to a Buyer Account is
          // checked like any credential of that account (identity, access, terms, alpha opt-ins); an unbound one acts in
          // no organization (its granted reads see an empty tenancy) and so has no alpha feature either.
          if (caller.organization !== null) checkIdentity(guard, caller);
          await checkTermsAndAlpha(request, guard, caller);
          return;
        }
        checkIdentity(guard, caller);
        await checkTermsAndAlpha(request, guard, caller);
      },
      { kind: 'authenticated', guard },
    );

  /**
   * The access, terms and alpha rules of a route (after the identity rules).
   * @throws ApiError 403 `FORBIDDEN`, `TERMS_ACCEPTANCE_REQUIRED`, `ALPHA_OPT_IN_REQUIRED` (also for a caller acting
   *   in no organization: only an organization is opted in).
   */
  const checkTermsAndAlpha = async (request: FastifyRequest, guard: Guard, caller: Caller) => {
    if (guard.needs) checkAccess(caller, guard.needs.fn, guard.needs.level);
    if (isUnsafe(request) && !guard.termsExempt && caller.outstandingTerms !== null)
      throw termsAcceptanceRequired(caller.outstandingTerms);
    if (
      guard.alpha &&
      (caller.organization === null ||
        !(await deps.organizations.hasAlpha(caller.organization.id, guard.alpha)))
    )
      throw alphaOptInRequired(guard.alpha);
  };

  /** The `onRequest` hooks of an open route: a browser's state-changing request must come from the UI origin. */
  const anonymous = [
    declaring(async (request: FastifyRequest) => checkOrigin(request, false), { kind: 'anonymous' }),
  ];

  /**
   * The `onRequest` hooks of a form on a page the service serves itself (the hosted sign-in page, the OIDC
   * simulator's page): posted from the service's own origin, or from the UI origin when the UI hosts the form.
   * @throws ApiError 403 `FORBIDDEN` (`origin_not_allowed`) for a browser post from any other origin.
   */
  const servicePage = [
    declaring(
      async (request: FastifyRequest) => {
        const origin = firstHeader(request.headers.origin);
        if (origin !== undefined && origin !== new URL(deps.publicUrl()).origin && origin !== uiOrigin())
          throw forbidden('This form is accepted only from this service or the UI origin.', {
            reason: 'origin_not_allowed',
          });
      },
      { kind: 'servicePage' },
    ),
  ];

  /**
   * The caller of the request's browser session, when its cookie holds a valid session of an enabled user, else null.
   * No origin is checked here: for pages (GET) and for routes that check it themselves.
   */
  const sessionCaller = async (request: FastifyRequest): Promise<Caller | null> => {
    const secret = sessionCookieOf(request);
    if (secret === undefined) return null;
    const resolution = await deps.stores.sessions.resolve(secret);
    if (resolution.status !== 'active') return null;
    const caller = await deps.credentials.callers.resolve(resolution.principal);
    return typeof caller === 'string' || caller.user === null ? null : caller;
  };

  /** Sets the session cookie to `secret`, living `maxAgeSeconds`. */
  const setSessionCookie = (reply: FastifyReply, secret: string, maxAgeSeconds: number) => {
    reply.header(
      'set-cookie',
      serializeCookie(SESSION_COOKIE, secret, {
        httpOnly: true,
        sameSite: 'lax',
        secure: secureCookies,
        path: '/',
        maxAge: maxAgeSeconds,
        domain: cookieDomain,
      }),
    );
  };

  return {
    deps,
    authenticated: (guard: Guard = {}) =>
      guard.serviceForm
        ? [markServiceForm, auth.onRequest, limit, guardHook(guard)]
        : [auth.onRequest, limit, guardHook(guard)],
    sessionCaller,
    anonymous,
    servicePage,
    caller: (request: FastifyRequest) => auth.principal(request),
    /** The session secret of the request's cookie, if any. */
    sessionCookieOf,
    /** Sets the session cookie to `secret`, living `maxAgeSeconds`. */
    setSessionCookie,
    /** The value of cookie `name` of the request, if any. */
    cookieOf(request: FastifyRequest, name: string): string | undefined {
      const header = request.headers.cookie;
      if (header === undefined) return undefined;
      const value = parseCookies(header)[name];
      return value === undefined || value === '' ? undefined : value;
    },
    /**
     * Sets a short-lived helper cookie of the sign-in flows (HttpOnly, SameSite=Lax, Secure on https, host-only: it
     * never needs the parent domain), or clears it with `maxAgeSeconds` 0.
     */
    setFlowCookie(reply: FastifyReply, name: string, value: string, maxAgeSeconds: number) {
      reply.header(
        'set-cookie',
        serializeCookie(name, value, {
          httpOnly: true,
          sameSite: 'lax',
          secure: secureCookies,
          path: '/',
          maxAge: maxAgeSeconds,
        }),
      );
    },
    /** Clears the session cookie. */
    clearSessionCookie(reply: FastifyReply) {
      reply.header(
        'set-cookie',
        serializeCookie(SESSION_COOKIE, '', {
          httpOnly: true,
          sameSite: 'lax',
          secure: secureCookies,
          path: '/',
          maxAge: 0,
          domain: cookieDomain,
        }),
      );
    },
    /** Sets the session of a finished sign-in (when it opened one) and answers it in the envelope. */
    async signedIn(
      reply: FastifyReply,
      finished: { outcome: SignInOutcome; session?: { secret: string; maxAgeSeconds: number } },
    ) {
      if (finished.session) setSessionCookie(reply, finished.session.secret, finished.session.maxAgeSeconds);
      return { data: await signInAnswer(finished.outcome, deps.organizations), error: null };
    },
    /** Marks an answer never to be stored (token answers, sign-in URLs: RFC 6749 section 5.1). */
    noStore(reply: FastifyReply) {
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    },
    ok: <T>(data: T) => ({ data, error: null }),
    list: <T>(data: T[], page: { skip: number; take: number; total: number }) => ({
      data,
      error: null,
      meta: { pagination: { ...page, hasMore: page.skip + data.length < page.total } },
    }),
  };
}

/**
 * Who the route admits (a {@link Guard}'s identity rules): an interactive session, a user, an organization, an
 * administrator.
 * @throws ApiError 403 `FORBIDDEN` naming the missing condition in `details.reason`.
 */
function checkIdentity(guard: Guard, caller: Caller): void {
  const interactive = guard.interactive === true || guard.admin === true;
  if (interactive && !caller.interactive)
    throw forbidden('This needs an interactive session: sign in directly (keys and tokens cannot do this).', {
      reason: 'interactive_session_required',
    });
  if ((guard.user || interactive) && caller.user === null)
    throw forbidden('This needs a user credential.', { reason: 'user_required' });
  if (guard.organization !== false && caller.organization === null)
    throw forbidden(
      caller.user
        ? 'You have no active organization: accept an invitation or switch to an organization you belong to.'
        : 'This credential acts in no organization.',
      { reason: 'no_active_organization' },
    );
  if (guard.admin && caller.role !== 'admin')
    throw forbidden('Only an administrator of the organization can do this.', { reason: 'admin_required' });
}

/**
 * The function and level a route needs: the organization must be of that kind, and the caller's access must reach
 * the level.
 * @throws ApiError 403 `FORBIDDEN`.
 */
function checkAccess(caller: Caller, fn: PlatformFunction, level: AccessLevel): void {
  if (caller.organization && caller.organization.kind !== fn)
    throw forbidden(`This is a ${fn} function; your organization is a ${caller.organization.kind} account.`, {
      reason: 'wrong_account_kind',
    });
  if (!allows(caller.access, fn, level))
    throw forbidden(`This needs ${level} access to ${fn} functions, which this credential does not have.`, {
      reason: 'insufficient_permission',
    });
}

/** The session secret of a request's `mb_session` cookie, if any. */
function sessionCookieOf(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  if (header === undefined) return undefined;
  const value = parseCookies(header)[SESSION_COOKIE];
  return value === undefined || value === '' ? undefined : value;
}

/** The shared context of the media-buying route plugins. */
export type MediaBuyingRouteContext = ReturnType<typeof mediaBuyingRouteContext>;
