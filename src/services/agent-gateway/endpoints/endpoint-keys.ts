/**
 * Endpoint credentials (spec 002 section E, "E. Gateway identities"): endpoint API keys (`agk_`, header
 * `X-API-Key`) for endpoints whose `authPolicy.type` is `api_key`, and platform bearer tokens (`agp_`,
 * `Authorization: Bearer`) for `platform` endpoints, both on the platform credential kit (256-bit secrets shown once,
 * stored as SHA-256, revocation reaching every instance).
 *
 * Choices where the spec is silent ("Issuing Endpoint API keys, their expiry and rotation mechanics: not shown"):
 * - a key is issued per endpoint by an admin of its scope, optionally expiring (`expiresInSeconds`, 60 s to 2 years);
 * - rotation issues a new key and lets the old one work for an overlap (`overlapSeconds`, 60 s to 30 days, default
 *   24 h; never longer than its own expiry), so both are valid during the overlap;
 * - a platform token belongs to a scope and invokes the `platform` endpoints of that scope.
 *
 * Credential types never substitute for each other: a key on a `platform` endpoint, a platform token or a user token
 * on an `api_key` endpoint is a 401 `wrong_credential_type`; a key of one endpoint on another is a 401
 * `unauthenticated`, exactly as an unknown key.
 */
import { and, desc, eq } from 'drizzle-orm';
import type { Clock } from '../../../platform/clock.ts';
import type { Db, Executor } from '../../../platform/database.ts';
import { ApiError } from '../../../platform/errors.ts';
import type { ServiceContext } from '../../../platform/service.ts';
import {
  notFound,
  tokenExpired,
  tokenRevoked,
  unauthenticated,
  wrongCredentialType,
} from '../agent-gateway-errors.ts';
import { endpointCredentials } from '../db/endpoints.ts';
import type { CredentialStore as GatewayCredentialStore, Scope } from '../identity.ts';
import type { EndpointService } from './endpoints.ts';

/** The prefix of an endpoint API key's secret. */
export const ENDPOINT_KEY_PREFIX = 'agk_';
/** The prefix of a platform bearer token's secret. */
export const PLATFORM_TOKEN_PREFIX = 'agp_';
/** The range of `expiresInSeconds` of a key or token (60 s to 2 years). */
export const KEY_EXPIRY_SECONDS = { min: 60, max: 2 * 365 * 24 * 3600 } as const;
/** The range and default of a rotation's `overlapSeconds` (60 s to 30 days, default 24 h). */
export const OVERLAP_SECONDS = { min: 60, max: 30 * 24 * 3600, default: 24 * 3600 } as const;

/** The caller behind an endpoint credential. */
export interface EndpointPrincipal {
  credentialId: number;
  kind: 'endpoint_key' | 'platform_token';
  endpointId: string | null;
  scope: Scope;
}

/** The endpoint credential store. */
export function createEndpointCredentialStore(ctx: ServiceContext) {
  return ctx.credentialStore<
    typeof endpointCredentials,
    EndpointPrincipal,
    { kind: 'endpoint_key' | 'platform_token'; endpointId: string | null; rotatedFrom: number | null }
  >({
    table: endpointCredentials,
    prefixes: [ENDPOINT_KEY_PREFIX, PLATFORM_TOKEN_PREFIX],
    principal: (row) => ({
      credentialId: row.id,
      kind: row.kind,
      endpointId: row.endpointId,
      scope: { tenant: row.tenantId, namespace: row.namespaceId },
    }),
    attributes: (row) => ({ kind: row.kind, endpointId: row.endpointId, rotatedFrom: row.rotatedFrom }),
  });
}

/** The credential kit's store of endpoint keys and platform tokens. */
export type EndpointCredentialStore = ReturnType<typeof createEndpointCredentialStore>;

/** A key or token as the API lists it (never the secret). */
export interface EndpointKeyView {
  id: number;
  hint: string;
  label: string | null;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  rotatedFrom: number | null;
}

function keyView(row: typeof endpointCredentials.$inferSelect): EndpointKeyView {
  return {
    id: row.id,
    hint: row.hint,
    label: row.label,
    createdAt: row.createdAt.toISOString(),
    expiresAt: row.expiresAt ? row.expiresAt.toISOString() : null,
    revokedAt: row.revokedAt ? row.revokedAt.toISOString() : null,
    rotatedFrom: row.rotatedFrom,
  };
}

/** What a presented invocation credential is. */
export interface PresentedCredential {
  /** `X-API-Key`. */
  apiKey?: string;
  /** The bearer token of `Authorization`. */
  bearer?: string;
}

/** Endpoint API keys and platform tokens: issue, list, rotate, revoke, and the authentication of invocations. */
export class EndpointKeyService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly store: EndpointCredentialStore,
    private readonly gatewayKeys: GatewayCredentialStore,
    private readonly endpoints: EndpointService,
  ) {}

  private expiry(seconds: number | undefined): Date | null {
    return seconds === undefined ? null : new Date(this.clock.nowMs() + seconds * 1000);
  }

  /** Issues an API key of endpoint `endpointId` (shown once). @throws ApiError 404. */
  async issueKey(
    scope: Scope,
    endpointId: string,
    userId: string | null,
    input: { label?: string; expiresInSeconds?: number },
    executor: Executor = this.db,
  ) {
    await this.endpoints.row(scope, endpointId, executor);
    const issued = await this.store.issue(executor, {
      prefix: ENDPOINT_KEY_PREFIX,
      label: input.label ?? null,
      expiresAt: this.expiry(input.expiresInSeconds),
      values: {
        kind: 'endpoint_key',
        endpointId,
        tenantId: scope.tenant,
        namespaceId: scope.namespace,
        createdBy: userId,
        rotatedFrom: null,
      },
    });
    return { key: issued.key, apiKey: keyView(issued.row) };
  }

  /** The keys of an endpoint, newest first (never the secrets). @throws ApiError 404. */
  async listKeys(scope: Scope, endpointId: string) {
    await this.endpoints.row(scope, endpointId);
    const rows = await this.db
      .select()
      .from(endpointCredentials)
      .where(
        and(eq(endpointCredentials.endpointId, endpointId), eq(endpointCredentials.kind, 'endpoint_key')),
      )
      .orderBy(desc(endpointCredentials.id));
    return rows.map(keyView);
  }

  private async keyRow(
    scope: Scope,
    endpointId: string,
    keyId: number,
    executor: Executor = this.db,
    lock = false,
  ) {
    await this.endpoints.row(scope, endpointId, executor);
    const query = executor
      .select()
      .from(endpointCredentials)
      .where(
        and(
          eq(endpointCredentials.id, keyId),
          eq(endpointCredentials.endpointId, endpointId),
          eq(endpointCredentials.kind, 'endpoint_key'),
        ),
      );
    const [row] = lock ? await query.for('update') : await query;
    if (!row) throw notFound('API key', String(keyId));
    return row;
  }

  /**
   * Rotates key `keyId`: a new key (shown once, same label; it expires after `expiresInSeconds`, else after the old
   * key's own period `expiresAt - createdAt`, else never) and the old one expiring after `overlapSeconds` (or at its
   * own earlier expiry): both work during the overlap. A key is rotated once (its row is locked, so two concurrent
   * rotations make one successor): rotate the successor next.
   * @throws ApiError 404; 409 `invalid_state` for a revoked, expired or already rotated key.
   */
  async rotateKey(
    scope: Scope,
    endpointId: string,
    keyId: number,
    userId: string,
    input: { overlapSeconds?: number; expiresInSeconds?: number },
  ) {
    return this.db.transaction(async (tx) => {
      const old = await this.keyRow(scope, endpointId, keyId, tx, true);
      const now = this.clock.now();
      if (old.revokedAt || (old.expiresAt && old.expiresAt <= now))
        throw new ApiError(
          409,
          'invalid_state',
          `API key ${keyId} is no longer valid; issue a new key instead.`,
        );
      const [successor] = await tx
        .select({ id: endpointCredentials.id })
        .from(endpointCredentials)
        .where(eq(endpointCredentials.rotatedFrom, keyId))
        .limit(1);
      if (successor)
        throw new ApiError(
          409,
          'invalid_state',
          `API key ${keyId} was already rotated into key ${successor.id}; rotate that key instead.`,
          { details: { successorId: successor.id } },
        );
      const periodSeconds = old.expiresAt
        ? Math.max(
            KEY_EXPIRY_SECONDS.min,
            Math.round((old.expiresAt.getTime() - old.createdAt.getTime()) / 1000),
          )
        : undefined;
      const overlapEnd = new Date(now.getTime() + (input.overlapSeconds ?? OVERLAP_SECONDS.default) * 1000);
      const oldExpiry = old.expiresAt && old.expiresAt < overlapEnd ? old.expiresAt : overlapEnd;
      await tx
        .update(endpointCredentials)
        .set({ expiresAt: oldExpiry })
        .where(eq(endpointCredentials.id, keyId));
      const issued = await this.store.issue(tx, {
        prefix: ENDPOINT_KEY_PREFIX,
        label: old.label,
        expiresAt: this.expiry(input.expiresInSeconds ?? periodSeconds),
        values: {
          kind: 'endpoint_key',
          endpointId,
          tenantId: scope.tenant,
          namespaceId: scope.namespace,
          createdBy: userId,
          rotatedFrom: keyId,
        },
      });
      return {
        key: issued.key,
        apiKey: keyView(issued.row),
        previous: keyView({ ...old, expiresAt: oldExpiry }),
      };
    });
  }

  /** Revokes key `keyId` at once, on every instance. @throws ApiError 404. */
  async revokeKey(scope: Scope, endpointId: string, keyId: number) {
    await this.keyRow(scope, endpointId, keyId);
    const row = await this.store.revoke(keyId);
    return keyView(row!);
  }

  /**
   * Watches the revocation of credential `credentialId` (on any instance): `onRevoked` fires once it is revoked.
   * @returns the function that stops watching.
   */
  watch(credentialId: number, onRevoked: () => void): () => void {
    return this.store.watch(credentialId, onRevoked);
  }

  /** Whether credential `credentialId` is revoked now (a stream checks it once its watch is in place). */
  async isRevoked(credentialId: number): Promise<boolean> {
    const row = await this.store.find(credentialId);
    return !row || row.revokedAt !== null;
  }

  /** Every endpoint key and platform token of the install, newest first (operator; never the secrets). */
  async listAll(includeRevoked: boolean) {
    const rows = await this.store.list({ includeRevoked });
    return Promise.all(rows.map((row) => this.store.record(row)));
  }

  /** Revokes any endpoint key or platform token (operator), on every instance. @throws ApiError 404. */
  async revokeAny(id: number) {
    const row = await this.store.revoke(id);
    if (!row) throw notFound('endpoint credential', String(id));
    return this.store.record(row);
  }

  /** Issues a platform bearer token of the scope (shown once). */
  async issuePlatformToken(
    scope: Scope,
    userId: string,
    input: { label?: string; expiresInSeconds?: number },
  ) {
    const issued = await this.store.issue(this.db, {
      prefix: PLATFORM_TOKEN_PREFIX,
      label: input.label ?? null,
      expiresAt: this.expiry(input.expiresInSeconds),
      values: {
        kind: 'platform_token',
        endpointId: null,
        tenantId: scope.tenant,
        namespaceId: scope.namespace,
        createdBy: userId,
        rotatedFrom: null,
      },
    });
    return { token: issued.key, platformToken: keyView(issued.row) };
  }

  /** Revokes platform token `id` of the scope. @throws ApiError 404. */
  async revokePlatformToken(scope: Scope, id: number) {
    const row = await this.store.revoke(id, {
      allowed: (r) =>
        r.kind === 'platform_token' && r.tenantId === scope.tenant && r.namespaceId === scope.namespace,
    });
    if (!row) throw notFound('platform token', String(id));
    return keyView(row);
  }

  /**
   * The caller of an invocation route: the endpoint credential presented (`X-API-Key` first, else the bearer token).
   * @throws ApiError 401 `unauthenticated` (none, unknown), `token_revoked`, `token_expired`, `wrong_credential_type`
   *   (a valid gateway credential of another kind, a platform token in `X-API-Key`, an endpoint key as a bearer).
   */
  async authenticate(presented: PresentedCredential): Promise<EndpointPrincipal> {
    const header =
      presented.apiKey !== undefined ? 'apiKey' : presented.bearer !== undefined ? 'bearer' : undefined;
    if (!header) throw unauthenticated('an endpoint API key (X-API-Key) or a platform bearer token');
    const secret = presented[header]!;
    const found = await this.store.resolve(secret);
    if (found.status === 'revoked') throw tokenRevoked();
    if (found.status === 'expired') throw tokenExpired();
    if (found.status === 'active') {
      const wanted = header === 'apiKey' ? 'endpoint_key' : 'platform_token';
      if (found.principal.kind !== wanted)
        throw wrongCredentialType(
          header === 'apiKey' ? 'an endpoint API key in X-API-Key' : 'a platform bearer token',
          found.principal.kind === 'endpoint_key' ? 'an endpoint API key' : 'a platform bearer token',
        );
      return found.principal;
    }
    const other = await this.gatewayKeys.resolve(secret);
    if (other.status === 'active')
      throw wrongCredentialType(
        header === 'apiKey' ? 'an endpoint API key' : 'a platform bearer token',
        'a credential of another kind (user, host, environment, attempt or internal)',
      );
    throw unauthenticated(header === 'apiKey' ? 'an endpoint API key' : 'a platform bearer token');
  }

  /**
   * Whether `principal` may use an endpoint of `authType` with id `endpointId` in `scope`: a key only its own
   * endpoint (of `api_key` type), a platform token only `platform` endpoints of its scope.
   * @throws ApiError 401 `wrong_credential_type` for the other kind of credential; 401 `unauthenticated` for a key of
   *   another endpoint or a token of another scope (as an unknown one: nothing about the endpoint is revealed).
   */
  static authorize(
    principal: EndpointPrincipal,
    endpoint: { id: string; tenantId: string; namespaceId: string },
    authType: 'api_key' | 'platform',
  ): void {
    const ownScope =
      principal.scope.tenant === endpoint.tenantId && principal.scope.namespace === endpoint.namespaceId;
    if (principal.kind === 'endpoint_key' && principal.endpointId !== endpoint.id)
      throw unauthenticated('an API key of this endpoint');
    if (principal.kind === 'platform_token' && !ownScope)
      throw unauthenticated('a platform token of this scope');
    if (principal.kind === 'endpoint_key' && authType !== 'api_key')
      throw wrongCredentialType('a platform bearer token', 'an endpoint API key');
    if (principal.kind === 'platform_token' && authType !== 'platform')
      throw wrongCredentialType('an endpoint API key (X-API-Key)', 'a platform bearer token');
  }
}
