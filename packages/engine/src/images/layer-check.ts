// Vets one image layer before umoci unpacks it (issue 19 item 1): counts members and content bytes
// against the import limits, refuses names that leave the image (absolute, `..`), hard links
// whose target does so, and device nodes other than the harmless character devices a root
// filesystem export carries (/dev/null and friends: runc mounts its own /dev over them anyway).
// Hashes the blob on the same read, so the OCI layout handed to umoci names exactly the bytes
// that were checked. umoci's own extraction keeps every path inside the rootfs (securejoin), so
// symlinks in layers are allowed: they are ordinary in images.
import { createHash, type Hash } from 'node:crypto';
import { constants, createReadStream, openSync } from 'node:fs';
import { Transform, pipeline } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { InvalidImageError } from '../errors.js';
import { compressionOf } from './archive-reader.js';
import type { ImportLimits } from './import-limits.js';
import { memberPath, walkTar } from './tar-entries.js';

export interface LayerBlob {
  path: string;
  digest: string;
  /** Digest of the uncompressed tar (the image config's rootfs.diff_ids entry). */
  diffId: string;
  size: number;
  mediaType: string;
  /** Member paths of the layer's OCI whiteouts (`.wh.<name>`, `.wh..wh..opq`), in tar order. */
  whiteouts: string[];
  /** Members of this layer's tar. */
  entries: number;
}

/** What the check carries from layer to layer of one image. */
export interface LayerState {
  entries: number;
  bytes: number;
  /** Paths that are symlinks after the layers so far. */
  symlinks: Set<string>;
}

export const newLayerState = (): LayerState => ({ entries: 0, bytes: 0, symlinks: new Set() });

/**
 * A member whose parent path runs through a symlink of an earlier member would be written (or,
 * as a whiteout, deleted) wherever that link points: the attack of issue 19 item 1. Layers made by
 * diffing filesystems never contain one (they record where files really are), so it is refused.
 */
function throughSymlink(path: string, symlinks: Set<string>): string | undefined {
  if (symlinks.size === 0) return undefined;
  let at = path.indexOf('/');
  while (at > 0) {
    const prefix = path.slice(0, at);
    if (symlinks.has(prefix)) return prefix;
    at = path.indexOf('/', at + 1);
  }
  return undefined;
}

/** `path` (when self) and, when below, everything under it is no longer a symlink. */
function forget(symlinks: Set<string>, path: string, self: boolean, below: boolean): void {
  if (self) symlinks.delete(path);
  if (!below) return;
  const under = path === '' ? '' : `${path}/`;
  for (const s of symlinks) if (s.startsWith(under)) symlinks.delete(s);
}

function track(state: LayerState, name: string, type: string): void {
  const slash = name.lastIndexOf('/');
  const base = name.slice(slash + 1);
  const dir = slash < 0 ? '' : name.slice(0, slash);
  if (base === '.wh..wh..opq') forget(state.symlinks, dir, false, true);
  else if (base.startsWith('.wh.'))
    forget(state.symlinks, dir ? `${dir}/${base.slice(4)}` : base.slice(4), true, true);
  else if (type === 'symlink') {
    forget(state.symlinks, name, false, true);
    state.symlinks.add(name);
  }
  // A directory replaces a symlink of its name (umoci does not keep dirlinks) but keeps its contents.
  else forget(state.symlinks, name, true, type !== 'dir');
}

/** major:minor of character devices a rootfs may hold (Linux devices.txt). */
const HARMLESS_CHAR_DEVICES = new Set(['1:3', '1:5', '1:7', '1:8', '1:9', '5:0', '5:1', '5:2']);

export function harmlessDevice(type: 'char' | 'block', major: number, minor: number): boolean {
  return type === 'char' && HARMLESS_CHAR_DEVICES.has(`${major}:${minor}`);
}

export async function vetLayer(path: string, limits: ImportLimits, state: LayerState): Promise<LayerBlob> {
  const kind = compressionOf(path);
  if (kind === 'zstd')
    throw new InvalidImageError('bad image archive: zstd-compressed layers are not supported');
  // One read: the blob's digest (what the manifest names) and the uncompressed tar's digest (the
  // config's diff_id, which umoci checks) are taken on the way through the scan.
  const digest = createHash('sha256');
  const diffId = createHash('sha256');
  let size = 0;
  const whiteouts: string[] = [];
  const entriesBefore = state.entries;
  const tap = (hash: Hash, count: boolean) =>
    new Transform({
      transform(chunk: Buffer, _enc, done) {
        hash.update(chunk);
        if (count) size += chunk.length;
        done(null, chunk);
      },
    });
  const raw = createReadStream('', { fd: openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW) });
  const source: AsyncIterable<Buffer> =
    kind === 'gzip'
      ? pipeline(raw, tap(digest, true), createGunzip(), tap(diffId, false), () => undefined)
      : pipeline(raw, tap(digest, true), () => undefined);
  try {
    await walkTar(source, (entry) => {
      if (++state.entries > limits.maxEntries) {
        throw new InvalidImageError(
          `bad image archive: more than ${limits.maxEntries} members in the layers`,
        );
      }
      state.bytes += entry.size;
      if (state.bytes > limits.maxUnpackedBytes) {
        throw new InvalidImageError(
          `bad image archive: layers unpack to more than ${limits.maxUnpackedBytes} bytes`,
        );
      }
      const name = memberPath(entry.name);
      const link = entry.type === 'hardlink' ? memberPath(entry.linkname) : '';
      const via = throughSymlink(name, state.symlinks) ?? throughSymlink(`${link}/`, state.symlinks);
      if (via !== undefined) {
        throw new InvalidImageError(
          `bad image archive: member ${JSON.stringify(name.slice(0, 200))} goes through the symlink ` +
            `${JSON.stringify(via.slice(0, 200))} of an earlier member`,
        );
      }
      // trusted.* is overlayfs's own namespace (opaque dirs, redirects, metacopy): an image must
      // not steer the overlay its layers become a lower of.
      const xattr = entry.xattrs.find((x) => x.startsWith('trusted.'));
      if (xattr !== undefined) {
        throw new InvalidImageError(
          `bad image archive: member ${JSON.stringify(name.slice(0, 200))} sets the xattr ${JSON.stringify(xattr.slice(0, 100))}`,
        );
      }
      track(state, name, entry.type);
      if (name.slice(name.lastIndexOf('/') + 1).startsWith('.wh.')) whiteouts.push(name);
      if (
        (entry.type === 'char' || entry.type === 'block') &&
        !harmlessDevice(entry.type, entry.devmajor, entry.devminor)
      ) {
        throw new InvalidImageError(
          `bad image archive: device node ${JSON.stringify(entry.name.slice(0, 200))} ` +
            `(${entry.type} ${entry.devmajor}:${entry.devminor}) is not allowed in an image`,
        );
      }
    });
  } catch (err) {
    raw.destroy();
    if (err instanceof InvalidImageError) throw err;
    throw new InvalidImageError(
      `bad image archive: unreadable layer (${(err as Error).message.slice(0, 200)})`,
    );
  }
  // walkTar read to the end, so both digests cover the whole stream.
  const blob = `sha256:${digest.digest('hex')}`;
  return {
    path,
    digest: blob,
    diffId: kind === 'gzip' ? `sha256:${diffId.digest('hex')}` : blob,
    size,
    mediaType: `application/vnd.oci.image.layer.v1.tar${kind === 'gzip' ? '+gzip' : ''}`,
    whiteouts,
    entries: state.entries - entriesBefore,
  };
}
