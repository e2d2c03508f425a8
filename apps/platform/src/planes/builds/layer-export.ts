import { createHash } from 'node:crypto';
import {
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';

/**
 * Hands a built image to the engine without exporting the layers it already has (issue 15 bench:
 * a warm rebuild spent ~12 s pushing and re-importing the whole 340 MB image).
 *
 * `buildah push oci:<dir>` skips a layer whose blob the layout already holds under the digest
 * buildah's storage recorded for it (its diff ID as committed). That digest is not the hash of
 * what a push writes (buildah 1.28 re-exports a committed layer as a different tar), so the
 * cache keeps each exported layer under both names: `<storage diff ID>-<content digest>` (hex).
 * Before a push every cached blob is hard-linked into the fresh layout under its storage name;
 * after it, newly exported layers join the cache, and the layout's config is rewritten to name
 * each layer by the digest of its content, which is what the engine's store is keyed by
 * (packages/engine images/layer-store.ts): layers the engine has are then not read at all, and
 * every other layer is vetted and must hash to that digest (images/import.ts importLayout).
 */
export class LayerExport {
  constructor(private readonly cacheDir: string) {}

  /** A fresh layout dir holding every cached layer blob under the name buildah looks for. */
  prepare(layout: string): void {
    const blobs = join(layout, 'blobs', 'sha256');
    mkdirSync(blobs, { recursive: true, mode: 0o700 });
    mkdirSync(this.cacheDir, { recursive: true, mode: 0o700 });
    for (const name of readdirSync(this.cacheDir)) {
      const [storage] = name.split('-');
      if (!storage || !HEX.test(storage)) continue;
      try {
        linkSync(join(this.cacheDir, name), join(blobs, storage));
      } catch {
        // pruned meanwhile, or two cache names for one storage layer: the first one serves
      }
    }
  }

  /**
   * After the push: caches the layers it exported and rewrites the config's diff IDs to the
   * layers' content digests. Returns how many layers were reused and exported.
   */
  finish(layout: string): { reused: number; exported: number } {
    const blobs = join(layout, 'blobs', 'sha256');
    const read = <T>(digest: string): T => JSON.parse(readFileSync(join(blobs, hex(digest)), 'utf8')) as T;
    const index = JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8')) as OciIndex;
    const top = index.manifests[0];
    if (!top || index.manifests.length !== 1) throw new Error('the pushed layout names no single image');
    const manifest = read<OciManifest>(top.digest);
    const config = read<{ rootfs: { type: string; diff_ids: string[] } }>(manifest.config.digest);
    const storageIds = config.rootfs.diff_ids;
    if (storageIds.length !== manifest.layers.length) throw new Error('config and manifest disagree');
    const cached = new Map(
      readdirSync(this.cacheDir).map((n) => [n.split('-')[0] ?? '', n.split('-')[1] ?? '']),
    );
    let reused = 0;
    const content = manifest.layers.map((layer, i) => {
      if (layer.mediaType !== 'application/vnd.oci.image.layer.v1.tar')
        throw new Error(`layer ${i} is not an uncompressed tar (${layer.mediaType})`);
      const storage = hex(storageIds[i]!);
      const written = hex(layer.digest);
      // Named by its storage ID: a cached blob buildah reused (or a push that hashed alike).
      if (written === storage && cached.has(storage)) {
        reused++;
        touch(join(this.cacheDir, `${storage}-${cached.get(storage)}`));
        return `sha256:${cached.get(storage)}`;
      }
      const entry = join(this.cacheDir, `${storage}-${written}`);
      if (!existsSync(entry)) {
        try {
          linkSync(join(blobs, written), entry);
        } catch {
          // another build cached it meanwhile
        }
      }
      return layer.digest;
    });
    const put = (value: unknown) => {
      const data = Buffer.from(JSON.stringify(value));
      const digest = createHash('sha256').update(data).digest('hex');
      writeFileSync(join(blobs, digest), data);
      return { digest: `sha256:${digest}`, size: data.length };
    };
    const newConfig = put({ ...config, rootfs: { ...config.rootfs, diff_ids: content } });
    const newManifest = put({ ...manifest, config: { ...manifest.config, ...newConfig } });
    writeFileSync(
      join(layout, 'index.json'),
      JSON.stringify({ ...index, manifests: [{ ...top, ...newManifest }] }),
    );
    return { reused, exported: manifest.layers.length - reused };
  }

  /** Drops cached layers no build used for `maxAgeMs` (each use touches its entry). */
  prune(maxAgeMs: number, nowMs: number): number {
    if (!existsSync(this.cacheDir)) return 0;
    let removed = 0;
    for (const name of readdirSync(this.cacheDir)) {
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

interface OciDescriptor {
  mediaType: string;
  digest: string;
  size: number;
}
interface OciIndex {
  manifests: OciDescriptor[];
}
interface OciManifest {
  config: OciDescriptor;
  layers: OciDescriptor[];
}

const HEX = /^[a-f0-9]{64}$/;

function hex(digest: string): string {
  const m = /^sha256:([a-f0-9]{64})$/.exec(digest);
  if (!m) throw new Error(`unexpected digest ${digest.slice(0, 80)}`);
  return m[1]!;
}

function touch(path: string): void {
  const now = new Date();
  try {
    utimesSync(path, now, now);
  } catch {
    // pruned meanwhile: the next build exports it again
  }
}
