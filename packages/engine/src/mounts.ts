// Host mount table helpers (the engine mounts overlay roots and loop volumes on the host).
import { readFileSync } from 'node:fs';

/** Mount points (as seen by this process) at or below `prefix`. */
export function mountsUnder(prefix: string): string[] {
  const out: string[] = [];
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    // Field 5 is the mount point, with spaces etc. octal-escaped.
    const point = line.split(' ')[4];
    if (!point) continue;
    const decoded = point.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
    if (decoded === prefix || decoded.startsWith(`${prefix}/`)) out.push(decoded);
  }
  return out;
}

export function isMountPoint(path: string): boolean {
  return mountsUnder(path).includes(path);
}
