// The image store under <home>/images: one directory per canonical reference, holding
// image.json; its layers are plain directories (overlayfs lowers): imported layers are shared by
// content under .layers/ (layer-store.ts), the base image's (and images imported before layers
// were shared) inside the image's dir. Images are built or imported into a temp dir and renamed
// into place, so a reader never sees half an image.
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { Clock } from '../clock.js';
import type { ImageInfo } from '../engine.js';
import { ImageNotFoundError, InvalidImageError } from '../errors.js';
import type { CommandRunner } from '../runner.js';
import { buildBaseImage, type BaseImageOptions } from './base-image.js';
import { importArchive, importLayout, type ImageCommand } from './import.js';
import { LayerStore } from './layer-store.js';
import { DEFAULT_IMPORT_LIMITS, type ImportLimits } from './import-limits.js';
import { BASE_IMAGE, normalizeRef, refDirName, resolveRef } from './refs.js';

export interface ImageManifest extends ImageCommand {
  ref: string;
  /** Layer dirs relative to the image dir, bottom first. */
  layers: string[];
  env: string[];
  workingDir: string;
  createdAt: string;
  /** Apparent bytes of all layer dirs, measured when stored (absent in images stored before). */
  sizeBytes?: number;
}

export interface ResolvedImage extends ImageCommand {
  ref: string;
  /** Absolute layer dirs, bottom first. */
  layerDirs: string[];
  env: string[];
  workingDir: string;
}

export class ImageStore {
  private readonly building = new Map<string, Promise<void>>();
  private dirReady = false;
  private readonly layerStore: LayerStore;

  constructor(
    private readonly dir: string,
    private readonly runner: CommandRunner,
    private readonly clock: Clock,
    private readonly baseOptions: BaseImageOptions = {},
    private readonly importLimits: ImportLimits = DEFAULT_IMPORT_LIMITS,
  ) {
    this.layerStore = new LayerStore(join(dir, '.layers'));
  }

  /** Makes the image available, building the base image on first use; unknown refs throw. */
  async ensure(ref: string): Promise<ImageInfo> {
    this.ensureDir();
    const canonical = this.canonical(ref);
    if (!this.has(canonical)) {
      if (canonical !== BASE_IMAGE) throw new ImageNotFoundError(ref);
      await this.buildOnce(canonical);
    }
    return this.info(canonical);
  }

  /** Resolves a present image for a sandbox; never builds. */
  resolve(ref: string): ResolvedImage {
    const canonical = this.canonical(ref);
    const manifest = this.manifest(canonical);
    const base = join(this.dir, refDirName(canonical));
    return {
      ref: canonical,
      layerDirs: manifest.layers.map((l) => join(base, l)),
      env: manifest.env,
      workingDir: manifest.workingDir,
      ...(manifest.entrypoint ? { entrypoint: manifest.entrypoint } : {}),
      ...(manifest.cmd ? { cmd: manifest.cmd } : {}),
    };
  }

  /**
   * Imports an image archive (`docker save` or OCI layout tar), or, when `path` is a directory, an
   * OCI layout our own builder wrote (importLayout: only its layers not stored yet are read).
   */
  async import(path: string, ref: string): Promise<ImageInfo> {
    const canonical = normalizeRef(ref);
    const tmp = this.tempDir();
    let release = () => {};
    try {
      const read = statSync(path).isDirectory() ? importLayout : importArchive;
      const imported = await read(path, tmp, this.runner, this.importLimits, this.layerStore);
      release = imported.release;
      const { layers, env, workingDir, entrypoint, cmd, sizeBytes } = imported;
      this.commit(tmp, {
        ref: canonical,
        layers,
        env,
        workingDir,
        ...(entrypoint ? { entrypoint } : {}),
        ...(cmd ? { cmd } : {}),
        createdAt: this.clock.date().toISOString(),
        sizeBytes,
      });
    } finally {
      release();
      rmSync(tmp, { recursive: true, force: true });
    }
    return this.info(canonical);
  }

  /**
   * Removes the shared layers (.layers/) no stored image names any more (issue 15: "dangling
   * layers are garbage-collected"), sparing those an import used in the last `minAgeMs` (another
   * process sharing the store may be about to commit an image naming them). Images moved aside
   * (`.old-*`: running sandboxes may still use their layers) keep theirs. Returns how many.
   */
  pruneLayers(minAgeMs: number): number {
    if (!existsSync(this.dir)) return 0;
    const referenced = new Set<string>();
    for (const d of readdirSync(this.dir)) {
      if (d.startsWith('.') && !d.startsWith('.old-')) continue;
      let layers: string[];
      try {
        layers = (JSON.parse(readFileSync(join(this.dir, d, 'image.json'), 'utf8')) as ImageManifest).layers;
      } catch {
        continue;
      }
      for (const c of LayerStore.chainsOf(layers)) referenced.add(c);
    }
    return this.layerStore.prune(referenced, minAgeMs, this.clock.date().getTime());
  }

  list(): Promise<ImageInfo[]> {
    if (!existsSync(this.dir)) return Promise.resolve([]);
    return Promise.all(
      readdirSync(this.dir)
        .filter((d) => !d.startsWith('.'))
        .map((d) => this.info(decodeURIComponent(d))),
    );
  }

  /** Refs of the stored images (from the directory names; nothing is read or measured). */
  refs(): string[] {
    if (!existsSync(this.dir)) return [];
    return readdirSync(this.dir)
      .filter((d) => !d.startsWith('.'))
      .map((d) => decodeURIComponent(d));
  }

  /**
   * Files image `from` under `to` as well (a hard-linked copy: lowers are never written) or instead
   * (`move`: a rename). The platform uses it to move images stored before workspace namespaces into
   * their workspace's namespace (apps/platform modules/images/legacy-images.ts). An existing `to`
   * is left alone.
   */
  async adopt(from: string, to: string, mode: 'move' | 'copy'): Promise<void> {
    const src = join(this.dir, refDirName(normalizeRef(from)));
    const dest = join(this.dir, refDirName(normalizeRef(to)));
    if (existsSync(dest)) return;
    const manifest = this.manifest(normalizeRef(from));
    const tmp = join(this.dir, `.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`);
    if (mode === 'copy') await this.runner.run('cp', ['-al', '--', src, tmp]);
    else renameSync(src, tmp);
    // Replaces the (possibly shared) link of image.json, never writes through it.
    writeFileSync(
      join(tmp, '.image.json.new'),
      JSON.stringify({ ...manifest, ref: normalizeRef(to) }, null, 2),
    );
    renameSync(join(tmp, '.image.json.new'), join(tmp, 'image.json'));
    renameSync(tmp, dest);
  }

  remove(ref: string): void {
    rmSync(join(this.dir, refDirName(normalizeRef(ref))), { recursive: true, force: true });
  }

  private canonical(ref: string): string {
    try {
      return resolveRef(ref);
    } catch {
      throw new ImageNotFoundError(ref);
    }
  }

  /** Whether `ref` is stored already (ensure() would not build or fail); invalid refs are not. */
  present(ref: string): boolean {
    try {
      return this.has(resolveRef(ref));
    } catch {
      return false;
    }
  }

  private has(ref: string): boolean {
    return existsSync(join(this.dir, refDirName(ref), 'image.json'));
  }

  private manifest(ref: string): ImageManifest {
    try {
      return JSON.parse(readFileSync(join(this.dir, refDirName(ref), 'image.json'), 'utf8')) as ImageManifest;
    } catch {
      throw new ImageNotFoundError(ref);
    }
  }

  /** Image info; an image stored before sizes were measured is measured once and rewritten. */
  private async info(ref: string): Promise<ImageInfo> {
    const m = this.manifest(ref);
    if (m.sizeBytes === undefined) {
      const dir = join(this.dir, refDirName(ref));
      m.sizeBytes = await this.measure(dir, m.layers);
      // tmp + rename: other processes sharing the image dir never read a half-written manifest.
      // Best effort: an unwritable store only means measuring again next time.
      const tmp = join(dir, `.image.json.${process.pid}-${Math.random().toString(36).slice(2)}`);
      try {
        writeFileSync(tmp, JSON.stringify(m, null, 2));
        renameSync(tmp, join(dir, 'image.json'));
      } catch {
        rmSync(tmp, { force: true });
      }
    }
    return { ref: m.ref, layers: m.layers.length, sizeBytes: m.sizeBytes, createdAt: m.createdAt };
  }

  /**
   * Apparent bytes of the layer dirs (the storage an image is billed for, metering ARCHITECTURE.md);
   * one `du` for all layers, so hard links count once. Measured once per image, never per sandbox.
   */
  private async measure(imageDir: string, layers: string[]): Promise<number> {
    const dirs = layers.map((l) => join(imageDir, l));
    const { stdout } = await this.runner.run('du', ['-s', '-b', '-c', '--', ...dirs]);
    const total = /^(\d+)\s+total$/m.exec(stdout)?.[1];
    if (total === undefined) throw new InvalidImageError(`could not measure image layers: ${stdout}`);
    return Number(total);
  }

  private buildOnce(ref: string): Promise<void> {
    let p = this.building.get(ref);
    if (!p) {
      p = this.build(ref).finally(() => this.building.delete(ref));
      this.building.set(ref, p);
    }
    return p;
  }

  private async build(ref: string): Promise<void> {
    const release = await this.lock(ref);
    if (!release) return; // another process built it while we waited
    const tmp = this.tempDir();
    try {
      mkdirSync(join(tmp, 'layers'), { recursive: true });
      await buildBaseImage(join(tmp, 'layers', '000'), this.runner, this.baseOptions);
      this.commit(tmp, {
        ref,
        sizeBytes: await this.measure(tmp, ['layers/000']),
        layers: ['layers/000'],
        env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'LANG=C.UTF-8'],
        workingDir: '/',
        createdAt: this.clock.date().toISOString(),
      });
    } finally {
      rmSync(tmp, { recursive: true, force: true });
      release();
    }
  }

  /**
   * Cross-process build lock (an O_EXCL file holding our pid), so parallel test workers or two
   * platform processes build the base image once. Returns null if the image appeared meanwhile.
   */
  private async lock(ref: string): Promise<(() => void) | null> {
    this.ensureDir();
    const file = join(this.dir, `.build-${refDirName(ref)}.lock`);
    for (;;) {
      if (this.has(ref)) return null;
      try {
        writeFileSync(file, String(process.pid), { flag: 'wx' });
        return () => rmSync(file, { force: true });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const holder = Number(readFileSync(file, 'utf8') || '0');
      if (holder > 0 && !pidAlive(holder)) rmSync(file, { force: true });
      else await this.clock.sleep(500);
    }
  }

  private tempDir(): string {
    this.ensureDir();
    const tmp = join(this.dir, `.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`);
    mkdirSync(tmp, { recursive: true });
    return tmp;
  }

  /**
   * The store is root's alone (0700, also when it existed before): images keep their owners and
   * modes, so an imported image may hold setuid-root files, which a host user must never reach.
   */
  private ensureDir(): void {
    if (this.dirReady) return;
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    chmodSync(this.dir, 0o700);
    this.dirReady = true;
  }

  /** Atomic publish. If another process published the same ref meanwhile, theirs wins for
   * the base image (same content); an import replaces the old image. */
  private commit(tmp: string, manifest: ImageManifest): void {
    writeFileSync(join(tmp, 'image.json'), JSON.stringify(manifest, null, 2));
    const dest = join(this.dir, refDirName(manifest.ref));
    if (existsSync(dest)) {
      if (manifest.ref === BASE_IMAGE) return;
      // Move the old one aside, never delete it: running sandboxes still use its layers as
      // overlay lowers (sandbox.json records absolute layer paths). Garbage collection of
      // unused .old-* dirs is not done yet.
      renameSync(dest, join(this.dir, `.old-${Math.random().toString(36).slice(2)}`));
    }
    try {
      renameSync(tmp, dest);
    } catch (err) {
      throw new InvalidImageError(`could not store image ${manifest.ref}: ${(err as Error).message}`);
    }
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
