/**
 * What the public route plugins of the pricing service share: authentication, rate limit and project access hooks
 * (built once per app), the path prefix, error schemas and the security requirement.
 */
import type { FastifyRequest } from 'fastify';
import { bearerToken, defineAuthentication } from '../../../platform/auth.ts';
import type { ServiceApp } from '../../../platform/http.ts';
import { perMinuteLimit } from '../../../platform/rate-limit.ts';
import { authorize, type KeyPrincipal, type KeyStore, type Permission } from '../api-keys.ts';
import type { PricingCatalog } from '../catalog.ts';
import { keyInvalid, keyMissing, keyRevoked, rateLimited } from '../pricing-errors.ts';
import { PricingErrorBody } from '../pricing-schemas.ts';

/**
 * The caller of the public API, from `Authorization: Bearer <key>` (scheme case-insensitive).
 * @throws ApiError 401 `unauthorized`: header missing or not a bearer credential, key unknown, key revoked.
 */
function pricingAuthentication(keys: KeyStore) {
  return defineAuthentication<KeyPrincipal>(async (request) => {
    const presented = bearerToken(request.headers.authorization);
    if (presented === undefined) throw keyMissing();
    const found = await keys.resolve(presented);
    if (found.status === 'revoked') throw keyRevoked();
    if (found.status !== 'active') throw keyInvalid();
    return found.principal;
  });
}

/** The prefix of every public route (spec B). */
export const API_PREFIX = '/api/v1/projects/:slug';

/** Error answers of a read route. */
export const readErrors = {
  400: PricingErrorBody,
  401: PricingErrorBody,
  404: PricingErrorBody,
  429: PricingErrorBody,
};
/** Error answers of a mutating route (a `read` key is a 403). */
export const writeErrors = { ...readErrors, 403: PricingErrorBody };
/** The security requirement of every public route. */
export const security = [{ apiKey: [] }];

/**
 * What every public route plugin of the service uses, built once per app (one authentication and one rate-limit
 * hook: two would count a request twice): `read` and `write`, the `onRequest` hooks of a read and of a mutating
 * call, run before validation: the key (401), the key's rate limit (429), then the project and permission check
 * (404 for another project's slug, 403 for a read key on a mutating call); `projectOf`, the caller's project id.
 */
export function pricingRouteContext(app: ServiceApp, deps: { keys: KeyStore; catalog: PricingCatalog }) {
  const auth = pricingAuthentication(deps.keys);
  const limit = perMinuteLimit(app, {
    max: (request) => auth.optionalPrincipal(request)?.rateLimitPerMinute ?? 1,
    bucket: (request) => `key:${auth.optionalPrincipal(request)?.keyId ?? 'none'}`,
    exceeded: (retryAfterSeconds, max) => rateLimited(max, retryAfterSeconds),
  });
  const access = (needs: Permission) => async (request: FastifyRequest) => {
    authorize(auth.principal(request), (request.params as { slug: string }).slug, needs);
  };
  return {
    catalog: deps.catalog,
    read: [auth.onRequest, limit, access('read')],
    write: [auth.onRequest, limit, access('read_write')],
    projectOf: (request: FastifyRequest) => auth.principal(request).projectId,
  };
}

/** The shared context of the pricing route plugins ({@link pricingRouteContext}). */
export type PricingRouteContext = ReturnType<typeof pricingRouteContext>;
