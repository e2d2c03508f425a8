import { z } from 'zod';

/** Management list parameters (spec "Pagination"; reference §0 "Pagination"). */
export const SORT_ORDERS = ['createdAt:desc', 'createdAt:asc', 'name:asc', 'name:desc'] as const;
export type SortOrder = (typeof SORT_ORDERS)[number];
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;
/** `q` shorter than this is ignored (reference §0). */
export const MIN_SEARCH_LENGTH = 2;

export const listQuerySchema = z.object({
  cursor: z.string().max(2048).optional().meta({
    description: 'Opaque cursor from `meta.nextCursor`; valid only for the same query and for 24 hours.',
  }),
  limit: z.coerce
    .number()
    .int('must be an integer')
    .min(1, 'must be at least 1')
    .max(MAX_PAGE_SIZE, `must be at most ${MAX_PAGE_SIZE}`)
    .default(DEFAULT_PAGE_SIZE),
  sort: z.enum(SORT_ORDERS, { error: `must be one of ${SORT_ORDERS.join(', ')}` }).default('createdAt:desc'),
  q: z.string().max(200, 'must be at most 200 characters').optional().meta({
    description: 'Case-insensitive substring over name, displayName and labels; ignored under 2 characters.',
  }),
});
export type ListQuery = z.infer<typeof listQuerySchema>;

/**
 * The legacy (before 2026-04-28) `limit`/`offset` window of a list (reference §1.4 job executions:
 * limit default 20, maximum 100). Offsets are bounded so a window never walks an unbounded list.
 */
export const MAX_LEGACY_OFFSET = 100_000;
export function offsetQuerySchema(o: { defaultLimit: number; maxLimit: number }) {
  return z.object({
    limit: z.coerce
      .number({ error: 'must be an integer' })
      .int('must be an integer')
      .min(1, 'must be at least 1')
      .max(o.maxLimit, `must be at most ${o.maxLimit}`)
      .default(o.defaultLimit),
    offset: z.coerce
      .number({ error: 'must be an integer' })
      .int('must be an integer')
      .min(0, 'must be at least 0')
      .max(MAX_LEGACY_OFFSET, `must be at most ${MAX_LEGACY_OFFSET}`)
      .default(0),
  });
}
export type OffsetQuery = z.infer<ReturnType<typeof offsetQuerySchema>>;

export const paginationMetaSchema = z
  .object({
    hasMore: z.boolean(),
    nextCursor: z.string().meta({ description: 'Empty when there are no more pages.' }),
    total: z.number().int().meta({ description: 'All items in the workspace, ignoring filters.' }),
  })
  .meta({ id: 'PaginationMeta' });
export type PaginationMeta = z.infer<typeof paginationMetaSchema>;

/** `{data, meta}` under 2026-04-28 and later; a bare array before (spec "Pagination"). */
export function pageEnvelopeSchema<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), meta: paginationMetaSchema });
}
export type PageEnvelope<T> = { data: T[]; meta: PaginationMeta };
