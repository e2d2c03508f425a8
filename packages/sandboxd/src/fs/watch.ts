// GET /watch/filesystem/{path} (reference sandbox-api.md §1.2 "Watch stream"): one JSON line per
// event `{op, name, path, error:null}` with fsnotify-style ops (CREATE, WRITE, REMOVE, CHMOD),
// `path` the parent directory; a path ending `/**` watches recursively; `ignore=a,b` drops events
// whose full path contains any of the substrings; `[keepalive]` lines every interval.
import { existsSync, statSync, watch, type FSWatcher } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Hono } from 'hono';
import type { WatchEvent } from '@tarmac/contract';
import { queryList } from '../http/body.js';
import { badRequest, fsError } from '../http/errors.js';
import { streamHeaders, type StreamBudget } from '../http/stream.js';
import { rawRemainder, resolveRequestPath, type PathContext } from './paths.js';

export interface Watcher {
  close(): void;
}

/**
 * Directories watched at once, across all streams: each is an inotify watch and an FSWatcher, and
 * a recursive watch of `/` would otherwise take one per directory of the whole filesystem. Past
 * the cap, further directories are not watched (issue 19 item 6).
 */
export class WatchBudget {
  used = 0;
  constructor(readonly max: number) {}
}

/** Watches `root` (and, when recursive, every directory below it, including new ones). */
export function watchTree(
  root: string,
  recursive: boolean,
  onEvent: (e: WatchEvent) => void,
  budget: WatchBudget = new WatchBudget(Infinity),
): Watcher {
  const watchers = new Map<string, FSWatcher>();
  let closed = false;
  const forget = (dir: string): void => {
    const w = watchers.get(dir);
    if (!w) return;
    w.close();
    watchers.delete(dir);
    budget.used--;
  };
  const add = (dir: string): void => {
    if (closed || watchers.has(dir) || budget.used >= budget.max) return;
    let w: FSWatcher;
    try {
      w = watch(dir, { persistent: false }, (type, file) => {
        if (file === null) return;
        const name = String(file);
        const full = join(dir, name);
        const exists = existsSync(full);
        const op = type === 'change' ? 'WRITE' : exists ? 'CREATE' : 'REMOVE';
        onEvent({ op, name, path: dir, error: null });
        if (recursive && op === 'CREATE') {
          try {
            if (statSync(full).isDirectory()) void addTree(full);
          } catch {
            /* raced away */
          }
        }
        if (op === 'REMOVE') forget(full);
      });
    } catch {
      return;
    }
    w.on('error', () => forget(dir));
    watchers.set(dir, w);
    budget.used++;
  };
  const addTree = async (dir: string): Promise<void> => {
    add(dir);
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of entries) if (e.isDirectory()) await addTree(join(dir, e.name));
  };
  if (recursive) void addTree(root);
  else add(root);
  return {
    close() {
      closed = true;
      for (const dir of [...watchers.keys()]) forget(dir);
    },
  };
}

export function watchRoutes(
  app: Hono,
  ctx: PathContext,
  keepaliveMs: number,
  streams: StreamBudget,
  dirs: WatchBudget,
): void {
  app.get('/watch/filesystem/*', (c) => {
    let raw = rawRemainder(c.req.url, '/watch/filesystem');
    const recursive = /\/\*\*$/.test(raw) || /%2F\*\*$/i.test(raw);
    if (recursive) raw = raw.replace(/(\/|%2F)\*\*$/i, '') || '/';
    const root = resolveRequestPath(raw, ctx);
    let isDir: boolean;
    try {
      isDir = statSync(root).isDirectory();
    } catch (err) {
      throw fsError(err, root);
    }
    if (!isDir) throw badRequest(`not a directory: ${root}`);
    const ignore = queryList(c.req.query('ignore')) ?? [];
    streams.check();
    const body = streams.stream((sink) => {
      const w = watchTree(
        root,
        recursive,
        (e) => {
          if (ignore.some((i) => join(e.path, e.name).includes(i))) return;
          sink.push(JSON.stringify(e) + '\n');
        },
        dirs,
      );
      const timer = setInterval(() => sink.push('[keepalive]\n'), keepaliveMs);
      return () => {
        clearInterval(timer);
        w.close();
      };
    });
    return new Response(body, { headers: streamHeaders('text/plain; charset=utf-8') });
  });
}
