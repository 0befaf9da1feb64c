import { platformError } from './errors.ts';

/**
 * Offset pagination: `limit` items starting at `offset` (both integers). Services expose it with their own
 * parameter names (`page[size]`/`page[number]`, `limit`/`offset`, `page`/`per_page`) and map to this.
 */
export interface PageRequest {
  limit: number;
  offset: number;
}

/** Page metadata for a response: `total` items overall, and whether more follow this page. */
export interface PageInfo {
  limit: number;
  offset: number;
  total: number;
  hasMore: boolean;
}

/**
 * Validates and defaults paging input.
 * @throws ApiError 400 `invalid_pagination` when `limit` is outside 1..maxLimit or `offset` is negative or not an
 * integer.
 */
export function parsePage(
  input: { limit?: number | string | undefined; offset?: number | string | undefined },
  options: { defaultLimit?: number; maxLimit?: number } = {},
): PageRequest {
  const defaultLimit = options.defaultLimit ?? 20;
  const maxLimit = options.maxLimit ?? 100;
  const limit = input.limit === undefined || input.limit === '' ? defaultLimit : Number(input.limit);
  const offset = input.offset === undefined || input.offset === '' ? 0 : Number(input.offset);
  if (!Number.isInteger(limit) || limit < 1 || limit > maxLimit) {
    throw platformError('invalid_pagination', `limit must be an integer from 1 to ${maxLimit}.`);
  }
  if (!Number.isInteger(offset) || offset < 0) {
    throw platformError('invalid_pagination', 'offset must be a non-negative integer.');
  }
  return { limit, offset };
}

/** Builds {@link PageInfo} for a page of `returned` items out of `total`. */
export function pageInfo(page: PageRequest, total: number): PageInfo {
  return { limit: page.limit, offset: page.offset, total, hasMore: page.offset + page.limit < total };
}

/** Fetch `limit + 1` rows, then call this: it trims the extra row and tells whether more follow. */
export function trimPage<T>(rows: T[], limit: number): { items: T[]; hasMore: boolean } {
  return rows.length > limit
    ? { items: rows.slice(0, limit), hasMore: true }
    : { items: rows, hasMore: false };
}
