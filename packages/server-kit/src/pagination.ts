import { MIN_SEARCH_LENGTH, type ListQuery, type SortOrder } from '@tarmac/contract';
import { CursorCodec, type CursorPosition } from './cursor.js';

/** What a list handler is asked for: one keyset page. */
export interface PageRequest {
  sort: SortOrder;
  limit: number;
  after?: CursorPosition;
  q?: string;
}

/** What a list handler returns; the runner turns `last` into `meta.nextCursor`. */
export interface PageResult<T> {
  items: T[];
  hasMore: boolean;
  last?: CursorPosition;
  total: number;
}

/** Largest page fetched per round when a pre-2026-04-28 client gets the whole list as a bare array. */
export const LEGACY_FETCH_SIZE = 200;

/** Query keys that do not change which items a query selects, so a cursor is not bound to them. */
const UNBOUND_KEYS = new Set(['cursor', 'limit', 'workspace', 'show_secrets']);

export function cursorBinding(input: {
  scope: string;
  operationId: string;
  params: Record<string, unknown>;
  query: Record<string, unknown>;
}): string {
  const filters = Object.fromEntries(Object.entries(input.query).filter(([key]) => !UNBOUND_KEYS.has(key)));
  return CursorCodec.binding({
    scope: input.scope,
    route: input.operationId,
    params: input.params,
    filters: { ...filters, q: effectiveSearch(filters.q as string | undefined) ?? null },
  });
}

export function effectiveSearch(q: string | undefined): string | undefined {
  const trimmed = q?.trim();
  return trimmed && trimmed.length >= MIN_SEARCH_LENGTH ? trimmed : undefined;
}

export function pageRequestOf(query: ListQuery, after: CursorPosition | undefined): PageRequest {
  const q = effectiveSearch(query.q);
  return { sort: query.sort, limit: query.limit, ...(after ? { after } : {}), ...(q ? { q } : {}) };
}
