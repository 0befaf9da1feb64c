import { pageInfo, parsePage } from '../../../platform/pagination.ts';

/** The page a list route's `limit` / `offset` ask for (default 20, at most 100). */
export function pageOf(query: { limit?: number; offset?: number }) {
  return parsePage({ limit: query.limit, offset: query.offset }, { defaultLimit: 20, maxLimit: 100 });
}

/** A list answer: the items under `name`, and the page metadata. */
export function listAnswer<T>(
  name: string,
  page: { limit: number; offset: number },
  result: { items: T[]; total: number },
) {
  return { [name]: result.items, page: pageInfo(page, result.total) };
}
