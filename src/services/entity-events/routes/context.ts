import type { FastifyRequest } from 'fastify';
import { defineAuthentication, firstHeader } from '../../../platform/auth.ts';
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

/**
 * What every public route plugin uses, built once per app: the services, `authenticate` (the tenant's `onRequest`
 * hook) and `who` (the tenant of a request).
 */
export function entityEventsRouteContext(deps: RouteDeps) {
  const auth = tenantAuthentication(deps.keys);
  return {
    ...deps,
    authenticate: auth.onRequest,
    who: (request: FastifyRequest): TenantPrincipal => auth.principal(request),
  };
}

/** The shared context of the entity-events route plugins ({@link entityEventsRouteContext}). */
export type EntityEventsRouteContext = ReturnType<typeof entityEventsRouteContext>;
