// /filesystem-find, /filesystem-search and /filesystem-content-search (reference sandbox-api.md
// §1.2): query parsing, defaults and status codes; the work is in search.ts.
import type { Hono } from 'hono';
import { basename, dirname } from 'node:path';
import { queryFlag, queryInt, queryList } from '../http/body.js';
import { badRequest } from '../http/errors.js';
import { rawRemainder, resolveRequestPath, type PathContext } from './paths.js';
import { assertDirectory, contentSearch, find, fuzzySearch } from './search.js';
import { DEFAULT_EXCLUDE_DIRS } from './walk.js';

const cap = (n: number): number => (n <= 0 ? 1000 : Math.min(n, 1000));

export function searchRoutes(app: Hono, ctx: PathContext): void {
  app.get('/filesystem-find/*', async (c) => {
    const root = resolveRequestPath(rawRemainder(c.req.url, '/filesystem-find'), ctx);
    const type = c.req.query('type') ?? 'file';
    if (type !== 'file' && type !== 'directory')
      throw badRequest(`invalid type: ${type} (file or directory)`);
    await assertDirectory(root);
    return c.json(
      await find(root, {
        type,
        patterns: queryList(c.req.query('patterns')) ?? [],
        maxResults: cap(queryInt(c.req.query('maxResults'), 20, 'maxResults')),
        excludeDirs: queryList(c.req.query('excludeDirs')) ?? DEFAULT_EXCLUDE_DIRS,
        excludeHidden:
          c.req.query('excludeHidden') === undefined ? true : queryFlag(c.req.query('excludeHidden')),
      }),
    );
  });

  // Our fuzzy behaviour (ARCHITECTURE.md "Fuzzy search"): with `query`, the root is {path} and
  // the pattern is `query`; without it, {path}'s last segment is the pattern and its parent the
  // root (upstream used one segment as both, §6.8). 400 when there is no pattern at all.
  app.get('/filesystem-search/*', async (c) => {
    const raw = rawRemainder(c.req.url, '/filesystem-search');
    const query = c.req.query('query');
    let root = resolveRequestPath(raw, ctx);
    let pattern = query;
    if (pattern === undefined) {
      const trimmed = decodeURIComponent(raw).replace(/^\/+|\/+$/g, '');
      if (trimmed === '' || trimmed === '.')
        throw badRequest('a query (or a path ending in the pattern) is required');
      pattern = basename(root);
      root = dirname(root);
    }
    await assertDirectory(root);
    return c.json(
      await fuzzySearch(root, {
        query: pattern,
        patterns: queryList(c.req.query('patterns')) ?? [],
        maxResults: cap(queryInt(c.req.query('maxResults'), 20, 'maxResults')),
        excludeDirs: queryList(c.req.query('excludeDirs')) ?? DEFAULT_EXCLUDE_DIRS,
        excludeHidden:
          c.req.query('excludeHidden') === undefined ? true : queryFlag(c.req.query('excludeHidden')),
      }),
    );
  });

  app.get('/filesystem-content-search/*', async (c) => {
    const root = resolveRequestPath(rawRemainder(c.req.url, '/filesystem-content-search'), ctx);
    const query = c.req.query('query');
    if (!query) throw badRequest('query is required');
    await assertDirectory(root);
    return c.json(
      await contentSearch(root, {
        query,
        caseSensitive: queryFlag(c.req.query('caseSensitive')),
        maxResults: queryInt(c.req.query('maxResults'), 100, 'maxResults'),
        filePattern: c.req.query('filePattern') || undefined,
        excludeDirs: queryList(c.req.query('excludeDirs')) ?? DEFAULT_EXCLUDE_DIRS,
      }),
    );
  });
}
