// Import of `docker save` archives and OCI image layouts (issue 19 item 1: the old tar-based
// import wrote and deleted host files through symlinks in hostile layers). Steps:
//  1. the archive file is size-capped and extracted by our own reader: plain files and dirs only
//     (a layout dir our own builder wrote is read in place: importLayout);
//  2. its manifest names a config and layers (JSON read with O_NOFOLLOW, errors quote no content);
//  3. each layer is vetted (limits, names, hard links, device nodes, writes through symlinks of
//     the layers below) and hashed on one read;
//  4. each layer not stored yet (layer-store.ts: keyed by chain ID) is unpacked alone by umoci
//     into a dir of its own, an overlay lower with overlayfs whiteouts (layer-unpack.ts), and
//     checked once more for device nodes. A layer already stored (the base image under every
//     build, an unchanged dependency layer) is neither unpacked nor copied again (issue 15 bench).
// skopeo is not used for the docker-save conversion: 1.9 labels uncompressed layers tar+gzip
// (umoci then fails), and letting it gzip them instead tripled the time of a 340 MB import.
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidImageError } from '../errors.js';
import type { CommandRunner } from '../runner.js';
import { extractArchive, readArchive, readJsonFile, type ArchiveContents } from './archive-reader.js';
import type { ImportLimits } from './import-limits.js';
import { vetLayer, type LayerBlob } from './layer-check.js';
import { chainIdOf, LayerStore, type LayerMeta } from './layer-store.js';
import { unpackLayer } from './layer-unpack.js';

export interface ImportedImage extends ImageCommand {
  /** Layer paths as the image manifest records them (relative to the image's dir), bottom first. */
  layers: string[];
  env: string[];
  workingDir: string;
  /** Apparent bytes of all the image's layers. */
  sizeBytes: number;
  /** Lets the store prune the image's layers again (call once the image is committed). */
  release: () => void;
}

interface ImageConfig {
  architecture?: unknown;
  config?: { Env?: unknown; WorkingDir?: unknown; Entrypoint?: unknown; Cmd?: unknown };
  rootfs?: { diff_ids?: unknown };
}

const DEFAULT_ENV = ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'];

/** Imports the archive at tarPath. imageDir is the image's fresh temp dir (scratch space). */
export async function importArchive(
  tarPath: string,
  imageDir: string,
  runner: CommandRunner,
  limits: ImportLimits,
  layers: LayerStore,
): Promise<ImportedImage> {
  const size = statSync(tarPath).size;
  if (size > limits.maxArchiveBytes) {
    throw new InvalidImageError(`bad image archive: larger than ${limits.maxArchiveBytes} bytes`);
  }
  const unpacked = join(imageDir, 'archive');
  try {
    const contents = readArchive(await extractArchive(tarPath, unpacked, limits));
    return await importLayers(contents, imageDir, runner, limits, layers, false);
  } finally {
    rmSync(unpacked, { recursive: true, force: true });
  }
}

/**
 * Imports an OCI layout dir written by the platform's own builder (planes/builds: `buildah push
 * oci:`), read in place. Its config's diff IDs are believed for the layers already stored (they
 * are skipped unread: the builder named them by the hash it computed); every other layer is read,
 * vetted and unpacked as in importArchive, and must hash to its diff ID.
 */
export async function importLayout(
  layoutDir: string,
  imageDir: string,
  runner: CommandRunner,
  limits: ImportLimits,
  layers: LayerStore,
): Promise<ImportedImage> {
  const contents = readArchive({ root: layoutDir, aliases: new Map() });
  return importLayers(contents, imageDir, runner, limits, layers, true);
}

async function importLayers(
  contents: ArchiveContents,
  imageDir: string,
  runner: CommandRunner,
  limits: ImportLimits,
  store: LayerStore,
  trustDiffIds: boolean,
): Promise<ImportedImage> {
  const config = readJsonFile<ImageConfig>(contents.configPath, 'image config').value;
  const settings = runSettings(config);
  const claimed = trustDiffIds ? diffIdsOf(config, contents.layerPaths.length) : undefined;
  const chains: string[] = [];
  const created: string[] = [];
  const releases: Array<() => void> = [];
  const release = () => releases.forEach((r) => r());
  try {
    let below: LayerMeta | undefined;
    // The stored prefix of a trusted layout: not read at all.
    for (const diffId of claimed ?? []) {
      const meta = store.get(chainIdOf(below?.chainId, diffId));
      if (!meta) break;
      releases.push(store.hold([meta.chainId]));
      store.touch(meta.chainId);
      chains.push(meta.chainId);
      below = meta;
    }
    // Every layer to store is vetted before any is unpacked: a refused image writes nothing.
    const state = LayerStore.stateAfter(below);
    const vetted: Array<{ blob: LayerBlob; chainId: string; after: Omit<LayerMeta, 'sizeBytes'> }> = [];
    for (let i = chains.length, c = below?.chainId; i < contents.layerPaths.length; i++) {
      const blob = await vetLayer(contents.layerPaths[i]!, limits, state);
      if (claimed && claimed[i] !== blob.diffId)
        throw new InvalidImageError(`bad image archive: layer ${i} does not match its diff ID`);
      const chainId = chainIdOf(c, blob.diffId);
      const after = { chainId, diffId: blob.diffId, ...(c ? { parent: c } : {}) };
      vetted.push({ blob, chainId, after: { ...after, ...state, symlinks: [...state.symlinks] } });
      c = chainId;
    }
    for (const { blob, chainId, after } of vetted) {
      releases.push(store.hold([chainId]));
      if (store.get(chainId)) store.touch(chainId);
      else {
        const lowers = chains.map((c) => store.rootfs(c));
        await store.add(after, (rootfs, work) => unpackLayer(runner, blob, rootfs, work, lowers));
        created.push(chainId);
      }
      chains.push(chainId);
    }
    let size = 0;
    for (const c of chains) size += store.get(c)?.sizeBytes ?? 0;
    if (chains.length === 0) {
      // An image of no layers is an empty root (as umoci made it before layers were stored apart).
      mkdirSync(join(imageDir, 'layers', '000'), { recursive: true });
      return { layers: ['layers/000'], ...settings, sizeBytes: 0, release };
    }
    return { layers: chains.map((c) => LayerStore.manifestPath(c)), ...settings, sizeBytes: size, release };
  } catch (err) {
    release();
    // Layers this import stored for an image that will not be: gone again, unless in use meanwhile.
    store.discard(created);
    throw err;
  }
}

/** The config's diff IDs, when they are well-formed and one per layer (else nothing is skipped). */
function diffIdsOf(config: ImageConfig, count: number): string[] | undefined {
  const ids = config.rootfs?.diff_ids;
  if (!Array.isArray(ids) || ids.length !== count) return undefined;
  if (!ids.every((d) => typeof d === 'string' && /^sha256:[a-f0-9]{64}$/.test(d))) return undefined;
  return ids as string[];
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
