import type { FastifyRequest } from 'fastify';
import { defineAuthentication, firstHeader } from '../../platform/auth.ts';
import { ApiError } from '../../platform/errors.ts';
import type { ServiceApp } from '../../platform/http.ts';
import { perMinuteLimit } from '../../platform/rate-limit.ts';
import { API_KEY_HEADER, type KeyPrincipal, type KeyStore } from './api-keys.ts';
import { validateDepositRequest } from './deposit-request.ts';
import type { DepositService } from './deposit-service.ts';
import type { DepositsConfig } from './deposits-config.ts';
import { invalidApiKey, validationFailed } from './deposits-errors.ts';
import {
  CreateDepositAddressBody,
  DepositAddressResponse,
  DepositErrorBody,
  QuoteResponse,
  VaultParams,
} from './deposits-schemas.ts';

/** The API version of the routes below: a supplied key must be enabled for it. */
const API_VERSION = 'v1';

/**
 * A caller of the deposit API: anonymous (no `x-api-key`), a valid key, or a supplied key that failed
 * authentication. The last is answered 401 `invalid-api-key` only after it has counted against the client address's
 * rate limit, so past that limit key guessing gets 429 like any anonymous caller.
 */
type DepositCaller = { kind: 'key'; key: KeyPrincipal } | { kind: 'rejected' };

const errors = { 400: DepositErrorBody, 401: DepositErrorBody, 404: DepositErrorBody, 429: DepositErrorBody };

/**
 * Public routes under `/v1/stablecoin-gateway`. The optional key (`x-api-key`) is checked and the rate limit
 * applied in `onRequest`: per key when a valid one is sent, per client address otherwise. A key that fails
 * authentication counts against the client address's limit before its 401 is answered, so past that limit key
 * guessing gets 429 like any anonymous caller.
 */
export async function registerDepositRoutes(
  app: ServiceApp,
  deps: { deposits: DepositService; keys: KeyStore; config: DepositsConfig },
) {
  const auth = defineAuthentication<DepositCaller>(async (request) => {
    const presented = firstHeader(request.headers[API_KEY_HEADER]);
    if (presented === undefined) return undefined;
    const found = await deps.keys.resolve(presented);
    if (found.status !== 'active' || !found.principal.versions.includes(API_VERSION))
      return { kind: 'rejected' };
    return { kind: 'key', key: found.principal };
  });
  const keyOf = (request: FastifyRequest) => {
    const caller = auth.optionalPrincipal(request);
    return caller?.kind === 'key' ? caller.key : undefined;
  };
  const rejectInvalidKey = async (request: FastifyRequest) => {
    if (auth.optionalPrincipal(request)?.kind === 'rejected') throw invalidApiKey();
  };
  const limit = perMinuteLimit(app, {
    max: (request) => {
      const key = keyOf(request);
      return key ? (key.rateLimitPerMinute ?? deps.config.keyRateLimit) : deps.config.anonymousRateLimit;
    },
    bucket: (request) => {
      const key = keyOf(request);
      return key ? `key:${key.keyId}` : `ip:${request.ip}`;
    },
    exceeded: (retryAfterSeconds) =>
      new ApiError(429, 'rate_limited', 'Too many requests, retry after the time given in Retry-After.', {
        headers: { 'retry-after': String(retryAfterSeconds) },
      }),
  });

  app.post(
    '/v1/stablecoin-gateway/deposit-addresses',
    {
      onRequest: [auth.onRequest, limit, rejectInvalidKey],
      // The body is validated by the domain so that every failing field is reported at once, in one format.
      validatorCompiler: () => () => true,
      schema: {
        operationId: 'createDepositAddress',
        tags: ['deposit-addresses'],
        summary: 'Quote a deposit address',
        description:
          'Returns a vault address that must receive at least `amount` (base units) before `deadline` (Unix ' +
          'seconds). The same request while its quote is pending and unexpired returns the same quote. No key is ' +
          'needed; a supplied `x-api-key` must be valid for v1.',
        security: [{}, { apiKey: [] }],
        body: CreateDepositAddressBody,
        response: { 200: QuoteResponse, 201: QuoteResponse, ...errors },
      },
    },
    async (request, reply) => {
      const parsed = validateDepositRequest(request.body as unknown);
      if ('errors' in parsed) throw validationFailed(parsed.errors);
      const data = await deps.deposits.quote(parsed.value, keyOf(request)?.keyId);
      return reply.code(201).send({ data });
    },
  );

  app.get(
    '/v1/stablecoin-gateway/deposit-addresses/:vaultAddress',
    {
      onRequest: [auth.onRequest, limit, rejectInvalidKey],
      schema: {
        operationId: 'getDepositAddress',
        tags: ['deposit-addresses'],
        summary: 'State of a deposit address',
        description:
          'PENDING -> FUNDING_DETECTED -> PUBLISHED, or EXPIRED_UNFUNDED at the deadline (a partial funding is ' +
          'refunded), FAILED (the destination deposit failed; funds refunded), REFUNDED_BY_USER.',
        security: [{}, { apiKey: [] }],
        params: VaultParams,
        response: { 200: DepositAddressResponse, ...errors },
      },
    },
    async (request) => ({ data: await deps.deposits.get(request.params.vaultAddress) }),
  );
}
