/**
 * The builder's own layer cache, bounded (issue 15: unused images and dangling layers are
 * garbage-collected on a schedule; every resource bounded). Every build step leaves an untagged
 * ("dangling") image in buildah's storage: that is the cache a rebuild hits. Left alone it grows
 * with every build of every workspace. The GC pass (image-gc.ts) removes dangling images created
 * longer ago than TARMAC_BUILD_CACHE_MAX_AGE_HOURS (a rebuild of such a step runs it again once,
 * then caches it anew), and all of them when the storage is above TARMAC_BUILD_CACHE_MAX_GB.
 * Tagged images — the seeded base image — are never touched.
 *
 * Builds and a prune share the storage: a prune removing the image a running build is about to
 * reuse would fail that build. So a prune runs only while no build runs (else the next pass
 * tries), and a build that starts meanwhile waits for it to end (StorageGate).
 */

export class StorageGate {
  private active = 0;
  private pruning: Promise<unknown> | undefined;

  /** A build begins: waits out a prune in progress. */
  async enter(): Promise<void> {
    while (this.pruning) await this.pruning.catch(() => undefined);
    this.active++;
  }

  leave(): void {
    this.active--;
  }

  /** Runs `work` with no build running, or not at all (undefined) while one runs. */
  exclusive<T>(work: () => Promise<T>): Promise<T> | undefined {
    if (this.active > 0 || this.pruning) return undefined;
    const p = work().finally(() => (this.pruning = undefined));
    this.pruning = p;
    return p;
  }
}

/** A line of `buildah images --all --json --filter dangling=true`. */
export interface CacheImage {
  id: string;
  /** Unix seconds. */
  created: number;
}

export interface CacheLimits {
  maxAgeMs: number;
  maxBytes: number;
}

/** Dangling images created before `nowMs - maxAgeMs`, oldest first. */
export function staleImages(images: readonly CacheImage[], maxAgeMs: number, nowMs: number): string[] {
  return images
    .filter((i) => i.created * 1000 < nowMs - maxAgeMs)
    .sort((a, b) => a.created - b.created)
    .map((i) => i.id);
}

/** Parses buildah's JSON list; anything not shaped like an image is skipped. */
export function parseImages(json: string): CacheImage[] {
  const list = JSON.parse(json.trim() || '[]') as unknown;
  if (!Array.isArray(list)) return [];
  return list.flatMap((i: { id?: unknown; created?: unknown; names?: unknown }) =>
    typeof i.id === 'string' && /^[0-9a-f]{12,64}$/.test(i.id) && typeof i.created === 'number' && !i.names
      ? [{ id: i.id, created: i.created }]
      : [],
  );
}
