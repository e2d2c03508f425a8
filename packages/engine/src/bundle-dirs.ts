// Where a sandbox's secrets sit on the host: its runc bundle (config.json, whose process env a job
// task's secrets are in) and its boot env (boot-env.ts: a sandbox's or replica's envs, secret
// ones decrypted). Issue 16: secrets are "never written to disk outside the container's
// memory-backed env", so both live in <run dir>/bundles/<id> (/run/tarmac/bundles), never under
// the home, on a memory-backed file system: a run dir that is not (/run is not always a tmpfs)
// gets a tmpfs of its own mounted over bundles/. They are needed only while the container lives (a stopped sandbox is
// never started again), so a host reboot losing them loses nothing.
import { existsSync, mkdirSync, rmSync, statfsSync } from 'node:fs';
import { join } from 'node:path';
import type { CommandRunner } from './runner.js';

/** statfs(2) f_type of the memory-backed file systems (linux/magic.h). */
const TMPFS_MAGIC = 0x01021994;
const RAMFS_MAGIC = 0x858458f6;

export function isMemoryBacked(path: string): boolean {
  const type = statfsSync(path).type;
  return type === TMPFS_MAGIC || type === RAMFS_MAGIC;
}

export class BundleDirs {
  private ready: Promise<void> | undefined;

  constructor(
    /** The parent of runc's root, e.g. /run/tarmac. */
    private readonly runDir: string,
    private readonly runner: CommandRunner,
  ) {}

  get root(): string {
    return join(this.runDir, 'bundles');
  }

  /** The sandbox's bundle directory (not made; `make` makes it). */
  dir(id: string): string {
    return join(this.root, id);
  }

  /** Makes the sandbox's directory, root's only, on a memory-backed file system. */
  async make(id: string): Promise<string> {
    this.ready ??= this.prepare();
    try {
      await this.ready;
    } catch (err) {
      this.ready = undefined; // a failed mount is retried by the next create
      throw err;
    }
    const dir = this.dir(id);
    mkdirSync(dir, { mode: 0o700 });
    return dir;
  }

  /**
   * The directory holding the sandbox's config.json and boot-env.json: its own, or for a sandbox
   * made by an engine from before bundles moved here (still running), `legacy` (<home>/…/<id>).
   */
  find(id: string, legacy: { bundle: string; root: string }): { bundle: string; bootDir: string } {
    const dir = this.dir(id);
    if (existsSync(dir)) return { bundle: dir, bootDir: dir };
    return { bundle: legacy.bundle, bootDir: legacy.root };
  }

  /** Removes the sandbox's directory and what is in it (absent is fine). */
  remove(id: string): void {
    rmSync(this.dir(id), { recursive: true, force: true });
  }

  /** The directory, if a teardown left it. */
  leftovers(id: string): string[] {
    return existsSync(this.dir(id)) ? [this.dir(id)] : [];
  }

  private async prepare(): Promise<void> {
    mkdirSync(this.root, { recursive: true, mode: 0o700 });
    if (isMemoryBacked(this.root)) return;
    // A run dir on a disk (Debian without a tmpfs /run, an operator's runc root elsewhere): a
    // tmpfs of its own. Under a lock and only if nothing is mounted yet: several engines share a
    // run dir (platforms on one host, tests), and a second mount would hide the first's files.
    // The size bounds what the files can take of memory; each sandbox holds a few tens of KB.
    await this.runner.run('flock', [
      `${this.root}.lock`,
      'sh',
      '-c',
      'mountpoint -q "$1" || mount -t tmpfs -o mode=0700,nosuid,nodev,noexec,size=256m tarmac-bundles "$1"',
      'mount-bundles',
      this.root,
    ]);
    if (!isMemoryBacked(this.root))
      throw new Error(`${this.root} is not memory-backed after mounting a tmpfs`);
  }
}
