/**
 * What replicas consume, for the meter (issue 16 "Metering"; planes/metering/run-source.ts reads
 * it): per replica its memory, its image's bytes and its phase over time — `running` (compute:
 * `agent_compute_runtime_gbs` / `mcp_server_compute_runtime_gbs`) or `standby` (frozen memory,
 * billed where a sandbox's STANDBY goes: `sandbox_snapshot_storage_gbs`) — from the moment its
 * container exists until it is removed. The launcher reports create and remove, adoption reports
 * re-attached replicas, and whatever freezes or thaws a replica reports `phase` (the STANDBY seam,
 * ARCHITECTURE.md "Metering").
 *
 * Rates are summed per record (one metered resource per agent or function), and every change of
 * a record's totals is kept with its time, so the meter splits intervals exactly where a replica
 * started, froze, thawed or stopped — not at its pass times. History older than HISTORY_MS (longer
 * than the meter's longest interval) is dropped; a record without replicas and without recent
 * history is forgotten. Async requests are counted here too and handed to the meter's listener.
 */
import type { RunKind } from '../run-ports.js';

export type UsagePhase = 'running' | 'standby';

export interface UsageReplica {
  engineId: string;
  recordId: string;
  kind: RunKind;
  workspace: string;
  name: string;
  memoryMB: number;
  /** The engine ref of its image and its stored bytes (undefined: unknown, not billed). */
  image: string;
  imageBytes: number | undefined;
}

/** A record's totals from `at` on. */
export interface UsageLevels {
  runningMB: number;
  standbyMB: number;
  /** Bytes of the distinct images its live replicas run. */
  imageBytes: number;
}

export interface RecordUsage {
  recordId: string;
  kind: RunKind;
  workspace: string;
  name: string;
  current: UsageLevels;
  /** Changes of the totals, oldest first. */
  changes: Array<UsageLevels & { at: number }>;
}

export interface AsyncCount {
  recordId: string;
  kind: RunKind;
  workspace: string;
  name: string;
  requestId: string;
  at: number;
}

/** Kept changes: longer than the meter's longest pass interval (1 h). */
export const HISTORY_MS = 2 * 3600_000;
/** Counts waiting for the meter's listener (at start) beyond this are dropped. */
const MAX_PENDING_COUNTS = 10_000;

interface Live extends UsageReplica {
  phase: UsagePhase;
}

export class ReplicaUsage {
  private readonly live = new Map<string, Live>();
  private readonly records = new Map<string, Omit<RecordUsage, 'current'>>();
  private listener: ((c: AsyncCount) => void) | undefined;
  private pending: AsyncCount[] = [];

  /** A replica's container exists from `at` on (created, or re-attached after a restart). */
  started(r: UsageReplica, at: number, phase: UsagePhase = 'running'): void {
    this.live.set(r.engineId, { ...r, phase });
    this.changed(r, at);
  }

  /** The replica was frozen (`standby`) or thawed (`running`) at `at`. Unknown ids are ignored. */
  phase(engineId: string, phase: UsagePhase, at: number): void {
    const r = this.live.get(engineId);
    if (!r || r.phase === phase) return;
    r.phase = phase;
    this.changed(r, at);
  }

  /** The replica's container is gone (removed) at `at`. */
  stopped(engineId: string, at: number): void {
    const r = this.live.get(engineId);
    if (!r) return;
    this.live.delete(engineId);
    this.changed(r, at);
  }

  /** Every record with live replicas or recent changes, as of `now`. */
  snapshot(now: number): RecordUsage[] {
    const out: RecordUsage[] = [];
    for (const [id, rec] of this.records) {
      rec.changes = rec.changes.filter((c, i) => c.at > now - HISTORY_MS || i === rec.changes.length - 1);
      const current = this.levels(id);
      const last = rec.changes.at(-1);
      if (isZero(current) && (!last || last.at <= now - HISTORY_MS)) {
        this.records.delete(id);
        continue;
      }
      out.push({ ...rec, changes: [...rec.changes], current });
    }
    return out;
  }

  /** One accepted async request (agent_async_requests_count). */
  countAsync(c: AsyncCount): void {
    if (this.listener) return this.listener(c);
    if (this.pending.length < MAX_PENDING_COUNTS) this.pending.push(c);
  }

  /** The meter's side: receives every count (those before it listened first). */
  onAsync(listener: (c: AsyncCount) => void): void {
    this.listener = listener;
    for (const c of this.pending.splice(0)) listener(c);
  }

  private changed(r: UsageReplica, at: number): void {
    let rec = this.records.get(r.recordId);
    if (!rec) {
      rec = { recordId: r.recordId, kind: r.kind, workspace: r.workspace, name: r.name, changes: [] };
      this.records.set(r.recordId, rec);
    }
    const levels = this.levels(r.recordId);
    const last = rec.changes.at(-1);
    if (last && last.at === at) Object.assign(last, levels);
    else rec.changes.push({ at, ...levels });
  }

  private levels(recordId: string): UsageLevels {
    const out: UsageLevels = { runningMB: 0, standbyMB: 0, imageBytes: 0 };
    const images = new Map<string, number>();
    for (const r of this.live.values()) {
      if (r.recordId !== recordId) continue;
      if (r.phase === 'running') out.runningMB += r.memoryMB;
      else out.standbyMB += r.memoryMB;
      if (r.imageBytes !== undefined) images.set(r.image, r.imageBytes);
    }
    for (const bytes of images.values()) out.imageBytes += bytes;
    return out;
  }
}

const isZero = (l: UsageLevels) => l.runningMB === 0 && l.standbyMB === 0 && l.imageBytes === 0;
