// The outer image archive (docker save or an OCI layout tar): extracted by our own reader into a
// fresh directory, plain files and directories only (issue 19 item 1: a symlinked manifest.json
// leaked a host file; a symlink among the members could be written through). With no link of any
// kind in the tree, a path inside it can only resolve inside it; JSON files are still opened with
// O_NOFOLLOW and size-capped, and their parse errors never quote their content.
import {
  constants,
  createReadStream,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  closeSync,
  fstatSync,
} from 'node:fs';
import { open } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { pipeline } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { InvalidImageError } from '../errors.js';
import type { ImportLimits } from './import-limits.js';
import { memberPath, walkTar } from './tar-entries.js';

/** What an archive names: its image config and its layer files (absolute paths), bottom first. */
export interface ArchiveContents {
  configPath: string;
  layerPaths: string[];
}

const MAX_JSON_BYTES = 4 << 20;
const GZIP = [0x1f, 0x8b];
const ZSTD = [0x28, 0xb5, 0x2f, 0xfd];

/** Compression of a file, from its first bytes. */
export function compressionOf(path: string): 'gzip' | 'zstd' | 'none' {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const head = Buffer.alloc(4);
    const n = readSync(fd, head, 0, 4, 0);
    if (n >= 2 && GZIP.every((b, i) => head[i] === b)) return 'gzip';
    if (n >= 4 && ZSTD.every((b, i) => head[i] === b)) return 'zstd';
    return 'none';
  } finally {
    closeSync(fd);
  }
}

/** The decompressed bytes of a (possibly gzip-compressed) tar file. */
export function tarStream(path: string): AsyncIterable<Buffer> {
  const kind = compressionOf(path);
  if (kind === 'zstd') throw new InvalidImageError('bad image archive: zstd-compressed tar is not supported');
  const raw = createReadStream('', { fd: openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW) });
  return kind === 'gzip' ? pipeline(raw, createGunzip(), () => undefined) : raw;
}

/** An extracted outer archive: its dir, and its symlinks as name → target (never made on disk). */
export interface ExtractedArchive {
  root: string;
  aliases: Map<string, string>;
}

/**
 * Extracts the archive's plain files and directories into `dest` (a new dir). A symlink member is
 * kept only as an alias, and only when its target, taken relative to its own dir, is inside the
 * archive: `docker save` links identical layers (`<id>/layer.tar -> ../<other>/layer.tar`). Any
 * other member (hard link, device, a symlink leading out) is refused.
 */
export async function extractArchive(
  tarPath: string,
  dest: string,
  limits: ImportLimits,
): Promise<ExtractedArchive> {
  mkdirSync(dest, { recursive: true, mode: 0o700 });
  const aliases = new Map<string, string>();
  let entries = 0;
  let bytes = 0;
  await walkTar(tarStream(tarPath), async (entry, data) => {
    if (++entries > limits.maxEntries) {
      throw new InvalidImageError(`bad image archive: more than ${limits.maxEntries} members`);
    }
    const rel = memberPath(entry.name);
    if (entry.type === 'dir') {
      if (rel) mkdirSync(join(dest, rel), { recursive: true, mode: 0o700 });
      return;
    }
    if (entry.type === 'symlink' && rel !== '') {
      const target = posix.normalize(posix.join(posix.dirname(rel), entry.linkname));
      if (entry.linkname.startsWith('/') || target === '..' || target.startsWith('../')) {
        throw new InvalidImageError(
          `bad image archive: ${JSON.stringify(entry.name.slice(0, 200))} is a symlink leading out of the archive`,
        );
      }
      aliases.set(rel, target);
      return;
    }
    if (entry.type !== 'file' || rel === '') {
      throw new InvalidImageError(
        `bad image archive: ${JSON.stringify(entry.name.slice(0, 200))} is a ${entry.type}; ` +
          'an image archive holds only files and directories',
      );
    }
    bytes += entry.size;
    if (bytes > limits.maxUnpackedBytes) {
      throw new InvalidImageError(`bad image archive: more than ${limits.maxUnpackedBytes} bytes unpacked`);
    }
    const path = join(dest, rel);
    mkdirSync(join(path, '..'), { recursive: true, mode: 0o700 });
    // O_EXCL: a second member of the same name is refused rather than overwriting the first.
    const fh = await open(
      path,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    ).catch((err: NodeJS.ErrnoException) => {
      throw new InvalidImageError(
        `bad image archive: cannot write member ${JSON.stringify(rel.slice(0, 200))} (${err.code})`,
      );
    });
    try {
      await data(async (piece) => {
        await fh.write(piece);
      });
    } finally {
      await fh.close();
    }
  });
  return { root: dest, aliases };
}

/** Reads a JSON file of the extracted archive: a regular file, not a link, bounded; errors quote no content. */
export function readJsonFile<T>(path: string, rel: string): { value: T; bytes: Buffer } {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    throw new InvalidImageError(
      `bad image archive: cannot open ${rel} (${(err as NodeJS.ErrnoException).code})`,
    );
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new InvalidImageError(`bad image archive: ${rel} is not a file`);
    if (st.size > MAX_JSON_BYTES)
      throw new InvalidImageError(`bad image archive: ${rel} is larger than 4 MiB`);
    const bytes = Buffer.alloc(st.size);
    if (st.size > 0) readSync(fd, bytes, 0, st.size, 0);
    try {
      return { value: JSON.parse(bytes.toString('utf8')) as T, bytes };
    } catch {
      throw new InvalidImageError(`bad image archive: ${rel} is not valid JSON`);
    }
  } finally {
    closeSync(fd);
  }
}

/** A member the manifest names: a clean relative path to a regular file in the archive. */
function member(archive: ExtractedArchive, name: unknown, what: string): string {
  if (typeof name !== 'string') throw new InvalidImageError(`bad image archive: ${what} is not a path`);
  let rel = memberPath(name);
  // Through the archive's own links (bounded: a loop is no file).
  for (let hops = 0; hops < 8 && archive.aliases.has(rel); hops++) rel = archive.aliases.get(rel)!;
  const path = join(archive.root, rel);
  let isFile = false;
  try {
    isFile = lstatSync(path).isFile();
  } catch {
    /* reported below */
  }
  if (!rel || !isFile)
    throw new InvalidImageError(
      `bad image archive: ${what} ${JSON.stringify(name.slice(0, 200))} is missing`,
    );
  return path;
}

function blobPath(root: ExtractedArchive, digest: unknown): string {
  const m = typeof digest === 'string' ? /^(sha256|sha512):([a-f0-9]{64,128})$/.exec(digest) : null;
  if (!m)
    throw new InvalidImageError(
      `bad image archive: bad digest ${JSON.stringify(String(digest).slice(0, 200))}`,
    );
  return member(root, `blobs/${m[1]}/${m[2]}`, 'blob');
}

/** The config and layers of an extracted docker-save archive or OCI layout. */
export function readArchive(root: ExtractedArchive): ArchiveContents {
  const has = (f: string) => {
    try {
      return lstatSync(join(root.root, f)).isFile() || root.aliases.has(f);
    } catch {
      return root.aliases.has(f);
    }
  };
  // docker save (also written by Docker 25+ next to the OCI layout): manifest.json.
  if (has('manifest.json')) {
    const manifests = readJsonFile<{ Config?: unknown; Layers?: unknown }[]>(
      member(root, 'manifest.json', 'manifest'),
      'manifest.json',
    ).value;
    const m = Array.isArray(manifests) ? manifests[0] : undefined;
    if (!m || !Array.isArray(m.Layers))
      throw new InvalidImageError('bad image archive: manifest.json names no image');
    return {
      configPath: member(root, m.Config, 'config'),
      layerPaths: m.Layers.map((l) => member(root, l, 'layer')),
    };
  }
  if (has('index.json')) {
    type Desc = {
      manifests?: { digest?: unknown }[];
      config?: { digest?: unknown };
      layers?: { digest?: unknown }[];
    };
    let desc = readJsonFile<Desc>(member(root, 'index.json', 'index'), 'index.json').value;
    // An index may point at a nested index (multi-arch); follow the first entry down.
    for (let depth = 0; depth < 4; depth++) {
      const first = desc.manifests?.[0];
      if (!first) throw new InvalidImageError('bad OCI layout: no manifests');
      const next = readJsonFile<Desc>(blobPath(root, first.digest), 'manifest blob').value;
      if (Array.isArray(next.layers) && next.config) {
        return {
          configPath: blobPath(root, next.config.digest),
          layerPaths: next.layers.map((l) => blobPath(root, l.digest)),
        };
      }
      desc = next;
    }
    throw new InvalidImageError('bad OCI layout: indexes nested too deep');
  }
  throw new InvalidImageError('not a docker-save archive or OCI layout (no manifest.json or index.json)');
}
