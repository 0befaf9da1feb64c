/**
 * `Idempotency-Key` on the product POSTs a client retries (a chat turn, a run start): spec E "Errors"
 * (idempotency), the same key with the same content replays the first answer (`Idempotency-Replayed: true`), with
 * other content it is a 409 `idempotency_key_reused`. A key belongs to one caller in one scope on one route: the
 * same key sent by another user, in another tenant or namespace, or to another route is another key. Records are
 * kept 24 hours. Two instances racing one key run the operation once (the platform store's row lock), and both
 * answer the first answer. Without a key the operation runs once per request, as usual.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Tx } from '../../../platform/database.ts';
import { type IdempotencyStore, requestFingerprint } from '../../../platform/idempotency.ts';
import type { UserCaller } from './context.ts';

/** Records are kept 24 hours. */
const TTL_MS = 24 * 60 * 60 * 1000;

/** The optional header, for a route's `headers` schema. */
export const IdempotencyHeader = {
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[\\x21-\\x7e]+$',
      description: 'Retry with the same key and body to get the first answer again.',
    }),
  ),
};

/**
 * The key space of a caller's keys on a route: `agent-gateway:<tenant>/<namespace>:<userId>:<METHOD> <route
 * template>` (the template, not the path: on `POST /api/v1/chats/{id}/turns` a key reused for another chat is a
 * changed request, 409).
 */
export function idempotencyScope(caller: UserCaller, request: FastifyRequest): string {
  const route = `${request.method} ${request.routeOptions.url ?? request.url.split('?')[0]}`;
  return `agent-gateway:${caller.scope.tenant}/${caller.scope.namespace}:${caller.userId}:${route}`;
}

/**
 * Answers `operation` under the request's `Idempotency-Key` (in the key space of {@link idempotencyScope}), or runs
 * it once without one. With a key, `operation` gets the transaction that also stores the answer.
 * @throws ApiError 409 `idempotency_key_reused` (another body under the key) or `idempotency_key_in_use`.
 */
export async function idempotent(
  store: IdempotencyStore,
  request: FastifyRequest,
  reply: FastifyReply,
  caller: UserCaller,
  operation: (tx: Tx | undefined) => Promise<{ status: number; body: unknown }>,
) {
  const key = request.headers['idempotency-key'];
  if (typeof key !== 'string') {
    const answer = await operation(undefined);
    return reply.code(answer.status).send(answer.body);
  }
  const path = request.url.split('?')[0]!;
  const outcome = await store.run(
    {
      scope: idempotencyScope(caller, request),
      key,
      fingerprint: requestFingerprint(request.method, path, request.body),
      ttlMs: TTL_MS,
    },
    (tx) => operation(tx),
  );
  if (outcome.replayed) reply.header('idempotency-replayed', 'true');
  return reply.code(outcome.response.status).send(outcome.response.body);
}
