/**
 * The sandbox lifecycle controller (ARCHITECTURE.md "Resources and the reconcile loop"). The
 * sandboxes module writes the desired record (status DEPLOYING on create, DELETING on delete) and
 * publishes a ChangeFeed notice; this makes it real on the engine and writes status, state, events
 * and system fields back:
 *
 *   DEPLOYING -> container created, sandboxd answers -> DEPLOYED + RUNNING   (or FAILED + event)
 *   DEPLOYED  -> container died -> FAILED + event saying why (OOM, exited, missing)
 *   DELETING  -> SIGTERM, grace, SIGKILL, teardown -> TERMINATED (+ terminatedAt)
 *   TERMINATED -> purged after lifecycle.terminatedRetention (default 5m)
 *   DEACTIVATING (spec.enabled: false) -> out of the live map, frozen -> DEACTIVATED; enabled
 *     again the API sets DEPLOYING and the frozen container is kept (issue 14 item 8)
 *
 * Level-triggered: every pass reads the record and the engine and converges, so a lost notice, a
 * crash mid-way or a platform restart are all repaired by the next pass (`resync`).
 */
import { isTransientHostError, InsufficientCapacityError } from '@tarmac/engine';
import type { ResourceRow } from '@tarmac/store';
import { sandboxEngineId } from './engine-ids.js';
import { KeyedQueue } from './keyed-queue.js';
import { event, mutate } from './record-writer.js';
import type { SandboxControllerOptions } from './sandbox-controller-options.js';
import { applyMemory, imageSize, inspectSandbox } from './sandbox-engine-calls.js';
import { engineSpec, isBaseImage } from './sandbox-engine-spec.js';
import { deactivate, deleteSandbox, purgeIfDue, type Clock } from './sandbox-teardown.js';
import { markVolumes } from './volume-marks.js';
import {
  DEFAULT_MEMORY_MB,
  SANDBOX_KIND,
  systemOf,
  type SandboxRow,
  type SandboxSpecView,
} from '../records/sandbox-record.js';

export type { SandboxControllerOptions } from './sandbox-controller-options.js';

export class SandboxController {
  private readonly queue: KeyedQueue;
  private readonly now: () => number;
  private readonly clock: Clock;
  /**
   * Records `adopt` made live, at the revision it saw: the reconcile their creation's notice
   * causes has nothing to do (a claimed pooled sandbox, issue 20), so it does not ask the engine.
   */
  private readonly adopted = new Map<string, number>();
  /** OOM kills already reported per record id (also persisted in system.oomKillsReported). */
  constructor(private readonly o: SandboxControllerOptions) {
    this.now = o.now ?? Date.now;
    this.clock = { now: this.now, date: () => this.date() };
    this.queue = new KeyedQueue((id, err) =>
      o.logger.error({ err, sandbox: id }, 'sandbox reconcile failed; the next pass retries'),
    );
  }

  /** Reconciles one record (by id), serialized with any other reconcile of it. */
  reconcile(id: string): Promise<void> {
    return this.queue.run(id, () => this.reconcileNow(id));
  }

  /** Reconciles every sandbox record: at start (re-attach after a restart) and periodically. */
  async resync(): Promise<void> {
    const rows = await this.o.resources.listByKind<SandboxSpecView>(SANDBOX_KIND, {
      includeTerminated: true,
    });
    const seen = new Set(rows.map((r) => r.id));
    for (const entry of this.o.live.all()) if (!seen.has(entry.id)) this.o.live.remove(entry.id);
    await Promise.all(rows.map((r) => this.reconcile(r.id)));
  }

  /** Marks a sandbox for deletion because an expiry fired, then deletes it. */
  async expire(id: string, reason: string): Promise<void> {
    const row = await mutate<SandboxSpecView>(this.o.resources, id, (r) => {
      if (r.status === 'DELETING' || r.status === 'TERMINATED') return undefined;
      return {
        status: 'DELETING',
        events: [...r.events, event('Expired', 'DELETING', `Expired (${reason}); deleting`, this.date())],
      };
    });
    if (row) await this.reconcile(id);
  }

  idle(): Promise<void> {
    return this.queue.idle();
  }

  private async reconcileNow(id: string): Promise<void> {
    const row = await this.o.resources.getById<SandboxSpecView>(id);
    if (!row) {
      this.o.live.remove(id);
      return;
    }
    if (this.o.claiming?.(id)) return; // its create adopts it (adopt), or removes it
    const adoptedAt = this.adopted.get(id);
    this.adopted.delete(id);
    if (adoptedAt === row.revision && this.o.live.getById(id)) return;
    switch (row.status) {
      case 'DEPLOYING':
        await this.deploy(row);
        break;
      case 'DEPLOYED':
        await this.watch(row);
        break;
      case 'DELETING':
        await deleteSandbox(this.o, this.clock, row);
        break;
      case 'TERMINATED':
        await purgeIfDue(this.o, this.clock, row);
        break;
      case 'DEACTIVATING':
        await deactivate(this.o, this.clock, row);
        break;
      default:
        this.o.live.remove(row.id); // FAILED and anything else: not reachable
    }
    const latest = await this.o.resources.getById<SandboxSpecView>(id);
    if (latest) this.o.onRecord?.(latest);
  }

  private async deploy(row: SandboxRow): Promise<void> {
    const engineId = sandboxEngineId(row.id);
    let info = await inspectSandbox(this.o.engine, engineId);
    if (info?.status === 'STOPPED') {
      // Half-made by a platform that died mid-create, or dead: start over from the spec.
      await this.o.engine.deleteSandbox(engineId);
      info = undefined;
    }
    // Alive already: a spec update (the API sets DEPLOYING again) or a crash after the container
    // started. Never recreate a live sandbox — its processes and memory are the user's work; a
    // frozen one stays frozen (asking it for /health would wait until something thaws it).
    const existing = info !== undefined;
    const frozen = info?.status === 'FROZEN';
    const t0 = this.now();
    let t1 = t0;
    let kept = '';
    try {
      if (!info) {
        const spec = await engineSpec(this.o, row, engineId);
        // The first sandbox on a host builds the base image (~45 s): say so in the events, which
        // `tarmac sandbox create` shows while it waits (issue 14 item 9).
        if (isBaseImage(spec.image) && !this.o.engine.hasImage(spec.image)) {
          await this.noteBuildingImage(row, spec.image);
          await this.o.engine.ensureImage(spec.image);
        }
        info = await this.o.engine.createSandbox(spec).catch(async (err: unknown) => {
          // Pooled sandboxes hold ledger memory nobody uses yet: they give way to a real create.
          if (!(err instanceof InsufficientCapacityError) || !this.o.makeRoom) throw err;
          if ((await this.o.makeRoom(spec.memoryMB)) <= 0) throw err;
          return this.o.engine.createSandbox(spec);
        });
      }
      t1 = this.now();
      // A live one was ready before; its liveness is the DEPLOYED watch's business from here.
      if (!existing) await this.o.engine.waitReady(engineId, this.o.readyTimeoutMs ?? 30_000);
      else kept = await applyMemory(this.o.engine, this.o.logger, row, info);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (!existing) await this.o.engine.deleteSandbox(engineId).catch(() => undefined);
      // The host is short of descriptors/processes right now (issue 19 item 7): the spec is fine,
      // so stay DEPLOYING and let the next pass try again instead of failing the user's sandbox.
      if (isTransientHostError(err)) throw err;
      await mutate<SandboxSpecView>(this.o.resources, row.id, (r) =>
        r.status === 'DEPLOYING'
          ? {
              status: 'FAILED',
              events: [...r.events, event('Failure', 'FAILED', `Could not start: ${message}`, this.date())],
            }
          : undefined,
      );
      return;
    }
    const imageSizeBytes = await imageSize(this.o.engine, this.o.logger, info.image);
    const deployedAt = this.date().toISOString();
    const updated = await mutate<SandboxSpecView>(this.o.resources, row.id, (r) => {
      if (r.status !== 'DEPLOYING') return undefined; // deleted meanwhile: the next pass tears down
      const message = existing
        ? `Sandbox kept running with its processes; ${kept}`
        : // Where start-up time goes (operators, bench/sandbox.ts): container vs sandboxd boot.
          `Sandbox is running and its API answers (container ${t1 - t0} ms, sandboxd ready ${this.now() - t1} ms)`;
      return {
        status: 'DEPLOYED',
        state: frozen ? 'STANDBY' : 'RUNNING',
        system: {
          ...r.system,
          engineId,
          ip: info.ip,
          deployedAt: existing ? (r.system.deployedAt ?? deployedAt) : deployedAt,
          // Billed as sandbox_image_storage_gbs while the container exists (metering ARCHITECTURE.md).
          ...(imageSizeBytes !== undefined ? { imageSizeBytes } : {}),
        },
        events: [...r.events, event('Deployment', 'DEPLOYED', message, this.date())],
      };
    });
    await markVolumes(this.o.resources, row, true, () => this.date());
    if (updated?.status === 'DEPLOYED') {
      if (!this.o.live.getById(row.id)) this.register(updated, info.ip, frozen, Date.parse(info.createdAt));
    } else await this.reconcileNow(row.id).catch(() => undefined);
  }

  /** A DEPLOYED sandbox: make sure it is in the live map (after a restart) and still alive. */
  private async watch(row: SandboxRow): Promise<void> {
    const engineId = systemOf(row).engineId ?? sandboxEngineId(row.id);
    const info = await inspectSandbox(this.o.engine, engineId);
    if (!info || info.status === 'STOPPED') {
      this.o.live.remove(row.id);
      const why = !info
        ? 'the container is gone (host restarted?)'
        : info.reason === 'oom' || info.oomKilled
          ? 'it ran out of memory (OOM-killed)'
          : `its init exited${info.exitCode === null ? '' : ` with code ${info.exitCode}`}`;
      await mutate<SandboxSpecView>(this.o.resources, row.id, (r) =>
        r.status === 'DEPLOYED'
          ? {
              status: 'FAILED',
              events: [...r.events, event('Failure', 'FAILED', `Sandbox stopped: ${why}`, this.date())],
            }
          : undefined,
      );
      return;
    }
    const reported = systemOf(row).oomKillsReported ?? 0;
    if (info.oomKills > reported) {
      const n = info.oomKills - reported;
      await mutate<SandboxSpecView>(this.o.resources, row.id, (r) =>
        r.status === 'DEPLOYED'
          ? {
              system: { ...r.system, oomKillsReported: info.oomKills },
              events: [
                ...r.events,
                event(
                  'OOMKilled',
                  'DEPLOYED',
                  `${n} process${n === 1 ? ' was' : 'es were'} OOM-killed: the sandbox reached its ${r.spec.runtime?.memory ?? DEFAULT_MEMORY_MB} MB memory limit`,
                  this.date(),
                ),
              ],
            }
          : undefined,
      );
    }
    if (!this.o.live.getById(row.id))
      this.register(row, info.ip, info.status === 'FROZEN', Date.parse(info.createdAt));
  }

  /**
   * A sandbox claimed from the warm pool (pool/warm-pool.ts): its record was written DEPLOYED with
   * the member's engine id and address, and its first request may come at once — so it goes in the
   * live map now, not at the reconcile its change notice starts.
   */
  adopt(row: ResourceRow<SandboxSpecView>, ip: string, bootedMs: number): void {
    if (!this.o.live.getById(row.id)) this.register(row, ip, false, bootedMs);
    this.adopted.set(row.id, row.revision);
    this.o.onRecord?.(row);
  }

  /** `bootedMs`: the container's creation (engine createdAt); unknown (NaN) counts as old. */
  private register(row: ResourceRow<SandboxSpecView>, ip: string, frozen: boolean, bootedMs: number): void {
    const lastUsed = Date.parse(systemOf(row).lastUsedAt ?? '') || this.now();
    this.o.live.add({
      id: row.id,
      workspace: row.workspace,
      name: row.name,
      engineId: systemOf(row).engineId ?? sandboxEngineId(row.id),
      ip,
      state: frozen ? 'STANDBY' : 'RUNNING',
      bootedMs: Number.isFinite(bootedMs) ? bootedMs : 0,
      lastUsedMs: lastUsed,
      lastUsedWrittenMs: lastUsed,
      inflight: 0,
      freezing: false,
    });
    if (frozen && row.state !== 'STANDBY') {
      void mutate(this.o.resources, row.id, (r) =>
        r.status === 'DEPLOYED' ? { state: 'STANDBY' } : undefined,
      );
    } else if (!frozen && row.state !== 'RUNNING') {
      void mutate(this.o.resources, row.id, (r) =>
        r.status === 'DEPLOYED' ? { state: 'RUNNING' } : undefined,
      );
    }
  }

  private async noteBuildingImage(row: SandboxRow, image: string): Promise<void> {
    const message = `Building the base image ${image} (once per host: Debian packages, about a minute)`;
    await mutate<SandboxSpecView>(this.o.resources, row.id, (r) =>
      r.status === 'DEPLOYING'
        ? { events: [...r.events, event('BuildingImage', 'DEPLOYING', message, this.date())] }
        : undefined,
    );
  }

  private date(): Date {
    return new Date(this.now());
  }
}
