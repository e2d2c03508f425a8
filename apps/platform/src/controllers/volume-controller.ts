/**
 * The volume controller. The volumes module owns the record (created DEPLOYED; "storage is
 * allocated on first mount", which the sandbox controller does with the engine's createVolume: ext4
 * on a sparse file, so writes past `spec.size` MB fail with ENOSPC). Deleting a volume marks it
 * TERMINATED; this frees its storage on the engine (retried by every resync while the volume is
 * still mounted somewhere) and records that in `system.storageFreed`.
 */
import { VolumeNotFoundError, type Engine } from '@tarmac/engine';
import type { Logger } from 'pino';
import { volumeEngineName } from './engine-ids.js';
import { KeyedQueue } from './keyed-queue.js';
import { event, mutate, type Resources } from './record-writer.js';
import { VOLUME_KIND } from './sandbox-record.js';

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
    const rows = await this.o.resources.listByKind(VOLUME_KIND, { includeTerminated: true });
    await Promise.all(
      rows.filter((r) => r.terminatedAt && !r.system.storageFreed).map((r) => this.reconcile(r.id)),
    );
  }

  idle(): Promise<void> {
    return this.queue.idle();
  }

  private async reconcileNow(id: string): Promise<void> {
    const row = await this.o.resources.getById(id);
    if (!row?.terminatedAt || row.system.storageFreed) return;
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
}
