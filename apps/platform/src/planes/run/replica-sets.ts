/**
 * The run plane's in-memory view of what runs: per record, one replica set per revision, each
 * with its replicas (ARCHITECTURE.md: the autoscaler sizes a set, replica-affinity.ts pins threads
 * to its replicas; canary splits and STANDBY act on these sets). Nothing here is persisted: after a
 * restart the controller rebuilds it from the engine's containers (their labels) and the records.
 */
import { ThreadPins } from './replica-affinity.js';
import type { RunKind } from './run-ports.js';

/**
 * `standby`: frozen by the idle policy (idle-policy.ts), memory kept, resumed by the next request
 * before it is forwarded; it counts as up (the set needs no new replica). Metering reads the phase
 * (`ReplicaSets.all()`): STANDBY time is billed like a sandbox snapshot, not like running time.
 */
export type ReplicaPhase = 'starting' | 'ready' | 'standby';

/** Up: answering, or frozen in STANDBY and resumable in milliseconds. */
export const isUp = (r: Replica): boolean => r.phase !== 'starting';

export interface Replica {
  engineId: string;
  recordId: string;
  kind: RunKind;
  workspace: string;
  name: string;
  revision: string;
  slot: number;
  attempt: number;
  ip: string;
  port: number;
  phase: ReplicaPhase;
  /** Its egress identity (replica-container.ts replicaCredentialId). */
  credentialId: string;
  readyAtMs: number | undefined;
  /** Requests forwarded to it right now (streams and WebSockets count until they end). */
  inflight: number;
  lastUsedMs: number;
  /** A freeze is being settled (idle-policy.ts); a request meanwhile thaws and clears it. */
  freezing?: boolean;
  /** The in-flight area not yet read by the autoscaler (replica-load.ts). */
  load?: { area: number; sinceMs: number };
}

export interface ReplicaSet {
  revision: string;
  replicas: Replica[];
  /** Exits and failed starts since the last replica that stayed up: the backoff's exponent. */
  crashes: number;
  /** No new replica before this (crash-loop backoff). */
  notBeforeMs: number;
  /** The attempt number of the next container (engine ids are never reused). */
  nextAttempt: number;
  /** Slots whose start is in flight (create + probe). */
  launchingSlots: Set<number>;
  /** Set when no retry can help until the record changes (image missing). */
  blocked: string | undefined;
  /**
   * Every replica was stopped for idleness (scale to zero, idle-policy.ts): none starts until a
   * request wakes the set (`IdlePolicy.claim`). Status stays DEPLOYED meanwhile.
   */
  asleep?: boolean;
  /** When a request woke the set from zero (the "started for a request" event's timing). */
  wokenAtMs?: number;
  /** Thread and MCP-session keys → replica (replica-affinity.ts). */
  pins: ThreadPins;
}

/** Where a request goes within a set: its affinity key (thread, MCP session), if any, at `now`. */
export interface Affinity {
  key: string;
  now: number;
}

/** Crash-loop backoff: 1 s, 2 s, 4 s … capped at 30 s (Kubernetes' CrashLoopBackOff, shorter). */
export function backoffMs(crashes: number): number {
  return Math.min(30_000, 1000 * 2 ** Math.max(0, crashes - 1));
}

/** A replica that stayed ready this long resets its set's backoff. */
export const STABLE_AFTER_MS = 30_000;

export class ReplicaSets {
  private readonly byRecord = new Map<string, Map<string, ReplicaSet>>();

  /** The set of one revision, made when missing. */
  set(recordId: string, revision: string): ReplicaSet {
    let sets = this.byRecord.get(recordId);
    if (!sets) this.byRecord.set(recordId, (sets = new Map()));
    let set = sets.get(revision);
    if (!set) {
      set = {
        revision,
        replicas: [],
        crashes: 0,
        notBeforeMs: 0,
        nextAttempt: 1,
        launchingSlots: new Set(),
        blocked: undefined,
        pins: new ThreadPins(),
      };
      sets.set(revision, set);
    }
    return set;
  }

  /** The set of one revision, when there is one (the request path: nothing made). */
  get(recordId: string, revision: string): ReplicaSet | undefined {
    return this.byRecord.get(recordId)?.get(revision);
  }

  setsOf(recordId: string): ReplicaSet[] {
    return [...(this.byRecord.get(recordId)?.values() ?? [])];
  }

  recordIds(): string[] {
    return [...this.byRecord.keys()];
  }

  /** Forgets a set once it has no replica and nothing in flight. */
  prune(recordId: string, revision: string): void {
    const sets = this.byRecord.get(recordId);
    const set = sets?.get(revision);
    if (!sets || !set || set.replicas.length > 0 || set.launchingSlots.size > 0) return;
    sets.delete(revision);
    if (sets.size === 0) this.byRecord.delete(recordId);
  }

  /**
   * A replica of the revision for a request. With an affinity key: its thread's replica among
   * the up ones (replica-affinity.ts) — a pinned replica in STANDBY is returned, not skipped, so
   * the caller resumes it (IdlePolicy.claim) and the thread keeps its in-process memory. Without:
   * a ready one, the least busy first; else one in STANDBY, so a request wakes one frozen
   * replica, not all of them.
   */
  ready(recordId: string, revision: string, affinity?: Affinity): Replica | undefined {
    const set = this.byRecord.get(recordId)?.get(revision);
    if (!set) return undefined;
    if (affinity) {
      return set.pins.pick(affinity.key, set.replicas.filter(isUp), affinity.now);
    }
    let best: Replica | undefined;
    let standby: Replica | undefined;
    for (const r of set.replicas) {
      if (r.phase === 'ready' && (!best || r.inflight < best.inflight)) best = r;
      else if (r.phase === 'standby' && !standby) standby = r;
    }
    return best ?? standby;
  }

  /** Pins a key to the replica that answered with it (an MCP session made at initialize). */
  pin(replica: Replica, key: string, now: number): void {
    const set = this.byRecord.get(replica.recordId)?.get(replica.revision);
    if (set?.replicas.includes(replica)) set.pins.pin(key, replica, now);
  }

  /**
   * The lowest slot no replica of the record uses (any revision, starting, or `busy`: draining).
   * A slot names the replica's egress identity (`<record>.rp<slot>`), which must be unique among
   * live containers of the record.
   */
  freeSlot(recordId: string, busy: Iterable<number> = []): number {
    const used = new Set(busy);
    for (const set of this.setsOf(recordId)) {
      for (const r of set.replicas) used.add(r.slot);
      for (const s of set.launchingSlots) used.add(s);
    }
    let slot = 0;
    while (used.has(slot)) slot++;
    return slot;
  }

  /**
   * The replica a request goes to: a ready one of the record's current revision; while that has
   * none (starting, crash-looping, the record being rebuilt), one of a revision it replaces — the
   * previous revision serves until the new one answers (older sets are retired only then).
   */
  serving(recordId: string, revision: string, affinity?: Affinity): Replica | undefined {
    const current = this.ready(recordId, revision, affinity);
    if (current) return current;
    for (const set of this.setsOf(recordId)) {
      const older = this.ready(recordId, set.revision, affinity);
      if (older) return older;
    }
    return undefined;
  }

  all(): Replica[] {
    const out: Replica[] = [];
    for (const sets of this.byRecord.values()) for (const s of sets.values()) out.push(...s.replicas);
    return out;
  }

  remove(replica: Replica): void {
    const set = this.byRecord.get(replica.recordId)?.get(replica.revision);
    if (!set) return;
    set.replicas = set.replicas.filter((r) => r.engineId !== replica.engineId);
    set.pins.drop(replica.engineId);
  }
}
