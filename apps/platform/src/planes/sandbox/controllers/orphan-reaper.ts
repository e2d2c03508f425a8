/**
 * Removes engine sandboxes and volumes that no record owns (issue 19 item 8: deleting a workspace
 * cascaded its records away and left its containers running, also after a restart, with nothing in
 * the API to stop them). Runs
 *  - for one workspace at once when it is deleted (framework/workspace-deletion.ts): its sandboxes'
 *    records are gone for good, so no grace;
 *  - over everything at start and then periodically: orphans from a crash or from before this fix.
 * Careful by construction:
 *  - only this platform's engine home is looked at (`engine.list()` reads <home>/sandboxes; other
 *    platforms and tests on the host share runc's root and bridge, never the home);
 *  - only containers the platform made (a `record` label) whose record id the store does not
 *    know (`getById` answered undefined — a store error reaps nothing);
 *  - a grace (`graceMs`, 60 s) since the container was created, or since the volume was first
 *    seen without a record, so nothing being set up right now is taken;
 *  - an engine that cannot say (EngineUnavailableError) reaps nothing this pass.
 */
import type { Engine } from '@tarmac/engine';
import type { Logger } from 'pino';
import { volumeEngineName } from './engine-ids.js';
import type { Resources } from './record-writer.js';
import { VOLUME_KIND } from '../records/sandbox-record.js';

export const ORPHAN_GRACE_MS = 60_000;
/** SIGTERM grace of an orphan: its owner is gone; nobody waits for a clean shutdown. */
const ORPHAN_STOP_SECONDS = 2;

export interface OrphanReaperDeps {
  engine: Pick<Engine, 'list' | 'stopSandbox' | 'deleteSandbox' | 'listVolumes' | 'deleteVolume'>;
  resources: Pick<Resources, 'getById' | 'listByKind'>;
  logger: Logger;
  now?: () => number;
  graceMs?: number;
  /** Containers of the warm pool (pool/warm-pool.ts): no record yet by design, never orphans. */
  isPooled?: (recordId: string) => boolean;
}

export class OrphanReaper {
  /** Engine volume name -> when it was first seen without a record. */
  private readonly unownedSince = new Map<string, number>();
  private running: Promise<string[]> = Promise.resolve([]);

  constructor(private readonly d: OrphanReaperDeps) {}

  /** One pass (serialized with any other); resolves with the engine names it removed. */
  reap(scope: { workspace?: string } = {}): Promise<string[]> {
    this.running = this.running.catch(() => []).then(() => this.pass(scope));
    return this.running;
  }

  private async pass(scope: { workspace?: string }): Promise<string[]> {
    const now = (this.d.now ?? Date.now)();
    const grace = this.d.graceMs ?? ORPHAN_GRACE_MS;
    const removed: string[] = [];
    for (const info of await this.d.engine.list()) {
      const record = info.labels.record;
      if (!record) continue; // not made by a sandbox controller: not ours to judge
      if (this.d.isPooled?.(record)) continue; // booted ahead of demand, or being claimed right now
      if (scope.workspace !== undefined) {
        if (info.labels.workspace !== scope.workspace) continue;
      } else if (!(Date.parse(info.createdAt) + grace <= now)) continue;
      if (await this.d.resources.getById(record)) continue;
      this.d.logger.warn(
        { sandbox: info.id, workspace: info.labels.workspace, name: info.labels.sandbox },
        'removing a sandbox container that no record owns',
      );
      if (info.status !== 'STOPPED') await this.d.engine.stopSandbox(info.id, ORPHAN_STOP_SECONDS);
      await this.d.engine.deleteSandbox(info.id);
      removed.push(info.id);
    }
    removed.push(...(await this.reapVolumes(now, grace)));
    return removed;
  }

  private async reapVolumes(now: number, grace: number): Promise<string[]> {
    const rows = await this.d.resources.listByKind(VOLUME_KIND, { includeTerminated: true });
    const owned = new Set(rows.map((r) => volumeEngineName(r.id)));
    const removed: string[] = [];
    const present = new Set<string>();
    for (const v of await this.d.engine.listVolumes()) {
      present.add(v.name);
      if (owned.has(v.name) || !v.name.startsWith('vol-')) {
        this.unownedSince.delete(v.name);
        continue;
      }
      const since = this.unownedSince.get(v.name) ?? now;
      this.unownedSince.set(v.name, since);
      if (since + grace > now) continue;
      try {
        await this.d.engine.deleteVolume(v.name); // refuses one still attached to a sandbox
        this.unownedSince.delete(v.name);
        removed.push(v.name);
        this.d.logger.warn({ volume: v.name }, 'removed a volume that no record owns');
      } catch (err) {
        this.d.logger.warn({ err, volume: v.name }, 'could not remove a volume that no record owns');
      }
    }
    for (const name of this.unownedSince.keys()) if (!present.has(name)) this.unownedSince.delete(name);
    return removed;
  }
}
