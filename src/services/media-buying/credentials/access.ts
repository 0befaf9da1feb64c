/**
 * What a caller may do (spec "Authentication": permission names, rule 7 "a key never grants more than its owner
 * has"). Access is a level (`read` < `write` < `admin`) and the functions it spans (`buyer`, `seller`): a member's
 * role gives `write` over every function, an admin's `admin`; a key's permission names cap that (they never raise it).
 */
import type { KeyPermission, MembershipRole } from '../db/schema.ts';

/** Access levels, in order. */
export const ACCESS_LEVELS = ['read', 'write', 'admin'] as const;
export type AccessLevel = (typeof ACCESS_LEVELS)[number];

/** The functions of the platform: buyer (advertisers, campaigns, buys) and seller (storefronts, lines). */
export type PlatformFunction = 'buyer' | 'seller';

/** What a caller may do: the highest level per function (absent: nothing). */
export type Access = Partial<Record<PlatformFunction, AccessLevel>>;

/** No access at all (buyer-agent identities: identity only). */
export const NO_ACCESS: Access = {};

const rank = (level: AccessLevel | undefined) => (level === undefined ? -1 : ACCESS_LEVELS.indexOf(level));

/** True when `access` reaches `level` for `fn`. */
export function allows(access: Access, fn: PlatformFunction, level: AccessLevel): boolean {
  return rank(access[fn]) >= rank(level);
}

/** The lower of two levels (undefined = none). */
function lower(a: AccessLevel | undefined, b: AccessLevel | undefined): AccessLevel | undefined {
  return rank(a) <= rank(b) ? a : b;
}

/** The higher of two levels. */
function higher(a: AccessLevel | undefined, b: AccessLevel | undefined): AccessLevel | undefined {
  return rank(a) >= rank(b) ? a : b;
}

/** A member's access by role: `admin` administers the organization, `member` reads and writes. */
export function roleAccess(role: MembershipRole): Access {
  const level: AccessLevel = role === 'admin' ? 'admin' : 'write';
  return { buyer: level, seller: level };
}

/**
 * The access named by a key's permissions, before its owner's role caps it: `platform:access` is the owner's live
 * access (everything, capped by the role); `platform:<level>` that level for every function; `buyer:<level>` that
 * level for buyer functions only. Several names: the union.
 */
export function permissionAccess(permissions: readonly KeyPermission[]): Access {
  const out: Access = {};
  for (const permission of permissions) {
    const [scope, level] = permission.split(':') as [string, string];
    const granted: AccessLevel = level === 'access' ? 'admin' : (level as AccessLevel);
    const fns: PlatformFunction[] = scope === 'buyer' ? ['buyer'] : ['buyer', 'seller'];
    for (const fn of fns) out[fn] = higher(out[fn], granted);
  }
  return out;
}

/** The intersection of two accesses (a key's names capped by its owner's role). */
export function intersect(a: Access, b: Access): Access {
  const out: Access = {};
  for (const fn of ['buyer', 'seller'] as const) {
    const level = lower(a[fn], b[fn]);
    if (level !== undefined) out[fn] = level;
  }
  return out;
}

/** The permission names a new user API key may carry: `platform:access` only (spec: no selector). */
export const NEW_KEY_PERMISSIONS: readonly KeyPermission[] = ['platform:access'];
