// Import of `docker save` archives and OCI image layouts (issue 19 item 1: the old tar-based
// import wrote and deleted host files through symlinks in hostile layers). Steps:
//  1. the archive file is size-capped and extracted by our own reader: plain files and dirs only;
//  2. its manifest names a config and layers (JSON read with O_NOFOLLOW, errors quote no content);
//  3. each layer is vetted (limits, names, hard links, device nodes) and hashed on one read;
//  4. a fresh OCI layout is written from exactly those blobs (renames, no copies) and umoci, made
//     for this job, unpacks it: whiteouts applied, every path resolved inside the rootfs
//     (filepath-securejoin), ownership and modes kept (we run as root, so not --rootless);
//  5. device nodes in the result are checked once more (a parser difference cannot add one).
// The stored image stays a single overlayfs lower dir, layers/000, with no whiteout files.
// skopeo is not used for the docker-save conversion: 1.9 labels uncompressed layers tar+gzip
// (umoci then fails), and letting it gzip them instead tripled the time of a 340 MB import.
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CommandError, InvalidImageError } from '../errors.js';
import type { CommandRunner } from '../runner.js';
import { extractArchive, readArchive, readJsonFile } from './archive-reader.js';
import type { ImportLimits } from './import-limits.js';
import { harmlessDevice, newLayerState, vetLayer, type LayerBlob } from './layer-check.js';

export interface ImportedImage extends ImageCommand {
  layers: string[];
  env: string[];
  workingDir: string;
}

interface ImageConfig {
  architecture?: unknown;
  config?: { Env?: unknown; WorkingDir?: unknown; Entrypoint?: unknown; Cmd?: unknown };
}

const DEFAULT_ENV = ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'];
const UNPACK_TIMEOUT_MS = 30 * 60_000;
const TAG = 'import';

/** Unpacks tarPath into imageDir (layers/000 + returns the config). imageDir is a fresh temp dir. */
export async function importArchive(
  tarPath: string,
  imageDir: string,
  runner: CommandRunner,
  limits: ImportLimits,
): Promise<ImportedImage> {
  const size = statSync(tarPath).size;
  if (size > limits.maxArchiveBytes) {
    throw new InvalidImageError(`bad image archive: larger than ${limits.maxArchiveBytes} bytes`);
  }
  const unpacked = join(imageDir, 'archive');
  const layout = join(imageDir, 'layout');
  try {
    const contents = readArchive(await extractArchive(tarPath, unpacked, limits));
    const config = readJsonFile<ImageConfig>(contents.configPath, 'image config');
    const state = newLayerState();
    const blobs: LayerBlob[] = [];
    for (const path of contents.layerPaths) blobs.push(await vetLayer(path, limits, state));
    const settings = runSettings(config.value);
    // umoci gets a config of our own making: only what unpacking needs, from checked values.
    const arch = typeof config.value.architecture === 'string' ? config.value.architecture : 'amd64';
    const cleanConfig = {
      architecture: arch.slice(0, 32),
      os: 'linux',
      config: { Env: settings.env, WorkingDir: settings.workingDir },
      // Entrypoint/Cmd are not needed to unpack; they are kept in the store's manifest.
      rootfs: { type: 'layers', diff_ids: blobs.map((b) => b.diffId) },
    };
    writeLayout(layout, Buffer.from(JSON.stringify(cleanConfig)), blobs);
    mkdirSync(join(imageDir, 'layers'));
    const rootfs = join(imageDir, 'layers', '000');
    await unpack(runner, layout, rootfs);
    await refuseDevices(runner, rootfs);
    return { layers: ['layers/000'], ...settings };
  } finally {
    rmSync(unpacked, { recursive: true, force: true });
    rmSync(layout, { recursive: true, force: true });
  }
}

/** The image's own command (Entrypoint then Cmd), what a job task runs (apps/platform planes/jobs). */
export interface ImageCommand {
  entrypoint?: string[];
  cmd?: string[];
}

function stringList(value: unknown, field: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every((e) => typeof e === 'string') || value.length > 256) {
    throw new InvalidImageError(`bad image archive: config ${field} is not a list of strings`);
  }
  return value as string[];
}

function runSettings(config: ImageConfig): { env: string[]; workingDir: string } & ImageCommand {
  const entrypoint = stringList(config.config?.Entrypoint, 'Entrypoint');
  const cmd = stringList(config.config?.Cmd, 'Cmd');
  const env = config.config?.Env;
  const wd = config.config?.WorkingDir;
  if (env !== undefined && (!Array.isArray(env) || !env.every((e) => typeof e === 'string'))) {
    throw new InvalidImageError('bad image archive: config Env is not a list of strings');
  }
  if (wd !== undefined && typeof wd !== 'string') {
    throw new InvalidImageError('bad image archive: config WorkingDir is not a string');
  }
  return {
    env: (env as string[] | undefined) ?? DEFAULT_ENV,
    workingDir: wd || '/',
    ...(entrypoint ? { entrypoint } : {}),
    ...(cmd ? { cmd } : {}),
  };
}

/** An OCI layout naming exactly the vetted blobs; the layer files are moved, not copied. */
function writeLayout(layout: string, config: Buffer, layers: LayerBlob[]): void {
  const blobs = join(layout, 'blobs', 'sha256');
  mkdirSync(blobs, { recursive: true, mode: 0o700 });
  const put = (data: Buffer) => {
    const hex = createHash('sha256').update(data).digest('hex');
    writeFileSync(join(blobs, hex), data);
    return { digest: `sha256:${hex}`, size: data.length };
  };
  for (const l of layers) {
    const dest = join(blobs, l.digest.slice('sha256:'.length));
    // One file may be named twice (a layer repeated); it is moved once.
    if (!existsSync(dest)) renameSync(l.path, dest);
  }
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...put(config) },
      layers: layers.map((l) => ({ mediaType: l.mediaType, digest: l.digest, size: l.size })),
    }),
  );
  const m = put(manifest);
  writeFileSync(join(layout, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}');
  writeFileSync(
    join(layout, 'index.json'),
    JSON.stringify({
      schemaVersion: 2,
      manifests: [
        {
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          ...m,
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

/** The unpacked tree holds no device node the layer check would have refused. */
async function refuseDevices(runner: CommandRunner, rootfs: string): Promise<void> {
  const { stdout } = await runner.run('find', [
    rootfs,
    '-xdev',
    '(',
    '-type',
    'b',
    '-o',
    '-type',
    'c',
    ')',
    '-printf',
    '%y %P\\0',
  ]);
  for (const line of stdout.split('\0').filter(Boolean)) {
    const path = line.slice(2);
    const rdev = lstatSync(join(rootfs, path)).rdev;
    const major = (rdev >> 8) & 0xfff;
    const minor = (rdev & 0xff) | ((rdev >> 12) & 0xfff00);
    if (!harmlessDevice(line.startsWith('b') ? 'block' : 'char', major, minor)) {
      throw new InvalidImageError(
        `bad image archive: device node ${JSON.stringify(path.slice(0, 200))} is not allowed`,
      );
    }
  }
}
