import { createHash } from 'node:crypto';
import {
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';

/**
 * Hands a built image to the engine without exporting again the layers exported before (issue 15
 * bench: a warm rebuild spent ~12 s gzipping and re-importing the whole 340 MB image).
 *
 * `buildah push oci:<dir>` skips a layer whose blob the layout already holds under the layer's
 * diff ID (the digest buildah's storage recorded for it). So each exported layer blob is kept in a
 * cache named by its diff ID, and hard-linked into the next build's fresh layout before the push.
 * buildah 1.28 gzips every layer it writes to an `oci:` layout (`--disable-compression` is
 * ignored there), so a cached blob may be gzipped; the engine's import reads a layer only when its
 * store lacks it, and then un-gzips, vets and hashes it and checks the hash against the diff ID
 * (packages/engine images/import.ts importLayout). When the bottom layer (the base image, the
 * big one) is not cached yet, the push goes to a `dir:` layout instead, which honours
 * `--disable-compression`, and is turned into an OCI layout here.
 */
export class LayerExport {
  constructor(private readonly cacheDir: string) {}

  /** A fresh layout dir holding the cached blobs of `diffIds`; returns the ids not cached. */
  prepare(layout: string, diffIds: readonly string[]): string[] {
    const blobs = join(layout, 'blobs', 'sha256');
    mkdirSync(blobs, { recursive: true, mode: 0o700 });
    mkdirSync(this.cacheDir, { recursive: true, mode: 0o700 });
    return diffIds.filter((id) => {
      try {
        linkSync(join(this.cacheDir, hex(id)), join(blobs, hex(id)));
        touch(join(this.cacheDir, hex(id)));
        return false;
      } catch (err) {
        return (err as NodeJS.ErrnoException).code !== 'EEXIST'; // EEXIST: a layer named twice
      }
    });
  }

  /** After the push: each layer's blob joins the cache under its diff ID. */
  finish(layout: string, diffIds: readonly string[]): void {
    const blobs = join(layout, 'blobs', 'sha256');
    const index = readJson<{ manifests: Array<{ digest: string }> }>(join(layout, 'index.json'));
    const top = index.manifests[0];
    if (!top || index.manifests.length !== 1) throw new Error('the pushed layout names no single image');
    const manifest = readJson<{ layers: Array<{ digest: string }> }>(join(blobs, hex(top.digest)));
    if (manifest.layers.length !== diffIds.length) throw new Error('the pushed image has other layers');
    manifest.layers.forEach((layer, i) => {
      const entry = join(this.cacheDir, hex(diffIds[i]!));
      if (existsSync(entry)) return;
      try {
        linkSync(join(blobs, hex(layer.digest)), entry);
      } catch {
        // another build cached it meanwhile
      }
    });
  }

  /**
   * Turns what `buildah push dir:<from>` wrote (blobs named by hex digest, manifest.json) into the
   * OCI layout `layout` (blobs renamed, not copied).
   */
  static layoutFromDir(from: string, layout: string): void {
    const blobs = join(layout, 'blobs', 'sha256');
    mkdirSync(blobs, { recursive: true, mode: 0o700 });
    for (const name of readdirSync(from)) {
      if (!HEX.test(name)) continue;
      if (!existsSync(join(blobs, name))) renameSync(join(from, name), join(blobs, name));
    }
    const manifest = readFileSync(join(from, 'manifest.json'));
    const digest = createHash('sha256').update(manifest).digest('hex');
    writeFileSync(join(blobs, digest), manifest);
    const mediaType = (JSON.parse(manifest.toString('utf8')) as { mediaType?: string }).mediaType;
    writeFileSync(join(layout, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}');
    writeFileSync(
      join(layout, 'index.json'),
      JSON.stringify({
        schemaVersion: 2,
        manifests: [
          {
            mediaType: mediaType ?? 'application/vnd.oci.image.manifest.v1+json',
            digest: `sha256:${digest}`,
            size: manifest.length,
          },
        ],
      }),
    );
    rmSync(from, { recursive: true, force: true });
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

const HEX = /^[a-f0-9]{64}$/;

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
    // pruned meanwhile: the next build exports it again
  }
}
