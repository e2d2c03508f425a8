import type { PaginationMeta } from '@tarmac/contract';

export interface Page<T> {
  data: T[];
  meta: PaginationMeta;
}

/** Normalises both list shapes: `{data, meta}` (2026-04-28+) and a bare array (older versions). */
export function toPage<T>(body: unknown): Page<T> {
  if (Array.isArray(body)) {
    return { data: body as T[], meta: { hasMore: false, nextCursor: '', total: body.length } };
  }
  const envelope = body as Partial<Page<T>> | undefined;
  const data = envelope?.data ?? [];
  return { data, meta: envelope?.meta ?? { hasMore: false, nextCursor: '', total: data.length } };
}

/**
 * A lazily fetched list: `for await (const item of list)` walks every page following
 * `meta.nextCursor` until `hasMore` is false; `all()` collects; `firstPage()` fetches one page.
 */
export class PageIterator<T> implements AsyncIterable<T> {
  constructor(private readonly fetchPage: (cursor: string | undefined) => Promise<Page<T>>) {}

  firstPage(): Promise<Page<T>> {
    return this.fetchPage(undefined);
  }

  async *pages(): AsyncGenerator<Page<T>> {
    let cursor: string | undefined;
    for (;;) {
      const page = await this.fetchPage(cursor);
      yield page;
      // A server bug that repeats a cursor would loop forever; stop instead.
      if (!page.meta.hasMore || !page.meta.nextCursor || page.meta.nextCursor === cursor) return;
      cursor = page.meta.nextCursor;
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** The same list with each item transformed (e.g. records into `Sandbox` objects). */
  map<U>(transform: (item: T) => U): PageIterator<U> {
    return new PageIterator(async (cursor) => {
      const page = await this.fetchPage(cursor);
      return { data: page.data.map(transform), meta: page.meta };
    });
  }

  async all(): Promise<T[]> {
    const items: T[] = [];
    for await (const item of this) items.push(item);
    return items;
  }
}
