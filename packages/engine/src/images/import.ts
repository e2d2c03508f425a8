// Import of `docker save` archives and OCI image layouts. Layers are applied in order into one
// directory, honouring whiteouts (`.wh.NAME` deletes NAME below; `.wh..wh..opq` empties the
// directory below), so the stored image is a single overlayfs lower with no whiteout files.
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { InvalidImageError } from '../errors.js';
import type { CommandRunner } from '../runner.js';

export interface ImportedImage {
  layers: string[];
  env: string[];
  workingDir: string;
}

interface ImageConfig {
  config?: { Env?: string[]; WorkingDir?: string };
}

/** Unpacks tarPath into imageDir (layers/000 + returns the config). */
export async function importArchive(
  tarPath: string,
  imageDir: string,
  runner: CommandRunner,
): Promise<ImportedImage> {
  const unpacked = join(imageDir, 'archive');
  mkdirSync(unpacked, { recursive: true });
  try {
    await runner.run('tar', ['-xf', tarPath, '-C', unpacked, '--no-same-owner']);
  } catch (err) {
    // Bad input, not an engine failure: the API answers 400, not 500.
    throw new InvalidImageError(
      `bad image archive: not a readable tar file (${(err as Error).message.slice(0, 200)})`,
    );
  }
  const { layerFiles, config } = readArchive(unpacked);
  const rootfs = join(imageDir, 'layers', '000');
  mkdirSync(rootfs, { recursive: true });
  for (const layer of layerFiles) await applyLayer(layer, rootfs, runner);
  rmSync(unpacked, { recursive: true, force: true });
  return {
    layers: ['layers/000'],
    env: config.config?.Env ?? ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
    workingDir: config.config?.WorkingDir || '/',
  };
}

function readJson<T>(path: string): T {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch (err) {
    throw new InvalidImageError(`bad image archive: cannot read ${path}: ${(err as Error).message}`);
  }
}

/** Inside the archive, never outside it (paths come from untrusted JSON). */
function inside(root: string, rel: string): string {
  const p = normalize(join(root, rel));
  if (!p.startsWith(`${root}/`)) throw new InvalidImageError(`bad image archive: path escapes: ${rel}`);
  return p;
}

function blob(root: string, digest: string): string {
  const [alg, hex] = digest.split(':');
  if (!alg || !hex || !/^[a-f0-9]+$/.test(hex)) throw new InvalidImageError(`bad digest ${digest}`);
  return inside(root, join('blobs', alg, hex));
}

function readArchive(root: string): { layerFiles: string[]; config: ImageConfig } {
  // docker save (also written by Docker 25+ next to the OCI layout): manifest.json.
  if (existsSync(join(root, 'manifest.json'))) {
    const manifests = readJson<{ Config: string; Layers: string[] }[]>(join(root, 'manifest.json'));
    const m = manifests[0];
    if (!m) throw new InvalidImageError('bad image archive: empty manifest.json');
    return {
      layerFiles: m.Layers.map((l) => inside(root, l)),
      config: readJson<ImageConfig>(inside(root, m.Config)),
    };
  }
  if (existsSync(join(root, 'index.json'))) {
    let desc = readJson<{ manifests?: { digest: string; mediaType?: string }[] }>(join(root, 'index.json'));
    // An index may point at a nested index (multi-arch); follow the first entry down.
    for (let depth = 0; depth < 4; depth++) {
      const first = desc.manifests?.[0];
      if (!first) throw new InvalidImageError('bad OCI layout: no manifests');
      const next = readJson<{
        manifests?: { digest: string }[];
        config?: { digest: string };
        layers?: { digest: string }[];
      }>(blob(root, first.digest));
      if (next.layers && next.config) {
        return {
          layerFiles: next.layers.map((l) => blob(root, l.digest)),
          config: readJson<ImageConfig>(blob(root, next.config.digest)),
        };
      }
      desc = next;
    }
  }
  throw new InvalidImageError('not a docker-save archive or OCI layout (no manifest.json or index.json)');
}

async function applyLayer(layerTar: string, rootfs: string, runner: CommandRunner): Promise<void> {
  // GNU tar detects gzip on its own; it also refuses absolute and ".." member names.
  const { stdout } = await runner.run('tar', ['-tf', layerTar]);
  for (const raw of stdout.split('\n')) {
    const name = raw.replace(/^\.\//, '').replace(/\/$/, '');
    const base = name.slice(name.lastIndexOf('/') + 1);
    if (!base.startsWith('.wh.')) continue;
    const dir = dirname(name);
    const target = dir === '.' ? rootfs : inside(rootfs, dir);
    if (base === '.wh..wh..opq') {
      if (existsSync(target)) {
        for (const entry of readdirSync(target))
          rmSync(join(target, entry), { recursive: true, force: true });
      }
    } else {
      rmSync(inside(rootfs, join(dir, base.slice(4))), { recursive: true, force: true });
    }
  }
  await runner.run('tar', [
    '-xf',
    layerTar,
    '-C',
    rootfs,
    '--numeric-owner',
    '--same-owner',
    '--same-permissions',
    '--exclude=.wh.*',
  ]);
}
