// Tests see an image as a sandbox does: its layers merged by overlayfs (read only, lowers top
// first), so whiteouts and opaque dirs of upper layers are checked for what they hide.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Runs `fn` on the merged root of `layerDirs` (bottom first, as ResolvedImage lists them). */
export function withMergedView<T>(layerDirs: readonly string[], fn: (root: string) => T): T {
  if (layerDirs.length === 1) return fn(layerDirs[0]!);
  const mnt = mkdtempSync(join(tmpdir(), 'tarmac-merged-'));
  const lowers = [...layerDirs].reverse().join(':');
  execFileSync('mount', ['-t', 'overlay', 'overlay', '-o', `ro,lowerdir=${lowers}`, mnt]);
  try {
    return fn(mnt);
  } finally {
    execFileSync('umount', [mnt]);
    rmSync(mnt, { recursive: true, force: true });
  }
}
