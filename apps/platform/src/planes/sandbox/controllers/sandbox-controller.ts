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
import {
  BASE_IMAGE,
  resolveRef,
  isTransientHostError,
  InsufficientCapacityError,
  SandboxNotFoundError,
  type Engine,
  type HostFile,
  type SandboxInfo,
  type SandboxSpec,
} from '@tarmac/engine';
import type { ResourceRow } from '@tarmac/store';
import type { Logger } from 'pino';
import { lifecycleDurationSeconds } from '@tarmac/contract';
import { sandboxEngineId, volumeEngineName } from './engine-ids.js';
import { KeyedQueue } from './keyed-queue.js';
import type { LiveSandboxes } from './live-sandboxes.js';
import { event, mutate, type Resources } from './record-writer.js';
import { holderOf, holderPatch, sandboxHolder } from '../records/volume-holder.js';
import {
  DEFAULT_MEMORY_MB,
  SANDBOX_KIND,
  VOLUME_KIND,
  systemOf,
  type EnvVar,
  type SandboxRow,
  type SandboxSpecView,
} from '../records/sandbox-record.js';

export interface SandboxControllerOptions {
  engine: Engine;
  resources: Resources;
  live: LiveSandboxes;
  logger: Logger;
  now?: () => number;
  /** The spec's envs in clear (secret values are stored sealed; opened only here, at start). */
  revealEnvs?: (row: SandboxRow) => EnvVar[];
  /**
   * What every sandbox gets besides its spec: the egress proxy's env vars and the CA bundle files
   * (egress/sandbox-setup.ts) and the per-sandbox credentials (gateway/sandbox-credentials.ts),
   * hence the record id. The spec's own envs win over these env names.
   */
  sandboxDefaults?: (sandbox: {
    id: string;
    workspace: string;
    name: string;
  }) => Promise<{ env: Record<string, string>; files: HostFile[] }>;
  /**
   * The engine ref `spec.runtime.image` names in the sandbox's workspace, undefined when none it may
   * use (images are per workspace: planes/catalogue/images/workspace-images.ts, handed in by compose.ts). Default: the ref as is.
   */
  resolveImage?: (workspace: string, ref: string) => Promise<string | undefined>;
  /**
   * The host's memory ledger is full (InsufficientCapacityError): free `memoryMB` if possible —
   * the warm pool's members go first (issue 20) — and resolve with how much was freed; the create
   * is then tried once more.
   */
  makeRoom?: (memoryMB: number) => Promise<number>;
  /** Freezes a container (the engine's cgroup freezer): a disabled sandbox keeps its state. */
  freeze?: (engineId: string) => Promise<void>;
  /** Told when a sandbox's record changed in a way expiry depends on, or it left DEPLOYED. */
  onRecord?: (row: SandboxRow) => void;
  readyTimeoutMs?: number;
  defaultGraceSeconds?: number;
  defaultRetentionMs?: number;
}

export class SandboxController {
  private readonly queue: KeyedQueue;
  private readonly now: () => number;
  /**
   * Records `adopt` made live, at the revision it saw: the reconcile their creation's notice
   * causes has nothing to do (a claimed pooled sandbox, issue 20), so it does not ask the engine.
   */
  private readonly adopted = new Map<string, number>();
  /** OOM kills already reported per record id (also persisted in system.oomKillsReported). */
  constructor(private readonly o: SandboxControllerOptions) {
    this.now = o.now ?? Date.now;
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
        await this.delete(row);
        break;
      case 'TERMINATED':
        await this.purgeIfDue(row);
        break;
      case 'DEACTIVATING':
        await this.deactivate(row);
        break;
      default:
        this.o.live.remove(row.id); // FAILED and anything else: not reachable
    }
    const latest = await this.o.resources.getById<SandboxSpecView>(id);
    if (latest) this.o.onRecord?.(latest);
  }

  private async deploy(row: SandboxRow): Promise<void> {
    const engineId = sandboxEngineId(row.id);
    let info = await this.inspect(engineId);
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
        const spec = await this.engineSpec(row, engineId);
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
      else kept = await this.applyMemory(row, info);
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
    const imageSizeBytes = await this.imageSize(info.image);
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
    await this.markVolumes(row, true);
    if (updated?.status === 'DEPLOYED') {
      if (!this.o.live.getById(row.id)) this.register(updated, info.ip, frozen);
    } else await this.reconcileNow(row.id).catch(() => undefined);
  }

  /**
   * A spec update of a live sandbox: the memory limit (and CPU with it) changes in place, since the
   * cgroup allows it without touching a process; image and envs only shape new sandboxes. The
   * kernel may refuse a smaller limit than what is in use: the sandbox then keeps its limit and the
   * event says so. Returns the event's account of it.
   */
  private async applyMemory(row: SandboxRow, info: SandboxInfo): Promise<string> {
    const wanted = row.spec.runtime?.memory ?? DEFAULT_MEMORY_MB;
    const rest = 'image and envs changes apply to new sandboxes';
    if (info.memoryMB === wanted) return rest;
    try {
      await this.o.engine.resize(info.id, wanted);
      return `memory limit changed from ${info.memoryMB} MB to ${wanted} MB in place; ${rest}`;
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      this.o.logger.warn({ err, sandbox: row.name }, 'could not change the memory limit of a live sandbox');
      return `memory limit stays ${info.memoryMB} MB: the change to ${wanted} MB was refused (${why}); ${rest}`;
    }
  }

  /** A DEPLOYED sandbox: make sure it is in the live map (after a restart) and still alive. */
  private async watch(row: SandboxRow): Promise<void> {
    const engineId = systemOf(row).engineId ?? sandboxEngineId(row.id);
    const info = await this.inspect(engineId);
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
    if (!this.o.live.getById(row.id)) this.register(row, info.ip, info.status === 'FROZEN');
  }

  /**
   * `spec.enabled: false` (issue 14 item 8): out of the live map first, so the gateway stops
   * serving it at once (503 saying it is disabled), then frozen with its processes and files kept
   * (billed as standby memory, like STANDBY) and DEACTIVATED. Enabled again, the API sets
   * DEPLOYING and deploy() keeps the frozen container; the next request thaws it.
   */
  private async deactivate(row: SandboxRow): Promise<void> {
    this.o.live.remove(row.id);
    const engineId = systemOf(row).engineId ?? sandboxEngineId(row.id);
    let info = await this.inspect(engineId);
    if (info?.status === 'STOPPED') {
      await this.o.engine.deleteSandbox(engineId);
      info = undefined;
    }
    if (info && info.status !== 'FROZEN') await this.o.freeze?.(engineId);
    const kept = info !== undefined && this.o.freeze !== undefined;
    await mutate<SandboxSpecView>(this.o.resources, row.id, (r) =>
      r.status === 'DEACTIVATING'
        ? {
            status: 'DEACTIVATED',
            state: kept ? 'STANDBY' : null,
            events: [
              ...r.events,
              event(
                'Standby',
                'DEACTIVATED',
                kept
                  ? 'Sandbox disabled: frozen with its processes and files, not served until spec.enabled is true'
                  : 'Sandbox disabled: not running, not served until spec.enabled is true',
                this.date(),
              ),
            ],
          }
        : undefined,
    );
  }

  private async delete(row: SandboxRow): Promise<void> {
    this.o.live.remove(row.id);
    const engineId = systemOf(row).engineId ?? sandboxEngineId(row.id);
    if (await this.inspect(engineId)) {
      const grace = row.spec.runtime?.terminationGracePeriodSeconds ?? this.o.defaultGraceSeconds ?? 10;
      await this.o.engine.stopSandbox(engineId, grace);
      await this.o.engine.deleteSandbox(engineId);
    }
    await this.markVolumes(row, false);
    const at = this.date().toISOString();
    await mutate<SandboxSpecView>(this.o.resources, row.id, (r) =>
      r.status === 'DELETING'
        ? {
            status: 'TERMINATED',
            state: null,
            terminatedAt: at,
            events: [...r.events, event('Deletion', 'TERMINATED', 'Sandbox deleted', this.date())],
          }
        : undefined,
    );
  }

  private async purgeIfDue(row: SandboxRow): Promise<void> {
    this.o.live.remove(row.id);
    if (!row.terminatedAt) return;
    const text = row.spec.lifecycle?.terminatedRetention;
    const seconds = text ? lifecycleDurationSeconds(text) : undefined;
    const retention = seconds !== undefined ? seconds * 1000 : (this.o.defaultRetentionMs ?? 5 * 60_000);
    if (Date.parse(row.terminatedAt) + retention <= this.now()) await this.o.resources.delete(row.id);
  }

  /**
   * A sandbox claimed from the warm pool (pool/warm-pool.ts): its record was written DEPLOYED with
   * the member's engine id and address, and its first request may come at once — so it goes in the
   * live map now, not at the reconcile its change notice starts.
   */
  adopt(row: ResourceRow<SandboxSpecView>, ip: string): void {
    if (!this.o.live.getById(row.id)) this.register(row, ip, false);
    this.adopted.set(row.id, row.revision);
    this.o.onRecord?.(row);
  }

  private register(row: ResourceRow<SandboxSpecView>, ip: string, frozen: boolean): void {
    const lastUsed = Date.parse(systemOf(row).lastUsedAt ?? '') || this.now();
    this.o.live.add({
      id: row.id,
      workspace: row.workspace,
      name: row.name,
      engineId: systemOf(row).engineId ?? sandboxEngineId(row.id),
      ip,
      state: frozen ? 'STANDBY' : 'RUNNING',
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

  private async engineSpec(row: SandboxRow, engineId: string): Promise<SandboxSpec> {
    const runtime = row.spec.runtime ?? {};
    const defaults = await this.o.sandboxDefaults?.({ id: row.id, workspace: row.workspace, name: row.name });
    const env: Record<string, string> = { ...defaults?.env };
    const envs = this.o.revealEnvs ? this.o.revealEnvs(row) : (runtime.envs ?? []);
    for (const e of envs) env[e.name] = e.value ?? '';
    const volumes: SandboxSpec['volumes'] = [];
    for (const v of row.spec.volumes ?? []) {
      const vol = await this.o.resources.get<{ size?: number }>(row.workspace, VOLUME_KIND, v.name);
      if (!vol || vol.terminatedAt) throw new Error(`volume "${v.name}" does not exist`);
      // Storage is allocated on first mount (volumes module: "allocated on first mount").
      const engineName = volumeEngineName(vol.id);
      const sizeMB = vol.spec.size ?? 1024;
      const allocated = (await this.o.engine.listVolumes()).find((x) => x.name === engineName);
      if (!allocated) await this.o.engine.createVolume(engineName, sizeMB);
      // Grown while attached on a host that cannot resize online (volume-controller.ts): now.
      else if (sizeMB > allocated.sizeMB) await this.o.engine.growVolume(engineName, sizeMB);
      volumes.push({ volume: engineName, mountPath: v.mountPath, readOnly: v.readOnly ?? false });
    }
    const wanted = runtime.image ?? BASE_IMAGE;
    const image = this.o.resolveImage ? await this.o.resolveImage(row.workspace, wanted) : wanted;
    if (image === undefined) throw new Error(`image "${wanted}" is not available in this workspace`);
    return {
      id: engineId,
      image,
      memoryMB: runtime.memory ?? DEFAULT_MEMORY_MB,
      env,
      hostname: row.name,
      ports: runtime.ports ?? [],
      volumes,
      files: defaults?.files ?? [],
      labels: { workspace: row.workspace, sandbox: row.name, record: row.id },
      ...(typeof row.system.seedSnapshot === 'string' ? { fromSnapshot: row.system.seedSnapshot } : {}),
    };
  }

  /**
   * Writes (or clears) `attachedTo` (`sandbox:<name>`, shown as `state.attachedTo`) on the volumes
   * the sandbox mounts. The sandboxes module reserves them at create; this re-asserts it after a
   * deploy and frees them once the sandbox is gone, so its data can be mounted by the next one.
   */
  private async markVolumes(row: SandboxRow, attach: boolean): Promise<void> {
    const holder = sandboxHolder(row.name);
    for (const v of row.spec.volumes ?? []) {
      const vol = await this.o.resources.get(row.workspace, VOLUME_KIND, v.name);
      if (!vol || vol.terminatedAt) continue;
      await mutate(this.o.resources, vol.id, (r) => {
        const current = holderOf(r);
        if (attach ? current !== '' : current !== holder) return undefined; // free or someone else's
        const message = attach ? `Attached to ${holder}` : `Detached from ${holder}`;
        return {
          ...holderPatch(r, attach ? holder : ''),
          events: [
            ...r.events,
            event(attach ? 'attached' : 'detached', r.status ?? 'DEPLOYED', message, this.date()),
          ],
        };
      });
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

  /** The image's stored size, measured once by the engine; unknown (not billed) if it is gone. */
  private async imageSize(ref: string): Promise<number | undefined> {
    try {
      return (await this.o.engine.ensureImage(ref)).sizeBytes;
    } catch (err) {
      this.o.logger.warn({ err, image: ref }, 'image size unknown; image storage is not metered');
      return undefined;
    }
  }

  /**
   * The container's state, or undefined only when the engine says it does not exist. Any other
   * failure (EngineUnavailableError on EMFILE and the like) propagates: the reconcile fails, the
   * record is left as it is, and the next pass asks again (issue 19 item 7).
   */
  private async inspect(engineId: string): Promise<SandboxInfo | undefined> {
    try {
      return await this.o.engine.inspect(engineId);
    } catch (err) {
      if (err instanceof SandboxNotFoundError) return undefined;
      throw err;
    }
  }

  private date(): Date {
    return new Date(this.now());
  }
}

/** The base image under any of its names (blaxel/base-image:latest too); invalid refs are not. */
function isBaseImage(ref: string): boolean {
  try {
    return resolveRef(ref) === BASE_IMAGE;
  } catch {
    return false;
  }
}
