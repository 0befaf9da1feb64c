/**
 * `Idempotency-Key` on the product POSTs a client retries (a chat turn, a run start): spec E "Idempotency", the same
 * key with the same content replays the first answer (`Idempotency-Replayed: true`), with other content it is a
 * 409 `idempotency_key_reused`; records are kept 24 hours, per user. Without a key the operation runs once per
 * request, as usual.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Tx } from '../../../platform/database.ts';
import { type IdempotencyStore, requestFingerprint } from '../../../platform/idempotency.ts';

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
 * Answers `operation` under the request's `Idempotency-Key` (scoped to `userId`), or runs it once without one.
 * @throws ApiError 409 `idempotency_key_reused` (another body under the key) or `idempotency_key_in_use`.
 */
export async function idempotent(
  store: IdempotencyStore,
  request: FastifyRequest,
  reply: FastifyReply,
  userId: string,
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
      scope: `agent-gateway:${userId}`,
      key,
      fingerprint: requestFingerprint(request.method, path, request.body),
      ttlMs: TTL_MS,
    },
    (tx) => operation(tx),
  );
  if (outcome.replayed) reply.header('idempotency-replayed', 'true');
  return reply.code(outcome.response.status).send(outcome.response.body);
}
