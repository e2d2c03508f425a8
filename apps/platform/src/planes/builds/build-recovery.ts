import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BuildTarget } from './build-records.js';

/**
 * What a build leaves on disk so that it survives a platform restart (issue 15: no resource stuck
 * UPLOADING/BUILDING forever). Once its archive is extracted, a build's folder under
 * `TARMAC_HOME/builds/work/<id>/` holds `src/` and this file; both go when the build ends (BUILT or
 * FAILED). A folder still there at the next start is a build the platform stopped (or crashed)
 * in: resumed from its source when its record still waits for it, removed otherwise. A record left
 * UPLOADING/BUILDING without such a folder is marked FAILED with an event saying why: its upload
 * URL died with the process (the tickets are in memory) or its source was never fully received.
 */
export interface PersistedBuild {
  id: string;
  workspace: string;
  actor: string;
  target: BuildTarget;
  /** When the archive was received (ms): resumed builds queue in this order. */
  receivedAt: number;
}

export const BUILD_FILE = 'build.json';

export function persistBuild(dir: string, build: PersistedBuild): void {
  writeFileSync(join(dir, BUILD_FILE), JSON.stringify(build), { mode: 0o600 });
}

/** Folders of `workDir`: builds that can resume (oldest first), and leftovers to remove. */
export function leftBuilds(workDir: string): {
  resumable: Array<PersistedBuild & { dir: string }>;
  stale: string[];
} {
  const resumable: Array<PersistedBuild & { dir: string }> = [];
  const stale: string[] = [];
  if (!existsSync(workDir)) return { resumable, stale };
  for (const name of readdirSync(workDir)) {
    const dir = join(workDir, name);
    const p = read(join(dir, BUILD_FILE));
    if (p && p.id === name && existsSync(join(dir, 'src'))) resumable.push({ ...p, dir });
    else stale.push(dir);
  }
  resumable.sort((a, b) => a.receivedAt - b.receivedAt);
  return { resumable, stale };
}

function read(file: string): PersistedBuild | undefined {
  try {
    const p = JSON.parse(readFileSync(file, 'utf8')) as Partial<PersistedBuild>;
    const t = p.target;
    const ok =
      typeof p.id === 'string' &&
      typeof p.workspace === 'string' &&
      typeof p.actor === 'string' &&
      typeof p.receivedAt === 'number' &&
      !!t &&
      typeof t.kind === 'string' &&
      typeof t.name === 'string' &&
      typeof t.imageType === 'string';
    return ok ? (p as PersistedBuild) : undefined;
  } catch {
    return undefined; // missing or torn (a crash mid-write): not resumable
  }
}

/** The event message of a record the restart left without a build. */
export function restartFailure(status: 'UPLOADING' | 'BUILDING'): string {
  return status === 'UPLOADING'
    ? 'The platform restarted before the code upload arrived; the upload URL is no longer valid. Upload again (?upload=true).'
    : 'The platform restarted while this build was starting and its source was not kept. Upload again (?upload=true).';
}
