// Status is derived from what the host shows, never cached: a live init (runc state + /proc),
// the freezer, the memory cgroup's OOM count, and what stopSandbox recorded.
import type { SandboxInfo } from './engine.js';
import type { SandboxRecord, StopRecord } from './sandbox-files.js';

export interface Observed {
  /** Host pid of the live init, or null when it is not running. */
  pid: number | null;
  frozen: boolean;
  /** OOM kills in the sandbox's memory cgroup; null when the cgroup is gone. */
  oomKills: number | null;
  stop: StopRecord | null;
}

export function describeSandbox(rec: SandboxRecord, seen: Observed): SandboxInfo {
  const oomKilled = (seen.oomKills ?? 0) > 0 || (seen.stop?.oomKilled ?? false);
  let status: SandboxInfo['status'] = 'STOPPED';
  if (seen.pid !== null) status = seen.frozen ? 'FROZEN' : 'RUNNING';
  const stopped = status === 'STOPPED';
  return {
    id: rec.id,
    image: rec.image,
    status,
    ip: rec.ip,
    pid: seen.pid,
    createdAt: rec.createdAt,
    memoryMB: rec.memoryMB,
    ports: rec.ports,
    volumes: rec.volumes,
    labels: rec.labels,
    exitCode: stopped ? (seen.stop?.exitCode ?? null) : null,
    oomKilled,
    oomKills: seen.oomKills ?? 0,
    // The platform turns a STOPPED sandbox it did not stop into FAILED with this reason.
    reason: stopped ? (seen.stop?.reason ?? (oomKilled ? 'oom' : 'exited')) : null,
  };
}
