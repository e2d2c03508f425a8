// Filesystem snapshots of a sandbox (LocalEngine.snapshotSandbox): the engine's side, freezing
// the sandbox around the copy that snapshots.ts makes.
import { EngineError } from './errors.js';
import { diskPaths } from './sandbox-disk.js';
import type { SandboxHost } from './sandbox-host.js';

/**
 * A filesystem snapshot of a sandbox: its writable layer and its volumes' contents, copied while
 * its cgroup is frozen so the copy is consistent (snapshots.ts). A sandbox frozen already (in
 * STANDBY) stays frozen; one that ran is thawed after the copy. Process memory is not copied.
 */
export async function snapshotSandbox(
  host: SandboxHost,
  id: string,
  snapshotId: string,
): Promise<{ sizeBytes: number }> {
  const rec = host.files.read(id);
  const volumes = host.volumeStore.list();
  const source = {
    upper: diskPaths(host.files.layout(id).root).upper,
    volumes: rec.volumes.map((v) => {
      const vol = volumes.find((x) => x.name === v.volume);
      if (!vol) throw new EngineError(`volume ${v.volume} of sandbox ${id} is not allocated`);
      return { path: vol.path, mountPath: v.mountPath };
    }),
  };
  const wasFrozen = host.cgroups.isFrozen(rec.cgroup);
  if (!wasFrozen) await host.cgroups.freeze(rec.cgroup);
  try {
    return { sizeBytes: await host.snapshots.take(snapshotId, source) };
  } finally {
    if (!wasFrozen) host.cgroups.thaw(rec.cgroup);
  }
}
