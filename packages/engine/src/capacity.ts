// How much memory the engine hands out (issue 19 item 13): the sum of the memory limits of live
// sandboxes may not exceed the host's memory times an operator's overcommit ratio. Limits are
// what a sandbox may use, not what it uses; with the default ratio of 1 no set of sandboxes can
// together take more than the host has, so the host's OOM killer is never the one that decides.
// A ratio above 1 packs more idle sandboxes at the risk of host-wide memory pressure.
import { InsufficientCapacityError } from './errors.js';

export const DEFAULT_MEMORY_OVERCOMMIT = 1;

/** Memory (MB) the engine may commit to sandboxes in total. */
export function memoryCapacityMB(hostMemoryMB: number, overcommit: number): number {
  return Math.floor(hostMemoryMB * overcommit);
}

/**
 * Memory commitments of live sandboxes plus the ones being created (reserved before anything is
 * allocated, so two concurrent creates cannot both take the last free memory).
 */
export class MemoryLedger {
  private readonly reserved = new Map<string, number>();

  constructor(readonly capacityMB: number) {}

  /**
   * Reserves memoryMB for `id` given the limits of the other live sandboxes (`live`, by id);
   * throws InsufficientCapacityError with the figures when it does not fit. The returned function
   * drops the reservation (the sandbox's record counts from then on, while it is alive).
   */
  reserve(id: string, memoryMB: number, live: ReadonlyMap<string, number>): () => void {
    this.check(id, memoryMB, live);
    this.reserved.set(id, memoryMB);
    return () => {
      this.reserved.delete(id);
    };
  }

  /** Throws when `id` taking memoryMB (instead of what it has now) would exceed the capacity. */
  check(id: string, memoryMB: number, live: ReadonlyMap<string, number>): void {
    let used = 0;
    for (const [other, mb] of live) if (other !== id && !this.reserved.has(other)) used += mb;
    for (const [other, mb] of this.reserved) if (other !== id) used += mb;
    if (used + memoryMB <= this.capacityMB) return;
    throw new InsufficientCapacityError(
      `not enough memory on this host: ${memoryMB} MB asked, ${Math.max(0, this.capacityMB - used)} MB of ` +
        `${this.capacityMB} MB left for sandboxes (the sum of live sandboxes' memory may not exceed the ` +
        `host's memory times the overcommit ratio)`,
    );
  }
}
