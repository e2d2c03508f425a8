/**
 * Taking replicas away with a drain (issue 16: "delete drains in-flight requests first"): out of
 * their set at once, so no new request reaches them; then requests in flight (streams included)
 * may finish, up to `drainMs`, before the container is stopped (SIGTERM, 5 s) and removed. Used by
 * the controller (a retired revision, a disabled or deleted record) and the idle policy (a replica
 * stopped for idleness).
 */
import type { ReplicaLauncher } from './replica-launcher.js';
import type { Replica, ReplicaSet, ReplicaSets } from './replica-sets.js';

/** Requests in flight on a replica being removed get this long to finish (then SIGTERM, 5 s). */
export const DEFAULT_DRAIN_MS = 30_000;

export interface RetirementDeps {
  sets: ReplicaSets;
  launcher: Pick<ReplicaLauncher, 'remove'>;
  drainMs?: number;
  /** Told once a container is gone (the controller looks again: DEACTIVATED, held requests). */
  kick: () => void;
}

export class ReplicaRetirement {
  /** Containers being removed, engine id → record id. */
  private readonly removing = new Map<string, string>();

  constructor(private readonly d: RetirementDeps) {}

  /** Every replica of a set, then the set itself once empty. */
  retire(recordId: string, set: ReplicaSet): void {
    for (const r of [...set.replicas]) this.remove(recordId, r);
    this.d.sets.prune(recordId, set.revision);
  }

  /** One replica out of its set at once, its container removed once drained (in the background). */
  remove(recordId: string, r: Replica): void {
    if (this.removing.has(r.engineId)) return;
    this.removing.set(r.engineId, recordId);
    this.d.sets.remove(r);
    void drained(r, this.d.drainMs ?? DEFAULT_DRAIN_MS)
      .then(() => this.d.launcher.remove(r.engineId, r.recordId, r.slot, r.attempt))
      .catch(() => undefined)
      .finally(() => {
        this.removing.delete(r.engineId);
        this.d.kick();
      });
  }

  /** Whether a container of the record is still being drained or removed. */
  draining(recordId: string): boolean {
    return [...this.removing.values()].includes(recordId);
  }
}

/** Resolves once no request is in flight on the replica, or after `ms`. */
async function drained(r: Replica, ms: number): Promise<void> {
  for (const end = Date.now() + ms; r.inflight > 0 && Date.now() < end;) {
    await new Promise((res) => setTimeout(res, 50));
  }
}
