// find, fuzzy search and content search over a directory (reference sandbox-api.md §1.2). Pure
// functions of (root, options); the routes parse queries into these options.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { ContentSearchResponse, FindResponse, FuzzySearchResponse } from '@tarmac/contract';
import { badRequest } from '../http/errors.js';
import { fuzzyScore } from './fuzzy.js';
import { globToRegExp, matchesAny, walk, type WalkOptions } from './walk.js';

export async function assertDirectory(path: string): Promise<void> {
  const st = await stat(path).catch(() => undefined);
  if (!st?.isDirectory()) throw badRequest(`not a directory: ${path}`);
}

export interface FindOptions extends WalkOptions {
  type: 'file' | 'directory';
  patterns: string[];
  /** 0 = all (capped at 1000 by the caller). */
  maxResults: number;
}

export async function find(root: string, o: FindOptions): Promise<FindResponse> {
  const globs = o.patterns.map(globToRegExp);
  const matches: FindResponse['matches'] = [];
  for await (const e of walk(root, o)) {
    if (e.type !== o.type || !matchesAny(e.name, globs)) continue;
    matches.push({ path: e.path, type: e.type });
    if (o.maxResults > 0 && matches.length >= o.maxResults) break;
  }
  return { matches, total: matches.length };
}

export interface FuzzyOptions extends WalkOptions {
  query: string;
  patterns: string[];
  maxResults: number;
}

/** Every file and directory under root scored against `query`; best first, ties → shorter path. */
export async function fuzzySearch(root: string, o: FuzzyOptions): Promise<FuzzySearchResponse> {
  const globs = o.patterns.map(globToRegExp);
  const matches: FuzzySearchResponse['matches'] = [];
  for await (const e of walk(root, o)) {
    if (!matchesAny(e.name, globs)) continue;
    const score = fuzzyScore(o.query, e.path.slice(root.length + 1));
    if (score !== undefined) matches.push({ path: e.path, score, type: e.type });
  }
  matches.sort((a, b) => b.score - a.score || a.path.length - b.path.length || (a.path < b.path ? -1 : 1));
  const limited = o.maxResults > 0 ? matches.slice(0, o.maxResults) : matches;
  return { matches: limited, total: limited.length };
}

export interface ContentSearchOptions {
  query: string;
  caseSensitive: boolean;
  maxResults: number;
  filePattern: string | undefined;
  excludeDirs: string[];
}

const MAX_FILE = 10 * 1024 * 1024;

/** Plain substring match per line, 1-based line/column; binary files (a NUL byte) are skipped. */
export async function contentSearch(root: string, o: ContentSearchOptions): Promise<ContentSearchResponse> {
  const glob = o.filePattern ? [globToRegExp(o.filePattern)] : [];
  const needle = o.caseSensitive ? o.query : o.query.toLowerCase();
  const matches: ContentSearchResponse['matches'] = [];
  outer: for await (const e of walk(root, { excludeDirs: o.excludeDirs, excludeHidden: true })) {
    if (e.type !== 'file' || !matchesAny(e.name, glob)) continue;
    const st = await stat(e.path).catch(() => undefined);
    if (!st?.isFile() || st.size > MAX_FILE) continue;
    const lines = createInterface({ input: createReadStream(e.path, 'utf8'), crlfDelay: Infinity });
    let n = 0;
    for await (const line of lines) {
      n++;
      if (line.includes('\0')) break;
      const hay = o.caseSensitive ? line : line.toLowerCase();
      const col = hay.indexOf(needle);
      if (col < 0) continue;
      matches.push({
        path: e.path,
        line: n,
        column: col + 1,
        text: line.length > 500 ? line.slice(0, 500) : line,
      });
      if (o.maxResults > 0 && matches.length >= o.maxResults) {
        lines.close();
        break outer;
      }
    }
  }
  return { query: o.query, matches, total: matches.length };
}
