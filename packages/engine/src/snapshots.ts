// Filesystem snapshots of sandboxes (issue 14 item 6). A snapshot is a copy of the sandbox's
// overlay upper dir (its own writes on top of the image; sandbox-disk.ts) with the contents of its
// volumes laid in at their mount paths, taken while the sandbox's cgroup is frozen so no process
// writes during the copy. Process memory is NOT part of it: a fork starts fresh processes on the
// copied files. `cp -a` keeps owners (the sandbox's shifted ids, userns.ts), modes, xattrs and the
// overlay's whiteouts, so deleted image files stay deleted in a fork.
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { join } from 'node:path';
import { EngineError } from './errors.js';
import type { CommandRunner } from './runner.js';

const SNAPSHOT_ID = /^[a-z0-9][a-z0-9-]{0,62}$/;

export interface SnapshotSource {
  /** The sandbox's overlay upper dir. */
  upper: string;
  /** Volume contents (host dirs) and where the sandbox mounts them. */
  volumes: { path: string; mountPath: string }[];
}

export class SnapshotStore {
  constructor(
    private readonly dir: string,
    private readonly runner: CommandRunner,
  ) {}

  /** Copies `source` into the snapshot `id`; the caller holds the sandbox frozen. Returns its bytes. */
  async take(id: string, source: SnapshotSource): Promise<number> {
    this.check(id);
    const final = join(this.dir, id);
    if (existsSync(final)) throw new EngineError(`snapshot ${id} exists`);
    // Host root only: the copies keep the sandbox's setuid bits and owners, and unlike the sandbox's
    // disk (mounted nosuid) this is the host's filesystem.
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    chmodSync(this.dir, 0o700);
    const partial = join(this.dir, `.${id}.partial`);
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(join(partial, 'upper'), { recursive: true });
    try {
      await this.runner.run('cp', ['-a', '--', `${source.upper}/.`, join(partial, 'upper')]);
      // Shallowest first, so a volume mounted inside another one lands over its copy.
      const volumes = [...source.volumes].sort((a, b) => depth(a.mountPath) - depth(b.mountPath));
      for (const v of volumes) {
        const target = freshDir(join(partial, 'upper'), v.mountPath);
        await this.runner.run('cp', ['-a', '--', `${v.path}/.`, target]);
      }
      const du = await this.runner.run('du', ['-sb', '--', partial]);
      renameSync(partial, final);
      return Number(du.stdout.split(/\s/)[0] ?? 0);
    } catch (err) {
      rmSync(partial, { recursive: true, force: true });
      throw err;
    }
  }

  /** The upper dir a fork starts from; throws when the snapshot is gone. */
  upperOf(id: string): string {
    this.check(id);
    const upper = join(this.dir, id, 'upper');
    if (!existsSync(upper)) throw new EngineError(`snapshot ${id} does not exist (deleted?)`);
    return upper;
  }

  /** Ids of the finished snapshots on disk (copies in progress are hidden `.partial` dirs). */
  ids(): string[] {
    if (!existsSync(this.dir)) return [];
    return readdirSync(this.dir).filter((d) => SNAPSHOT_ID.test(d));
  }

  remove(id: string): void {
    this.check(id);
    rmSync(join(this.dir, id), { recursive: true, force: true });
  }

  private check(id: string): void {
    if (!SNAPSHOT_ID.test(id)) throw new EngineError(`invalid snapshot id ${id}`);
  }
}

const depth = (path: string) => path.split('/').filter(Boolean).length;

/**
 * An EMPTY real directory at `mountPath` under `root`, made without following any symlink: the
 * copied upper dir is the sandbox's to shape, and a symlink it left where a mount path's ancestor
 * should be (`/data` -> `/etc`) must not send host-root writes out of the snapshot. A non-directory
 * on the way is removed (the live sandbox's mount hid it anyway), and so is whatever the upper held
 * at the mount path itself (hidden by the volume): `cp` then copies into a directory with no
 * entries, so it never writes through a link either. Ancestors made here get the root's owner.
 */
function freshDir(root: string, mountPath: string): string {
  const parts = mountPath.split('/').filter(Boolean);
  if (!mountPath.startsWith('/') || parts.length === 0 || parts.some((p) => p === '..' || p === '.')) {
    throw new EngineError(`invalid mountPath ${mountPath}`);
  }
  const owner = lstatSync(root);
  let current = root;
  for (const [i, part] of parts.entries()) {
    current = join(current, part);
    const st = lstatSync(current, { throwIfNoEntry: false });
    const last = i === parts.length - 1;
    if (st && (last || !st.isDirectory())) rmSync(current, { recursive: true, force: true });
    if (!st || last || !st.isDirectory()) {
      mkdirSync(current);
      chownSync(current, owner.uid, owner.gid);
    }
  }
  return current;
}
