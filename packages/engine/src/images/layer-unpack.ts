// Unpacks ONE vetted layer (layer-check.ts) into an empty dir, as an overlay lower of its own
// (layer-store.ts): a one-layer OCI layout naming exactly the vetted blob is handed to umoci
// (whiteouts applied, every path resolved inside the dir by filepath-securejoin, owners and modes
// kept: we run as root, so not --rootless); the layer's whiteouts become overlayfs whiteouts
// (overlay-whiteouts.ts); then the tree is checked once more for device nodes (a parser
// difference between our check and umoci cannot add one; the 0:0 whiteouts are ours) and
// measured (layer-scan.ts).
import { createHash } from 'node:crypto';
import { copyFileSync, linkSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CommandError, InvalidImageError } from '../errors.js';
import type { CommandRunner } from '../runner.js';
import type { LayerBlob } from './layer-check.js';
import { scanUnpackedLayer } from './layer-scan.js';
import { overlayWhiteouts } from './overlay-whiteouts.js';

const UNPACK_TIMEOUT_MS = 30 * 60_000;
const TAG = 'layer';

/**
 * Unpacks `blob` into `rootfs` (absent; made here), `lowers` being the unpacked layers below it,
 * bottom first. `work` is scratch space on the same filesystem. Returns the layer's apparent bytes.
 */
export async function unpackLayer(
  runner: CommandRunner,
  blob: LayerBlob,
  rootfs: string,
  work: string,
  lowers: readonly string[],
): Promise<number> {
  const layout = join(work, 'layout');
  writeLayout(layout, blob);
  await unpack(runner, layout, rootfs);
  await overlayWhiteouts(runner, rootfs, blob.whiteouts, lowers);
  return scanUnpackedLayer(runner, rootfs, blob.entries);
}

/** A one-layer OCI layout naming exactly the vetted blob (linked, or copied across filesystems). */
function writeLayout(layout: string, layer: LayerBlob): void {
  const blobs = join(layout, 'blobs', 'sha256');
  mkdirSync(blobs, { recursive: true, mode: 0o700 });
  const put = (data: Buffer) => {
    const hex = createHash('sha256').update(data).digest('hex');
    writeFileSync(join(blobs, hex), data);
    return { digest: `sha256:${hex}`, size: data.length };
  };
  const dest = join(blobs, layer.digest.slice('sha256:'.length));
  try {
    linkSync(layer.path, dest);
  } catch {
    copyFileSync(layer.path, dest);
  }
  // umoci gets a config of our own making: only what unpacking needs.
  const config = put(
    Buffer.from(
      JSON.stringify({
        architecture: 'amd64',
        os: 'linux',
        config: {},
        rootfs: { type: 'layers', diff_ids: [layer.diffId] },
      }),
    ),
  );
  const manifest = put(
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...config },
        layers: [{ mediaType: layer.mediaType, digest: layer.digest, size: layer.size }],
      }),
    ),
  );
  writeFileSync(join(layout, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}');
  writeFileSync(
    join(layout, 'index.json'),
    JSON.stringify({
      schemaVersion: 2,
      manifests: [
        {
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          ...manifest,
          annotations: { 'org.opencontainers.image.ref.name': TAG },
        },
      ],
    }),
  );
}

async function unpack(runner: CommandRunner, layout: string, rootfs: string): Promise<void> {
  try {
    await runner.run('umoci', ['raw', 'unpack', '--image', `${layout}:${TAG}`, rootfs], {
      timeoutMs: UNPACK_TIMEOUT_MS,
    });
  } catch (err) {
    if (!(err instanceof CommandError)) throw err;
    // umoci's own words name the layer member at fault; our temp paths are left out.
    const why = err.stderr
      .split('\n')
      .filter((l) => l.includes('⨯') || /error/i.test(l))
      .join(' ')
      .replaceAll(layout, '<layout>')
      .replaceAll(rootfs, '<rootfs>')
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, 300);
    throw new InvalidImageError(`bad image archive: layers could not be unpacked: ${why || 'umoci failed'}`);
  }
}
