// Files under <home>/sandboxes/<id>: the durable record a new engine process re-attaches from.
//   sandbox.json   what was asked for and what was assigned (ip, cgroup, image layers)
//   stopped.json   written by stopSandbox: why and how it stopped
//   bundle/        only for sandboxes made before bundle-dirs.ts: the runc bundle (now on tmpfs)
//   disk.img disk/ the sandbox's own ext4 (sandbox-disk.ts), holding the overlay's upper/ and work/
//   upper/         with DeleteOptions.keepUpper: the writes, kept after delete
//   boot-env.json  the same: the boot env of those sandboxes (now beside the bundle, on tmpfs)
//   logs/          container stdout/stderr
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import type { PortSpec, VolumeMount } from './engine.js';
import { EngineUnavailableError, SandboxNotFoundError, isMissingPath } from './errors.js';

export interface SandboxRecord {
  id: string;
  image: string;
  layerDirs: string[];
  ip: string;
  createdAt: string;
  memoryMB: number;
  pidsLimit: number;
  /** Size of the sandbox's writable layer (absent: made before sandboxes had disks). */
  diskMB?: number;
  ports: PortSpec[];
  volumes: VolumeMount[];
  labels: Record<string, string>;
  cgroup: string;
  /** A command container (SandboxSpec.command): its exit code is read from its log (command-exit.ts). */
  command?: boolean;
}

export interface StopRecord {
  reason: string;
  exitCode: number | null;
  oomKilled: boolean;
}

export class SandboxFiles {
  constructor(readonly dir: string) {}

  path(id: string, ...rest: string[]): string {
    return join(this.dir, id, ...rest);
  }

  layout(id: string) {
    return {
      root: this.path(id),
      bundle: this.path(id, 'bundle'),
      rootfs: this.path(id, 'bundle', 'rootfs'),
      upper: this.path(id, 'upper'),
      work: this.path(id, 'work'),
      log: this.path(id, 'logs', 'container.log'),
    };
  }

  /** Claims the id (mkdir is atomic); false if it is taken. */
  claim(id: string): boolean {
    mkdirSync(this.dir, { recursive: true });
    try {
      mkdirSync(this.path(id));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    }
  }

  write(rec: SandboxRecord): void {
    atomicWrite(this.path(rec.id, 'sandbox.json'), JSON.stringify(rec, null, 2));
  }

  /** Only a missing file is SandboxNotFoundError; any other failure is EngineUnavailableError. */
  read(id: string): SandboxRecord {
    let text: string;
    try {
      text = readFileSync(this.path(id, 'sandbox.json'), 'utf8');
    } catch (err) {
      if (isMissingPath(err)) throw new SandboxNotFoundError(id);
      throw new EngineUnavailableError(`sandbox record ${id}`, err);
    }
    try {
      return JSON.parse(text) as SandboxRecord;
    } catch (err) {
      throw new EngineUnavailableError(`sandbox record ${id}`, err);
    }
  }

  writeStop(id: string, stop: StopRecord): void {
    atomicWrite(this.path(id, 'stopped.json'), JSON.stringify(stop));
  }

  readStop(id: string): StopRecord | null {
    let text: string;
    try {
      text = readFileSync(this.path(id, 'stopped.json'), 'utf8');
    } catch (err) {
      if (isMissingPath(err)) return null;
      throw new EngineUnavailableError(`stop record ${id}`, err);
    }
    try {
      return JSON.parse(text) as StopRecord;
    } catch (err) {
      throw new EngineUnavailableError(`stop record ${id}`, err);
    }
  }

  ids(): string[] {
    if (!existsSync(this.dir)) return [];
    return readdirSync(this.dir).filter((id) => existsSync(this.path(id, 'sandbox.json')));
  }
}

function atomicWrite(path: string, data: string): void {
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, data);
  renameSync(tmp, path);
}
