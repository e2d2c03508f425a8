/**
 * Requests held for a workload that is not live yet, woken by its controller instead of polled
 * (issue 14 item 1 for sandboxes; issue 16 for agents and functions). Generic: keyed by
 * (workspace, name) — a caller serving several kinds folds the kind into `name` — and bounded: at
 * most `maxHeld` requests wait at once (beyond that the caller answers 503 at once). What a held
 * request waits FOR is the caller's: the sandbox gateway's `untilLive`
 * (planes/sandbox/gateway/start-waiters.ts), the run gateway's (planes/run/run-gateway.ts).
 */
export interface StartWaiter {
  /** Resolves on the next notice about this sandbox, after `ms`, or when `signal` aborts. */
  next(ms: number, signal?: AbortSignal): Promise<void>;
  /** Stops listening (always call it: finally). */
  cancel(): void;
}

export class StartWaiters {
  private readonly waiting = new Map<string, Set<() => void>>();
  private held = 0;
  private closed = false;

  constructor(readonly maxHeld: number) {}

  /** How many requests are held right now. */
  get size(): number {
    return this.held;
  }

  /** Takes one of the `maxHeld` places; false when all are taken (or after close). */
  hold(): boolean {
    if (this.closed || this.held >= this.maxHeld) return false;
    this.held++;
    return true;
  }

  release(): void {
    this.held = Math.max(0, this.held - 1);
  }

  /**
   * Listens for notices about one sandbox. Call it BEFORE reading the record, so a notice that
   * lands between the read and the wait is not lost.
   */
  watch(workspace: string, name: string): StartWaiter {
    const key = keyOf(workspace, name);
    let fired = false;
    let wake: (() => void) | undefined;
    const listener = () => {
      fired = true;
      wake?.();
    };
    let set = this.waiting.get(key);
    if (!set) this.waiting.set(key, (set = new Set()));
    set.add(listener);
    const cancel = () => {
      const current = this.waiting.get(key);
      current?.delete(listener);
      if (current?.size === 0) this.waiting.delete(key);
    };
    return {
      next: (ms, signal) =>
        new Promise<void>((resolve) => {
          if (fired || this.closed || signal?.aborted) return resolve();
          const done = () => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', done);
            wake = undefined;
            resolve();
          };
          const timer = setTimeout(done, Math.max(0, ms));
          signal?.addEventListener('abort', done, { once: true });
          wake = done;
        }),
      cancel,
    };
  }

  /** Something about this sandbox changed: every waiter looks again. */
  notify(workspace: string, name: string): void {
    for (const listener of [...(this.waiting.get(keyOf(workspace, name)) ?? [])]) listener();
  }

  /** Shutdown: wakes everyone (they answer 503) and holds no more. */
  close(): void {
    this.closed = true;
    for (const set of [...this.waiting.values()]) for (const listener of [...set]) listener();
  }
}

const keyOf = (workspace: string, name: string) => `${workspace}\u0000${name}`;
