/**
 * Sizing one revision's replica set (issue 16 "Scaling and revisions"; ARCHITECTURE.md
 * "Autoscaling"): each controller pass measures the set's requests in flight (replica-load.ts),
 * asks the autoscaler (autoscaler.ts) how many replicas it should run, and starts the missing ones
 * or takes the surplus out of service to drain and go. Starting and removing containers stay the
 * controller's (run-controller.ts hands in `launch` and `drainAndRemove`); this file decides.
 */
import type { Logger } from 'pino';
import type { Autoscaler } from './autoscaler.js';
import { takeArea } from './replica-load.js';
import { isUp, type Replica, type ReplicaSet } from './replica-sets.js';
import type { RunRecord } from './run-ports.js';

export interface SetScalerDeps {
  autoscaler: Autoscaler;
  logger: Logger;
  /** Starts one replica of the set in its lowest free slot (in the background). */
  launch(record: RunRecord, set: ReplicaSet): void;
  /** Takes a replica out of its set at once; it drains, then stops and goes. */
  drainAndRemove(replica: Replica): void;
}

export class SetScaler {
  /** The count each set was last sized to (logged when it changes). */
  private readonly sized = new WeakMap<ReplicaSet, number>();

  constructor(private readonly d: SetScalerDeps) {}

  /**
   * Sizes one revision's set to `desiredReplicas`: starts the missing replicas, or takes the
   * surplus out of service (scaleDownOrder). A start in flight counts toward the size but is
   * never cut; a start waits for the set's crash backoff. A set asleep after scale to zero
   * (idle-policy.ts) is left alone: it wants no replica until a request wakes it.
   */
  scale(record: RunRecord, set: ReplicaSet, now: number): void {
    if (set.asleep) return;
    const want = this.desiredReplicas(record, set, now);
    const surplus = set.replicas.length - want;
    if (surplus > 0) {
      for (const r of scaleDownOrder(set, now).slice(0, surplus)) this.d.drainAndRemove(r);
      return;
    }
    let missing = want - set.replicas.length - set.launchingSlots.size;
    if (missing <= 0 || set.blocked || now < set.notBeforeMs) return;
    // The first replica of a revision proves its image before more start: a crash-looping image
    // crashes one container per backoff step, not maxScale of them.
    if (!set.replicas.some(isUp)) {
      if (set.launchingSlots.size > 0 || set.replicas.length > 0) return;
      missing = 1;
    }
    for (; missing > 0; missing--) this.d.launch(record, set);
  }

  /**
   * The seam where a set's count is decided: the autoscaler's, from the requests in flight
   * measured since the last pass, ≥ max(minScale, 1) while the set is awake. Idle replicas going
   * to STANDBY, and a minScale-0 set to zero, is the idle policy's (idle-policy.ts): it stops the
   * last replica and marks the set asleep, and `scale` then wants none.
   */
  desiredReplicas(record: RunRecord, set: ReplicaSet, now: number): number {
    let area = 0;
    for (const r of set.replicas) area += takeArea(r, now);
    const counts = {
      current: set.replicas.length + set.launchingSlots.size,
      // A replica in STANDBY is up: it resumes in milliseconds (idle-policy.ts).
      ready: set.replicas.filter(isUp).length,
    };
    const bounds = { minScale: record.minScale, maxScale: record.maxScale, memoryMB: record.memoryMB };
    const d = this.d.autoscaler.observe(set, area, bounds, counts, now);
    if (this.sized.get(set) !== d.desired) {
      this.sized.set(set, d.desired);
      this.d.logger.info(
        { record: record.name, revision: set.revision, ...d, ...counts },
        'replica set sized',
      );
    }
    return d.desired;
  }
}

/**
 * Which replicas a scale-down takes first: still starting, then fewest requests in flight (an idle
 * one goes at once), then fewest threads pinned to it (fewest conversations re-mapped), then the
 * highest slot (the low slots stay, so a steady set keeps the same names).
 */
export function scaleDownOrder(set: ReplicaSet, now: number): Replica[] {
  const pins = new Map(set.replicas.map((r) => [r.engineId, set.pins.countOf(r.engineId, now)]));
  return [...set.replicas].sort(
    (a, b) =>
      Number(a.phase !== 'starting') - Number(b.phase !== 'starting') ||
      a.inflight - b.inflight ||
      pins.get(a.engineId)! - pins.get(b.engineId)! ||
      b.slot - a.slot,
  );
}
