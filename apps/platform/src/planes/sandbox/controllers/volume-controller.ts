/**
 * The volume controller. The volumes module owns the record (created DEPLOYED; "storage is
 * allocated on first mount", which the sandbox controller does with the engine's createVolume: ext4
 * on a sparse file, so writes past `spec.size` MB fail with ENOSPC). Deleting a volume marks it
 * TERMINATED; this frees its storage on the engine (retried by every resync while the volume is
 * still mounted somewhere) and records that in `system.storageFreed`.
 *
 * Growth (spec "Volume": size may grow; the module checks it never shrinks): when the record's
 * `spec.size` exceeds the engine volume's size, the filesystem is grown online (engine growVolume),
 * even while a sandbox has it mounted, and a `storage-grown` event is written. A host without
 * CAP_SYS_RESOURCE cannot resize a mounted ext4 online: there an attached volume grows once it is
 * detached (resync retries; the sandbox controller grows it before mounting it again). A volume not
 * yet allocated needs nothing: first mount creates it at the record's size.
 */
import { VolumeInUseError, VolumeNotFoundError, type Engine } from '@tarmac/engine';
import type { Logger } from 'pino';
import { volumeEngineName } from './engine-ids.js';
import { KeyedQueue } from './keyed-queue.js';
import { event, mutate, type Resources } from './record-writer.js';
import { VOLUME_KIND } from '../records/sandbox-record.js';

export interface VolumeControllerOptions {
  engine: Engine;
  resources: Resources;
  logger: Logger;
  now?: () => number;
}

export class VolumeController {
  private readonly queue: KeyedQueue;
  private readonly now: () => number;

  constructor(private readonly o: VolumeControllerOptions) {
    this.now = o.now ?? Date.now;
    this.queue = new KeyedQueue((id, err) =>
      o.logger.warn({ err, volume: id }, 'volume reconcile failed; the next pass retries'),
    );
  }

  reconcile(id: string): Promise<void> {
    return this.queue.run(id, () => this.reconcileNow(id));
  }

  async resync(): Promise<void> {
    const rows = await this.o.resources.listByKind<VolumeSpecView>(VOLUME_KIND, { includeTerminated: true });
    const sizes = await this.engineSizes();
    const due = (r: (typeof rows)[number]) =>
      r.terminatedAt ? !r.system.storageFreed : needsGrowth(r.spec, sizes.get(volumeEngineName(r.id)));
    await Promise.all(rows.filter(due).map((r) => this.reconcile(r.id)));
  }

  idle(): Promise<void> {
    return this.queue.idle();
  }

  private async reconcileNow(id: string): Promise<void> {
    const row = await this.o.resources.getById<VolumeSpecView>(id);
    if (!row) return;
    if (!row.terminatedAt) return this.grow(row.id, row.spec);
    if (row.system.storageFreed) return;
    try {
      await this.o.engine.deleteVolume(volumeEngineName(row.id));
    } catch (err) {
      if (!(err instanceof VolumeNotFoundError)) throw err; // still mounted: retried next pass
    }
    await mutate(this.o.resources, id, (r) =>
      r.system.storageFreed
        ? undefined
        : {
            system: { ...r.system, storageFreed: true },
            events: [
              ...r.events,
              event('storage-freed', r.status ?? 'TERMINATED', 'Volume storage freed', new Date(this.now())),
            ],
          },
    );
  }

  private async grow(id: string, spec: VolumeSpecView): Promise<void> {
    const engineName = volumeEngineName(id);
    const current = (await this.engineSizes()).get(engineName);
    if (current === undefined || !needsGrowth(spec, current)) return;
    let grown;
    try {
      grown = await this.o.engine.growVolume(engineName, spec.size);
    } catch (err) {
      // Attached and the host cannot grow ext4 online: resync retries; the sandbox controller
      // also grows it before the next mount.
      if (err instanceof VolumeInUseError) {
        this.o.logger.info({ volume: id, reason: err.message }, 'volume growth waits for detach');
        return;
      }
      throw err;
    }
    await mutate(this.o.resources, id, (r) => ({
      events: [
        ...r.events,
        event(
          'storage-grown',
          r.status ?? 'DEPLOYED',
          `Volume filesystem grown from ${current} MB to ${grown.sizeMB} MB`,
          new Date(this.now()),
        ),
      ],
    }));
  }

  /** Engine volume name → size in MB, for the allocated volumes. */
  private async engineSizes(): Promise<Map<string, number>> {
    return new Map((await this.o.engine.listVolumes()).map((v) => [v.name, v.sizeMB]));
  }
}

interface VolumeSpecView {
  size?: number;
}

/** Allocated on the engine and smaller than the record says. */
function needsGrowth(spec: VolumeSpecView, engineSizeMB: number | undefined): spec is { size: number } {
  return engineSizeMB !== undefined && typeof spec.size === 'number' && spec.size > engineSizeMB;
}
