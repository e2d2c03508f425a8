/**
 * Which sandboxes the warm pool keeps ready (issue 20): shapes of image and memory, each with a
 * size. `TARMAC_POOL` (config.ts) is `off`, or a comma-separated list of `<image>@<memory MB>=<size>`
 * (e.g. `tarmac/base:latest@4096=2,tarmac/base:latest@1024=1`). The default is the default image
 * and memory with two sandboxes: about 2 x 14 MB of host memory (a frozen member's memory
 * cgroup, bench/sandbox.ts), though the memory ledger counts their limits, which is why pool
 * members are the first released under memory pressure (warm-pool.ts).
 */
import { DEFAULT_MEMORY_MB } from '../records/sandbox-record.js';

export const DEFAULT_POOL_IMAGE = 'tarmac/base:latest';
export const DEFAULT_POOL_SIZE = 2;
/** Bounds a typo cannot cross: a shape keeps at most this many sandboxes booted ahead. */
export const MAX_POOL_SIZE = 64;

export interface PoolShape {
  /** As a create writes it (`spec.runtime.image`, default `tarmac/base:latest`). */
  image: string;
  memoryMB: number;
  size: number;
}

export const DEFAULT_POOL: readonly PoolShape[] = [
  { image: DEFAULT_POOL_IMAGE, memoryMB: DEFAULT_MEMORY_MB, size: DEFAULT_POOL_SIZE },
];

export const shapeKey = (s: Pick<PoolShape, 'image' | 'memoryMB'>) => `${s.image}@${s.memoryMB}`;

/** Parses TARMAC_POOL; throws an Error naming the variable and the bad part. */
export function parsePoolShapes(text: string | undefined): PoolShape[] {
  if (text === undefined) return [...DEFAULT_POOL];
  const t = text.trim();
  if (t === '' || t === 'off' || t === '0') return [];
  const shapes: PoolShape[] = [];
  for (const part of t.split(',').map((p) => p.trim())) {
    const m = /^([^@=\s]+)@(\d+)=(\d+)$/.exec(part);
    const size = Number(m?.[3]);
    const memoryMB = Number(m?.[2]);
    if (!m || memoryMB < 4 || size > MAX_POOL_SIZE) {
      throw new Error(
        `TARMAC_POOL: "${part}" is not <image>@<memory MB>=<size 0..${MAX_POOL_SIZE}> (or "off" for no pool)`,
      );
    }
    if (size === 0) continue;
    if (shapes.some((s) => shapeKey(s) === `${m[1]}@${memoryMB}`)) {
      throw new Error(`TARMAC_POOL: shape "${m[1]}@${memoryMB}" is listed twice`);
    }
    shapes.push({ image: m[1]!, memoryMB, size });
  }
  return shapes;
}
