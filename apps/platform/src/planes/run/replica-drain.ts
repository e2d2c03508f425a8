/**
 * Taking replicas out of service (ARCHITECTURE.md "Autoscaling", "Idle: STANDBY, then stopped"):
 * a replica leaves its set at once, so no new request reaches it; requests in flight (streams
 * included) may finish, up to `drainMs`, before SIGTERM (issue 16: "delete drains in-flight
 * requests first"); then its container is removed. The retire path (record deleted, disabled, an
 * older revision), the autoscaler's scale-down and the idle policy's stop all come here.
 */
import type { ReplicaLauncher } from './replica-launcher.js';
import type { Replica, ReplicaSets } from './replica-sets.js';

/** Requests in flight on a replica being removed get this long to finish (then SIGTERM, 5 s). */
export const DEFAULT_DRAIN_MS = 30_000;

export interface ReplicaDrainerDeps {
  sets: ReplicaSets;
  launcher: Pick<ReplicaLauncher, 'remove'>;
  drainMs?: number;
  /** Told when a removal ends (the controller looks again: a slot is free, a status may change). */
  done: () => void;
}

export class ReplicaDrainer {
  /**
   * Replicas draining and being removed, by engine id: out of their set, still live — their
   * egress identity stays valid (a request they still serve may call out) and their slot taken.
   */
  private readonly removing = new Map<string, Replica>();

  constructor(private readonly d: ReplicaDrainerDeps) {}

  /** Every replica draining now. */
  all(): Replica[] {
    return [...this.removing.values()];
  }

  /** The record's replicas draining now. */
  of(recordId: string): Replica[] {
    return this.all().filter((r) => r.recordId === recordId);
  }

  /** Out of its set (no new request), drained, then stopped and removed (once per container). */
  drainAndRemove(r: Replica): void {
    if (this.removing.has(r.engineId)) return;
    this.removing.set(r.engineId, r);
    this.d.sets.remove(r);
    void drained(r, this.d.drainMs ?? DEFAULT_DRAIN_MS)
      .then(() => this.d.launcher.remove(r.engineId, r.recordId, r.slot, r.attempt))
      .catch(() => undefined)
      .finally(() => {
        this.removing.delete(r.engineId);
        this.d.done();
      });
  }
}

/** Resolves once no request is in flight on the replica, or after `ms`. */
async function drained(r: Replica, ms: number): Promise<void> {
  for (const end = Date.now() + ms; r.inflight > 0 && Date.now() < end;) {
    await new Promise((res) => setTimeout(res, 50));
  }
}
