/**
 * Typed authentication on routes (the HTTP side of the credential kit, `credentials.ts`).
 *
 * A service defines its authentication once with {@link defineAuthentication}: a function that reads the request's
 * credential, resolves it (usually through a {@link CredentialSource}) and returns the caller's principal or throws
 * the service's own 401. Routes put `auth.onRequest` in their `onRequest` hooks and read the caller in the handler
 * with `auth.principal(request)`, typed as the service's principal, with no global `FastifyRequest` declaration and
 * no non-null assertion.
 */
import type { FastifyRequest } from 'fastify';
import { internalError } from './errors.ts';

/**
 * The token of an `Authorization: Bearer <token>` header value (RFC 6750 section 2.1): the scheme is matched
 * case-insensitively (RFC 9110 section 11.1), separated by one or more spaces or tabs; the token is a `b64token`
 * (letters, digits, `-._~+/`, then `=` padding).
 * @returns the token, or undefined when the header is absent, of another scheme or malformed.
 */
export function bearerToken(header: string | string[] | undefined): string | undefined {
  const value = firstHeader(header);
  if (value === undefined) return undefined;
  const match = /^Bearer[ \t]+([A-Za-z0-9\-._~+/]+=*)[ \t]*$/i.exec(value);
  return match ? match[1] : undefined;
}

/**
 * The client id and secret of an `Authorization: Basic` header as OAuth 2.0 clients send them (RFC 6749 section
 * 2.3.1: `client_id:client_secret`, each form-urlencoded, then base64, RFC 7617).
 * @returns undefined without the header; `malformed` for another scheme or a value that does not decode.
 */
export function basicCredentials(
  header: string | string[] | undefined,
): { id: string; secret: string } | 'malformed' | undefined {
  const value = firstHeader(header);
  if (value === undefined) return undefined;
  const match = /^Basic[ \t]+([A-Za-z0-9+/]+={0,2})[ \t]*$/i.exec(value);
  if (!match) return 'malformed';
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 1) return 'malformed';
  try {
    const formDecode = (text: string) => decodeURIComponent(text.replace(/\+/g, ' '));
    return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    return 'malformed';
  }
}

/** The first value of a header that may be repeated (Node gives repeated custom headers as an array). */
export function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** A service's authentication: the hook routes run, and the typed principal it resolved. */
export interface Authentication<P> {
  /** `onRequest` hook: resolves the caller (or throws the service's 401 / 403) before validation. */
  readonly onRequest: (request: FastifyRequest) => Promise<void>;
  /**
   * The caller resolved by {@link Authentication.onRequest} for this request.
   * @throws ApiError 500 when the route did not run the hook or let an anonymous caller through (a programming
   *   error: never a silent anonymous principal).
   */
  principal(request: FastifyRequest): P;
  /** The caller when one was resolved, else undefined (routes open to anonymous callers, rate-limit buckets). */
  optionalPrincipal(request: FastifyRequest): P | undefined;
}

/**
 * Defines a service's authentication from `resolve`, which reads the request's credential and returns the caller,
 * `undefined` for an anonymous caller the routes allow, or throws the service's error (401 missing / unknown /
 * revoked, 403). Principals are kept per request (a `WeakMap`, freed with the request).
 */
export function defineAuthentication<P>(
  resolve: (request: FastifyRequest) => Promise<P | undefined>,
): Authentication<P> {
  const principals = new WeakMap<FastifyRequest, P>();
  return {
    async onRequest(request) {
      const principal = await resolve(request);
      if (principal !== undefined) principals.set(request, principal);
    },
    principal(request) {
      const principal = principals.get(request);
      if (principal === undefined) {
        throw internalError(
          new Error(
            `route ${request.routeOptions.url ?? request.url} read a principal it did not authenticate`,
          ),
        );
      }
      return principal;
    },
    optionalPrincipal: (request) => principals.get(request),
  };
}
