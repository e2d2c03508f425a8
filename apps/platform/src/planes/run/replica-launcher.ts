/**
 * Starting and removing one replica container: create on the engine, probe PORT until it answers
 * (readiness.ts), and on the way out keep the container's output (framework/log-archive.ts) before
 * deleting it. The controller (run-controller.ts) decides when; this file only does.
 */
import {
  EXIT_MARKER,
  InsufficientCapacityError,
  isTransientHostError,
  SandboxNotFoundError,
  type SandboxInfo,
} from '@tarmac/engine';
import type { Logger } from 'pino';
import type { LogArchive } from '../../framework/log-archive.js';
import { probeUntilReady } from './readiness.js';
import type { Replica } from './replica-sets.js';
import { replicaContainerSpec, replicaCredentialId, replicaEngineId } from './replica-container.js';
import type { ReplicaEngine, ReplicaSetup, RunCatalogue, RunRecord } from './run-ports.js';
import type { ReplicaUsage } from './usage/replica-usage.js';

/** The tail of a container's output kept per attempt, and shown in a FAILED event. */
const LOG_TAIL_BYTES = 256 * 1024;
export const FAILED_LOG_LINES = 10;

export type LaunchOutcome =
  | { kind: 'ready'; replica: Replica }
  /** The container exited before it listened: exit code and last lines. */
  | { kind: 'exited'; replica: Replica; exitCode: number | null; lastLines: string }
  | { kind: 'timeout'; replica: Replica; lastLines: string }
  /** No longer wanted while it started (record deleted, disabled or changed): to be removed. */
  | { kind: 'cancelled'; replica: Replica }
  /** Could not be created; `transient` (host short of memory or files) retries without a crash. */
  | { kind: 'error'; message: string; transient: boolean; blocked: boolean };

export interface LauncherDeps {
  engine: ReplicaEngine;
  setup: ReplicaSetup;
  catalogue: RunCatalogue;
  logs: LogArchive;
  logger: Logger;
  readyTimeoutMs: number;
  /** CPU cores a replica may use until it answers (TARMAC_RUN_STARTUP_CPU_CORES); 0: no boost. */
  startupCpuCores?: number;
  now: () => number;
  /** Told when a container starts to exist and when it is removed (metering). */
  usage?: ReplicaUsage;
}

export class ReplicaLauncher {
  /** Engine ids being created: an egress request of their workload may come before the answer. */
  readonly creating = new Map<string, { engineId: string; record: RunRecord }>();

  constructor(private readonly d: LauncherDeps) {}

  async launch(
    record: RunRecord,
    slot: number,
    attempt: number,
    wanted: () => boolean = () => true,
  ): Promise<LaunchOutcome> {
    const t0 = this.d.now();
    const engineId = replicaEngineId(record.id, record.revision, slot, attempt);
    const credentialId = replicaCredentialId(record.id, slot, record.revision);
    const image = record.image && (await this.d.setup.resolveImage(record.workspace, record.image));
    if (!image) {
      const message = `image "${record.image ?? ''}" is not in workspace ${record.workspace}'s image store (spec.runtime.image)`;
      return { kind: 'error', message, transient: false, blocked: true };
    }
    let info: SandboxInfo;
    this.creating.set(credentialId, { engineId, record });
    try {
      const spec = replicaContainerSpec({
        engineId,
        credentialId,
        record,
        image,
        slot,
        env: await this.d.catalogue.envOf(record),
        defaults: await this.d.setup.defaults(credentialId),
        startupCpuCores: this.d.startupCpuCores ?? 0,
      });
      const t1 = this.d.now();
      info = await this.d.engine.createSandbox(spec);
      this.d.logger.debug(
        { replica: engineId, prepareMs: t1 - t0, createMs: this.d.now() - t1 },
        'replica container created',
      );
    } catch (err) {
      const transient = isTransientHostError(err) || err instanceof InsufficientCapacityError;
      this.d.logger.warn({ err, record: record.name, transient }, 'replica container did not start');
      await this.remove(engineId, record.id, slot, attempt);
      const message = err instanceof Error ? err.message : String(err);
      return { kind: 'error', message, transient, blocked: false };
    } finally {
      this.creating.delete(credentialId);
    }
    await this.metered(record, engineId, image);
    const replica: Replica = {
      engineId,
      recordId: record.id,
      kind: record.kind,
      workspace: record.workspace,
      name: record.name,
      revision: record.revision,
      slot,
      attempt,
      ip: info.ip,
      port: record.port,
      phase: 'starting',
      credentialId,
      readyAtMs: undefined,
      inflight: 0,
      lastUsedMs: this.d.now(),
    };
    const out = await this.probe(replica, wanted);
    this.d.logger.debug(
      { replica: engineId, totalMs: this.d.now() - t0, outcome: out.kind },
      'replica probed',
    );
    return out;
  }

  /** From now on the container's memory and image are metered (usage/replica-usage.ts). */
  async metered(
    record: Pick<RunRecord, 'id' | 'kind' | 'workspace' | 'name' | 'memoryMB'>,
    engineId: string,
    image: string,
  ): Promise<void> {
    if (!this.d.usage) return;
    const at = this.d.now();
    const imageBytes = await this.d.engine.ensureImage?.(image).then(
      (i) => i.sizeBytes,
      () => undefined,
    );
    const { id: recordId, kind, workspace, name, memoryMB } = record;
    this.d.usage.started({ engineId, recordId, kind, workspace, name, memoryMB, image, imageBytes }, at);
  }

  /** Waits for a (new or re-attached) replica's port to answer, while it is `wanted`. */
  async probe(
    replica: Replica,
    wanted: () => boolean = () => true,
    deadlineMs = this.d.readyTimeoutMs,
  ): Promise<LaunchOutcome> {
    let stopped: SandboxInfo | undefined;
    let cancelled = false;
    const result = await probeUntilReady({
      host: replica.ip,
      port: replica.port,
      deadlineMs,
      now: this.d.now,
      gone: async () => {
        if (!wanted()) return (cancelled = true);
        const info = await this.inspect(replica.engineId);
        if (!info || info.status === 'STOPPED') stopped = info ?? stopped;
        return !info || info.status === 'STOPPED';
      },
    });
    if (cancelled) return { kind: 'cancelled', replica };
    if (result === 'ready') {
      this.endBoost(replica.engineId);
      replica.phase = 'ready';
      replica.readyAtMs = this.d.now();
      return { kind: 'ready', replica };
    }
    if (result === 'timeout') {
      const lastLines = await this.lastLines(replica.engineId);
      return { kind: 'timeout', replica, lastLines };
    }
    const lastLines = await this.lastLines(replica.engineId);
    return { kind: 'exited', replica, exitCode: stopped?.exitCode ?? null, lastLines };
  }

  /**
   * Startup boost over (README "container contract"): the replica keeps memoryMB / 2048 cores.
   * A failure leaves the boost (logged): the replica still serves.
   */
  endBoost(engineId: string): void {
    if (!this.d.startupCpuCores) return;
    try {
      this.d.engine.endCpuBoost(engineId);
    } catch (err) {
      this.d.logger.warn({ err, replica: engineId }, 'could not end a replica start-up CPU boost');
    }
  }

  /** The last lines of a container's output (the exit-code line the engine appends dropped). */
  async lastLines(engineId: string, n = FAILED_LOG_LINES): Promise<string> {
    try {
      const { text } = await this.d.engine.readLog(engineId, 0, LOG_TAIL_BYTES);
      const lines = text.split('\n').filter((l) => l.trim() !== '' && !l.startsWith(EXIT_MARKER));
      return lines.slice(-n).join('\n');
    } catch {
      return '';
    }
  }

  /** Stops (SIGTERM, grace, SIGKILL), archives the output, deletes. Missing is fine. */
  async remove(
    engineId: string,
    recordId: string,
    slot: number,
    attempt: number,
    graceSeconds = 5,
  ): Promise<void> {
    try {
      const info = await this.inspect(engineId);
      if (!info) return this.d.usage?.stopped(engineId, this.d.now());
      if (info.status !== 'STOPPED') await this.d.engine.stopSandbox(engineId, graceSeconds);
      const log = await this.d.engine.readLog(engineId, 0, LOG_TAIL_BYTES);
      this.d.logs.append(recordId, slot, attempt, log.text);
      await this.d.engine.deleteSandbox(engineId);
      this.d.usage?.stopped(engineId, this.d.now());
    } catch (err) {
      if (err instanceof SandboxNotFoundError) this.d.usage?.stopped(engineId, this.d.now());
      else {
        this.d.logger.warn({ err, container: engineId }, 'could not remove a replica container; retried');
        throw err;
      }
    }
  }

  async inspect(engineId: string): Promise<SandboxInfo | undefined> {
    try {
      return await this.d.engine.inspect(engineId);
    } catch (err) {
      if (err instanceof SandboxNotFoundError) return undefined;
      throw err;
    }
  }
}
