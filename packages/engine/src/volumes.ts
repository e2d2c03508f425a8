// Volumes: a sparse file with an ext4 filesystem, loop-mounted under <home>/volumes/<name>/mnt.
// ext4 on a fixed-size file really stops writes at the size (ENOSPC), survives sandbox deletion,
// and is bind-mounted into sandboxes (read-only when asked). Volumes grow online (never shrink):
// the image is extended, the loop device re-reads its size and resize2fs grows the mounted ext4.
// Sandboxes run in a user namespace (userns.ts): a volume's files belong to the sandbox's ids, so
// root inside owns them and a host uid never does; a volume written before that is re-owned once
// when it is next mounted.
import {
  closeSync,
  existsSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
} from 'node:fs';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from './clock.js';
import type { VolumeInfo } from './engine.js';
import {
  CommandError,
  EngineError,
  InvalidSpecError,
  VolumeExistsError,
  VolumeInUseError,
  VolumeNotFoundError,
} from './errors.js';
import { isMountPoint } from './mounts.js';
import type { CommandRunner } from './runner.js';
import { shiftTree, type IdRange } from './userns.js';

const NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

interface VolumeRecord {
  name: string;
  sizeMB: number;
  createdAt: string;
}

export class VolumeStore {
  /** resize2fs was refused online once (no CAP_SYS_RESOURCE): do not retry it for attached ones. */
  private onlineResizeDenied = false;
  private readonly busy = new Map<string, Promise<unknown>>();

  constructor(
    private readonly dir: string,
    private readonly runner: CommandRunner,
    private readonly clock: Clock,
    private readonly idRange: IdRange,
  ) {}

  async create(name: string, sizeMB: number): Promise<VolumeInfo> {
    if (!NAME.test(name)) throw new InvalidSpecError(`invalid volume name ${name}`);
    if (!Number.isInteger(sizeMB) || sizeMB < 8) throw new InvalidSpecError('volume size must be >= 8 MB');
    const vdir = join(this.dir, name);
    try {
      mkdirSync(this.dir, { recursive: true });
      mkdirSync(vdir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new VolumeExistsError(name);
      throw err;
    }
    try {
      const img = join(vdir, 'disk.img');
      const fd = openSync(img, 'wx');
      ftruncateSync(fd, sizeMB * 1024 * 1024); // sparse: host disk is used only as data is written
      closeSync(fd);
      // -m 0: no root-reserved blocks, sandboxes run as root and the size should be the size.
      await this.runner.run('mkfs.ext4', ['-q', '-F', '-m', '0', '-E', 'nodiscard', img]);
      mkdirSync(join(vdir, 'mnt'));
      const record: VolumeRecord = { name, sizeMB, createdAt: this.clock.date().toISOString() };
      writeFileSync(join(vdir, 'volume.json'), JSON.stringify(record));
      return await this.ensureMounted(name);
    } catch (err) {
      await this.remove(name).catch(() => undefined);
      throw err;
    }
  }

  /**
   * Grows a volume to sizeMB: a bigger sparse image, `losetup -c` so the loop device sees it, then
   * `resize2fs` on the mounted ext4 (online, so a sandbox using it sees the space at once). Online
   * resizing needs CAP_SYS_RESOURCE; a host without it (e.g. a container whose bounding set drops
   * it) gets an offline resize instead, only when `detached` (no sandbox mounts it: resizing an
   * in-use filesystem offline would corrupt it), else VolumeInUseError and the caller retries after
   * the sandbox lets go. Idempotent and safe to repeat after a crash part-way: volume.json is
   * written last, so a retry redoes every step.
   */
  grow(name: string, sizeMB: number, detached: boolean): Promise<VolumeInfo> {
    return this.serialized(name, () => this.growNow(name, sizeMB, detached));
  }

  private async growNow(name: string, sizeMB: number, detached: boolean): Promise<VolumeInfo> {
    const rec = this.record(name);
    if (!Number.isInteger(sizeMB)) throw new InvalidSpecError('volume size must be a whole number of MB');
    if (sizeMB < rec.sizeMB) {
      throw new InvalidSpecError(`volume ${name} cannot shrink from ${rec.sizeMB} MB to ${sizeMB} MB`);
    }
    const info = await this.mount(name);
    if (sizeMB === rec.sizeMB) return info;
    if (!detached && this.onlineResizeDenied) throw attachedError(name);
    const img = join(this.dir, name, 'disk.img');
    const fd = openSync(img, 'r+');
    try {
      if (fstatSync(fd).size < sizeMB * 1024 * 1024) ftruncateSync(fd, sizeMB * 1024 * 1024);
    } finally {
      closeSync(fd);
    }
    const device = await this.loopDevice(img);
    await this.runner.run('losetup', ['-c', device]);
    const online = await this.runner.run('resize2fs', [device], { allowFail: true });
    if (online.code !== 0) {
      if (!/Permission denied/i.test(online.stderr)) {
        throw new CommandError(`resize2fs ${device}`, online.code, online.stderr);
      }
      this.onlineResizeDenied = true;
      if (!detached) throw attachedError(name);
      await this.growOffline(name, img);
    }
    writeFileSync(join(this.dir, name, 'volume.json'), JSON.stringify({ ...rec, sizeMB }));
    return { ...info, sizeMB };
  }

  /** Unmount, check (resize2fs insists on a fresh fsck), grow the image's ext4, mount again. */
  private async growOffline(name: string, img: string): Promise<void> {
    await this.runner.run('umount', [join(this.dir, name, 'mnt')]);
    try {
      const fsck = await this.runner.run('e2fsck', ['-f', '-p', img], { allowFail: true });
      if (fsck.code > 1) throw new CommandError(`e2fsck -f -p ${img}`, fsck.code, fsck.stderr); // 1: fixed
      await this.runner.run('resize2fs', [img]);
    } finally {
      await this.mount(name);
    }
  }

  /** The loop device backing a mounted image (`losetup -j` prints `/dev/loopN: []: (<file>)`). */
  private async loopDevice(img: string): Promise<string> {
    const { stdout } = await this.runner.run('losetup', ['-j', img]);
    const device = /^(\/dev\/loop\d+):/m.exec(stdout)?.[1];
    if (!device) throw new EngineError(`no loop device backs ${img}`);
    return device;
  }

  /** Mounts the volume if needed (e.g. after a host reboot) and returns it. */
  ensureMounted(name: string): Promise<VolumeInfo> {
    // Never while an offline grow has it unmounted: a sandbox would bind an empty directory.
    return this.serialized(name, () => this.mount(name));
  }

  /** One mount/grow at a time per volume (in this process). */
  private serialized<T>(name: string, f: () => Promise<T>): Promise<T> {
    const run = (this.busy.get(name) ?? Promise.resolve()).then(f, f);
    const tail = run.catch(() => undefined);
    this.busy.set(name, tail);
    void tail.then(() => {
      if (this.busy.get(name) === tail) this.busy.delete(name);
    });
    return run;
  }

  private async mount(name: string): Promise<VolumeInfo> {
    const rec = this.record(name);
    const mnt = join(this.dir, name, 'mnt');
    if (!isMountPoint(mnt)) {
      await this.runner.run('mount', ['-o', 'loop,nodev,nosuid', join(this.dir, name, 'disk.img'), mnt]);
    }
    // New volumes (root-owned by mkfs) and ones from before user namespaces: one walk, once.
    if (statSync(mnt).uid !== this.idRange.base) shiftTree(mnt, this.idRange);
    return { name, sizeMB: rec.sizeMB, path: mnt };
  }

  async remove(name: string): Promise<void> {
    const vdir = join(this.dir, name);
    if (!existsSync(vdir)) throw new VolumeNotFoundError(name);
    const mnt = join(vdir, 'mnt');
    if (isMountPoint(mnt)) await this.runner.run('umount', [mnt]); // mount -o loop autoclears the loop device
    rmSync(vdir, { recursive: true, force: true });
  }

  list(): VolumeInfo[] {
    if (!existsSync(this.dir)) return [];
    return readdirSync(this.dir)
      .filter((n) => existsSync(join(this.dir, n, 'volume.json')))
      .map((n) => ({ name: n, sizeMB: this.record(n).sizeMB, path: join(this.dir, n, 'mnt') }));
  }

  private record(name: string): VolumeRecord {
    try {
      return JSON.parse(readFileSync(join(this.dir, name, 'volume.json'), 'utf8')) as VolumeRecord;
    } catch {
      throw new VolumeNotFoundError(name);
    }
  }
}

function attachedError(name: string): VolumeInUseError {
  return new VolumeInUseError(
    `volume ${name} is attached to a sandbox and this host cannot grow ext4 online (no CAP_SYS_RESOURCE); it grows once detached`,
  );
}
