/**
 * Scale to zero in two steps (issue 16 "Scaling and revisions"; ARCHITECTURE.md "Idle: STANDBY,
 * then stopped"): a replica no request has reached for `standbyAfterMs`, with nothing in flight
 * (streams and WebSockets count until they end), is frozen with the engine's cgroup freezer —
 * processes and memory kept, CPU zero — the way sandboxes go to STANDBY
 * (planes/sandbox/controllers/standby.ts). The next request resumes it before being forwarded
 * (`claim`: one cgroup write, no await, shared by every request that arrives meanwhile). After
 * `stopAfterMs` without a request the replica is stopped and its container removed (the image stays
 * in the engine's store); its set is then `asleep`: no replica starts until a request wakes it, and
 * that request is held (framework/held-requests.ts, bounded) while one starts.
 *
 * Eligibility (reference control-plane.md: `minScale`, "0 means scale to zero"): the first
 * `minScale` replicas of a set (by slot) are never frozen nor stopped — a replica kept for minScale
 * is kept *running*, so the workload's background work (timers, outbound connections, heartbeats)
 * goes on, which a frozen process cannot do. Replicas above minScale and every replica of a
 * minScale-0 record take both steps. The status stays DEPLOYED throughout; events say what happened.
 */
import { FreezeAbortedError } from '@tarmac/engine';
import type { Logger } from 'pino';
import type { Replica, ReplicaSet, ReplicaSets } from './replica-sets.js';
import type { ReplicaEngine, RunCatalogue, RunRecord } from './run-ports.js';

export interface IdleSettings {
  /** Idle time before STANDBY (TARMAC_RUN_STANDBY_AFTER_SECONDS); 0: never frozen. */
  standbyAfterMs: number;
  /** Idle time before the replica is stopped (TARMAC_RUN_STOP_AFTER_SECONDS); 0: never stopped. */
  stopAfterMs: number;
}

export interface IdlePolicyDeps extends IdleSettings {
  sets: ReplicaSets;
  engine: Pick<ReplicaEngine, 'freeze' | 'thawSync'>;
  catalogue: Pick<RunCatalogue, 'note'>;
  /** Closes the gateway's idle connections to a replica before it freezes (run-ports.ts). */
  dropIdle?: (to: { host: string; port: number }) => void;
  /** The record a replica belongs to, as of the controller's last pass. */
  recordOf: (replica: Pick<Replica, 'kind' | 'workspace' | 'name' | 'recordId'>) => RunRecord | undefined;
  /** Takes a replica out of its set and removes its container (the controller's retire path). */
  remove: (replica: Replica) => void;
  /** Metering's STANDBY seam (RunController.meterPhase): frozen time is billed as STANDBY. */
  meterPhase?: (replica: Replica, phase: 'running' | 'standby') => void;
  /** A set woke from zero: the controller looks at once (it starts a replica). */
  kick: () => void;
  logger: Logger;
  now: () => number;
}

export type IdleAction = 'standby' | 'stop' | undefined;

/**
 * What the idle policy does with one replica now (pure; unit-tested beside). `exempt`: one of the
 * first minScale replicas of its set.
 */
export function idleAction(r: Replica, exempt: boolean, now: number, s: IdleSettings): IdleAction {
  if (exempt || r.phase === 'starting' || r.inflight > 0 || r.freezing) return undefined;
  const idle = now - r.lastUsedMs;
  if (s.stopAfterMs > 0 && idle >= s.stopAfterMs) return 'stop';
  if (r.phase === 'ready' && s.standbyAfterMs > 0 && idle >= s.standbyAfterMs) {
    // A stop window no longer than the standby one means: straight to stopped, never frozen.
    if (s.stopAfterMs > 0 && s.stopAfterMs <= s.standbyAfterMs) return undefined;
    return 'standby';
  }
  return undefined;
}

export class IdlePolicy {
  constructor(private readonly d: IdlePolicyDeps) {}

  /**
   * The request path (run-controller.ts readyReplica): the replica a request goes to, resumed at
   * once when it is in STANDBY or being frozen. Concurrent requests share the thaw: the first one
   * flips the phase back to ready, the others find it ready. `set` is the chosen revision's: when
   * it was stopped for idleness it wakes (the controller starts one) — with no replica the caller
   * holds the request meanwhile; with another revision's replica (traffic-split.ts fallback) that
   * one serves at once and the chosen set still wakes, so a canary's split comes back after zero.
   */
  claim(record: RunRecord, replica: Replica | undefined, set: ReplicaSet | undefined): Replica | undefined {
    if (set?.asleep) {
      set.asleep = false;
      set.wokenAtMs = this.d.now();
      this.d.kick();
    }
    if (!replica) return undefined;
    replica.lastUsedMs = this.d.now();
    if (replica.phase !== 'standby' && !replica.freezing) return replica;
    try {
      this.d.engine.thawSync(replica.engineId);
    } catch (err) {
      // Its container is gone: the controller's next pass observes the exit and restarts one, and
      // the gateway holds the request meanwhile (each retry tries the thaw again).
      this.d.logger.warn({ err, replica: replica.engineId }, 'could not resume a replica in STANDBY');
      return undefined;
    }
    const wasStandby = replica.phase === 'standby';
    replica.phase = 'ready';
    replica.freezing = false;
    if (wasStandby) this.d.meterPhase?.(replica, 'running');
    return replica;
  }

  /** One look at every replica (the controller calls it after each pass); work runs in the background. */
  tick(): void {
    const now = this.d.now();
    for (const recordId of this.d.sets.recordIds()) {
      for (const set of this.d.sets.setsOf(recordId)) {
        const bySlot = [...set.replicas].sort((a, b) => a.slot - b.slot);
        for (const [i, r] of bySlot.entries()) {
          const record = this.d.recordOf(r);
          if (!record || record.id !== r.recordId || !record.enabled) continue; // retiring: not ours
          const action = idleAction(r, i < record.minScale, now, this.d);
          if (action === 'standby') void this.freeze(record, r);
          else if (action === 'stop') this.stop(record, set, r, now);
        }
      }
    }
  }

  /** After a platform restart: a replica the engine shows frozen stays in STANDBY (no probe). */
  adoptFrozen(r: Replica): void {
    r.phase = 'standby';
    this.d.meterPhase?.(r, 'standby');
    // It was idle at least this long when it froze; the stop window counts on from there.
    r.lastUsedMs = this.d.now() - this.d.standbyAfterMs;
  }

  private async freeze(record: RunRecord, r: Replica): Promise<void> {
    r.freezing = true;
    this.d.dropIdle?.({ host: r.ip, port: r.port });
    try {
      await this.d.engine.freeze(r.engineId);
    } catch (err) {
      r.freezing = false;
      if (!(err instanceof FreezeAbortedError))
        this.d.logger.warn({ err, replica: r.engineId }, 'could not freeze an idle replica');
      return;
    }
    // A request resumed it while the freeze settled (claim thawed it and cleared `freezing`).
    if (!r.freezing) return;
    r.freezing = false;
    r.phase = 'standby';
    this.d.meterPhase?.(r, 'standby');
    const idle = Math.round((this.d.now() - r.lastUsedMs) / 1000);
    await this.note(record, `Replica ${r.engineId} in STANDBY after ${idle} s idle (frozen, memory kept)`);
  }

  private stop(record: RunRecord, set: ReplicaSet, r: Replica, now: number): void {
    const idle = Math.round((now - r.lastUsedMs) / 1000);
    // The last one: the set sleeps, so the controller does not start a replica in its place.
    if (set.replicas.length === 1) set.asleep = true;
    this.d.remove(r);
    const next = set.asleep ? '; the next request starts one' : '';
    void this.note(
      record,
      `Replica ${r.engineId} stopped after ${idle} s idle (container removed, image kept)${next}`,
    );
  }

  /** A woken set's first replica answers: say how long the request that woke it waited. */
  woke(record: RunRecord, set: ReplicaSet, r: Replica): void {
    if (set.wokenAtMs === undefined) return;
    const ms = this.d.now() - set.wokenAtMs;
    set.wokenAtMs = undefined;
    void this.note(record, `Replica ${r.engineId} started for a request after scale to zero (${ms} ms)`);
  }

  private note(record: RunRecord, message: string): Promise<void> {
    return this.d.catalogue
      .note(record, message)
      .catch((err: unknown) => this.d.logger.warn({ err, record: record.name }, 'could not write an event'));
  }
}
