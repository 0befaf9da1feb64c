import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../platform/errors.ts';
import type { ServiceApp } from '../../platform/http.ts';
import { API_KEY_HEADER, type DepositKeyService, type KeyPrincipal } from './api-keys.ts';
import { validateDepositRequest } from './deposit-request.ts';
import type { DepositService } from './deposit-service.ts';
import type { DepositsConfig } from './deposits-config.ts';
import { validationFailed } from './deposits-errors.ts';
import {
  CreateDepositAddressBody,
  DepositAddressResponse,
  DepositErrorBody,
  QuoteResponse,
  VaultParams,
} from './deposits-schemas.ts';

declare module 'fastify' {
  interface FastifyRequest {
    depositKey?: KeyPrincipal;
    /** The 401 of a supplied key that failed authentication, answered after the client address's rate limit. */
    depositKeyRejection?: ApiError;
  }
}

const errors = { 400: DepositErrorBody, 401: DepositErrorBody, 404: DepositErrorBody, 429: DepositErrorBody };

/**
 * Public routes under `/v1/stablecoin-gateway`. The optional key (`x-api-key`) is checked and the rate limit
 * applied in `onRequest`: per key when a valid one is sent, per client address otherwise. A key that fails
 * authentication counts against the client address's limit before its 401 is answered, so past that limit key
 * guessing gets 429 like any anonymous caller.
 */
export async function registerDepositRoutes(
  app: ServiceApp,
  deps: { deposits: DepositService; keys: DepositKeyService; config: DepositsConfig },
) {
  const authenticate = async (request: FastifyRequest) => {
    const header = request.headers[API_KEY_HEADER];
    if (header === undefined) return;
    try {
      request.depositKey = await deps.keys.authenticate(
        Array.isArray(header) ? (header[0] ?? '') : header,
        'v1',
      );
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 401) throw err;
      // Counted as the client address (the rate limit runs next), then answered by `rejectInvalidKey`.
      request.depositKeyRejection = err;
    }
  };
  const rejectInvalidKey = async (request: FastifyRequest) => {
    if (request.depositKeyRejection) throw request.depositKeyRejection;
  };
  const limit = app.rateLimit({
    timeWindow: 60_000,
    max: (request: FastifyRequest) =>
      request.depositKey
        ? (request.depositKey.rateLimitPerMinute ?? deps.config.keyRateLimit)
        : deps.config.anonymousRateLimit,
    keyGenerator: (request: FastifyRequest) =>
      request.depositKey ? `key:${request.depositKey.keyId}` : `ip:${request.ip}`,
    errorResponseBuilder: (_request, context) =>
      new ApiError(429, 'rate_limited', 'Too many requests, retry after the time given in Retry-After.', {
        headers: { 'retry-after': String(Math.max(1, Math.ceil(context.ttl / 1000))) },
      }),
  });

  app.post(
    '/v1/stablecoin-gateway/deposit-addresses',
    {
      onRequest: [authenticate, limit, rejectInvalidKey],
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
      const data = await deps.deposits.quote(parsed.value, request.depositKey?.keyId);
      return reply.code(201).send({ data });
    },
  );

  app.get(
    '/v1/stablecoin-gateway/deposit-addresses/:vaultAddress',
    {
      onRequest: [authenticate, limit, rejectInvalidKey],
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
