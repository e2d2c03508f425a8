// Which host files hold a given secret (issue 16: decrypted secrets are never written to disk
// outside a container's memory-backed env): grep's bytes search, sparse disk images included.
import { execFileSync } from 'node:child_process';

/**
 * Files under `dir` whose bytes contain `needle`. Sandbox root and sysfs mount points are skipped:
 * what is in a root is its disk's (disk.img under the home, searched), and sysfs is the kernel's.
 */
export function filesContaining(dir: string, needle: string): string[] {
  const skip = ['--exclude-dir=rootfs', '--exclude-dir=sysfs', '--no-messages'];
  try {
    return execFileSync('grep', ['-rlF', ...skip, '--', needle, dir], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean);
  } catch (err) {
    if ((err as { status?: number }).status === 1) return []; // no match
    throw err;
  }
}
