// Volumes: a sparse file with an ext4 filesystem, loop-mounted under <home>/volumes/<name>/mnt.
// ext4 on a fixed-size file really stops writes at the size (ENOSPC), survives sandbox deletion,
// and is bind-mounted into sandboxes (read-only when asked).
import {
  closeSync,
  existsSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
} from 'node:fs';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from './clock.js';
import type { VolumeInfo } from './engine.js';
import { InvalidSpecError, VolumeExistsError, VolumeNotFoundError } from './errors.js';
import { isMountPoint } from './mounts.js';
import type { CommandRunner } from './runner.js';

const NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

interface VolumeRecord {
  name: string;
  sizeMB: number;
  createdAt: string;
}

export class VolumeStore {
  constructor(
    private readonly dir: string,
    private readonly runner: CommandRunner,
    private readonly clock: Clock,
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

  /** Mounts the volume if needed (e.g. after a host reboot) and returns it. */
  async ensureMounted(name: string): Promise<VolumeInfo> {
    const rec = this.record(name);
    const mnt = join(this.dir, name, 'mnt');
    if (!isMountPoint(mnt)) {
      await this.runner.run('mount', ['-o', 'loop,nodev,nosuid', join(this.dir, name, 'disk.img'), mnt]);
    }
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
