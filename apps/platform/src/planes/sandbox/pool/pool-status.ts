/**
 * What the warm pool holds per shape and what it costs the host (issue 20: "their host cost is
 * reported (memory per pooled sandbox)"): logged when the pool is full (warm-pool.ts).
 */
import type { SandboxStats } from '@tarmac/engine';
import { shapeKey, type PoolShape } from './pool-shapes.js';
import type { PoolMember } from './pool-member.js';

export interface PoolShapeStatus {
  image: string;
  memoryMB: number;
  size: number;
  ready: number;
  /** Ready members kept thawed (hot-members.ts): 0 or 1. */
  hot: number;
  booting: number;
  /** Host memory the ready members use now (cgroup memory.current), per member on average. */
  hostMemoryBytesPerMember: number | null;
}

export async function poolStatus(o: {
  shapes: readonly PoolShape[];
  ready: ReadonlyMap<string, readonly PoolMember[]>;
  /** The shape key of each member booting now. */
  bootingShapes: readonly (string | undefined)[];
  isHot: (member: PoolMember) => boolean;
  stats: (engineId: string) => Promise<SandboxStats>;
}): Promise<PoolShapeStatus[]> {
  const out: PoolShapeStatus[] = [];
  for (const s of o.shapes) {
    const key = shapeKey(s);
    const members = o.ready.get(key) ?? [];
    let bytes = 0;
    let measured = 0;
    for (const m of members) {
      const stats = await o.stats(m.engineId).catch(() => undefined);
      if (stats) {
        bytes += stats.memoryBytes;
        measured += 1;
      }
    }
    out.push({
      image: s.image,
      memoryMB: s.memoryMB,
      size: s.size,
      ready: members.length,
      hot: members.filter(o.isHot).length,
      booting: o.bootingShapes.filter((k) => k === key).length,
      hostMemoryBytesPerMember: measured > 0 ? Math.round(bytes / measured) : null,
    });
  }
  return out;
}
