/**
 * OAuth 2.0 clients of merchant parties (RFC 6749 section 2): a merchant registers a confidential client for its own
 * party with the scopes its tokens may carry, gets its `client_id` and `client_secret` once, and may revoke it.
 *
 * Clients are rows of the payments credential table (kind `oauth_client`), so the platform credential kit issues,
 * hashes (SHA-256), resolves and revokes their secrets exactly as it does keys, and operators list and revoke them
 * with the other credentials (`/_ops/keys`). A revocation travels to every instance on the kit's NOTIFY channel:
 * each instance forgets what it cached about clients, so the client's access tokens are refused at once everywhere.
 */
import { and, count, desc, eq } from 'drizzle-orm';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../../platform/clock.ts';
import { type CredentialRow, revocationChannel } from '../../platform/credentials.ts';
import { constantTimeEqual } from '../../platform/crypto.ts';
import type { Db, Executor } from '../../platform/database.ts';
import { ApiError } from '../../platform/errors.ts';
import { prefixedHexId } from '../../platform/ids.ts';
import type { Notifier } from '../../platform/notifications.ts';
import type { ServiceContext } from '../../platform/service.ts';
import { credentials } from './db/schema.ts';
import { knownScopes, type Scope } from './oauth-scopes.ts';
import { credentialAttributes } from './parties.ts';

/** Prefix of client secrets (`ocs_` + 43 URL-safe base64 characters, 256 random bits). */
export const CLIENT_SECRET_PREFIX = 'ocs_';
/** Prefix of client identifiers (`cli_` + 32 hex). */
const CLIENT_ID_PREFIX = 'cli';

/** An OAuth client as the token endpoint sees it after authenticating it. */
export interface AuthenticatedClient {
  /** The credential row id. */
  id: number;
  clientId: string;
  partyId: string;
  /** The scopes its tokens may carry. */
  scopes: Scope[];
}

type CredentialsRow = CredentialRow<typeof credentials>;

function authenticated(row: CredentialsRow): AuthenticatedClient {
  return {
    id: row.id,
    clientId: row.clientId ?? '',
    partyId: row.partyId,
    scopes: knownScopes(row.scopes ?? []),
  };
}

/** The store of client secrets (the credential kit on the `credentials` table, prefix {@link CLIENT_SECRET_PREFIX}). */
export function createClientSecretStore(ctx: ServiceContext) {
  return ctx.credentialStore({
    table: credentials,
    prefixes: [CLIENT_SECRET_PREFIX],
    principal: (row) => authenticated(row),
    attributes: credentialAttributes,
  });
}

/** The client-secret store of the payments service. */
export type ClientSecretStore = ReturnType<typeof createClientSecretStore>;

/** What a client's access tokens are checked against on every request (cached per instance). */
export interface ClientState {
  id: number;
  partyId: string;
  scopes: Scope[];
  revoked: boolean;
}

/** A client as its merchant sees it (never the secret, except once at registration). */
export interface OAuthClientRecord {
  id: number;
  clientId: string;
  name: string | null;
  scopes: Scope[];
  secretHint: string;
  createdAt: Date;
  revokedAt: Date | null;
}

function record(row: CredentialsRow): OAuthClientRecord {
  return {
    id: row.id,
    clientId: row.clientId ?? '',
    name: row.label,
    scopes: knownScopes(row.scopes ?? []),
    secretHint: row.hint,
    createdAt: row.createdAt,
    revokedAt: row.revokedAt,
  };
}

/** 404 that never tells a missing client from another party's. */
export function oauthClientNotFound(): ApiError {
  return new ApiError(404, 'oauth_client_not_found', 'No such OAuth client.');
}

/** Registration, authentication, revocation and the per-instance state of OAuth clients (see the module comment). */
export class OAuthClients {
  /** Client states by `client_id`, 60 s, bounded; cleared on every credential revocation of the service. */
  private readonly cache: LRUCache<string, ClientState | 'unknown'>;
  /** Moves on every clear: a load that started before a revocation is not cached (it may have read the old row). */
  private generation = 0;

  constructor(
    private readonly db: Db,
    clock: Clock,
    private readonly secrets: ClientSecretStore,
  ) {
    this.cache = new LRUCache({
      max: 10_000,
      ttl: 60_000,
      ttlResolution: 0,
      perf: { now: () => clock.nowMs() },
    });
  }

  /**
   * Registers a client for `partyId` with `scopes` (already checked to be this service's) inside `executor`'s
   * transaction. The secret is returned this once; the database keeps its SHA-256.
   */
  async register(
    executor: Executor,
    partyId: string,
    input: { name: string | null; scopes: readonly Scope[] },
  ): Promise<{ client: OAuthClientRecord; clientSecret: string }> {
    const issued = await this.secrets.issue(executor, {
      label: input.name,
      values: {
        partyId,
        kind: 'oauth_client',
        clientId: prefixedHexId(CLIENT_ID_PREFIX),
        scopes: [...input.scopes],
      },
    });
    return { client: record(issued.row), clientSecret: issued.key };
  }

  /** The clients of `partyId` (revoked ones too), newest first: `limit` rows after `offset`, and the total. */
  async list(
    partyId: string,
    limit: number,
    offset: number,
  ): Promise<{ rows: OAuthClientRecord[]; total: number }> {
    const where = and(eq(credentials.partyId, partyId), eq(credentials.kind, 'oauth_client'));
    const [rows, [total]] = await Promise.all([
      this.db
        .select()
        .from(credentials)
        .where(where)
        .orderBy(desc(credentials.id))
        .limit(limit)
        .offset(offset),
      this.db.select({ n: count() }).from(credentials).where(where),
    ]);
    return { rows: rows.map(record), total: total?.n ?? 0 };
  }

  /** One client of `partyId` by `client_id`. @throws ApiError 404 `oauth_client_not_found` (also another party's). */
  async get(partyId: string, clientId: string): Promise<OAuthClientRecord> {
    const row = await this.find(clientId);
    if (!row || row.partyId !== partyId) throw oauthClientNotFound();
    return record(row);
  }

  /**
   * Revokes client `clientId` of `partyId` (revoking twice keeps the first time). Its access tokens are refused at
   * once: here when the transaction commits, on other instances when the kit's NOTIFY reaches them.
   * @param executor the caller's transaction (the route's idempotency record), or the pool.
   * @throws ApiError 404 `oauth_client_not_found` (also for another party's client).
   */
  async revoke(clientId: string, partyId: string, executor: Executor = this.db): Promise<void> {
    const row = await this.find(clientId, executor);
    if (!row) throw oauthClientNotFound();
    const revoked = await this.secrets.revoke(row.id, {
      executor,
      allowed: (r) => r.partyId === partyId && r.kind === 'oauth_client',
    });
    if (!revoked) throw oauthClientNotFound();
    this.forgetStates();
  }

  /**
   * Client authentication (RFC 6749 section 2.3.1): `clientSecret` must be an active secret issued to `clientId`
   * (compared in constant time).
   * @returns the client, or undefined (unknown id or secret, a secret of another client, a revoked client).
   */
  async authenticate(clientId: string, clientSecret: string): Promise<AuthenticatedClient | undefined> {
    const found = await this.secrets.resolve(clientSecret);
    if (found.status !== 'active') return undefined;
    return constantTimeEqual(found.principal.clientId, clientId) ? found.principal : undefined;
  }

  /** What an access token of `clientId` is checked against: the client's party, scopes and revocation (cached). */
  async state(clientId: string): Promise<ClientState | undefined> {
    const cached = this.cache.get(clientId);
    if (cached !== undefined) return cached === 'unknown' ? undefined : cached;
    const generation = this.generation;
    const row = await this.find(clientId);
    const state: ClientState | 'unknown' = row
      ? {
          id: row.id,
          partyId: row.partyId,
          scopes: knownScopes(row.scopes ?? []),
          revoked: row.revokedAt !== null,
        }
      : 'unknown';
    if (generation === this.generation) this.cache.set(clientId, state);
    return state === 'unknown' ? undefined : state;
  }

  /**
   * Subscribes this instance to the service's credential revocations (and to the notifier's resynchronisation after
   * a lost connection): each one clears the client states, so a revoked client's tokens fail at once.
   * @returns the function that unsubscribes.
   */
  async listen(notifier: Notifier, service: string): Promise<() => Promise<void>> {
    const unlisten = await notifier.listen(revocationChannel(service), () => this.forgetStates());
    const unresync = notifier.onResync(() => this.forgetStates());
    return async () => {
      unresync();
      await unlisten();
    };
  }

  /**
   * Forgets every cached client state (a revocation happened). Called on NOTIFY, and by the revoking route once its
   * transaction committed (a load between the revocation and the commit could have cached the old row).
   */
  forgetStates(): void {
    this.generation += 1;
    this.cache.clear();
  }

  private async find(clientId: string, executor: Executor = this.db): Promise<CredentialsRow | undefined> {
    const [row] = await executor
      .select()
      .from(credentials)
      .where(and(eq(credentials.clientId, clientId), eq(credentials.kind, 'oauth_client')))
      .limit(1);
    return row as CredentialsRow | undefined;
  }
}
