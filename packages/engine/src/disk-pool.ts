// Pre-formatted sandbox disks (sandbox-disk.ts), so mkfs.ext4 is off the create path: a few
// sparse ext4 images of the default size wait under <home>/disk-pool/; a create takes one with a
// rename (atomic: two engines on one home never take the same) and the pool is topped up in the
// background, for the engine's default size only. An empty pool only costs the create its own mkfs. Images are plain files (~2 MB of
// metadata each, nothing mounted), so a crash or a removed home leaves nothing to clean up.
import { closeSync, ftruncateSync, mkdirSync, openSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { CommandRunner } from './runner.js';

/** mkfs.ext4 for a sandbox disk: no journal, no reserved blocks, inode tables initialised lazily. */
export const MKFS_ARGS = ['-q', '-F', '-m', '0', '-O', '^has_journal', '-E', 'nodiscard,lazy_itable_init=1'];

export class DiskPool {
  private filling: Promise<void> | undefined;

  constructor(
    private readonly dir: string,
    private readonly runner: CommandRunner,
    /** Images kept ready per size. */
    private readonly depth = 2,
  ) {}

  /** Moves a ready image of sizeMB to `dest`; false when none is ready. */
  take(sizeMB: number, dest: string): boolean {
    let taken = false;
    for (const name of this.ready(sizeMB)) {
      try {
        renameSync(join(this.dir, name), dest);
        taken = true;
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err; // else taken meanwhile
      }
    }
    return taken;
  }

  /**
   * Starts topping the pool up to `depth` images of sizeMB, unless a fill is running. Called once
   * a sandbox is ready (LocalEngine.waitReady), so its mkfs does not compete with a start.
   */
  fill(sizeMB: number): void {
    this.filling ??= this.fillNow(sizeMB)
      .catch(() => undefined) // best effort: a create formats its own disk when the pool is empty
      .finally(() => (this.filling = undefined));
  }

  /** Resolves when the current fill (if any) is done (tests). */
  async idle(): Promise<void> {
    await this.filling;
  }

  private async fillNow(sizeMB: number): Promise<void> {
    mkdirSync(this.dir, { recursive: true });
    while (this.ready(sizeMB).length < this.depth) {
      const tmp = join(this.dir, `.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`);
      try {
        const fd = openSync(tmp, 'wx');
        try {
          ftruncateSync(fd, sizeMB * 1024 * 1024);
        } finally {
          closeSync(fd);
        }
        await this.runner.run('mkfs.ext4', [...MKFS_ARGS, tmp]);
        renameSync(tmp, join(this.dir, `${sizeMB}-${Math.random().toString(36).slice(2)}.img`));
      } finally {
        rmSync(tmp, { force: true });
      }
    }
  }

  private ready(sizeMB: number): string[] {
    try {
      return readdirSync(this.dir).filter((n) => n.startsWith(`${sizeMB}-`) && n.endsWith('.img'));
    } catch {
      return [];
    }
  }
}
