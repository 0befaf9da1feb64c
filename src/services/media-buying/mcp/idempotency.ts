/**
 * Idempotency of the mutating MCP tools (AdCP: `idempotency_key` on every mutating request, canonical-JSON
 * fingerprint, replays marked `replayed: true`, `IDEMPOTENCY_CONFLICT` on a changed body), with the spec's deviations
 * for `mutation_outcome` ("Media-buy change outcomes"):
 *
 * | the tool's answer                                   | the key                                              |
 * | --------------------------------------------------- | ---------------------------------------------------- |
 * | success                                             | kept: the answer is replayed (`replayed: true`)       |
 * | `unknown`                                           | kept: the error is replayed, never resent             |
 * | `rolled_back`                                       | kept: the error is replayed                           |
 * | `not_dispatched`, `update_media_buy` (and others)   | released: the same key runs again                     |
 * | `not_dispatched`, `create_media_buy`                | released only when `recovery` is `correctable`, else kept |
 * | any other error (no `mutation_outcome`)             | released                                              |
 *
 * Built on the platform's {@link IdempotencyStore} (PostgreSQL `platform.idempotency_keys`): the tool runs in the same
 * transaction as the key's row, so a kept answer and its effects commit together and a released one leaves nothing.
 * A call opens its key first ({@link McpIdempotency.open}): the key's record and the Buyer Account's operator domain
 * (Buyer Setup) in one statement, so a replay reads nothing else.
 * Keys are scoped per principal (the organization and the user, or the credential when there is no user), per
 * endpoint (each storefront is a seller of its own) and per tool. The fingerprint is SHA-256 of the RFC 8785
 * canonical JSON (`canonicalize`) of the arguments without `idempotency_key` (and without the version envelope, which
 * does not change what is asked).
 *
 * In flight: a second call with a key whose first call has not finished waits for it (its insert blocks on the first
 * transaction's row), then replays its answer, or runs when the first was released. This holds across instances:
 * two pools on one database make one effect. Stored answers expire {@link REPLAY_TTL_SECONDS} after the first call
 * (AdCP `replay_ttl_seconds`); past that the key is free and the arguments run again. The platform's hourly job prunes
 * expired rows.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { Tx } from '../../../platform/database.ts';
import { ApiError } from '../../../platform/errors.ts';
import {
  IdempotencyConflictError,
  type IdempotencyStore,
  type IdempotentOutcome,
} from '../../../platform/idempotency.ts';
import { BUYER_SETUP_GUARD } from '../catalog/index.ts';
import { AdcpError, type AdcpErrorBody, type McpToolContext } from './contract.ts';

/** How long a stored answer replays: 24 hours (AdCP `replay_ttl_seconds`, 3,600-604,800). */
export const REPLAY_TTL_SECONDS = 86_400;

/** HTTP-like status recorded for a kept error (the store keeps `status` with the body). */
const KEPT_ERROR = 299;

/** The idempotency scope of a call: principal, endpoint (storefront) and tool. */
export function idempotencyScope(ctx: McpToolContext, tool: string): string {
  const { caller } = ctx;
  const principal = caller.user ? `user:${caller.user.id}` : `${caller.kind}:${caller.credentialId}`;
  const org = caller.organization?.id ?? 'none';
  const endpoint = ctx.storefront ? `sf:${ctx.storefront.id}` : ctx.endpoint.audience;
  return `media-buying:mcp:${org}:${principal}:${endpoint}:${tool}`;
}

/** SHA-256 (hex) of the RFC 8785 canonical JSON of the arguments without the key and the version envelope. */
export function argumentsFingerprint(args: Record<string, unknown>): string {
  const { idempotency_key: _key, adcp_version: _v, adcp_major_version: _m, ...rest } = args;
  return createHash('sha256')
    .update(canonicalize(rest) ?? '')
    .digest('hex');
}

/** Whether an error keeps the key (module comment's table). */
export function keepsKey(tool: string, error: AdcpErrorBody): boolean {
  const outcome = error.details?.mutation_outcome;
  if (outcome === 'unknown' || outcome === 'rolled_back') return true;
  if (outcome === 'not_dispatched' && tool === 'create_media_buy') return error.recovery !== 'correctable';
  return false;
}

/** `IDEMPOTENCY_CONFLICT` (AdCP): the key was used with other arguments. */
function conflict(): AdcpError {
  return new AdcpError({
    code: 'IDEMPOTENCY_CONFLICT',
    message:
      'This idempotency_key was already used with different arguments; use a new key for a new request.',
    recovery: 'correctable',
    field: 'idempotency_key',
    buyer_reason: {
      code: 'IDEMPOTENCY_CONFLICT',
      message: 'This idempotency_key was already used with different arguments; use a new key.',
    },
  });
}

/** The platform store's parameters of a call's key. */
interface KeyParams {
  scope: string;
  key: string;
  fingerprint: string;
  ttlMs: number;
}

/** The key of a call: its scope, the key, the arguments' fingerprint and how long its answer replays. */
function keyParams(ctx: McpToolContext, tool: string, args: Record<string, unknown>): KeyParams {
  return {
    scope: idempotencyScope(ctx, tool),
    key: String(args.idempotency_key),
    fingerprint: argumentsFingerprint(args),
    ttlMs: REPLAY_TTL_SECONDS * 1000,
  };
}

/** A call's key read with its Buyer Account's operator domain ({@link McpIdempotency.open}). */
export interface OpenedKey {
  /** The operator domain (Buyer Setup step 1) read with the key; null when there is none. */
  operatorDomain: string | null;
  /**
   * Runs `operation` once per (scope, key, fingerprint) and answers with its result, marked `replayed` (true on a
   * replay, false on a fresh run); a replay is decided from the record read by {@link McpIdempotency.open}.
   * @throws AdcpError `IDEMPOTENCY_CONFLICT`, `IDEMPOTENCY_IN_FLIGHT`; the operation's AdcpError (kept ones are
   *   replayed with `details.replayed: true`); anything else the operation throws (nothing is kept).
   */
  run(operation: (tx: Tx) => Promise<Record<string, unknown>>): Promise<Record<string, unknown>>;
}

/** Runs mutating tools under their idempotency keys (module comment). */
export class McpIdempotency {
  constructor(private readonly store: IdempotencyStore) {}

  /**
   * Reads the key of a call of a buying tool of Buyer Account `organizationId` together with the Account's operator
   * domain (Buyer Setup step 1, {@link BUYER_SETUP_GUARD}), in one statement (a replay needs no other): the tool checks
   * Buyer Setup, then runs under the key with {@link OpenedKey.run}.
   */
  async open(
    ctx: McpToolContext,
    tool: string,
    args: Record<string, unknown>,
    organizationId: number,
  ): Promise<OpenedKey> {
    const params = keyParams(ctx, tool, args);
    const peek = await this.store.peek<string>(params, BUYER_SETUP_GUARD, { orgId: organizationId });
    return {
      operatorDomain: peek.guard,
      run: (operation) => this.decide(tool, params, async () => peek.recorded(), operation),
    };
  }

  /** {@link OpenedKey.run} with the replay `recorded` decides. */
  private async decide(
    tool: string,
    params: KeyParams,
    recorded: () => Promise<IdempotentOutcome | undefined>,
    operation: (tx: Tx) => Promise<Record<string, unknown>>,
  ): Promise<Record<string, unknown>> {
    let outcome: IdempotentOutcome;
    try {
      outcome =
        (await recorded()) ??
        (await this.store.run(params, async (tx) => {
          try {
            return { status: 200, body: await operation(tx) };
          } catch (e) {
            if (e instanceof AdcpError && keepsKey(tool, e.body)) return { status: KEPT_ERROR, body: e.body };
            throw e;
          }
        }));
    } catch (e) {
      if (e instanceof IdempotencyConflictError) throw conflict();
      if (e instanceof ApiError && e.code === 'idempotency_key_in_use')
        throw new AdcpError({
          code: 'IDEMPOTENCY_IN_FLIGHT',
          message: 'A request with this idempotency_key is still running; retry shortly.',
          recovery: 'transient',
          field: 'idempotency_key',
        });
      throw e;
    }
    const body = outcome.response.body as Record<string, unknown>;
    if (outcome.response.status === KEPT_ERROR) {
      const error = body as unknown as AdcpErrorBody;
      throw new AdcpError(
        outcome.replayed ? { ...error, details: { ...error.details, replayed: true } } : error,
      );
    }
    return { ...body, replayed: outcome.replayed };
  }
}
