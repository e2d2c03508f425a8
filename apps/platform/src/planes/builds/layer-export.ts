import { linkSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Hands a built image to the engine without writing again the layers written before (issue 15
 * bench: a warm rebuild spent ~12 s gzipping and re-importing the whole 340 MB image).
 *
 * `buildah build -t oci:<layout>:image` commits the result straight into an OCI layout (no
 * separate inspect and push: two buildah processes fewer on every build), its layers uncompressed
 * (a blob's digest is then its diff ID), and skips a layer whose blob the layout already holds. So
 * each written layer blob is kept in a cache named by its digest, and before a build the cached
 * blobs used most recently (the base image's first: every build uses it) are hard-linked into the
 * build's fresh layout. Which layers the build will name is not known before it runs, hence "most
 * recently used" (bounded): a layer not offered is just written again. Only uncompressed blobs
 * (`…layer.v1.tar`) enter the cache, so a name is always the digest of the bytes. The engine's
 * import reads a layer only when its store lacks it, and then vets and hashes it and checks the
 * hash against the diff ID (packages/engine images/import.ts importLayout): a cached blob is never
 * believed beyond what the builder itself would have written.
 */
export class LayerExport {
  constructor(
    private readonly cacheDir: string,
    /** At most this many cached blobs are linked into a layout. */
    private readonly maxOffered = 256,
  ) {}

  /** A fresh layout dir holding links to the most recently used cached blobs; returns their digests. */
  prepare(layout: string): Set<string> {
    const blobs = join(layout, 'blobs', 'sha256');
    mkdirSync(blobs, { recursive: true, mode: 0o700 });
    mkdirSync(this.cacheDir, { recursive: true, mode: 0o700 });
    const entries: Array<{ name: string; mtime: number }> = [];
    for (const name of readdirSync(this.cacheDir)) {
      if (!HEX.test(name)) continue;
      try {
        entries.push({ name, mtime: statSync(join(this.cacheDir, name)).mtimeMs });
      } catch {
        // pruned meanwhile
      }
    }
    entries.sort((a, b) => b.mtime - a.mtime);
    const offered = new Set<string>();
    for (const { name } of entries.slice(0, this.maxOffered)) {
      try {
        linkSync(join(this.cacheDir, name), join(blobs, name));
        offered.add(`sha256:${name}`);
      } catch {
        // pruned meanwhile: the build writes it again
      }
    }
    return offered;
  }

  /**
   * After the build: each uncompressed layer blob the layout's image names joins the cache under
   * its digest, and each cached one it used is marked used now. Returns how many layers the image
   * has and how many of them came from the cache.
   */
  finish(layout: string, offered: ReadonlySet<string>): { layers: number; reused: number } {
    const blobs = join(layout, 'blobs', 'sha256');
    const index = readJson<{ manifests?: Array<{ digest: string }> }>(join(layout, 'index.json'));
    const top = index.manifests?.[0];
    if (!top || index.manifests?.length !== 1) throw new Error('the built layout names no single image');
    const manifest = readJson<{ layers?: Array<{ digest: string; mediaType?: string }> }>(
      join(blobs, hex(top.digest)),
    );
    const layers = manifest.layers ?? [];
    let reused = 0;
    for (const layer of layers) {
      const name = hex(layer.digest);
      if (offered.has(layer.digest)) {
        reused++;
        touch(join(this.cacheDir, name));
      } else if (layer.mediaType === UNCOMPRESSED) {
        try {
          linkSync(join(blobs, name), join(this.cacheDir, name));
        } catch {
          // another build cached it meanwhile
        }
      }
    }
    return { layers: layers.length, reused };
  }

  /** Drops cached layers no build used for `maxAgeMs` (each use touches its entry). */
  prune(maxAgeMs: number, nowMs: number): number {
    let names: string[];
    try {
      names = readdirSync(this.cacheDir);
    } catch {
      return 0;
    }
    let removed = 0;
    for (const name of names) {
      const path = join(this.cacheDir, name);
      try {
        if (nowMs - statSync(path).mtimeMs < maxAgeMs) continue;
      } catch {
        continue;
      }
      rmSync(path, { force: true });
      removed++;
    }
    return removed;
  }
}

/** Whether `layout` names one image whose manifest, config and layer blobs are all there. */
export function layoutComplete(layout: string): boolean {
  try {
    const blobs = join(layout, 'blobs', 'sha256');
    const index = readJson<{ manifests?: Array<{ digest: string }> }>(join(layout, 'index.json'));
    if (index.manifests?.length !== 1) return false;
    const manifest = readJson<{ config?: { digest: string }; layers?: Array<{ digest: string }> }>(
      join(blobs, hex(index.manifests[0]!.digest)),
    );
    if (!manifest.config || !manifest.layers) return false;
    return [manifest.config, ...manifest.layers].every((d) => statSync(join(blobs, hex(d.digest))).isFile());
  } catch {
    return false;
  }
}

const HEX = /^[a-f0-9]{64}$/;
const UNCOMPRESSED = 'application/vnd.oci.image.layer.v1.tar';

function hex(digest: string): string {
  const m = /^sha256:([a-f0-9]{64})$/.exec(digest);
  if (!m) throw new Error(`unexpected digest ${digest.slice(0, 80)}`);
  return m[1]!;
}

function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

function touch(path: string): void {
  const now = new Date();
  try {
    utimesSync(path, now, now);
  } catch {
    // pruned meanwhile: the next build writes it again
  }
}
