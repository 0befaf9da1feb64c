/**
 * What the public route plugins of the payments service share, built once per app: merchant authentication
 * (`Authorization: Bearer <API key | agent key>`), the per-credential and per-payer rate limits, the API-key-only
 * rule, the Idempotency-Key runner of every POST, and the card fingerprint of the card routes.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { bearerToken, defineAuthentication } from '../../../platform/auth.ts';
import type { CredentialSource } from '../../../platform/credentials.ts';
import type { Tx } from '../../../platform/database.ts';
import { ApiError } from '../../../platform/errors.ts';
import type { ServiceApp } from '../../../platform/http.ts';
import { perMinuteLimit } from '../../../platform/rate-limit.ts';
import type { CardFingerprinter } from '../card-fingerprint.ts';
import type { CheckedCard } from '../card-network.ts';
import type { IdempotentRunner, OperationAnswer } from '../idempotent-runner.ts';
import { SCOPES, type Scope } from '../oauth-scopes.ts';
import type { PartyService, Principal } from '../parties.ts';
import type { PaymentResources } from '../payment-resources.ts';
import { ErrorBody, PartyResource } from '../payments-schemas.ts';
import type { PaymentService } from '../payments-service.ts';

/** The security requirement of the routes only an API key may call (no access token has a scope for them). */
export const bearer = [{ bearerAuth: [] }];

/**
 * The security requirement of a merchant route an agent key may call: any bearer key, or an OAuth access token with
 * `scope` (the OpenAPI `oauth2` scheme lists it, and the route's hook checks the same scope).
 */
export function bearerOrScope(scope: Scope): { [scheme: string]: string[] }[] {
  return [{ bearerAuth: [] }, { oauth2: [scope] }];
}
/** Error answers of the public routes. */
export const errors = {
  400: ErrorBody,
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
  409: ErrorBody,
  429: ErrorBody,
};

/**
 * A JSON:API page of a list (`page[number]` from 1, `page[size]` items): `{data, meta: {page: {number, size,
 * total}}, links: {self, next, prev}}`, each link `path?page[number]=N&page[size]=S` followed by `extraQuery`
 * (`&filter[status]=...`); `next` and `prev` are null past either end.
 */
export function pagedDocument<R>(
  data: R[],
  page: { number: number; size: number; total: number },
  path: string,
  extraQuery = '',
) {
  const { number, size, total } = page;
  const link = (n: number) => `${path}?page[number]=${n}&page[size]=${size}${extraQuery}`;
  return {
    data,
    meta: { page: { number, size, total } },
    links: {
      self: link(number),
      next: number * size < total ? link(number + 1) : null,
      prev: number > 1 ? link(number - 1) : null,
    },
  };
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/** The realm of the payments bearer challenges (RFC 6750 section 3). */
const REALM = 'payments';

/**
 * A `WWW-Authenticate: Bearer` challenge (RFC 6750 section 3) with its parameters, quoted; values keep only the
 * characters RFC 6750 allows there (printable ASCII without `"` and `\`; a header carries no other text safely).
 */
function bearerChallenge(params: Record<string, string> = {}): Record<string, string> {
  const extra = Object.entries(params).map(
    ([name, value]) => `, ${name}="${value.replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, '')}"`,
  );
  return { 'www-authenticate': `Bearer realm="${REALM}"${extra.join('')}` };
}

/**
 * The merchant behind `Authorization: Bearer <API key | agent key | OAuth access token>` (scheme case-insensitive).
 * @throws ApiError 401 `unauthenticated` with `WWW-Authenticate: Bearer` (RFC 6750 section 3.1: no error code when no
 *   credential was sent, `invalid_token` when it is unknown, revoked or expired).
 */
function paymentsAuthentication(credentials: CredentialSource<Principal>) {
  return defineAuthentication<Principal>(async (request) => {
    const presented = bearerToken(request.headers.authorization);
    if (presented === undefined) {
      throw new ApiError(
        401,
        'unauthenticated',
        'Send Authorization: Bearer <API key, agent key or OAuth access token>.',
        { details: { header: 'authorization' }, headers: bearerChallenge() },
      );
    }
    const found = await credentials.resolve(presented);
    if (found.status !== 'active') {
      const detail =
        found.status === 'expired'
          ? 'The access token has expired.'
          : 'The credential is unknown or revoked.';
      throw new ApiError(401, 'unauthenticated', detail, {
        details: { header: 'authorization' },
        headers: bearerChallenge({ error: 'invalid_token', error_description: detail }),
      });
    }
    return found.principal;
  });
}

/** What the public routes need: settings, the domain services and the idempotency runner. */
export interface PaymentsRouteDeps {
  /** Requests per minute per credential, and payment attempts per minute per client address on the payer route. */
  limits: { keyRateLimit: number; payerRateLimit: number };
  payments: PaymentService;
  /** Renders intents, card payments and voice sessions as JSON:API resources. */
  resources: PaymentResources;
  parties: PartyService;
  /** The parties' bearer credentials: API keys, agent keys and OAuth access tokens. */
  credentials: CredentialSource<Principal>;
  runner: IdempotentRunner;
  /** Keyed HMAC of card number and CVC for the idempotency fingerprints of the card routes. */
  cardFingerprints: CardFingerprinter;
  now: () => Date;
}

/** The JSON:API document of one party. */
export function PartyDocumentSchema() {
  return { type: 'object', properties: { data: PartyResource }, required: ['data'] } as const;
}

/**
 * The shared context of the route plugins: the services; `merchant`, the `onRequest` hooks of a merchant route
 * (authentication, then the credential's rate limit) and `merchantWith(scope)`, those of a route an access token with
 * `scope` may call; `payerLimit`, the payer route's per-address limit;
 * `principalOf` and `apiKeyOnly` (403 for an agent key); `post`, which runs a POST under its Idempotency-Key (if any)
 * and sends the answer; `cardFingerprintBody`, what identifies a card-route request's card for Idempotency-Key.
 */
export function paymentsRouteContext(app: ServiceApp, deps: PaymentsRouteDeps) {
  const { runner } = deps;
  /**
   * What identifies the card of a card-route request for `Idempotency-Key`: brand, last4, expiry and a keyed
   * HMAC-SHA256 of number and CVC (card-fingerprint.ts). Another card or CVC is another request (409); the number
   * and the CVC themselves never reach the fingerprint record.
   */
  const cardFingerprintBody = (checked: CheckedCard) => ({
    card: {
      brand: checked.brand,
      last4: checked.last4,
      expMonth: checked.expMonth,
      expYear: checked.expYear,
      numberAndCvcHmac: deps.cardFingerprints.fingerprint(checked),
    },
  });

  const auth = paymentsAuthentication(deps.credentials);
  const rateLimited = (retryAfterSeconds: number, max: number) =>
    new ApiError(
      429,
      'rate_limited',
      `Too many requests: at most ${max} per minute. Retry after Retry-After seconds.`,
      { headers: { 'retry-after': String(retryAfterSeconds) } },
    );
  const keyLimit = perMinuteLimit(app, {
    max: () => deps.limits.keyRateLimit,
    bucket: (request) => auth.optionalPrincipal(request)?.bucket ?? 'key:none',
    exceeded: rateLimited,
  });
  const payerLimit = perMinuteLimit(app, {
    max: () => deps.limits.payerRateLimit,
    bucket: (request) => `payer:${request.ip}`,
    exceeded: rateLimited,
  });
  const principalOf = (request: FastifyRequest): Principal => auth.principal(request);
  /** The caller when it is an API key. @throws ApiError 403 `forbidden` for agent keys and access tokens. */
  const apiKeyOnly = (request: FastifyRequest): Principal => {
    const p = principalOf(request);
    if (p.kind === 'oauth') {
      const detail = 'Access tokens cannot do this (no scope grants it); use an API key of the party.';
      throw new ApiError(403, 'forbidden', detail, {
        headers: bearerChallenge({ error: 'insufficient_scope', error_description: detail }),
      });
    }
    if (p.kind !== 'api') {
      throw new ApiError(403, 'forbidden', 'Agent keys cannot do this; use an API key of the party.');
    }
    return p;
  };
  /**
   * The hooks of a route only an API key may call: authentication, the credential's rate limit, then the API-key
   * rule (403 before the body is validated).
   */
  const merchant = [
    auth.onRequest,
    keyLimit,
    async (request: FastifyRequest) => {
      apiKeyOnly(request);
    },
  ];
  /**
   * The hooks of a route an agent key may call: authentication, the credential's rate limit, then for an access token
   * `scope` (403 `forbidden` with `WWW-Authenticate: Bearer error="insufficient_scope"` without it, RFC 6750 section
   * 3.1). Keys have every scope an agent key has.
   */
  const merchantWith = (scope: Scope) => [
    auth.onRequest,
    keyLimit,
    async (request: FastifyRequest) => {
      const p = auth.principal(request);
      if (p.scopes !== null && !p.scopes.includes(scope)) {
        const detail = `This access token lacks the scope ${scope} (${SCOPES[scope]}).`;
        throw new ApiError(403, 'forbidden', detail, {
          headers: bearerChallenge({ error: 'insufficient_scope', error_description: detail, scope }),
        });
      }
    },
  ];

  /** Runs a POST under its Idempotency-Key (if any) and sends the answer. */
  const post = async (
    request: FastifyRequest,
    reply: FastifyReply,
    scope: string,
    operation: (tx: Tx) => Promise<OperationAnswer>,
    fingerprintBody: unknown = request.body,
  ) => {
    const header = request.headers['idempotency-key'];
    const answer = await runner.run(
      {
        scope: `payments:${scope}`,
        key: Array.isArray(header) ? header[0] : header,
        method: 'POST',
        path: pathOf(request.url),
        fingerprintBody,
      },
      operation,
    );
    if (answer.replayed) reply.header('x-idempotency-replayed', 'true');
    return reply.code(answer.status).send(answer.body);
  };

  return { ...deps, merchant, merchantWith, payerLimit, principalOf, apiKeyOnly, post, cardFingerprintBody };
}

/** The shared context of the payments route plugins ({@link paymentsRouteContext}). */
export type PaymentsRouteContext = ReturnType<typeof paymentsRouteContext>;
