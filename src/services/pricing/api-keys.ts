import { and, desc, eq, isNull } from 'drizzle-orm';
import { revokeApiKey } from '../../platform/api-keys.ts';
import type { Clock } from '../../platform/clock.ts';
import { hashApiKey, issueApiKey } from '../../platform/crypto.ts';
import type { Db, Executor } from '../../platform/database.ts';
import { ApiError } from '../../platform/errors.ts';
import { KeyCache } from '../../platform/key-cache.ts';
import type { Notifier } from '../../platform/notifications.ts';
import { apiKeys, projects } from './db/schema.ts';
import {
  keyInvalid,
  keyMissing,
  keyRevoked,
  PricingErrorName,
  projectNotFound,
  readOnlyKey,
} from './pricing-errors.ts';

/** `read` allows the read-only calls; `read_write` allows every call (spec B, Authentication). */
export type Permission = 'read' | 'read_write';

export const PERMISSIONS = ['read', 'read_write'] as const;

/** Key prefix (the anchor's keys look like `cpk_...`). A key is `cpk_` + 43 URL-safe base64 characters. */
export const KEY_PREFIX = 'cpk_';

const KEY_PATTERN = /^cpk_[A-Za-z0-9_-]{43}$/;

/** Requests per minute per key unless the key has its own `rateLimitPerMinute` (NOTES.md, anchor). */
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 100;

/** An authenticated caller: the key, its project and what it may do. */
export interface KeyPrincipal {
  keyId: number;
  projectId: number;
  projectSlug: string;
  permission: Permission;
  /** Requests per minute allowed for this key. */
  rateLimitPerMinute: number;
}

/** A key as the operator API lists it (never the key itself). Times ISO 8601. */
export interface KeyRecord {
  id: number;
  projectSlug: string;
  permission: Permission;
  /** The last four characters of the key. */
  hint: string;
  label: string | null;
  rateLimitPerMinute: number;
  createdAt: string;
  revokedAt: string | null;
}

type Lookup = KeyPrincipal | 'revoked' | 'unknown';

/**
 * Issues, revokes and authenticates the API keys of projects. Keys are stored as SHA-256 hashes; the plaintext is
 * returned once by {@link PricingKeyService.issue}. Lookups are cached per instance ({@link KeyCache}, 60 s); a
 * revocation clears the entry on every instance at once (PostgreSQL NOTIFY on `pricing_api_key_revoked`).
 */
export class PricingKeyService {
  private readonly cache: KeyCache<Lookup>;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {
    this.cache = new KeyCache<Lookup>('pricing_api_key_revoked', clock);
  }

  /** Subscribes to revocations made by other instances; returns the unsubscribe function. */
  async listenForRevocations(notifier: Notifier): Promise<() => Promise<void>> {
    return this.cache.listen(notifier);
  }

  /**
   * Creates a key for the project `projectSlug`. Returns its record and the plaintext `key`, shown this once.
   * @param rateLimitPerMinute requests per minute for this key (1..1,000,000); default 100.
   * @throws ApiError 404 `not_found` when the project does not exist.
   */
  async issue(
    input: {
      projectSlug: string;
      permission: Permission;
      label?: string | null;
      rateLimitPerMinute?: number | null;
    },
    executor: Executor = this.db,
  ): Promise<KeyRecord & { key: string }> {
    const [project] = await executor
      .select({ id: projects.id, slug: projects.slug })
      .from(projects)
      .where(eq(projects.slug, input.projectSlug))
      .limit(1);
    if (!project) throw projectNotFound(input.projectSlug);
    const issued = issueApiKey(KEY_PREFIX);
    const [row] = await executor
      .insert(apiKeys)
      .values({
        projectId: project.id,
        permission: input.permission,
        keyHash: issued.hash,
        hint: issued.hint,
        label: input.label ?? null,
        rateLimitPerMinute: input.rateLimitPerMinute ?? null,
        createdAt: this.clock.now(),
      })
      .returning();
    return { ...toRecord(row!, project.slug), key: issued.plaintext };
  }

  /**
   * Revokes a key; later requests with it get 401 on every instance. Revoking a revoked key changes nothing.
   * @throws ApiError 404 `not_found` when there is no key `id`.
   */
  async revoke(id: number): Promise<KeyRecord> {
    const revoked = await revokeApiKey(this.db, apiKeys, id, {
      now: this.clock.now(),
      cache: this.cache,
      extra: async (tx, row) => {
        const [project] = await tx
          .select({ slug: projects.slug })
          .from(projects)
          .where(eq(projects.id, row.projectId));
        return project?.slug ?? '';
      },
    });
    if (!revoked) throw new ApiError(404, PricingErrorName.notFound, `No API key with id ${id}.`);
    return toRecord(revoked.row, revoked.extra);
  }

  /**
   * The keys of project `projectSlug`, newest first.
   * @throws ApiError 404 `not_found` when the project does not exist.
   */
  async list(projectSlug: string, options: { includeRevoked: boolean }): Promise<KeyRecord[]> {
    const [project] = await this.db
      .select({ id: projects.id })
      .from(projects)
      .where(eq(projects.slug, projectSlug))
      .limit(1);
    if (!project) throw projectNotFound(projectSlug);
    const rows = await this.db
      .select()
      .from(apiKeys)
      .where(
        and(
          eq(apiKeys.projectId, project.id),
          options.includeRevoked ? undefined : isNull(apiKeys.revokedAt),
        ),
      )
      .orderBy(desc(apiKeys.id));
    return rows.map((row) => toRecord(row, projectSlug));
  }

  /**
   * Resolves the caller from the `Authorization` header value (`Bearer <key>`, scheme case-insensitive).
   * @throws ApiError 401 `unauthorized`: header missing or not a bearer key, key unknown, key revoked.
   */
  async authenticate(authorization: string | undefined): Promise<KeyPrincipal> {
    const match = authorization === undefined ? null : /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    if (!match) throw keyMissing();
    const presented = match[1]!;
    if (!KEY_PATTERN.test(presented)) throw keyInvalid();
    const found = await this.cache.get(hashApiKey(presented), (hash) => this.lookup(hash));
    if (found === 'unknown') throw keyInvalid();
    if (found === 'revoked') throw keyRevoked();
    return found;
  }

  private async lookup(hash: string): Promise<Lookup> {
    const [found] = await this.db
      .select({ key: apiKeys, slug: projects.slug })
      .from(apiKeys)
      .innerJoin(projects, eq(projects.id, apiKeys.projectId))
      .where(eq(apiKeys.keyHash, hash))
      .limit(1);
    if (!found) return 'unknown';
    if (found.key.revokedAt) return 'revoked';
    return {
      keyId: found.key.id,
      projectId: found.key.projectId,
      projectSlug: found.slug,
      permission: found.key.permission,
      rateLimitPerMinute: found.key.rateLimitPerMinute ?? DEFAULT_RATE_LIMIT_PER_MINUTE,
    };
  }
}

/**
 * The access rule of every public call: the key must belong to the project named in the path (otherwise 404, the
 * same answer as for an unknown slug), and a mutating call needs `read_write` (otherwise 403).
 * @throws ApiError 404 `not_found` for another project's slug; 403 `forbidden` for a `read` key on a mutating call.
 */
export function authorize(principal: KeyPrincipal, slug: string, needs: Permission): void {
  if (principal.projectSlug !== slug) throw projectNotFound(slug);
  if (needs === 'read_write' && principal.permission !== 'read_write') throw readOnlyKey();
}

function toRecord(row: typeof apiKeys.$inferSelect, projectSlug: string): KeyRecord {
  return {
    id: row.id,
    projectSlug,
    permission: row.permission,
    hint: row.hint,
    label: row.label,
    rateLimitPerMinute: row.rateLimitPerMinute ?? DEFAULT_RATE_LIMIT_PER_MINUTE,
    createdAt: row.createdAt.toISOString(),
    revokedAt: row.revokedAt ? row.revokedAt.toISOString() : null,
  };
}
