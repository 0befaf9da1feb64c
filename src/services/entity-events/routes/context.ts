import type { FastifyRequest } from 'fastify';
import { defineAuthentication, firstHeader } from '../../../platform/auth.ts';
import { platformError } from '../../../platform/errors.ts';
import type { ServiceApp } from '../../../platform/http.ts';
import { perMinuteLimit } from '../../../platform/rate-limit.ts';
import type { DeliveryEngine } from '../delivery.ts';
import type { EnrollmentService } from '../enrollments.ts';
import { responseContext, unauthenticated } from '../entity-events-errors.ts';
import { ErrorBody } from '../entity-events-schemas.ts';
import type { EventStore } from '../events.ts';
import { API_KEY_HEADER, type KeyStore, type TenantPrincipal } from '../tenants.ts';
import type { WebhookService } from '../webhooks.ts';

/** The services the routes call. */
export interface RouteDeps {
  keys: KeyStore;
  webhooks: WebhookService;
  enrollments: EnrollmentService;
  events: EventStore;
  delivery: DeliveryEngine;
}

/** The security requirement of every public route. */
export const security = [{ apiKey: [] }];
/** Error answers of the public routes. */
export const errors = {
  400: ErrorBody,
  401: ErrorBody,
  404: ErrorBody,
  409: ErrorBody,
  422: ErrorBody,
  429: ErrorBody,
};

/**
 * The tenant of a request, from the `api_key` header only.
 * @throws ApiError 401 `unauthenticated` when missing, unknown or revoked.
 */
function tenantAuthentication(keys: KeyStore) {
  return defineAuthentication<TenantPrincipal>(async (request) => {
    const presented = firstHeader(request.headers[API_KEY_HEADER]);
    if (!presented) throw unauthenticated();
    const found = await keys.resolve(presented);
    if (found.status !== 'active') throw unauthenticated();
    return found.principal;
  });
}

/** A success body: `body` with its `response_context` (and `extra` fields in it). */
export const ok = <T extends object>(
  request: FastifyRequest,
  body: T,
  extra: Record<string, unknown> = {},
) => ({
  ...body,
  response_context: responseContext(request, 'success', extra),
});

/** The `page` of a list answer. */
export const pageOut = (p: { limit: number; offset: number; total: number; hasMore: boolean }) => ({
  limit: p.limit,
  offset: p.offset,
  total: p.total,
  has_more: p.hasMore,
});

/** Requests one API key may make per minute, across the public routes. */
export const REQUESTS_PER_KEY_PER_MINUTE = 600;

/**
 * Connectivity checks one tenant may run per minute: each sends up to 10 signed POSTs to its receiver, so this
 * bounds the outbound requests one tenant can cause this way (100 a minute).
 */
export const CONNECTIVITY_CHECKS_PER_TENANT_PER_MINUTE = 10;

/**
 * Recover calls one tenant may make per minute: each re-sends up to 1,000 deliveries, so this bounds what one tenant
 * can queue this way (5,000 a minute).
 */
export const RECOVERS_PER_TENANT_PER_MINUTE = 5;

/** The 429 of a limit: `rate_limited` with `Retry-After`. */
const limited = (what: string) => (retryAfterSeconds: number, max: number) =>
  platformError('rate_limited', `At most ${max} ${what} per minute; retry in ${retryAfterSeconds} s.`, {
    headers: { 'retry-after': String(retryAfterSeconds) },
  });

/**
 * What every public route plugin uses, built once per app: the services, `authenticate` (the tenant's `onRequest`
 * hooks: the key, then its per-minute limit, {@link REQUESTS_PER_KEY_PER_MINUTE}), `connectivityLimit` and
 * `recoverLimit` (the tenant's limits of connectivity checks and of recover calls) and `who` (the tenant of a
 * request).
 */
export function entityEventsRouteContext(app: ServiceApp, deps: RouteDeps) {
  const auth = tenantAuthentication(deps.keys);
  const keyLimit = perMinuteLimit(app, {
    max: () => REQUESTS_PER_KEY_PER_MINUTE,
    bucket: (request) => `key:${auth.principal(request).keyId}`,
    exceeded: limited('requests per API key'),
  });
  const connectivityLimit = perMinuteLimit(app, {
    max: () => CONNECTIVITY_CHECKS_PER_TENANT_PER_MINUTE,
    bucket: (request) => `connectivity:${auth.principal(request).tenantId}`,
    exceeded: limited('connectivity checks per tenant'),
  });
  const recoverLimit = perMinuteLimit(app, {
    max: () => RECOVERS_PER_TENANT_PER_MINUTE,
    bucket: (request) => `recover:${auth.principal(request).tenantId}`,
    exceeded: limited('recover calls per tenant'),
  });
  return {
    ...deps,
    authenticate: [auth.onRequest, keyLimit],
    /** The key's authentication without the key's limit, for a route with a budget of its own. */
    authenticateKey: auth.onRequest,
    connectivityLimit,
    recoverLimit,
    who: (request: FastifyRequest): TenantPrincipal => auth.principal(request),
  };
}

/** The shared context of the entity-events route plugins ({@link entityEventsRouteContext}). */
export type EntityEventsRouteContext = ReturnType<typeof entityEventsRouteContext>;
