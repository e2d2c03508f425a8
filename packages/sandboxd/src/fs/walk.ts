// Directory walking and basename globs shared by find, fuzzy search and content search
// (reference sandbox-api.md §1.2: default excludeDirs, excludeHidden).
import { opendir } from 'node:fs/promises';
import { join } from 'node:path';

export const DEFAULT_EXCLUDE_DIRS = [
  'node_modules',
  'vendor',
  '.git',
  'dist',
  'build',
  'target',
  '__pycache__',
  '.venv',
  '.next',
  'coverage',
];

export interface WalkOptions {
  excludeDirs: readonly string[];
  excludeHidden: boolean;
}

export interface WalkEntry {
  path: string;
  name: string;
  type: 'file' | 'directory';
}

/** Depth-first, sorted by name within a directory; never follows symlinked directories. */
export async function* walk(root: string, opts: WalkOptions): AsyncGenerator<WalkEntry> {
  const exclude = new Set(opts.excludeDirs);
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop() as string;
    let handle;
    try {
      handle = await opendir(dir);
    } catch {
      continue; // unreadable directory: skip, like find(1) with errors suppressed
    }
    const entries = [];
    for await (const e of handle) entries.push(e);
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirs: string[] = [];
    for (const e of entries) {
      if (opts.excludeHidden && e.name.startsWith('.')) continue;
      const path = join(dir, e.name);
      if (e.isDirectory()) {
        if (exclude.has(e.name)) continue;
        yield { path, name: e.name, type: 'directory' };
        subdirs.push(path);
      } else if (e.isFile() || e.isSymbolicLink()) {
        yield { path, name: e.name, type: 'file' };
      }
    }
    for (const d of subdirs.reverse()) stack.push(d); // popped in name order
  }
}

/** A basename glob (`*`, `?`, `[abc]`, `{a,b}`) → RegExp. */
export function globToRegExp(glob: string): RegExp {
  let re = '';
  let inBraces = false;
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i] as string;
    if (ch === '*') re += '.*';
    else if (ch === '?') re += '.';
    else if (ch === '[') {
      const close = glob.indexOf(']', i + 1);
      if (close < 0) re += '\\[';
      else {
        re +=
          '[' +
          glob
            .slice(i + 1, close)
            .replace(/^!/, '^')
            .replace(/\\/g, '\\\\') +
          ']';
        i = close;
      }
    } else if (ch === '{') {
      inBraces = true;
      re += '(?:';
    } else if (ch === '}' && inBraces) {
      inBraces = false;
      re += ')';
    } else if (ch === ',' && inBraces) re += '|';
    else re += ch.replace(/[.+^$()|\\/]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

export function matchesAny(name: string, globs: readonly RegExp[]): boolean {
  return globs.length === 0 || globs.some((g) => g.test(name));
}
