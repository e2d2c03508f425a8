// Direct cgroup access for what runc does not give us cheaply: freeze/thaw (a single file write,
// so resume stays far under a millisecond of work), stats for metering, and OOM-kill counts.
// Supports v1 (per-controller hierarchies, as on hosts with a tmpfs /sys/fs/cgroup) and v2.
// Sync fs calls on purpose: these are tiny pseudo-file accesses, and going through the libuv
// thread pool would add more latency than the write itself.
import { existsSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from './clock.js';
import { EngineError, FreezeAbortedError } from './errors.js';

export type CgroupVersion = 1 | 2;

/** runc's rule: v2 only when /sys/fs/cgroup itself is the unified hierarchy. */
export function detectCgroupVersion(root = '/sys/fs/cgroup'): CgroupVersion {
  return existsSync(join(root, 'cgroup.controllers')) ? 2 : 1;
}

export interface CgroupStats {
  memoryBytes: number;
  memoryLimitBytes: number;
  cpuUsageNs: number;
  pids: number;
  frozen: boolean;
  oomKills: number;
}

const V1_CONTROLLERS = ['freezer', 'memory', 'pids', 'cpu', 'cpuacct', 'cpuset', 'devices', 'blkio'];

export class Cgroups {
  constructor(
    readonly version: CgroupVersion,
    private readonly clock: Clock,
    private readonly root = '/sys/fs/cgroup',
  ) {}

  /** Directory of `rel` (e.g. "tarmac/sbx-1") for a v1 controller; v2 ignores the controller. */
  dir(rel: string, controller: string): string {
    return this.version === 2 ? join(this.root, rel) : join(this.root, controller, rel);
  }

  exists(rel: string): boolean {
    return existsSync(this.dir(rel, 'freezer'));
  }

  isFrozen(rel: string): boolean {
    if (this.version === 1) return read(this.dir(rel, 'freezer'), 'freezer.state') === 'FROZEN';
    return keyed(read(this.dir(rel, ''), 'cgroup.events'), 'frozen') === 1;
  }

  /** Freezes every process in the cgroup; resolves once the kernel reports it fully frozen. */
  async freeze(rel: string, timeoutMs = 5000): Promise<void> {
    if (this.version === 1) writeFileSync(join(this.dir(rel, 'freezer'), 'freezer.state'), 'FROZEN');
    else writeFileSync(join(this.dir(rel, ''), 'cgroup.freeze'), '1');
    const deadline = this.clock.now() + timeoutMs;
    // v1 reports FREEZING while tasks are still being stopped; v2 flips "frozen" in cgroup.events.
    while (!this.isFrozen(rel)) {
      // Someone thawed it meanwhile (a request resuming the sandbox): give up at once.
      if (this.freezeRequested(rel) === false)
        throw new FreezeAbortedError(`cgroup ${rel} was thawed while freezing`);
      if (this.clock.now() > deadline)
        throw new EngineError(`cgroup ${rel} did not freeze in ${timeoutMs}ms`);
      await this.clock.sleep(1);
    }
  }

  /** What was last asked of the freezer: true = freeze, false = thaw. */
  freezeRequested(rel: string): boolean {
    if (this.version === 1) return read(this.dir(rel, 'freezer'), 'freezer.state') !== 'THAWED';
    return read(this.dir(rel, ''), 'cgroup.freeze') === '1';
  }

  /** Thaws: one write; the kernel wakes tasks synchronously, so a single read confirms it. */
  thaw(rel: string): void {
    if (this.version === 1) writeFileSync(join(this.dir(rel, 'freezer'), 'freezer.state'), 'THAWED');
    else writeFileSync(join(this.dir(rel, ''), 'cgroup.freeze'), '0');
    if (this.isFrozen(rel)) throw new EngineError(`cgroup ${rel} still frozen after thaw`);
  }

  stats(rel: string): CgroupStats {
    if (this.version === 1) {
      const mem = this.dir(rel, 'memory');
      return {
        memoryBytes: Number(read(mem, 'memory.usage_in_bytes')),
        memoryLimitBytes: Number(read(mem, 'memory.limit_in_bytes')),
        cpuUsageNs: Number(read(this.dir(rel, 'cpuacct'), 'cpuacct.usage')),
        pids: Number(read(this.dir(rel, 'pids'), 'pids.current')),
        frozen: this.isFrozen(rel),
        oomKills: keyed(read(mem, 'memory.oom_control'), 'oom_kill'),
      };
    }
    const dir = this.dir(rel, '');
    const max = read(dir, 'memory.max');
    return {
      memoryBytes: Number(read(dir, 'memory.current')),
      memoryLimitBytes: max === 'max' ? Number.POSITIVE_INFINITY : Number(max),
      cpuUsageNs: keyed(read(dir, 'cpu.stat'), 'usage_usec') * 1000,
      pids: Number(read(dir, 'pids.current')),
      frozen: this.isFrozen(rel),
      oomKills: keyed(read(dir, 'memory.events'), 'oom_kill'),
    };
  }

  /** Sets the CFS quota (µs per `period`): one pseudo-file write, no runc spawn. */
  setCpuQuota(rel: string, quota: number, period: number): void {
    if (this.version === 1) writeFileSync(join(this.dir(rel, 'cpu'), 'cpu.cfs_quota_us'), String(quota));
    else writeFileSync(join(this.dir(rel, ''), 'cpu.max'), `${quota} ${period}`);
  }

  /** OOM kills so far, or null when the cgroup is gone. */
  oomKills(rel: string): number | null {
    try {
      if (this.version === 1) return keyed(read(this.dir(rel, 'memory'), 'memory.oom_control'), 'oom_kill');
      return keyed(read(this.dir(rel, ''), 'memory.events'), 'oom_kill');
    } catch {
      return null;
    }
  }

  /** Removes leftover (empty) cgroup dirs; runc delete normally does it. Returns dirs still present. */
  remove(rel: string): string[] {
    const dirs = this.version === 2 ? [this.dir(rel, '')] : V1_CONTROLLERS.map((c) => this.dir(rel, c));
    const left: string[] = [];
    for (const d of dirs) {
      if (!existsSync(d)) continue;
      try {
        rmdirSync(d);
      } catch {
        left.push(d);
      }
    }
    return left;
  }

  /** Every directory that exists for rel, for leak checks. */
  present(rel: string): string[] {
    const dirs = this.version === 2 ? [this.dir(rel, '')] : V1_CONTROLLERS.map((c) => this.dir(rel, c));
    return dirs.filter((d) => existsSync(d));
  }
}

function read(dir: string, file: string): string {
  return readFileSync(join(dir, file), 'utf8').trim();
}

/** Value of `key N` in a flat-keyed cgroup file; 0 when absent. */
function keyed(text: string, key: string): number {
  for (const line of text.split('\n')) {
    const [k, v] = line.trim().split(/\s+/);
    if (k === key) return Number(v);
  }
  return 0;
}
