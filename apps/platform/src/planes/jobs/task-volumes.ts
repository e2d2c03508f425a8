/**
 * A job's `volumes` in its tasks (reference §2.4 `JobVolume {name, mountPath, type: "ephemeral",
 * sizeMb, readOnly}`; `mountPath="/"` is a root overlay of that size). `ephemeral` is the only type,
 * and one engine volume is attached to one container at a time, so every attempt of every task gets
 * its own fresh volumes: made through the engine's volume store (the ext4-on-loop volumes sandboxes
 * mount: a hard size, bind-mounted nosuid/nodev, owned by the task's user namespace), named after
 * the attempt's container and removed with it. A volume's `name` is only a label: it never selects
 * storage, so no name — another workspace's volume, `../x` — reaches anything but the fresh one.
 */
import { VolumeExistsError, VolumeNotFoundError, type Engine, type VolumeMount } from '@tarmac/engine';
import { jobMountPathProblem, type JobSpec } from '@tarmac/contract';
import type { TaskVolume } from './execution-state.js';

/** A volume without `sizeMb` (the sandbox volumes' default, reference sandbox-api §5). */
export const DEFAULT_JOB_VOLUME_MB = 1024;
/** The engine's smallest volume and smallest root disk. */
const MIN_VOLUME_MB = 8;
const MIN_ROOT_MB = 64;
export type VolumeEngine = Pick<Engine, 'createVolume' | 'deleteVolume' | 'listVolumes'>;

/** What an execution's tasks mount, fixed at create. Throws a field message for a path it refuses. */
export function taskVolumesOf(volumes: JobSpec['volumes']): { volumes: TaskVolume[]; rootMB?: number } {
  const out: TaskVolume[] = [];
  let rootMB: number | undefined;
  for (const [i, v] of volumes.entries()) {
    const problem = jobMountPathProblem(v.mountPath);
    if (problem) throw new TaskVolumeError(`spec.volumes[${i}].mountPath`, problem);
    const sizeMB = v.sizeMb ?? DEFAULT_JOB_VOLUME_MB;
    if (v.mountPath === '/') rootMB = Math.max(MIN_ROOT_MB, sizeMB);
    else out.push({ mountPath: v.mountPath, sizeMB: Math.max(MIN_VOLUME_MB, sizeMB), readOnly: v.readOnly });
  }
  return { volumes: out, ...(rootMB !== undefined ? { rootMB } : {}) };
}

export class TaskVolumeError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** Engine name of the attempt's k-th volume: derived from its container id, never from the job. */
export function taskVolumeName(engineId: string, k: number): string {
  return `${engineId}-v${k}`;
}

/** The attempt's container id of a task volume name, or undefined when it is not one. */
export function containerOfVolume(name: string): string | undefined {
  return /^(jt-[0-9a-f]{12}-\d+-\d+)-v\d+$/.exec(name)?.[1];
}

/**
 * Makes the attempt's volumes fresh (one left by a crash before its container was created is
 * replaced: it never held a task's data) and answers the mounts; on failure removes what it made.
 */
export async function makeTaskVolumes(
  engine: VolumeEngine,
  engineId: string,
  volumes: readonly TaskVolume[],
): Promise<VolumeMount[]> {
  const mounts: VolumeMount[] = [];
  try {
    for (const [k, v] of volumes.entries()) {
      const name = taskVolumeName(engineId, k);
      try {
        await engine.createVolume(name, v.sizeMB);
      } catch (err) {
        if (!(err instanceof VolumeExistsError)) throw err;
        await engine.deleteVolume(name);
        await engine.createVolume(name, v.sizeMB);
      }
      mounts.push({ volume: name, mountPath: v.mountPath, readOnly: v.readOnly });
    }
    return mounts;
  } catch (err) {
    await removeTaskVolumes(engine, engineId, mounts.length + 1);
    throw err;
  }
}

/** Removes the attempt's volumes (after its container): the ones it may have. */
export async function removeTaskVolumes(
  engine: VolumeEngine,
  engineId: string,
  count: number,
): Promise<void> {
  for (let k = 0; k < count; k++) {
    try {
      await engine.deleteVolume(taskVolumeName(engineId, k));
    } catch (err) {
      if (!(err instanceof VolumeNotFoundError)) throw err;
    }
  }
}
