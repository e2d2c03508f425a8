import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

/**
 * Garbage collection of built images (issue 15: "unused images and dangling layers are
 * garbage-collected on a schedule"). The platform keeps a ledger of the engine images its builds
 * stored (only those: the engine's store may be shared, and images imported by hand are their
 * owner's business). A pass removes each ledger entry whose tag no image record holds any more
 * (tag or image deleted — deleting an image a workload uses is refused with 409 — or workspace gone).
 * Runs every `intervalMs` (unref'd timer). The builder's own layer cache is pruned by age and size
 * only (builder-cache.ts): its untagged images are what makes a rebuild warm.
 */
export interface BuiltEntry {
  engineRef: string;
  workspace: string;
  imageType: string;
  name: string;
  tag: string;
}

export interface GcDeps {
  ledgerFile: string;
  /** Whether the image record still lists the tag. */
  tagExists(e: BuiltEntry): Promise<boolean>;
  removeImage(engineRef: string): void;
  /** Removes the engine store's layers no image names any more; how many (after each pass). */
  pruneLayers?: () => number;
  /** The builder's layer cache by age and size (builder-cache.ts); undefined while a build runs. */
  pruneBuilderCache?: () => Promise<number> | undefined;
  log: (msg: string, extra: Record<string, unknown>) => void;
}

export class ImageGc {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;

  constructor(private readonly d: GcDeps) {}

  record(entry: BuiltEntry): void {
    this.write([...this.read().filter((e) => e.engineRef !== entry.engineRef), entry]);
  }

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.pass().catch(() => undefined), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** One pass; the number of images removed. Passes never overlap. */
  pass(): Promise<number> {
    this.running ??= this.sweep().finally(() => (this.running = undefined));
    return this.running;
  }

  private async sweep(): Promise<number> {
    const removed = new Set<string>();
    for (const e of this.read()) {
      if (await this.d.tagExists(e)) continue;
      this.d.removeImage(e.engineRef);
      removed.add(e.engineRef);
      this.d.log('image garbage-collected', { ref: e.engineRef });
    }
    // Re-read: entries recorded while this pass ran stay.
    if (removed.size > 0) this.write(this.read().filter((e) => !removed.has(e.engineRef)));
    // Layers are shared between images (packages/engine images/layer-store.ts): the ones no
    // image names any more (these, or any other image removed since) go now.
    const layers = this.d.pruneLayers?.() ?? 0;
    if (layers > 0) this.d.log('image layers garbage-collected', { layers });
    const cached = await this.d.pruneBuilderCache?.();
    if (cached) this.d.log('builder cache images garbage-collected', { images: cached });
    return removed.size;
  }

  private read(): BuiltEntry[] {
    if (!existsSync(this.d.ledgerFile)) return [];
    try {
      return JSON.parse(readFileSync(this.d.ledgerFile, 'utf8')) as BuiltEntry[];
    } catch {
      return [];
    }
  }

  private write(entries: BuiltEntry[]): void {
    const tmp = `${this.d.ledgerFile}.tmp`;
    writeFileSync(tmp, JSON.stringify(entries, null, 1));
    renameSync(tmp, this.d.ledgerFile);
  }
}
