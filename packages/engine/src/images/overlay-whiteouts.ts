// Turns an unpacked layer's OCI whiteouts into overlayfs's own, so the layer can be an overlay
// lower of its own (layer-store.ts) instead of being flattened into one rootfs with the layers
// below it. umoci unpacks one layer into an empty dir: it applies `.wh.<name>` (nothing there to
// remove) and leaves no trace of it, so the vetted member list (layer-check.ts) says where the
// whiteouts were. overlayfs hides a lower entry behind a 0:0 character device of its name; an
// opaque dir (`.wh..wh..opq`) becomes one such device per name the lowers hold in that dir (the
// same effect as the trusted.overlay.opaque xattr, which Node cannot set and no package we
// depend on can). Nothing here follows a symlink: every path is walked a component at a time
// with lstat, in the layer dir (ours, fresh) and in the lowers (read only).
import { chmodSync, lchownSync, lstatSync, mkdirSync, readdirSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import type { CommandRunner } from '../runner.js';

/** `dir` under `root` when every component is a real directory (not a link), else undefined. */
export function realDir(root: string, dir: string): Stats | undefined {
  let at = root;
  let st: Stats | undefined;
  for (const part of ['', ...dir.split('/').filter(Boolean)]) {
    at = part ? join(at, part) : at;
    try {
      st = lstatSync(at);
    } catch {
      return undefined;
    }
    if (!st.isDirectory()) return undefined;
  }
  return st;
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes `dir` a real directory of the layer (when a whiteout's dir has no entry of its own),
 * with the mode and owner the topmost lower gives it, so the merged view keeps them. Undefined
 * when no lower has it (nothing to hide) or a component of it is not a directory in the layer.
 */
function ensureDir(rootfs: string, dir: string, lowersTopFirst: readonly string[]): string | undefined {
  if (realDir(rootfs, dir)) return join(rootfs, dir);
  const parts = dir.split('/').filter(Boolean);
  let at = rootfs;
  for (let i = 0; i < parts.length; i++) {
    const rel = parts.slice(0, i + 1).join('/');
    at = join(at, parts[i]!);
    if (realDir(rootfs, rel)) continue;
    if (exists(at)) return undefined; // a file or link of this layer: the lowers are hidden anyway
    const lower = lowersTopFirst.map((l) => realDir(l, rel)).find((s) => s !== undefined);
    if (!lower) return undefined;
    mkdirSync(at);
    lchownSync(at, lower.uid, lower.gid);
    chmodSync(at, lower.mode & 0o7777);
  }
  return at;
}

/** Names in `dir` of any lower (where it is a real directory there). */
function lowerNames(dir: string, lowersTopFirst: readonly string[]): Set<string> {
  const names = new Set<string>();
  for (const l of lowersTopFirst) {
    if (!realDir(l, dir)) continue;
    for (const n of readdirSync(join(l, dir))) names.add(n);
  }
  return names;
}

/**
 * Applies `whiteouts` (member paths from the layer check) to `rootfs`, the layer unpacked alone.
 * `lowersBottomFirst` are the unpacked layers below it. Returns how many devices were made.
 */
export async function overlayWhiteouts(
  runner: CommandRunner,
  rootfs: string,
  whiteouts: readonly string[],
  lowersBottomFirst: readonly string[],
): Promise<number> {
  const lowers = [...lowersBottomFirst].reverse();
  const targets: string[] = [];
  for (const w of whiteouts) {
    const slash = w.lastIndexOf('/');
    const dir = slash < 0 ? '' : w.slice(0, slash);
    const base = w.slice(slash + 1);
    if (base === '.wh..wh..opq') {
      const names = lowerNames(dir, lowers);
      if (names.size === 0) continue;
      const at = ensureDir(rootfs, dir, lowers);
      if (at) for (const n of names) if (!exists(join(at, n))) targets.push(join(at, n));
      continue;
    }
    const name = base.slice('.wh.'.length);
    // A name the lowers do not hold needs no device (and `.wh..wh.*` other than opq is reserved).
    if (
      !name ||
      name.startsWith('.wh.') ||
      !lowers.some((l) => realDir(l, dir) && exists(join(l, dir, name)))
    )
      continue;
    const at = ensureDir(rootfs, dir, lowers);
    // Re-created in this layer (or its dir is no dir here): the layer's own entry hides the lowers.
    if (at && !exists(join(at, name))) targets.push(join(at, name));
  }
  for (const t of new Set(targets)) await runner.run('mknod', ['-m', '0', '--', t, 'c', '0', '0']);
  return targets.length;
}
