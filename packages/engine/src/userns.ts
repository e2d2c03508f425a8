// Sandboxes run in a user namespace (issue 19 item 9): uid/gid 0..size-1 inside are
// base..base+size-1 on the host, so root in a sandbox is an unprivileged uid outside, and a setuid
// file it leaves in its upper dir or a volume is setuid to that uid, never to host root.
//
// One range per host, shared by all sandboxes (they are already apart in pid, mount, ipc and net
// namespaces; a range per sandbox would need an ownership-shifted copy of every image per sandbox).
// runc 1.1 on Debian 12 cannot make idmapped bind mounts and util-linux 2.38 cannot make idmapped
// mounts at all, so images' layers (owned by host root) are used through an ownership-shifted copy,
// made once per layer and kept next to the image store (`<imageDir>.userns-<base>/`).
import { createHash } from 'node:crypto';
import {
  existsSync,
  lchownSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  chmodSync,
  type Stats,
} from 'node:fs';
import { basename, join } from 'node:path';
import type { CommandRunner } from './runner.js';

export interface IdRange {
  /** Host uid (and gid) that root in the sandbox is. */
  base: number;
  /** How many ids are mapped (0..size-1 inside). */
  size: number;
}

/**
 * Default range: far above the host's own users and the 100000 + 65536·n ranges that
 * /etc/subuid hands out, so no host account or rootless container shares these ids.
 */
export const DEFAULT_ID_RANGE: IdRange = { base: 1_000_000_000, size: 65_536 };

export function idMappings(range: IdRange): { containerID: number; hostID: number; size: number }[] {
  return [{ containerID: 0, hostID: range.base, size: range.size }];
}

/** Host id of an id inside the sandbox (ids outside the range stay as they are: unmapped there). */
export function shiftId(id: number, range: IdRange): number {
  return id < range.size ? id + range.base : id;
}

/**
 * Gives `path` (a file or dir the sandbox must own, e.g. its upper dir or a volume's root) to root
 * inside the sandbox.
 */
export function chownToSandboxRoot(path: string, range: IdRange): void {
  lchownSync(path, range.base, range.base);
}

/**
 * Re-owns a tree in place by the range's offset: every entry whose owner is in 0..size-1 moves to
 * base+owner. Entries already in the range are left as they are, so a crash part-way and a repeat
 * are harmless. chown(2) clears setuid/setgid, so their mode is put back (the bit then means "of a
 * sandbox uid", which is the point). Children before parents, so a shifted root means a finished
 * walk.
 */
export function shiftTree(root: string, range: IdRange): number {
  let count = 0;
  const visit = (path: string, st: Stats) => {
    // Children first, the root last: a root that is shifted means the whole tree is.
    if (st.isDirectory()) {
      for (const name of readdirSync(path)) {
        const child = join(path, name);
        visit(child, lstatSync(child));
      }
    }
    const uid = st.uid < range.size ? st.uid + range.base : st.uid;
    const gid = st.gid < range.size ? st.gid + range.base : st.gid;
    if (uid !== st.uid || gid !== st.gid) {
      lchownSync(path, uid, gid);
      if (st.isFile() && (st.mode & 0o6000) !== 0) chmodSync(path, st.mode & 0o7777);
      count++;
    }
  };
  visit(root, lstatSync(root));
  return count;
}

/**
 * Ownership-shifted copies of image layers: `layer(dir)` returns a copy of `dir` whose files belong
 * to the sandbox's ids, making it on first use (`cp -a`, then `shiftTree`; 345 MB base image:
 * 28 s + 0.9 s on the loaded 2-core host, once per host). Copies are keyed by the source dir's
 * path, inode and mtime, so a replaced image gets a new copy. Old copies are not collected (running
 * sandboxes may still use them as lowers, like the image store's `.old-*` dirs). Built in a temp
 * dir and renamed into place: concurrent engines never see half a copy, and the loser of a race
 * uses the winner's.
 */
export class ShiftedLayers {
  private readonly inFlight = new Map<string, Promise<string>>();

  constructor(
    private readonly dir: string,
    private readonly range: IdRange,
    private readonly runner: CommandRunner,
  ) {}

  /** Shifted copies of `layerDirs` (same order). */
  layers(layerDirs: readonly string[]): Promise<string[]> {
    return Promise.all(layerDirs.map((d) => this.layer(d)));
  }

  layer(source: string): Promise<string> {
    const st = statSync(source);
    const key = createHash('sha256')
      .update(`${source}:${st.ino}:${st.mtimeMs}:${this.range.base}:${this.range.size}`)
      .digest('hex')
      .slice(0, 24);
    const dest = join(this.dir, key);
    if (existsSync(join(dest, 'rootfs'))) return Promise.resolve(join(dest, 'rootfs'));
    let p = this.inFlight.get(key);
    if (!p) {
      p = this.make(source, dest).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, p);
    }
    return p;
  }

  private async make(source: string, dest: string): Promise<string> {
    mkdirSync(this.dir, { recursive: true });
    const tmp = `${dest}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
    try {
      mkdirSync(tmp);
      await this.runner.run('cp', ['-a', '--', source, join(tmp, 'rootfs')]);
      shiftTree(join(tmp, 'rootfs'), this.range);
      writeFileSync(join(tmp, 'source.json'), JSON.stringify({ source, ino: statSync(source).ino }));
      try {
        renameSync(tmp, dest);
      } catch (err) {
        if (!existsSync(join(dest, 'rootfs'))) throw err; // else another engine finished first
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
    return join(dest, 'rootfs');
  }
}

/** Where shifted copies of an image store's layers live: beside it, so homes sharing it share them. */
export function shiftedLayersDir(imageDir: string, range: IdRange): string {
  return join(imageDir, '..', `${basename(imageDir)}.userns-${range.base}`);
}
