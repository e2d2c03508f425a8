import { BASE_IMAGE, resolveRef, type SandboxSpec } from '@tarmac/engine';
import { volumeEngineName } from './engine-ids.js';
import type { SandboxControllerOptions } from './sandbox-controller-options.js';
import { DEFAULT_MEMORY_MB, VOLUME_KIND, type SandboxRow } from '../records/sandbox-record.js';

/**
 * What the engine is asked to create for a record: its envs (defaults, then the spec's own), its
 * volumes (allocated or grown here), the image the workspace may use and the seed snapshot.
 */
export async function engineSpec(
  o: SandboxControllerOptions,
  row: SandboxRow,
  engineId: string,
): Promise<SandboxSpec> {
  const runtime = row.spec.runtime ?? {};
  const defaults = await o.sandboxDefaults?.({ id: row.id, workspace: row.workspace, name: row.name });
  const env: Record<string, string> = { ...defaults?.env };
  const envs = o.revealEnvs ? o.revealEnvs(row) : (runtime.envs ?? []);
  for (const e of envs) env[e.name] = e.value ?? '';
  const volumes: SandboxSpec['volumes'] = [];
  for (const v of row.spec.volumes ?? []) {
    const vol = await o.resources.get<{ size?: number }>(row.workspace, VOLUME_KIND, v.name);
    if (!vol || vol.terminatedAt) throw new Error(`volume "${v.name}" does not exist`);
    // Storage is allocated on first mount (volumes module: "allocated on first mount").
    const engineName = volumeEngineName(vol.id);
    const sizeMB = vol.spec.size ?? 1024;
    const allocated = (await o.engine.listVolumes()).find((x) => x.name === engineName);
    if (!allocated) await o.engine.createVolume(engineName, sizeMB);
    // Grown while attached on a host that cannot resize online (volume-controller.ts): now.
    else if (sizeMB > allocated.sizeMB) await o.engine.growVolume(engineName, sizeMB);
    volumes.push({ volume: engineName, mountPath: v.mountPath, readOnly: v.readOnly ?? false });
  }
  const wanted = runtime.image ?? BASE_IMAGE;
  const image = o.resolveImage ? await o.resolveImage(row.workspace, wanted) : wanted;
  if (image === undefined) throw new Error(`image "${wanted}" is not available in this workspace`);
  return {
    id: engineId,
    image,
    memoryMB: runtime.memory ?? DEFAULT_MEMORY_MB,
    env,
    hostname: row.name,
    ports: runtime.ports ?? [],
    volumes,
    files: defaults?.files ?? [],
    labels: { workspace: row.workspace, sandbox: row.name, record: row.id },
    ...(typeof row.system.seedSnapshot === 'string' ? { fromSnapshot: row.system.seedSnapshot } : {}),
  };
}

/** The base image under any of its names (blaxel/base-image:latest too); invalid refs are not. */
export function isBaseImage(ref: string): boolean {
  try {
    return resolveRef(ref) === BASE_IMAGE;
  } catch {
    return false;
  }
}
