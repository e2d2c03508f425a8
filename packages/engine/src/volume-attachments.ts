// Volumes as LocalEngine attaches them (local-engine.ts): one sandbox at a time, bind-mounted
// from the volume's loop-mounted image.
import { SandboxNotFoundError, VolumeInUseError } from './errors.js';
import type { SandboxSpec, VolumeInfo } from './engine.js';
import type { OciMount } from './oci-spec.js';
import type { SandboxHost } from './sandbox-host.js';

/** A volume is attached to one sandbox at a time. */
export function assertVolumeFree(host: SandboxHost, volume: string, forId: string | null): void {
  for (const id of host.files.ids()) {
    if (id === forId) continue;
    try {
      if (host.files.read(id).volumes.some((v) => v.volume === volume)) {
        throw new VolumeInUseError(`volume ${volume} is attached to sandbox ${id}`);
      }
    } catch (err) {
      if (!(err instanceof SandboxNotFoundError)) throw err;
    }
  }
}

/** The bind mounts of a new sandbox's volumes, each mounted on the host first. */
export async function mountSandboxVolumes(host: SandboxHost, spec: SandboxSpec): Promise<OciMount[]> {
  const mounts: OciMount[] = [];
  for (const v of spec.volumes ?? []) {
    assertVolumeFree(host, v.volume, spec.id);
    const vol = await host.volumeStore.ensureMounted(v.volume);
    const opts = ['rbind', 'nosuid', 'nodev', v.readOnly ? 'ro' : 'rw'];
    mounts.push({ destination: v.mountPath, type: 'bind', source: vol.path, options: opts });
  }
  return mounts;
}

export function growVolume(host: SandboxHost, name: string, sizeMB: number): Promise<VolumeInfo> {
  let detached = true;
  try {
    assertVolumeFree(host, name, null);
  } catch (err) {
    if (!(err instanceof VolumeInUseError)) throw err;
    detached = false;
  }
  return host.volumeStore.grow(name, sizeMB, detached);
}

export async function deleteVolume(host: SandboxHost, name: string): Promise<void> {
  assertVolumeFree(host, name, null);
  await host.volumeStore.remove(name);
}
