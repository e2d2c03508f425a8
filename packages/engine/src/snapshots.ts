// Filesystem snapshots of sandboxes (issue 14 item 6). A snapshot is a copy of the sandbox's
// overlay upper dir (its own writes on top of the image; sandbox-disk.ts) with the contents of its
// volumes laid in at their mount paths, taken while the sandbox's cgroup is frozen so no process
// writes during the copy. Process memory is NOT part of it: a fork starts fresh processes on the
// copied files. `cp -a` keeps owners (the sandbox's shifted ids, userns.ts), modes, xattrs and the
// overlay's whiteouts, so deleted image files stay deleted in a fork.
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
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
    const partial = join(this.dir, `.${id}.partial`);
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(join(partial, 'upper'), { recursive: true });
    try {
      await this.runner.run('cp', ['-a', '--', `${source.upper}/.`, join(partial, 'upper')]);
      for (const v of source.volumes) {
        if (!v.mountPath.startsWith('/') || v.mountPath.split('/').includes('..')) {
          throw new EngineError(`invalid mountPath ${v.mountPath}`);
        }
        const target = join(partial, 'upper', v.mountPath);
        mkdirSync(target, { recursive: true });
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
