// Path rules for every `{path}` wildcard (reference sandbox-api.md §1.1 "Path semantics", §6.1):
// a `%2F` anywhere in the raw URL makes the path absolute; otherwise one leading `/` is stripped
// and the path is relative to the working directory (`/filesystem/` alone means `.`); a leading
// `~` expands to $HOME; `//` collapses; relative paths may not escape the working directory.
import { isAbsolute, relative, resolve } from 'node:path';
import { badRequest } from '../http/errors.js';

export interface PathContext {
  workingDir: string;
  home: string;
}

/**
 * The raw (still percent-encoded) remainder of the URL path after `prefix`, e.g. for
 * `/filesystem/%2Fetc%2Fhosts?x` and prefix `/filesystem` → `/%2Fetc%2Fhosts`.
 */
export function rawRemainder(rawUrl: string, prefix: string): string {
  const pathname = rawUrl.replace(/^[a-z]+:\/\/[^/]*/i, '').split('?')[0] ?? '';
  return pathname.startsWith(prefix) ? pathname.slice(prefix.length) : pathname;
}

/** Resolves a raw `{path}` remainder to an absolute filesystem path. */
export function resolveRequestPath(raw: string, ctx: PathContext): string {
  const absolute = /%2f/i.test(raw);
  let p: string;
  try {
    p = decodeURIComponent(raw);
  } catch {
    throw badRequest('invalid path encoding');
  }
  return resolveUserPath(absolute ? p : p.replace(/^\//, ''), ctx, absolute);
}

/** Resolves a path given in a body or tool argument (absolute if it starts with `/`). */
export function resolveUserPath(p: string, ctx: PathContext, forceAbsolute = false): string {
  let path = p.replace(/\/{2,}/g, '/');
  if (path === '~' || path.startsWith('~/')) return resolve(ctx.home, '.' + path.slice(1));
  if (forceAbsolute && !path.startsWith('/')) path = '/' + path;
  if (isAbsolute(path)) return resolve(path);
  const full = resolve(ctx.workingDir, path === '' ? '.' : path);
  const rel = relative(ctx.workingDir, full);
  if (rel === '..' || rel.startsWith('../')) throw badRequest(`path escapes the working directory: ${p}`);
  return full;
}
