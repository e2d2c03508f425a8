// Content-addressed layers of the image store (issue 15 bench: a warm rebuild re-imported the whole
// 340 MB base every time). Each vetted, unpacked layer lives once under <images>/.layers/<chainID>,
// in overlayfs form (overlay-whiteouts.ts), and every image naming it uses that dir as one of its
// overlay lowers. The key is the OCI chain ID (the layer's diff ID over the chain below it), not
// the diff ID alone: what an unpacked layer holds (an opaque dir's whiteouts) and what the vetting
// of the layers above it needs (symlinks so far, member and byte counts) depend on the chain.
// A layer is built in a temp dir and renamed into place; it is never written again.
import { createHash } from 'node:crypto';
import {
  existsSync,
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
import type { LayerState } from './layer-check.js';

export interface LayerMeta {
  chainId: string;
  diffId: string;
  /** Chain ID of the layer below (absent for the bottom layer). */
  parent?: string;
  /** Apparent bytes of this layer's dir. */
  sizeBytes: number;
  /** The layer check's state after this chain (layer-check.ts): what vetting the next layer needs. */
  entries: number;
  bytes: number;
  symlinks: string[];
}

const DIGEST = /^sha256:([a-f0-9]{64})$/;
/** Manifest paths are relative to the image's dir, a sibling of .layers. */
const REL = /^\.\.\/\.layers\/([a-f0-9]{64})\/rootfs$/;

/** OCI chain ID: the bottom layer's is its diff ID, each next one hashes "<parent> <diffID>". */
export function chainIdOf(parent: string | undefined, diffId: string): string {
  if (!parent) return diffId;
  return `sha256:${createHash('sha256').update(`${parent} ${diffId}`).digest('hex')}`;
}

export function hexOf(digest: string): string {
  const m = DIGEST.exec(digest);
  if (!m) throw new Error(`not a sha256 digest: ${digest.slice(0, 80)}`);
  return m[1]!;
}

export class LayerStore {
  /** Chains an import of this process is using (never pruned, whatever their age). */
  private readonly held = new Map<string, number>();
  /** Temp dirs of this process's imports in progress. */
  private readonly building = new Set<string>();

  constructor(readonly dir: string) {}

  /** The layer's path as an image manifest records it. */
  static manifestPath(chainId: string): string {
    return `../.layers/${hexOf(chainId)}/rootfs`;
  }

  /** Chain IDs named by manifest layer paths (legacy `layers/000` paths name none). */
  static chainsOf(manifestLayers: readonly string[]): string[] {
    return manifestLayers.flatMap((l) => {
      const m = REL.exec(l);
      return m ? [`sha256:${m[1]}`] : [];
    });
  }

  rootfs(chainId: string): string {
    return join(this.dir, hexOf(chainId), 'rootfs');
  }

  /** The stored layer's record, or undefined (absent or half-written: a crash leaves a temp dir). */
  get(chainId: string): LayerMeta | undefined {
    try {
      const meta = JSON.parse(
        readFileSync(join(this.dir, hexOf(chainId), 'layer.json'), 'utf8'),
      ) as LayerMeta;
      return meta.chainId === chainId ? meta : undefined;
    } catch {
      return undefined;
    }
  }

  /** Marks a chain as used now: a prune in another process spares recently used layers. */
  touch(chainId: string): void {
    const now = new Date();
    try {
      utimesSync(join(this.dir, hexOf(chainId), 'layer.json'), now, now);
    } catch {
      // gone meanwhile: the import that needs it finds out when it reads it
    }
  }

  /** Keeps `chainIds` from this process's prunes until the returned release is called. */
  hold(chainIds: readonly string[]): () => void {
    for (const c of chainIds) this.held.set(c, (this.held.get(c) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const c of chainIds) {
        const n = (this.held.get(c) ?? 1) - 1;
        if (n > 0) this.held.set(c, n);
        else this.held.delete(c);
      }
    };
  }

  /**
   * Stores a layer: `fill(rootfs)` unpacks it into a fresh dir, then it is renamed into place.
   * If another import stored the same chain meanwhile, theirs is kept (same content by its key).
   */
  async add(
    meta: Omit<LayerMeta, 'sizeBytes'>,
    fill: (rootfs: string, tmp: string) => Promise<number>,
  ): Promise<LayerMeta> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const dest = join(this.dir, hexOf(meta.chainId));
    const tmp = join(this.dir, `.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`);
    mkdirSync(tmp, { mode: 0o700 });
    this.building.add(tmp);
    try {
      const sizeBytes = await fill(join(tmp, 'rootfs'), tmp);
      const full: LayerMeta = { ...meta, sizeBytes };
      writeFileSync(join(tmp, 'layer.json'), JSON.stringify(full));
      if (existsSync(dest)) rmSync(dest, { recursive: true, force: true }); // a crash's leftover without layer.json
      try {
        renameSync(tmp, dest);
      } catch (err) {
        const theirs = this.get(meta.chainId);
        if (!theirs) throw err;
        return theirs;
      }
      return full;
    } finally {
      this.building.delete(tmp);
      rmSync(tmp, { recursive: true, force: true });
    }
  }

  /** Removes layers an import stored for nothing (its image was refused), unless held by another. */
  discard(chainIds: readonly string[]): void {
    for (const c of chainIds)
      if (!this.held.has(c)) rmSync(join(this.dir, hexOf(c)), { recursive: true, force: true });
  }

  /** The layer check's state after `meta`'s chain (where vetting the layer above starts). */
  static stateAfter(meta: LayerMeta | undefined): LayerState {
    return meta
      ? { entries: meta.entries, bytes: meta.bytes, symlinks: new Set(meta.symlinks) }
      : { entries: 0, bytes: 0, symlinks: new Set() };
  }

  /**
   * Removes layers no image names (`referenced`: chain IDs of every stored image, also the ones
   * moved aside as `.old-*`), held by no import of this process, and not used for `minAgeMs` (an
   * import in another process may be about to name them), and temp dirs as old. Returns how many.
   */
  prune(referenced: ReadonlySet<string>, minAgeMs: number, nowMs: number): number {
    if (!existsSync(this.dir)) return 0;
    let removed = 0;
    for (const name of readdirSync(this.dir)) {
      const path = join(this.dir, name);
      const chainId = `sha256:${name}`;
      if (this.building.has(path)) continue;
      if (!name.startsWith('.tmp-') && (referenced.has(chainId) || this.held.has(chainId))) continue;
      let mtime: number;
      try {
        mtime = statSync(name.startsWith('.tmp-') ? path : join(path, 'layer.json')).mtimeMs;
      } catch {
        mtime = statSync(path).mtimeMs; // no layer.json: a crash's leftover
      }
      if (nowMs - mtime < minAgeMs) continue;
      rmSync(path, { recursive: true, force: true });
      removed++;
    }
    return removed;
  }
}
